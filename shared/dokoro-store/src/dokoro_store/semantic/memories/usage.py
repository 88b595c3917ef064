"""Use of each memory type: how many are written, how often recalled, and how many never are.

Read from the rows (``recall_count`` counts every hit a recall returned): one grouped query. A
type written much and never read is a feature failing, the status says which.
"""

from __future__ import annotations

from sqlalchemy import Integer, case, func
from sqlmodel import Session, col, select

from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.results.memory_upkeep import TypeUsage
from dokoro_store.semantic.memories.staleness import IN_FORCE

__all__ = ["type_usage", "usage_line"]


def type_usage(session: Session) -> list[TypeUsage]:
    """Per memory type (those with memories), written, read and never read; the most written first."""
    never = func.sum(
        case((col(MemoryRow.state).in_(IN_FORCE) & (col(MemoryRow.recall_count) == 0), 1), else_=0).cast(Integer)
    )
    rows = session.exec(
        select(MemoryRow.type, func.count(), func.coalesce(func.sum(MemoryRow.recall_count), 0), never).group_by(
            MemoryRow.type
        )
    ).all()
    usage = [TypeUsage(type=t, written=int(n), read=int(r), never_read=int(z or 0)) for t, n, r, z in rows]
    return sorted(usage, key=lambda u: (-u.written, u.type))


def usage_line(usage: list[TypeUsage]) -> str:
    """The status's line: per type, written / read / never read."""
    if not usage:
        return "- use by type: no memories yet"
    parts = [f"{u.type} {u.written} written, {u.read} read, {u.never_read} never read" for u in usage]
    return "- use by type (written / recalls / never recalled): " + "; ".join(parts)
