"""The memories' upkeep: what is stale or waits for review, and renewing or retiring a memory.

- :meth:`MemoryUpkeep.review` (``dokoro_memory_review``, ``dokoro memory review``): the stale
  memories with why (:mod:`.staleness`), the proposed ones waiting for a person, the open upkeep
  proposals, and the health line (:mod:`.health`);
- :meth:`MemoryUpkeep.renew` (``dokoro_memory_renew``, ``dokoro memory renew``): the owning agent
  (or a person) pushes ``review_after`` / ``valid_until`` forward and confirms the memory still holds
  although a memory it depends on was retired, or retires it (deprecated, with a reason: its own
  dependents become stale, and the answer names them);
- :attr:`MemoryUpkeep.switches`: the per-type switches (:mod:`.switches`).

Renewing writes through the repository (:func:`~.repository.renew`); retiring is
:meth:`~.service.MemoryService.forget`'s deprecation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dokoro_store.clock import Clock, iso
from dokoro_store.db.engine import Database
from dokoro_store.errors import ConflictError, InvalidArgumentError, NotFoundError
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.results.memory_upkeep import MemoryReviewList, Renewed, StaleEntry
from dokoro_store.semantic.memories import repository
from dokoro_store.semantic.memories.health import Health, open_contradictions, open_proposals, unused
from dokoro_store.semantic.memories.lifecycle import broken_dependencies, stale_words
from dokoro_store.semantic.memories.owners import refuse_foreign
from dokoro_store.semantic.memories.rows import memory_result, parse_time
from dokoro_store.semantic.memories.staleness import IN_FORCE, dependents, stale_memories
from dokoro_store.semantic.memories.switches import TypeSwitches

if TYPE_CHECKING:
    from dokoro_store.semantic.memories.service import MemoryService

__all__ = ["REVIEW_LIMIT", "MemoryUpkeep"]

# The stale memories a review lists at most (the total is always counted).
REVIEW_LIMIT = 200


class MemoryUpkeep:
    """Staleness review, renewal and the type switches of one store (``store.upkeep``)."""

    def __init__(self, db: Database, clock: Clock, memories: MemoryService) -> None:
        self._db = db
        self._clock = clock
        self._memories = memories
        self.switches = TypeSwitches(db, clock)

    def review(self, *, limit: int = REVIEW_LIMIT) -> MemoryReviewList:
        """What waits for upkeep now: stale memories (the longest overdue first), proposed memories
        (oldest first) and the open proposals by kind."""
        if not 1 <= limit <= 1000:
            raise InvalidArgumentError(f"limit must be between 1 and 1000; got {limit}")
        now = self._clock.now()
        pending = self._memories.review.pending()
        with self._db.read() as session:
            total, stale = stale_memories(session, now, limit=limit)
            proposals = open_proposals(session)
            contradictions = open_contradictions(session)
            never_used = unused(session, now)
        health = Health(
            stale=total, pending=len(pending), proposals=proposals, contradictions=contradictions, unused=never_used
        )
        return MemoryReviewList(
            health=health.line(),
            stale_total=total,
            stale=[StaleEntry(memory=s.memory, stale=s.stale) for s in stale],
            pending=pending,
            proposals=proposals,
        )

    def renew(
        self,
        memory_id: str,
        *,
        review_after: str | None = None,
        valid_until: str | None = None,
        retire: bool = False,
        reason: str | None = None,
        acting_agent: str | None = None,
    ) -> Renewed:
        """Renew a memory in force (dates pushed forward, its dependencies checked now), or retire it
        (``retire``, with a ``reason``). An agent may renew or retire only its own memories (or ones
        nobody owns, :mod:`.owners`); a person (``acting_agent`` None: the CLI) any."""
        memory_id = memory_id.strip()
        if not memory_id:
            raise InvalidArgumentError("id must not be empty: the memory to renew (dokoro_memory_review lists them)")
        review_at = parse_time(review_after, "review_after")
        valid_to = parse_time(valid_until, "valid_until")
        if retire and (review_at is not None or valid_to is not None):
            raise InvalidArgumentError("retire=true takes no new dates: either push the dates forward or retire it")
        if retire and not (reason and reason.strip()):
            raise InvalidArgumentError("reason is required to retire a memory (why it no longer holds; history kept)")
        now = self._clock.now()
        for name, when in (("review_after", review_at), ("valid_until", valid_to)):
            if when is not None and when <= now:
                raise InvalidArgumentError(
                    f"{name} must be later than now ({iso(now)}) to renew the memory; got {iso(when)}. "
                    "To retire it instead, pass retire=true with a reason"
                )
        self._memories.sync_files(sweep=False)
        with self._db.write() as session:
            row = session.get(MemoryRow, memory_id, with_for_update=True)
            if row is None:
                raise NotFoundError(f"no memory {memory_id!r}; dokoro_memory_review lists the stale ones")
            if row.state not in IN_FORCE:
                raise ConflictError(
                    f"memory {row.id} is {row.state}: only a memory in force is renewed; nothing changed"
                )
            refuse_foreign(
                row,
                acting_agent,
                doing="retire" if retire else "renew",
                instead="Nothing changed: an agent renews or retires only its own memories (or ones nobody owns). "
                "Ask {ask} (a person: `dokoro memory renew`)",
            )
            if not retire:
                self._check_renewal(row, review_at, valid_to, now)
                values = {
                    name: when
                    for name, when in (("review_after", review_at), ("valid_until", valid_to))
                    if when is not None
                }
                repository.renew(session, row, values=values, now=now)
        if retire:
            return self._retire(memory_id, str(reason).strip(), acting_agent)
        self._memories.sync_files(sweep=False)  # its file shows the new dates
        with self._db.read() as session:
            fresh = session.get(MemoryRow, memory_id)
            assert fresh is not None
            broken = broken_dependencies(session.connection(), [memory_id]).get(memory_id, ())
        still = stale_words(fresh.state, fresh.review_after, fresh.valid_until, now, broken)
        return Renewed(memory=memory_result(fresh), action="renewed", stale=still)

    @staticmethod
    def _check_renewal(row: MemoryRow, review_at: object, valid_to: object, now: object) -> None:
        """Refuse a renewal that would leave a past date in place (it would still be stale)."""
        past = [
            name
            for name, given, current in (
                ("review_after", review_at, row.review_after),
                ("valid_until", valid_to, row.valid_until),
            )
            if given is None and current is not None and current <= now  # type: ignore[operator]
        ]
        if past:
            raise InvalidArgumentError(
                f"memory {row.id} is past its {' and '.join(past)}: give a later "
                f"{' and '.join(past)} to renew it, or retire=true with a reason. Nothing changed"
            )

    def _retire(self, memory_id: str, reason: str, acting_agent: str | None) -> Renewed:
        memory, _done = self._memories.forget(memory_id, reason=reason, acting_agent=acting_agent)
        with self._db.read() as session:
            flagged = dependents(session, memory_id)
        return Renewed(memory=memory, action="retired", dependents_flagged=flagged)
