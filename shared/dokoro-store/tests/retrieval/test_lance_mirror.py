"""LanceDB written behind the database: new vectors are marked in the database and copied in
batches; every search finds them before and after the copy, and a lagging copy is never rebuilt.

The background copy is pushed out of reach here (``MIRROR_DELAY``) so each test decides when
the copy happens, and every search goes to LanceDB (``EXACT_IN_MEMORY`` at 0: these small stores
would otherwise be scanned in memory); ``tests/test_lance_mirror_processes.py`` runs it with real processes.
"""

from __future__ import annotations

import random

import pytest
from dokoro_store.models.index import chunks
from dokoro_store.semantic.documents.indexing.batch import bump_generation
from dokoro_store.semantic.documents.service import NewDocument
from sqlalchemy import func, select

WORDS = [f"w{i}" for i in range(400)]


def _corpus(count: int, seed: int = 3, prefix: str = "d") -> list[NewDocument]:
    rng = random.Random(seed)
    return [
        NewDocument(id=f"{prefix}{i}", content=" ".join(rng.sample(WORDS, 12)), title=f"Doc {i}") for i in range(count)
    ]


def _nearest(store, content: str, k: int = 3) -> list[str]:
    embedder = store.embedder.get()
    vector = embedder.embed([content], query=True)[0]
    return [h.doc_id for h in store.docs.vector_index().search(vector, embedder.id, k)]


def _waiting(store) -> int:
    with store.db.read() as session:
        return int(
            session.execute(select(func.count()).select_from(chunks).where(chunks.c.unmirrored.is_not(None))).scalar()
            or 0
        )


def _copied(store) -> int:
    engine = store.docs.vector_index()
    table = engine._table.open()
    return 0 if table is None else int(table.count_rows())


@pytest.fixture
def no_background(monkeypatch):
    import dokoro_store.index.vectors.lance.engine as lance

    monkeypatch.setattr(lance, "MIRROR_DELAY", 3600.0)
    monkeypatch.setattr(lance, "EXACT_IN_MEMORY", 0)
    return lance


def test_new_vectors_are_found_before_and_after_the_copy(root, clock, no_background) -> None:
    from dokoro_store import Store
    from dokoro_store.retrieval import RetrievalConfig

    docs = _corpus(60)
    with Store.open(root, clock=clock, retrieval=RetrievalConfig(embedder="hashing")) as store:
        engine = store.docs.vector_index()
        assert engine.engine == "lancedb"
        store.docs.save_many(docs[:40])
        store.docs.index_docs()
        assert _waiting(store) == 40 and _copied(store) == 0
        assert engine.mirror() == 40
        assert _waiting(store) == 0 and _copied(store) == 40

        for doc in docs[40:]:  # one write at a time, as an agent makes them
            store.docs.index_content(doc.id, doc.content, doc.title)
        assert _waiting(store) == 20 and _copied(store) == 40  # nothing copied yet
        for doc in docs[35:]:  # old and new alike are found, each its own nearest
            assert _nearest(store, doc.content)[0] == doc.id
        assert store.search.status().engine_vectors == 60

        # A document re-indexed while its first vectors wait: found by its new words only.
        store.docs.index_content("d45", docs[3].content + " w399", "Doc 45 again")
        assert _nearest(store, docs[45].content)[0] != "d45"
        assert "d45" in _nearest(store, docs[3].content)[:2]

        # A copied document re-indexed: its copy leaves LanceDB at once, the new vectors wait.
        store.docs.index_content("d10", docs[50].content + " w398", "Doc 10 again")
        assert _copied(store) == 39
        assert "d10" in _nearest(store, docs[50].content)[:2]
        assert _nearest(store, docs[10].content)[0] != "d10"

        assert engine.mirror() == 21
        assert _waiting(store) == 0 and _copied(store) == 60
        for doc in docs[::7]:
            expected = {"d45": "d3", "d10": "d50"}.get(doc.id)
            assert _nearest(store, doc.content)[0] == doc.id or _nearest(store, doc.content)[0] == expected
        assert "d45" in _nearest(store, docs[3].content)[:2]
        assert "d10" in _nearest(store, docs[50].content)[:2]


def test_a_lagging_copy_is_not_taken_for_drift(root, clock, no_background, monkeypatch) -> None:
    from dokoro_store import Store
    from dokoro_store.retrieval import RetrievalConfig

    rebuilds: list[str] = []
    original = no_background.LanceIndex._rebuild

    def rebuild(self, embedder: str) -> None:
        rebuilds.append(embedder)
        original(self, embedder)

    monkeypatch.setattr(no_background.LanceIndex, "_rebuild", rebuild)
    monkeypatch.setattr(no_background, "RECHECK_AFTER", 0.0)  # count on every search
    docs = _corpus(30)
    with Store.open(root, clock=clock, retrieval=RetrievalConfig(embedder="hashing")) as store:
        store.docs.save_many(docs[:20])
        store.docs.index_docs()
        store.docs.vector_index().mirror()
        for doc in docs[20:]:
            store.docs.index_content(doc.id, doc.content, doc.title)
            assert _nearest(store, doc.content)[0] == doc.id
        assert rebuilds == []
        assert _waiting(store) == 10

        # A real drift (vectors written by a process that never marks them) is still repaired.
        with store.db.write() as session:
            session.execute(chunks.update().values(unmirrored=None))
            bump_generation(session, clock)  # as every index write does
        assert _nearest(store, docs[25].content)[0] == "d25"
        assert len(rebuilds) == 1 and _copied(store) == 30


def test_a_copy_interrupted_before_its_marks_were_cleared_is_settled_without_a_rebuild(
    root, clock, no_background, monkeypatch
) -> None:
    from dokoro_store import Store
    from dokoro_store.retrieval import RetrievalConfig

    monkeypatch.setattr(no_background, "RECHECK_AFTER", 0.0)
    docs = _corpus(30)
    with Store.open(root, clock=clock, retrieval=RetrievalConfig(embedder="hashing")) as store:
        store.docs.save_many(docs[:20])
        store.docs.index_docs()
        engine = store.docs.vector_index()
        engine.mirror()
        for doc in docs[20:]:
            store.docs.index_content(doc.id, doc.content, doc.title)
        # The copy is written, the process dies before the marks are cleared.
        waiting = docs[20:]
        with engine._lock:
            engine._table.write([d.id for d in waiting], engine_rows(store, [d.id for d in waiting]))
        assert _copied(store) == 30 and _waiting(store) == 10
        monkeypatch.setattr(no_background.LanceIndex, "_rebuild", lambda self, embedder: pytest.fail("rebuilt"))
        store.docs.index_content("late", "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12", "Late")
        for doc in docs[18:]:
            assert _nearest(store, doc.content)[0] == doc.id  # no duplicate copy either
        assert _nearest(store, "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12")[0] == "late"
        hits = _nearest(store, docs[22].content, k=30)
        assert len(hits) == len(set(hits))


def engine_rows(store, doc_ids: list[str]):
    from dokoro_store.index.embedders.handle import from_bytes
    from dokoro_store.index.vectors.index import ChunkVector

    with store.db.read() as session:
        rows = session.execute(
            select(
                chunks.c.chunk_id, chunks.c.doc_id, chunks.c.chunk_index, chunks.c.embedder, chunks.c.embedding
            ).where(chunks.c.doc_id.in_(doc_ids))
        ).all()
    return [ChunkVector(r[0], r[1], r[2], r[3], from_bytes(r[4])) for r in rows]


def test_closing_the_store_copies_what_waits(root, clock, no_background) -> None:
    from dokoro_store import Store
    from dokoro_store.retrieval import RetrievalConfig

    docs = _corpus(12)
    with Store.open(root, clock=clock, retrieval=RetrievalConfig(embedder="hashing")) as store:
        for doc in docs:
            store.docs.index_content(doc.id, doc.content, doc.title)
        assert _waiting(store) == 12
    with Store.open(root, clock=clock, retrieval=RetrievalConfig(embedder="hashing")) as store:
        assert _waiting(store) == 0 and _copied(store) == 12
        assert _nearest(store, docs[5].content)[0] == "d5"


def test_the_background_step_copies_after_a_short_delay(root, clock, monkeypatch) -> None:
    import threading

    import dokoro_store.index.vectors.lance.engine as lance
    from dokoro_store import Store
    from dokoro_store.retrieval import RetrievalConfig

    monkeypatch.setattr(lance, "MIRROR_DELAY", 0.05)
    copied = threading.Event()
    original = lance.LanceIndex._mirror

    def mirror(self) -> int:
        count = original(self)
        if count:
            copied.set()
        return count

    monkeypatch.setattr(lance.LanceIndex, "_mirror", mirror)
    with Store.open(root, clock=clock, retrieval=RetrievalConfig(embedder="hashing")) as store:
        store.docs.index_content("one", "w1 w2 w3 w4 w5", "One")
        assert copied.wait(60)
        assert _waiting(store) == 0 and _copied(store) == 1


def test_a_long_tail_is_copied_at_once(root, clock, no_background, monkeypatch) -> None:
    from dokoro_store import Store
    from dokoro_store.retrieval import RetrievalConfig

    monkeypatch.setattr(no_background, "MIRROR_TAIL", 5)
    docs = _corpus(8)
    with Store.open(root, clock=clock, retrieval=RetrievalConfig(embedder="hashing")) as store:
        for doc in docs:
            store.docs.index_content(doc.id, doc.content, doc.title)
        assert _waiting(store) <= 5 and _copied(store) >= 3


def test_written_vectors_are_found_at_once_on_both_backends(root, clock, database_url, no_background) -> None:
    from dokoro_store import Store
    from dokoro_store.retrieval import RetrievalConfig

    docs = _corpus(25)
    config = RetrievalConfig(embedder="hashing")
    with Store.open(root, clock=clock, database_url=database_url, retrieval=config) as store:
        store.docs.save_many(docs[:15])
        store.docs.index_docs()
        for doc in docs[15:]:
            store.docs.index_content(doc.id, doc.content, doc.title)
            assert _nearest(store, doc.content)[0] == doc.id
        # Only the embedded backend keeps a copy to write behind; PostgreSQL marks nothing.
        assert _waiting(store) == (25 if database_url is None else 0)
    with Store.open(root, clock=clock, database_url=database_url, retrieval=config) as store:
        assert _waiting(store) == 0
        for doc in docs[::4]:
            assert _nearest(store, doc.content)[0] == doc.id
