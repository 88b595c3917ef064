"""Which memories are stale, computed at read (no background job, nothing written).

A memory in force (``active`` or ``proposed``) is stale when it is past its ``valid_until`` or its
``review_after``, or when a memory it depends on (``depends_on``, ``memory_links``) was retired
(archived, deprecated, purged) since it was last renewed. The words for one memory are
:func:`~dokoro_store.semantic.memories.lifecycle.stale_words`'s, as every ranking shows them; this module
finds them over the whole store: for ``dokoro_memory_review``, the health line and the status.

Three indexed reads, never every row: the partial indexes on ``review_after`` and ``valid_until``
(migration 0027) and the links not checked since a retirement.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.orm import aliased
from sqlmodel import Session, col, or_, select

from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.models.memories import MemoryLink
from dokoro_store.results.memories import Memory
from dokoro_store.semantic.memories.lifecycle import RETIRED_STATES, broken_dependencies, stale_words
from dokoro_store.semantic.memories.rows import memory_result

__all__ = ["IN_FORCE", "StaleMemory", "dependents", "stale_ids", "stale_memories"]

IN_FORCE = ("active", "proposed")


@dataclass(frozen=True)
class StaleMemory:
    """A stale memory and why, in words starting with "stale"."""

    memory: Memory
    stale: str


def stale_ids(session: Session, now: datetime) -> list[str]:
    """Every stale memory's id, the longest overdue first (by its earliest date; dependents last).

    The state is checked here on the few rows read, not in SQL: a condition on ``state`` makes the
    planner walk every active memory through ``ix_memories_state_type`` instead of the partial
    index on the date (measured: ``bench/memory_health.py``)."""
    dated: dict[str, datetime] = {}
    for column in (MemoryRow.review_after, MemoryRow.valid_until):
        for memory_id, when, state in session.exec(
            select(MemoryRow.id, column, MemoryRow.state).where(col(column).is_not(None), col(column) <= now)
        ):
            if state in IN_FORCE and when is not None and (memory_id not in dated or when < dated[memory_id]):
                dated[memory_id] = when
    target = aliased(MemoryRow)
    dependent = aliased(MemoryRow)
    # From the links not checked since a retirement (few), each joined by primary key.
    linked = {
        memory_id
        for memory_id, state in session.exec(
            select(MemoryLink.memory_id, dependent.state)
            .select_from(MemoryLink)
            .join(dependent, col(dependent.id) == col(MemoryLink.memory_id))
            .outerjoin(target, col(target.id) == col(MemoryLink.depends_on))
            .where(
                col(MemoryLink.checked_at).is_(None),
                or_(col(target.id).is_(None), col(target.state).in_(RETIRED_STATES)),
            )
        )
        if state in IN_FORCE
    }
    ordered = sorted(dated, key=lambda i: (dated[i], i))
    return ordered + sorted(linked - set(dated))


def stale_memories(session: Session, now: datetime, *, limit: int | None = None) -> tuple[int, list[StaleMemory]]:
    """How many memories are stale, and the first ``limit`` of them (all when None) with why."""
    ids = stale_ids(session, now)
    shown = ids if limit is None else ids[:limit]
    if not shown:
        return len(ids), []
    rows: dict[str, MemoryRow] = {}
    for start in range(0, len(shown), 500):
        batch = shown[start : start + 500]
        rows |= {m.id: m for m in session.exec(select(MemoryRow).where(col(MemoryRow.id).in_(batch)))}
    broken = broken_dependencies(session.connection(), list(rows))
    out: list[StaleMemory] = []
    for memory_id in shown:
        row = rows.get(memory_id)
        if row is None:
            continue
        words = stale_words(row.state, row.review_after, row.valid_until, now, broken.get(memory_id, ()))
        if words is not None:
            out.append(StaleMemory(memory_result(row), words))
    return len(ids), out


def dependents(session: Session, memory_id: str) -> list[str]:
    """The memories in force that depend on ``memory_id``."""
    return list(
        session.exec(
            select(MemoryLink.memory_id)
            .join(MemoryRow, col(MemoryRow.id) == col(MemoryLink.memory_id))
            .where(col(MemoryLink.depends_on) == memory_id, col(MemoryRow.state).in_(IN_FORCE))
            .order_by(col(MemoryLink.memory_id))
        )
    )
