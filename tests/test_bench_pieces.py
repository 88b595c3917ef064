"""The benches' ablations are built from the store's public pieces (bench/ablation.py): with nothing
turned off they rank exactly as search_universal does, and a part turned off changes only that part.

Search takes no settings (issue 43 item 5), so a bench row that drifted from the product would go
unseen but for this check (and the ``pieces`` row of bench/locomo_retrieval.py on LoCoMo)."""

from __future__ import annotations

import dataclasses
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from dokoro_store import Store
from dokoro_store.retrieval import RetrievalConfig
from dokoro_store.semantic.documents.service import NewDocument

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from ablation import Variant, ranking

SESSIONS = {
    "session_1": [
        "Ana: I signed up for a pottery class yesterday, it is like therapy for me.",
        "Ben: That sounds great, Ana! What do you make there?",
        "Ana: Bowls and mugs so far, the glaze is the hardest part of pottery.",
        "Ben: I mostly go running to clear my head after work.",
        "Ana: Running is great too, I swim with the kids on Sundays.",
        "Ben: My dog loves the beach more than the forest.",
    ],
    "session_2": [
        "Ben: How was the camping trip, Ana?",
        "Ana: We went camping with the kids in the mountains, they loved the campfire.",
        "Ben: Did you bring your pottery to sell at the market?",
        "Ana: Yes, the pottery stand sold twelve bowls on Saturday.",
        "Ben: I read a book about running marathons last week.",
    ],
    "session_3": [
        "Ana: I painted a sunset over the lake for my pottery studio.",
        "Ben: Painting and pottery, you are busy! I started learning the guitar.",
        "Ana: The kids asked me to teach them pottery next summer.",
    ],
}
QUERIES = [
    "What activities does Ana partake in?",
    "What did Ana sell at the market?",
    "What does Ben do to clear his head?",
    "pottery",
    "Which book did Ben read?",
]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(tmp_path / "dokoro", retrieval=RetrievalConfig(embedder="hashing", vector_engine="exact"))
    docs = [
        NewDocument(f"{thread}-{pos}", text, title="8 May 2023", thread=thread, thread_pos=pos)
        for thread, turns in SESSIONS.items()
        for pos, text in enumerate(turns)
    ]
    opened.docs.save_many(docs)
    opened.docs.index_docs([d.id for d in docs])
    yield opened
    opened.close()


def test_the_pieces_put_together_rank_as_search_universal(store: Store) -> None:
    for query in QUERIES:
        for limit in (3, 10):
            expected = [h.doc_id for h in store.search.universal(query, limit=limit).hits]
            assert ranking(store, query, Variant(), limit) == expected, query


def test_a_thread_quota_keeps_the_page_to_that_many_turns_of_a_thread(store: Store) -> None:
    query = "What activities does Ana partake in?"
    full = ranking(store, query, Variant(), 6)
    assert max(Counter(d.split("-")[0] for d in full).values()) > 2  # the page crowds into a session

    capped = ranking(store, query, dataclasses.replace(Variant(), quota=2), 6)

    assert len(capped) == 6 and set(capped) <= set(ranking(store, query, Variant(), 14))
    assert max(Counter(d.split("-")[0] for d in capped).values()) <= 2
    assert capped[0] == full[0]  # the best stays first


def test_the_ideas_measured_and_not_kept_each_run(store: Store) -> None:
    query = "What activities does Ana partake in?"
    for change in (
        {"speaker_query": False},
        {"thread_penalty": 0.5},
        {"graph_expand": 20},
        {"thread_expand": 2},
        {"thread_boost": 0.5},
        {"prf_terms": 5},
        {"rocchio": 5},
        {"preference": 0.5},
        {"rerank": False},
        {"method": "rrf"},
    ):
        found = ranking(store, query, dataclasses.replace(Variant(), **change), 10)
        assert found and len(found) == len(set(found)), change
