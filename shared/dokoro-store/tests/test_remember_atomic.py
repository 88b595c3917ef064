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
