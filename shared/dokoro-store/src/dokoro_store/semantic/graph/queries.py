"""Reads of the entity graph: time-travel traversal, entity search, history, and the graph
signal of hybrid search.

A fact is visible *as of* ``t`` when ``valid_from <= t < valid_to`` (an open fact has no end).
The default ``t`` is now, so a closed fact only shows when asked about a moment inside its
window, and a future-dated fact stays hidden until its time.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Integer, and_, case, distinct, func, literal, or_, select, union_all
from sqlalchemy.orm import aliased
from sqlmodel import col

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.db.model_tables import table_of
from dokoro_store.episodic.service import escape_like
from dokoro_store.errors import InvalidArgumentError, NotFoundError
from dokoro_store.models import DocEntity, Entity, EntityRelation
from dokoro_store.results.graph import EntityGraph, GraphEntity, GraphRelation, GraphStats, LinkedDoc
from dokoro_store.semantic.graph.extraction import ENTITY_TYPES, canonicalise, extract_regex
from dokoro_store.semantic.graph.storage import as_datetime
from dokoro_store.walls.secrets import redact

__all__ = [
    "DEFAULT_DEPTH",
    "MAX_DEPTH",
    "SEARCH_MAX_LIMIT",
    "TRAVERSAL_LIMIT",
    "GraphLink",
    "GraphQueries",
    "GraphSearch",
    "Traversal",
    "entity_result",
]

MAX_DEPTH = 5
DEFAULT_DEPTH = 2
TRAVERSAL_LIMIT = 50
SEARCH_MAX_LIMIT = 100


@dataclass(frozen=True)
class Traversal:
    """An entity, the relations valid ``as_of`` around it, its documents, and how many entities
    the walk visited."""

    entity: GraphEntity
    as_of: datetime
    depth: int
    relations: list[GraphRelation]
    docs: list[LinkedDoc]
    visited: int

    def result(self) -> EntityGraph:
        """What ``dokoro_entity_graph`` publishes in traversal mode."""
        return EntityGraph(
            mode="traversal",
            entity=self.entity,
            as_of=self.as_of,
            depth=self.depth,
            relations=self.relations,
            documents=self.docs,
        )


@dataclass(frozen=True)
class GraphSearch:
    """Entities found by name and/or type (each with its ``doc_count``), and the graph's size."""

    query: str | None
    entity_type: str | None
    stats: GraphStats
    hits: list[GraphEntity]

    def result(self) -> EntityGraph:
        """What ``dokoro_entity_graph`` publishes in search mode."""
        return EntityGraph(mode="search", stats=self.stats, query=self.query, type=self.entity_type, entities=self.hits)


@dataclass(frozen=True)
class GraphLink:
    """A document linked to entities named in a search query: the graph signal of hybrid search."""

    doc_id: str
    entities: tuple[str, ...]
    score: float


def entity_result(entity: Entity, doc_count: int | None = None) -> GraphEntity:
    """The public result of an entity row."""
    assert entity.id is not None  # stored
    return GraphEntity(
        id=entity.id,
        type=entity.type,
        name=entity.name,
        canonical_name=entity.canonical_name,
        description=entity.description,
        doc_count=doc_count,
    )


class GraphQueries:
    """Read-only questions to the graph of one database."""

    def __init__(self, db: Database, clock: Clock, before_read: Callable[[], None] | None = None) -> None:
        self._db = db
        self._clock = clock
        # Called before every question: completes the extraction the writes left behind them
        # (GraphExtraction.catch_up), so no answer comes from a stale graph.
        self._before_read = before_read or (lambda: None)

    def history(self, entity_id: int | None = None) -> list[GraphRelation]:
        """Every relation row ever recorded (open and closed), oldest first; of one entity if given."""
        self._before_read()
        with self._db.read() as session:
            query = self._relation_views()
            if entity_id is not None:
                rel = table_of(EntityRelation)
                query = query.where(or_(rel.c.source_id == entity_id, rel.c.target_id == entity_id))
            return [self._view(row) for row in session.execute(query)]

    @staticmethod
    def _relation_views() -> Any:
        rel = table_of(EntityRelation)
        source = aliased(table_of(Entity))
        target = aliased(table_of(Entity))
        return (
            select(rel, source.c.name.label("source_name"), target.c.name.label("target_name"))
            .join(source, source.c.id == rel.c.source_id)
            .join(target, target.c.id == rel.c.target_id)
            .order_by(rel.c.valid_from, rel.c.id)
        )

    @staticmethod
    def _view(row: Any) -> GraphRelation:
        m = row._mapping
        return GraphRelation(
            id=m["id"],
            source_id=m["source_id"],
            source=m["source_name"],
            target_id=m["target_id"],
            target=m["target_name"],
            type=m["relation_type"],
            weight=m["weight"],
            valid_from=m["valid_from"],
            valid_to=m["valid_to"],
            recorded_at=m["recorded_at"],
            closed_at=m["closed_at"],
            hops=m.get("hops"),
        )

    # ------------------------------------------------------------------ reads
    @staticmethod
    def _valid_at(as_of: datetime) -> ColumnElement[bool]:
        rel = table_of(EntityRelation)
        return and_(rel.c.valid_from <= as_of, or_(rel.c.valid_to.is_(None), rel.c.valid_to > as_of))

    def traverse(self, entity_id: int, depth: int = DEFAULT_DEPTH, as_of: datetime | str | None = None) -> Traversal:
        """The entity, the relations valid ``as_of`` (default now) reachable within ``depth`` hops in
        either direction (plus those touching the last hop), and its linked documents."""
        self._before_read()
        if not 1 <= depth <= MAX_DEPTH:
            raise InvalidArgumentError(f"depth must be between 1 and {MAX_DEPTH}; got {depth}")
        moment = as_datetime(as_of, "as_of") or self._clock.now()
        rel = table_of(EntityRelation)
        valid = self._valid_at(moment)
        with self._db.read() as session:
            root = session.get(Entity, entity_id)
            if root is None:
                raise NotFoundError(
                    f"No entity with ID {entity_id}. Find ids with dokoro_entity_graph (query= or type=, no entityId)."
                )
            walk = select(literal(entity_id, Integer).label("node"), literal(0, Integer).label("depth")).cte(
                "walk", recursive=True
            )
            neighbour = case((rel.c.source_id == walk.c.node, rel.c.target_id), else_=rel.c.source_id)
            # UNION (not UNION ALL) and the depth bound end the walk on cycles.
            walk = walk.union(
                select(neighbour, walk.c.depth + 1)
                .select_from(walk.join(rel, or_(rel.c.source_id == walk.c.node, rel.c.target_id == walk.c.node)))
                .where(walk.c.depth < depth, valid)
            )
            # Materialised: computed once, then looked up per relation (not re-walked per row).
            nearest = (
                select(walk.c.node, func.min(walk.c.depth).label("hops"))
                .group_by(walk.c.node)
                .cte("nearest")
                .prefix_with("MATERIALIZED")
            )
            visited = session.execute(select(func.count()).select_from(nearest)).scalar_one()
            # Every valid relation touching a visited entity, at the distance of its nearer end; the
            # nearest come first (then the oldest) when more than the limit touch. Driven from the
            # visited entities, so each lookup uses the source or target index.
            touching = union_all(
                select(rel.c.id.label("rid"), nearest.c.hops)
                .select_from(nearest.join(rel, rel.c.source_id == nearest.c.node))
                .where(valid),
                select(rel.c.id.label("rid"), nearest.c.hops)
                .select_from(nearest.join(rel, rel.c.target_id == nearest.c.node))
                .where(valid),
            ).subquery("touching")
            best = (
                select(touching.c.rid, func.min(touching.c.hops).label("hops"))
                .group_by(touching.c.rid)
                .subquery("best")
            )
            query = (
                self._relation_views()
                .add_columns(best.c.hops)
                .join(best, best.c.rid == rel.c.id)
                .order_by(None)
                .order_by(best.c.hops, rel.c.valid_from, rel.c.id)
                .limit(TRAVERSAL_LIMIT)
            )
            relations = [self._view(row) for row in session.execute(query)]
            docs = [
                LinkedDoc(
                    doc_id=link.doc_id,
                    relation_type=link.relation_type,
                    confidence=link.confidence,
                    context=link.context,
                )
                for link in session.execute(
                    select(DocEntity)
                    .where(col(DocEntity.entity_id) == entity_id)
                    .order_by(col(DocEntity.confidence).desc(), col(DocEntity.doc_id), col(DocEntity.relation_type))
                ).scalars()
            ]
        return Traversal(entity_result(root), moment, depth, relations, docs, int(visited))

    def stats(self) -> GraphStats:
        self._before_read()
        rel = table_of(EntityRelation)
        with self._db.read() as session:
            entities = session.execute(select(func.count()).select_from(table_of(Entity))).scalar_one()
            relations = session.execute(select(func.count()).select_from(rel)).scalar_one()
            open_ = session.execute(select(func.count()).select_from(rel).where(rel.c.valid_to.is_(None))).scalar_one()
        return GraphStats(entities=int(entities), relations=int(relations), open_relations=int(open_))

    def search(self, query: str | None = None, entity_type: str | None = None, limit: int = 20) -> GraphSearch:
        """Entities whose name contains ``query`` (case-insensitive) and/or of ``entity_type``, most
        linked documents first."""
        self._before_read()
        if entity_type is not None and entity_type not in ENTITY_TYPES:
            raise InvalidArgumentError(f"type must be one of {', '.join(ENTITY_TYPES)}; got {entity_type!r}")
        if not 1 <= limit <= SEARCH_MAX_LIMIT:
            raise InvalidArgumentError(f"limit must be between 1 and {SEARCH_MAX_LIMIT}; got {limit}")
        table = table_of(Entity)
        links = table_of(DocEntity)
        doc_count = func.count(distinct(links.c.doc_id)).label("doc_count")
        stmt = select(table, doc_count).outerjoin(links, links.c.entity_id == table.c.id).group_by(table.c.id)
        text = (query or "").strip()
        if text:
            pattern = f"%{escape_like(text.lower())}%"
            stmt = stmt.where(
                or_(
                    func.lower(table.c.name).like(pattern, escape="\\"),
                    table.c.canonical_name.like(pattern, escape="\\"),
                )
            )
        if entity_type:
            stmt = stmt.where(table.c.type == entity_type)
        stmt = stmt.order_by(doc_count.desc(), table.c.name, table.c.id).limit(limit)
        with self._db.read() as session:
            rows = list(session.execute(stmt))
        hits = [
            entity_result(
                Entity.model_validate({k: v for k, v in row._mapping.items() if k != "doc_count"}), row.doc_count
            )
            for row in rows
        ]
        # The query is echoed redacted: a secret searched for is never printed back.
        shown = redact(query).text if query is not None else None
        return GraphSearch(shown, entity_type, self.stats(), hits)

    def linked_documents(self, entity_ids: Sequence[int]) -> dict[str, list[tuple[int, float]]]:
        """For each document linked to any of ``entity_ids``: the (entity id, confidence) links."""
        self._before_read()
        return self._linked_documents(entity_ids)

    def _linked_documents(self, entity_ids: Sequence[int]) -> dict[str, list[tuple[int, float]]]:
        if not entity_ids:
            return {}
        with self._db.read() as session:
            rows = session.execute(
                select(col(DocEntity.doc_id), col(DocEntity.entity_id), func.max(col(DocEntity.confidence)))
                .where(col(DocEntity.entity_id).in_(list(entity_ids)))
                .group_by(col(DocEntity.doc_id), col(DocEntity.entity_id))
            )
            found: dict[str, list[tuple[int, float]]] = {}
            for doc_id, entity_id, confidence in rows:
                found.setdefault(doc_id, []).append((int(entity_id), float(confidence)))
        return found

    def entities_named_in(self, text: str) -> list[Entity]:
        """Entities whose canonical name occurs in ``text`` as a whole term (for the search signal)."""
        self._before_read()
        lowered = text.lower()
        terms = {m.group(0).strip(".-/") for m in re.finditer(r"[\w@#./-]+", lowered)}
        terms |= {canonicalise(e.type, e.name) for e in extract_regex(text).entities}
        terms.discard("")
        if not terms:
            return []
        with self._db.read() as session:
            return list(
                session.exec(  # type: ignore[call-overload]
                    select(Entity).where(col(Entity.canonical_name).in_(sorted(terms)))
                ).scalars()
            )

    def search_signal(self, query: str, limit: int) -> list[GraphLink]:
        """Documents linked to entities named in ``query``, best first: the more named entities a
        document is linked to, and the more confidently, the higher. For hybrid search's fusion."""
        named = {int(e.id): e.name for e in self.entities_named_in(query) if e.id is not None}
        links = self._linked_documents(sorted(named))  # the graph was caught up by the line above
        ranked = [
            GraphLink(doc_id, tuple(sorted(named[e] for e, _ in found)), sum(c for _, c in found))
            for doc_id, found in links.items()
        ]
        ranked.sort(key=lambda link: (-link.score, link.doc_id))
        return ranked[:limit]
