"""Hybrid search by score fusion: thread neighbours, context vectors, ubiquitous query terms."""

from __future__ import annotations

import dataclasses

import pytest
from dokoro_store.index.fulltext.planner import plan_query
from dokoro_store.index.ranking.fusion import DEFAULT_FUSION, quantile_from_top, rescale
from dokoro_store.index.ranking.hybrid import fuse_scores
from dokoro_store.semantic.documents.service import NewDocument

# A conversation where the answer sits in the reply, not in the turn that names the topic.
THREAD = [
    "Ana: I finally booked the trip we talked about last winter.",
    "Ben: Where are you going for the pottery workshop?",
    "Ana: Lisbon, the first week of June!",
    "Ben: Nice, I hear the food there is wonderful.",
    "Ana: I am mostly looking forward to the custard tarts.",
    "Ben: My cat knocked over a plant this morning.",
    "Ana: Cats are like that, mine ignores me all day.",
]
OTHERS = [
    "Notes on the database migration plan for the billing service.",
    "The release checklist: changelog, version bump, tag, publish.",
    "A recipe for tomato soup with basil and a little cream.",
]


def _fill(store, *, threads: bool) -> None:
    docs = [
        NewDocument(
            f"turn-{i}",
            text,
            title="Chat, 3 May 2024",
            thread="chat-1" if threads else None,
            thread_pos=i if threads else None,
        )
        for i, text in enumerate(THREAD)
    ]
    docs += [NewDocument(f"other-{i}", text, title="Note") for i, text in enumerate(OTHERS)]
    store.docs.save_many(docs)
    store.docs.index_docs([d.id for d in docs])


def test_the_reply_beside_a_matching_turn_is_lifted_and_says_why(open_store):
    store = open_store()
    _fill(store, threads=True)

    hits = store.search.universal("pottery workshop", limit=4).hits

    ids = [h.doc_id for h in hits]
    # "Lisbon, the first week of June!" shares no word with the query, yet answers the question that
    # names it: the reply comes first, the question it answers right behind it.
    assert ids[:2] == ["turn-2", "turn-1"]
    lifted = next(h for h in hits if h.doc_id == "turn-2")
    assert "beside turn-1" in lifted.why


def test_without_a_thread_nothing_is_lifted(open_store):
    store = open_store()
    _fill(store, threads=False)

    hits = store.search.universal("pottery workshop", limit=4).hits

    assert hits[0].doc_id == "turn-1"
    assert all("beside" not in h.why for h in hits)


def test_fused_without_the_neighbours_weight_nothing_is_lifted(open_store):
    store = open_store()
    _fill(store, threads=True)
    legs = store.search.legs("pottery workshop")
    plain = dataclasses.replace(DEFAULT_FUSION, neighbour_weight=0.0)

    fused = fuse_scores(
        store.db,
        plain,
        legs.text_hits,
        legs.vector_hits,
        [],
        embedder=legs.embedder_id,
        query_vector=legs.query_vector,
        stored=legs.stored,
    )

    assert all(s.lift == 0.0 and s.lifted_by is None for s in fused)
    assert fused[0].doc_id == "turn-1"


def test_a_thread_survives_an_update_of_the_document(open_store):
    store = open_store()
    _fill(store, threads=True)

    store.docs.save("turn-2", "Ana: Porto, the first week of June!", title="Chat, 3 May 2024")

    assert store.docs.get("turn-2").thread == "chat-1" and store.docs.get("turn-2").thread_pos == 2


# ---------------------------------------------------------------------- ubiquitous terms


def test_a_query_of_one_common_term_keeps_it():
    planned = plan_query("Caroline")

    assert planned.without(("caroline",)).terms == ("caroline",)


# ---------------------------------------------------------------------- the arithmetic


def test_rescale_maps_the_floor_to_zero_and_the_best_to_one():
    assert rescale({"a": 0.8, "b": 0.5, "c": 0.2}, 0.5, 0.8) == {"a": 1.0, "b": 0.0, "c": 0.0}
    assert rescale({"a": 0.65}, 0.5, 0.8)["a"] == pytest.approx(0.5)
    assert rescale({"a": 0.3, "b": 0.3}, 0.3, 0.3) == {"a": 1.0, "b": 1.0}


def test_quantile_from_top_reads_a_list_best_first():
    values = [0.1, 0.9, 0.5, 0.7, 0.3]

    assert quantile_from_top(values, 0.0) == 0.9
    assert quantile_from_top(values, 0.5) == 0.5
    assert quantile_from_top(values, 1.0) == 0.1
    assert quantile_from_top([], 0.5) == 0.0


def test_recall_lifts_the_memory_beside_a_match_when_memories_come_in_a_thread(open_store):
    from dokoro_store.semantic.memories.service import MemoryDraft

    store = open_store()
    rows = store.memories.remember_many(
        [
            MemoryDraft(type="episode", title="Chat", body=text, thread="chat-1", thread_pos=i)
            for i, text in enumerate(THREAD)
        ]
        + [MemoryDraft(type="episode", title="Note", body=text) for text in OTHERS]
    )

    hits = store.memories.recall("pottery workshop", limit=4, count_use=False)

    bodies = [h.memory.body for h in hits]
    assert bodies[:2] == [THREAD[2], THREAD[1]]  # the reply that answers, then the question it answers
    assert len(rows) == len(THREAD) + len(OTHERS)
