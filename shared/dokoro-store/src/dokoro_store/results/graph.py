"""Results of the entity graph (semantic layer): entities, bi-temporal relations, the linked
documents, and what a deep extraction saved."""

from __future__ import annotations

from typing import Literal

from dokoro_store.results.base import IsoTime, Result

__all__ = [
    "DeepEntity",
    "DeepExtraction",
    "DeepRelation",
    "EntityGraph",
    "GraphEntity",
    "GraphRelation",
    "GraphStats",
    "LinkedDoc",
]


class GraphEntity(Result):
    """An entity of the graph; ``doc_count`` (documents linked to it) in a search."""

    id: int
    type: str
    name: str
    canonical_name: str
    description: str | None
    doc_count: int | None = None


class GraphRelation(Result):
    """One relation row: when the fact held (``valid_from``/``valid_to``) and when the store learned
    it (``recorded_at``) or learned it ended (``closed_at``)."""

    id: int
    source_id: int
    source: str
    target_id: int
    target: str
    type: str
    weight: float
    valid_from: IsoTime
    valid_to: IsoTime | None
    recorded_at: IsoTime
    closed_at: IsoTime | None
    hops: int | None = None  # in a traversal: how far the nearer end is from the root entity


class LinkedDoc(Result):
    """A document linked to an entity, by the relation it was extracted from."""

    doc_id: str
    relation_type: str
    confidence: float
    context: str | None


class GraphStats(Result):
    entities: int
    relations: int
    open_relations: int


class EntityGraph(Result):
    """An answer of ``dokoro_entity_graph``: entities found by name/type (``search``), or one entity,
    its relations valid ``as_of`` within ``depth`` hops and its documents (``traversal``)."""

    mode: Literal["search", "traversal"]
    stats: GraphStats | None = None
    query: str | None = None
    type: str | None = None
    entities: list[GraphEntity] = []  # noqa: RUF012 - a pydantic field: each instance gets a copy
    entity: GraphEntity | None = None
    as_of: IsoTime | None = None
    depth: int | None = None
    relations: list[GraphRelation] = []  # noqa: RUF012 - a pydantic field: each instance gets a copy
    documents: list[LinkedDoc] = []  # noqa: RUF012 - a pydantic field: each instance gets a copy


class DeepEntity(Result):
    """An extracted entity and the id it was saved under."""

    type: str
    name: str
    canonical_name: str
    confidence: float
    context: str
    id: int | None


class DeepRelation(Result):
    """An extracted relation between two entities, by their names."""

    source: str
    target: str
    type: str
    confidence: float
    evidence: str


class DeepExtraction(Result):
    """What a deep extraction found in a document and wrote to the graph."""

    doc_id: str
    source: Literal["hybrid", "regex-only"]
    model: str | None
    warning: str | None
    entities: list[DeepEntity]
    relations: list[DeepRelation]
    links: int
    relations_created: int
    relations_closed: int
