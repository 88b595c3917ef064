"""The second stage: the fused candidates re-ordered by the fitted linear model."""

from __future__ import annotations

from dokoro_store.retrieval.hybrid import Scored
from dokoro_store.retrieval.planner import plan_query
from dokoro_store.retrieval.rerank import FEATURES, RERANK_DEPTH, WEIGHTS, coverage, features, rerank

QUERY = "Which city is Ana travelling to for the pottery workshop?"
TEXTS = {
    "noise": "Ben: My cat knocked over a plant this morning and the soil went everywhere.",
    "answer": "Ana: I'm flying to Lisbon for a week of ceramics classes at a pottery studio.",
    "tail": "Release checklist: changelog, version bump, tag, publish.",
}


FILLER_TEXTS = {f"f{i}": f"Quarterly report {i}: revenue, costs and the hiring plan." for i in range(4)}
FILLER = [Scored(f"f{i}", score=0.1) for i in range(4)]  # enough candidates for the static cosine's scale


def _texts(ids):
    return {doc_id: {**TEXTS, **FILLER_TEXTS}[doc_id] for doc_id in ids}


def test_the_candidate_closer_in_meaning_overtakes_a_slightly_better_fused_one():
    candidates = [Scored("noise", score=1.0, text=0.5), Scored("answer", score=0.9, text=0.4), *FILLER]

    ranked = rerank(plan_query(QUERY), QUERY, candidates, _texts)

    assert [c.doc_id for c in ranked][:2] == ["answer", "noise"]
    assert ranked[0].score > ranked[1].score


def test_a_clear_lead_in_the_fused_score_is_kept():
    candidates = [Scored("noise", score=5.0, text=1.0), Scored("answer", score=0.9, text=0.4), *FILLER]

    ranked = rerank(plan_query(QUERY), QUERY, candidates, _texts)

    assert [c.doc_id for c in ranked][:2] == ["noise", "answer"]


def test_without_vectors_the_static_model_is_not_consulted_and_the_fused_order_stays():
    candidates = [Scored("noise", score=1.0, text=0.5), Scored("answer", score=0.9, text=0.4), *FILLER]

    ranked = rerank(plan_query(QUERY), QUERY, candidates, _texts, vectors=False)

    assert [c.doc_id for c in ranked][:2] == ["noise", "answer"]


def test_the_reordered_block_keeps_its_scores_above_the_rest():
    head = [Scored(f"h{i}", score=3.0 - i * 0.01) for i in range(RERANK_DEPTH)]
    tail = [Scored("tail", score=2.99)]
    texts = {f"h{i}": f"text number {i}" for i in range(RERANK_DEPTH)} | {"tail": TEXTS["tail"]}

    ranked = rerank(plan_query("text"), "text", head + tail, lambda ids: {i: texts[i] for i in ids})

    assert ranked[-1].doc_id == "tail"
    assert min(c.score for c in ranked[:-1]) > ranked[-1].score
    assert [c.score for c in ranked] == sorted((c.score for c in ranked), reverse=True)


def test_features_describe_every_candidate_and_the_weights_match_them():
    candidates = [Scored("answer", text=0.4, vector=0.8, lift=0.1, graph=True), Scored("noise"), *FILLER]

    rows = features(plan_query(QUERY), QUERY, candidates, _texts([c.doc_id for c in candidates]))

    assert len(WEIGHTS) == len(FEATURES) == len(rows[0])
    named = dict(zip(FEATURES, rows[0], strict=True))
    assert named["text"] == 0.4 and named["vector"] == 0.8 and named["graph"] == 1.0
    statics = [dict(zip(FEATURES, row, strict=True))["static"] for row in rows]
    assert named["static"] == 1.0 == max(statics) and min(statics) == 0.0  # rescaled over the candidates


def test_coverage_counts_query_terms_in_any_script_and_never_raises():
    assert coverage(plan_query("pottery workshop Lisbon"), TEXTS["answer"]) == 2 / 3
    assert coverage(plan_query("陶芸 ワークショップ"), "週末に陶芸のワークショップへ行った") == 1.0
    assert coverage(plan_query('"; DROP TABLE docs; -- NEAR(*'), "drop table docs") > 0
    assert coverage(plan_query("the of and"), "") == 0.0
