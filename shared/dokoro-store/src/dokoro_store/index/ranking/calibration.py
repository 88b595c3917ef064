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
- ``place``: 1 / (1 + its 0-based place in the ranking);
- and five products that let the strength of a match depend on the others: ``cosine²``,
  ``coverage × text``, ``cosine × place``, ``coverage × place``, ``cosine × coverage``.

The coefficients were fitted once by ``bench/fit_calibration.py`` (logistic regression, L2 0.01)
on the LoCoMo *tune* fold (conversations 0-3), a hit labelled relevant when it is a gold evidence
turn of the question, one set per embedder family (its cosines have their own scale); the *report*
fold (conversations 4-6) is only used to measure how well the scores are calibrated
(docs/benchmarks.md, "Calibrated relevance"). An embedder without fitted coefficients (hashing,
Ollama) uses the ``text`` family's, fitted without vectors: its cosine weighs nothing, its
relevance rests on words and places alone.

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

FEATURES = (
    "cosine",
    "coverage",
    "text",
    "agreed",
    "text_first",
    "vector_first",
    "lifted",
    "place",
    "cosine_sq",
    "coverage_text",
    "cosine_place",
    "coverage_place",
    "cosine_coverage",
)
# Intercept first, then one per FEATURES entry (bench/fit_calibration.py, LoCoMo tune fold).
COEFFICIENTS: dict[str, tuple[float, ...]] = {
    # all-MiniLM-L6-v2 int8 (the bundled default): ECE 0.024 on the tune fold, 0.020 on the report fold
    # (refitted after the re-ranker's asks and reply, under which the former gave 0.027 / 0.020).
    "onnx": (-3.454, 0.110, 0.263, 0.347, 0.163, 0.542, 0.190, -0.163, 1.146, 0.087, 0.439, 0.585, 0.801, 0.171),
    # the bundled static model (model2vec): ECE 0.021 / 0.015 (refitted likewise; the former: 0.022 / 0.017).
    "static": (-3.566, -0.010, 0.284, 0.365, 0.205, 0.512, 0.201, -0.027, 1.098, -0.025, 0.454, 0.579, 0.782, 0.149),
    # no vectors (DOKORO_EMBEDDER=none; also any embedder not fitted): ECE 0.027 / 0.029 (refitted likewise;
    # the former: 0.029 / 0.030, and 0.021 / 0.022 before asks and reply, whose replies rank high on few terms).
    "text": (-3.593, 0.0, 0.358, 0.448, 0.0, 0.642, 0.0, -0.058, 1.257, 0.0, 0.561, 0.0, 0.913, 0.0),
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
    cosine, place = hit.cosine or 0.0, 1.0 / (1.0 + hit.place)
    return [
        cosine,
        hit.coverage,
        hit.text,
        1.0 if hit.text_rank == 0 and hit.vector_rank == 0 else 0.0,
        1.0 if hit.text_rank == 0 else 0.0,
        1.0 if hit.vector_rank == 0 else 0.0,
        1.0 if hit.lifted else 0.0,
        place,
        cosine * cosine,
        hit.coverage * hit.text,
        cosine * place,
        hit.coverage * place,
        cosine * hit.coverage,
    ]


def relevance(row: Sequence[float], family: str, coefficients: Sequence[float] | None = None) -> float:
    """The probability that the hit of feature ``row`` is relevant (``family``'s fitted model)."""
    weights = COEFFICIENTS[family] if coefficients is None else coefficients
    z = weights[0] + sum(w * x for w, x in zip(weights[1:], row, strict=True))
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)
