"""The types of a search: its modes, the graph signal and scoped vector leg it is handed (small
Protocols), what its legs found, and the ranking before its hits are built (``Ranked``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal, Protocol

from dokoro_store.db.engine import Database
from dokoro_store.index.fulltext.index import TextHit
from dokoro_store.index.fulltext.planner import PlannedQuery
from dokoro_store.index.ranking.calibration import CLOSE_MATCH
from dokoro_store.index.ranking.fusion import (
    Fused,
)
from dokoro_store.index.ranking.hits import build_hits
from dokoro_store.index.ranking.neighbours import StoredVectors
from dokoro_store.index.scope import DocScope
from dokoro_store.index.vectors.index import VectorHit
from dokoro_store.results.search import (
    SearchHit,
)
from dokoro_store.semantic.documents.service import IndexReport
from dokoro_store.semantic.documents.workspace import ReconcileReport

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vector = npt.NDArray[np.float32]


SearchMode = Literal["hybrid", "keyword", "semantic"]


class GraphHit(Protocol):
    """A document the graph links to entities named in the query (``graph_queries.GraphLink``)."""

    @property
    def doc_id(self) -> str: ...

    @property
    def entities(self) -> tuple[str, ...]: ...


# The graph signal: (query, depth) → documents linked to entities named in the query, best first
# (GraphService.search_signal).
GraphSignal = Callable[[str, int], Sequence[GraphHit]]


class ScopedVectors(Protocol):
    """A vector leg for some scopes (recall's, on a large store: ``retrieval.memory_index``)."""

    def search(self, vector: Vector, embedder: str, k: int, scope: DocScope) -> list[VectorHit] | None:
        """The engine's answer for ``scope``, or None when the engine should answer."""
        ...

    def stored_vectors(self, doc_ids: Sequence[str], embedder: str) -> list[tuple[str, str, Vector]] | None:
        """The candidates' chunk vectors as the last search saw them (None: read them)."""
        ...


SEARCH_MODES: tuple[SearchMode, ...] = ("hybrid", "keyword", "semantic")
MAX_LIMIT = 100


@dataclass
class RefreshReport:
    reconcile: ReconcileReport | None = None
    index: IndexReport | None = None
    notes: list[str] = field(default_factory=list)


@dataclass
class Legs:
    """What the legs of one search found (:meth:`SearchService.legs`)."""

    planned: PlannedQuery
    scored: bool  # hybrid: fused by score (else one leg, in its order)
    engine: str
    text_hits: list[TextHit] = field(default_factory=list)
    vector_hits: list[VectorHit] = field(default_factory=list)
    graph_hits: list[GraphHit] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    embedder_id: str | None = None
    query_vector: Vector | None = None
    # The candidates' vectors held by whatever answered the vector leg (None: the engine's or read).
    stored: StoredVectors | None = None
    texts: dict[str, str] = field(default_factory=dict)  # texts the legs read (doc id → "<title>\n<content>")


@dataclass
class Ranked:
    """A search's best documents in order (the search service's ``ranked``), their hits built on demand."""

    _db: Database
    legs: Legs
    top: list[Fused]
    _text_by_doc: dict[str, TextHit]
    _vector_by_doc: dict[str, VectorHit]
    _graph_by_doc: dict[str, GraphHit]
    _lifted: dict[str, str] | None
    retired: dict[str, str] = field(default_factory=dict)  # retired memories' documents → their state in words
    relevance: dict[str, float] = field(default_factory=dict)  # calibrated (:mod:`.calibration`), per document
    features: dict[str, list[float]] = field(default_factory=dict)  # what the relevance was computed from
    stale: dict[str, str] = field(default_factory=dict)  # stale memories' documents → why, in words

    @property
    def close_match(self) -> bool:
        """Whether any hit reaches :data:`~dokoro_store.index.ranking.calibration.CLOSE_MATCH`."""
        return any(p >= CLOSE_MATCH for p in self.relevance.values())

    @property
    def scores(self) -> list[tuple[str, float]]:
        """(document id, score) best first, the score as the hit shows it."""
        return [(f.key, round(f.score, 6)) for f in self.top]

    def hits(self, doc_ids: Sequence[str] | None = None) -> list[SearchHit]:
        """The hits of ``doc_ids`` (default: all) in ranking order (ranks counted among them)."""
        top = self.top if doc_ids is None else [f for f in self.top if f.key in set(doc_ids)]
        return build_hits(
            self._db,
            top,
            self.legs.planned,
            self._text_by_doc,
            self._vector_by_doc,
            self._graph_by_doc,
            self._lifted,
            self.retired,
            self.relevance,
            self.stale,
        )


def _utc_now() -> datetime:
    return datetime.now(UTC)
