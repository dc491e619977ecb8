"""The triage screen: a hung job's logs -> the verdict, the culprit, the suspects with their
evidence, the evidence chain and similar cases, and keys that carry the suspect elsewhere.

The triage (`Workspace.triage`) runs in a thread worker, then the evidence chain
for the first located suspect (probes on the fabric) in another, so the report shows before the
probes answer. The screen only shows and links: `o` posts `OpenRunbook` with the suspect filled
in, `c` posts `OpenCase`, and every report posts `Highlight("triage", ...)` so the Fabric screen
marks the suspects (`s` goes there, on the selected one). What those mean is decided in
`workspace.crosslinks`.
"""

from __future__ import annotations

import asyncio
import shlex
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from fabtui.errors import InputError, RequestError
from fabtui.model.chain import EvidenceChain
from fabtui.model.triage import Suspect, TriageReport
from fabtui.tui.commands import TRIAGE_COMMANDS, bindings
from fabtui.tui.messages import Highlight, OpenCase, OpenRunbook
from fabtui.tui.screens.base import FabtuiScreen
from fabtui.tui.widgets.fit_table import fit_data_table, fold_text
from fabtui.tui.widgets.footer import KeyFooter
from fabtui.tui.widgets.hanging import Hanging
from fabtui.tui.widgets.triage_view import (
    SUSPECT_FIT,
    chain_legend,
    chain_strip,
    chain_text,
    more_evidence_text,
    notes_text,
    suspect_row,
    suspect_text,
    verdict_text,
)
from fabtui.views.crosslinks import report_keys, suspect_keys, suspect_runbook
from fabtui.views.listfilter import filter_words, keeps


class TriageFinished(Message):
    """Triage number `run` of `paths` came back: its report, or why there is none."""

    def __init__(self, run: int, paths: tuple[Path, ...], report: TriageReport | None,
                 error: str | None) -> None:
        super().__init__()
        self.run = run
        self.paths = paths
        self.report = report
        self.error = error


class ChainFinished(Message):
    """Probe run number `run`'s evidence chain came back (None: the suspect is placed on no
    node), or why it could not be built."""

    def __init__(self, run: int, chain: EvidenceChain | None, error: str | None) -> None:
        super().__init__()
        self.run = run
        self.chain = chain
        self.error = error


def parse_paths(text: str) -> tuple[Path, ...]:
    """What was typed in the log field: one or more paths (shell-quoted when they hold
    spaces), `~` expanded. Raises `ValueError` for unbalanced quotes."""
    return tuple(Path(part).expanduser() for part in shlex.split(text))


DEMO_LOGS = Text.assemble(
    ("No hung job's logs at hand? On the demo fabric,\n\n", "dim"),
    ("  fabtui sim hang-logs /tmp/hang --case optic --ranks 64\n\n", "bold"),
    ("writes the logs of a 64-rank job whose rank waits on a dying optic (other cases: "
     "`fabtui sim hang-logs --help`); then type /tmp/hang above.", "dim"))
"""What the empty screen says on the demo fabric, where a newcomer has no logs of a hang."""

VERDICT_LINES = 4
"""Lines of the verdict box (its CSS `max-height`): verdict, culprit, chain, summary, state."""


class TriageScreen(FabtuiScreen):
    """See the module docstring."""

    COMMANDS_TABLE = TRIAGE_COMMANDS
    FILTERS = "suspects and similar cases"
    FILTER_LIST = "#triage-suspects"
    BINDINGS: ClassVar[list[BindingType]] = bindings(TRIAGE_COMMANDS)
    DEFAULT_CSS = """
    TriageScreen #triage-ask { height: 1; }
    TriageScreen #triage-ask Label { width: auto; padding: 0 1; }
    TriageScreen #triage-path { width: 1fr; }  /* one line: the `one-line` class (app.tcss) */
    TriageScreen #triage-verdict { height: auto; max-height: 4; padding: 0 1;
                                   background: $boost; }
    TriageScreen #triage-suspects { height: auto; max-height: 8; }
    TriageScreen #triage-cases-head { padding: 0 1; color: $text-muted; }
    TriageScreen #triage-cases { height: auto; max-height: 3; border: none; padding: 0 1; }
    TriageScreen #triage-detail { height: 1fr; padding: 0 1; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.paths: tuple[Path, ...] = ()
        self.report: TriageReport | None = None
        self.chain: EvidenceChain | None = None
        self.chain_state = "not probed"
        self.state = "type the hung job's log folder and press enter"
        self.shown: list[int] = []
        """The suspects listed (indices into the report's), after the `/` filter."""
        self.runs = {"triage": 0, "chain": 0}
        """Triages and chains started: a thread worker cannot be stopped, so the answer of one
        that was replaced is recognised (its number is not the latest) and dropped."""


    def compose(self) -> ComposeResult:
        with Horizontal(id="triage-ask"):
            yield Label("logs")
            yield Input(placeholder="folder of per-rank logs, job.log, Flight Recorder dumps, "
                        "RAS output", id="triage-path", classes="one-line",
                        select_on_focus=False)
        yield Static(id="triage-verdict")
        table: DataTable[str] = DataTable(id="triage-suspects", cursor_type="row",
                                          zebra_stripes=True)
        yield table
        yield Label("seen before: no similar case", id="triage-cases-head")
        yield OptionList(id="triage-cases")
        with VerticalScroll(id="triage-detail"):
            yield Static(id="triage-detail-body")
        yield KeyFooter()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns(*(c.heading for c in SUSPECT_FIT))
        start = self.fab.triage_start
        if start is not None:
            self.fab.triage_start = None
            paths, report = start
            self.query_one("#triage-path", Input).value = " ".join(
                shlex.quote(str(p)) for p in paths)
            if report is not None:
                self._show(paths, report)
            else:
                self.start(paths)
        else:
            self.query_one("#triage-path", Input).focus()
        self._paint()

    # running ------------------------------------------------------------------------------------
    def start(self, paths: tuple[Path, ...]) -> None:
        """Triage `paths` in a worker (a newer triage replaces one still running)."""
        self.paths = paths
        self.runs["triage"] += 1
        self.runs["chain"] += 1  # the chain of the report before is no longer wanted
        self.state = f"reading {' '.join(map(str, paths))} …"
        self._paint()
        self._triage(self.runs["triage"], paths)

    @work(thread=True, group="triage", exclusive=True, exit_on_error=False,
          description="triage")
    def _triage(self, run: int, paths: tuple[Path, ...]) -> None:
        try:
            report = self.fab.workspace.triage(paths)
        except (InputError, RequestError) as exc:
            self.post_message(TriageFinished(run, paths, None, str(exc).splitlines()[0]))
            return
        self.post_message(TriageFinished(run, paths, report, None))

    def _probe_chain(self, report: TriageReport, index: int) -> None:
        self.runs["chain"] += 1
        self._chain(self.runs["chain"], report, report.suspects[index])

    @work(thread=True, group="chain", exclusive=True, exit_on_error=False,
          description="evidence chain")
    def _chain(self, run: int, report: TriageReport, suspect: Suspect) -> None:

        try:
            chain = asyncio.run(self.fab.workspace.evidence_chain(report, suspect=suspect))
        except (InputError, RequestError) as exc:
            self.post_message(ChainFinished(run, None, str(exc).splitlines()[0]))
            return
        self.post_message(ChainFinished(run, chain, None))

    @on(TriageFinished)
    def _finished(self, message: TriageFinished) -> None:
        if message.run != self.runs["triage"]:
            return  # a newer triage was started since
        if message.report is None:
            self.state = f"cannot triage: {message.error}"
            self.notify(message.error or "failed", title="triage", severity="error")
            self._paint()
            return
        self._show(message.paths, message.report)

    def _show(self, paths: tuple[Path, ...], report: TriageReport) -> None:
        self.paths, self.report = paths, report
        self.state = f"{len(report.suspects)} suspect(s) from {' '.join(map(str, paths))}"
        table = self.query_one(DataTable)
        self._fill_suspects()
        self._fill_cases()
        self.query_one("#triage-cases-head", Label).update(
            "seen before (c opens the highlighted one, tab to choose):" if report.similar_cases
            else "seen before: no similar case in the case library")
        self.chain = report.chain
        first = next((i for i, s in enumerate(report.suspects) if s.node), None)
        if self.chain is None and first is not None:
            self.chain_state = "probing the fabric …"
            self._probe_chain(report, first)
        else:
            self.chain_state = "no suspect is placed on the fabric" if first is None else ""
        keys = report_keys(self.fab.fabric, report)
        self.post_message(Highlight("triage", frozenset(keys), f"NCCL hang, {report.verdict}"))
        table.focus()
        self._paint()

    def _fill_suspects(self) -> None:
        """The suspects, columns sized to the screen: the rank, node, NIC, port and optic whole
        (what the operator types next), the fault's wording cut with `…` first."""
        if self.report is not None:
            words = filter_words(self.view_filter)
            rows = [(i, suspect_row(s)) for i, s in enumerate(self.report.suspects)]
            kept = [(i, row) for i, row in rows
                    if keeps(words, (*row, self.report.suspects[i].reason))]
            self.shown = [i for i, _ in kept]
            fit_data_table(self.query_one(DataTable), SUSPECT_FIT, [row for _, row in kept])
            self.say_filtered(len(kept), len(rows), "suspects")

    def _fill_cases(self) -> None:
        """The similar cases the `/` filter keeps."""
        report = self.report
        cases = self.query_one("#triage-cases", OptionList)
        cases.clear_options()
        if report is None:
            return
        words = filter_words(self.view_filter)
        kept = [case for case in report.similar_cases if keeps(words, (case,))]
        cases.add_options([Option(case, id=case) for case in kept])
        if kept:
            cases.highlighted = 0

    def apply_view_filter(self, text: str) -> None:
        self._fill_suspects()
        self._fill_cases()
        self._paint()

    def on_resize(self) -> None:
        self.call_after_refresh(self._fill_suspects)
        self.call_after_refresh(self._paint)  # the verdict box folds to its new width

    @on(ChainFinished)
    def _chained(self, message: ChainFinished) -> None:
        if message.run != self.runs["chain"]:
            return
        self.chain = message.chain
        if message.error is not None:
            self.chain_state = f"cannot probe: {message.error}"
        elif message.chain is None:
            self.chain_state = "no suspect is placed on the fabric"
        if self.report is not None and message.chain is not None:
            self.report.chain = message.chain
        self._paint()

    # drawing ------------------------------------------------------------------------------------
    def _paint(self) -> None:
        report = self.report
        verdict = self.query_one("#triage-verdict", Static)
        if report is None:
            verdict.update(Text(self.state, "dim"))
            self.query_one("#triage-detail-body", Static).update(
                DEMO_LOGS if not self.paths and self.fab.workspace.settings.simulated else "")
            return
        head = verdict_text(report, chain_strip(self.chain, self.chain_state,
                                                self.fab.ascii_only))
        head.append(f"\n{self.state}", "dim")
        # the box holds VERDICT_LINES: what it cannot hold ends in `…` there and is said whole
        # at the top of the detail pane (a long summary was cropped without a mark)
        shown, cut = fold_text(head, verdict.content_size.width, VERDICT_LINES,
                               self.app.console)
        verdict.update(shown)
        body = Text()
        if cut:
            body.append(f"{report.summary}\n", "bold")
            body.append(f"{self.state}\n\n", "dim")
        body.append_text(suspect_text(report, self.selected_suspect))
        body.append("\n")
        body.append_text(chain_text(self.chain, self.chain_state, self.fab.ascii_only))
        if self.chain is not None:
            body.append(chain_legend(self.fab.ascii_only) + "\n", "dim")
        body.append_text(notes_text(report))
        body.append_text(more_evidence_text(self.selected_suspect))
        self.query_one("#triage-detail-body", Static).update(Hanging(body))

    @property
    def selected_index(self) -> int | None:
        report = self.report
        if report is None or not self.shown:
            return None
        return self.shown[min(max(self.query_one(DataTable).cursor_row, 0),
                              len(self.shown) - 1)]

    @property
    def selected_suspect(self) -> Suspect | None:
        index = self.selected_index
        return None if index is None or self.report is None else self.report.suspects[index]

    @on(DataTable.RowHighlighted)
    def _moved(self) -> None:
        self._paint()

    @on(Input.Submitted, "#triage-path")
    def _submitted(self, event: Input.Submitted) -> None:
        try:
            paths = parse_paths(event.value)
        except ValueError as exc:
            self.notify(f"log field: {exc}", title="triage", severity="error")
            return
        if not paths:
            self.notify("type a log folder or files first", title="triage", severity="warning")
            return
        self.start(paths)

    # actions ------------------------------------------------------------------------------------
    def action_focus_logs(self) -> None:
        self.query_one("#triage-path", Input).focus()

    def action_back(self) -> None:
        """Esc: out of the filter (then the filter cleared), out of the log field; the
        suspects have the keys."""
        table = self.query_one(DataTable)
        if self.focused is self.query_one("#triage-path", Input) or not self.leave_filter():
            table.focus()

    def action_rerun(self) -> None:
        if self.paths:
            self.start(self.paths)

    def action_slow_job(self) -> None:
        """The slow-job screen: a job that runs slow, not one that hangs."""
        from fabtui.tui.screens.slowjob import SlowJobScreen

        self.app.push_screen(SlowJobScreen())

    def action_open_runbook(self) -> None:
        suspect = self.selected_suspect
        if self.report is None or suspect is None:
            self.notify("no suspect to run a runbook on", title="triage", severity="warning")
            return
        choice = suspect_runbook(self.fab.workspace.library, self.report, suspect)
        if choice is None:
            self.notify("the runbook library has no runbook for this hang", title="triage",
                        severity="warning")
            return
        self.post_message(OpenRunbook(choice.runbook, choice.inputs, choice.why))

    def action_open_case(self) -> None:
        cases = self.query_one("#triage-cases", OptionList)
        if cases.option_count == 0:
            self.notify("no similar case", title="triage", severity="warning")
            return
        option = cases.get_option_at_index(cases.highlighted or 0)
        if option.id is not None:
            self.post_message(OpenCase(option.id))

    @on(OptionList.OptionSelected, "#triage-cases")
    def _case_chosen(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is not None:
            self.post_message(OpenCase(event.option.id))

    def action_show_fabric(self) -> None:
        """The Fabric screen, on the selected suspect's most specific element."""
        suspect = self.selected_suspect
        keys = suspect_keys(self.fab.fabric, suspect) if suspect is not None else []
        if not keys:
            self.notify("the topology does not place this suspect", title="triage",
                        severity="warning")
            return
        self.fab.show_on_fabric(keys[0])

    def action_chain(self) -> None:
        index, suspect = self.selected_index, self.selected_suspect
        if self.report is None or index is None or suspect is None or not suspect.node:
            self.notify("no suspect placed on a node to probe", title="triage",
                        severity="warning")
            return
        self.chain = None
        self.chain_state = f"probing the fabric along {suspect.node} …"
        self._paint()
        self._probe_chain(self.report, index)
