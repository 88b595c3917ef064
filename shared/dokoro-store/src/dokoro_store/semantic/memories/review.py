"""The review queue: what agents infer waits for a person before it becomes shared truth.

Opt-in (``DOKORO_MEMORY_REVIEW=true``, passed to the store as ``memory_review``). With it on, every
memory an agent remembers is stored as ``proposed``, whatever trust it claims (an agent passing
``trust: user-stated`` is recorded as claiming it, and still waits): it is indexed
and the conflict gate runs on it, but recall leaves it out unless asked (``include_proposed``)
and the briefing does not show it. A memory it says it supersedes stays active until the
proposal is approved. A person approves it (it becomes ``active``, and what it supersedes is
archived then) or rejects it (it becomes ``deprecated``, with the reason: history is kept), with
``dokoro memory approve|reject`` or in ``dokoro browse``; setting ``state: active`` in its file
approves it too. What a person writes in the memory files and bulk imports never wait. A verdict
``supersede`` on a proposed memory archives the old one only once the proposal is approved.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlmodel import Session, col, select

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.errors import ConflictError, NotFoundError
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.results.memories import Memory
from dokoro_store.results.memory_files import Reviewed
from dokoro_store.semantic.memories import repository
from dokoro_store.semantic.memories.rows import memory_result

__all__ = ["PROPOSED", "MemoryReview", "initial_state"]

PROPOSED = "proposed"


def initial_state(*, review: bool) -> str:
    """The state a memory an agent remembers starts in: ``proposed`` under review, whatever trust
    it claims (only a person makes it count: the CLI, the TUI, or their own memory files)."""
    return PROPOSED if review else "active"


class MemoryReview:
    """Approve or reject proposed memories; list the ones waiting."""

    def __init__(self, db: Database, clock: Clock, index: Callable[[MemoryRow], bool]) -> None:
        self._db = db
        self._clock = clock
        self._index = index

    def pending(self) -> list[Memory]:
        """The proposed memories, oldest first."""
        with self._db.read() as session:
            rows = session.exec(
                select(MemoryRow)
                .where(MemoryRow.state == PROPOSED)
                .order_by(col(MemoryRow.created_at), col(MemoryRow.id))
            )
            return [memory_result(row) for row in rows]

    def _proposed(self, session: Session, memory_id: str) -> MemoryRow:
        row = session.get(MemoryRow, memory_id.strip(), with_for_update=True)
        if row is None:
            raise NotFoundError(
                f"no memory {memory_id!r}; the proposed ones are in `dokoro memory list --state proposed`"
            )
        if row.state != PROPOSED:
            raise ConflictError(
                f"memory {row.id} is {row.state}, not proposed: only proposed memories wait for review; nothing changed"
            )
        return row

    def approve(self, memory_id: str, *, by: str | None = None) -> Reviewed:
        """Make a proposed memory active; what it supersedes (if still active) is archived now."""
        now = self._clock.now()
        superseded: MemoryRow | None = None
        with self._db.write() as session:
            row = self._proposed(session, memory_id)
            repository.set_state(session, row, "active", reason=f"approved by {by}" if by else "approved", now=now)
            if row.supersedes:
                old = session.get(MemoryRow, row.supersedes, with_for_update=True)
                if old is not None and old.state == "active":
                    repository.supersede(session, old, by=row.id, now=now, agent=by)
                    superseded = old
        self._index(row)
        if superseded is not None:
            self._index(superseded)
        return Reviewed(
            memory=memory_result(row),
            decision="approved",
            superseded=memory_result(superseded) if superseded is not None else None,
        )

    def reject(self, memory_id: str, *, reason: str | None = None, by: str | None = None) -> Reviewed:
        """Deprecate a proposed memory (kept, with why; never shown as truth)."""
        now = self._clock.now()
        with self._db.write() as session:
            row = self._proposed(session, memory_id)
            why = "rejected in review" + (f" by {by}" if by else "")
            if reason and reason.strip():
                why += f": {reason.strip()}"
            repository.set_state(session, row, "deprecated", reason=why, now=now)
        self._index(row)
        return Reviewed(memory=memory_result(row), decision="rejected")
