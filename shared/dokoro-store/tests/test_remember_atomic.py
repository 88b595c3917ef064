"""remember is all or nothing from the agent's view, and a retry never stores a duplicate."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from dokoro_store import FrozenClock, Store
from dokoro_store.errors import EmbedderMismatchError
from dokoro_store.models import Doc
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.retrieval import RetrievalConfig
from sqlalchemy import func, select
from sqlmodel import col


def _counts(store: Store) -> tuple[int, int]:
    with store.db.read() as session:
        memories = session.exec(select(func.count()).select_from(MemoryRow)).one()
        docs = session.exec(select(func.count()).select_from(Doc).where(col(Doc.doc_type) == "memory")).one()
    return int(memories[0]), int(docs[0])


def _open(root: Path, clock: FrozenClock, database_url: str | None, embedder: str) -> Store:
    config = RetrievalConfig(embedder=embedder, vector_engine="exact")  # type: ignore[arg-type]
    return Store.open(root, database_url=database_url, clock=clock, retrieval=config)


def test_an_embedder_mismatch_stores_nothing_and_says_why(
    root: Path, clock: FrozenClock, database_url: str | None
) -> None:
    with _open(root, clock, database_url, "hashing") as store:
        store.memories.remember(type="fact", title="Deploys", body="Deploys run on Fridays.")
    with _open(root, clock, database_url, "static") as store:
        with pytest.raises(EmbedderMismatchError, match=r"reembed.*Nothing was stored"):
            store.memories.remember(type="fact", title="Backups", body="Backups run nightly.")
        assert _counts(store) == (1, 1)


def test_a_stamp_changed_between_the_check_and_the_write_stores_nothing(
    root: Path, clock: FrozenClock, database_url: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The memory, its document and its index are one transaction: when another process
    re-stamped the index between the check and the write (a real race, made certain here by
    skipping the check), the write is refused whole and the error says nothing was stored."""
    with _open(root, clock, database_url, "hashing") as store:
        store.memories.remember(type="fact", title="Deploys", body="Deploys run on Fridays.")
    with _open(root, clock, database_url, "static") as store:
        monkeypatch.setattr(store.docs, "check_search_stamp", lambda embedder, stored=False: embedder)
        with pytest.raises(EmbedderMismatchError, match=r"reembed.*Nothing was stored"):
            store.memories.remember(type="fact", title="Backups", body="Backups run nightly to the NAS.")
        assert _counts(store) == (1, 1)
        assert not store.search.universal("backups nightly", mode="keyword").results
    with _open(root, clock, database_url, "hashing") as store:
        done = store.memories.remember(type="fact", title="Backups", body="Backups run nightly to the NAS.")
        assert done.indexed and not done.retried and store.docs.is_indexed(f"memory:{done.memory.id}")
        assert _counts(store) == (2, 2)


def test_an_identical_retry_returns_the_stored_memory(store: Store, clock: FrozenClock) -> None:
    first = store.memories.remember(type="lesson", title="Flaky test", body="The login test flakes.", agent_id="a1")
    clock.advance(timedelta(seconds=30))
    again = store.memories.remember(type="lesson", title="Flaky test", body="The login test flakes.", agent_id="a1")

    assert again.retried and again.memory.id == first.memory.id and again.indexed
    assert _counts(store) == (1, 1)

    other_agent = store.memories.remember(
        type="lesson", title="Flaky test", body="The login test flakes.", agent_id="a2"
    )
    other_body = store.memories.remember(
        type="lesson", title="Flaky test", body="The login test flakes twice.", agent_id="a1"
    )
    clock.advance(timedelta(minutes=11))
    later = store.memories.remember(type="lesson", title="Flaky test", body="The login test flakes.", agent_id="a1")
    assert not (other_agent.retried or other_body.retried or later.retried)
    assert len({first.memory.id, other_agent.memory.id, other_body.memory.id, later.memory.id}) == 4


def test_a_retry_is_recognised_on_every_backend(any_store: Store) -> None:
    first = any_store.memories.remember(type="fact", title="Port", body="The API listens on 8080.")
    again = any_store.memories.remember(type="fact", title="Port", body="The API listens on 8080.")
    assert again.retried and again.memory.id == first.memory.id
    assert _counts(any_store) == (1, 1)


def test_the_retry_check_finds_its_twin_by_title_not_by_reading_the_recent_memories(
    any_store: Store, database_url: str | None
) -> None:
    # Right after a bulk import every memory was written within the retry window: the check must
    # still look up the title, not read them all (it went through the index on updated_at).
    from dokoro_store.semantic.memories.service import MemoryDraft, _twin_query

    any_store.memories.remember_many(
        [MemoryDraft(type="fact", title=f"Imported {i}", body=f"Imported fact {i}.") for i in range(300)]
    )
    imported = any_store.memories.remember(type="fact", title="Imported 7", body="Imported fact 7.")
    assert imported.retried and imported.memory.title == "Imported 7"  # the same as an import moments ago
    first = any_store.memories.remember(type="fact", title="Imported 7", body="Imported fact 7, again.")
    again = any_store.memories.remember(type="fact", title="Imported 7", body="Imported fact 7, again.")
    assert not first.retried and again.retried and again.memory.id == first.memory.id
    mine = any_store.memories.remember(type="fact", title="Imported 7", body="Imported fact 7.", agent_id="a1")
    assert not mine.retried and mine.memory.id not in {first.memory.id, imported.memory.id}
    if database_url is not None:
        return  # PostgreSQL plans by its statistics; the index is the same
    with any_store.db.read() as session:
        compiled = _twin_query(False).compile(any_store.db.engine)
        plan = " ".join(
            str(row[-1])
            for row in session.connection().exec_driver_sql(
                f"EXPLAIN QUERY PLAN {compiled}", tuple(compiled.params[n] for n in compiled.positiontup or ())
            )
        )
    assert "ix_memories_title" in plan and "ix_memories_updated" not in plan, plan
