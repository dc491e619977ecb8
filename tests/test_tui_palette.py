"""Issue 37, Deliver 6: the palette (`ctrl+p`) finds runbooks and cases by symptom in either
language, through the glossary `fabtui runbook find` and case search use."""

from __future__ import annotations

from textual.command import CommandPalette
from textual.widgets import Input

from tests.support.tui_support import asynctest, make_app, screen_text, until


@asynctest
async def test_the_palette_finds_the_hang_runbook_in_chinese_and_opens_it() -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        app.screen.query_one(Input).value = "作业挂死"  # what the field review typed
        await until(pilot, lambda: "Runbook nccl-hang-triage" in screen_text(app),
                    "the hang runbook offered")
        await pilot.press("enter")
        await until(pilot, lambda: app.current_mode == "runbooks"
                    and "nccl-hang-triage" in screen_text(app), "the runbook opened")


@asynctest
async def test_the_palette_finds_the_english_optic_hang_case_in_chinese() -> None:
    app = make_app()
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        app.screen.query_one(Input).value = "光模块 没有光"
        await until(pilot, lambda: "Case nccl-hang-optic-rail5-node003" in screen_text(app),
                    "the English optic-hang case offered")
