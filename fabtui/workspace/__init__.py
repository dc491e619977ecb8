"""The workspace layer: what every face (command line, TUI) asks to work on a fabric.

Headless (no click, no Textual, no rich) and built lazily; see `fabtui.workspace.core`.
"""

from fabtui.workspace.core import Resumed, Workspace

__all__ = ["Resumed", "Workspace"]
