"""Episodic recall ranked by relevance: similarity with full text and substring as signals, full text
alone without an embedder."""

from __future__ import annotations

from datetime import timedelta

from dokoro_store.models.index import summary_vectors
from sqlalchemy import select, update


def add(store, clock, session_id: str, summary: str, **extra) -> int:
    clock.advance(timedelta(hours=1))
    return store.episodic.add_summary(session_id, "claude", summary, **extra).id


def test_an_old_but_relevant_session_beats_recent_noise(open_store, clock):
    store = open_store()
    add(store, clock, "s-old", "login failed: the login cookie expired, so every login redirected to the login page")
    for i in range(12):
        add(store, clock, f"s-{i}", f"billing report {i}: moved the footer of the export below the login link")

    recall = store.episodic.recall_ranked(query="login", limit=1)

    assert recall.hits[0].session_id == "s-old"  # the newest of 13 matches would be s-11
    assert recall.ranking == (
        f"relevance (similarity by {store.embedder.status().id}, 1 nearest ≥ 0.4; "
        "full text 13, substring 13; 13 candidates)"
    )


def test_similarity_orders_the_matches_of_a_query(open_store, clock):
    store = open_store()
    add(store, clock, "a", "notes: tomatoes and basil in the garden")
    add(store, clock, "b", "notes: authentication tokens rotate every day")
    add(store, clock, "c", "notes: the weekly team lunch")

    recall = store.episodic.recall_ranked(query="notes", limit=3)

    assert {h.session_id for h in recall.hits} == {"a", "b", "c"}
    assert all(h.similarity is not None for h in recall.hits)
    sims = [h.similarity for h in recall.hits]
    assert sims == sorted(sims, reverse=True)


def test_summaries_are_embedded_when_written_and_stamped(open_store, clock):
    store = open_store()
    row_id = add(store, clock, "s", "embedded at once")

    with store.db.read() as session:
        row = session.execute(select(summary_vectors).where(summary_vectors.c.id == row_id)).one()
    assert row.embedding is not None
    assert row.embedder == store.embedder.status().id


def test_a_summary_without_a_vector_is_embedded_during_recall(open_store, clock):
    store = open_store()
    row_id = add(store, clock, "s", "vector lost in a copy")
    with store.db.write() as session:
        session.execute(update(summary_vectors).values(embedding=None, embedder=None))

    recall = store.episodic.recall_ranked(query="vector")

    assert recall.hits[0].similarity is not None
    with store.db.read() as session:
        assert session.execute(select(summary_vectors.c.embedder).where(summary_vectors.c.id == row_id)).scalar()


def test_without_an_embedder_recall_ranks_by_full_text_and_says_so(open_store, clock):
    store = open_store(embedder="none")
    add(store, clock, "a", "first match")
    add(store, clock, "b", "second match")

    recall = store.episodic.recall_ranked(query="match")

    assert [h.session_id for h in recall.hits] == ["b", "a"]
    assert recall.ranking.startswith("relevance without similarity (no embedder:")
    assert store.episodic.recall_ranked().ranking == "recency"


def test_a_compacted_session_is_embedded_too(open_store, clock):
    store = open_store()
    add(store, clock, "big", "part one about parsers", token_count=30_000)
    added = store.episodic.add_summary("big", "claude", "part two about lexers", token_count=20_000)

    assert added.compaction is not None and added.compaction.row_id is not None
    with store.db.read() as session:
        row = session.execute(select(summary_vectors).where(summary_vectors.c.id == added.compaction.row_id)).one()
    assert row.embedding is not None
    (hit,) = store.episodic.recall_ranked(query="lexers").hits
    assert hit.compacted and hit.similarity is not None


def test_the_summary_knn_follows_new_deleted_and_refilled_vectors(open_store, clock):
    from dokoro_store.episodic.summary_search import SummaryFilter

    store = open_store()
    embedder = store.embedder.get()
    query = embedder.embed(["parser work"], query=True)[0]
    vectors = store.retrieval.summaries

    def nearest() -> set[int]:
        return {row_id for row_id, _cosine in vectors.nearest(embedder.id, query, 50, SummaryFilter())}

    first = [add(store, clock, "s-1", f"parser work part {i}") for i in range(3)]
    assert nearest() == set(first)
    later = add(store, clock, "s-2", "lexer work")  # appended to the matrix kept in memory
    assert nearest() == {*first, later}
    with store.db.write() as session:  # a vector lost (a copy): the matrix is read again
        session.execute(update(summary_vectors).where(summary_vectors.c.id == first[0]).values(embedding=None))
    assert nearest() == {*first[1:], later}
    store.episodic.recall_ranked(query="parser work part 0")  # recall embeds it again
    assert nearest() == {*first, later}
    folded = store.episodic.add_summary("s-1", "claude", "parser wrap-up", token_count=50_000)
    assert folded.compaction is not None
    ids = nearest()
    assert not ids & set(first) and {later, folded.compaction.row_id} <= ids
    only_s2 = vectors.nearest(embedder.id, query, 50, SummaryFilter(session_id="s-2"))
    assert [row_id for row_id, _ in only_s2] == [later]
