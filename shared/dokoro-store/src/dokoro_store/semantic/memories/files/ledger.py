"""The folder's ledger: what a rebuild from the files needs that no memory file shows.

``memories/ledger/`` is committed with the memory files, one JSON object a line, sorted (a diff
or a merge in git reads line by line):

- ``verdicts.jsonl``: each verdict given on a pair of memories (``new``, ``old``, ``verdict``, who
  decided, when);
- ``purged.jsonl``: each purge (``id``, the ``revision`` it had, when, by whom; never its text):
  a folder behind the database, or a clone rebuilt from files, does not bring the memory back;
- ``uses/<YYYY-MM>.jsonl``: the use counters' last values (``uses``, ``last``), by the month of the
  memory's id (a recall rewrites the few months it touched, not every memory's line).

The ``depends_on`` links are in the memory files themselves (:mod:`.markdown`).

**Written** by a folder's reconcile, from the database (every folder on a team database writes its
own copy): the verdicts and purges when their count or latest time moved, the use counters of
the memories recalled since the folder last wrote them (an indexed read: never every row), at
most once per :data:`REFRESH_EVERY` seconds on a memory call, on every explicit sync, and whole on
a rebuild. So the counters a rebuild restores are those of at most that long before the database
was lost (and, on a team database, as ordered by each machine's clock).

**Read** by a rebuild (:mod:`.reindex`), forward only: a purge the database lacks is recorded
(before any file is read, so no older copy restores it), a verdict is written for a pair of
memories the database has that holds none, a counter only goes up. A ledger is a person's file
too, so hostile input: read behind the walls (no link followed, at most :data:`MAX_BYTES`), a line
longer than :data:`MAX_LINE` or that does not hold what it should is skipped and reported.
"""

from __future__ import annotations

import json
import os
import stat as stat_kind
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import and_, func, or_
from sqlalchemy import select as core_select

from dokoro_store.clock import iso, parse_iso
from dokoro_store.db.engine import Database
from dokoro_store.errors import OutsideStoreError
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.models.memories import MemoryConflict, MemoryTombstone
from dokoro_store.semantic.memories import repository
from dokoro_store.semantic.memories.files.markdown import MEMORIES_DIR
from dokoro_store.semantic.memories.files.run import Run, lstat
from dokoro_store.walls import containment as walls
from dokoro_store.walls.files import atomic_write_text

__all__ = ["LEDGER_DIR", "MAX_BYTES", "MAX_LINE", "REFRESH_EVERY", "Ledger", "LedgerRestored"]

LEDGER_DIR = "ledger"
_VERDICTS = f"{MEMORIES_DIR}/{LEDGER_DIR}/verdicts.jsonl"
_PURGED = f"{MEMORIES_DIR}/{LEDGER_DIR}/purged.jsonl"
_USES = f"{MEMORIES_DIR}/{LEDGER_DIR}/uses"
# A memory call refreshes the ledger at most this often (seconds); an explicit sync always does.
REFRESH_EVERY = 30.0
# The most bytes of one ledger file read, and of one line.
MAX_BYTES = 32 * 1024 * 1024
MAX_LINE = 4096
# Use counters read per refresh on a memory call (the rest on the next ones).
_USES_BATCH = 2000
_MAX_COUNT = 2**62
_VERDICT_WORDS = ("supersede", "keep_both", "discard_new")
_MEMORIES = MemoryRow.__table__  # type: ignore[attr-defined]
_CONFLICTS = MemoryConflict.__table__  # type: ignore[attr-defined]
_TOMBSTONES = MemoryTombstone.__table__  # type: ignore[attr-defined]


@dataclass
class LedgerRestored:
    """What a rebuild took from the ledger."""

    purges: int = 0
    verdicts: int = 0
    uses: int = 0


def _shard(memory_id: str) -> str:
    """The month of a memory's id (``mem_20261130_…`` → ``2026-11``), else ``other``."""
    day = memory_id[4:12]
    return f"{day[:4]}-{day[4:6]}" if repository.is_memory_id(memory_id) else "other"


def _line(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, sort_keys=True)


class Ledger:
    """The ledger of one workspace folder (see the module doc)."""

    def __init__(self, base: Path, db: Database) -> None:
        self._base = base
        self._db = db
        self._refreshed_at: float | None = None  # time.monotonic() of this process's last refresh

    # ------------------------------------------------------------------ write
    def refresh(self, run: Run, *, force: bool = False, whole: bool = False) -> None:
        """Write what changed in the database since the folder last wrote its ledger (module doc).
        ``force``: whatever the time since the last refresh; ``whole``: every use counter again."""
        now = time.monotonic()
        if not force and self._refreshed_at is not None and now - self._refreshed_at < REFRESH_EVERY:
            return
        if lstat(self._base / MEMORIES_DIR) is None:
            return  # no memory file yet: nothing to keep beside them
        self._refreshed_at = now
        m = run.manifest
        with self._db.read() as session:
            verdicts = session.execute(
                core_select(func.count(), func.max(_CONFLICTS.c.decided_at)).where(_CONFLICTS.c.verdict.is_not(None))
            ).one()
            purges = session.execute(core_select(func.count(), func.max(_TOMBSTONES.c.purged_at))).one()
        for key, (count, latest), relative, write in (
            ("ledger.verdicts", verdicts, _VERDICTS, self._write_verdicts),
            ("ledger.purged", purges, _PURGED, self._write_purges),
        ):
            mark = f"{count}|{latest}"
            due = m.meta(key) != mark or (count and lstat(self._base / relative) is None)
            if due and write(run):
                m.set_meta(key, mark)
        self._write_uses(run, whole=whole)

    def _write(self, run: Run, relative: str, lines: list[str]) -> bool:
        """Replace one ledger file (never through a link); an empty one is removed."""
        if (why := walls.unsafe_on_path(self._base, relative)) is not None:
            run.problem(relative, why)
            return False
        target = self._base / relative
        if not lines:
            target.unlink(missing_ok=True)
            return True
        try:
            atomic_write_text(target, "".join(f"{line}\n" for line in lines), within=self._base)
        except OutsideStoreError:  # a link swapped in since the check (its message names paths: not echoed)
            run.problem(relative, "not written: a symlink on the way leads out of the store")
            return False
        except OSError as exc:
            run.problem(relative, f"not written ({exc.strerror or type(exc).__name__})")
            return False
        return True

    def _write_verdicts(self, run: Run) -> bool:
        with self._db.read() as session:
            rows = session.execute(
                core_select(
                    _CONFLICTS.c.new_id,
                    _CONFLICTS.c.old_id,
                    _CONFLICTS.c.verdict,
                    _CONFLICTS.c.decided_by,
                    _CONFLICTS.c.decided_at,
                )
                .where(_CONFLICTS.c.verdict.is_not(None))
                .order_by(_CONFLICTS.c.new_id, _CONFLICTS.c.old_id)
            ).all()
        lines = [
            _line({"new": n, "old": o, "verdict": v, "by": by, "at": iso(at) if at else None})
            for n, o, v, by, at in rows
        ]
        return self._write(run, _VERDICTS, lines)

    def _write_purges(self, run: Run) -> bool:
        with self._db.read() as session:
            rows = session.execute(
                core_select(
                    _TOMBSTONES.c.memory_id, _TOMBSTONES.c.revision, _TOMBSTONES.c.purged_at, _TOMBSTONES.c.purged_by
                ).order_by(_TOMBSTONES.c.memory_id)
            ).all()
        lines = [_line({"id": i, "revision": int(r), "at": iso(at), "by": by}) for i, r, at, by in rows]
        return self._write(run, _PURGED, lines)

    def _write_uses(self, run: Run, *, whole: bool) -> None:
        """The counters of the memories recalled since the folder's mark (all of them: ``whole``)."""
        m = run.manifest
        at_text, _sep, mark_id = (m.meta("ledger.uses") or "").partition("|")
        mark_at = parse_iso(at_text) if at_text and not whole else None
        last = _MEMORIES.c.last_recalled_at
        columns = (_MEMORIES.c.id, _MEMORIES.c.recall_count, last)
        found: list[tuple[str, int, datetime]] = []
        with self._db.read() as session:
            if mark_at is None:
                query = core_select(*columns).where(last.is_not(None)).order_by(last, _MEMORIES.c.id)
                found = [
                    (str(i), int(n), t) for i, n, t in session.execute(query if whole else query.limit(_USES_BATCH))
                ]
            else:
                # The few recalled at the mark's very moment again (a recall's hits share one), then what follows.
                same = core_select(*columns).where(last == mark_at).limit(500)
                after = (
                    core_select(*columns)
                    .where(or_(last > mark_at, and_(last == mark_at, _MEMORIES.c.id > mark_id)))
                    .order_by(last, _MEMORIES.c.id)
                    .limit(_USES_BATCH)
                )
                found = [(str(i), int(n), t) for i, n, t in session.execute(same)]
                found += [(str(i), int(n), t) for i, n, t in session.execute(after)]
        if not found and not whole:
            return
        by_shard: dict[str, dict[str, tuple[int, datetime]]] = {}
        for memory_id, count, when in found:
            by_shard.setdefault(_shard(memory_id), {})[memory_id] = (count, when)
        if whole:  # every shard is written again: ones no memory of now lives in are removed
            for old in self._shard_files():
                by_shard.setdefault(old, {})
        for shard, counts in sorted(by_shard.items()):
            relative = f"{_USES}/{shard}.jsonl"
            merged = {} if whole else {e["id"]: e for e in self._entries(run, relative)}
            for memory_id, (count, when) in counts.items():
                merged[memory_id] = {"id": memory_id, "uses": count, "last": iso(when)}
            if not self._write(run, relative, [_line(merged[i]) for i in sorted(merged)]):
                return
        if found:
            top_at, top_id = max((when, memory_id) for memory_id, _count, when in found)
            m.set_meta("ledger.uses", f"{top_at.isoformat()}|{top_id}")

    def _shard_files(self) -> list[str]:
        """The months ``uses/`` holds a file for (never listed through a link)."""
        for folder in (f"{MEMORIES_DIR}/{LEDGER_DIR}", _USES):
            found = lstat(self._base / folder)
            if found is None or not stat_kind.S_ISDIR(found.st_mode):
                return []
        try:
            with os.scandir(self._base / _USES) as entries:
                return sorted(e.name[: -len(".jsonl")] for e in entries if e.name.endswith(".jsonl"))
        except OSError:
            return []

    # ------------------------------------------------------------------ read
    def _entries(self, run: Run, relative: str) -> Iterator[dict[str, Any]]:
        """The objects of one ledger file, read behind the walls; a bad line is reported, skipped."""
        try:
            data = walls.read_within(self._base, relative, limit=MAX_BYTES)
        except (FileNotFoundError, NotADirectoryError):
            return
        except walls.UnsafeFile as exc:
            run.problem(relative, str(exc))
            return
        except OSError as exc:
            run.problem(relative, f"cannot be read ({exc.strerror or type(exc).__name__})")
            return
        text = data.decode("utf-8", errors="replace")
        bad = 0
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line) if len(line) <= MAX_LINE else None
            except (ValueError, RecursionError):
                value = None
            if isinstance(value, dict):
                yield value
            else:
                bad += 1
                if bad == 1:
                    run.problem(relative, f"line {number} is not a ledger entry (one JSON object a line): skipped")

    def restore_purges(self, run: Run) -> int:
        """Record the purges the ledger carries that the database lacks (before any file is read)."""
        entries = []
        for entry in self._entries(run, _PURGED):
            memory_id, revision, at = entry.get("id"), entry.get("revision"), _when(entry.get("at"))
            if not (isinstance(memory_id, str) and repository.is_safe_id(memory_id)) or at is None:
                continue
            if not isinstance(revision, int) or isinstance(revision, bool) or not 0 <= revision <= _MAX_COUNT:
                continue
            entries.append((memory_id, revision, at, _who(entry.get("by"))))
        done = 0
        with self._db.write() as session:
            for memory_id, revision, at, by in entries:
                done += repository.entomb(session, memory_id, revision=revision, purged_at=at, by=by)
        return done

    def restore(self, run: Run) -> LedgerRestored:
        """The verdicts and use counters the ledger carries, forward only (module doc)."""
        restored = LedgerRestored()
        verdicts = []
        for entry in self._entries(run, _VERDICTS):
            new, old, verdict, at = entry.get("new"), entry.get("old"), entry.get("verdict"), _when(entry.get("at"))
            if isinstance(new, str) and isinstance(old, str) and verdict in _VERDICT_WORDS and at is not None:
                verdicts.append((new, old, str(verdict), at, _who(entry.get("by"))))
        with self._db.write() as session:
            for new, old, verdict, at, by in verdicts:
                restored.verdicts += repository.restore_verdict(
                    session, new_id=new, old_id=old, verdict=verdict, decided_at=at, by=by
                )
        for shard in self._shard_files():
            uses = []
            for entry in self._entries(run, f"{_USES}/{shard}.jsonl"):
                memory_id, count = entry.get("id"), entry.get("uses")
                if not isinstance(memory_id, str) or isinstance(count, bool) or not isinstance(count, int):
                    continue
                if 0 < count <= _MAX_COUNT:
                    uses.append((memory_id, count, _when(entry.get("last"))))
            with self._db.write() as session:
                for memory_id, count, last in uses:
                    restored.uses += repository.restore_uses(session, memory_id, count, last)
        return restored


def _when(value: Any) -> datetime | None:
    if not isinstance(value, str) or len(value) > 40:
        return None
    try:
        return parse_iso(value)
    except ValueError:
        return None


def _who(value: Any) -> str | None:
    return value if isinstance(value, str) and 0 < len(value) <= 200 and value.isprintable() else None
