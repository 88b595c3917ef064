"""Stale memories in ``dokoro browse`` through Textual's Pilot, on SQLite and PostgreSQL: a memory
past its valid_until is flagged ``⚠ stale`` in Memories and listed in Stale memories, its preview
says why, ``n`` renews it after a y/n (its date pushed on, checked in the store) and ``f`` retires it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from dokoro.browse.actions import FORGET_REASON
from dokoro.browse.app import BrowseApp
from dokoro.browse.memories import RENEW_DAYS
from dokoro.browse.screens import ItemsScreen, PreviewScreen
from dokoro_store.clock import iso
from dokoro_testkit.pilot import ask, open_category, select, until

pytestmark = pytest.mark.anyio

SIZE = (80, 30)


async def confirm(pilot, app, key: str, answer: str) -> str:
    prompt = await ask(pilot, app, key)
    await pilot.press(answer)
    return prompt


TITLE = "Deploys go through Jenkins"
OTHER = "Staging runs on port 5433"


def stale_world(store, clock):
    """Two memories past their valid_until (three days ago), beside the world's current ones."""
    ids = []
    for title, body in ((TITLE, "Deploys go through the Jenkins pipeline on build-01."), (OTHER, "Port 5433.")):
        memory = store.memories.remember(
            type="fact", title=title, body=body, valid_until=iso(clock.now() + timedelta(days=1))
        ).memory
        ids.append(memory.id)
    clock.advance(timedelta(days=3))
    return ids


def row(app, label: str):
    return next((i for i in app.screen.shown if i.label == label), None)


async def test_a_stale_memory_is_flagged_explained_renewed_and_retired(world, clock):
    stale_id, other_id = stale_world(world, clock)
    expired = (clock.now() - timedelta(days=2)).date().isoformat()
    app = BrowseApp(world, category="memories", poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_category(pilot, app, "memories")
        flagged = row(app, TITLE)
        assert flagged is not None and flagged.flag == f"⚠ stale: expired {expired}"
        assert flagged.sublabel == "fact · active"
        assert row(app, "The API uses JWT").flag == ""  # a current memory has no flag
        assert "n renew" in str(screen.query_one("#status").render())

        # The preview says it is stale and why, and what to do.
        await select(pilot, app, TITLE)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, PreviewScreen) and app.screen.loaded.is_set())
        shown = "\n".join(line.plain for line in app.screen.lines)
        assert f"⚠ stale: past valid_until {iso(clock.now() - timedelta(days=2))}" in shown
        assert "n renews it" in shown and "f retires it" in shown
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen)

        # n asks first (n cancels), then y renews: the date is pushed on and the flag goes.
        await select(pilot, app, TITLE)
        later = iso(clock.now() + timedelta(days=RENEW_DAYS))
        prompt = await confirm(pilot, app, "n", "n")
        assert prompt == f'Renew memory "{TITLE}": valid_until → {later[:10]}? y/n'
        await until(pilot, lambda: app.messages[-1] == "cancelled")
        assert world.memories.get(stale_id).valid_until < clock.now()
        await confirm(pilot, app, "n", "y")
        await until(pilot, lambda: (found := row(app, TITLE)) is not None and found.flag == "")
        assert app.messages[-1] == f"renewed: {TITLE} (valid_until {later[:10]})"
        await select(pilot, app, TITLE)
        await pilot.press("n")
        assert app.messages[-1] == "not stale: nothing to renew"

    assert iso(world.memories.get(stale_id).valid_until) == later
    assert [e.memory.id for e in world.upkeep.review().stale] == [other_id]

    # Stale memories lists what is left; f retires it (the forget action, after a y/n).
    app = BrowseApp(world, category="stale", poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await open_category(pilot, app, "stale")
        assert [i.label for i in app.screen.shown] == [OTHER]
        assert app.screen.shown[0].flag == f"⚠ stale: expired {expired}"
        await select(pilot, app, OTHER)
        assert "(deprecate it)" in await confirm(pilot, app, "f", "y")
        await until(pilot, lambda: isinstance(app.screen, ItemsScreen) and not app.screen.shown)

    retired = world.memories.get(other_id)
    assert (retired.state, retired.state_reason) == ("deprecated", FORGET_REASON)
    assert world.upkeep.review().stale == []
