"""Semantic memory: the bi-temporal entity graph (reference §2.6, §4.7, §4.8).

Writes never delete or overwrite a fact. A relation row holds when the fact was true
(``valid_from``/``valid_to``) and when the store learned it (``recorded_at``) or learned it had
ended (``closed_at``). A *functional* relation type (single-valued: a source has one target at a
time) closes the source's open fact when a new target arrives; other types accumulate.

Reads are time-travel queries: a fact is visible *as of* ``t`` when
``valid_from <= t < valid_to`` (an open fact has no end). The default ``t`` is now, so a closed
fact only shows when asked about a moment inside its window, and a future-dated fact stays
hidden until its time.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import (
    ColumnElement,
    Integer,
    and_,
    case,
    delete,
    distinct,
    func,
    literal,
    or_,
    select,
    union_all,
    update,
)
from sqlalchemy.orm import aliased
from sqlmodel import Session, col

from dokoro_store.clock import Clock, parse_iso
from dokoro_store.db.engine import Database
from dokoro_store.errors import InvalidArgumentError, NotFoundError
from dokoro_store.models import Doc, DocEntity, Entity, EntityContentHash, EntityRelation
from dokoro_store.services.episodic import escape_like
from dokoro_store.services.extraction import (
    ENTITY_TYPES,
    MENTIONS,
    Extraction,
    OllamaChat,
    canonicalise,
    extract_regex,
    merge,
    regex_only,
)
from dokoro_store.services.extraction.ollama import ChatFailedError

__all__ = [
    "DEFAULT_FUNCTIONAL_RELATION_TYPES",
    "MAX_DEPTH",
    "TRAVERSAL_LIMIT",
    "DeepExtraction",
    "EntityHit",
    "GraphLink",
    "GraphSearch",
    "GraphService",
    "GraphStats",
    "IndexedText",
    "LinkedDoc",
    "Persisted",
    "RelationView",
    "RelationWrite",
    "Traversal",
    "content_hash",
]

# Single-valued relation types: a new target closes the open fact (Store.open option to change).
DEFAULT_FUNCTIONAL_RELATION_TYPES: frozenset[str] = frozenset({"superseded_by"})
MAX_DEPTH = 5
DEFAULT_DEPTH = 2
TRAVERSAL_LIMIT = 50
SEARCH_MAX_LIMIT = 100
_UPSERT_BATCH = 500
_RELATION_TYPE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


def content_hash(text: str) -> str:
    """sha256 of a document's text: unchanged text is not extracted again."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class RelationWrite:
    """The outcome of recording a relation: the row that now holds it, whether it is new, and the
    ids of the facts it closed."""

    relation: EntityRelation
    created: bool
    closed: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class _Recorded:
    relation: EntityRelation
    created: bool
    closed_rows: list[EntityRelation] = field(default_factory=list)


@dataclass(frozen=True)
class RelationView:
    id: int
    source_id: int
    source: str
    target_id: int
    target: str
    type: str
    weight: float
    valid_from: datetime
    valid_to: datetime | None
    recorded_at: datetime
    closed_at: datetime | None
    hops: int | None = None  # in a traversal: how far the nearer end is from the root entity


@dataclass(frozen=True)
class LinkedDoc:
    doc_id: str
    relation_type: str
    confidence: float
    context: str | None


@dataclass(frozen=True)
class Traversal:
    entity: Entity
    as_of: datetime
    depth: int
    relations: list[RelationView]
    docs: list[LinkedDoc]
    visited: int


@dataclass(frozen=True)
class GraphStats:
    entities: int
    relations: int
    open_relations: int


@dataclass(frozen=True)
class EntityHit:
    entity: Entity
    doc_count: int


@dataclass(frozen=True)
class GraphSearch:
    stats: GraphStats
    hits: list[EntityHit]


@dataclass(frozen=True)
class GraphLink:
    """A document linked to entities named in a search query: the graph signal of hybrid search."""

    doc_id: str
    entities: tuple[str, ...]
    score: float


@dataclass(frozen=True)
class Persisted:
    """What a persisted extraction wrote for one document."""

    doc_id: str
    entity_ids: dict[tuple[str, str], int]
    links: int
    relations_created: int
    relations_closed: int


@dataclass(frozen=True)
class DeepExtraction:
    extraction: Extraction
    persisted: Persisted


class IndexedText(Protocol):
    """What the graph needs of a document that was just indexed (the indexing listener's argument)."""

    @property
    def doc_id(self) -> str: ...

    @property
    def content(self) -> str: ...

    @property
    def reason(self) -> str: ...


def _as_datetime(value: datetime | str | None, name: str) -> datetime | None:
    if value is None or isinstance(value, datetime):
        if isinstance(value, datetime) and value.tzinfo is None:
            raise InvalidArgumentError(f"{name} must carry a timezone (UTC): use YYYY-MM-DDTHH:MM:SSZ")
        return value
    try:
        return parse_iso(value)
    except ValueError as exc:
        raise InvalidArgumentError(f"{name}: {exc}") from None


class GraphService:
    """Entities, their document links and bi-temporal relations, over one database."""

    def __init__(
        self,
        db: Database,
        clock: Clock,
        functional_relation_types: Iterable[str] = DEFAULT_FUNCTIONAL_RELATION_TYPES,
    ) -> None:
        self._db = db
        self._clock = clock
        self.functional_relation_types = frozenset(functional_relation_types)

    # ------------------------------------------------------------------ entities
    def upsert_entity(
        self,
        entity_type: str,
        name: str,
        *,
        description: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Entity:
        """The entity of this (type, canonical name), created or refreshed."""
        with self._db.write() as session:
            entity_id = self._upsert_entity(session, entity_type, name, description, metadata)
            entity = session.get(Entity, entity_id)
            assert entity is not None
            return entity

    def _upsert_entity(
        self,
        session: Session,
        entity_type: str,
        name: str,
        description: str | None,
        metadata: dict[str, Any] | None,
    ) -> int:
        ids = self._upsert_entities(session, [(entity_type, name, None, description, metadata)])
        return next(iter(ids.values()))

    def _upsert_entities(
        self,
        session: Session,
        entities: Sequence[tuple[str, str, str | None, str | None, dict[str, Any] | None]],
    ) -> dict[tuple[str, str], int]:
        """Upsert (type, name, canonical, description, metadata) rows in a few statements; ids by
        (type, canonical). A canonical of None is derived from the name.

        Rows go in (type, canonical) order, so concurrent writers lock entity rows in one order.
        """
        now = self._clock.now()
        rows: dict[tuple[str, str], dict[str, Any]] = {}
        for entity_type, raw_name, given_canonical, description, metadata in entities:
            name = raw_name.strip()
            if entity_type not in ENTITY_TYPES:
                raise InvalidArgumentError(f"entity type must be one of {', '.join(ENTITY_TYPES)}; got {entity_type!r}")
            canonical = given_canonical or canonicalise(entity_type, name)
            if not canonical:
                raise InvalidArgumentError("an entity needs a non-empty name")
            rows.setdefault(
                (entity_type, canonical),
                {
                    "type": entity_type,
                    "name": name,
                    "canonical_name": canonical,
                    "description": description,
                    "metadata_json": metadata if metadata is not None else {"surfaceForm": name},
                    "created_at": now,
                    "updated_at": now,
                },
            )
        table = Entity.__table__  # type: ignore[attr-defined]
        ordered = [rows[key] for key in sorted(rows)]
        ids: dict[tuple[str, str], int] = {}
        for start in range(0, len(ordered), _UPSERT_BATCH):
            stmt = self._db.ops.upsert_many(
                table,
                ordered[start : start + _UPSERT_BATCH],
                ["type", "canonical_name"],
                ["updated_at", "metadata_json"],
            )
            for entity_id, entity_type, canonical in session.execute(
                stmt.returning(table.c.id, table.c.type, table.c.canonical_name)
            ):
                ids[(entity_type, canonical)] = int(entity_id)
        for key, row in rows.items():
            if row["description"]:
                session.execute(update(table).where(table.c.id == ids[key]).values(description=row["description"]))
        return ids

    def entity(self, entity_id: int) -> Entity:
        with self._db.read() as session:
            found = session.get(Entity, entity_id)
        if found is None:
            raise NotFoundError(
                f"No entity with ID {entity_id}. Find ids with dokoro_entity_graph (query= or type=, no entityId)."
            )
        return found

    def find_entity(self, entity_type: str, name: str) -> Entity | None:
        """The entity of this type whose canonical form matches ``name``, if any."""
        with self._db.read() as session:
            return session.execute(
                select(Entity).where(
                    col(Entity.type) == entity_type, col(Entity.canonical_name) == canonicalise(entity_type, name)
                )
            ).scalar_one_or_none()

    # ------------------------------------------------------------------ relations
    def upsert_relation(
        self,
        source_id: int,
        target_id: int,
        relation_type: str,
        *,
        weight: float = 1.0,
        valid_from: datetime | str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> RelationWrite:
        """Record that ``source --[type]--> target`` holds from ``valid_from`` (default now).

        An open identical fact makes this a no-op. For a functional type, the source's open facts
        with another target end where this one begins; a fact learned late that began before the
        open one is recorded as already ended when the open one began.
        """
        start = _as_datetime(valid_from, "valid_from")
        with self._db.write() as session:
            for entity_id in sorted({source_id, target_id}):
                if session.get(Entity, entity_id) is None:
                    raise NotFoundError(f"No entity with ID {entity_id}; create it first")
            return self._write_relation(session, source_id, target_id, relation_type, weight, start, metadata)

    def _write_relation(
        self,
        session: Session,
        source_id: int,
        target_id: int,
        relation_type: str,
        weight: float,
        valid_from: datetime | None,
        metadata: dict[str, Any] | None,
    ) -> RelationWrite:
        # Writers of one source's facts queue here on PostgreSQL (SQLite's BEGIN IMMEDIATE already does).
        session.execute(select(col(Entity.id)).where(col(Entity.id) == source_id).with_for_update())
        open_facts = self._open_facts(session, [source_id])
        written = self._record(
            session, open_facts, source_id, target_id, relation_type, weight, valid_from, metadata, self._clock.now()
        )
        session.flush()
        return RelationWrite(written.relation, written.created, [int(row.id or 0) for row in written.closed_rows])

    @staticmethod
    def _open_facts(session: Session, source_ids: Sequence[int]) -> dict[tuple[int, str], list[EntityRelation]]:
        """The open rows of these sources, by (source, type)."""
        facts: dict[tuple[int, str], list[EntityRelation]] = {}
        for start in range(0, len(source_ids), _UPSERT_BATCH):
            rows = session.execute(
                select(EntityRelation).where(
                    col(EntityRelation.source_id).in_(list(source_ids[start : start + _UPSERT_BATCH])),
                    col(EntityRelation.valid_to).is_(None),
                )
            ).scalars()
            for row in rows:
                facts.setdefault((row.source_id, row.relation_type), []).append(row)
        return facts

    def _record(
        self,
        session: Session,
        open_facts: dict[tuple[int, str], list[EntityRelation]],
        source_id: int,
        target_id: int,
        relation_type: str,
        weight: float,
        valid_from: datetime | None,
        metadata: dict[str, Any] | None,
        now: datetime,
    ) -> _Recorded:
        """Apply the bi-temporal write rule to ``open_facts`` (kept up to date) and the session."""
        if not _RELATION_TYPE.match(relation_type):
            raise InvalidArgumentError(
                f"relation type {relation_type!r} must be lower_snake_case, e.g. depends_on or superseded_by"
            )
        if source_id == target_id:
            raise InvalidArgumentError("a relation needs two different entities")
        start = valid_from or now
        open_rows = open_facts.setdefault((source_id, relation_type), [])
        for row in open_rows:
            if row.target_id == target_id:
                return _Recorded(row, created=False)
        ends: datetime | None = None
        closed: list[EntityRelation] = []
        if relation_type in self.functional_relation_types:
            for row in open_rows:
                if row.valid_from <= start:
                    row.valid_to = start
                    row.closed_at = now
                    session.add(row)
                    closed.append(row)
                else:
                    # Learned late: this fact ended when the (later) open one began.
                    ends = row.valid_from if ends is None else min(ends, row.valid_from)
        for row in closed:
            open_rows.remove(row)
        created = EntityRelation(
            source_id=source_id,
            target_id=target_id,
            relation_type=relation_type,
            weight=weight,
            metadata_json=metadata,
            valid_from=start,
            valid_to=ends,
            recorded_at=now,
            closed_at=now if ends is not None else None,
        )
        session.add(created)
        if ends is None:
            open_rows.append(created)
        return _Recorded(created, created=True, closed_rows=closed)

    def history(self, entity_id: int | None = None) -> list[RelationView]:
        """Every relation row ever recorded (open and closed), oldest first; of one entity if given."""
        with self._db.read() as session:
            query = self._relation_views()
            if entity_id is not None:
                rel = EntityRelation.__table__  # type: ignore[attr-defined]
                query = query.where(or_(rel.c.source_id == entity_id, rel.c.target_id == entity_id))
            return [self._view(row) for row in session.execute(query)]

    @staticmethod
    def _relation_views() -> Any:
        rel = EntityRelation.__table__  # type: ignore[attr-defined]
        source = aliased(Entity.__table__)  # type: ignore[attr-defined]
        target = aliased(Entity.__table__)  # type: ignore[attr-defined]
        return (
            select(rel, source.c.name.label("source_name"), target.c.name.label("target_name"))
            .join(source, source.c.id == rel.c.source_id)
            .join(target, target.c.id == rel.c.target_id)
            .order_by(rel.c.valid_from, rel.c.id)
        )

    @staticmethod
    def _view(row: Any) -> RelationView:
        m = row._mapping
        return RelationView(
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
        rel = EntityRelation.__table__  # type: ignore[attr-defined]
        return and_(rel.c.valid_from <= as_of, or_(rel.c.valid_to.is_(None), rel.c.valid_to > as_of))

    def traverse(self, entity_id: int, depth: int = DEFAULT_DEPTH, as_of: datetime | str | None = None) -> Traversal:
        """The entity, the relations valid ``as_of`` (default now) reachable within ``depth`` hops in
        either direction (plus those touching the last hop), and its linked documents."""
        if not 1 <= depth <= MAX_DEPTH:
            raise InvalidArgumentError(f"depth must be between 1 and {MAX_DEPTH}; got {depth}")
        moment = _as_datetime(as_of, "as_of") or self._clock.now()
        rel = EntityRelation.__table__  # type: ignore[attr-defined]
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
                LinkedDoc(link.doc_id, link.relation_type, link.confidence, link.context)
                for link in session.execute(
                    select(DocEntity)
                    .where(col(DocEntity.entity_id) == entity_id)
                    .order_by(col(DocEntity.confidence).desc(), col(DocEntity.doc_id), col(DocEntity.relation_type))
                ).scalars()
            ]
        return Traversal(root, moment, depth, relations, docs, int(visited))

    def stats(self) -> GraphStats:
        rel = EntityRelation.__table__  # type: ignore[attr-defined]
        with self._db.read() as session:
            entities = session.execute(select(func.count()).select_from(Entity.__table__)).scalar_one()  # type: ignore[attr-defined]
            relations = session.execute(select(func.count()).select_from(rel)).scalar_one()
            open_ = session.execute(select(func.count()).select_from(rel).where(rel.c.valid_to.is_(None))).scalar_one()
        return GraphStats(int(entities), int(relations), int(open_))

    def search(self, query: str | None = None, entity_type: str | None = None, limit: int = 20) -> GraphSearch:
        """Entities whose name contains ``query`` (case-insensitive) and/or of ``entity_type``, most
        linked documents first."""
        if entity_type is not None and entity_type not in ENTITY_TYPES:
            raise InvalidArgumentError(f"type must be one of {', '.join(ENTITY_TYPES)}; got {entity_type!r}")
        if not 1 <= limit <= SEARCH_MAX_LIMIT:
            raise InvalidArgumentError(f"limit must be between 1 and {SEARCH_MAX_LIMIT}; got {limit}")
        table = Entity.__table__  # type: ignore[attr-defined]
        links = DocEntity.__table__  # type: ignore[attr-defined]
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
            EntityHit(Entity.model_validate({k: v for k, v in row._mapping.items() if k != "doc_count"}), row.doc_count)
            for row in rows
        ]
        return GraphSearch(self.stats(), hits)

    def linked_documents(self, entity_ids: Sequence[int]) -> dict[str, list[tuple[int, float]]]:
        """For each document linked to any of ``entity_ids``: the (entity id, confidence) links."""
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
        links = self.linked_documents(sorted(named))
        ranked = [
            GraphLink(doc_id, tuple(sorted(named[e] for e, _ in found)), sum(c for _, c in found))
            for doc_id, found in links.items()
        ]
        ranked.sort(key=lambda link: (-link.score, link.doc_id))
        return ranked[:limit]

    # ------------------------------------------------------------------ extraction
    def persist(self, doc_id: str, extraction: Extraction, *, valid_from: datetime | str | None = None) -> Persisted:
        """Write an extraction for ``doc_id`` in one transaction (reference §4.7 persistence).

        Entities are upserted; the document's links are replaced by one per (entity, relation type)
        of the relations' sources; every relation between two different extracted entities is
        recorded bi-temporally (weight = confidence) from ``valid_from`` (default now).
        """
        doc_id = doc_id.strip()
        if not doc_id:
            raise InvalidArgumentError("docId must not be empty")
        start = _as_datetime(valid_from, "valid_from")
        now = self._clock.now()
        links_table = DocEntity.__table__  # type: ignore[attr-defined]
        with self._db.write() as session:
            # Upserting the entities also locks their rows until commit: writers of one source queue.
            ids = self._upsert_entities(
                session,
                [(e.type, e.name, e.canonical, e.description, {"surfaceForm": e.name}) for e in extraction.entities],
            )
            session.execute(delete(links_table).where(links_table.c.doc_id == doc_id))
            links: dict[tuple[int, str], dict[str, Any]] = {}
            for relation in extraction.relations:
                source = ids.get(relation.source)
                if source is None or (source, relation.type) in links:
                    continue
                links[(source, relation.type)] = {
                    "doc_id": doc_id,
                    "entity_id": source,
                    "relation_type": relation.type,
                    "context": relation.evidence or None,
                    "confidence": relation.confidence,
                    "created_at": now,
                }
            if links:
                session.execute(
                    self._db.ops.upsert_many(
                        links_table,
                        list(links.values()),
                        ["doc_id", "entity_id", "relation_type"],
                        ["context", "confidence", "created_at"],
                    )
                )
            edges = [
                (ids[r.source], ids[r.target], r)
                for r in extraction.relations
                if r.type != MENTIONS and r.source in ids and r.target in ids and ids[r.source] != ids[r.target]
            ]
            open_facts = self._open_facts(session, sorted({source for source, _, _ in edges}))
            created = closed = 0
            for source, target, relation in edges:
                written = self._record(
                    session, open_facts, source, target, relation.type, relation.confidence, start, None, now
                )
                created += written.created
                closed += len(written.closed_rows)
        return Persisted(doc_id, ids, len(links), created, closed)

    def extract_text(self, doc_id: str, text: str, *, valid_from: datetime | str | None = None) -> DeepExtraction:
        """Regex-extract ``text`` and persist it for ``doc_id``."""
        extraction = extract_regex(text)
        return DeepExtraction(extraction, self.persist(doc_id, extraction, valid_from=valid_from))

    def index_document(self, doc_id: str, text: str | None, *, force: bool = False) -> Persisted | None:
        """Regex extraction for an indexed document, skipped when its text is unchanged since the last
        extraction (unless ``force``) or empty. Returns what was written, or None when skipped."""
        if not text or not text.strip():
            return None
        digest = content_hash(text)
        with self._db.read() as session:
            seen = session.get(EntityContentHash, doc_id)
        if not force and seen is not None and seen.content_hash == digest:
            return None
        persisted = self.extract_text(doc_id, text).persisted
        table = EntityContentHash.__table__  # type: ignore[attr-defined]
        with self._db.write() as session:
            session.execute(
                self._db.ops.upsert(
                    table,
                    {"doc_id": doc_id, "content_hash": digest, "last_extracted": self._clock.now()},
                    ["doc_id"],
                    ["content_hash", "last_extracted"],
                )
            )
        return persisted

    def on_document_indexed(self, doc: IndexedText) -> None:
        """Indexing listener: regex extraction of every (re)indexed document. Unchanged text is skipped,
        except on a full reindex (``reason == "full"``), which extracts everything again."""
        self.index_document(doc.doc_id, doc.content, force=doc.reason == "full")

    def forget_document(self, doc_id: str) -> int:
        """Drop a deleted document's links and extraction hash (entities and relations stay: history)."""
        links = DocEntity.__table__  # type: ignore[attr-defined]
        hashes = EntityContentHash.__table__  # type: ignore[attr-defined]
        with self._db.write() as session:
            removed = session.execute(
                select(func.count()).select_from(links).where(links.c.doc_id == doc_id)
            ).scalar_one()
            session.execute(delete(links).where(links.c.doc_id == doc_id))
            session.execute(delete(hashes).where(hashes.c.doc_id == doc_id))
        return int(removed or 0)

    def document_text(self, doc_id: str) -> str:
        """The stored content of a document, for a deep extraction without ``text``."""
        with self._db.read() as session:
            doc = session.get(Doc, doc_id)
        if doc is None:
            raise NotFoundError(f"No document with id {doc_id!r}; pass the text to extract as `text`")
        if not (doc.content or "").strip():
            raise InvalidArgumentError(f"Document {doc_id!r} has no content; pass the text to extract as `text`")
        return str(doc.content)

    def extract_deep(self, doc_id: str, text: str | None, chat: OllamaChat) -> DeepExtraction:
        """Regex plus the chat model, merged and persisted in one transaction.

        Ollama unreachable or the model missing raises :class:`OllamaUnavailableError` (nothing is
        written). A model that times out or answers unusable JSON gives a ``regex-only`` result.
        """
        doc_id = doc_id.strip()
        if not doc_id:
            raise InvalidArgumentError("docId must not be empty")
        body = text if text is not None and text.strip() else None
        if body is None:
            if text is not None:
                raise InvalidArgumentError("text is empty; pass the text to extract, or omit it to use the document")
            body = self.document_text(doc_id)
        regex = extract_regex(body)
        chat.check()
        try:
            extraction = merge(regex, chat.extract(body))
        except ChatFailedError as exc:
            extraction = regex_only(regex, model=chat.model, warning=str(exc))
        return DeepExtraction(extraction, self.persist(doc_id, extraction))
