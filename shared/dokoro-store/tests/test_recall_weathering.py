"""The weathering rule of recall: recency and use break near-ties, never bury a clearly more
relevant memory (services/memories/recall.py)."""

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest
from dokoro_store import FrozenClock, Store
from dokoro_store.index.ranking.rerank import RERANK_DEPTH
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.semantic.memories import recall as memory_recall
from dokoro_store.semantic.memories.recall import CHECKED_DEPTH, NEAR_TIE, weather


def _row(clock: FrozenClock, *, age_days: float, recalls: int, last_use_days: float, trust: str) -> MemoryRow:
    now = clock.now()
    return MemoryRow(
        id="mem",
        type="fact",
        title="t",
        body="b",
        trust=trust,
        state="active",
        created_at=now - timedelta(days=age_days),
        updated_at=now - timedelta(days=age_days),
        recall_count=recalls,
        last_recalled_at=now - timedelta(days=last_use_days) if recalls else None,
    )


def test_freshness_and_use_move_a_score_by_less_than_a_near_tie(clock: FrozenClock) -> None:
    now = clock.now()
    ages = (0.0, 30.0, 400.0, 5_000.0)
    uses = ((0, 0.0), (1, 0.0), (50, 0.0), (1_000, 200.0))
    for trust, age, (recalls, last) in itertools.product(("user-stated", "imported"), ages, uses):
        cold = _row(clock, age_days=5_000, recalls=0, last_use_days=0, trust=trust)
        warm = _row(clock, age_days=age, recalls=recalls, last_use_days=last, trust=trust)
        for relevance in (0.0, 0.3, 1.0):
            cold_score, _ = weather(cold, relevance, now)
            warm_score, parts = weather(warm, relevance, now)
            assert 0.0 <= warm_score - cold_score <= NEAR_TIE + 1e-12
            assert 0.0 <= parts["freshness"] <= 1.0 and 0.0 <= parts["heat"] <= 1.0


def test_a_clearly_more_relevant_memory_is_never_buried_by_a_fresh_hot_one(clock: FrozenClock) -> None:
    now = clock.now()
    old_cold = _row(clock, age_days=3_000, recalls=0, last_use_days=0, trust="user-stated")
    new_hot = _row(clock, age_days=0, recalls=500, last_use_days=0, trust="user-stated")
    better, _ = weather(old_cold, 0.8, now)
    worse, _ = weather(new_hot, 0.8 - NEAR_TIE - 0.001, now)
    assert better > worse
    # ...while at an exact tie the fresh, used memory comes first.
    assert weather(new_hot, 0.8, now)[0] > weather(old_cold, 0.8, now)[0]


def test_recalling_a_memory_again_and_again_does_not_lift_it_above_the_answer(
    any_store: Store, clock: FrozenClock
) -> None:
    answer = any_store.memories.remember(
        type="fact",
        title="Release train schedule",
        body="The release train leaves every second Tuesday; the release branch is cut on Monday.",
    ).memory
    clock.advance(timedelta(days=600))
    other = any_store.memories.remember(
        type="fact", title="Release train dashboard", body="The release train dashboard lives on the team wiki."
    ).memory
    # Weaker matches, so that relevance is spread (it is relative to the best memory found).
    any_store.memories.remember(
        type="fact", title="Train tickets", body="Train tickets for the offsite are reimbursed."
    )
    any_store.memories.remember(type="fact", title="Leave policy", body="Parental leave is sixteen weeks.")
    for _ in range(20):
        assert any_store.memories.recall("release train dashboard", limit=1)[0].memory.id == other.id

    hits = any_store.memories.recall("when does the release train leave", limit=5)

    # The dashboard matches the query too, less well: fresh and recalled 20 times, it stays second.
    assert [h.memory.id for h in hits[:2]] == [answer.id, other.id], [(h.relevance, h.score) for h in hits]
    assert any_store.memories.get(other.id).recall_count >= 20


def test_recall_asks_the_search_for_the_rerankers_block_and_a_page_is_a_prefix_of_a_longer_one(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # More memories match than recall asks the search for, each sharing words with the queries.
    words = [
        "deploy",
        "pipeline",
        "nightly",
        "rollback",
        "canary",
        "cluster",
        "staging",
        "release",
        "schedule",
        "failover",
    ]
    for i in range(80):
        body = " ".join(words[(i * j + j) % len(words)] for j in range(3 + i % 13))
        store.memories.remember(type="fact", title=f"Ops note {i}", body=f"Note {i}: {body}.")
    asked: list[int] = []
    depth_of = memory_recall.recall_depth

    def spy(limit: int, checked_on_answer: bool = False) -> int:
        asked.append(depth_of(limit, checked_on_answer))
        return asked[-1]

    monkeypatch.setattr(memory_recall, "recall_depth", spy)
    for query in ("nightly deploy pipeline", "canary rollback on staging", "release schedule failover"):
        longest = [h.memory.id for h in store.memories.recall(query, limit=50, count_use=False)]
        assert len(longest) == 50
        for k in (1, 5, 10, 25):
            assert [h.memory.id for h in store.memories.recall(query, limit=k, count_use=False)] == longest[:k]
    # Every page is weathered from the re-ranker's block, however short.
    assert set(asked) == {RERANK_DEPTH}
    # A filter checked on the answer (an entity with synonyms) keeps the deeper search.
    assert memory_recall.recall_depth(10, True) == CHECKED_DEPTH > RERANK_DEPTH
