"""The case editor: what the operator found, written into a case (a draft filed from a session,
usually): title, severity, status, root cause, resolution.

Saving goes through `CaseLibrary.complete`, the write path of `fabtui cases complete`: the case
is validated as a whole (a resolved case needs a root cause), masked and stored, and the search
index follows. A refusal is shown in the editor, which stays open; a save dismisses it with the
case as stored. Leaving the status as it was lets the library decide (a draft with a root cause
becomes resolved), as on the command line.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Select, Static, TextArea

from fabtui.errors import InputError, RequestError
from fabtui.model.case import Case, CaseStatus, Severity
from fabtui.tui.commands import CASE_EDIT_COMMANDS, bindings
from fabtui.tui.screens.base import FabtuiAware
from fabtui.tui.widgets.cut_input import CutInput
from fabtui.tui.widgets.pick import TypedSelect

FIELDS = {"title": "#edit-title", "severity": "#edit-severity", "status": "#edit-status",
          "root cause": "#edit-root-cause", "resolution": "#edit-resolution"}
"""The field a refusal names first (`title: write a title`) -> its widget."""


class CaseEditor(FabtuiAware, ModalScreen[Case | None]):
    """See the module docstring."""

    COMMANDS_TABLE = CASE_EDIT_COMMANDS
    BINDINGS: ClassVar[list[BindingType]] = bindings(CASE_EDIT_COMMANDS)
    DEFAULT_CSS = """
    CaseEditor { align: center middle; }
    CaseEditor > Vertical { width: 90%; max-width: 110; height: 90%; border: round $accent;
                            background: $surface; padding: 0 1; }
    CaseEditor Label { color: $text-muted; }
    CaseEditor #edit-picks { height: 3; }
    CaseEditor Select { width: 1fr; }
    CaseEditor TextArea { height: 1fr; min-height: 3; }
    CaseEditor #edit-error { color: $error; height: auto; }
    """

    def __init__(self, case: Case) -> None:
        super().__init__()
        self.case = case
        self.error: str | None = None


    def compose(self) -> ComposeResult:
        case = self.case
        with Vertical() as box:
            box.border_title = f"edit {case.id} ({case.status.value})"
            box.border_subtitle = "ctrl+s: save · esc: cancel · tab: next field"
            yield Label("title")
            yield CutInput(case.title, id="edit-title")  # a long one ends in `…` (#37)
            with Horizontal(id="edit-picks"):
                yield TypedSelect([(s.value, s.value) for s in Severity], prompt="severity",
                             value=case.severity.value if case.severity else Select.NULL,
                             id="edit-severity")
                yield TypedSelect([(s.value, s.value) for s in CaseStatus], allow_blank=False,
                             value=case.status.value, id="edit-status")
            yield Label("root cause")
            yield TextArea(case.root_cause, id="edit-root-cause", soft_wrap=True)
            yield Label("resolution")
            yield TextArea(case.resolution, id="edit-resolution", soft_wrap=True)
            yield Static("", id="edit-error", markup=False)

    def on_mount(self) -> None:
        self.query_one("#edit-root-cause", TextArea).focus()
        # a long title shows from its start (the field showed its end: `21): dark optic…`)
        self.query_one("#edit-title", Input).cursor_position = 0

    def action_save(self) -> None:
        """Validate and store the case; on a refusal say why and stay."""
        case = self.case
        title = self.query_one("#edit-title", Input).value.strip()
        severity = self.query_one("#edit-severity", Select).value
        status = self.query_one("#edit-status", Select).value
        root_cause = self.query_one("#edit-root-cause", TextArea).text
        resolution = self.query_one("#edit-resolution", TextArea).text
        if not title:
            self._refuse("title: write a title (one line saying what happened)")
            return
        try:
            saved = self.fab.workspace.cases.complete(
                case.id, root_cause=root_cause.strip(), resolution=resolution.strip(),
                title=title,
                severity=Severity(severity) if isinstance(severity, str) else None,
                status=CaseStatus(status) if isinstance(status, str) and
                status != case.status.value else None)
        except (InputError, RequestError) as exc:
            self._refuse(str(exc).splitlines()[0])
            return
        self.dismiss(saved)

    def _refuse(self, message: str) -> None:
        """Say why the case was not saved, and give the focus to the field it names (`title:
        ...`, `root cause: ...`), so what is typed next goes where the problem is."""
        self.error = message
        self.query_one("#edit-error", Static).update(f"not saved: {message}")
        named = message.split(":", 1)[0].strip().lower().replace("_", " ")
        field = FIELDS.get(named)
        if field is not None:
            self.query_one(field).focus()

    def action_cancel(self) -> None:
        self.dismiss(None)
