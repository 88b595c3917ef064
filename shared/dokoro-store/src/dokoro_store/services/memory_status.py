"""The memories' health report: index freshness, stale and expired memories, unresolved
conflicts, never-recalled memories and compaction candidates."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlmodel import col, select

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.models.memories import MemoryConflict
from dokoro_store.results.memories import Memory, MemoryStatus
from dokoro_store.services.memory_rows import DOC_PREFIX, days, memory_result

if TYPE_CHECKING:
    from dokoro_store.retrieval.documents import DocumentService

__all__ = ["StatusReport", "UnresolvedPair", "memory_status"]


@dataclass(frozen=True)
class UnresolvedPair:
    """A pair the gate showed that still waits for a verdict."""

    new_id: str
    old_id: str
    similarity: float


@dataclass
class StatusReport:
    """The memories' health, with the memories themselves (the tool's text names them)."""

    total: int
    by_state: dict[str, int]
    by_type: dict[str, int]
    index_pending: int
    stale: list[Memory] = field(default_factory=list)
    unresolved: list[UnresolvedPair] = field(default_factory=list)
    never_recalled: int = 0
    compaction_candidates: list[tuple[str, list[Memory]]] = field(default_factory=list)
    expired: list[Memory] = field(default_factory=list)

    def result(self) -> MemoryStatus:
        """The report by id: what ``dokoro_memory_status`` publishes."""
        return MemoryStatus(
            total=self.total,
            by_state=self.by_state,
            by_type=self.by_type,
            index_pending=self.index_pending,
            stale=[m.id for m in self.stale],
            expired=[m.id for m in self.expired],
            unresolved_conflicts=[{"new_id": p.new_id, "old_id": p.old_id} for p in self.unresolved],
            never_recalled=self.never_recalled,
            compaction_candidates={entity: [m.id for m in items] for entity, items in self.compaction_candidates},
        )


def memory_status(db: Database, clock: Clock, docs: DocumentService) -> StatusReport:
    """The report over every memory (see :meth:`MemoryService.status`)."""
    now = clock.now()
    with db.read() as session:
        rows = list(session.exec(select(MemoryRow)))
        pairs = list(session.exec(select(MemoryConflict).where(col(MemoryConflict.verdict).is_(None))))
    by_state: dict[str, int] = {}
    by_type: dict[str, int] = {}
    for row in rows:
        by_state[row.state] = by_state.get(row.state, 0) + 1
        by_type[row.type] = by_type.get(row.type, 0) + 1
    active = {row.id: row for row in rows if row.state == "active"}
    report = StatusReport(
        total=len(rows),
        by_state=by_state,
        by_type=by_type,
        index_pending=sum(1 for doc_id in docs.pending() if doc_id.startswith(DOC_PREFIX)),
    )
    report.stale = [
        memory_result(m)
        for m in sorted(
            (m for m in active.values() if m.review_after is not None and m.review_after <= now),
            key=lambda m: m.review_after or now,
        )
    ]
    report.expired = [memory_result(m) for m in active.values() if m.valid_until is not None and m.valid_until <= now]
    report.unresolved = [
        UnresolvedPair(p.new_id, p.old_id, p.similarity) for p in pairs if p.new_id in active and p.old_id in active
    ]
    report.never_recalled = sum(1 for m in active.values() if m.recall_count == 0)
    # Compaction candidates: aging, unused episodes that share an entity could become one memory.
    aging = [
        m
        for m in active.values()
        if m.type == "episode"
        and days(now - m.created_at) >= 30
        and (m.last_recalled_at is None or days(now - m.last_recalled_at) >= 30)
    ]
    groups: dict[str, list[Memory]] = {}
    for row in aging:
        memory = memory_result(row)
        for entity in row.entities or ["(no entity)"]:
            groups.setdefault(entity, []).append(memory)
    report.compaction_candidates = sorted(
        ((entity, items) for entity, items in groups.items() if len(items) >= 2),
        key=lambda item: (-len(item[1]), item[0]),
    )
    return report
