"""Presence, shared notes, shared blocks and handoffs through an MCP client, on both backends."""

from __future__ import annotations

from datetime import timedelta

import anyio
import pytest
from dokoro_store.models import AgentPresence
from sqlalchemy import update

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.parametrize("store_url", ["sqlite", "postgresql"], indirect=True),
]


@pytest.fixture
def agent(make_client):
    def connect(agent_id: str):
        return make_client(agent_id=agent_id, auto_feedback=False)

    return connect


def _text(outcome) -> str:
    return outcome.content[0].text


# ---------------------------------------------------------------------------------------------- presence


async def test_presence_ping_and_list(call, store):
    assert _text(await call("dokoro_presence_list")) == "(no agents active)"
    first = await call("dokoro_presence_ping", agent_id="alice", current_focus="auth", session_id="s1")
    await call("dokoro_presence_ping", agent_id="alice", current_focus="auth tests")
    await call("dokoro_presence_ping", agent_id="bob", status="idle")
    with store.db.write() as session:
        session.execute(
            update(AgentPresence)
            .where(AgentPresence.agent_id == "bob")
            .values(last_heartbeat=AgentPresence.last_heartbeat - 120)
        )

    listed = await call("dokoro_presence_list")
    recent = await call("dokoro_presence_list", ttl_seconds=60)

    assert _text(first) == "presence updated for alice"
    assert first.structured_content["heartbeat_seq"] == 1
    lines = _text(listed).splitlines()
    assert lines[0].startswith("alice [active] — auth tests (last seen ")
    assert lines[1].startswith("bob [idle] — no focus set (last seen 12")
    assert [a["agent_id"] for a in listed.structured_content["agents"]] == ["alice", "bob"]
    assert listed.structured_content["agents"][0]["heartbeat_seq"] == 2
    assert [a["agent_id"] for a in recent.structured_content["agents"]] == ["alice"]


async def test_presence_refuses_bad_arguments(fail):
    assert "status" in await fail("dokoro_presence_ping", agent_id="a", status="busy")
    assert "ttl_seconds" in await fail("dokoro_presence_list", ttl_seconds=86401)


async def test_a_ping_without_agent_id_is_the_servers_agent(agent):
    async with agent("claude-x") as client:
        outcome = await client.call_tool("dokoro_presence_ping", {})
    assert _text(outcome) == "presence updated for claude-x"


# ---------------------------------------------------------------------------------------------- notes


async def test_notes_append_and_read_newest_first(call, clock):
    assert _text(await call("dokoro_shared_note_read")) == "(no shared notes)"
    appended = await call("dokoro_shared_note_append", agent_id="alice", content="cache is per process")
    clock.advance(timedelta(minutes=1))
    await call("dokoro_shared_note_append", agent_id="bob", content="CI red", note_type="blocker")

    everything = await call("dokoro_shared_note_read")
    blockers = await call("dokoro_shared_note_read", note_type="blocker")
    since = await call("dokoro_shared_note_read", since="2026-06-10T22:24:00Z")

    assert _text(appended) == "note appended by alice"
    assert _text(everything).splitlines() == [
        "[2026-06-10T22:24:15Z] [blocker] agent=bob: CI red",
        "[2026-06-10T22:23:15Z] [scratch] agent=alice: cache is per process",
    ]
    assert [n["content"] for n in blockers.structured_content["notes"]] == ["CI red"]
    assert [n["content"] for n in since.structured_content["notes"]] == ["CI red"]


async def test_notes_refuse_bad_arguments(fail):
    assert "note_type" in await fail("dokoro_shared_note_append", agent_id="a", content="x", note_type="gossip")
    assert "content" in await fail("dokoro_shared_note_append", agent_id="a", content="")
    assert "since" in await fail("dokoro_shared_note_read", since="soon")
    assert "limit" in await fail("dokoro_shared_note_read", limit=201)


# ---------------------------------------------------------------------------------------------- blocks


async def test_blocks_are_written_with_compare_and_set(call, fail, clock):
    assert _text(await call("dokoro_block_list")) == "(no shared blocks)"
    assert _text(await call("dokoro_block_read", block_key="plan")) == "(no block 'plan')"

    created = await call("dokoro_block_write", block_key="plan", content="step 1", agent_id="alice")
    clock.advance(timedelta(seconds=30))
    updated = await call("dokoro_block_write", block_key="plan", content="step 2", agent_id="bob", expected_version=1)
    stale = await fail("dokoro_block_write", block_key="plan", content="lost", agent_id="carol", expected_version=1)
    missing = await fail("dokoro_block_write", block_key="new", content="x", agent_id="carol", expected_version=2)
    read = await call("dokoro_block_read", block_key="plan")
    listed = await call("dokoro_block_list")

    assert _text(created) == "block 'plan' created at version 1 by alice"
    assert _text(updated) == "block 'plan' updated to version 2 by bob"
    assert "conflict: block 'plan' is at version 2, not 1 — re-read and retry" in stale
    assert "conflict: block 'new' does not exist (expected_version=2)" in missing
    assert _text(read) == "block 'plan' — version 2 (by bob @ 2026-06-10T22:23:45Z)\n\nstep 2"
    assert read.structured_content["block"]["version"] == 2
    assert _text(listed) == "plan  v2  by bob  @ 2026-06-10T22:23:45Z"


async def test_concurrent_compare_and_set_writes_let_exactly_one_through(agent, call):
    await call("dokoro_block_write", block_key="k", content="v1", agent_id="seed")
    outcomes: list[bool] = []

    async def writer(name: str) -> None:
        async with agent(name) as client:
            result = await client.call_tool(
                "dokoro_block_write", {"block_key": "k", "content": name, "expected_version": 1}
            )
            outcomes.append(not result.is_error)

    async with anyio.create_task_group() as group:
        for number in range(5):
            group.start_soon(writer, f"w{number}")

    assert sorted(outcomes) == [False, False, False, False, True]
    assert (await call("dokoro_block_read", block_key="k")).structured_content["block"]["version"] == 2


# ---------------------------------------------------------------------------------------------- handoffs


async def test_handoffs_are_written_listed_and_claimed_once(call, fail, clock):
    assert _text(await call("dokoro_handoff_inbox")) == "(no open handoffs)"
    first = await call(
        "dokoro_handoff_write", from_agent="alice", summary="finish migration", open_items=["run", "check"]
    )
    clock.advance(timedelta(seconds=1))
    await call("dokoro_handoff_write", from_agent="alice", summary="review PR", to_agent="bob")
    clock.advance(timedelta(seconds=1))
    await call("dokoro_handoff_write", from_agent="alice", summary="carol only", to_agent="carol")

    bobs = await call("dokoro_handoff_inbox", agent_id="bob")
    handoff_id = first.structured_content["id"]
    claimed = await call("dokoro_handoff_claim", handoff_id=handoff_id, agent_id="bob")
    again = await fail("dokoro_handoff_claim", handoff_id=handoff_id, agent_id="carol")

    assert _text(first) == f"handoff #{handoff_id} recorded by alice"
    assert _text(bobs).splitlines() == [
        f"#{handoff_id + 1} [2026-06-10T22:23:16Z] from alice -> bob: review PR",
        f"#{handoff_id} [2026-06-10T22:23:15Z] from alice: finish migration | open: run; check",
    ]
    assert _text(claimed) == f"handoff #{handoff_id} claimed by bob"
    assert claimed.structured_content["status"] == "claimed"
    assert f"handoff #{handoff_id} is not open (already claimed or missing)" in again
    assert len((await call("dokoro_handoff_inbox")).structured_content["handoffs"]) == 2
    assert "handoff_id" in await fail("dokoro_handoff_claim", handoff_id=0, agent_id="bob")


async def test_concurrent_handoff_claims_have_exactly_one_winner(agent, call):
    handoff_id = (await call("dokoro_handoff_write", from_agent="alice", summary="x")).structured_content["id"]
    winners: list[str] = []

    async def taker(name: str) -> None:
        async with agent(name) as client:
            result = await client.call_tool("dokoro_handoff_claim", {"handoff_id": handoff_id})
            if not result.is_error:
                winners.append(name)

    async with anyio.create_task_group() as group:
        for number in range(5):
            group.start_soon(taker, f"t{number}")

    assert len(winners) == 1


async def test_an_authenticated_agent_cannot_write_as_another(call, fail, monkeypatch):
    from dokoro_server import identity

    monkeypatch.setattr(identity, "authenticated_agent", lambda: "bob")

    for tool, arguments in [
        ("dokoro_presence_ping", {"agent_id": "alice"}),
        ("dokoro_shared_note_append", {"agent_id": "alice", "content": "x"}),
        ("dokoro_block_write", {"agent_id": "alice", "block_key": "k", "content": "x"}),
        ("dokoro_handoff_write", {"from_agent": "alice", "summary": "x"}),
        ("dokoro_handoff_claim", {"agent_id": "alice", "handoff_id": 1}),
    ]:
        assert "cannot act as 'alice'" in await fail(tool, **arguments), tool
    assert _text(await call("dokoro_shared_note_append", content="mine")) == "note appended by bob"
