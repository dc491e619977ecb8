"""What every screen of the app shares: the running app, typed (`fab`), and worker failures
forwarded to the app's one handler (`tui.workers`).

`fab` is a cast, not an import of the app module (posting's pattern): screens never import
`tui.app`, which imports them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar, cast

from textual.screen import Screen

from fabtui.tui.workers import ForwardsWorkerErrors

if TYPE_CHECKING:
    from fabtui.tui.app import FabtuiApp

ResultType = TypeVar("ResultType")


class FabtuiAware:
    """For a screen or a modal (a base before `Screen`): `fab`, the running `FabtuiApp`."""

    @property
    def fab(self) -> FabtuiApp:
        return cast("FabtuiApp", cast(Screen[Any], self).app)


class FabtuiScreen(FabtuiAware, ForwardsWorkerErrors, Screen[None]):
    """A full screen of the app (see the module docstring)."""
