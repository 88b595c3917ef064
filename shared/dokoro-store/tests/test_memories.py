"""The memory service on both backends: gate ledger, verdicts, lifecycle, recall counting."""

from __future__ import annotations

import pytest
from dokoro_store import ConflictError, InvalidArgumentError, NotFoundError, Store


def _fact(store: Store, body: str, **extra):
    return store.memories.remember(type="fact", title=body[:40], body=body, entities=["auth/session.ts"], **extra)


def test_the_lifecycle_and_the_gate_work_on_every_backend(any_store: Store) -> None:
    first = _fact(any_store, "auth/session.ts keeps login sessions as stateless JWT tokens")
    second = _fact(any_store, "auth/session.ts keeps login sessions as signed session cookies now")
    assert [c.memory.id for c in second.conflicts] == [first.memory.id]

    judged = any_store.memories.verdict(second.memory.id, first.memory.id, "supersede", "alice")
    new, old = judged.new, judged.old
    assert (new.supersedes, old.state, old.superseded_by) == (first.memory.id, "archived", second.memory.id)
    with pytest.raises(ConflictError):
        any_store.memories.verdict(second.memory.id, first.memory.id, "keep_both")

    hits = any_store.memories.recall("login sessions")
    assert [h.memory.id for h in hits] == [second.memory.id]
    assert any_store.memories.get(second.memory.id).recall_count == 1

    row, done = any_store.memories.forget(second.memory.id, reason="sessions moved again")
    assert (done.action, row.state) == ("deprecated", "deprecated")
    assert any_store.memories.recall("login sessions") == []
    any_store.memories.forget(first.memory.id, purge=True, confirm=True)
    with pytest.raises(NotFoundError):
        any_store.memories.get(first.memory.id)


def test_recall_without_a_query_is_refused(any_store: Store) -> None:
    with pytest.raises(InvalidArgumentError, match="query must not be empty"):
        any_store.memories.recall("  ")
