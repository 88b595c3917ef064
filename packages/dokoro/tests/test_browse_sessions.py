"""Captured sessions in ``dokoro browse`` (Textual's Pilot): listed newest first, a session's
preview is its summary and its turns; what a person sees is checked on a screenshot too."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from dokoro.browse.app import BrowseApp
from dokoro.browse.screens import PreviewScreen
from dokoro_testkit.pilot import open_category, select, until

pytestmark = pytest.mark.anyio

SIZE = (100, 30)
FIXTURE = Path(__file__).parents[3] / "shared/dokoro-store/tests/fixtures/transcripts/session-one.jsonl"
SESSION = "7f3c2a10-5b1e-4c8d-9a2f-0e6b1d4c8a21"
TITLE = "Sliding eight-hour session expiry for the shop"


async def test_captured_sessions_are_a_category_with_their_turns_in_the_preview(world, tmp_path):
    transcript = tmp_path / f"{SESSION}.jsonl"
    shutil.copyfile(FIXTURE, transcript)
    world.capture.ingest(SESSION, transcript, project=Path("/home/dev/shop"))
    app = BrowseApp(world, category="sessions", poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_category(pilot, app, "sessions")
        (item,) = screen.shown
        assert item.label == TITLE
        assert "4 turn(s)" in item.sublabel and "/home/dev/shop" in item.sublabel
        await select(pilot, app, TITLE)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, PreviewScreen) and app.screen.loaded.is_set())
        shown = "\n".join(line.plain for line in app.screen.lines)
        assert f"dokoro forget --session {SESSION}" in shown
        assert "Asked: Customers get logged out" in shown  # the summary
        assert "We decided to use a sliding expiry" in shown  # a turn
        assert "AKIAIOSFODNN7EXAMPLE" not in shown
        if os.environ.get("DOKORO_SCREENSHOTS"):  # a person's look: `DOKORO_SCREENSHOTS=folder pytest ...`
            folder = Path(os.environ["DOKORO_SCREENSHOTS"])
            app.save_screenshot("session-preview.svg", path=str(folder))
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is screen)
            app.save_screenshot("sessions.svg", path=str(folder))
