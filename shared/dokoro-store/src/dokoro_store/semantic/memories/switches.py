"""Per-type switches: which memory types agents may write, and which wait for a person's review.

The switches are the store's settings, kept in its database (``memory_type_switches``, migration
0027), so every process and every machine of a team store obeys the same ones. A type without a
row is on: agents may write it, and it waits for review only when the store's review queue is on
(``DOKORO_MEMORY_REVIEW``). A person changes them with ``dokoro memory types`` (CLI); agents cannot.

The store enforces them where an agent writes: :meth:`TypeSwitches.check_agent_write` refuses a
remember of a type agents may not write (nothing stored, the error says which types are allowed
and how a person changes it), and a type whose switch ``needs_review`` is on makes an agent's
memory of it start as ``proposed`` (:mod:`.remember`). What a person writes (their memory files, a bulk
import) is never refused by them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlmodel import Session, select

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.errors import InvalidArgumentError
from dokoro_store.models.memory_settings import MemoryTypeSwitch
from dokoro_store.semantic.memories.rows import MEMORY_TYPES

__all__ = ["TypeSwitch", "TypeSwitches", "parse_types"]


@dataclass(frozen=True)
class TypeSwitch:
    """One type's switches as they stand (``changed_by`` None: never changed, or by an unnamed person)."""

    type: str
    agents_write: bool = True
    needs_review: bool = False
    changed_by: str | None = None


def parse_types(value: str | Sequence[str], name: str = "types") -> list[str]:
    """Memory types given as a list or comma-separated; an unknown one is refused with the known ones."""
    items = value.split(",") if isinstance(value, str) else list(value)
    kinds = [k.strip() for k in items if k.strip()]
    if not kinds:
        raise InvalidArgumentError(f"{name}: name at least one memory type ({', '.join(MEMORY_TYPES)})")
    for kind in kinds:
        if kind not in MEMORY_TYPES:
            raise InvalidArgumentError(
                f"{name}: {kind!r} is not a memory type; the types are {', '.join(MEMORY_TYPES)}"
            )
    return list(dict.fromkeys(kinds))


class TypeSwitches:
    """Read, set and enforce the switches of one store."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock

    def all(self) -> list[TypeSwitch]:
        """Every memory type's switches, in the order of :data:`~.rows.MEMORY_TYPES`."""
        with self._db.read() as session:
            rows = {row.type: row for row in session.exec(select(MemoryTypeSwitch))}
        return [_switch(kind, rows.get(kind)) for kind in MEMORY_TYPES]

    def of(self, session: Session, kind: str) -> TypeSwitch:
        """The switches of ``kind``, read in the caller's session (remember's transaction)."""
        return _switch(kind, session.get(MemoryTypeSwitch, kind))

    def set(
        self,
        types: Sequence[str],
        *,
        agents_write: bool | None = None,
        needs_review: bool | None = None,
        by: str | None = None,
    ) -> list[TypeSwitch]:
        """Set the switches of ``types`` (a person's change); returns every type's switches after it."""
        kinds = parse_types(types)
        if agents_write is None and needs_review is None:
            raise InvalidArgumentError("say what to change: agents_write (on/off) or needs_review (on/off)")
        now = self._clock.now()
        with self._db.write() as session:
            for kind in kinds:
                row = session.get(MemoryTypeSwitch, kind, with_for_update=True) or MemoryTypeSwitch(
                    type=kind, changed_at=now
                )
                if agents_write is not None:
                    row.agents_write = agents_write
                if needs_review is not None:
                    row.needs_review = needs_review
                row.changed_at = now
                row.changed_by = by
                session.add(row)
        return self.all()

    def check_agent_write(self, session: Session, kind: str) -> TypeSwitch:
        """Refuse an agent's memory of ``kind`` when agents may not write that type (nothing is
        stored); returns its switches otherwise."""
        switch = self.of(session, kind)
        if switch.agents_write:
            return switch
        allowed = [s.type for s in self._all_in(session) if s.agents_write]
        raise InvalidArgumentError(
            f"memory type {kind!r} is switched off for agents in this store: nothing was stored. "
            f"Types agents may write: {', '.join(allowed) or 'none'}. "
            f"A person turns it back on with `dokoro memory types {kind} --agents-write on`."
        )

    def _all_in(self, session: Session) -> list[TypeSwitch]:
        rows = {row.type: row for row in session.exec(select(MemoryTypeSwitch))}
        return [_switch(kind, rows.get(kind)) for kind in MEMORY_TYPES]


def _switch(kind: str, row: MemoryTypeSwitch | None) -> TypeSwitch:
    if row is None:
        return TypeSwitch(kind)
    return TypeSwitch(kind, bool(row.agents_write), bool(row.needs_review), row.changed_by)
