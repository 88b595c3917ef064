"""Presence, shared notes, shared blocks and handoffs, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import pytest
from dokoro_store import ConflictError, FrozenClock, InvalidArgumentError, Store
from dokoro_store.models import AgentPresence
from sqlalchemy import update

# ---------------------------------------------------------------------------------------------- presence


def test_a_ping_inserts_then_overwrites_and_counts_heartbeats(any_store: Store):
    presence = any_store.coord.presence
    first = presence.ping("alice", session_id="s1", current_focus="auth refactor")
    second = presence.ping("alice", status="idle")

    assert (first.heartbeat_seq, first.status, first.current_focus) == (1, "active", "auth refactor")
    assert (second.heartbeat_seq, second.status, second.current_focus, second.session_id) == (2, "idle", None, None)
    assert second.last_heartbeat >= first.last_heartbeat


def test_the_list_shows_agents_within_the_ttl_most_recent_first(any_store: Store):
    presence = any_store.coord.presence
    presence.ping("old")
    presence.ping("new")
    with any_store.db.write() as session:
        session.execute(
            update(AgentPresence)
            .where(AgentPresence.agent_id == "old")
            .values(last_heartbeat=AgentPresence.last_heartbeat - 600)
        )

    assert [(p.agent_id, p.seconds_ago < 5) for p in presence.list()] == [("new", True), ("old", False)]
    assert [p.agent_id for p in presence.list(ttl_seconds=300)] == ["new"]
    with pytest.raises(InvalidArgumentError, match="ttl_seconds must be between 1 and 86400"):
        presence.list(0)
    with pytest.raises(InvalidArgumentError, match="status must be one of active, idle, away"):
        presence.ping("alice", status="busy")


# ---------------------------------------------------------------------------------------------- notes


def test_notes_are_read_newest_first_with_filters(any_store: Store, clock: FrozenClock):
    notes = any_store.coord.notes
    notes.append("alice", "cache is per process", note_type="decision")
    clock.advance(timedelta(minutes=1))
    notes.append("bob", "CI is red", note_type="blocker", metadata={"job": 7})
    clock.advance(timedelta(minutes=1))
    notes.append("alice", "trying redis")

    assert [n.content for n in notes.read()] == ["trying redis", "CI is red", "cache is per process"]
    assert [n.content for n in notes.read(agent_id="alice", note_type="decision")] == ["cache is per process"]
    assert [n.content for n in notes.read(since="2026-06-10T22:24:00Z")] == ["trying redis", "CI is red"]
    assert [n.content for n in notes.read(limit=1)] == ["trying redis"]
    assert notes.read(note_type="blocker")[0].metadata == {"job": 7}


def test_bad_notes_are_refused(any_store: Store):
    notes = any_store.coord.notes
    with pytest.raises(InvalidArgumentError, match="content must not be empty"):
        notes.append("alice", "   ")
    with pytest.raises(InvalidArgumentError, match="note_type must be one of scratch, decision, blocker, handoff"):
        notes.append("alice", "x", note_type="rumour")
    with pytest.raises(InvalidArgumentError, match="since:"):
        notes.read(since="yesterday")
    assert notes.read() == []


# ---------------------------------------------------------------------------------------------- blocks


def test_a_block_is_created_at_version_one_and_each_write_counts_up(any_store: Store):
    blocks = any_store.coord.blocks
    created = blocks.write("plan", "v1 text", "alice")
    updated = blocks.write("plan", "v2 text", "bob", expected_version=1)
    blind = blocks.write("plan", "v3 text", "carol")  # no expected_version: last writer wins

    assert (created.created, created.block.version) == (True, 1)
    assert (updated.created, updated.block.version, updated.block.updated_by) == (False, 2, "bob")
    assert blind.block.version == 3
    block = blocks.read("plan")
    assert (block.content, block.version, block.updated_by) == ("v3 text", 3, "carol")
    assert blocks.read("missing") is None


def test_a_stale_expected_version_is_a_conflict_and_changes_nothing(any_store: Store):
    blocks = any_store.coord.blocks
    blocks.write("plan", "v1", "alice")
    blocks.write("plan", "v2", "alice", expected_version=1)

    with pytest.raises(ConflictError, match=r"conflict: block 'plan' is at version 2, not 1 — re-read and retry"):
        blocks.write("plan", "lost edit", "bob", expected_version=1)
    with pytest.raises(ConflictError, match=r"conflict: block 'new' does not exist \(expected_version=3\)"):
        blocks.write("new", "x", "bob", expected_version=3)
    assert blocks.read("plan").content == "v2"
    assert blocks.read("new") is None
    assert blocks.write("new", "x", "bob", expected_version=0).block.version == 1


def test_blocks_are_listed_most_recently_updated_first(any_store: Store, clock: FrozenClock):
    blocks = any_store.coord.blocks
    blocks.write("a", "1", "alice")
    clock.advance(timedelta(seconds=5))
    blocks.write("b", "1", "alice")
    clock.advance(timedelta(seconds=5))
    blocks.write("a", "2", "bob")

    assert [(b.block_key, b.version) for b in blocks.list()] == [("a", 2), ("b", 1)]


# ---------------------------------------------------------------------------------------------- handoffs


def test_the_inbox_shows_open_handoffs_for_an_agent_or_anyone(any_store: Store, clock: FrozenClock):
    handoffs = any_store.coord.handoffs
    anyone = handoffs.write("alice", "finish the migration", open_items=["run it", "  ", "check rows"])
    clock.advance(timedelta(seconds=1))
    for_bob = handoffs.write("alice", "review PR 12", to_agent="bob")
    clock.advance(timedelta(seconds=1))
    handoffs.write("alice", "for carol", to_agent="carol")

    assert anyone.open_items == ["run it", "check rows"]
    assert [h.id for h in handoffs.inbox("bob")] == [for_bob.id, anyone.id]
    assert len(handoffs.inbox()) == 3
    assert len(handoffs.inbox(limit=1)) == 1


def test_a_handoff_is_claimed_once(any_store: Store):
    handoffs = any_store.coord.handoffs
    handoff = handoffs.write("alice", "finish it")

    taken = handoffs.claim(handoff.id, "bob")

    assert (taken.status, taken.claimed_by) == ("claimed", "bob")
    assert taken.claimed_at is not None
    with pytest.raises(ConflictError, match=f"handoff #{handoff.id} is not open"):
        handoffs.claim(handoff.id, "carol")
    with pytest.raises(ConflictError, match="handoff #999 is not open"):
        handoffs.claim(999, "carol")
    assert handoffs.inbox() == []
