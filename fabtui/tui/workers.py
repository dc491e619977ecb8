"""No worker fails silently: a worker that raised is shown to the user.

Every worker of the app runs with `exit_on_error=False` (one failure must not end an on-call
engineer's app), so Textual neither raises nor shows its error: it posts `Worker.StateChanged`
to the node that ran the worker, and that message does not bubble. The app has the one handler
(`FabtuiApp.handle_worker_error`); a screen that runs workers forwards the failures of its own
to it (`ForwardsWorkerErrors`). tests/test_tui_worker_failures.py checks that every screen
that runs a worker does.
"""

from __future__ import annotations

from typing import Any

from textual.worker import Worker, WorkerState

from fabtui.errors import one_line


class ForwardsWorkerErrors:
    """For a screen that runs workers (a base before `Screen`): a worker of its that failed is
    handed to the app's handler."""

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state is WorkerState.ERROR:
            event.worker.node.app.post_message(event)


def worker_failure(worker: Worker[Any]) -> str:
    """`probe on demand failed: KeyError: 'x'`: the worker (its description, else its name or
    group) and its error, on one line."""
    what = worker.description or worker.name or worker.group or "a background task"
    error = worker.error
    return f"{what} failed: {one_line(error) if error is not None else 'unknown error'}"
