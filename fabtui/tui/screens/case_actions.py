"""What the case screens (the list and one case) both do to a case: export it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from fabtui.errors import RequestError
from fabtui.tui.screens.dialogs import Prompt

if TYPE_CHECKING:
    from fabtui.tui.app import FabtuiApp

EXPORT_DIR = "cases-export"
"""Where export writes unless told otherwise (as `fabtui cases export`)."""


def export_case(app: FabtuiApp, case_id: str) -> None:
    """Ask where, then write `case_id` as a markdown file there (as `fabtui cases export`)."""

    def write(folder: str | None) -> None:
        if not folder or not folder.strip():
            return
        try:
            paths, written = app.workspace.cases.export(
                Path(folder.strip()).expanduser(), [case_id])
        except (RequestError, OSError) as exc:
            app.notify(str(exc), title="export", severity="error")
            return
        state = "written" if written else "already up to date"
        app.notify(f"{paths[0]} ({state})", title="export")

    app.push_screen(Prompt(f"export {case_id}", "folder to write the case file into "
                           "(enter: write, esc: cancel)", EXPORT_DIR), write)
