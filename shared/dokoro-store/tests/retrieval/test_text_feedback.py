"""Pseudo-relevance feedback on the full-text leg (opt-in): expansion words and the mixed leg."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from dokoro_store.retrieval.fulltext import TextHit
from dokoro_store.retrieval.fusion import DEFAULT_FUSION
from dokoro_store.retrieval.planner import plan_query
from dokoro_store.retrieval.text_feedback import expansion_terms, mix

from .test_planner import HOSTILE

HITS = [
    "Ana: the pottery kiln at the studio fires glazes overnight",
    "Ana: my pottery teacher says the kiln needs new glazes",
    "Ben: pottery is fun",
    "Ben: fun weekend, the pottery fair was crowded",
    "Ana: fun fact, pottery is old",
]


def test_expansion_words_come_from_the_best_hits_and_are_rare_among_all_hits() -> None:
    terms = expansion_terms(plan_query("pottery lessons"), HITS, [1.0, 0.9, 0.5, 0.4, 0.3], docs=2, count=3)

    assert set(terms[:2]) == {"glazes", "kiln"}  # in both of the best hits
    assert len(terms) == 3 and "fun" not in terms  # only in the weaker hits
    assert "pottery" not in terms  # the query's own word (and every hit holds it)
    assert "the" not in terms and "ana" not in terms  # stop words; a word most hits hold counts for little


def test_no_expansion_without_hits_or_query_and_never_a_raise_on_hostile_or_cjk_text() -> None:
    assert expansion_terms(plan_query("pottery"), [], []) == ()
    assert expansion_terms(plan_query(""), HITS, [1.0] * len(HITS)) == ()
    texts = [*HOSTILE, "週末に陶芸のワークショップへ行った", "陶芸の窯"]
    for query in HOSTILE:
        terms = expansion_terms(plan_query(query), texts, [1.0] * len(texts))
        assert all(isinstance(t, str) and t for t in terms)
    cjk = expansion_terms(plan_query("陶芸"), ["陶芸 kiln glazes", "陶芸 kiln"], [1.0, 0.8])
    assert "kiln" in cjk


def test_mix_adds_the_expansions_hits_with_their_share_and_keeps_the_best_at_one() -> None:
    original = [TextHit("a", 1.0, "words"), TextHit("b", 0.5, "words")]
    expanded = [TextHit("c", 1.0, "words"), TextHit("b", 0.8, "words")]

    mixed = mix(original, expanded, 0.5, 10)

    scores = {h.doc_id: h.score for h in mixed}
    assert scores == pytest.approx({"b": 1.0, "a": 0.5 / 0.65, "c": 0.5 / 0.65})
    assert mixed[0].doc_id == "b" and max(scores.values()) == 1.0
    assert mix(original, [], 0.5, 10) == original and mix(original, expanded, 0.0, 10) == original
    assert len(mix(original, expanded, 0.5, 2)) == 2


def test_feedback_finds_a_document_that_shares_no_word_with_the_query(search_store: Any) -> None:
    docs = {
        "kiln-1": "The pottery studio's kiln fires the glazes overnight.",
        "kiln-2": "My pottery teacher says the kiln needs new glazes.",
        "glaze": "Celadon glazes crack in a cold kiln.",
        "other": "The garden needs water in summer.",
    }
    for doc_id, content in docs.items():
        search_store.docs.index_content(doc_id, content, doc_id)
    on = dataclasses.replace(DEFAULT_FUSION, text_feedback_weight=0.5, rerank=False)

    without = search_store.search.universal("pottery", mode="hybrid", graph=False, fusion=DEFAULT_FUSION)
    with_feedback = search_store.search.universal("pottery", mode="hybrid", graph=False, fusion=on)

    found = {h.doc_id: h for h in with_feedback.hits}
    assert "glaze" in found and found["glaze"].fts_score is not None
    assert "glaze" not in {h.doc_id for h in without.hits if h.fts_score is not None}
    assert DEFAULT_FUSION.text_feedback_weight == 0.0  # opt-in
