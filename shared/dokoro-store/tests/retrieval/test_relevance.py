"""Relevance on one scale across queries: a real match scores high, the nearest of nothing low."""

from __future__ import annotations

from dokoro_store.index.ranking.calibration import (
    CLOSE_MATCH,
    COEFFICIENTS,
    FEATURES,
    RelevanceInputs,
    features,
    relevance,
)

NOTES = {
    "auth": ("Auth decision", "We chose JWT access tokens with refresh token rotation for the API."),
    "garden": ("Garden", "Tomatoes and basil grow on the balcony in summer."),
    "deploy": ("Deploys", "Deploys run from GitHub Actions after the tests pass."),
    "db": ("Database", "PostgreSQL is the team database; backups run nightly."),
}


def _fill(store) -> None:
    for doc_id, (title, text) in NOTES.items():
        store.search.index_content(doc_id, text, title)


def test_a_matching_query_scores_high_and_an_unrelated_one_low_on_the_same_scale(open_store):
    store = open_store()
    _fill(store)

    matching = store.search.universal("refresh token rotation for the API", limit=4)
    unrelated = store.search.universal("pnpm", limit=4)

    assert matching.hits[0].doc_id == "auth" and matching.close_match
    assert matching.hits[0].relevance >= 2 * CLOSE_MATCH
    best_unrelated = max(h.relevance for h in unrelated.hits)
    assert not unrelated.close_match and best_unrelated < CLOSE_MATCH
    assert best_unrelated < matching.hits[0].relevance / 3  # well below, not just below
    # The legs' own scores stay in the structured hit beside it.
    assert matching.hits[0].fts_score == 1.0 and matching.hits[0].vector_score is not None
    # The last hit of a search is not low because it is last: the relevance of each hit is its own.
    assert all(0.0 <= h.relevance <= 1.0 for h in matching.hits)


def test_recall_shows_calibrated_relevance_and_the_nearest_of_nothing_stays_low(open_store):
    store = open_store()
    pnpm = store.memories.remember(type="fact", title="Package manager", body="We use pnpm for the web app.").memory
    store.memories.remember(type="fact", title="Staging host", body="The staging database runs on db-new.internal.")
    store.memories.forget(pnpm.id, reason="moved to npm workspaces")

    hits = store.memories.recall("pnpm", count_use=False)
    matching = store.memories.recall("staging database host", count_use=False)

    assert [h.memory.title for h in hits] == ["Staging host"]  # the deprecated one is not shown by default
    assert hits[0].relevance < CLOSE_MATCH  # the unrelated memory is the nearest of nothing, not a match
    assert matching[0].memory.title == "Staging host" and matching[0].relevance >= 2 * CLOSE_MATCH


def test_the_relevance_model_has_one_coefficient_per_feature_and_an_intercept():
    assert all(len(weights) == len(FEATURES) + 1 for weights in COEFFICIENTS.values())
    strong = RelevanceInputs(cosine=0.7, coverage=1.0, text=1.0, text_rank=0, vector_rank=0, lifted=False, place=0)
    weak = RelevanceInputs(cosine=0.05, coverage=0.0, text=0.0, text_rank=None, vector_rank=0, lifted=False, place=0)

    for family in COEFFICIENTS:
        assert relevance(features(strong), family) > 3 * relevance(features(weak), family)
