"""Filters inside the search: which documents one search may return, as conditions of its legs.

A filter applied to a global top-k after the search loses what it asks for as soon as enough other
documents outrank it: a memory among a thousand workspace pages, an entity's facts among a
hundred thousand others. So a :class:`DocScope` becomes a condition of every leg:

- full text: an SQL ``WHERE`` next to the FTS5 ``MATCH`` or the tsvector ``@@``
  (:meth:`DocScope.sql`);
- vectors: pgvector adds the same ``WHERE``; LanceDB and the exact scan look at their plain
  nearest-neighbour list first (when the scope allows most documents the answer is in it), then
  take the allowed documents as a prefilter when there are few of them (:meth:`DocScope.doc_ids`
  with a cap), and otherwise widen the list until enough allowed documents are in it
  (:func:`scoped_nearest`) — many allowed documents are a large share of the store, so the list
  grows little. A recall's scope (memory documents only) on a store of 2,000 memories or more does
  not reach the engine: ``retrieval.memory_index`` holds the memories' chunk vectors with their
  state, type, creation time and entities, and applies the scope as a mask of one exact scan;
- the fused candidates are checked once more (:meth:`DocScope.keep`): thread neighbours join the
  candidates after the legs ran.

The memory conditions (type, state, entity, time window) read the ``memories`` row of a memory
document ``memory:<id>`` in SQL: its document carries neither the type nor the entities.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, TypeVar

from sqlalchemy import bindparam, text
from sqlalchemy.sql.elements import BindParameter

from dokoro_store.db.types import UtcDateTime

if TYPE_CHECKING:
    from dokoro_store.db.engine import Database

__all__ = [
    "MEMORY_DOC_PREFIX",
    "PREFILTER_CAP",
    "DocScope",
    "MemoryScope",
    "ScopeShares",
    "among",
    "first_list",
    "scoped_nearest",
]

# The document of memory ``<id>`` is ``memory:<id>`` (services.memories.rows.DOC_PREFIX).
MEMORY_DOC_PREFIX = "memory:"
# Up to this many allowed documents, vector engines prefilter on the list itself.
PREFILTER_CAP = 2_000

T = TypeVar("T")


@dataclass(frozen=True)
class MemoryScope:
    """Conditions on the memory behind a memory document (empty = any)."""

    types: tuple[str, ...] = ()
    states: tuple[str, ...] = ()
    entity: str | None = None  # canonical (lower-case) entity name
    since: datetime | None = None  # created at or after
    until: datetime | None = None  # created at or before


@dataclass(frozen=True)
class DocScope:
    """The documents a search may return (empty fields = no condition)."""

    doc_types: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()
    memory: MemoryScope | None = None

    def sql(self, doc: str, dialect: str, *, by_id: bool = False) -> tuple[str, list[BindParameter[object]]]:
        """A condition on the ``docs`` row aliased ``doc`` and its bound parameters (names ``scope_*``).

        ``by_id``: the query names its rows by id (or rowid). SQLite would otherwise choose the index on
        ``(doc_type, status)`` over the ids and walk every document of the type (every memory, for a
        recall): the columns are then written ``+column``, a form no index matches.
        """
        parts: list[str] = []
        binds: list[BindParameter[object]] = []
        plain = "+" if by_id and dialect != "postgresql" else ""
        if self.doc_types:
            parts.append(f"{plain}{doc}.doc_type IN :scope_doc_types")
            binds.append(bindparam("scope_doc_types", list(self.doc_types), expanding=True))
        if self.statuses:
            parts.append(f"{plain}{doc}.status IN :scope_statuses")
            binds.append(bindparam("scope_statuses", list(self.statuses), expanding=True))
        memory = self.memory
        if memory is not None:
            inner = [f"sm.id = substr({doc}.id, {len(MEMORY_DOC_PREFIX) + 1})"]
            if memory.types:
                inner.append("sm.type IN :scope_memory_types")
                binds.append(bindparam("scope_memory_types", list(memory.types), expanding=True))
            if memory.states:
                inner.append("sm.state IN :scope_memory_states")
                binds.append(bindparam("scope_memory_states", list(memory.states), expanding=True))
            if memory.entity:
                if dialect == "postgresql":
                    inner.append("CAST(sm.entities AS jsonb) @> jsonb_build_array(CAST(:scope_entity AS text))")
                else:
                    inner.append("EXISTS (SELECT 1 FROM json_each(sm.entities) je WHERE je.value = :scope_entity)")
                binds.append(bindparam("scope_entity", memory.entity))
            if memory.since is not None:
                inner.append("sm.created_at >= :scope_since")
                binds.append(bindparam("scope_since", memory.since, type_=UtcDateTime()))
            if memory.until is not None:
                inner.append("sm.created_at <= :scope_until")
                binds.append(bindparam("scope_until", memory.until, type_=UtcDateTime()))
            parts.append(
                f"{doc}.id LIKE '{MEMORY_DOC_PREFIX}%' AND EXISTS (SELECT 1 FROM memories sm WHERE "
                + " AND ".join(inner)
                + ")"
            )
        return (" AND ".join(parts) or "1 = 1"), binds

    def doc_ids(self, db: Database, cap: int) -> list[str] | None:
        """The allowed documents, or None when there are more than ``cap`` of them."""
        condition, binds = self.sql("d", db.dialect)
        statement = text(f"SELECT d.id FROM docs d WHERE {condition} LIMIT :scope_cap").bindparams(
            *binds, scope_cap=cap + 1
        )
        with db.read() as session:
            ids = [str(row[0]) for row in session.execute(statement)]
        return ids if len(ids) <= cap else None

    def keep(self, db: Database, doc_ids: Sequence[str]) -> set[str]:
        """Which of ``doc_ids`` the scope allows (one query)."""
        if not doc_ids:
            return set()
        condition, binds = self.sql("d", db.dialect, by_id=True)
        member, value = among("d.id", list(dict.fromkeys(doc_ids)), db.dialect, "scope_ids")
        statement = text(f"SELECT d.id FROM docs d WHERE {member} AND {condition}").bindparams(*binds, scope_ids=value)
        with db.read() as session:
            return {str(row[0]) for row in session.execute(statement)}


class ScopeShares:
    """The share of allowed hits in the last plain list of each scope, for one vector index (the
    index holds it, so two stores never size each other's lists): sizes the next list."""

    KEPT = 256  # scopes remembered at most (a recall's time window makes a scope of its own)

    def __init__(self) -> None:
        self._shares: dict[DocScope, float] = {}
        self._lock = threading.Lock()

    def get(self, scope: DocScope) -> float | None:
        with self._lock:
            return self._shares.get(scope)

    def put(self, scope: DocScope, share: float) -> None:
        with self._lock:
            if len(self._shares) >= self.KEPT and scope not in self._shares:
                self._shares.clear()
            self._shares[scope] = share


def among(column: str, values: Sequence[str], dialect: str, name: str) -> tuple[str, object]:
    """``column`` is one of ``values``, as SQL and the value of its one parameter ``name``: a JSON
    array on SQLite, an array on PostgreSQL. An expanding ``IN`` list is compiled again for every
    length and costs more than the query itself for the few hundred ids a search checks."""
    if dialect == "postgresql":
        return f"{column} = ANY(CAST(:{name} AS text[]))", list(values)
    return f"{column} IN (SELECT value FROM json_each(:{name}))", json.dumps(list(values))


def first_list(k: int, share: float | None) -> int:
    """How long the first plain list of a scoped search is for ``k`` allowed hits, given the share
    of allowed hits (``share``) its last plain list had: enough for ``k`` at that share, a tenth more
    to spare, never more than twice ``k`` (the length when the share is not known yet).

    A recall over a store of memories takes ``k`` and a tenth instead of ``2 k``: LanceDB's query
    costs more the more rows it returns and re-scores (``docs/benchmarks.md``, "Recall at 100k:
    the read path trimmed")."""
    if share is None or share <= 0.5:
        return k * 2
    return min(k * 2, math.ceil(k / share) + max(1, k // 10))


def scoped_nearest(
    db: Database,
    scope: DocScope,
    k: int,
    search: Callable[[int, Sequence[str] | None], list[T]],
    doc_of: Callable[[T], str],
    total: int | Callable[[], int],
    shares: ScopeShares | None = None,
) -> list[T]:
    """The ``k`` nearest hits among the documents ``scope`` allows.

    ``search(n, allowed)`` returns the ``n`` nearest hits, among the documents ``allowed`` when it is
    not None (a prefilter). First the plain list, as long as the share of allowed hits the last
    plain list of this scope had says is enough for ``k`` (:func:`first_list`, from ``shares``, the
    caller's index's; twice ``k`` the first time, and always without ``shares``): when the scope
    allows most documents (a recall over a store of memories), ``k`` allowed hits are in it —
    exactly the ``k`` nearest allowed ones. Otherwise few allowed documents: one prefiltered search
    over them. Many (more than :data:`PREFILTER_CAP`): the plain list is widened (×4 each time, up
    to ``total`` hits: a count, or a function that counts, called only then)
    until ``k`` of its hits are allowed.
    """
    if k <= 0:
        return []

    def allowed_of(hits: list[T]) -> list[T]:
        keep = scope.keep(db, [doc_of(h) for h in hits])
        return [h for h in hits if doc_of(h) in keep]

    wanted = first_list(k, shares.get(scope) if shares is not None else None)
    hits = search(wanted, None)
    kept = allowed_of(hits)
    if hits and shares is not None:
        shares.put(scope, len(kept) / len(hits))
    if len(kept) >= k or len(hits) < wanted:
        return kept[:k]
    allowed = scope.doc_ids(db, PREFILTER_CAP)
    if allowed is not None:
        return search(k, allowed) if allowed else []
    size = total() if callable(total) else total  # only now: counting may cost a query
    while len(kept) < k and len(hits) >= wanted and wanted < size:
        wanted = min(wanted * 4, max(size, k))
        hits = search(wanted, None)
        kept = allowed_of(hits)
    return kept[:k]
