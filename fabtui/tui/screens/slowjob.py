"""The slow-job screen (issue 39), opened from Triage with `j`: the job's step-time timeline
with its episodes marked, the chain of each episode beside it (hop by hop, ● confirmed, ○ a
lead), and what the selected row stands on.

The analysis (`Workspace.slow_job`: on the demo fabric, its job over the last hour), filing a
case and writing the report run in thread workers; the screen only shows and links: `o` posts
`OpenRunbook` for the deepest element the selected episode's evidence confirms, `s` marks the
chain's elements on the Fabric screen (`Highlight("slow", ...)`, posted with every analysis
too) and goes there. What the rows say is `fabtui.views.slowjob`'s.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from fabtui.errors import InputError, RequestError
from fabtui.model.slowjob import SlowJobReport
from fabtui.tui.commands import SLOW_COMMANDS, bindings
from fabtui.tui.messages import Highlight, OpenRunbook
from fabtui.tui.screens.base import FabtuiScreen
from fabtui.tui.widgets.footer import KeyFooter
from fabtui.views import slowjob as view


class SlowFinished(Message):
    """Analysis number `run` came back: its report, or why there is none."""

    def __init__(self, run: int, report: SlowJobReport | None, error: str | None) -> None:
        super().__init__()
        self.run = run
        self.report = report
        self.error = error


class SlowJobScreen(FabtuiScreen):
    """See the module docstring."""

    COMMANDS_TABLE = SLOW_COMMANDS
    CRUMB = "slow job"
    BINDINGS: ClassVar[list[BindingType]] = bindings(SLOW_COMMANDS)
    DEFAULT_CSS = """
    SlowJobScreen #slow-head { height: auto; padding: 0 1; background: $boost; }
    SlowJobScreen #slow-spark { height: auto; padding: 0 1; }
    SlowJobScreen #slow-body { height: 1fr; }
    SlowJobScreen #slow-chain { width: 1fr; height: 1fr; border: none; }
    SlowJobScreen #slow-detail { width: 1fr; height: 1fr; padding: 0 1; }
    """

    def __init__(self, report: SlowJobReport | None = None) -> None:
        """`report`: show this analysis (one read from a file, a test's) instead of running
        the workspace's."""
        super().__init__()
        self.given = report
        self.report: SlowJobReport | None = None
        self.rows: list[view.Row] = []
        self.state = "analysing the job's window …"
        self.run = 0

    def compose(self) -> ComposeResult:
        yield Static(id="slow-head")
        yield Static(id="slow-spark")
        with Horizontal(id="slow-body"):
            yield OptionList(id="slow-chain")
            with VerticalScroll(id="slow-detail"):
                yield Static(id="slow-detail-body")
        yield KeyFooter()

    def on_mount(self) -> None:
        self._paint()
        if self.given is not None:
            self.show(self.given)
        else:
            self.start()

    # running ------------------------------------------------------------------------------
    def start(self) -> None:
        self.run += 1
        self.state = "analysing the job's window …"
        self._paint()
        self._analyse(self.run)

    @work(thread=True, group="slow", exclusive=True, exit_on_error=False,
          description="slow-job analysis")
    def _analyse(self, run: int) -> None:
        from fabtui.workspace.slowprom import slow_job  # reads Prometheus on a real fabric

        try:
            report = slow_job(self.fab.workspace)
        except (InputError, RequestError) as exc:
            self.post_message(SlowFinished(run, None, str(exc).splitlines()[0]))
            return
        self.post_message(SlowFinished(run, report, None))

    @on(SlowFinished)
    def _finished(self, message: SlowFinished) -> None:
        if message.run != self.run:
            return
        if message.report is None:
            self.state = f"cannot analyse: {message.error}"
            self.notify(message.error or "failed", title="slow job", severity="error")
            self._paint()
            return
        self.show(message.report)

    def show(self, report: SlowJobReport) -> None:
        """Lay out an analysis and mark its elements on the Fabric screen."""
        self.report = report
        self.rows = view.rows(report, ascii_only=self.fab.ascii_only)
        chain = self.query_one("#slow-chain", OptionList)
        chain.clear_options()
        chain.add_options([Option(Text(row.text, "bold" if row.kind == "episode" else ""),
                                  id=str(i)) for i, row in enumerate(self.rows)])
        if self.rows:
            chain.highlighted = 0
        self.state = report.summary
        keys = view.mark_keys(self.fab.fabric, report)
        self.post_message(Highlight("slow", frozenset(keys), f"slow job {report.job}"))
        chain.focus()
        self._paint()

    # drawing ------------------------------------------------------------------------------
    def _paint(self) -> None:
        report = self.report
        self.query_one("#slow-head", Static).update(
            view.headline(report) if report is not None else Text(self.state, "dim"))
        spark = self.query_one("#slow-spark", Static)
        line = view.timeline(report, max(self.size.width - 2, 10),
                             ascii_only=self.fab.ascii_only) if report else None
        if line is None:
            spark.update(Text("no step time in the window" if report else "", "dim"))
        else:
            text = Text(line.spark + "\n")
            text.append(line.marks + "\n", "bold")
            text.append(line.legend(report.baseline_s if report else None), "dim")
            spark.update(text)
        row = self.selected
        body = view.detail(report, row) if report is not None and row is not None else (
            "no slow or jittery episode: nothing to walk" if report is not None else "")
        self.query_one("#slow-detail-body", Static).update(Text(body))

    def on_resize(self) -> None:
        self.call_after_refresh(self._paint)

    @property
    def selected(self) -> view.Row | None:
        index = self.query_one("#slow-chain", OptionList).highlighted
        return self.rows[index] if index is not None and 0 <= index < len(self.rows) else None

    @on(OptionList.OptionHighlighted, "#slow-chain")
    def _moved(self) -> None:
        self._paint()

    # actions ------------------------------------------------------------------------------
    def _episode(self) -> int:
        row = self.selected
        return row.episode if row is not None else 0

    def action_open_runbook(self) -> None:
        if self.report is None or not self.report.chains:
            self.notify("no episode to open a runbook for", title="slow job",
                        severity="warning")
            return
        choice = view.runbook_choice(self.fab.workspace.library, self.fab.fabric, self.report,
                                     self._episode())
        if choice is None:
            self.notify("no confirmed element of this episode names a runbook",
                        title="slow job", severity="warning")
            return
        self.post_message(OpenRunbook(choice.runbook, choice.inputs, choice.why))

    def action_show_fabric(self) -> None:
        report = self.report
        keys = view.mark_keys(self.fab.fabric, report) if report is not None else []
        if report is None or not keys:
            self.notify("the chain names no element of the fabric map", title="slow job",
                        severity="warning")
            return
        deepest = view.deepest_confirmed(report, self._episode())
        self.post_message(Highlight("slow", frozenset(keys), f"slow job {report.job}"))
        self.fab.show_on_fabric(deepest.element if deepest is not None and
                                deepest.element in keys else keys[0])

    def action_file_case(self) -> None:
        if self.report is None:
            self.notify("no analysis to file yet", title="slow job", severity="warning")
            return
        self._file(self.report)

    @work(thread=True, group="slow-file", exit_on_error=False, description="file case")
    def _file(self, report: SlowJobReport) -> None:
        from fabtui.workspace.slowfaces import file_slow_case

        try:
            case = file_slow_case(self.fab.workspace, report, "the app's slow-job analysis")
        except (InputError, RequestError) as exc:
            self.app.call_from_thread(self.notify, str(exc), title="slow job",
                                      severity="error")
            return
        self.app.call_from_thread(self.notify, f"filed draft case {case.id} (complete it with "
                                  "the root cause: fabtui cases complete)", title="slow job")

    def action_write_report(self) -> None:
        if self.report is None:
            self.notify("no analysis to report yet", title="slow job", severity="warning")
            return
        self._write(self.report)

    @work(thread=True, group="slow-report", exit_on_error=False, description="write report")
    def _write(self, report: SlowJobReport) -> None:
        from fabtui.workspace import reporting

        ws = self.fab.workspace
        folder: Path = ws.settings.data_dir / "reports"
        path = folder / f"slow-{report.job}.html"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            reporting.write(reporting.build_slow(ws, report, path.name), "html", path)
        except (OSError, InputError, RequestError) as exc:
            self.app.call_from_thread(self.notify, f"cannot write the report: {exc}",
                                      title="slow job", severity="error")
            return
        self.app.call_from_thread(self.notify, f"wrote {path}", title="slow job")

    def action_rerun(self) -> None:
        self.start()

    def action_back(self) -> None:
        self.app.pop_screen()
