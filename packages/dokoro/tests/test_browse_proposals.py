"""The Proposals category of ``dokoro browse`` through Textual's Pilot, on SQLite and PostgreSQL:
the open proposals with their evidence, ``v`` approves and ``x`` rejects after a y/n, and the
ledger and the memories say what was decided."""

from __future__ import annotations

import pytest
from dokoro.browse.app import BrowseApp
from dokoro.browse.screens import PreviewScreen
from dokoro_store import Store
from dokoro_testkit.pilot import ask, open_category, select, until

pytestmark = pytest.mark.anyio

SIZE = (100, 30)


async def confirm(pilot, app, key: str, answer: str) -> str:
    prompt = await ask(pilot, app, key)
    await pilot.press(answer)
    return prompt


def remember_pairs(store: Store) -> dict[str, tuple[str, str]]:
    """Two pairs of near-duplicates the conflict gate shows: two merge proposals."""
    texts = {
        "staging": (
            "The staging database runs PostgreSQL 16 on port 5433",
            "The staging database runs PostgreSQL 15 on port 5432",
        ),
        "ratelimit": (
            "The API rate limit is 100 requests per minute per user",
            "The API rate limit is 1000 requests per minute per user",
        ),
    }
    pairs = {}
    for topic, (first, second) in texts.items():
        old = store.memories.remember(type="fact", title=f"{topic} before", body=first, entities=[topic]).memory
        new = store.memories.remember(type="fact", title=f"{topic} now", body=second, entities=[topic])
        assert [c.memory.id for c in new.conflicts] == [old.id]
        pairs[topic] = (old.id, new.memory.id)
    return pairs


async def test_proposals_are_approved_and_rejected_with_v_and_x_after_a_confirm(world):
    pairs = remember_pairs(world)
    app = BrowseApp(world, category="proposals", poll_seconds=0.1)

    def status_of(topic: str) -> str | None:
        return next((i.status for i in app.screen.shown if i.label.startswith(f"“{topic} before”")), None)

    def label_of(topic: str) -> str:
        return next(i.label for i in app.screen.shown if i.label.startswith(f"“{topic} before”"))

    async with app.run_test(size=SIZE) as pilot:
        screen = await open_category(pilot, app, "proposals")
        assert [i.status for i in screen.shown] == ["proposed", "proposed"]
        assert "v approve · x reject" in str(screen.query_one("#status").render())

        # The preview is the evidence.
        await select(pilot, app, label_of("staging"))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, PreviewScreen) and app.screen.loaded.is_set())
        shown = "\n".join(line.plain for line in app.screen.lines)
        old_id, new_id = pairs["staging"]
        assert old_id in shown and new_id in shown and "similarity" in shown and "supersede" in shown
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen)

        # n cancels, y approves: the older memory is archived behind the newer.
        await select(pilot, app, label_of("staging"))
        prompt = await confirm(pilot, app, "v", "n")
        assert prompt.startswith("Approve proposal “staging before” into “staging now”")
        assert prompt.endswith(": apply its change? y/n")
        await until(pilot, lambda: app.messages[-1] == "cancelled")
        assert status_of("staging") == "proposed"
        await confirm(pilot, app, "v", "y")
        await until(pilot, lambda: status_of("staging") == "approved")
        assert app.messages[-1] == f"approved: {old_id} superseded by {new_id}"

        await select(pilot, app, label_of("ratelimit"))
        assert "(nothing changes)" in await confirm(pilot, app, "x", "y")
        await until(pilot, lambda: status_of("ratelimit") == "rejected")
        await select(pilot, app, label_of("ratelimit"))
        await pilot.press("v")
        assert app.messages[-1] == "this proposal is rejected already"

    assert world.memories.get(old_id).state == "archived"
    assert world.memories.get(old_id).superseded_by == new_id
    assert {world.memories.get(i).state for i in (new_id, *pairs["ratelimit"])} == {"active"}
    decided = {p.kind + ":" + p.status for p in world.proposals.listing("all", scan=False).proposals}
    assert decided == {"merge:approved", "merge:rejected"}
    rejected = world.proposals.listing("rejected", scan=False).proposals[0]
    assert rejected.outcome == "rejected: rejected in dokoro browse"
