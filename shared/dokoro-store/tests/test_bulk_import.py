"""A bulk import (``remember_many``: backups, other memory systems, benchmarks) keeps everything.

Every imported memory has its row, its entity rows, its document, one chunk with a vector that a
nearest-neighbour search finds, its full-text entry and its entity-graph links — on SQLite and on
PostgreSQL, whose import writes chunks and vectors with ``COPY`` and the graph of a batch of
documents in one transaction.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from dokoro_store import Store
from dokoro_store.models import DocEntity, Entity
from dokoro_store.models.index import chunks
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.models.memories import MemoryEntity
from dokoro_store.retrieval import RetrievalConfig
from dokoro_store.semantic.memories.rows import DOC_PREFIX
from dokoro_store.semantic.memories.service import MemoryDraft
from sqlalchemy import func, select

N = 300  # more than four indexing batches


def _word(i: int) -> str:
    """A made-up word of its own per memory (no stemmer folds two of them together)."""
    letters = "bcdfghjklmnpqrstvwxz"
    return "zq" + "".join(letters[int(d)] for d in f"{i:04d}") + "vo"


@pytest.fixture
def store(tmp_path: Path, clock, database_url: str | None) -> Iterator[Store]:
    with Store.open(
        tmp_path / "dokoro", database_url=database_url, clock=clock, retrieval=RetrievalConfig(embedder="hashing")
    ) as opened:
        yield opened


def _drafts() -> list[MemoryDraft]:
    return [
        MemoryDraft(
            type="fact",
            title=f"Module {i} notes",
            body=f"The {_word(i)} setting of src/mod{i}.ts uses redis; see #topic{i % 7}.",
            entities=[f"service-{i}", f"team-{i % 5}"],
        )
        for i in range(N)
    ]


def test_a_bulk_import_keeps_every_memory_its_entities_vectors_full_text_and_graph(store: Store) -> None:
    imported = store.memories.remember_many(_drafts())
    assert len(imported) == N
    ids = [m.id for m in imported]
    doc_ids = [f"{DOC_PREFIX}{i}" for i in ids]

    with store.db.read() as session:
        assert session.execute(select(func.count()).select_from(MemoryRow)).scalar() == N
        pairs = {(r.memory_id, r.entity) for r in session.execute(select(MemoryEntity)).scalars()}
        assert pairs == {(m.id, e) for i, m in enumerate(imported) for e in (f"service-{i}", f"team-{i % 5}")}
        stamped = session.execute(
            select(chunks.c.doc_id, chunks.c.embedder, chunks.c.header_context).where(chunks.c.doc_id.in_(doc_ids))
        ).all()
        linked = {str(r.doc_id) for r in session.execute(select(DocEntity)).scalars()}
        files = {str(e.canonical_name) for e in session.execute(select(Entity).where(Entity.type == "file")).scalars()}
    assert sorted(str(r[0]) for r in stamped) == sorted(doc_ids)  # one chunk each
    assert {r[1] for r in stamped} == {store.embedder.get().id}  # every chunk has its vector
    assert store.docs.vector_index().count() == N
    assert linked == set(doc_ids)
    assert {f"src/mod{i}.ts" for i in range(N)} <= files

    for i in range(0, N, 37):
        words = store.search.universal(_word(i), limit=3, mode="keyword").results
        assert [h.doc_id for h in words][:1] == [doc_ids[i]], i
        vector = store.embedder.get().embed([f"Module {i} notes\n\n{imported[i].body}"])[0]
        nearest = store.docs.vector_index().search(vector, store.embedder.get().id, 3)
        assert doc_ids[i] in [h.doc_id for h in nearest], i


def test_a_second_import_of_the_same_documents_replaces_their_chunks_and_links(store: Store) -> None:
    first = store.memories.remember_many(_drafts()[:80])
    # Re-indexing the same documents (a reindex after an import) keeps one chunk and one vector each.
    report = store.docs.index_docs([f"{DOC_PREFIX}{m.id}" for m in first], force=True)

    assert report.indexed == 80
    with store.db.read() as session:
        per_doc = session.execute(
            select(chunks.c.doc_id, func.count()).group_by(chunks.c.doc_id).having(func.count() > 1)
        ).all()
        links = session.execute(select(func.count()).select_from(DocEntity)).scalar()
    assert per_doc == []
    assert store.docs.vector_index().count() == 80
    assert links and links >= 80


def _hnsw_present(store: Store) -> bool:
    from sqlalchemy import text

    with store.db.read() as session:
        return bool(session.execute(text("SELECT 1 FROM pg_indexes WHERE indexname = 'ix_chunks_v512_hnsw'")).scalar())


def test_a_large_import_on_postgresql_builds_the_hnsw_index_after_its_rows(
    tmp_path: Path, clock, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dokoro_store.index.vectors import pgvector

    monkeypatch.setattr(pgvector, "BULK_DROP_MIN", 100)  # "large" at test size
    dropped_during: list[bool] = []
    with Store.open(
        tmp_path / "dokoro", database_url=postgres_url, clock=clock, retrieval=RetrievalConfig(embedder="hashing")
    ) as store:
        store.docs.on_indexed(lambda docs: dropped_during.append(not _hnsw_present(store)), batch=True)
        imported = store.memories.remember_many(_drafts()[:150])

        assert dropped_during and all(dropped_during)  # no index maintained while the rows went in
        assert _hnsw_present(store)
        assert "HNSW index on vector(512)" in store.search.status().vector_engine_label
        vector = store.embedder.get().embed([f"Module 3 notes\n\n{imported[3].body}"])[0]
        nearest = store.docs.vector_index().search(vector, store.embedder.get().id, 3)
        assert f"{DOC_PREFIX}{imported[3].id}" in [h.doc_id for h in nearest]

        # An import smaller than what the store holds keeps the index (inserts are cheaper).
        monkeypatch.setattr(pgvector, "BULK_DROP_SHARE", 1)
        dropped_during.clear()
        store.memories.remember_many(_drafts()[150:260])
        assert dropped_during and not any(dropped_during)


def test_an_import_that_fails_midway_on_postgresql_still_gets_its_hnsw_index_back(
    tmp_path: Path, clock, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dokoro_store.index.vectors import pgvector

    monkeypatch.setattr(pgvector, "BULK_DROP_MIN", 100)
    with Store.open(
        tmp_path / "dokoro", database_url=postgres_url, clock=clock, retrieval=RetrievalConfig(embedder="hashing")
    ) as store:
        write = store.docs._indexer.write
        calls: list[int] = []

        def failing(*args, **kwargs):  # the third batch's write fails (a lost connection, say)
            calls.append(1)
            if len(calls) == 3:
                raise RuntimeError("connection lost")
            return write(*args, **kwargs)

        monkeypatch.setattr(store.docs._indexer, "write", failing)
        with pytest.raises(RuntimeError, match="connection lost"):
            store.memories.remember_many(_drafts()[:300])
        assert _hnsw_present(store)


def test_a_bulk_import_brings_the_planners_statistics_up_to_date(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """PostgreSQL: right after an import the planner would still plan for the tables as they were
    (at 10k memories: an exact scan of every memory's vector instead of the HNSW walk), until
    autovacuum got round to them. SQLite: no statistics are gathered (its plans assume none)."""
    from dokoro_store.semantic.documents import service as documents
    from dokoro_store.semantic.memories import service as memories
    from sqlalchemy import text

    monkeypatch.setattr(documents, "_OPTIMISE_AFTER", 100)  # "bulk" at test size
    monkeypatch.setattr(memories, "_BULK_STATISTICS", 100)
    store.memories.remember_many(_drafts()[:150])

    with store.db.read() as session:
        if store.db.dialect == "postgresql":
            analysed = session.execute(
                text("SELECT relname FROM pg_stat_user_tables WHERE last_analyze IS NOT NULL ORDER BY relname")
            ).scalars()
            assert {"chunks", "docs", "memories", "memory_entities"} <= set(analysed)
            # The full-text index's pending list is merged (a search reads it whole), and kept short.
            assert session.execute(text("SELECT gin_clean_pending_list('ix_docs_fts'::regclass)")).scalar() == 0
            options = session.execute(text("SELECT reloptions FROM pg_class WHERE relname = 'ix_docs_fts'")).scalar()
            assert "gin_pending_list_limit=256" in options
        else:
            assert session.execute(text("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'")).first() is None
