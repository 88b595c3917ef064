"""The exact scan keeps its vectors in step by change numbers: a write after a search reads the
written rows only, a delete or a re-index takes the old vectors out, another store's writes on the
same database are seen, and only what it cannot follow (a clear, another embedder, the drops log
pruned past it) reads every vector again. Counted by the rows it reads, never timed."""

from __future__ import annotations

import random

import pytest
from dokoro_store import Store
from dokoro_store.index.vectors.index import ExactScanIndex
from dokoro_store.semantic.documents.service import NewDocument

from .conftest import OpenStore

WORDS = [f"w{i}" for i in range(300)]
LATE = "late1 late2 late3 late4 late5 late6 late7 late8"


def _corpus(count: int) -> list[NewDocument]:
    rng = random.Random(7)
    return [NewDocument(id=f"d{i}", content=" ".join(rng.sample(WORDS, 10)), title=f"Doc {i}") for i in range(count)]


def _exact(store: Store) -> ExactScanIndex:
    engine = store.docs.vector_index()
    assert isinstance(engine, ExactScanIndex)
    return engine


def _search(store: Store, text: str, k: int = 5) -> list[tuple[str, float]]:
    embedder = store.embedder.get()
    vector = embedder.embed([text], query=True)[0]
    return [(h.doc_id, h.score) for h in _exact(store).search(vector, embedder.id, k)]


def _filled(open_store: OpenStore, count: int = 60) -> tuple[Store, list[NewDocument]]:
    store = open_store(embedder="hashing", vector_engine="exact")
    docs = _corpus(count)
    store.docs.save_many(docs)
    store.docs.index_docs()
    return store, docs


def test_a_write_after_a_search_reads_only_the_rows_written(open_store: OpenStore) -> None:
    store, docs = _filled(open_store)
    engine = _exact(store)
    assert _search(store, docs[3].content)[0][0] == "d3"
    assert (engine.reads, engine.rows_read) == (1, len(docs))

    store.docs.index_content("late", LATE, "Late")
    assert _search(store, LATE)[0][0] == "late"
    assert (engine.reads, engine.rows_read) == (1, len(docs) + 1)  # the new chunk, nothing else

    # A search with nothing written reads no row at all.
    assert _search(store, docs[5].content)[0][0] == "d5"
    assert (engine.reads, engine.rows_read) == (1, len(docs) + 1)


def test_a_reindex_or_delete_takes_the_old_vectors_out(open_store: OpenStore) -> None:
    store, docs = _filled(open_store)
    engine = _exact(store)
    everything = len(docs) + 1
    best, score = _search(store, docs[3].content)[0]
    assert best == "d3" and score > 0.8

    # d3 indexed again with other words: its old vector is no longer found, its new one is.
    store.docs.index_content("d3", LATE, "Doc 3")
    assert dict(_search(store, docs[3].content, everything))["d3"] < 0.3
    best, score = _search(store, LATE)[0]
    assert best == "d3" and score > 0.8
    # d4 indexed into no chunk at all, d5 deleted: neither is found any more.
    store.docs.save_many([NewDocument(id="d4", content=" \n", title="Doc 4")])
    store.docs.index_docs(["d4"])
    assert store.docs.delete("d5")
    found = {doc_id for doc_id, _score in _search(store, docs[4].content, everything)}
    assert found == {d.id for d in docs} - {"d4", "d5"}
    embedder = store.embedder.get()
    assert engine.stored_vectors(["d4", "d5"], embedder.id) == []
    assert [(c, d) for c, d, _v in engine.stored_vectors(["d3", "d6"], embedder.id) or []] == [
        ("d3_0", "d3"),
        ("d6_0", "d6"),
    ]
    assert engine.reads == 1 and engine.rows_read == len(docs) + 1  # d3's new chunk (d4 and d5: logged drops)


def test_another_stores_writes_on_the_same_database_are_seen(open_store: OpenStore) -> None:
    store, docs = _filled(open_store)
    other = open_store(embedder="hashing", vector_engine="exact")
    engine = _exact(store)
    assert _search(store, docs[1].content)[0][0] == "d1"

    other.docs.index_content("late", LATE, "Late")
    assert _search(store, LATE)[0][0] == "late"
    other.docs.delete("late")
    other.docs.delete("d1")
    hits = {doc_id for doc_id, _score in _search(store, LATE, len(docs) + 1)}
    assert "late" not in hits and "d1" not in hits
    assert engine.reads == 1


def test_a_clear_of_the_index_or_another_embedder_reads_every_vector_again(open_store: OpenStore) -> None:
    store, docs = _filled(open_store, 30)
    engine = _exact(store)
    assert _search(store, docs[2].content)[0][0] == "d2"

    other = open_store(embedder="hashing", vector_engine="exact")
    other.docs.reindex(full=True)
    assert _search(store, docs[2].content)[0][0] == "d2"
    assert engine.reads == 2  # the other store cleared the index: nothing to follow

    # Another embedder: the other store re-embeds with the static model; a query of its vectors
    # reads them all, a query of the old embedder's finds none left.
    static = open_store(embedder="static", vector_engine="exact")
    static.docs.reembed()
    embedder = static.embedder.get()
    vector = embedder.embed([docs[2].content], query=True)[0]
    assert engine.search(vector, embedder.id, 1)[0].doc_id == "d2"
    assert engine.reads == 3
    assert _search(store, docs[2].content) == []
    assert engine.reads == 4


def test_a_reader_the_pruned_drops_log_left_behind_reads_everything_again(
    open_store: OpenStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dokoro_store.semantic.documents.indexing.batch as indexing

    store, docs = _filled(open_store, 20)
    engine = _exact(store)
    assert _search(store, docs[0].content)[0][0] == "d0"
    monkeypatch.setattr(indexing, "_PRUNE_EVERY", 1)
    monkeypatch.setattr(indexing, "_DROPS_KEPT", 2)
    store.docs.delete("d0")  # logged, then pruned by the writes below
    for i in range(4):
        store.docs.index_content(f"new{i}", f"{LATE} n{i}", f"New {i}")
    assert "d0" not in {doc_id for doc_id, _score in _search(store, docs[0].content, 30)}
    assert engine.reads == 2
