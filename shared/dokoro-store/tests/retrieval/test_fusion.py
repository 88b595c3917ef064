"""Reciprocal rank fusion, keyed by document, best chunk per document (reference bug §7.16 fixed)."""

from __future__ import annotations

import pytest
from dokoro_store.index.ranking.fusion import best_per_document, reciprocal_rank_fusion
from dokoro_store.index.vectors.index import VectorHit


def test_a_document_found_by_both_legs_outranks_one_found_by_a_single_leg():
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["c", "d"]])

    assert [f.key for f in fused] == ["c", "a", "b", "d"]  # b and d tie at rank 1: by id
    assert fused[0].ranks == (2, 0)
    assert fused[0].score == pytest.approx(1 / 62 + 1 / 60)
    assert fused[1].score == pytest.approx(1 / 60)


def test_ties_are_broken_by_the_better_rank_then_the_id():
    fused = reciprocal_rank_fusion([["x", "y"], ["y", "x"]])

    assert [f.key for f in fused] == ["x", "y"]


def test_k_is_60_by_default():
    (only,) = reciprocal_rank_fusion([["a"], []])

    assert only.score == pytest.approx(1 / 60)
    assert only.ranks == (0, None)


def test_several_chunks_of_one_document_keep_the_best_rank():
    hits = [VectorHit("a_0", "a", 0.9), VectorHit("b_0", "b", 0.8), VectorHit("a_3", "a", 0.2)]

    best = best_per_document(hits, lambda h: h.doc_id)

    assert [(h.chunk_id, h.doc_id) for h in best] == [("a_0", "a"), ("b_0", "b")]
    fused = reciprocal_rank_fusion([[], [h.doc_id for h in best]])
    assert fused[0].key == "a" and fused[0].ranks == (None, 0)
