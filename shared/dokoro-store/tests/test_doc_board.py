"""The documents as a work board: list, get, update, tags and timers, on both backends."""

from __future__ import annotations

from datetime import timedelta

import pytest
from dokoro_store import ConflictError, InvalidArgumentError, NotFoundError


def _docs(store):
    store.docs.save("login", "Fix the login race", title="Login race", status="active", priority="high")
    store.docs.save("cache", "Cache layer", title="Cache", status="active", priority="low")
    store.docs.save("notes", "loose notes", title="Notes", status="inbox", metadata={"tags": ["misc"]})


def test_listing_filters_by_status_puts_slotted_work_first_and_leaves_memories_out(any_store):
    _docs(any_store)
    any_store.board.update("cache", slot=1)
    any_store.memories.remember(type="fact", title="The API uses JWT", body="JWT everywhere")

    active = any_store.board.docs("active")

    assert [c.id for c in active] == ["cache", "login"]
    assert active[0].slot == 1
    assert [c.id for c in any_store.board.docs(None, limit=10)] == ["cache", "login", "notes"]
    assert [c.doc_type for c in any_store.board.docs(None, doc_type="memory")] == ["memory"]
    with pytest.raises(InvalidArgumentError, match="limit"):
        any_store.board.docs("active", limit=0)


def test_update_sets_fields_and_done_stamps_completion(any_store, clock):
    _docs(any_store)
    clock.advance(timedelta(minutes=5))

    card = any_store.board.update("login", status="DONE", priority="urgent", stage="review", slot=2, estimate_min=90)

    assert (card.status, card.priority, card.prd_stage, card.slot, card.estimate_min) == (
        "done",
        "urgent",
        "review",
        2,
        90,
    )
    assert card.completed_at == clock.now()
    assert any_store.board.update("login", status="active").completed_at is None
    with pytest.raises(InvalidArgumentError, match="status must be one of"):
        any_store.board.update("login", status="finished-ish")
    with pytest.raises(InvalidArgumentError, match="nothing to update"):
        any_store.board.update("login")
    with pytest.raises(NotFoundError, match="dokoro list"):
        any_store.board.update("nope", status="done")


def test_tags_are_counted_lower_cased_and_survive_a_reimport_of_the_file(any_store):
    _docs(any_store)
    any_store.board.tag("login", "  Auth ")
    any_store.board.tag("notes", "auth")
    any_store.board.tag("notes", "auth")  # twice: once

    counts = {t.name: t.count for t in any_store.board.tags()}
    assert counts == {"auth": 2, "misc": 1}
    assert [t.name for t in any_store.board.tags("notes")] == ["misc", "auth"]
    # The file is imported again with its own tags: the person's tag stays.
    any_store.docs.save("notes", "loose notes v2", metadata={"tags": ["misc", "draft"]})
    assert any_store.board.get("notes").tags == ["misc", "draft", "auth"]
    assert any_store.board.untag("notes", "auth").tags == ["misc", "draft"]
    with pytest.raises(NotFoundError, match="no tag"):
        any_store.board.untag("notes", "auth")
    with pytest.raises(InvalidArgumentError, match="one word"):
        any_store.board.tag("notes", "two words")


def test_timers_add_rounded_minutes_to_the_actual_time(any_store, clock):
    _docs(any_store)
    any_store.board.start_timer("login", slot=3)
    with pytest.raises(ConflictError, match="dokoro time stop login"):
        any_store.board.start_timer("login")
    clock.advance(timedelta(minutes=12, seconds=31))
    assert [t.doc_id for t in any_store.board.timers()] == ["login"]

    first = any_store.board.stop_timer(notes="first pass")
    any_store.board.start_timer("login")
    clock.advance(timedelta(minutes=20))
    any_store.board.stop_timer("login")

    assert (first.duration_min, first.notes, first.status) == (13, "first pass", "completed")
    detail = any_store.board.get("login")
    assert detail.actual_min == 33
    assert detail.slot == 3
    assert [e.duration_min for e in detail.time_entries] == [13, 20]
    assert any_store.board.timers() == []
    with pytest.raises(NotFoundError, match="no timer is running"):
        any_store.board.stop_timer()


def test_stopping_without_an_id_when_two_timers_run_names_them(any_store):
    _docs(any_store)
    any_store.board.start_timer("login")
    any_store.board.start_timer("cache")

    with pytest.raises(InvalidArgumentError, match="2 timers run"):
        any_store.board.stop_timer()
