"""The palette (`ctrl+p`) finds runbooks and cases by symptom, in English or Chinese.

Beside the app's actions (`commands.FabtuiCommands`), a query such as `作业挂死` or `dead optic`
offers the runbooks `fabtui runbook find` would (the same lexicon and glossary), then the best
cases of the case library; choosing one opens it. The searches run off the event loop.
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import TYPE_CHECKING, Any

from textual.command import Hit, Hits, Provider

from fabtui.tui.messages import OpenCase, OpenRunbook

if TYPE_CHECKING:
    from fabtui.workspace import Workspace

SHOWN = 3
"""Runbooks and cases offered each (the palette lists actions too)."""
MIN_QUERY = 2


class SymptomFinder(Provider):
    """Runbooks and cases for the symptom typed into the palette."""

    def _workspace(self) -> Workspace | None:
        return getattr(self.app, "workspace", None)

    def _runbooks(self, query: str) -> list[tuple[float, str, str]]:
        from fabtui.runbooks.library import find

        workspace = self._workspace()
        if workspace is None:
            return []
        hits = find(workspace.library, query, SHOWN).hits
        best = max((score for score, _ in hits), default=1.0) or 1.0
        return [(score / best, book.meta.id, book.title) for score, book in hits]

    def _cases(self, query: str) -> list[tuple[float, str, str]]:
        workspace = self._workspace()
        if workspace is None:
            return []
        try:
            hits = workspace.cases.search(query, limit=SHOWN).hits
        except Exception:  # best effort: the Cases view says what is wrong with the library
            return []
        best = max((h.score for h in hits), default=1.0) or 1.0
        return [(h.score / best, h.id, h.title) for h in hits]

    def _open(self, message: Any) -> None:
        self.app.post_message(message)

    async def search(self, query: str) -> Hits:
        if len(query.strip()) < MIN_QUERY:
            return
        runbooks = await asyncio.to_thread(self._runbooks, query)
        for score, book, title in runbooks:
            yield Hit(score, f"Runbook {book}: {title}",
                      partial(self._open, OpenRunbook(book, {}, f"palette: {query}")),
                      help="open the runbook as a guided session")
        cases = await asyncio.to_thread(self._cases, query)
        for score, case, title in cases:
            yield Hit(0.8 * score, f"Case {case}: {title}", partial(self._open, OpenCase(case)),
                      help="show the case")
