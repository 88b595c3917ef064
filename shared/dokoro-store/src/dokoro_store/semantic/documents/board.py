"""The documents as a person's work board (reference §1.5: ``list``, ``get``, ``update``, ``tags``,
``tag``, ``time``).

The reference kept PRD stage, parallel slot, estimates, tags and time entries in columns and
tables of their own. Here they live in the document's ``metadata_json`` so the board needs no
schema of its own:

- ``tags`` come from the file (front matter, hashtags, folders) and are rewritten when the file is
  re-imported; tags a person adds go to ``manual_tags`` too, so a re-import never drops them.
- ``prd_stage``, ``parallel_slot``, ``time_estimated_min``, ``time_actual_min``;
- ``active_timer`` (the running time entry, at most one per document) and ``time_entries``
  (completed ones). Every change is one read-modify-write transaction on the document's row.

Memories are indexed as documents too (``memory:<id>``); the board leaves them out unless asked
for their type, since ``dokoro memory list`` shows them better.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from sqlalchemy import String, cast, func
from sqlmodel import Session, col, select

from dokoro_store.clock import Clock, iso, parse_iso
from dokoro_store.db.engine import Database
from dokoro_store.errors import ConflictError, InvalidArgumentError, NotFoundError
from dokoro_store.models import Doc
from dokoro_store.results.board import DocCard, DocDetail, TagCount, TimeEntry

__all__ = ["DOC_STATUSES", "PRIORITIES", "DocBoard"]

DOC_STATUSES = ("inbox", "backlog", "active", "pending", "paused", "blocked", "done", "archived")
PRIORITIES = ("urgent", "high", "medium", "low")
_PRIORITY_RANK = {name: rank for rank, name in enumerate(PRIORITIES)}
MAX_LIMIT = 500
MAX_TAG = 64
MAX_NOTES = 2000
_MEMORY_TYPE = "memory"


def _tags(meta: Mapping[str, Any]) -> list[str]:
    seen: dict[str, None] = {}
    for key in ("tags", "manual_tags"):
        value = meta.get(key)
        if isinstance(value, list):
            for tag in value:
                if str(tag).strip():
                    seen.setdefault(str(tag).strip().lower(), None)
    return list(seen)


def _int(value: Any) -> int | None:
    try:
        return None if value is None else int(value)
    except (TypeError, ValueError):
        return None


def _card(row: Doc) -> DocCard:
    meta = row.metadata_json or {}
    return DocCard(
        id=row.id,
        title=row.title,
        filepath=row.filepath,
        doc_type=row.doc_type,
        status=row.status,
        priority=row.priority,
        tags=_tags(meta),
        prd_stage=meta.get("prd_stage"),
        slot=_int(meta.get("parallel_slot")),
        estimate_min=_int(meta.get("time_estimated_min")),
        actual_min=_int(meta.get("time_actual_min")),
        created_at=row.created_at,
        updated_at=row.updated_at,
        completed_at=row.completed_at,
    )


def _entry(row: Doc, data: dict[str, Any], status: str) -> TimeEntry:
    return TimeEntry(
        doc_id=row.id,
        title=row.title,
        started_at=parse_iso(str(data["started_at"])),
        ended_at=parse_iso(str(data["ended_at"])) if data.get("ended_at") else None,
        duration_min=_int(data.get("duration_min")),
        status=status,
        slot=_int(data.get("slot")),
        notes=data.get("notes"),
    )


def _entries(row: Doc) -> list[TimeEntry]:
    meta = row.metadata_json or {}
    entries = [_entry(row, e, "completed") for e in meta.get("time_entries") or [] if isinstance(e, dict)]
    timer = meta.get("active_timer")
    if isinstance(timer, dict):
        entries.append(_entry(row, timer, "active"))
    return entries


class DocBoard:
    """Read and change the board fields of the store's documents."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock

    # ------------------------------------------------------------------ reads
    def docs(self, status: str | None = "active", *, doc_type: str | None = None, limit: int = 20) -> list[DocCard]:
        """Documents with ``status`` (None: any), slot first, then priority, then newest."""
        if not 1 <= limit <= MAX_LIMIT:
            raise InvalidArgumentError(f"limit must be between 1 and {MAX_LIMIT}; got {limit}")
        statement = select(Doc)
        if status:
            statement = statement.where(col(Doc.status) == status.strip().lower())
        if doc_type:
            statement = statement.where(col(Doc.doc_type) == doc_type.strip().lower())
        else:
            statement = statement.where(col(Doc.doc_type) != _MEMORY_TYPE)
        with self._db.read() as session:
            cards = [_card(row) for row in session.exec(statement)]
        cards.sort(key=lambda c: -c.updated_at.timestamp())
        cards.sort(key=lambda c: (c.slot is None, c.slot or 0, _PRIORITY_RANK.get(c.priority, len(PRIORITIES))))
        return cards[:limit]

    def status_counts(self, *, doc_type: str | None = None) -> dict[str, int]:
        """How many documents each status holds (memories left out unless asked for), counted in
        the database."""
        statement = select(Doc.status, func.count()).group_by(col(Doc.status))
        if doc_type:
            statement = statement.where(col(Doc.doc_type) == doc_type.strip().lower())
        else:
            statement = statement.where(col(Doc.doc_type) != _MEMORY_TYPE)
        with self._db.read() as session:
            return {str(status): int(count) for status, count in session.exec(statement)}

    def get(self, doc_id: str) -> DocDetail:
        """One document with its text and time entries."""
        with self._db.read() as session:
            row = self._row(session, doc_id)
        return DocDetail(**_card(row).model_dump(), content=row.content, time_entries=_entries(row))

    def tags(self, doc_id: str | None = None) -> list[TagCount]:
        """Every tag with the number of documents carrying it (most used first), or one document's."""
        with self._db.read() as session:
            if doc_id is not None:
                return [TagCount(name=t, count=1) for t in _tags(self._row(session, doc_id).metadata_json or {})]
            rows = session.exec(select(Doc.metadata_json).where(col(Doc.metadata_json).is_not(None)))
            counts: dict[str, int] = {}
            for meta in rows:
                for tag in _tags(meta or {}):
                    counts[tag] = counts.get(tag, 0) + 1
        return [TagCount(name=n, count=c) for n, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]

    def timers(self) -> list[TimeEntry]:
        """Every running time entry, oldest first."""
        marker = cast(col(Doc.metadata_json), String).like('%"active_timer"%')
        with self._db.read() as session:
            rows = list(session.exec(select(Doc).where(marker)))
        running = [e for row in rows for e in _entries(row) if e.status == "active"]
        return sorted(running, key=lambda e: (e.started_at, e.doc_id))

    # ------------------------------------------------------------------ writes
    @staticmethod
    def _row(session: Session, doc_id: str, *, lock: bool = False) -> Doc:
        row = session.get(Doc, doc_id.strip(), with_for_update=lock)
        if row is None:
            raise NotFoundError(f"no document {doc_id.strip()!r}; list ids with `dokoro list` or `dokoro search`")
        return row

    @contextmanager
    def _editing(self, doc_id: str) -> Iterator[tuple[Doc, dict[str, Any], datetime]]:
        """The locked row, a copy of its metadata to change, and now; saved together on exit."""
        now = self._clock.now()
        with self._db.write() as session:
            row = self._row(session, doc_id, lock=True)
            meta = dict(row.metadata_json or {})
            yield row, meta, now
            row.metadata_json = meta
            row.updated_at = now
            session.add(row)

    def update(
        self,
        doc_id: str,
        *,
        status: str | None = None,
        priority: str | None = None,
        stage: str | None = None,
        slot: int | None = None,
        estimate_min: int | None = None,
    ) -> DocCard:
        """Change the given fields; ``status='done'`` also stamps ``completed_at``."""
        if all(v is None for v in (status, priority, stage, slot, estimate_min)):
            raise InvalidArgumentError("nothing to update: give --status, --priority, --stage, --slot or --estimate")
        if status is not None and status.strip().lower() not in DOC_STATUSES:
            raise InvalidArgumentError(f"status must be one of {', '.join(DOC_STATUSES)}; got {status!r}")
        if priority is not None and priority.strip().lower() not in PRIORITIES:
            raise InvalidArgumentError(f"priority must be one of {', '.join(PRIORITIES)}; got {priority!r}")
        if slot is not None and not 0 <= slot <= 99:
            raise InvalidArgumentError(f"slot must be between 0 and 99; got {slot}")
        if estimate_min is not None and not 0 <= estimate_min <= 100_000:
            raise InvalidArgumentError(f"estimate must be between 0 and 100000 minutes; got {estimate_min}")
        with self._editing(doc_id) as (row, meta, now):
            if status is not None:
                row.status = status.strip().lower()
                row.completed_at = now if row.status == "done" else None
            if priority is not None:
                row.priority = priority.strip().lower()
            if stage is not None:
                meta["prd_stage"] = stage.strip() or None
            if slot is not None:
                meta["parallel_slot"] = slot
            if estimate_min is not None:
                meta["time_estimated_min"] = estimate_min
        return _card(row)

    def tag(self, doc_id: str, tag: str) -> DocCard:
        """Add a tag (lower-cased, trimmed); adding one the document has is a no-op."""
        name = tag.strip().lower()
        if not name or len(name) > MAX_TAG or any(ch.isspace() for ch in name):
            raise InvalidArgumentError(f"a tag is one word of 1 to {MAX_TAG} characters; got {tag!r}")
        with self._editing(doc_id) as (row, meta, _now):
            for key in ("tags", "manual_tags"):
                current = [str(t) for t in meta.get(key) or []]
                if name not in current:
                    meta[key] = [*current, name]
        return _card(row)

    def untag(self, doc_id: str, tag: str) -> DocCard:
        """Remove a tag (from the file's tags too, until the file is imported again)."""
        name = tag.strip().lower()
        with self._editing(doc_id) as (row, meta, _now):
            if name not in _tags(meta):
                raise NotFoundError(
                    f"document {row.id} has no tag {name!r}; its tags: {', '.join(_tags(meta)) or 'none'}"
                )
            for key in ("tags", "manual_tags"):
                if isinstance(meta.get(key), list):
                    meta[key] = [t for t in meta[key] if str(t).strip().lower() != name]
        return _card(row)

    def start_timer(self, doc_id: str, *, slot: int | None = None) -> TimeEntry:
        """Start a time entry on a document (one running entry per document)."""
        if slot is not None and not 0 <= slot <= 99:
            raise InvalidArgumentError(f"slot must be between 0 and 99; got {slot}")
        with self._editing(doc_id) as (row, meta, now):
            running = meta.get("active_timer")
            if isinstance(running, dict):
                raise ConflictError(
                    f"a timer already runs on {row.id} since {running.get('started_at')}; "
                    f"stop it with `dokoro time stop {row.id}`"
                )
            meta["active_timer"] = {"started_at": iso(now), "slot": slot}
            if slot is not None:
                meta["parallel_slot"] = slot
        return _entries(row)[-1]

    def stop_timer(self, doc_id: str | None = None, *, notes: str | None = None) -> TimeEntry:
        """Stop the running entry of ``doc_id`` (or the only one running); adds its minutes to the
        document's actual time."""
        if notes is not None and len(notes) > MAX_NOTES:
            raise InvalidArgumentError(f"notes are {len(notes)} characters; at most {MAX_NOTES}")
        if doc_id is None:
            running = self.timers()
            if not running:
                raise NotFoundError("no timer is running; start one with `dokoro time start DOC_ID`")
            if len(running) > 1:
                ids = ", ".join(e.doc_id for e in running)
                raise InvalidArgumentError(f"{len(running)} timers run ({ids}); say which: `dokoro time stop DOC_ID`")
            doc_id = running[0].doc_id
        with self._editing(doc_id) as (row, meta, now):
            timer = meta.pop("active_timer", None)
            if not isinstance(timer, dict):
                raise NotFoundError(f"no timer runs on {row.id}; see `dokoro time status`")
            minutes = max(0, math.floor((now - parse_iso(str(timer["started_at"]))).total_seconds() / 60 + 0.5))
            entry = {**timer, "ended_at": iso(now), "duration_min": minutes, "notes": (notes or "").strip() or None}
            entries = [e for e in meta.get("time_entries") or [] if isinstance(e, dict)]
            entries.append(entry)
            meta["time_entries"] = entries
            meta["time_actual_min"] = sum(_int(e.get("duration_min")) or 0 for e in entries)
        return _entry(row, entry, "completed")
