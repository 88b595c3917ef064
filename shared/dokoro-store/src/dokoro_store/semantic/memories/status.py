"""The memories' health report: index freshness, stale and expired memories, unresolved
conflicts, never-recalled memories and compaction candidates."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from sqlalchemy import func, or_
from sqlalchemy.orm import aliased
from sqlmodel import col, select

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.models.memories import MemoryConflict
from dokoro_store.results.memories import FilesCheck, Memory, MemoryStatus, TypeUsage
from dokoro_store.semantic.memories.health import Health, open_proposals, unused
from dokoro_store.semantic.memories.rows import DOC_PREFIX, memory_result
from dokoro_store.semantic.memories.staleness import stale_ids
from dokoro_store.semantic.memories.switches import hidden_types
from dokoro_store.semantic.memories.usage import type_usage

if TYPE_CHECKING:
    from sqlmodel.sql.expression import Select, SelectOfScalar

    from dokoro_store.semantic.documents.service import DocumentService

__all__ = [
    "AGING",
    "StatusReport",
    "UnresolvedPair",
    "aging_episodes",
    "episode_runs",
    "memory_status",
    "unresolved_pairs",
]

# An episode neither written nor recalled for this long is aging: a compaction candidate.
AGING = timedelta(days=30)


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
    # The memory files against the rows (a store with a workspace folder).
    files_check: FilesCheck | None = None
    # The one actionable line (None: all is well), every stale memory counted, the use of each type.
    health: str | None = None
    stale_total: int = 0
    usage: list[TypeUsage] = field(default_factory=list)
    # The types switched off (hidden from recall and the briefing) and their memories in force.
    hidden: dict[str, int] = field(default_factory=dict)

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
            files_check=self.files_check,
            health=self.health,
            stale_total=self.stale_total,
            usage=self.usage,
            hidden_types=self.hidden,
        )


def memory_status(db: Database, clock: Clock, docs: DocumentService) -> StatusReport:
    """The report over every memory (see :meth:`MemoryService.status`).

    Counted in the database: only the memories the report names (stale, expired, in an
    unresolved pair, aging episodes) are read, never every row.
    """
    now = clock.now()
    with db.read() as session:
        by_state: dict[str, int] = {}
        by_type: dict[str, int] = {}
        in_force: dict[str, int] = {}
        for state, kind, count in session.exec(
            select(MemoryRow.state, MemoryRow.type, func.count()).group_by(MemoryRow.state, MemoryRow.type)
        ):
            by_state[state] = by_state.get(state, 0) + int(count)
            by_type[kind] = by_type.get(kind, 0) + int(count)
            if state in ("active", "proposed"):
                in_force[kind] = in_force.get(kind, 0) + int(count)
        hidden = {kind: in_force.get(kind, 0) for kind in hidden_types(session)}
        active = col(MemoryRow.state) == "active"
        stale_rows = session.exec(
            select(MemoryRow)
            .where(active, col(MemoryRow.review_after).is_not(None), col(MemoryRow.review_after) <= now)
            .order_by(col(MemoryRow.review_after), col(MemoryRow.id))
        ).all()
        expired_rows = session.exec(
            select(MemoryRow)
            .where(active, col(MemoryRow.valid_until).is_not(None), col(MemoryRow.valid_until) <= now)
            .order_by(col(MemoryRow.id))
        ).all()
        never_recalled = session.exec(
            select(func.count()).select_from(MemoryRow).where(active, col(MemoryRow.recall_count) == 0)
        ).one()
        pairs = session.exec(unresolved_pairs()).all()
        aging = session.exec(aging_episodes(now)).all()
        stale_total = len(stale_ids(session, now))
        proposals = open_proposals(session)
        usage = type_usage(session)
        never_used = unused(session, now)
    report = StatusReport(
        total=sum(by_state.values()),
        by_state=by_state,
        by_type=by_type,
        index_pending=sum(1 for doc_id in docs.pending() if doc_id.startswith(DOC_PREFIX)),
    )
    report.stale = [memory_result(m) for m in stale_rows]
    report.expired = [memory_result(m) for m in expired_rows]
    report.unresolved = [UnresolvedPair(new_id, old_id, similarity) for new_id, old_id, similarity in pairs]
    report.never_recalled = int(never_recalled)
    report.compaction_candidates = episode_runs([memory_result(row) for row in aging])
    report.stale_total = stale_total
    report.hidden = hidden
    report.usage = usage
    report.health = Health(
        stale=stale_total,
        pending=by_state.get("proposed", 0),
        proposals=proposals,
        contradictions=len(report.unresolved),
        unused=never_used,
    ).line()
    return report


def unresolved_pairs() -> Select[str, str, float]:
    """The pairs the gate showed that still wait for a verdict, both memories active (the near-
    duplicates the report counts and the proposals ledger proposes to merge), oldest shown first."""
    new_row, old_row = aliased(MemoryRow), aliased(MemoryRow)
    return (
        select(MemoryConflict.new_id, MemoryConflict.old_id, MemoryConflict.similarity)
        .join(new_row, col(new_row.id) == col(MemoryConflict.new_id))
        .join(old_row, col(old_row.id) == col(MemoryConflict.old_id))
        .where(
            col(MemoryConflict.verdict).is_(None),
            col(new_row.state) == "active",
            col(old_row.state) == "active",
        )
        .order_by(col(MemoryConflict.shown_at), col(MemoryConflict.pair_hash))
    )


def aging_episodes(now: datetime) -> SelectOfScalar[MemoryRow]:
    """Active episodes written and last recalled more than :data:`AGING` ago, oldest first: the
    compaction candidates, once grouped by :func:`episode_runs`."""
    aged = now - AGING
    return (
        select(MemoryRow)
        .where(
            col(MemoryRow.state) == "active",
            col(MemoryRow.type) == "episode",
            col(MemoryRow.created_at) <= aged,
            or_(col(MemoryRow.last_recalled_at).is_(None), col(MemoryRow.last_recalled_at) <= aged),
        )
        .order_by(col(MemoryRow.created_at), col(MemoryRow.id))
    )


def episode_runs(aging: Sequence[Memory]) -> list[tuple[str, list[Memory]]]:
    """Aging episodes that share an entity (at least two): each run could become one memory.
    Largest run first, then by entity."""
    groups: dict[str, list[Memory]] = {}
    for memory in aging:
        for entity in memory.entities or ["(no entity)"]:
            groups.setdefault(entity, []).append(memory)
    return sorted(
        ((entity, items) for entity, items in groups.items() if len(items) >= 2),
        key=lambda item: (-len(item[1]), item[0]),
    )
