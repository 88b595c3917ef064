"""Vector indexes that scale: LanceDB's ANN index past a size, pgvector's HNSW on a typed column.

The threshold is lowered here (the real one, 10,000 vectors, is measured in ``bench/scale.py``):
the behaviour is the same, the test stays small.
"""

from __future__ import annotations

import random

import pytest
from dokoro_store.index.vectors.pgvector import nearest_sql
from dokoro_store.semantic.documents.service import NewDocument
from sqlalchemy import text

WORDS = [f"w{i}" for i in range(400)]


def _corpus(count: int) -> list[NewDocument]:
    rng = random.Random(3)
    return [NewDocument(id=f"d{i}", content=" ".join(rng.sample(WORDS, 12)), title=f"Doc {i}") for i in range(count)]


def _nearest_docs(store, content: str) -> list[str]:
    embedder = store.embedder.get()
    vector = embedder.embed([content], query=True)[0]
    return [h.doc_id for h in store.docs.vector_index().search(vector, embedder.id, 5)]


def _assert_what_ann_promises(store, docs: list[NewDocument], k: int = 5) -> None:
    """What an approximate index promises, asked with each document's content: the exact scan's
    nearest neighbour of the same vectors is within the top ``k``, and the top ``k`` agree with the
    exact scan's (recall@k) well above chance. Not promised, so not asserted: the exact order (HNSW
    levels and IVF centroids are drawn at random on every build, and near-equal distances come back
    in either order). With the hashing embedder a text's vector is exactly its document's, so the
    document itself is found too; a semantic model (onnx) may place another synthetic text nearer."""
    from dokoro_store.index.vectors.index import ExactScanIndex

    embedder = store.embedder.get()
    exact = ExactScanIndex(store.db)
    index = store.docs.vector_index()
    agreed = 0
    for doc in docs:
        vector = embedder.embed([doc.content], query=True)[0]
        approximate = [h.doc_id for h in index.search(vector, embedder.id, k)]
        scanned = [h.doc_id for h in exact.search(vector, embedder.id, k)]
        assert scanned[0] in approximate, (doc.id, approximate, scanned)
        if embedder.id.startswith("hashing"):
            assert doc.id in approximate, (doc.id, approximate)
        agreed += len(set(approximate) & set(scanned))
    recall = agreed / (k * len(docs))
    assert recall >= 0.8, f"recall@{k} against the exact scan: {recall:.2f}"


def test_lancedb_keeps_an_exact_scan_below_the_threshold_and_builds_an_ann_index_past_it(
    root, clock, monkeypatch
) -> None:
    import dokoro_store.index.vectors.lance.table as lance_table
    from dokoro_store import Store
    from dokoro_store.retrieval import RetrievalConfig

    monkeypatch.setattr(lance_table, "ANN_THRESHOLD", 300)
    docs = _corpus(400)
    with Store.open(root, clock=clock, retrieval=RetrievalConfig(embedder="hashing")) as store:
        store.docs.save_many(docs[:200])
        store.docs.index_docs()
        engine = store.docs.vector_index()
        assert engine.engine == "lancedb"
        assert "exact scan of 200 vectors" in engine.optimise()
        assert "exact scan" in store.search.status().vector_engine_label

        store.docs.save_many(docs[200:])
        store.docs.index_docs()
        assert "built an IVF_SQ index" in engine.optimise()
        label = store.search.status().vector_engine_label
        assert "IVF_SQ index" in label and "refine" in label

        # Re-ranked on the full vectors: each document is found by its own content.
        _assert_what_ann_promises(store, docs[::20])

        # Rows written after the index was built are found too (scanned exactly until the upkeep).
        store.docs.index_content("late", "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12", "Late")
        assert _nearest_docs(store, "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12")[0] == "late"
        assert "newer ones scanned exactly" in store.search.status().vector_engine_label
        assert "brought up to date" in engine.optimise()
        assert "newer ones" not in store.search.status().vector_engine_label


def test_a_bulk_index_pass_builds_the_index_itself(root, clock, monkeypatch) -> None:
    import dokoro_store.index.vectors.lance.table as lance_table
    import dokoro_store.semantic.documents.service as documents
    from dokoro_store import Store
    from dokoro_store.retrieval import RetrievalConfig

    monkeypatch.setattr(lance_table, "ANN_THRESHOLD", 300)
    monkeypatch.setattr(documents, "_OPTIMISE_AFTER", 100)
    with Store.open(root, clock=clock, retrieval=RetrievalConfig(embedder="hashing")) as store:
        store.docs.save_many(_corpus(350))
        store.docs.index_docs()
        assert "IVF_SQ index" in store.search.status().vector_engine_label

        store.docs.reembed()  # drops the copy and rebuilds it, index included
        assert "IVF_SQ index" in store.search.status().vector_engine_label
        _assert_what_ann_promises(store, _corpus(350)[::25])


@pytest.mark.parametrize("embedder, dimension", [("hashing", 512), ("onnx", 384)])
def test_pgvector_keeps_vectors_in_a_typed_column_searched_through_its_hnsw_index(
    postgres_url, root, clock, embedder, dimension
) -> None:
    from dokoro_store import Store
    from dokoro_store.retrieval import RetrievalConfig

    with Store.open(
        root, database_url=postgres_url, clock=clock, retrieval=RetrievalConfig(embedder=embedder)
    ) as store:
        store.docs.save_many(_corpus(60))
        store.docs.index_docs()
        label = store.search.status().vector_engine_label
        assert f"HNSW index on vector({dimension})" in label
        with store.db.engine.connect() as connection:
            typed, untyped = connection.execute(
                text(f"SELECT count(embedding_v{dimension}), count(embedding_pgv) FROM chunks")
            ).one()
            assert (typed, untyped) == (60, 0)
            connection.execute(text("ANALYZE chunks"))
            connection.execute(text("SET enable_seqscan = off"))  # a 60-row table would be scanned otherwise
            vector = "[" + ",".join(["0.1"] * dimension) + "]"
            plan = "\n".join(
                str(row[0])
                for row in connection.execute(
                    text("EXPLAIN " + nearest_sql(dimension)), {"q": vector, "e": store.embedder.get().id, "k": 5}
                )
            )
        assert f"ix_chunks_v{dimension}_hnsw" in plan
        _assert_what_ann_promises(store, _corpus(60))
        assert "kept up to date" in store.docs.vector_index().optimise()
        assert "rebuilt the HNSW index" in store.docs.vector_index().optimise(rebuild=True)


def test_below_the_threshold_lancedb_answers_as_the_exact_scan_and_sees_every_process_writes(
    root, clock, monkeypatch
) -> None:
    """Below the ANN threshold the query is the exact scan of the database's vectors (held in memory
    per index generation): the same hits as the exact engine, a write of another process seen at once."""
    import dokoro_store.index.vectors.lance.table as lance_table
    from dokoro_store import Store
    from dokoro_store.index.vectors.index import ExactScanIndex
    from dokoro_store.retrieval import RetrievalConfig

    monkeypatch.setattr(lance_table, "ANN_THRESHOLD", 300)
    docs = _corpus(120)
    config = RetrievalConfig(embedder="hashing")
    with (
        Store.open(root, clock=clock, retrieval=config) as store,
        Store.open(root, clock=clock, retrieval=config) as other,
    ):
        store.docs.save_many(docs)
        store.docs.index_docs()
        engine = store.docs.vector_index()
        assert engine.engine == "lancedb"
        embedder = store.embedder.get()
        exact = ExactScanIndex(store.db)
        for doc in docs[::10]:
            vector = embedder.embed([doc.content], query=True)[0]
            assert engine.search(vector, embedder.id, 8) == exact.search(vector, embedder.id, 8)
            assert engine.search(vector, embedder.id, 1)[0].doc_id == doc.id

        # The candidates' vectors the fusion reads come from the same rows as the database's.
        held = engine.stored_vectors(["d3", "d4", "missing"], embedder.id)
        assert held is not None and [(c, d) for c, d, _v in held] == [
            (c, d) for c, d, _v in exact.stored_vectors(["d3", "d4", "missing"], embedder.id) or []
        ]
        assert engine.stored_vectors(["d3"], "another-embedder") is None

        # Another process writes: a new document is found, a deleted one is gone, at once.
        other.docs.index_content("late", "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12", "Late")
        assert _nearest_docs(store, "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12")[0] == "late"
        other.docs.delete("late")
        assert "late" not in _nearest_docs(store, "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12")

        # Past the threshold the LanceDB table answers (its copy brought in step first).
        other.docs.save_many(_corpus(400)[120:])
        other.docs.index_docs()
        engine.optimise()
        assert "IVF_SQ index" in store.search.status().vector_engine_label
        _assert_what_ann_promises(store, _corpus(400)[::25])
        assert engine.stored_vectors(["d3"], embedder.id) is None  # the fusion reads the database


def test_a_large_reembed_on_postgresql_builds_the_hnsw_index_once(postgres_url, root, clock, monkeypatch) -> None:
    from dokoro_store import Store
    from dokoro_store.index.vectors import pgvector
    from dokoro_store.retrieval import RetrievalConfig
    from sqlalchemy import event

    monkeypatch.setattr(pgvector, "BULK_DROP_MIN", 40)  # "large" at test size: the pass drops the index
    with Store.open(
        root, database_url=postgres_url, clock=clock, retrieval=RetrievalConfig(embedder="hashing")
    ) as store:
        store.docs.save_many(_corpus(60))
        store.docs.index_docs()
        builds: list[str] = []

        def spy(_conn, _cursor, statement: str, *_args) -> None:
            if "ix_chunks_v512_hnsw" in statement and statement.lstrip().upper().startswith(("CREATE", "REINDEX")):
                builds.append(statement.split()[0].upper())

        event.listen(store.db.engine, "before_cursor_execute", spy)
        try:
            store.docs.reembed()
        finally:
            event.remove(store.db.engine, "before_cursor_execute", spy)
        assert builds == ["CREATE"]  # built after the rows went in, not rebuilt a second time
        assert "HNSW index on vector(512)" in store.search.status().vector_engine_label
        _assert_what_ann_promises(store, _corpus(60))

        # Below the drop size the index stays through the pass: the re-embed then rebuilds it once
        # (the old vectors' entries are dead in it).
        monkeypatch.setattr(pgvector, "BULK_DROP_MIN", 10_000)
        event.listen(store.db.engine, "before_cursor_execute", spy)
        try:
            builds.clear()
            store.docs.reembed()
        finally:
            event.remove(store.db.engine, "before_cursor_execute", spy)
        assert builds == ["REINDEX"]
