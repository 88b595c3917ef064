"""Fusion keeps agreement: a document both legs rank first is never pushed below the top 3 by a boost."""

from __future__ import annotations

from dokoro_store.index.ranking.hybrid import AGREEMENT_PLACES, Scored, keep_agreement
from dokoro_store.index.ranking.rerank import rerank
from dokoro_store.semantic.graph.extraction import extract_regex

RESEARCH = "Research: why the login session times out after idle periods, and how the refresh timer fixes it."
STANDUP = "Ana: the login page of SessionManager again, day {}, what a session."


def _scored(doc_id: str, score: float, text_rank: int | None, vector_rank: int | None) -> Scored:
    return Scored(doc_id, score=score, text_rank=text_rank, vector_rank=vector_rank)


def test_a_hit_both_legs_rank_first_is_put_back_at_the_third_place_scored_between_its_neighbours():
    ranked = [_scored(f"boosted-{i}", 10.0 - i, i + 1, i + 1) for i in range(4)] + [_scored("agreed", 3.0, 0, 0)]

    out = keep_agreement(ranked)

    assert [s.doc_id for s in out] == ["boosted-0", "boosted-1", "agreed", "boosted-2", "boosted-3"]
    assert AGREEMENT_PLACES == 3
    scores = [s.score for s in out]
    assert scores == sorted(scores, reverse=True)


def test_agreement_already_in_the_top_or_absent_changes_nothing():
    top = [_scored("a", 3.0, 1, 1), _scored("agreed", 2.0, 0, 0), _scored("c", 1.0, 2, 2), _scored("d", 0.5, 3, 3)]
    split = [_scored(f"d{i}", 5.0 - i, 0 if i == 3 else i + 1, 0 if i == 4 else i + 1) for i in range(5)]

    assert keep_agreement(list(top)) == top
    assert keep_agreement(list(split)) == split


def test_a_research_note_both_legs_rank_first_stays_in_the_top_3_whatever_the_boosts_lift(open_store):
    store = open_store(embedder="hashing", vector_engine="exact")
    store.search.index_content("research", RESEARCH, "Login session timeout")
    for i in range(6):
        doc_id = f"daily-{i}"
        store.search.index_content(doc_id, STANDUP.format(i), f"Daily {i}", thread="standup")
        store.graph.persist(doc_id, extract_regex("SessionManager owns the login session."))
    query = "Ana login session times out after idle SessionManager"

    planned, fused = store.search.candidates(query)
    note = next(s for s in fused if s.doc_id == "research")
    assert (note.text_rank, note.vector_rank) == (0, 0)  # both legs rank it first ...
    reranked = rerank(planned, query, fused, store.search.texts)
    # The standups name Ana (the re-ranker's speaker feature) and the graph's entity: their boosts bury it
    assert [s.doc_id for s in reranked].index("research") >= AGREEMENT_PLACES

    hits = store.search.universal(query, limit=5).hits

    assert "research" in [h.doc_id for h in hits][:AGREEMENT_PLACES]  # ... and the search puts it back
