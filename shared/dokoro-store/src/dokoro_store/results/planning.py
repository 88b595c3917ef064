"""Results of the planning helpers: every answer names the documents (and plans) it drew on.

Scores are full precision in Python; on the wire a fused score has six decimals and a cosine
or similarity four.
"""

from __future__ import annotations

from typing import Annotated

from dokoro_store.results.base import IsoTime, Result
from dokoro_store.results.rounding import rounded

__all__ = [
    "ConflictCheck",
    "DuplicateCheck",
    "FeaturePlan",
    "PlanMatch",
    "RegressionHistory",
    "ResearchCaptured",
    "Source",
    "Suggestion",
    "WhatsNext",
]

Cosine = Annotated[float, rounded(4)]


class Source(Result):
    """A document an answer drew on, why it surfaced, and what it is (regression, decision, constraint)."""

    doc_id: str
    title: str
    filepath: str
    doc_type: str
    status: str
    updated_at: IsoTime
    score: Annotated[float, rounded(6)]
    cosine: Cosine | None
    why: str
    excerpt: str
    labels: tuple[str, ...]


class PlanMatch(Result):
    """A plan close to the question; ``similarity`` is None when it matched by shared words."""

    id: str
    title: str
    status: str
    completion: int
    archived: bool
    similarity: Cosine | None


class FeaturePlan(Result):
    """A feature plan saved under planning/ (``path``, relative to the workspace) and indexed."""

    feature: str
    approach: str
    path: str
    doc_id: str
    research: tuple[Source, ...]
    docs: tuple[Source, ...]
    similar: tuple[Source, ...]
    conflicts: tuple[Source, ...]
    plans: tuple[PlanMatch, ...]
    notes: tuple[str, ...]


class ResearchCaptured(Result):
    path: str
    doc_id: str
    title: str
    chunks: int
    indexed: bool
    notes: tuple[str, ...]


class Suggestion(Result):
    """A next step: plan | blocker | question | related | research | stale, and its sources
    (document, plan or question ids)."""

    kind: str
    text: str
    sources: tuple[str, ...]


class WhatsNext(Result):
    context: str | None
    suggestions: tuple[Suggestion, ...]
    related: tuple[Source, ...]
    research: tuple[Source, ...]
    notes: tuple[str, ...]


class ConflictCheck(Result):
    """What could clash with a feature, and how many search hits were looked at."""

    feature: str
    conflicts: tuple[Source, ...]
    plans: tuple[PlanMatch, ...]
    searched: int
    notes: tuple[str, ...]


class DuplicateCheck(Result):
    description: str
    finished: tuple[Source, ...]
    unfinished: tuple[Source, ...]
    plans: tuple[PlanMatch, ...]
    notes: tuple[str, ...]


class RegressionHistory(Result):
    component: str
    regressions: tuple[Source, ...]
    notes: tuple[str, ...]
