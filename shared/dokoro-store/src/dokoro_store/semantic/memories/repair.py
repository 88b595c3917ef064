"""Rows an earlier version let in that no memory file can hold, found and repaired (``dokoro doctor --fix``).

Before files were checked as they are read, a memory file could make a row with any id, e.g.
``id: ../../../etc/passwd``; rendering its file then failed every remember and recall for every
folder on the database (today such a row is reported and skipped, :mod:`.files.render`). This
module finds them (an indexed look at the ids: only those that are no ``mem_`` id are read) and
gives each a safe id (derived from the old one, so a second run finds nothing), with every
reference (chains, links, the conflict ledger) and its document in the index; a type that is none
of the store's becomes ``fact``. Rows change through :mod:`.repository`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from sqlalchemy import or_
from sqlmodel import Session, col, select

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.results.memory_files import MemoryRepair, RepairedMemory
from dokoro_store.semantic.memories import repository
from dokoro_store.semantic.memories.rows import DOC_PREFIX, MEMORY_TYPES

if TYPE_CHECKING:
    from dokoro_store.semantic.documents.service import DocumentService

__all__ = ["find_unsafe", "repair_rows"]


def _candidates(session: Session) -> list[MemoryRow]:
    """The rows whose id is no ``mem_`` id, or whose type is none of the store's (few: read whole)."""
    return list(
        session.exec(
            select(MemoryRow)
            .where(or_(~col(MemoryRow.id).startswith("mem_"), ~col(MemoryRow.type).in_(MEMORY_TYPES)))
            .order_by(col(MemoryRow.id))
        )
    )


def _why(row: MemoryRow) -> str | None:
    if not repository.is_safe_id(row.id):
        return "an id that cannot name a file"
    if row.type not in MEMORY_TYPES:
        return f"a type that is none of {', '.join(MEMORY_TYPES)}"
    return None


def find_unsafe(db: Database) -> list[tuple[str, str]]:
    """The rows no file can hold, as (id, why)."""
    with db.read() as session:
        return [(row.id, why) for row in _candidates(session) if (why := _why(row)) is not None]


def repair_rows(db: Database, clock: Clock, docs: DocumentService, index: Callable[[MemoryRow], bool]) -> MemoryRepair:
    """Give every row no file can hold a safe id (and a known type), in one transaction; then its
    document moves to the new id (``index`` saves and indexes a memory's document)."""
    done: list[RepairedMemory] = []
    now = clock.now()
    with db.write() as session:
        for row in _candidates(session):
            why = _why(row)
            if why is None:
                continue
            old = row.id
            if row.type not in MEMORY_TYPES:
                repository.rewrite(session, row, {"type": "fact", "updated_at": now})
            new = old
            if not repository.is_safe_id(old):
                new = repository.new_id(row.created_at, "repaired", old)
                repository.reassign_id(session, row, new)
            done.append(RepairedMemory(old_id=old, new_id=new, why=why))
    for repaired in done:
        if repaired.new_id != repaired.old_id:
            docs.delete(f"{DOC_PREFIX}{repaired.old_id}")
        with db.read() as session:
            fixed = session.get(MemoryRow, repaired.new_id)
        if fixed is not None:
            index(fixed)
    return MemoryRepair(repaired=done)
