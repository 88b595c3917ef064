"""Per-type switches: which memory types are in use, which agents may write, and which wait for a
person's review.

The switches are the store's settings, kept in its database (``memory_type_switches``, migrations
0027 and 0031rows), so every process and every machine of a team store obeys the same ones. A type
without a row is on: in use, agents may write it, and it waits for review only when the store's
review queue is on (``DOKORO_MEMORY_REVIEW``). A person changes them with ``dokoro memory types``
(CLI); agents cannot.

- **off** (``enabled`` false, ``dokoro memory types episode --off``): the type is not used at all,
  as mokata's per-type toggles: a remember of it is refused (nothing stored), and its memories are
  hidden from every read an agent makes of the memories — ``dokoro_recall`` (the type is left out
  of the search's own conditions, :meth:`TypeSwitches.hidden`), ``search_universal``'s memory hits
  and the briefing's rules and guardrails. Nothing is deleted: switched on again, they are back.
  ``dokoro_memory_status`` names the types switched off and counts what they hide;
- **agents write** off: an agent's remember of the type is refused, a person's is not, and its
  memories are read as any other (a store whose rules only people write still briefs them);
- **needs review**: an agent's memory of the type starts as ``proposed`` (:mod:`.remember`).

The store enforces them where a memory is written: :meth:`TypeSwitches.check_agent_write` refuses
a remember of a type off, or of a type agents may not write (nothing stored, the error says which
types are allowed and how a person changes it). What a person's files or a bulk import bring is
never refused by them (an import keeps everything; a type off hides it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlmodel import Session, col, select

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.errors import InvalidArgumentError
from dokoro_store.models.memory_settings import MemoryTypeSwitch
from dokoro_store.semantic.memories.rows import MEMORY_TYPES

__all__ = ["TypeSwitch", "TypeSwitches", "hidden_types", "parse_types"]


@dataclass(frozen=True)
class TypeSwitch:
    """One type's switches as they stand (``changed_by`` None: never changed, or by an unnamed person)."""

    type: str
    agents_write: bool = True
    needs_review: bool = False
    changed_by: str | None = None
    enabled: bool = True


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
        enabled: bool | None = None,
    ) -> list[TypeSwitch]:
        """Set the switches of ``types`` (a person's change); returns every type's switches after it."""
        kinds = parse_types(types)
        if agents_write is None and needs_review is None and enabled is None:
            raise InvalidArgumentError(
                "say what to change: enabled (on/off), agents_write (on/off) or needs_review (on/off)"
            )
        now = self._clock.now()
        with self._db.write() as session:
            for kind in kinds:
                row = session.get(MemoryTypeSwitch, kind, with_for_update=True) or MemoryTypeSwitch(
                    type=kind, changed_at=now
                )
                if enabled is not None:
                    row.enabled = enabled
                if agents_write is not None:
                    row.agents_write = agents_write
                if needs_review is not None:
                    row.needs_review = needs_review
                row.changed_at = now
                row.changed_by = by
                session.add(row)
        return self.all()

    def hidden(self, session: Session) -> list[str]:
        """The types switched off (hidden from reads) (:func:`hidden_types`)."""
        return hidden_types(session)

    def in_use(self, types: Sequence[str] | None = None) -> list[str]:
        """``types`` (every type when none) less the types switched off, read now."""
        with self._db.read() as session:
            return self.visible(session, types)

    def visible(self, session: Session, types: Sequence[str] | None = None) -> list[str]:
        """``types`` (every type when none) less the types switched off."""
        off = set(self.hidden(session))
        return [kind for kind in (types or MEMORY_TYPES) if kind not in off]

    def check_agent_write(self, session: Session, kind: str) -> TypeSwitch:
        """Refuse a memory of ``kind`` when the type is off, or an agent's when agents may not write
        that type (nothing is stored); returns its switches otherwise."""
        switch = self.of(session, kind)
        if not switch.enabled:
            used = [s.type for s in self._all_in(session) if s.enabled]
            raise InvalidArgumentError(
                f"memory type {kind!r} is switched off in this store: nothing was stored, and its memories are "
                f"hidden from recall and the briefing. Types in use: {', '.join(used) or 'none'}. "
                f"A person turns it back on with `dokoro memory types {kind} --on`."
            )
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


def hidden_types(session: Session) -> list[str]:
    """The types switched off (hidden from reads), in the order of :data:`~.rows.MEMORY_TYPES`: one
    query over a table of at most one row per type."""
    off = set(session.exec(select(MemoryTypeSwitch.type).where(col(MemoryTypeSwitch.enabled).is_(False))))
    return [kind for kind in MEMORY_TYPES if kind in off]


def _switch(kind: str, row: MemoryTypeSwitch | None) -> TypeSwitch:
    if row is None:
        return TypeSwitch(kind)
    return TypeSwitch(kind, bool(row.agents_write), bool(row.needs_review), row.changed_by, bool(row.enabled))
