"""The word sub-leg on a large store: common terms leave the ranked query when rarer ones remain."""

from __future__ import annotations

import pytest
from dokoro_store import Store
from dokoro_store.index.fulltext import index as fulltext
from dokoro_store.index.fulltext.index import COMMON_DOCS, RANK_BUDGET, bounded
from dokoro_store.index.fulltext.planner import plan_query


def test_the_commonest_terms_leave_the_ranked_query_past_the_budget() -> None:
    planned = plan_query("port quokka proxy ingest")  # terms in this order
    counts = [RANK_BUDGET + 1, 2, RANK_BUDGET - 100, 25]

    kept = bounded(planned, counts)

    # The rarest first: quokka (2), ingest (25); proxy fits the budget; port is past it.
    assert kept.terms == ("quokka", "proxy", "ingest")


def test_rare_terms_and_phrases_always_stay_and_a_query_of_common_terms_stays_whole() -> None:
    planned = plan_query('"ingest proxy" port quokka')
    assert bounded(planned, [RANK_BUDGET + 1, 3, 10]).words == ("quokka", "ingest proxy")
    # Every term past the budget: nothing rarer to rank by, the query stays whole.
    common = plan_query("billing worker timeout")
    assert bounded(common, [RANK_BUDGET + 1] * 3) == common
    # Terms under COMMON_DOCS stay whatever the sum (a small store ranks exactly as before).
    many = plan_query("a1 b2 c3 d4 e5 f6 g7")
    assert bounded(many, [COMMON_DOCS - 1] * 7) == many
    # One term: nothing to leave out.
    assert bounded(plan_query("port"), [RANK_BUDGET * 9]) == plan_query("port")


@pytest.fixture
def common_store(search_store: Store) -> Store:
    for i in range(12):
        search_store.docs.index_content(f"common-{i:02d}", f"The service number {i} restarts nightly.", f"Service {i}")
    search_store.docs.index_content("needle", "The quokka service listens on port 40007.", "Quokka service")
    return search_store


def test_a_common_term_leaves_the_leg_past_the_budget_and_search_still_sees_it(
    common_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    def leg(query: str) -> dict[str, str]:
        with common_store.db.read() as session:
            hits = common_store.search._full_text.search(session, plan_query(query), 20)
        return {h.doc_id: h.via for h in hits}

    whole = leg("quokka service")
    assert whole["needle"] == "words" and whole["common-03"] == "words"

    monkeypatch.setattr(fulltext, "RANK_BUDGET", 5)
    monkeypatch.setattr(fulltext, "COMMON_DOCS", 2)
    bounded_leg = leg("quokka service")
    # "service" (13 documents) left the ranked query, and the substring backfill (which looks for
    # the ranked words only): the needle is ranked by "quokka".
    assert next(iter(bounded_leg)) == "needle" and bounded_leg["needle"] == "words"
    assert "common-03" not in bounded_leg

    # The search still names the term the needle matched (hits read the whole query).
    found = common_store.search.universal("quokka service", limit=3)
    assert found.hits[0].doc_id == "needle"
    assert "service" in found.hits[0].matched_terms
