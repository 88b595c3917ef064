"""Hybrid search rebuilt from the store's public pieces, with parts turned off: the benches' ablations.

``search_universal`` has one path (``SearchService.ranked``); it takes no settings. An ablation row
runs the same steps from the pieces the store exposes — ``store.search.legs`` (what each leg
finds), ``fuse_scores`` with other :class:`FusionSettings`, the re-ranker's ``features`` under other
weights, ``keep_agreement`` — so the product carries no switch for a bench. :func:`ranking` with
the default :class:`Variant` must give ``search_universal``'s ranking: ``bench/locomo_retrieval.py``
checks it on every question (row ``pieces``), so the rows cannot drift from the product unseen.

Only hybrid mode over documents without a scope (what the LoCoMo benches ask): the retired and stale
memories' demotion and the scope's filter of thread neighbours are left out (no LoCoMo turn is a
memory).

The ideas of issue 48 measured and not kept in the product live here as :class:`Variant` fields
(``bench/retrieval_ideas.py`` holds their steps), so their rows stay reproducible.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

import retrieval_ideas as ideas
from dokoro_store import Store
from dokoro_store.index.ranking.fusion import DEFAULT_FUSION, RRF_K, FusionSettings, reciprocal_rank_fusion
from dokoro_store.index.ranking.hybrid import Scored, fuse_scores, keep_agreement, unlike_only
from dokoro_store.index.ranking.rerank import FEATURES, RERANK_DEPTH, WEIGHTS, features

__all__ = ["Variant", "ranking", "without"]


@dataclasses.dataclass(frozen=True)
class Variant:
    """One way to rank: the product's (the defaults) or the product with a part changed."""

    fusion: FusionSettings = DEFAULT_FUSION
    method: Literal["score", "rrf"] = "score"  # rrf: reciprocal rank fusion of the legs (the path before score fusion)
    rerank: bool = True  # the second stage
    weights: tuple[float, ...] = WEIGHTS  # the re-ranker's, one per ``rerank.FEATURES``
    depth: int = RERANK_DEPTH  # candidates the re-ranker re-orders
    graph: bool = True
    speaker_query: bool = True  # the vector leg reads the query less the one speaker it names too (kept)
    # Issue 48's ideas, measured and not kept (0: off; bench/retrieval_ideas.py):
    quota: int = 0  # at most this many turns of one thread in the page (diversity)
    thread_penalty: float = 0.0  # MMR-like: each turn of a thread already in the page costs this (× the best)
    graph_expand: int = 0  # documents linked to the entities named in the first 3 hits join the candidates
    thread_expand: int = 0  # every turn of the best threads of a first ranking joins the candidates
    thread_boost: float = 0.0  # two stages: a turn gains this × its thread's score (the mean of its best two)
    prf_terms: int = 0  # RM3-like: the full-text leg also searches the first hits' most distinctive terms
    rocchio: int = 0  # the vector leg searches again toward the first hits' centroid and adds this many
    preference: float = 0.0  # the re-ranker's weight of a trait question's named speaker stating a preference


def without(names: tuple[str, ...], weights: tuple[float, ...] = WEIGHTS) -> tuple[float, ...]:
    """The re-ranker's weights with these features' set to 0 (no refit)."""
    unknown = set(names) - set(FEATURES)
    if unknown:
        raise ValueError(f"no re-ranker feature {', '.join(sorted(unknown))}; one of {', '.join(FEATURES)}")
    return tuple(0.0 if f in names else w for f, w in zip(FEATURES, weights, strict=True))


def ranking(store: Store, query: str, variant: Variant, limit: int = 10) -> list[str]:
    """The ids of the best ``limit`` documents for ``query`` ranked as ``variant`` says."""
    search = store.search
    if variant.method == "rrf":
        # Rank fusion looked at fewer candidates per leg (enough to find agreement, few enough that
        # a weak leg's tail cannot outvote the other's top hits).
        legs = search.legs(query, "hybrid", variant.graph, limit=limit, depth=max(limit * 3 // 2, 10))
        lists = [[h.doc_id for h in legs.text_hits], [h.doc_id for h in legs.vector_hits]]
        lists.append([g.doc_id for g in legs.graph_hits])
        return [f.key for f in reciprocal_rank_fusion(lists, RRF_K)[:limit]]
    depth = max(variant.fusion.depth, limit)
    legs = search.legs(query, "hybrid", variant.graph, limit=limit, depth=depth)
    if not variant.speaker_query and legs.embedder_id is not None:
        # The vector leg of the query as it is (the product blends in the query less a speaker's name).
        embedder = store.embedder.get()
        assert embedder is not None
        legs.query_vector = embedder.embed([query], query=True)[0]
        legs.vector_hits, legs.stored = search.vector_leg(legs.query_vector, legs.embedder_id, depth)
    if not legs.text_hits and not legs.vector_hits:
        return []
    fused = _fused(store, legs, variant)
    if variant.graph_expand or variant.thread_expand or variant.prf_terms or variant.rocchio:
        vectors = legs.embedder_id is not None
        first = keep_agreement(_rerank(store, legs.planned, query, fused, variant, limit, vectors=vectors))
        ideas.second_pass(store, query, legs, [s.doc_id for s in first], variant, depth)
        fused = _fused(store, legs, variant)
    if variant.rerank:
        fused = _rerank(store, legs.planned, query, fused, variant, limit, vectors=legs.embedder_id is not None)
    ranked = [s for s in keep_agreement(fused) if not unlike_only(s)]  # as the product does
    if variant.thread_boost:
        ranked = ideas.thread_boosted(store, ranked, variant.thread_boost)
    ids = [s.doc_id for s in ranked]
    if variant.quota or variant.thread_penalty:
        ids = ideas.diversified(store, ranked, variant.quota, variant.thread_penalty, limit)
    return ids[:limit]


def _fused(store: Store, legs: Any, variant: Variant) -> list[Scored]:
    return fuse_scores(
        store.db,
        variant.fusion,
        legs.text_hits,
        legs.vector_hits,
        [g.doc_id for g in legs.graph_hits],
        embedder=legs.embedder_id,
        query_vector=legs.query_vector,
        stored=legs.stored,
    )


def _rerank(
    store: Store, planned: Any, query: str, candidates: list[Scored], variant: Variant, limit: int, *, vectors: bool
) -> list[Scored]:
    """``rerank.rerank`` under ``variant``'s weights and depth (the same arithmetic, so ties break alike)."""
    depth = max(variant.depth, limit)
    head, tail = candidates[:depth], candidates[depth:]
    if len(head) < 2:
        return candidates
    weights = variant.weights
    wanted = {name for name, weight in zip(FEATURES, weights, strict=True) if weight}
    texts = store.search.texts([c.doc_id for c in head])
    rows = features(planned, query, head, texts, vectors=vectors, wanted=wanted)
    values = [
        c.score + sum(w * x for w, x in zip(weights, row, strict=True) if w) for c, row in zip(head, rows, strict=True)
    ]
    if variant.preference:
        stated = ideas.stated_preferences(query, [texts.get(c.doc_id, "") for c in head])
        values = [v + variant.preference * p for v, p in zip(values, stated, strict=True)]
    floor = min(values)
    tail_top = max((c.score for c in tail), default=0.0)
    for candidate, value in zip(head, values, strict=True):
        candidate.score = tail_top + 1e-6 + (value - floor)
    head.sort(key=lambda c: (-c.score, c.doc_id))
    return head + tail
