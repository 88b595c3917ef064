"""The second stage of hybrid search: re-order the fused candidates (placeholder until measured)."""

from __future__ import annotations

from collections.abc import Sequence

from dokoro_store.db.engine import Database
from dokoro_store.retrieval.hybrid import Scored
from dokoro_store.retrieval.planner import PlannedQuery

__all__ = ["RERANKER_LABEL", "rerank"]

RERANKER_LABEL = "none"


def rerank(db: Database, planned: PlannedQuery, candidates: Sequence[Scored], limit: int) -> list[Scored]:
    return list(candidates)
