"""Every action of the app, once: its key (remappable by id), footer label and help text.

The same table gives the key bindings, the footer, the `?` help page and the command palette
(`ctrl+p`) entries, so none of them can forget an action (after hike's commands registry).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, partial

from textual.binding import Binding, BindingType
from textual.command import DiscoveryHit, Hit, Hits, Provider


@dataclass(frozen=True)
class Command:
    """One action."""

    id: str
    """Binding id: the name a keymap in the config file uses (`fabric.pause = "p"`)."""
    keys: str
    action: str
    label: str
    """Footer and palette text."""
    help: str
    show: bool = True
    """Shown in the footer."""
    short: str = ""
    """The footer's text where it is too narrow for every key (default: `label`)."""

    def binding(self) -> Binding:
        return Binding(self.keys, self.action, self.label, show=self.show, id=self.id,
                       tooltip=self.help)


TYPED_ON_LIST = ("Letters and digits typed on the list go into the search (q too): typing "
                 "never runs a command there; the view's commands are on ctrl keys, 1-4 (as "
                 "the first key) or f1-f4 switch views and ctrl+q quits.")
"""The type-to-search rule of the lists that take it (Runbooks, Cases), as the help says it."""

APP_COMMANDS = (
    Command("app.fabric", "1,f1", "switch_mode('fabric')", "Fabric", "The live fabric: topology, "
            "health and counters."),
    Command("app.runbooks", "2,f2", "switch_mode('runbooks')", "Runbooks", "The runbook library "
            "by symptom, recorded sessions, and guided sessions."),
    Command("app.cases", "3,f3", "switch_mode('cases')", "Cases", "The case library: have we "
            "seen this before? Search past incidents by symptom, in English or Chinese."),
    Command("app.triage", "4,f4", "switch_mode('triage')", "Triage", "NCCL hang triage: a hung "
            "job's logs -> the culprit rank, its NIC, leaf port and optic, and what to run."),
    Command("app.incidents", "A", "incidents", "Incidents", "The open incidents Alertmanager's "
            "alerts became (`fabtui alerts serve`): the suspect first, blast radius, runbook, "
            "similar cases.", show=False),
    Command("app.help", "question_mark", "help", "Help", "Show the keys and what they do."),
    Command("app.theme", "T", "toggle_dark", "Theme", "Switch between the light and dark "
            "themes.", show=False),
    Command("app.report", "R", "report", "Report", "Write the newest session's report as one "
            "HTML file in the data folder (what `fabtui report last -o FILE` writes).",
            show=False),
    Command("app.quit", "q,ctrl+q", "quit", "Quit", "Leave fabtui (q is typed text in a text "
            "field or on a type-to-search list: ctrl+q there)."),
)
FABRIC_COMMANDS = (
    Command("fabric.pause", "space", "pause", "Pause", "Freeze the view; data keeps arriving "
            "and shows when you resume."),
    Command("fabric.probe", "r", "probe_now", "Probe", "Run a probe on the selected element "
            "now."),
    Command("fabric.poll", "p", "poll_now", "Poll", "Start the next poll now.", show=False),
    Command("fabric.filter", "f", "filter", "Filter", "Show one rail (rail:N), one leaf "
            "(leaf:NAME), a node range (node[001-004]) or the job's nodes (job)."),
    Command("fabric.find", "slash", "find", "Find", "Find an element by name (several "
            "matches: every one listed to choose from), or filter as f does (rail:4, "
            "node00*, job)."),
    Command("fabric.error", "e", "show_error", "Error", "Why the selected element is "
            "unreachable or failing: its errors and findings, then every value whole."),
    Command("fabric.demo", "d", "demo", "Demo", "Play a fault scenario or inject a fault "
            "(demo fabric)."),
    Command("fabric.console", "c", "console", "Console", "Open the probe console on the "
            "selected element (its probe and target filled in)."),
    Command("fabric.runbooks", "b", "runbooks", "Runbooks", "The runbooks for the selected "
            "element's findings; choosing one opens it with the element filled in."),
    Command("fabric.next_mark", "n", "next_mark", "Next mark", "Jump to the next element a "
            "triage, a session or a case marked (◆)."),
    Command("fabric.prev_mark", "N", "next_mark(-1)", "Prev mark", "Jump to the previous "
            "marked element.", show=False),
    Command("fabric.back", "escape", "back", "Back", "Clear the filter; else clear the marks.",
            show=False),
)
TRIAGE_COMMANDS = (
    Command("triage.logs", "l", "focus_logs", "Logs", "Type the hung job's log folder "
            "(or files); enter runs the triage."),
    Command("triage.filter", "slash", "filter_view", "Filter", "Show only the suspects and "
            "similar cases holding every word typed (node003, optic, rail 5); esc leaves "
            "the field, esc again clears it."),
    Command("triage.runbook", "o", "open_runbook", "Runbook", "Run the suggested runbook on "
            "the selected suspect (its node, NIC and port filled in)."),
    Command("triage.fabric", "s", "show_fabric", "On fabric", "Show the selected suspect on "
            "the Fabric screen (its elements marked)."),
    Command("triage.case", "c", "open_case", "Case", "Open the selected similar case (the "
            "first if none is selected)."),
    Command("triage.chain", "x", "chain", "Chain", "Probe the fabric along the selected "
            "suspect's path: job, busbw, rail, PFC, FEC, optic."),
    Command("triage.rerun", "r", "rerun", "Re-run", "Triage the same logs again."),
    Command("triage.slow", "j", "slow_job", "Slow job", "Why is the job slow? Its step-time "
            "timeline with the episodes, and each one's chain down to the port and optic."),
    Command("triage.back", "escape", "back", "Back", "Leave the log field for the suspects.",
            show=False),
)
SLOW_COMMANDS = (
    Command("slow.runbook", "o", "open_runbook", "Runbook", "Open the runbook for the deepest "
            "element the selected episode's evidence confirms, its place filled in."),
    Command("slow.fabric", "s", "show_fabric", "On fabric", "Show the selected episode's "
            "elements marked on the Fabric screen (the deepest selected)."),
    Command("slow.case", "f", "file_case", "File case", "File the analysis as a draft case "
            "(root cause left to you: `fabtui cases complete`)."),
    Command("slow.report", "w", "write_report", "Report", "Write the analysis as an HTML "
            "report in the data folder (`fabtui report --slow`)."),
    Command("slow.rerun", "r", "rerun", "Re-run", "Analyse the job's window again."),
    Command("slow.back", "escape", "back", "Back", "Back to the hang triage.", show=False),
)
INCIDENTS_COMMANDS = (
    Command("incidents.runbook", "o", "open_runbook", "Runbook", "Open the highlighted "
            "incident's runbook as a guided session."),
    Command("incidents.fabric", "s", "show_fabric", "On fabric", "Show the highlighted "
            "incident's suspect on the Fabric screen."),
    Command("incidents.close", "c", "close_incident", "Close", "Close the highlighted "
            "incident by hand: asks why (journaled with your name); esc cancels."),
    Command("incidents.refresh", "r", "refresh", "Refresh", "Read the alerts journal now (it "
            "is read whenever its file changes)."),
    Command("incidents.back", "escape", "back", "Back", "Back to the view it was opened "
            "from.", show=False),
)
CONSOLE_COMMANDS = (
    Command("console.run", "r", "run", "Run", "Run the probe on the target (or target set); "
            "enter in the target field does too."),
    Command("console.raw", "o", "raw", "Raw", "Show or hide the raw output of the result."),
    Command("console.target", "t", "focus_target", "Target", "Type a target: a name, a glob "
            "(node00*), a range (node[001-004]), rail:N, leaf:NAME."),
    Command("console.back", "escape", "back", "Back", "Leave the target field; hide the raw "
            "output; else back to the fabric (a run still going is cancelled)."),
)

RUNBOOKS_COMMANDS = (
    Command("runbooks.find", "slash", "find", "Find", "Search the library by symptom, in "
            "English or Chinese (the matching of `fabtui runbook find`)."),
    Command("runbooks.open", "enter", "open", "Open", "Open the highlighted runbook as a "
            "guided session (its inputs asked first). " + TYPED_ON_LIST),
    Command("runbooks.resume", "ctrl+r", "resume", "Resume", "Resume the interrupted session named "
            "in the banner (or the highlighted session)."),
    Command("runbooks.show", "ctrl+o", "show_session", "View", "Show the highlighted recorded "
            "session."),
    Command("runbooks.sessions", "ctrl+t", "focus_sessions", "Sessions", "Move to the "
            "sessions list (ctrl+t again: back to the library).", show=False),
    Command("runbooks.back", "escape", "back", "Back", "Leave the search field for the list; "
            "else clear the search.", show=False),
)
SESSION_COMMANDS = (
    Command("session.next", "n", "run_next", "Next", "Run the next block."),
    Command("session.gate", "g", "run_to_gate", "To gate", "Run blocks up to and including "
            "the next gate (a question, an input, a dangerous command).", short="Gate"),
    Command("session.skip", "s", "skip", "Skip", "Skip the next block, with a reason "
            "(recorded)."),
    Command("session.jump", "j", "jump", "Jump", "Continue at another step (its number or id)."),
    Command("session.rerun", "r", "rerun", "Re-run", "Run a block again (its new result "
            "replaces the old one).", short="Rerun"),
    Command("session.note", "a", "note", "Note", "Add a note to the session's journal."),
    Command("session.abort", "x", "abort", "Abandon", "End the session for good, with a "
            "reason (a running block is stopped); a no at a gate only pauses it."),
    Command("session.handover", "o", "handover", "Hand over", "Open the runbook the session "
            "handed over to (next: runbook ...), its inputs carried from this session.",
            short="Hand"),
    Command("session.similar", "c", "similar", "Similar", "Past cases like this session (the "
            "draft case it would file, beside its similar cases).", short="Past"),
    Command("session.file", "f", "file_case", "File case", "File the session as a draft case "
            "and open it to complete the root cause and resolution.", short="File"),
    Command("session.filter", "slash", "filter_view", "Filter", "Show only the outline's "
            "steps and blocks and the result rows holding every word typed (dom, rx_power); "
            "esc leaves the field, esc again clears it.", show=False),
    Command("session.back", "escape", "back", "Back", "Leave the filter (esc again clears "
            "it); else back to where the session was opened from (a running block is "
            "cancelled; the session can be resumed)."),
)
CASES_COMMANDS = (
    Command("cases.search", "slash", "focus_search", "Search", "Type a symptom (English or "
            "中文); filters beside it: component: rail: node: tag: severity: status: since: "
            "until: (since:2026-03-02). " + TYPED_ON_LIST),
    Command("cases.open", "enter", "open", "Open", "Open the selected case: its whole title, "
            "why it matched (a row cut at the edge ends in …) and its text.", show=False),
    Command("cases.similar", "ctrl+n", "similar_session", "Similar", "Past cases like the newest "
            "session (the draft case it would file)."),
    Command("cases.edit", "ctrl+o", "edit", "Edit", "Edit the selected case: root cause, "
            "resolution, title, severity, status."),
    Command("cases.export", "ctrl+s", "export", "Export", "Write the selected case as a markdown "
            "file (what `fabtui cases export --id` writes)."),
    Command("cases.back", "escape", "back", "Back", "Leave the search field for the results; "
            "else clear the search.", show=False),
)
CASE_VIEW_COMMANDS = (
    Command("case.runbook", "b", "runbook", "Runbook", "Open the runbook the case references "
            "(the selected one in the links), its inputs pre-filled from the case."),
    Command("case.session", "s", "session", "Session", "Show the session the case references "
            "(the selected one in the links)."),
    Command("case.edit", "e", "edit", "Edit", "Edit the case: root cause, resolution, title, "
            "severity, status."),
    Command("case.export", "x", "export", "Export", "Write the case as a markdown file."),
    Command("case.back", "escape", "back", "Back", "Back to the search results."),
)
CASE_EDIT_COMMANDS = (
    Command("edit.save", "ctrl+s", "save", "Save", "Write the changes into the case library."),
    Command("edit.cancel", "escape", "cancel", "Cancel", "Leave without saving."),
)


ALL_COMMANDS = (*APP_COMMANDS, *FABRIC_COMMANDS, *TRIAGE_COMMANDS, *SLOW_COMMANDS,
                *INCIDENTS_COMMANDS,
                *CONSOLE_COMMANDS,
                *CASES_COMMANDS, *CASE_VIEW_COMMANDS, *CASE_EDIT_COMMANDS, *RUNBOOKS_COMMANDS,
                *SESSION_COMMANDS)
"""Every command, in the help page's order."""


@cache
def short_labels() -> dict[str, str]:
    """Command id -> the footer's short text, for the commands that have one."""
    return {c.id: c.short for c in ALL_COMMANDS if c.short}


def bindings(commands: Iterable[Command]) -> list[BindingType]:
    return [c.binding() for c in commands]


VIEW_TABLES = (("Fabric", FABRIC_COMMANDS), ("Probe console", CONSOLE_COMMANDS),
               ("Runbooks", RUNBOOKS_COMMANDS), ("Guided session", SESSION_COMMANDS),
               ("Cases", CASES_COMMANDS), ("A case", CASE_VIEW_COMMANDS),
               ("Case editor", CASE_EDIT_COMMANDS), ("Triage", TRIAGE_COMMANDS),
               ("Slow job", SLOW_COMMANDS), ("Incidents", INCIDENTS_COMMANDS))
"""Each screen's own keys under its name, in the help page's order after the current one."""

MOVES = (("arrows/hjkl", "Move", "Up, down, left, right in a list or the matrix (the session "
          "outline: arrows only, its letters are its commands)."),
         ("pgup/pgdn", "Page", "A page up or down."),
         ("home/end", "Ends", "The first or the last line (g/G where the letters are free)."),
         ("tab", "Focus", "The next part of the screen (shift+tab: the previous)."),
         ("ctrl+p", "Palette", "Every action of this screen by name."))


def key_text(command: Command, keys: dict[str, str]) -> str:
    """A command's key as the help page writes it (`?`, `/`, `esc`)."""
    return keys.get(command.id, command.keys).replace("question_mark", "?") \
        .replace("slash", "/").replace("escape", "esc")


def help_sections(here: Iterable[Command], keys: dict[str, str],
                  here_name: str = "") -> list[tuple[str, list[tuple[str, str, str]]]]:
    """The help page as sections of (key, label, what it does): the current screen's keys
    first, then the keys that work everywhere, the moves, then every other screen's (pure:
    tested without an app)."""
    here = tuple(here)
    ids = {c.id for c in here}

    def rows(commands: Iterable[Command]) -> list[tuple[str, str, str]]:
        return [(key_text(c, keys), c.label, f"{c.help}  [{c.id}]") for c in commands]

    sections = []
    if here:
        sections.append((f"This view: {here_name}" if here_name else "This view", rows(here)))
    sections.append(("Everywhere", rows(APP_COMMANDS)))
    sections.append(("Moving", list(MOVES)))
    sections += [(name, rows(table)) for name, table in VIEW_TABLES
                 if not ids & {c.id for c in table}]
    return sections


def help_text(commands: Iterable[Command], keys: dict[str, str], here_name: str = "") -> str:
    """The help page as plain text (headings, then `  key  label  help` lines)."""
    lines = [REMAP_HINT, ""]
    for heading, rows in help_sections(commands, keys, here_name):
        lines.append(heading)
        lines += [f"  {key:<14} {label:<9} {about}" for key, label, about in rows]
        lines.append("")
    lines += GLYPH_LINES
    return "\n".join(lines)


REMAP_HINT = 'Keys; remap them in the config file: keymap = { "fabric.pause" = "z" }'
GLYPH_LINES = ["Glyphs: ✓ ok   ! warn   ✗ fail   ? unknown   ~ stale   ⊘ unreachable",
               "(--ascii: + ok  ! warn  X fail  ? unknown  ~ stale  # unreachable)"]


class FabtuiCommands(Provider):
    """The palette's entries: every app command and every command of the current screen."""

    def _commands(self) -> list[tuple[Command, bool]]:
        screen_commands = getattr(self.screen, "COMMANDS_TABLE", ())
        return [(c, False) for c in APP_COMMANDS] + [(c, True) for c in screen_commands]

    def _run(self, command: Command, on_screen: bool) -> None:
        target = self.screen if on_screen else self.app
        self.app.call_later(self.app.run_action, command.action, target)

    async def discover(self) -> Hits:
        for command, on_screen in self._commands():
            yield DiscoveryHit(command.label, partial(self._run, command, on_screen),
                               help=command.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command, on_screen in self._commands():
            score = max(matcher.match(command.label), matcher.match(command.help) * 0.5)
            if score > 0:
                yield Hit(score, matcher.highlight(command.label),
                          partial(self._run, command, on_screen), help=command.help)
