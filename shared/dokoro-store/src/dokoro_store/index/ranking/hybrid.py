"""Score fusion of the hybrid search legs, with thread neighbours and context vectors.

Reciprocal rank fusion throws the scores away: a document first in full text by a wide margin and
absent from the vector list ties with one ranked tenth in both. Hybrid search instead adds the
legs' *scores*, each on a scale comparable across queries:

- full text: bm25 relative to the query's best hit (1.0), times ``text_weight``;
- vectors: the cosine of the document's best chunk, rescaled so the vector leg's floor (the cosine
  at ``vector_floor`` of its list) is 0 and the best candidate is 1, times ``vector_weight``. Every
  candidate gets its cosine (read back from the stored vectors), not only those in the vector list;
- context vectors: for an entry of a thread, the cosine is averaged with the cosine of the entry
  read together with the entries beside it (their mean vector), so a short reply ("yes, last
  Tuesday!") carries some of its question's meaning;
- neighbours: an entry gains ``neighbour_weight`` × the best score of the entries beside it (two
  places away: times ``neighbour_decay``), and neighbours of strong candidates join the candidates;
- graph: documents the entity graph links to entities named in the query gain ``graph_weight``.

Each leg stays a plain list of candidates (document id, score), so a leg's SQL can take more
conditions (filters inside the legs) without touching the fusion.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dokoro_store.db.engine import Database
from dokoro_store.index.ranking.fusion import FusionSettings, quantile_from_top, rescale
from dokoro_store.index.ranking.neighbours import DocVectors, StoredVectors, ThreadMap, load_doc_vectors, load_threads

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from dokoro_store.index.fulltext.index import TextHit
    from dokoro_store.index.vectors.index import VectorHit

__all__ = ["AGREEMENT_PLACES", "Scored", "fuse_scores", "keep_agreement", "unlike_only"]

# Neighbours are fetched for this many of the best candidates (the rest cannot climb into a page).
_EXPAND = 40
_FEEDBACK_DOCS = 3  # pseudo-relevance feedback reads this many of the best candidates
# A document both legs rank first stays within this many places of the top (:func:`keep_agreement`).
AGREEMENT_PLACES = 3


@dataclass
class Scored:
    """One fused candidate and the parts of its score."""

    doc_id: str
    score: float = 0.0
    base: float = 0.0  # before the neighbours' lift
    text: float = 0.0  # full text, relative to the best hit
    cosine: float | None = None  # the best chunk's cosine with the query
    vector: float = 0.0  # the rescaled vector score
    chunk_id: str | None = None
    lifted_by: str | None = None  # the neighbour whose score lifted this one most
    lift: float = 0.0
    graph: bool = False
    text_rank: int | None = None
    vector_rank: int | None = None
    previous: str | None = None  # the entry just before this one in its thread (the re-ranker's ``reply``)


def fuse_scores(  # noqa: C901 - the fusion's steps in the order they score; split, each would take the same dozen arguments
    db: Database,
    settings: FusionSettings,
    text_hits: Sequence[TextHit],
    vector_hits: Sequence[VectorHit],
    graph_ids: Sequence[str],
    *,
    embedder: str | None,
    query_vector: npt.NDArray[np.float32] | None,
    stored: StoredVectors | None = None,
) -> list[Scored]:
    """Every candidate of the legs (and their thread neighbours), best first (``stored``: the vector
    engine's copy of the vectors in memory, read instead of the database when it has one)."""
    scored: dict[str, Scored] = {}
    for rank, hit in enumerate(text_hits):
        item = scored.setdefault(hit.doc_id, Scored(hit.doc_id))
        item.text, item.text_rank = hit.score, rank
    for rank, vhit in enumerate(vector_hits):
        item = scored.setdefault(vhit.doc_id, Scored(vhit.doc_id))
        if item.vector_rank is None:
            item.vector_rank, item.cosine, item.chunk_id = rank, vhit.score, vhit.chunk_id
    for doc_id in graph_ids:
        if doc_id in scored:
            scored[doc_id].graph = True
    if not scored:
        return []
    threads = ThreadMap()
    if settings.neighbour_weight > 0:
        # Rank provisionally to pick whose neighbours are worth loading.
        provisional = sorted(scored.values(), key=lambda s: -(settings.text_weight * s.text + (s.cosine or 0.0)))
        threads = load_threads(db, [s.doc_id for s in provisional[:_EXPAND]] + list(scored))
        for item in provisional[:_EXPAND]:
            for distance in (1, 2):
                for other in threads.neighbours(item.doc_id, distance):
                    scored.setdefault(other, Scored(other))
    vectors = None
    if embedder is not None and query_vector is not None and settings.vector_weight > 0:
        vectors = _vector_scores(db, settings, scored, vector_hits, embedder, query_vector, stored=stored)
    _base(settings, scored)
    if vectors is not None and query_vector is not None and settings.feedback_weight > 0:
        # Pseudo-relevance feedback: move the query toward the best few candidates and score again.
        top = sorted(scored.values(), key=lambda s: -s.base)[:_FEEDBACK_DOCS]
        moved = [vectors.mean[s.doc_id] for s in top if s.doc_id in vectors.mean]
        if moved:
            import numpy as np

            shifted = query_vector + settings.feedback_weight * np.mean(moved, axis=0)
            shifted = (shifted / (np.linalg.norm(shifted) or 1.0)).astype(np.float32)
            _vector_scores(db, settings, scored, vector_hits, embedder or "", shifted, vectors)
            _base(settings, scored)
    if settings.neighbour_weight > 0:
        for item in scored.values():
            for distance, factor in ((1, 1.0), (2, settings.neighbour_decay)):
                for other in threads.neighbours(item.doc_id, distance):
                    gain = settings.neighbour_weight * factor * scored[other].base if other in scored else 0.0
                    if gain > item.lift:
                        item.lift, item.lifted_by = gain, other
            item.score = item.base + item.lift
            item.previous = threads.previous(item.doc_id)
    return sorted(scored.values(), key=lambda s: (-s.score, s.text_rank is None, s.doc_id))


def _base(settings: FusionSettings, scored: dict[str, Scored]) -> None:
    for item in scored.values():
        item.base = settings.text_weight * item.text + settings.vector_weight * item.vector
        if item.graph:
            item.base += settings.graph_weight
        item.score = item.base


def _vector_scores(
    db: Database,
    settings: FusionSettings,
    scored: dict[str, Scored],
    vector_hits: Sequence[VectorHit],
    embedder: str,
    query: npt.NDArray[np.float32],
    loaded: DocVectors | None = None,
    stored: StoredVectors | None = None,
) -> DocVectors:
    vectors = load_doc_vectors(db, set(scored), embedder, query, stored) if loaded is None else loaded.rescored(query)
    raw: dict[str, float] = {}
    for doc_id, item in scored.items():
        if doc_id not in vectors.best:
            continue
        value = vectors.best[doc_id]
        if loaded is None:  # the cosine shown is the query's own, not the feedback pass's
            item.cosine = value
            item.chunk_id = item.chunk_id or vectors.best_chunk[doc_id]
        raw[doc_id] = value
    if not raw:
        return vectors
    leg = [raw[h.doc_id] for h in vector_hits if h.doc_id in raw] or list(raw.values())
    floor = quantile_from_top(leg, settings.vector_floor)
    scaled = rescale(raw, floor, max(raw.values()))
    for doc_id, value in scaled.items():
        scored[doc_id].vector = value
    return vectors


def keep_agreement(ranked: list[Scored], places: int = AGREEMENT_PLACES) -> list[Scored]:
    """The ranking with the document both legs rank first (full text #1 and vectors #1) within the
    top ``places``: **a boost never buries agreement.**

    The boosts (the graph's lift of documents linked to entities named in the query, the thread
    neighbours' lift, the re-ranker's features) each add to a document's score on evidence weaker
    than two independent legs agreeing on their best answer. Added together they may still lift
    two other documents above it, reordering the top, but not more: when it has fallen below
    place ``places`` it is put back at that place, scored between its new neighbours so scores
    still fall with rank. Nothing else moves relative to the others. Without such a document (the
    legs disagree, or one found nothing) the ranking is returned unchanged.
    """
    at = next((i for i, s in enumerate(ranked) if s.text_rank == 0 and s.vector_rank == 0), None)
    if at is None or at < places:
        return ranked
    agreed = ranked[at]
    out = ranked[:at] + ranked[at + 1 :]
    slot = places - 1  # 0-based: the last of the top places
    below = out[slot].score  # the document it goes above (there is one: it was below place ``places``)
    above = out[slot - 1].score if slot > 0 else below + 2e-6
    agreed.score = (above + below) / 2
    out.insert(slot, agreed)
    return out


def unlike_only(scored: Scored) -> bool:
    """A candidate whose only evidence is a meaning opposite to the query's (a cosine at or below
    zero, no word matched, no graph link, no neighbour lifting it): not a hit, never listed."""
    return (
        scored.cosine is not None
        and scored.cosine <= 0
        and scored.text_rank is None
        and not scored.graph
        and scored.lift <= 0
    )
