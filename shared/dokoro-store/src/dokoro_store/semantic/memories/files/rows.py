"""The memory rows the memory files (:mod:`.files`) read and write, every write through :mod:`.repository`.

:class:`FileRows` builds a row from a file's fields (the caller's new memory or version,
:mod:`.authority`; or the row a file describes, restored) and makes the few changes a file may ask
for: insert (once: a retry finds its row), a new version superseding the edited memory, an archived
memory brought back, a state, the pair a kept-both edit leaves in the conflict ledger, and the
``depends_on`` links of a restored memory. It reads the tombstones of purged memories too.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import datetime

from sqlmodel import col, select

from dokoro_store.clock import Clock, parse_iso
from dokoro_store.db.engine import Database
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.models.memories import MemoryConflict, MemoryLink, MemoryTombstone
from dokoro_store.semantic.memories import repository
from dokoro_store.semantic.memories.dictionary import EntityDictionary
from dokoro_store.semantic.memories.files.authority import Caller
from dokoro_store.semantic.memories.files.markdown import CONTENT_FIELDS, MemoryFields
from dokoro_store.semantic.memories.gate import pair_hash, text_similarity
from dokoro_store.semantic.memories.lifecycle import RETIRED_STATES
from dokoro_store.walls.secrets import redact, redact_all

__all__ = ["FileRows", "file_id", "redacted_fields", "version_id"]


def redacted_fields(fields: MemoryFields) -> MemoryFields:
    """Every text a file gave, secrets redacted: what is stored and what is echoed."""
    changes: dict[str, object] = {}
    for name in ("title", "body", "source", "agent", "session", "state_reason", "id", "supersedes", "superseded_by"):
        value = getattr(fields, name)
        if isinstance(value, str) and (cleaned := redact(value)).kinds:
            changes[name] = cleaned.text
    entities = [redact(e).text for e in fields.entities]
    if entities != list(fields.entities):
        changes["entities"] = tuple(entities)
    return replace(fields, **changes) if changes else fields  # type: ignore[arg-type]


def _when(text: str | None) -> datetime | None:
    return parse_iso(text) if text else None


def _content_key(fields: MemoryFields) -> str:
    return json.dumps([getattr(fields, name) for name in CONTENT_FIELDS], ensure_ascii=False, default=list)


def file_id(now: datetime, path: str, fields: MemoryFields) -> str:
    """The id of the memory a new file becomes (its day, its path, its text): the same file read
    again after a failed call names the row that call wrote, so a retry never writes a second one."""
    return repository.new_id(now, "file", path, _content_key(fields))


def version_id(now: datetime, old_id: str, fields: MemoryFields) -> str:
    """The id of the new version a person's edit of ``old_id``'s file makes (its day, the memory, the text)."""
    return repository.new_id(now, "version", old_id, _content_key(fields))


class FileRows:
    """The rows of the memory files: read, built from a file's fields, and written through the repository.
    ``index`` keeps the vector engine's copy of a changed memory in step."""

    def __init__(
        self, db: Database, clock: Clock, dictionary: EntityDictionary, index: Callable[[MemoryRow], bool]
    ) -> None:
        self._db = db
        self.db = db
        self.clock = clock
        self._dictionary = dictionary
        self.index = index

    def load(self, ids: Iterable[str]) -> dict[str, MemoryRow]:
        wanted = sorted(set(ids))
        found: dict[str, MemoryRow] = {}
        if not wanted:
            return found
        with self._db.read() as session:
            for start in range(0, len(wanted), 500):
                batch = wanted[start : start + 500]
                for row in session.exec(select(MemoryRow).where(col(MemoryRow.id).in_(batch))):
                    found[row.id] = row
        return found

    def row(self, memory_id: str) -> MemoryRow | None:
        with self._db.read() as session:
            return session.get(MemoryRow, memory_id)

    def alive(self, ids: list[str]) -> set[str]:
        """Those of ``ids`` the database has."""
        found: set[str] = set()
        with self._db.read() as session:
            for start in range(0, len(ids), 500):
                found.update(session.exec(select(MemoryRow.id).where(col(MemoryRow.id).in_(ids[start : start + 500]))))
        return found

    def links(self, ids: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """The ``depends_on`` links of these memories (for their files)."""
        wanted = sorted(set(ids))
        found: dict[str, list[str]] = {}
        with self._db.read() as session:
            for start in range(0, len(wanted), 500):
                for memory_id, target in session.execute(
                    select(MemoryLink.memory_id, MemoryLink.depends_on).where(
                        col(MemoryLink.memory_id).in_(wanted[start : start + 500])
                    )
                ):
                    found.setdefault(str(memory_id), []).append(str(target))
        return {memory_id: tuple(sorted(targets)) for memory_id, targets in found.items()}

    def tombstone(self, memory_id: str) -> MemoryTombstone | None:
        """The record of ``memory_id``'s purge, if it was purged."""
        with self._db.read() as session:
            return session.get(MemoryTombstone, memory_id)

    def normalise(self, fields: MemoryFields) -> MemoryFields:
        return replace(fields, entities=tuple(self._dictionary.canonical(fields.entities)))

    def new_row(
        self, fields: MemoryFields, *, memory_id: str | None = None, caller: Caller, trust: str | None = None
    ) -> MemoryRow:
        """A row for a file's fields made by ``caller``: a new memory (``trust``: the caller's for a
        new file, :meth:`~.authority.Caller.new_trust`) or a new version (its trust given)."""
        now = self.clock.now()
        (title, body, source), _kinds = redact_all([fields.title, fields.body, fields.source])
        return MemoryRow(
            id=memory_id or repository.new_id(now),
            type=fields.type,
            title=str(title),
            body=str(body),
            entities=self._dictionary.canonical(fields.entities),
            trust=trust or caller.new_trust(fields.trust),
            state="active",
            agent_id=caller.agent,
            source=source,
            created_at=now,
            updated_at=now,
            review_after=_when(fields.review_after),
            valid_until=_when(fields.valid_until),
        )

    def restored_row(self, fields: MemoryFields, memory_id: str) -> MemoryRow:
        """The row a file describes, for a memory the database lacks: its id, trust, state, dates,
        chain and revision as the file shows them."""
        now = self.clock.now()
        (title, body, source), _kinds = redact_all([fields.title, fields.body, fields.source])
        created = _when(fields.created) or now
        updated = _when(fields.updated) or created
        row = MemoryRow(
            id=memory_id,
            type=fields.type,
            title=str(title),
            body=str(body),
            entities=self._dictionary.canonical(fields.entities),
            trust=fields.trust,
            state=fields.state,
            agent_id=fields.agent,
            session_id=fields.session,
            source=source,
            created_at=created,
            updated_at=updated,
            review_after=_when(fields.review_after),
            valid_until=_when(fields.valid_until),
            supersedes=fields.supersedes,
            superseded_by=fields.superseded_by,
            state_reason=fields.state_reason,
            revision=max(1, fields.revision or 1),
        )
        if row.state != "active":
            row.state_changed_at = updated
        return row

    def restore_links(self, wanted: Iterable[tuple[str, tuple[str, ...], datetime]]) -> int:
        """The ``depends_on`` links of restored memories (memory, its dependencies, its ``updated``):
        only those the database lacks. A link counts as checked (its dependent renewed) when the
        dependency was retired (or purged) before the dependent last changed, as renewing it does."""
        entries = [(m, deps, when) for m, deps, when in wanted if deps]
        if not entries:
            return 0
        targets = sorted({d for _m, deps, _w in entries for d in deps})
        retired: dict[str, datetime | None] = {}
        with self._db.read() as session:
            for start in range(0, len(targets), 500):
                batch = targets[start : start + 500]
                for target, state, changed in session.execute(
                    select(MemoryRow.id, MemoryRow.state, MemoryRow.state_changed_at).where(
                        col(MemoryRow.id).in_(batch)
                    )
                ):
                    retired[str(target)] = changed if state in RETIRED_STATES else None
                for target, purged_at in session.execute(
                    select(MemoryTombstone.memory_id, MemoryTombstone.purged_at).where(
                        col(MemoryTombstone.memory_id).in_(batch)
                    )
                ):
                    retired.setdefault(str(target), purged_at)
        links = []
        now = self.clock.now()
        for memory_id, deps, when in entries:
            for target in deps:
                at = retired.get(target)
                links.append((memory_id, target, when or now, when if at is not None and at <= when else None))
        with self._db.write() as session:
            return repository.restore_links(session, links)

    def insert(self, row: MemoryRow) -> MemoryRow:
        """Insert ``row`` unless its id is there already (a retry: that row is returned)."""
        with self._db.write() as session:
            return repository.insert_new(session, row)

    def record_pair(self, row: MemoryRow, also: MemoryRow) -> None:
        """Make sure the pair of ``row`` and ``also`` is in the conflict ledger, unresolved, even when
        the gate found it not close."""
        key = pair_hash(row.id, also.id)
        with self._db.write() as session:
            if session.get(MemoryConflict, key) is None:
                repository.record_pair(
                    session,
                    pair_hash=key,
                    new_id=row.id,
                    old_id=also.id,
                    shared=sorted(set(row.entities) & set(also.entities)),
                    similarity=round(text_similarity(f"{row.title} {row.body}", f"{also.title} {also.body}"), 4),
                    shown_at=self.clock.now(),
                )

    def new_version(self, fields: MemoryFields, old: MemoryRow, caller: Caller) -> tuple[MemoryRow, bool]:
        """``caller``'s edit of ``old``'s file (which it may change): a new, active memory that
        supersedes it (written once: a retry of a call that failed after writing it finds it by its
        id). Returns the version and whether this call wrote it (then it is the gate's to check)."""
        new = self.new_row(
            fields,
            memory_id=version_id(self.clock.now(), old.id, fields),
            caller=caller,
            trust=caller.version_trust(fields.trust, old.trust),
        )
        new.supersedes = old.id
        new.source = new.source or f"edited file of {old.id}"
        now = new.created_at
        with self._db.write() as session:
            if (written := session.get(MemoryRow, new.id)) is not None:
                return written, False
            current = session.get(MemoryRow, old.id, with_for_update=True)
            if current is not None:
                if current.state in ("active", "proposed"):
                    why = f"superseded by {new.id} (its file was edited)"
                    repository.supersede(session, current, by=new.id, now=now, agent=caller.agent, reason=why)
                elif current.superseded_by is None:
                    repository.chain(session, current, by=new.id, now=now)
            repository.create(session, new)
        if current is not None:
            self.index(current)
        return new, True

    def revive(self, fields: MemoryFields, old: MemoryRow, caller: Caller) -> MemoryRow | None:
        """``caller``'s edit of the file of an archived or deprecated memory it may change: that same
        memory, active again with the file's text (a person vouches for it: ``user-stated``; an
        agent's keeps the lower trust); None when it is gone."""
        now = self.clock.now()
        fresh = self.new_row(
            fields, memory_id=old.id, caller=caller, trust=caller.version_trust(fields.trust, old.trust)
        )
        with self._db.write() as session:
            row = session.get(MemoryRow, old.id, with_for_update=True)
            if row is None:
                return None
            values = {
                name: getattr(fresh, name)
                for name in ("type", "title", "body", "entities", "trust", "source", "review_after", "valid_until")
            }
            repository.rewrite(session, row, values)
            # ``superseded_by`` stays: the chain it had is history (as when only ``state:`` is edited).
            repository.set_state(
                session, row, "active", reason="brought back by an edit of its file", now=now, agent=caller.agent
            )
        return row

    def set_state(self, memory_id: str, state: str, reason: str, *, agent: str | None = None) -> MemoryRow | None:
        now = self.clock.now()
        with self._db.write() as session:
            row = session.get(MemoryRow, memory_id, with_for_update=True)
            if row is None:
                return None
            repository.set_state(session, row, state, reason=reason, now=now, agent=agent)
        self.index(row)
        return row
