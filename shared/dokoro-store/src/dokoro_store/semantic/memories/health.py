"""The memories' health line: one actionable line, or nothing when all is well.

``dokoro_briefing`` and ``dokoro_memory_status`` start with it, e.g. "memory health: 3 stale
memories, 2 merge proposals: run `dokoro memory review` (agents: dokoro_memory_review)". It counts
what waits for someone's decision: stale memories (:mod:`.staleness`), memories proposed by agents
waiting for review (:mod:`.review`) and the open upkeep proposals by kind (``memory_proposals``,
:mod:`.proposals`). Read-only: a few counts over indexed columns, nothing written.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import func
from sqlmodel import Session, col, select

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.models.proposals import MemoryProposal
from dokoro_store.semantic.memories.staleness import stale_ids

__all__ = ["Health", "health", "health_line", "open_proposals"]

# The plural of each proposal kind in the line.
_KIND_WORDS = {"merge": "merge", "summarise": "summary", "prune": "prune", "guardrail": "guardrail"}


@dataclass(frozen=True)
class Health:
    """What waits for a decision."""

    stale: int = 0
    pending: int = 0
    proposals: dict[str, int] = field(default_factory=dict)

    def line(self) -> str | None:
        """The one line (None: all is well)."""
        parts: list[str] = []
        if self.stale:
            parts.append(f"{self.stale} stale {'memory' if self.stale == 1 else 'memories'}")
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


def health(db: Database, clock: Clock) -> Health:
    """The counts the line is made of, read now."""
    with db.read() as session:
        stale = len(stale_ids(session, clock.now()))
        pending = session.exec(
            select(func.count()).select_from(MemoryRow).where(col(MemoryRow.state) == "proposed")
        ).one()
        proposals = open_proposals(session)
    return Health(stale=stale, pending=int(pending), proposals=proposals)


def health_line(db: Database, clock: Clock) -> str | None:
    """The one actionable line, or None when all is well."""
    return health(db, clock).line()
