"""Reciprocal Rank Fusion of ranked lists, keyed by document (reference §4.4, bug §7.16 fixed).

``rrf(d) = Σ_leg 1 / (k + rank_leg(d))`` with 0-based ranks and ``k = 60``; a leg that misses the
document adds nothing. A document reached through several chunks keeps its BEST chunk (the
reference overwrote the vector rank with the worse one): callers dedupe chunks to documents
with :func:`best_per_document` before fusing.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["RRF_K", "Fused", "best_per_document", "reciprocal_rank_fusion"]

RRF_K = 60
T = TypeVar("T")
K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class Fused:
    key: str
    score: float
    ranks: tuple[int | None, ...]  # 0-based rank in each leg, None when the leg missed it


def best_per_document(items: Iterable[T], key: Callable[[T], K]) -> list[T]:
    """The first (best-ranked) item of each key, in order."""
    seen: set[K] = set()
    out: list[T] = []
    for item in items:
        k = key(item)
        if k in seen:
            continue
        seen.add(k)
        out.append(item)
    return out


def reciprocal_rank_fusion(legs: Sequence[Sequence[str]], k: int = RRF_K) -> list[Fused]:
    """Fuse ranked lists of document ids; best first (ties: better best rank, then id)."""
    ranks: dict[str, list[int | None]] = {}
    for leg_index, leg in enumerate(legs):
        for rank, doc_id in enumerate(leg):
            slot = ranks.setdefault(doc_id, [None] * len(legs))
            if slot[leg_index] is None:
                slot[leg_index] = rank
    fused = [
        Fused(doc_id, sum(1.0 / (k + r) for r in slot if r is not None), tuple(slot)) for doc_id, slot in ranks.items()
    ]
    fused.sort(key=lambda f: (-f.score, min(r for r in f.ranks if r is not None), f.key))
    return fused
