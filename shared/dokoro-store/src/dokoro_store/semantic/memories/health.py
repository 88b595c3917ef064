"""The memories' health line: one actionable line, or nothing when all is well.

``dokoro_briefing`` and ``dokoro_memory_status`` start with it, e.g. "memory health: 3 stale
memories, 2 open contradictions, 4 unused for 90+ days, 2 merge proposals: run `dokoro memory
review` (agents: dokoro_memory_review)". It counts what waits for someone's decision: stale
memories (:mod:`.staleness`), open contradictions (pairs the conflict gate showed, both memories
still active, without a verdict), unused memories (in force for :data:`UNUSED_AFTER` or more and
never used: no recall ever showed them as a close match, :mod:`.recall`; rules and guardrails are
left out, the briefing shows them without a recall), memories proposed by agents waiting for
review (:mod:`.review`) and the open upkeep proposals by kind (``memory_proposals``,
:mod:`.proposals`). Read-only: a few counts over indexed columns (the open pairs by a partial
index, the unused by the never-recalled one), nothing written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import exists, func, literal_column
from sqlalchemy.sql.elements import ColumnElement
from sqlmodel import Session, col, select
from sqlmodel.sql.expression import SelectOfScalar

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.models.memories import MemoryConflict
from dokoro_store.models.proposals import MemoryProposal
from dokoro_store.semantic.memories.staleness import stale_ids

__all__ = [
    "COUNT_CAP",
    "UNUSED_AFTER",
    "Health",
    "health",
    "health_line",
    "open_contradictions",
    "open_proposals",
    "unused",
]

# A memory in force this long and never used is unused (the prune proposals' age, :mod:`.proposals`).
UNUSED_AFTER = timedelta(days=90)
# The open contradictions and unused memories are counted up to this many (then "1000+"): the line
# nudges, and its cost must not grow with the store (it starts every briefing).
COUNT_CAP = 1_000

# The plural of each proposal kind in the line.
_KIND_WORDS = {"merge": "merge", "summarise": "summary", "prune": "prune", "guardrail": "guardrail"}


@dataclass(frozen=True)
class Health:
    """What waits for a decision."""

    stale: int = 0
    pending: int = 0
    proposals: dict[str, int] = field(default_factory=dict)
    contradictions: int = 0
    unused: int = 0

    def line(self) -> str | None:
        """The one line (None: all is well)."""
        parts: list[str] = []
        if self.stale:
            parts.append(f"{self.stale} stale {'memory' if self.stale == 1 else 'memories'}")
        if self.contradictions:
            many = "" if self.contradictions == 1 else "s"
            parts.append(f"{_up_to_cap(self.contradictions)} open contradiction{many}")
        if self.unused:
            parts.append(f"{_up_to_cap(self.unused)} unused for {UNUSED_AFTER.days}+ days")
        for kind, count in sorted(self.proposals.items(), key=lambda kv: (-kv[1], kv[0])):
            word = _KIND_WORDS.get(kind, kind)
            parts.append(f"{count} {word} {'proposal' if count == 1 else 'proposals'}")
        if self.pending:
            parts.append(f"{self.pending} proposed {'memory' if self.pending == 1 else 'memories'} to approve")
        if not parts:
            return None
        return f"memory health: {', '.join(parts)}: run `dokoro memory review` (agents: dokoro_memory_review)"


def open_proposals(session: Session) -> dict[str, int]:
    """The open upkeep proposals by kind."""
    rows = session.exec(
        select(MemoryProposal.kind, func.count())
        .where(col(MemoryProposal.status) == "proposed")
        .group_by(MemoryProposal.kind)
    ).all()
    return {str(kind): int(count) for kind, count in rows}


def _up_to_cap(count: int) -> str:
    return f"{COUNT_CAP}+" if count > COUNT_CAP else str(count)


def _counted(session: Session, ids: SelectOfScalar[str]) -> int:
    """How many rows ``ids`` selects, counted up to :data:`COUNT_CAP` + 1 (bounded work)."""
    return int(session.exec(select(func.count()).select_from(ids.limit(COUNT_CAP + 1).subquery())).one())


def open_contradictions(session: Session) -> int:
    """The pairs the conflict gate showed that wait for a verdict, both memories still active (up
    to :data:`COUNT_CAP` + 1).

    Written as a scan of the open pairs (the partial index ``ix_memory_conflicts_open``) with a
    primary-key look at each memory: a join let SQLite start from every active memory instead."""

    def active(memory_id: object) -> ColumnElement[bool]:
        return exists().where(col(MemoryRow.id) == memory_id, col(MemoryRow.state) == "active")

    return _counted(
        session,
        select(MemoryConflict.pair_hash).where(
            col(MemoryConflict.verdict).is_(None),
            active(col(MemoryConflict.new_id)),
            active(col(MemoryConflict.old_id)),
        ),
    )


def unused(session: Session, now: datetime) -> int:
    """Active memories written :data:`UNUSED_AFTER` ago or more and never used, rules and guardrails
    left out (the briefing shows them without a recall); up to :data:`COUNT_CAP` + 1: the never-
    recalled partial index (migration 0029) is read oldest first and stops there."""
    return _counted(
        session,
        select(MemoryRow.id).where(
            col(MemoryRow.state) == "active",
            # A literal, so the partial index of the never recalled (migration 0029) applies.
            col(MemoryRow.recall_count) == literal_column("0"),
            col(MemoryRow.created_at) <= now - UNUSED_AFTER,
            col(MemoryRow.type).not_in(["rule", "guardrail"]),
        ),
    )


def health(db: Database, clock: Clock) -> Health:
    """The counts the line is made of, read now."""
    now = clock.now()
    with db.read() as session:
        stale = len(stale_ids(session, now))
        pending = session.exec(
            select(func.count()).select_from(MemoryRow).where(col(MemoryRow.state) == "proposed")
        ).one()
        proposals = open_proposals(session)
        contradictions = open_contradictions(session)
        never_used = unused(session, now)
    return Health(
        stale=stale, pending=int(pending), proposals=proposals, contradictions=contradictions, unused=never_used
    )


def health_line(db: Database, clock: Clock) -> str | None:
    """The one actionable line, or None when all is well."""
    return health(db, clock).line()
