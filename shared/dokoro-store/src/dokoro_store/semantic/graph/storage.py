"""Storage of the bi-temporal entity graph: entities, document links and relation rows.

Writes never delete or overwrite a fact. A relation row holds when the fact was true
(``valid_from``/``valid_to``) and when the store learned it (``recorded_at``) or learned it had
ended (``closed_at``). A *functional* relation type (single-valued: a source has one target at a
time) closes the source's open fact when a new target arrives; other types accumulate.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select, update
from sqlmodel import Session, col

from dokoro_store.clock import Clock, parse_iso
from dokoro_store.db.engine import Database
from dokoro_store.db.model_tables import table_of
from dokoro_store.errors import InvalidArgumentError, NotFoundError
from dokoro_store.models import DocEntity, Entity, EntityRelation
from dokoro_store.semantic.graph.extraction import ENTITY_TYPES, MENTIONS, Extraction, canonicalise
from dokoro_store.walls.secrets import redact

__all__ = [
    "DEFAULT_FUNCTIONAL_RELATION_TYPES",
    "GraphStorage",
    "Persisted",
    "RelationWrite",
    "as_datetime",
]

# Single-valued relation types: a new target closes the open fact (Store.open option to change).
DEFAULT_FUNCTIONAL_RELATION_TYPES: frozenset[str] = frozenset({"superseded_by"})
_UPSERT_BATCH = 500
_RELATION_TYPE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


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
class Persisted:
    """What a persisted extraction wrote for one document."""

    doc_id: str
    entity_ids: dict[tuple[str, str], int]
    links: int
    relations_created: int
    relations_closed: int


def as_datetime(value: datetime | str | None, name: str) -> datetime | None:
    """A moment given as an aware datetime or an ISO string; refused when naive or malformed."""
    if value is None or isinstance(value, datetime):
        if isinstance(value, datetime) and value.tzinfo is None:
            raise InvalidArgumentError(f"{name} must carry a timezone (UTC): use YYYY-MM-DDTHH:MM:SSZ")
        return value
    try:
        return parse_iso(value)
    except ValueError as exc:
        raise InvalidArgumentError(f"{name}: {exc}") from None


class GraphStorage:
    """Entities, their document links and bi-temporal relations, written over one database."""

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
        # The caller's (type, canonical) → the stored one: a name holding a secret is stored redacted
        # (an extractor once made a URL's password an entity), and answered under the caller's key.
        stored_as: dict[tuple[str, str], tuple[str, str]] = {}
        for entity_type, raw_name, given_canonical, description, metadata in entities:
            name = raw_name.strip()
            if entity_type not in ENTITY_TYPES:
                raise InvalidArgumentError(f"entity type must be one of {', '.join(ENTITY_TYPES)}; got {entity_type!r}")
            canonical = given_canonical or canonicalise(entity_type, name)
            if not canonical:
                raise InvalidArgumentError("an entity needs a non-empty name")
            clean_name = redact(name).text
            clean_canonical = redact(canonical).text
            if clean_name != name or clean_canonical != canonical:
                clean_canonical = canonicalise(entity_type, clean_name)
            stored_as[(entity_type, canonical)] = (entity_type, clean_canonical)
            rows.setdefault(
                (entity_type, clean_canonical),
                {
                    "type": entity_type,
                    "name": clean_name,
                    "canonical_name": clean_canonical,
                    "description": description,
                    "metadata_json": metadata if metadata is not None else {"surfaceForm": clean_name},
                    "created_at": now,
                    "updated_at": now,
                },
            )
        table = table_of(Entity)
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
        return {key: ids[stored] for key, stored in stored_as.items()}

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
        start = as_datetime(valid_from, "valid_from")
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
        if relation_type in self.functional_relation_types:
            # The same fact already known to hold at that time (a text read again: a reindex, an
            # old note extracted once more) changes nothing: re-recording it would close what
            # superseded it and move its start to now.
            known = session.execute(
                select(EntityRelation)
                .where(
                    col(EntityRelation.source_id) == source_id,
                    col(EntityRelation.target_id) == target_id,
                    col(EntityRelation.relation_type) == relation_type,
                    col(EntityRelation.valid_from) <= start,
                    col(EntityRelation.valid_to) > start,
                )
                .limit(1)
            ).scalar_one_or_none()
            if known is not None:
                return _Recorded(known, created=False)
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

    # ------------------------------------------------------------------ extraction
    def persist(self, doc_id: str, extraction: Extraction, *, valid_from: datetime | str | None = None) -> Persisted:
        """Write an extraction for ``doc_id`` in one transaction (reference §4.7 persistence).

        Entities are upserted; the document's links are replaced by one per (entity, relation type)
        of the relations' sources; every relation between two different extracted entities is
        recorded bi-temporally (weight = confidence) from ``valid_from`` (default now).
        """
        return self.persist_many([(doc_id, extraction)], valid_from=valid_from)[0]

    def persist_many(
        self,
        extractions: Sequence[tuple[str, Extraction]],
        *,
        valid_from: datetime | str | None = None,
        valid_froms: Sequence[datetime | None] | None = None,
        also: Callable[[Session], None] | None = None,
    ) -> list[Persisted]:
        """:meth:`persist` for several documents in one transaction (an indexing batch, a bulk
        import): their entities are upserted together, their links replaced in a few statements and
        their relations recorded in document order, as one :meth:`persist` after another would.
        ``valid_froms`` gives each document's own ``valid_from`` (None: ``valid_from``); ``also``
        writes what must commit with the graph, in its transaction.

        Raises on the first failure and writes nothing then (the caller may persist one by one).
        """
        cleaned: list[tuple[str, Extraction]] = []
        for doc_id, extraction in extractions:
            doc_id = doc_id.strip()
            if not doc_id:
                raise InvalidArgumentError("docId must not be empty")
            cleaned.append((doc_id, extraction))
        if not cleaned:
            return []
        start = as_datetime(valid_from, "valid_from")
        starts = [start if moment is None else moment for moment in (valid_froms or [None] * len(cleaned))]
        now = self._clock.now()
        links_table = table_of(DocEntity)
        # One row per entity key; a later document's surface form wins, as a later persist's would.
        entities: dict[tuple[str, str], tuple[str, str, str | None, str | None, dict[str, Any] | None]] = {}
        for _doc_id, extraction in cleaned:
            mine: dict[tuple[str, str], tuple[str, str, str | None, str | None, dict[str, Any] | None]] = {}
            for e in extraction.entities:
                mine.setdefault(
                    e.key,
                    (e.type, e.name, e.canonical, e.description, {"surfaceForm": redact(e.name).text}),
                )
            entities.update(mine)
        with self._db.write() as session:
            # Upserting the entities also locks their rows until commit: writers of one source queue.
            ids = self._upsert_entities(session, list(entities.values()))
            doc_ids = sorted({doc_id for doc_id, _ in cleaned})
            for first in range(0, len(doc_ids), _UPSERT_BATCH):
                session.execute(
                    delete(links_table).where(links_table.c.doc_id.in_(doc_ids[first : first + _UPSERT_BATCH]))
                )
            links: dict[tuple[str, int, str], dict[str, Any]] = {}
            per_doc_links: list[int] = []
            all_edges: list[list[tuple[int, int, Any]]] = []
            for doc_id, extraction in cleaned:
                count = 0
                for relation in extraction.relations:
                    source = ids.get(relation.source)
                    if source is None or (doc_id, source, relation.type) in links:
                        continue
                    links[(doc_id, source, relation.type)] = {
                        "doc_id": doc_id,
                        "entity_id": source,
                        "relation_type": relation.type,
                        "context": relation.evidence or None,
                        "confidence": relation.confidence,
                        "created_at": now,
                    }
                    count += 1
                per_doc_links.append(count)
                all_edges.append(
                    [
                        (ids[r.source], ids[r.target], r)
                        for r in extraction.relations
                        if r.type != MENTIONS and r.source in ids and r.target in ids and ids[r.source] != ids[r.target]
                    ]
                )
            rows = list(links.values())
            if rows:
                session.execute(
                    self._db.ops.upsert_each(
                        links_table, ["doc_id", "entity_id", "relation_type"], ["context", "confidence", "created_at"]
                    ),
                    rows,
                )
            open_facts = self._open_facts(session, sorted({source for edges in all_edges for source, _, _ in edges}))
            done: list[Persisted] = []
            for (doc_id, extraction), edges, link_count, begins in zip(
                cleaned, all_edges, per_doc_links, starts, strict=True
            ):
                created = closed = 0
                for source, target, relation in edges:
                    written = self._record(
                        session, open_facts, source, target, relation.type, relation.confidence, begins, None, now
                    )
                    created += written.created
                    closed += len(written.closed_rows)
                keys: list[tuple[str, str]] = [
                    (e.type, e.canonical or canonicalise(e.type, e.name.strip())) for e in extraction.entities
                ]
                mine_ids = {key: ids[key] for key in keys if key in ids}
                done.append(Persisted(doc_id, mine_ids, link_count, created, closed))
            if also is not None:
                also(session)
        return done
