"""SVG snapshots of the main screens of ``dokoro browse``, compared with the committed ones.

A fixed terminal (100 x 30), a frozen store clock and fixed file times make the screens
deterministic; the SVG's generated ids are normalised. After a deliberate change of the screens,
refresh the files with ``DOKORO_UPDATE_SNAPSHOTS=1 uv run pytest packages/dokoro/tests/test_browse_snapshots.py``
and look at them (``scripts/browse_screenshots.sh`` renders them as PNG) before committing.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from dokoro.browse import data
from dokoro.browse.app import BrowseApp
from dokoro.browse.screens import CategoriesScreen, ConfirmScreen, HelpScreen, ItemsScreen, PreviewScreen
from dokoro_testkit.pilot import HANG_SECONDS  # only a hang reaches it
from textual.widgets._footer import FooterKey

pytestmark = pytest.mark.anyio

SNAPSHOTS = Path(__file__).parent / "snapshots"
SIZE = (100, 30)


def normalise(svg: str) -> str:
    return re.sub(r"terminal-\d+", "terminal", svg)


def check(app: BrowseApp, name: str) -> None:
    svg = normalise(app.export_screenshot(title="dokoro browse"))
    path = SNAPSHOTS / f"{name}.svg"
    if os.environ.get("DOKORO_UPDATE_SNAPSHOTS") == "1" or not path.exists():
        path.write_text(svg, encoding="utf-8")
        if os.environ.get("DOKORO_UPDATE_SNAPSHOTS") != "1":
            pytest.fail(f"{path.name} did not exist; written now: look at it, then commit it")
        return
    assert svg == path.read_text(encoding="utf-8"), (
        f"the {name} screen changed; if on purpose, refresh with DOKORO_UPDATE_SNAPSHOTS=1 and look at the result"
    )


def footer_ready(app) -> bool:
    """The footer of the screen under any modal has drawn its keys (it composes them late)."""
    screens = [s for s in app.screen_stack if not isinstance(s, (HelpScreen, ConfirmScreen))]
    return bool(screens[-1].query(FooterKey))


async def settle(pilot, condition) -> None:
    """Wait until ``condition()`` holds and the footer has drawn, on the app's own state and with no
    wall-clock budget (see ``until`` in test_browse.py); then let every animation end and the app
    handle what the last change queued (its layout and refresh), as Textual's own snapshot tests do."""
    hang = time.monotonic() + HANG_SECONDS
    while not (condition() and footer_ready(pilot.app)):
        await pilot.pause()
        if not (condition() and footer_ready(pilot.app)):
            assert time.monotonic() < hang, f"the app never reached the awaited state in {HANG_SECONDS} s: a hang"
            await pilot.pause(pilot.app.poll_seconds)
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


def items_ready(app) -> bool:
    return isinstance(app.screen, ItemsScreen) and app.screen.loaded.is_set()


def preview_ready(app) -> bool:
    return isinstance(app.screen, PreviewScreen) and app.screen.loaded.is_set()


async def test_the_categories_screen(sqlite_world):
    app = BrowseApp(sqlite_world, poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await settle(
            pilot,
            lambda: isinstance(app.screen, CategoriesScreen) and len(app.screen.summaries) == len(data.CATEGORIES),
        )
        check(app, "categories")


@pytest.mark.parametrize("category", ["daily", "plans", "claims", "memories", "tracking"])
async def test_an_items_screen(sqlite_world, category):
    app = BrowseApp(sqlite_world, category=category, poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, lambda: items_ready(app))
        if category in ("memories", "tracking"):  # equal timestamps: put them in a fixed order
            await pilot.press("o", "o")
        check(app, f"items-{category}")


async def test_the_proposals_screen_and_its_confirmation(sqlite_world):
    for topic, first, second in (
        ("staging", "The staging database runs PostgreSQL 16 on port 5433", "The staging database runs PostgreSQL 15"),
        ("ratelimit", "The API rate limit is 100 requests a minute", "The API rate limit is 1000 requests a minute"),
    ):
        sqlite_world.memories.remember(type="fact", title=f"{topic} before", body=first, entities=[topic])
        sqlite_world.memories.remember(type="fact", title=f"{topic} now", body=second, entities=[topic])
    app = BrowseApp(sqlite_world, category="proposals", poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, lambda: items_ready(app) and len(app.screen.shown) == 2)
        await pilot.press("o", "o")  # filed at the same moment: by name, a fixed order
        check(app, "items-proposals")
        await pilot.press("v")
        await settle(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        check(app, "confirm-proposal")
        await pilot.press("n")


async def test_stale_memories_at_80_columns(sqlite_world, clock):
    """A memory past its valid_until: flagged in Memories, why in its preview, and the renew confirm."""
    from datetime import timedelta

    from dokoro_store.clock import iso

    sqlite_world.memories.remember(
        type="fact",
        title="Deploys go through Jenkins",
        body="Deploys go through the Jenkins pipeline on build-01.",
        valid_until=iso(clock.now() + timedelta(days=1)),
    )
    clock.advance(timedelta(days=3))
    app = BrowseApp(sqlite_world, category="memories", poll_seconds=0.1)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, lambda: items_ready(app) and len(app.screen.shown) == 3)
        await pilot.press("o", "o")  # by name: a fixed order
        check(app, "items-memories-stale")
        await pilot.press("enter")
        await settle(pilot, lambda: preview_ready(app))
        check(app, "preview-memory-stale")
        await pilot.press("escape")
        await settle(pilot, lambda: items_ready(app) and app.screen.is_current)
        await pilot.press("n")
        await settle(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        check(app, "confirm-renew")
        await pilot.press("n")


async def test_a_markdown_preview(sqlite_world):
    app = BrowseApp(sqlite_world, category="current", poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, lambda: items_ready(app))
        await pilot.press("enter")
        await settle(pilot, lambda: preview_ready(app))
        check(app, "preview-current")


async def test_a_plan_card(sqlite_world):
    app = BrowseApp(sqlite_world, category="plans", poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, lambda: items_ready(app))
        await pilot.press("down", "enter")
        await settle(pilot, lambda: preview_ready(app))
        check(app, "preview-plan")


async def test_the_help_and_a_confirmation(sqlite_world):
    app = BrowseApp(sqlite_world, category="daily", poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, lambda: items_ready(app))
        await pilot.press("question_mark")
        await settle(pilot, lambda: isinstance(app.screen, HelpScreen))
        check(app, "help")
        await pilot.press("x", "down", "a")
        await settle(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        check(app, "confirm")


async def test_a_filtered_list(sqlite_world):
    app = BrowseApp(sqlite_world, category="plans", poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, lambda: items_ready(app))
        await pilot.press("slash", "s", "h", "i", "p")
        await settle(pilot, lambda: len(app.screen.shown) == 1)
        check(app, "filter")
