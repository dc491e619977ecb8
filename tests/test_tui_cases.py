"""The Cases screen: journey 3 ("have we seen this before?") by keyboard on the shipped case
library: a symptom typed in English or Chinese, the matching cases with why they matched, a
case, the runbook and session it references; a draft edited and stored; a slow search
superseded by a newer keystroke; similar cases for the newest session; snapshots."""

from __future__ import annotations

import json
import threading
import types
from collections.abc import Callable
from typing import Any

import pytest
from click.testing import Result
from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widgets import Markdown, OptionList, Static

from fabtui.cases.library import CaseLibrary
from fabtui.cases.present import why
from fabtui.model.case import Case, CaseStatus
from fabtui.tui.app import FabtuiApp
from fabtui.tui.messages import OpenCase, OpenRunbook, OpenSession
from fabtui.tui.screens.case_edit import CaseEditor
from fabtui.tui.screens.case_view import CaseTable, CaseView
from fabtui.tui.screens.cases import CasesScreen, Found
from fabtui.tui.widgets.case_list import CaseList, in_view
from fabtui.tui.widgets.fit_table import cut_segments, cut_text, fit_cell
from fabtui.workspace import Workspace
from tests.support.tui_support import (
    NOW,
    assert_snapshot,
    asynctest,
    draft_with_similar,
    screen_text,
    until,
    workspace,
)

pytestmark = pytest.mark.usefixtures("sim_in_process")

PFC_CASE = "pfc-storm-node006-nic-stall-prevention"
OPTIC_ZH_CASE = "optic-fec-ber-fr4-spine-zh"
DRAFT = "session-20260301-120000-abc123"


class Recording(FabtuiApp):
    """The app, keeping the cross-screen messages the Runbooks screen would answer."""

    def __init__(self, ws: Workspace) -> None:
        super().__init__(ws, live=False, clock=lambda: NOW)
        self.posted: list[tuple[str, str, dict[str, str]]] = []

    async def on_open_runbook(self, message: OpenRunbook) -> None:
        self.posted.append(("runbook", message.runbook, message.inputs))
        message.prevent_default()  # (the app's own handler would switch to the Runbooks view)

    async def on_open_session(self, message: OpenSession) -> None:
        self.posted.append(("session", message.session, {}))
        message.prevent_default()


async def cases_mode(app: FabtuiApp, pilot: Pilot[None]) -> CasesScreen:
    await pilot.press("3")
    screen = app.screen
    assert isinstance(screen, CasesScreen)
    await until(pilot, lambda: screen.shown_query == "", "the library listing")
    return screen


async def search(pilot: Pilot[None], screen: CasesScreen, text: str) -> list[Any]:
    await pilot.press(*text)
    await until(pilot, lambda: screen.shown_query == text, f"results for {text!r}")
    await pilot.pause()
    return screen.query_one(CaseList).entries


def frozen_similarity(monkeypatch: pytest.MonkeyPatch) -> None:
    """Similar cases weigh recency: on the frozen clock their scores do not drift."""
    monkeypatch.setattr("fabtui.cases.similar.time", types.SimpleNamespace(time=lambda: NOW))


@asynctest
async def test_journey_3_an_english_symptom_finds_the_case_and_its_runbook() -> None:
    app = Recording(workspace())
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await cases_mode(app, pilot)
        entries = await search(pilot, screen, "pfc storm pause")
        assert entries[0].id == PFC_CASE
        assert "pfc" in entries[0].why and "pause" in entries[0].why
        marked = [entries[0].snippet[a:b].lower() for a, b in entries[0].spans]
        assert marked and all(w.startswith(("pfc", "paus", "storm")) for w in marked)
        assert f"matched {entries[0].why}"[:60] in screen_text(app)
        await pilot.press("enter", "enter")  # to the results, then open the first
        await until(pilot, lambda: isinstance(app.screen, CaseView), "the case view")
        view = app.screen
        assert isinstance(view, CaseView) and view.case.id == PFC_CASE
        text = screen_text(app)
        assert "runbook: pfc-storm" in text and "Symptom" in text
        await pilot.press("b")
        await pilot.pause()
        # The case names leaf-g00-r4, and the runbook's `leaf` input is a switch.
        assert app.posted == [("runbook", "pfc-storm", {"leaf": "leaf-g00-r4"})]
        await pilot.press("escape")
        assert app.screen is screen


@asynctest
async def test_journey_3_a_chinese_symptom_matches_the_chinese_case() -> None:
    app = Recording(workspace())
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await cases_mode(app, pilot)
        entries = await search(pilot, screen, "光模块 误码")
        ids = [e.id for e in entries]
        assert OPTIC_ZH_CASE in ids[:3]
        entry = entries[ids.index(OPTIC_ZH_CASE)]
        assert "光模块" in entry.why or "误码" in entry.why
        assert {entry.snippet[a:b] for a, b in entry.spans} & {"光模块", "误码", "光模块误码"}


@asynctest
async def test_filters_typed_beside_the_words_narrow_the_results_and_a_bad_one_is_named() -> None:
    app = Recording(workspace())
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await cases_mode(app, pilot)
        everything = await search(pilot, screen, "pause")
        await pilot.press(*" severity:sev1")
        await until(pilot, lambda: screen.shown_query == "pause severity:sev1", "filtered")
        filtered = screen.query_one(CaseList).entries
        library = app.workspace.cases
        assert 0 < len(filtered) < len(everything)
        assert all(library.get(e.id).severity == "sev1" for e in filtered)
        await pilot.press(*" rail:x")
        await until(pilot, lambda: screen.shown_query == "pause severity:sev1 rail:x", "bad")
        assert "rail:x: expected a rail number 0-255" in screen_text(app)


def visible_rows(app: FabtuiApp, region: Region) -> list[str]:
    """The screen's rows in `region` (a widget's cells: the list without its scrollbar, the
    case's facts without the links beside them), cut by cell, not by character (a Chinese
    character is two cells)."""
    strips = app.screen._compositor.render_strips()
    return [strips[y].crop(region.x, region.right).text
            for y in range(region.y, min(region.bottom, len(strips)))]


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
@pytest.mark.parametrize(("words", "case_id"), [("pfc storm pause", PFC_CASE),
                                                ("光模块 老化", OPTIC_ZH_CASE)])
@asynctest
async def test_a_hit_too_long_for_the_screen_ends_in_an_ellipsis_and_opens_whole(
        words: str, case_id: str, size: tuple[int, int]) -> None:
    """Issue 37's rule (every cut ends in `…`), missed in the Cases list: at 80x24 a hit's
    title and snippet were cut at the screen's edge with nothing to say so (`... PFC storm
    from node006 mlx5_4`, the rest gone). The row now ends in `…` within the list's cells (a
    Chinese title too, counted in cells), the id and score whole, the first matched word on
    screen; enter shows the whole title, and the case's text the snippet comes from."""
    app = Recording(workspace())
    async with app.run_test(size=size) as pilot:
        screen = await cases_mode(app, pilot)
        entries = await search(pilot, screen, words)
        index = [e.id for e in entries].index(case_id)
        entry = entries[index]
        listing = screen.query_one(CaseList)
        width = listing.scrollable_content_region.width
        rows = visible_rows(app, listing.scrollable_content_region)
        title_row, snippet_row = (row.rstrip() for row in rows[index * 3:index * 3 + 2])
        head = f"  {entry.id}  {entry.badge}  "
        assert title_row.lstrip("▸ ").startswith(head.strip()), title_row
        assert cell_len(head) + cell_len(entry.title) > width  # the case is one too long
        assert title_row.endswith("…") and cell_len(title_row) <= width, title_row
        assert entry.title.startswith(title_row[len(head):-1].rstrip()), title_row
        assert cell_len(entry.snippet.rstrip("…")) + 4 > width
        assert snippet_row.endswith("…") and cell_len(snippet_row) <= width, snippet_row
        first = entry.snippet[slice(*entry.spans[0])]
        assert first in snippet_row, (first, snippet_row)
        await pilot.press("enter", *["down"] * index, "enter")
        await until(pilot, lambda: isinstance(app.screen, CaseView), "the case view")
        view = app.screen
        assert isinstance(view, CaseView) and view.case.id == case_id
        await pilot.pause()
        facts = view.query_one("#case-facts").content_region
        shown = "".join("".join(visible_rows(app, facts)).split())
        assert "".join(entry.title.split()) in shown  # the whole title, wrapped
        # the snippet's words are the case's text as the view lays it out (prose, tables)
        said: list[str] = []
        for part in view.query_one("#case-body").children:
            if isinstance(part, Markdown):
                said.append(part.source)
            elif isinstance(part, Static) and isinstance(part.content, CaseTable):
                said += [" ".join(row) for row in part.content.rows]
        assert " ".join(entry.snippet.strip("…").split()) in " ".join(" ".join(said).split())


def unspaced(rows: list[str]) -> str:
    """`rows` run together without their blanks: a text however it was wrapped."""
    return "".join("".join(rows).split())


def header_rows(app: FabtuiApp, view: CaseView) -> list[str]:
    """The rows of the case's header on screen (as far as the view shows it unscrolled)."""
    body = view.query_one("#case-body").content_region
    return visible_rows(app, view.query_one("#case-facts").content_region.intersection(body))


@asynctest
async def test_a_matched_line_cut_at_80_columns_reads_whole_on_enter_as_the_footer_says() -> None:
    """At 80 columns a hit's `matched …` line (why the case matched) was cut at the edge, and
    nothing showed it whole: enter opened the case, whose header did not say why it matched,
    and the footer did not name enter. With the list focused the footer shows `⏎ Open`; the
    case view's header has the whole reason, wrapped; a similar case opened from the links
    says why it is similar the same way."""
    app = Recording(workspace())
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await cases_mode(app, pilot)
        entry = (await search(pilot, screen, "pfc storm pause"))[0]
        listing = screen.query_one(CaseList)
        width = listing.scrollable_content_region.width
        matched_row = visible_rows(app, listing.scrollable_content_region)[2].rstrip()
        assert cell_len(f"    matched {entry.why}") > width  # the reason is one too long
        assert matched_row.startswith("    matched ") and matched_row.endswith("…"), matched_row
        await pilot.press("enter")  # from the query to the results
        await until(pilot, lambda: listing.has_focus, "the list focused")
        footer = screen_text(app).splitlines()[-1]
        enter = app.get_key_display(Binding("enter", "choose"))
        assert f"{enter} Open" in footer, footer
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, CaseView), "the case view")
        view = app.screen
        assert isinstance(view, CaseView) and view.case.id == entry.id
        await pilot.pause()
        facts = header_rows(app, view)
        assert unspaced([f"matched {entry.why}"]) in unspaced(facts), facts
        await until(pilot, lambda: view.similar is not None and view.similar.cases,
                    "similar cases")
        similar = view.similar
        assert similar is not None
        other = similar.cases[0]
        links = view.query_one("#case-links", OptionList)
        links.focus()
        links.highlighted = view.links.index(("case", other.id))
        await pilot.press("enter")
        await until(pilot, lambda: app.screen is not view and isinstance(app.screen, CaseView),
                    "the similar case")
        opened = app.screen
        assert isinstance(opened, CaseView) and opened.case.id == other.id
        await pilot.pause()
        facts = header_rows(app, opened)
        assert unspaced([f"matched {why(other.matched)}"]) in unspaced(facts), facts


@asynctest
async def test_at_80_columns_a_long_status_folds_and_a_bad_filter_is_still_named() -> None:
    """The status line was one line high: at 80 columns two misspelt words pushed the bad
    filter's error (`rail:x: expected a rail number 0-255`) past the edge, unseen. It folds
    to the lines it needs, and back to one for a short status. The query's examples, cut at
    the field's edge, end in `…`."""
    app = Recording(workspace())
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await cases_mode(app, pilot)
        query = screen.query_one("#case-query")
        hint = visible_rows(app, query.scrollable_content_region)[0]
        assert hint.startswith("symptom") and hint.endswith("…"), hint
        line = screen.query_one("#case-status")
        await search(pilot, screen, "pause pfcc storrm rail:x")
        await pilot.pause()
        rows = [row.rstrip() for row in visible_rows(app, line.content_region)]
        assert len(rows) > 1 and all(cell_len(row) <= line.content_region.width for row in rows)
        said = " ".join(rows)
        assert "no match for 'storrm'" in said and "rail:x: expected a rail number 0-255" in said
        listing = screen.query_one(CaseList)
        assert listing.region.y == line.region.bottom and listing.entries  # the list below it
        await pilot.press(*["backspace"] * len(" pfcc storrm rail:x"))
        await until(pilot, lambda: screen.shown_query == "pause", "results for 'pause'")
        await pilot.pause()
        assert line.region.height == 1 and "match" in visible_rows(app, line.content_region)[0]


@asynctest
async def test_a_similar_case_with_a_title_over_120_characters_says_it_is_cut() -> None:
    """The case view's similar cases showed at most 120 characters of a title, cut silently
    (`... stall preven`); the cut ends in `…`, and enter on it opens the case, whole."""
    app = Recording(workspace())
    async with app.run_test(size=(160, 50)) as pilot:
        app.post_message(OpenCase("pfc-storm-pfcwd-victims-rx-pause"))
        await until(pilot, lambda: isinstance(app.screen, CaseView), "the case view")
        view = app.screen
        assert isinstance(view, CaseView)
        await until(pilot, lambda: view.similar is not None, "similar cases")
        links = view.query_one("#case-links", OptionList)
        title = app.workspace.cases.get(PFC_CASE).title
        assert len(title) > 120
        index = view.links.index(("case", PFC_CASE))
        shown = str(links.get_option_at_index(index).prompt).splitlines()[1]
        assert shown.endswith("…") and title.startswith(shown[:-1]), shown


def test_a_cut_ends_in_an_ellipsis_at_a_character_styled_as_the_text_it_cuts() -> None:
    assert cut_text(Text("光模块老化"), 10).plain == "光模块老化"  # fits: as it is
    # 6 cells: a third character would be halved (`光模 …`, a blank before the mark)
    assert cut_text(Text("光模块老化"), 6).plain == "光模…"
    assert cut_text(Text("光模块老化"), 5).plain == "光模…"
    assert cut_text(Text("pfc storm"), 0).plain == ""
    marked = Text("a pfc storm")
    marked.stylize("bold", 2, 11)
    short = cut_text(marked, 6)
    assert short.plain == "a pfc…" and cell_len(short.plain) == 6
    assert [(span.start, span.end) for span in short.spans] == [(2, 5), (5, 6)]
    assert fit_cell(Text("光模块老化"), 6, "left").plain == "光模… "  # padded to its width
    line = [Segment("    "), Segment("光模块", mark := Style(bold=True)), Segment("老化测试")]
    assert cut_segments(line, 20) == line
    assert cut_segments(line, 8) == [Segment("    "), Segment("光", mark), Segment("…", mark)]
    assert cut_segments(line, 10) == [Segment("    "), Segment("光模", mark),
                                      Segment("…", mark)]  # the … where the mark was cut
    assert "".join(s.text for s in cut_segments(line, 11)) == "    光模块…"


def test_a_snippet_whose_match_is_past_the_edge_starts_later() -> None:
    lead = "…光纤跳线经过配线架时被压折导致两端收光同时下降并且纠错数暴增偶有不可纠错现象的"
    snippet = lead + "光模块老化" + "，更换后恢复。"
    spans = ((len(lead), len(lead) + 5),)
    assert cell_len(lead) > 76  # forty characters of context: eighty cells
    shown, moved = in_view(snippet, spans, 76)
    assert shown.startswith("…") and shown[slice(*moved[0])] == "光模块老化"
    assert cell_len(shown[:moved[0][1]]) <= 75  # the match, then room for the mark
    assert in_view(snippet, spans, 200) == (snippet, spans)  # on screen already: as it is
    english = "x" * 30 + " the switch showed pause frames on every port " + "pfc storm"
    shown, moved = in_view(english, ((len(english) - 9, len(english)),), 40)
    # a quarter of the room before the match, from the start of a word
    assert shown == "…port pfc storm" and shown[slice(*moved[0])] == "pfc storm"


def test_moving_to_the_end_of_the_best_results_asks_for_more(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("fabtui.tui.screens.cases.LIMIT", 3)

    @asynctest
    async def check() -> None:
        app = Recording(workspace())
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await cases_mode(app, pilot)
            listing = screen.query_one(CaseList)
            first = [e.id for e in await search(pilot, screen, "pause")]
            assert len(first) == 3 and screen.total > 3
            await pilot.press("tab", "down")  # the cursor on the second of three: near the end
            await until(pilot, lambda: len(listing.entries) == min(6, screen.total), "more")
            assert [e.id for e in listing.entries][:3] == first and listing.cursor == 1

    check()


def draft(ws: Workspace) -> Case:
    return ws.cases.put(Case(
        id=DRAFT, title="all_reduce hangs, rail 5 NIC retry exceeded", status=CaseStatus.DRAFT,
        symptom="The job hung; IBV_WC_RETRY_EXC_ERR on node003 mlx5_5.",
        components=["node003:mlx5_5", "leaf-g00-r5:Ethernet16"], tags=["nccl-hang"],
        sessions=["20260301-120000-abc123"], runbooks=["optic-replacement"]))


@asynctest
async def test_open_case_edits_a_draft_refuses_what_is_invalid_and_stores_the_rest() -> None:
    ws = workspace()
    draft(ws)
    app = Recording(ws)
    async with app.run_test(size=(120, 40)) as pilot:
        app.post_message(OpenCase(DRAFT, edit=True))
        await until(pilot, lambda: isinstance(app.screen, CaseEditor), "the editor")
        assert app.current_mode == "cases"
        editor = app.screen
        assert isinstance(editor, CaseEditor)
        # Resolved without a root cause: refused, with the library's reason; nothing stored.
        await pilot.press("shift+tab", "enter", "down", "enter", "ctrl+s")
        await pilot.pause()
        assert editor.error is not None and "root cause is empty" in editor.error
        assert "not saved: " in screen_text(app)
        assert ws.cases.get(DRAFT).status is CaseStatus.DRAFT
        await pilot.press("tab", *"dirty optic, rx power -14 dBm", "ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, CaseView), "back to the case")
        view = app.screen
        assert isinstance(view, CaseView)
        assert view.case.root_cause == "dirty optic, rx power -14 dBm"
        await pilot.press("s")
        await pilot.pause()
        assert app.posted == [("session", "20260301-120000-abc123", {})]
    reread = CaseLibrary(ws.settings.data_dir, engine=None).get(DRAFT)
    assert reread.root_cause == "dirty optic, rx power -14 dBm"
    assert reread.status is CaseStatus.RESOLVED


@asynctest
async def test_a_slow_search_is_superseded_by_the_next_keystroke(
        monkeypatch: pytest.MonkeyPatch) -> None:
    app = Recording(workspace())
    started, release = threading.Event(), threading.Event()
    shown: list[str | None] = []
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await cases_mode(app, pilot)
        real_query, real_show = screen.run_query, screen.show

        def slow_query(line: str, limit: int) -> Found:
            if line == "optic":
                started.set()
                release.wait(10)
            return real_query(line, limit)

        def record(found: Found, query: str | None, **more: bool) -> None:
            shown.append(query)
            real_show(found, query, **more)

        monkeypatch.setattr(screen, "run_query", slow_query)
        monkeypatch.setattr(screen, "show", record)
        await pilot.press(*"optic")
        await until(pilot, started.is_set, "the slow search to start")
        await pilot.press("s")
        release.set()
        await until(pilot, lambda: screen.shown_query == "optics", "the newest results")
        await pilot.pause(0.3)
        assert "optic" not in shown and shown[-1] == "optics"
        assert screen.query_one(CaseList).entries  # the newest search's results are shown


def test_similar_cases_for_the_newest_session(run: Callable[..., Result]) -> None:
    result = run("--scenario", "nccl-hang", "runbook", "run", "nccl-hang-triage", "--json",
                 "--answer", "cordon=node003", "--answer", "restart=yes")
    session = json.loads(result.stdout)["session"]

    @asynctest
    async def check() -> None:
        app = Recording(workspace())
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await cases_mode(app, pilot)
            await pilot.press("tab", "ctrl+n")
            await until(pilot, lambda: screen.shown_query == "similar:last", "similar cases")
            entries = screen.query_one(CaseList).entries
            text = screen_text(app)
            assert f"like {session}" in text and "nccl-hang" in text
            assert entries and any(e.id.startswith("nccl-hang-optic") for e in entries)
            assert all(e.why for e in entries)  # each says what it matched on
            # The same cases, in the same order, as `fabtui cases similar last`.
            expected = app.workspace.cases.similar(app.workspace.case_or_session(session),
                                                   limit=20)
            assert [e.id for e in entries] == [c.id for c in expected.cases]
            # From a live session (OpenCase with its id): its draft, not filed, and its
            # similar cases beside it.
            app.post_message(OpenCase(session))
            view = await draft_with_similar(pilot, session)
            assert view.similar is not None
            assert [c.id for c in view.similar.cases] == [c.id for c in expected.cases][:8]
            assert "not filed yet" in screen_text(app)
            await pilot.press("e")
            await pilot.pause()
            assert app.screen is view  # no editor for a draft not filed

    check()


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
@asynctest
async def test_snapshot_of_the_results(size: tuple[int, int]) -> None:
    app = Recording(workspace())
    async with app.run_test(size=size) as pilot:
        screen = await cases_mode(app, pilot)
        await search(pilot, screen, "pfc storm pause")
        await pilot.press("enter")
        await pilot.pause()
        await assert_snapshot(pilot, f"cases-results-{size[0]}x{size[1]}")


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
def test_snapshot_of_a_case(size: tuple[int, int], monkeypatch: pytest.MonkeyPatch) -> None:
    frozen_similarity(monkeypatch)

    @asynctest
    async def check() -> None:
        app = Recording(workspace())
        async with app.run_test(size=size) as pilot:
            app.post_message(OpenCase(PFC_CASE))
            await until(pilot, lambda: isinstance(app.screen, CaseView), "the case view")
            view = app.screen
            assert isinstance(view, CaseView)
            await until(pilot, lambda: view.similar is not None, "similar cases")
            await pilot.pause()
            await assert_snapshot(pilot, f"case-view-{size[0]}x{size[1]}")

    check()
