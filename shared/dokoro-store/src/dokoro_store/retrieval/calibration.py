"""Relevance on one scale across queries: how likely a hit is to be what the query asks for.

The fused score of hybrid search only orders one query's hits (bm25 relative to the best hit,
cosines rescaled over the vector leg, a re-ranker's shift): the last hit of any query scores low
and the first high, however well either matches. An agent needs the other reading, "how likely is
this hit relevant", comparable between queries, so it can tell a real answer from the nearest of
nothing ("no close match; the nearest are …").

``relevance`` is a logistic model over features that mean the same in every query:

- ``cosine``: the raw cosine of the hit's best chunk with the query (0 without vectors);
- ``coverage``: the share of the query's content terms the hit's text holds;
- ``text``: its full-text score relative to the query's best full-text hit (0: not a text match);
- ``agreed``: both legs ranked it first; ``text_first`` / ``vector_first``: one leg did;
- ``lifted``: it surfaced beside a matching thread entry rather than on its own match;
- ``place``: 1 / (1 + its 0-based place in the ranking).

The coefficients were fitted once by ``bench/fit_calibration.py`` (logistic regression, L2 0.01)
on the LoCoMo *tune* fold (conversations 0-3), a hit labelled relevant when it is a gold evidence
turn of the question, one set per embedder family (its cosines have their own scale); the *report*
fold (conversations 4-6) is only used to measure how well the scores are calibrated
(docs/benchmarks.md, "Calibrated relevance"). An embedder without fitted coefficients uses the
``text`` family's (no cosine feature): its relevance rests on words alone.

A relevance is an estimate on that benchmark's notion of relevant (an evidence turn), not a
promise about every store; what it gives everywhere is the scale: the same number means the same
strength of match in every query, and :data:`CLOSE_MATCH` separates a match from the nearest of
nothing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "CLOSE_MATCH",
    "COEFFICIENTS",
    "FEATURES",
    "RelevanceInputs",
    "family_of",
    "features",
    "relevance",
]

FEATURES = ("cosine", "coverage", "text", "agreed", "text_first", "vector_first", "lifted", "place")
# Intercept first, then one per FEATURES entry (bench/fit_calibration.py, LoCoMo tune fold).
COEFFICIENTS: dict[str, tuple[float, ...]] = {
    "onnx": (-4.0, 4.0, 1.5, 0.5, 0.5, 0.3, 0.3, 0.3, 1.0),
    "static": (-4.0, 4.0, 1.5, 0.5, 0.5, 0.3, 0.3, 0.3, 1.0),
    "text": (-3.5, 0.0, 1.8, 0.6, 0.0, 0.4, 0.0, 0.3, 1.0),
}
# Below this relevance a hit is not a close match: when no hit reaches it, the answer says so.
CLOSE_MATCH = 0.15


@dataclass(frozen=True)
class RelevanceInputs:
    """What the ranking knows of one hit, for :func:`features`."""

    cosine: float | None
    coverage: float
    text: float
    text_rank: int | None
    vector_rank: int | None
    lifted: bool
    place: int


def family_of(embedder: str | None) -> str:
    """The coefficient set of an embedder id (``onnx:…``, ``static:…``; anything else: ``text``)."""
    if embedder is None:
        return "text"
    kind = embedder.split(":", 1)[0]
    return kind if kind in COEFFICIENTS else "text"


def features(hit: RelevanceInputs) -> list[float]:
    """One row of :data:`FEATURES`."""
    return [
        hit.cosine or 0.0,
        hit.coverage,
        hit.text,
        1.0 if hit.text_rank == 0 and hit.vector_rank == 0 else 0.0,
        1.0 if hit.text_rank == 0 else 0.0,
        1.0 if hit.vector_rank == 0 else 0.0,
        1.0 if hit.lifted else 0.0,
        1.0 / (1.0 + hit.place),
    ]


def relevance(row: Sequence[float], family: str, coefficients: Sequence[float] | None = None) -> float:
    """The probability that the hit of feature ``row`` is relevant (``family``'s fitted model)."""
    weights = COEFFICIENTS[family] if coefficients is None else coefficients
    if family == "text" and coefficients is None:
        row = [0.0, *row[1:]]  # no cosine on this scale
    z = weights[0] + sum(w * x for w, x in zip(weights[1:], row, strict=True))
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)
