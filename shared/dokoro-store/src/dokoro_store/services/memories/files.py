"""Memories as markdown files a person can read, edit and keep in git; the database stays the truth.

Every memory is rendered to ``memories/<type>/<id>-<slug>.md`` (:mod:`.markdown`) in the
workspace folder, written atomically. No daemon: :meth:`MemoryFiles.sync` runs at the start of
every memory call and brings files and rows in step, in both directions.

**Rows → files.** Database triggers give a memory a new change number (``rev``) whenever
something its file shows changes (migration 0017). The folder's manifest
(:mod:`.manifest`) keeps the highest number it rendered; each sync renders the rows
above it, and only those (at most ``render_batch`` of them per call, oldest first: a store
upgraded with many memories is rendered over its first calls, or at once by ``dokoro memory
reindex``). That is how a folder learns of memories written by other processes,
or, on a team PostgreSQL, by other machines: every machine renders into its own folder. Recall
counts are not in the files, so recall never writes a file.

**Files → rows** (a stat gate, O(changed files)). Each sync stats the ``memories/`` folder and
its type folders; a folder whose modification time moved (a file created, deleted, renamed, or
saved by an editor that writes a new file and renames it) has its files stat-ed against the
manifest. Editors that rewrite a file in place do not move the folder's time: a rolling sweep
stats the next ``sweep`` files of the manifest (all of them while there are no more than
``sweep``): on every call in a folder of at most :data:`SWEEP_ALWAYS` files, else ``sweep`` files
per :data:`SWEEP_INTERVAL` (a second) of this process's time, spread over its calls — a call a tenth
of a second after the last stats a tenth of ``sweep`` — so no call pays for a whole window (an
explicit :meth:`MemoryFiles.sync` always sweeps a whole one). Such an edit is seen on the next call
in a small folder and within ``files / sweep`` seconds of calls in a large one. Only a file whose
stat changed is read; only a file whose fields changed is acted on:

- an edit of a memory's content makes a new version: a new memory (trust ``user-stated``,
  active) supersedes the edited one, and the conflict gate runs on it. The edited file is
  rendered again from its (now archived) row; the new version gets its own file. Editing an
  archived or deprecated memory's file brings that same memory back (active, the file's text,
  ``user-stated``, its chain kept), through the gate;
- a change of the front matter's ``state`` alone changes the memory's state (``active``
  brings an archived, deprecated or proposed memory back; ``archived``/``deprecated`` retire it);
- a deleted file deprecates its memory with the reason "file deleted" (never a purge); the
  file is not rendered again until the memory changes. A whole type folder deleted is
  rendered again instead (a safety net against ``rm -r``);
- when the file and the row both changed since the last render, both are kept: the file's
  version becomes a new memory, the pair is written to the conflict ledger (unresolved until
  a verdict) and the answer says so;
- a new file becomes a new memory (``user-stated``) and keeps its name; a file carrying the id
  of a memory the database lacks restores it; a moved file stays its memory's file;
- a file that cannot be read is reported and left alone (its memory is not rendered over it)
  until it is fixed.

**Behind the store's walls** (:mod:`dokoro_store.walls`): the files are a person's and so hostile
input. A symlink (a file, or a whole type folder) is never followed, read or written over: it is
reported and skipped. A file over :data:`~dokoro_store.walls.MAX_FILE_BYTES` is reported, never
imported (and stays so across restarts: the manifest keeps the note until its stat changes). Front
matter is loaded by :func:`dokoro_store.frontmatter.load` (no YAML anchors or aliases, nesting
bounded); one that is broken or never closes is reported, never a new version. Secrets in a file
are redacted from every field read (and from every reason reported) before anything is stored or
echoed. A memory made from a file gets an id derived from the file (its path, text and time), so
a call that fails part-way and is retried finds the row it wrote instead of writing another. A
file deleted by a person while a call reads it is simply gone (seen as deleted next time), never
the call's failure. A memory call's own reconcile acts on at most :data:`READS_PER_CALL` files
(the rest on the next calls), and waits at most :data:`LOCK_WAIT` for another process's
reconcile: past that it goes on with the rows as they stand (its answer says so).

``memories/dictionary.md`` (:mod:`.dictionary`) is re-read when its stat changes.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import stat as stat_kind
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from filelock import Timeout
from sqlalchemy import bindparam, func
from sqlalchemy import select as core_select
from sqlmodel import col, select

from dokoro_store import walls
from dokoro_store.clock import Clock, parse_iso
from dokoro_store.db.engine import Database
from dokoro_store.errors import DokoroError, NotFoundError
from dokoro_store.files import atomic_write_text, file_lock
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.models.memories import MemoryConflict
from dokoro_store.paths import StorePaths
from dokoro_store.results.memories import CloseMemory, FileChange, FileProblem, FilesCheck, FilesSync
from dokoro_store.results.memory_files import MemoryReindex
from dokoro_store.secrets import redact, redact_all
from dokoro_store.services.memories import repository
from dokoro_store.services.memories.dictionary import DICTIONARY_FILE, EntityDictionary
from dokoro_store.services.memories.gate import pair_hash, text_similarity
from dokoro_store.services.memories.manifest import FileEntry, Manifest, ManifestFile
from dokoro_store.services.memories.markdown import (
    CONTENT_FIELDS,
    MEMORIES_DIR,
    MemoryFields,
    UnparseableFile,
    fields_digest,
    fields_of_row,
    memory_path,
    parse_memory_file,
    render_memory,
)

if TYPE_CHECKING:
    from dokoro_store.retrieval.documents import Progress
    from dokoro_store.services.memories.gate import ConflictGate

__all__ = ["DEFAULT_RENDER_BATCH", "DEFAULT_SWEEP", "LOCK_WAIT", "READS_PER_CALL", "MemoryFiles"]

DEFAULT_SWEEP = 2000
# Files whose memory is looked up per call, to find memories purged by another process.
PURGE_WINDOW = 250
# Rows changed elsewhere rendered per call at most (the rest on the next calls).
DEFAULT_RENDER_BATCH = 500
# A memory call's own reconcile runs the rolling sweep (stats of files edited in place) at a rate of
# ``sweep`` files per this many seconds in a folder of more than SWEEP_ALWAYS files, each call taking
# its share of the time since the last: stating 2,000 files was two thirds of a remember's CPU on a
# 10k store (``docs/benchmarks.md``, writes over MCP), and when one call in ten paid it whole, it was
# a recall's 95th percentile at 100k. A person's in-place edit is still seen within seconds; an
# explicit ``sync_files`` always sweeps a whole window.
SWEEP_INTERVAL = 1.0
SWEEP_ALWAYS = 100
FILE_DELETED = "file deleted"
# A memory call's own reconcile reads and acts on at most this many files (each may be a new memory
# to embed and check); the others wait for the next calls. An explicit sync reads them all.
READS_PER_CALL = 50
# How long a memory call waits for another process's reconcile of the folder before going on with
# the rows as they stand (seconds): one process's slow files never hold another's calls.
LOCK_WAIT = 1.0
_LINKED = (
    "a symlink: nothing is read through it or written over it (its target may be outside the store); "
    "replace it by a real folder or file"
)
_LINKED_ROOT = "a symlink or not a folder: no memory file is read or written until it is a real folder"
BUSY = (
    "the memory files are being reconciled by another process; this call used the memories as they "
    "stand (edits to the files are picked up by a later call)"
)
# A manifest ``rev`` no row has: the file is rendered again on this sync.
_RERENDER = -1
# A folder time no folder has: the folder is listed again on the next sync.
_RELIST = -1
_MEMORIES = MemoryRow.__table__  # type: ignore[attr-defined]
# The rows changed since a folder's mark, oldest change first (built once: every memory call asks).
_FEED = (
    core_select(_MEMORIES.c.id, _MEMORIES.c.rev)
    .where(_MEMORIES.c.rev > bindparam("mark"))
    .order_by(_MEMORIES.c.rev)
    .limit(bindparam("limit"))
)
_NO_LIMIT = 2**62  # the feed's limit when a call renders every changed row (both databases take it)


def _stat(path: Path | str) -> os.stat_result | None:
    """The stat of the path itself, a symlink's own (never its target's)."""
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


class _Gone(Exception):
    """The file was deleted (by a person) while this call was reading it: seen as deleted next time."""


def _redacted_fields(fields: MemoryFields) -> MemoryFields:
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


def _is_memory_file(name: str) -> bool:
    return name.endswith(".md") and not name.startswith(".")


def _when(text: str | None) -> datetime | None:
    return parse_iso(text) if text else None


def _content_key(fields: MemoryFields) -> str:
    return json.dumps([getattr(fields, name) for name in CONTENT_FIELDS], ensure_ascii=False, default=list)


def _file_id(now: datetime, path: str, fields: MemoryFields) -> str:
    """The id of the memory a new file becomes (its day, its path, its text): the same file read
    again after a failed call names the row that call wrote, so a retry never writes a second one."""
    return repository.new_id(now, "file", path, _content_key(fields))


def _version_id(now: datetime, old_id: str, fields: MemoryFields) -> str:
    """The id of the new version a person's edit of ``old_id``'s file makes (its day, the memory, the text)."""
    return repository.new_id(now, "version", old_id, _content_key(fields))


@dataclass
class _Run:
    """One sync: the open manifest, the report being built, and the ids it must render."""

    manifest: Manifest
    changes: list[FileChange] = field(default_factory=list)
    problems: list[FileProblem] = field(default_factory=list)
    render: set[str] = field(default_factory=set)
    blocked: set[str] = field(default_factory=set)
    rendered: int = 0
    removed: int = 0
    # Files this call may still read and act on (None: no bound, an explicit sync).
    budget: int | None = None
    deferred: int = 0

    def problem(self, path: str, reason: str) -> str:
        """Report a file (once per call), its reason redacted of secrets; the reason as reported."""
        reason = redact(reason).text
        if not any(p.path == path and p.reason == reason for p in self.problems):
            self.problems.append(FileProblem(path=path, reason=reason))
        return reason

    def spend(self) -> bool:
        """Take one file of the call's budget; False when it is spent (the file waits)."""
        if self.budget is None:
            return True
        if self.budget <= 0:
            self.deferred += 1
            return False
        self.budget -= 1
        return True

    def result(self) -> FilesSync:
        note = (
            f"{self.deferred} more changed file(s) than a call reads; the next calls read them"
            if self.deferred
            else None
        )
        return FilesSync(
            changes=self.changes, problems=self.problems, rendered=self.rendered, removed=self.removed, note=note
        )


@dataclass
class _Found:
    """What a scan found: files the manifest does not know, files whose stat changed, files gone."""

    new: list[tuple[str, os.stat_result]] = field(default_factory=list)
    changed: dict[str, tuple[FileEntry, os.stat_result]] = field(default_factory=dict)
    missing: dict[str, FileEntry] = field(default_factory=dict)


class MemoryFiles:
    """The memory files of one workspace folder (see the module doc)."""

    def __init__(
        self,
        paths: StorePaths,
        db: Database,
        clock: Clock,
        *,
        gate: ConflictGate,
        index: Callable[[MemoryRow], bool],
        sweep: int = DEFAULT_SWEEP,
        render_batch: int = DEFAULT_RENDER_BATCH,
    ) -> None:
        self._paths = paths
        self._db = db
        self._clock = clock
        self._gate = gate
        self._index = index
        self._sweep = max(1, sweep)
        self._render_batch = max(1, render_batch)
        # Where the rolling windows go on (this process's: a quiet call writes nothing).
        self._cursors: dict[str, int] = {}
        self._swept_at: float | None = None  # time.monotonic() of this process's last sweep
        self._owed = 0.0  # files of the sweep's rate not stat-ed yet (a fraction of one carried over)
        self._purge_owed = 0.0  # files of the purge lookups' rate not looked up yet
        self._database_key: str | None = None
        self._database_url: str | None = None
        self._manifest_file = ManifestFile(self.manifest_file)
        self.dictionary = EntityDictionary(self.root / DICTIONARY_FILE)

    @property
    def root(self) -> Path:
        return self._paths.root / MEMORIES_DIR

    @property
    def manifest_file(self) -> Path:
        return self._paths.data_dir / "index" / "memory-files.sqlite"

    def _manifest(self) -> contextlib.AbstractContextManager[Manifest]:
        """The manifest, for the database this folder is in step with (:meth:`ManifestFile.open`)."""
        if self._database_key is None:
            self._database_key = self._database_url = self._db.url.render_as_string(hide_password=True)
            url = self._db.url
            if url.get_backend_name() == "sqlite" and url.database:
                # The embedded SQLite file is named by its place in the data folder: a workspace
                # moved or copied whole brings its database along and keeps its manifest (else its
                # first memory call reads every file again, and an edit made meanwhile cannot be
                # told from a change of the row). Manifests written before kept the file's URL.
                with contextlib.suppress(ValueError, OSError):
                    inner = Path(url.database).resolve().relative_to(self._paths.data_dir.resolve())
                    self._database_key = f"sqlite:<data folder>/{inner.as_posix()}"
        return self._manifest_file.open(self._database_key, formerly=self._database_url)

    def close(self) -> None:
        """Close the manifest's connection (a later call opens it again)."""
        self._manifest_file.close()

    @contextlib.contextmanager
    def _locked(self, wait: float | None = None) -> Iterator[Manifest]:
        """The folder's lock (``filelock.Timeout`` after ``wait`` seconds, default the store's lock
        wait) and its manifest, in one transaction."""
        lock = (
            file_lock(self._paths.locks_dir, "memory-files", within=self._paths.root)
            if wait is None
            else file_lock(self._paths.locks_dir, "memory-files", within=self._paths.root, timeout=wait)
        )
        with lock, self._manifest() as m:
            yield m

    # ------------------------------------------------------------------ public
    def sync(
        self, render: Iterable[str] = (), *, scan: bool = True, sweep: bool = True, wait: float | None = None
    ) -> FilesSync:
        """Bring files and rows in step (module doc); ``render`` names memories just written.
        ``sweep=False``: a memory call's own reconcile: the rolling sweep takes this call's share of
        its rate (:data:`SWEEP_INTERVAL`) and at most :data:`READS_PER_CALL` files are read.
        ``wait``: seconds to wait for another process's reconcile (then this one is skipped, and
        the answer says so)."""
        self.dictionary.refresh()
        try:
            with self._locked(wait) as m:
                run = _Run(m, budget=None if sweep else READS_PER_CALL)
                run.render.update(render)
                if scan:
                    self._scan(run, window=self._sweep if sweep else self._sweep_window(m))
                self._render_changed(run, limit=self._render_batch)
                return run.result()
        except Timeout:
            return FilesSync(note=BUSY)

    def render_written(self, rows: Sequence[MemoryRow]) -> FilesSync:
        """Render the memories a write of this process just committed (``rows``, detached, as written,
        each with the change number its write got, read in the write's transaction): the folder was
        synced before the write, so only these files are due. Cheaper than :meth:`sync`: no listing
        of changed rows and no second read of whole rows (only their change numbers). A row whose
        number moved since (another process changed it after this write committed, however soon
        after) is left to the next sync, which renders it as it then stands. The folder's mark
        moves past them only when no other change lies between it and them; otherwise the next
        sync renders the gap and finds these files current."""
        by_id = {row.id: row for row in rows}
        if not by_id:
            return FilesSync()
        table = MemoryRow.__table__  # type: ignore[attr-defined]
        with self._db.read() as session:
            revs = {
                str(r[0]): (int(r[1]), str(r[2]))
                for r in session.execute(
                    select(table.c.id, table.c.rev, table.c.state).where(table.c.id.in_(list(by_id)))
                )
            }
        try:
            with self._locked(LOCK_WAIT) as m:
                return self._render_rows(_Run(m), by_id, revs)
        except Timeout:
            return FilesSync(note=BUSY)  # the next sync renders them (their change numbers are above the mark)

    def _render_rows(self, run: _Run, by_id: dict[str, MemoryRow], revs: dict[str, tuple[int, str]]) -> FilesSync:
        m = run.manifest
        for memory_id in sorted(by_id):
            if memory_id not in revs:
                continue  # gone since (purged by another process)
            rev, state = revs[memory_id]
            row = by_id[memory_id]
            if rev != row.rev or state != row.state:  # changed since: the next sync renders it
                continue
            self._render_one(run, row)
        mark = m.rev
        for rev, _state in sorted(revs.values()):
            if rev == mark + 1:
                mark = rev
        m.rev = mark
        return run.result()

    def file_of(self, memory_id: str) -> Path:
        """The file of a memory, after a sync; written again when a person had deleted it."""
        self.sync(render=[memory_id])
        with self._locked() as m:
            entry = m.of_memory(memory_id)
            if entry is None or entry.tombstone:
                row = self._row(memory_id)
                if row is None:
                    raise NotFoundError(f"no memory {memory_id!r}; find ids with dokoro_recall or `dokoro memory list`")
                self._write(_Run(m), row, entry)
                entry = m.of_memory(memory_id)
            assert entry is not None
            return self._paths.root / entry.path

    def remove(self, memory_id: str) -> None:
        """A purged memory's file goes too (unless a person edited it since; then it stays, and
        the next sync brings the memory back from it: an edit is never lost)."""
        try:
            with self._locked(LOCK_WAIT) as m:
                entry = m.of_memory(memory_id)
                if entry is None:
                    return
                self._remove_file(m, entry)
        except Timeout:
            return  # its file goes with a later call's sweep (a file of a memory the database lacks)

    def problems(self) -> list[FileProblem]:
        """The files under ``memories/`` that hold no memory, and why (with the symlinks found in
        it: a linked type folder or ``memories/`` itself is never read or written)."""
        found = [FileProblem(path=path, reason=reason) for path, reason in self._linked_folders()]
        if not self.manifest_file.exists():
            return found
        with self._manifest() as m:
            return found + [FileProblem(path=e.path, reason=e.note or "") for e in m.noted()]

    def check(self, rows: int) -> FilesCheck:
        """The files against the ``rows`` memories of the database, read-only and bounded: the
        manifest's counts, the rows changed since its last render, and (when it knows no file) whether
        ``memories/`` holds memory files at all (the listing stops at the first one)."""
        files = deleted = 0
        mark = 0
        if self.manifest_file.exists():
            with self._manifest() as m:
                files, deleted = m.memory_counts()
                mark = m.rev
        with self._db.read() as session:
            unrendered = int(
                session.execute(
                    core_select(func.count()).select_from(_MEMORIES).where(_MEMORIES.c.rev > bindparam("mark")),
                    {"mark": mark},
                ).scalar_one()
            )
        unknown = files + deleted == 0 and self._any_file_on_disk()
        missing = files + deleted - rows  # files whose memory the database lacks (at least)
        if missing > 0 or (unknown and rows == 0):
            what = f"{files} memory file(s)" if not unknown else "memory files the folder has never read"
            message = (
                f"the files and the database differ: memories/ holds {what} but the database {rows} memory(ies) "
                "(a lost or replaced database, a fresh clone): dokoro_memory_reindex rebuilds the memories "
                "(states, trust, supersede chains) from the files in one call"
            )
            return FilesCheck(
                files=files,
                deleted=deleted,
                rows=rows,
                unrendered=unrendered,
                unknown_files=unknown,
                in_step=False,
                message=message,
            )
        message = f"{files} memory file(s), in step with the rows"
        if deleted:
            message += f" ({deleted} deleted by a person: their memories deprecated)"
        if unrendered:
            message += f"; {unrendered} changed memory(ies) are written to their files on the next calls"
        if unknown:
            message += "; memories/ holds files the folder has not read yet (the next calls read them)"
        return FilesCheck(
            files=files,
            deleted=deleted,
            rows=rows,
            unrendered=unrendered,
            unknown_files=unknown,
            in_step=True,
            message=message,
        )

    def _any_file_on_disk(self) -> bool:
        """Whether a type folder of ``memories/`` holds a memory file (stops at the first one)."""
        root = _stat(self.root)
        if root is None or not stat_kind.S_ISDIR(root.st_mode):
            return False
        with contextlib.suppress(OSError), os.scandir(self.root) as folders:
            for folder in folders:
                if folder.name.startswith(".") or not folder.is_dir(follow_symlinks=False):
                    continue
                with os.scandir(folder.path) as entries:
                    if any(_is_memory_file(e.name) for e in entries):
                        return True
        return False

    def _linked_folders(self) -> list[tuple[str, str]]:
        """``memories/`` or its type folders when they are symlinks or no folders (a few entries)."""
        root = _stat(self.root)
        if root is None:
            return []
        if not stat_kind.S_ISDIR(root.st_mode):
            return [(MEMORIES_DIR, _LINKED_ROOT)]
        linked: list[tuple[str, str]] = []
        with contextlib.suppress(OSError), os.scandir(self.root) as entries:
            for entry in entries:
                if entry.is_symlink() and not entry.name.startswith("."):
                    linked.append((f"{MEMORIES_DIR}/{entry.name}", _LINKED))
        return sorted(linked)

    # ------------------------------------------------------------------ rows
    def _load(self, ids: Iterable[str]) -> dict[str, MemoryRow]:
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

    def _row(self, memory_id: str) -> MemoryRow | None:
        with self._db.read() as session:
            return session.get(MemoryRow, memory_id)

    def _normalise(self, fields: MemoryFields) -> MemoryFields:
        return replace(fields, entities=tuple(self.dictionary.canonical(fields.entities)))

    def _new_row(self, fields: MemoryFields, *, memory_id: str | None = None, restore: bool = False) -> MemoryRow:
        """A row for a file's fields: a person's new memory or version, or (``restore``) the row
        the file describes, with its id, trust, state, dates and chain."""
        now = self._clock.now()
        (title, body, source), _kinds = redact_all([fields.title, fields.body, fields.source])
        row = MemoryRow(
            id=memory_id or repository.new_id(now),
            type=fields.type,
            title=str(title),
            body=str(body),
            entities=self.dictionary.canonical(fields.entities),
            trust=fields.trust if restore else "user-stated",
            state=fields.state if restore else "active",
            source=source,
            created_at=now,
            updated_at=now,
            review_after=_when(fields.review_after),
            valid_until=_when(fields.valid_until),
        )
        if restore:
            row.created_at = _when(fields.created) or now
            row.updated_at = _when(fields.updated) or row.created_at
            row.agent_id = fields.agent
            row.session_id = fields.session
            row.supersedes = fields.supersedes
            row.superseded_by = fields.superseded_by
            row.state_reason = fields.state_reason
            if row.state != "active":
                row.state_changed_at = row.updated_at
        return row

    def _gate_check(self, row: MemoryRow, also: MemoryRow | None = None) -> list[CloseMemory]:
        """Index the new memory, run the conflict gate on it, and (``also``) make sure the pair
        with ``also`` is in the ledger, unresolved, even when the gate found it not close."""
        self._index(row)
        found = self._gate.check(row)
        if also is not None:
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
                        shown_at=self._clock.now(),
                    )
        return found

    def _new_version(self, fields: MemoryFields, old: MemoryRow) -> tuple[MemoryRow, list[CloseMemory]]:
        """A person's edit of ``old``'s file: a new, active, user-stated memory that supersedes it
        (written once: a retry of a call that failed after writing it finds it by its id)."""
        new = self._new_row(fields, memory_id=_version_id(self._clock.now(), old.id, fields))
        new.supersedes = old.id
        new.source = new.source or f"edited file of {old.id}"
        now = new.created_at
        with self._db.write() as session:
            if (written := session.get(MemoryRow, new.id)) is not None:
                return written, []
            current = session.get(MemoryRow, old.id, with_for_update=True)
            if current is not None:
                if current.state in ("active", "proposed"):
                    why = f"superseded by {new.id} (its file was edited)"
                    repository.supersede(session, current, by=new.id, now=now, agent=None, reason=why)
                elif current.superseded_by is None:
                    repository.chain(session, current, by=new.id, now=now)
            repository.create(session, new)
        if current is not None:
            self._index(current)
        return new, self._gate_check(new)

    def _revive(self, fields: MemoryFields, old: MemoryRow) -> tuple[MemoryRow, list[CloseMemory]]:
        """A person's edit of an archived or deprecated memory's file: that same memory, active
        again with the file's text (vouched for by the person: ``user-stated``), through the gate."""
        now = self._clock.now()
        fresh = self._new_row(fields, memory_id=old.id)
        with self._db.write() as session:
            row = session.get(MemoryRow, old.id, with_for_update=True)
            if row is None:
                return old, []
            values = {
                name: getattr(fresh, name)
                for name in ("type", "title", "body", "entities", "trust", "source", "review_after", "valid_until")
            }
            repository.rewrite(session, row, values)
            # ``superseded_by`` stays: the chain it had is history (as when only ``state:`` is edited).
            repository.set_state(session, row, "active", reason="brought back by an edit of its file", now=now)
        return row, self._gate_check(row)

    def _set_state(self, memory_id: str, state: str, reason: str) -> MemoryRow | None:
        now = self._clock.now()
        with self._db.write() as session:
            row = session.get(MemoryRow, memory_id, with_for_update=True)
            if row is None:
                return None
            repository.set_state(session, row, state, reason=reason, now=now)
        self._index(row)
        return row

    def _insert(self, row: MemoryRow) -> MemoryRow:
        """Insert ``row`` unless its id is there already (a retry: that row is returned)."""
        with self._db.write() as session:
            return repository.insert_new(session, row)

    # ------------------------------------------------------------------ scan (files → rows)
    def _sweep_window(self, m: Manifest) -> int:
        """Files the rolling sweep stats on this memory call: all of a window in a small folder or on
        this process's first call, else ``sweep`` per :data:`SWEEP_INTERVAL` since the last sweep
        (the fraction of a file left is owed to the next call)."""
        now = time.monotonic()
        if self._swept_at is None or not m.more_than(SWEEP_ALWAYS):
            return self._sweep
        self._owed = min(float(self._sweep), self._owed + self._sweep * (now - self._swept_at) / SWEEP_INTERVAL)
        window = int(self._owed)
        self._owed -= window
        self._swept_at = now
        return window

    def _scan(self, run: _Run, *, window: int) -> None:
        m = run.manifest
        subdirs = self._folders(run)
        if subdirs is None:
            return
        found = _Found()
        known_dirs = m.dirs()
        for folder in subdirs:
            folder_stat = _stat(self._paths.root / folder)
            if folder_stat is not None and known_dirs.get(folder) != folder_stat.st_mtime_ns:
                # The stat taken before the listing is recorded: a change during it shows next time.
                m.set_dir(folder, folder_stat.st_mtime_ns)
                self._list_folder(m, folder, found)
        if window > 0:
            if window >= self._sweep:
                self._swept_at = time.monotonic()
            self._sweep_files(run, subdirs, found, window)
        # New files first: a moved file takes its memory's entry before the old path counts as deleted.
        for path, stat in sorted(found.new):
            if self._due(run, path):
                self._guarded(run, path, functools.partial(self._on_new_file, run, path, stat))
        for path, (entry, stat) in sorted(found.changed.items()):
            if m.get(path) == entry and self._due(run, path):  # not taken over by a moved file above
                self._guarded(run, path, functools.partial(self._on_changed_file, run, entry, stat))
        for path in sorted(found.missing):
            current = m.get(path)
            gone = current is not None and not current.tombstone and _stat(self._paths.root / path) is None
            if gone and current is not None and self._due(run, path):
                self._on_deleted_file(run, current)

    @staticmethod
    def _due(run: _Run, path: str) -> bool:
        """Whether this call handles ``path`` (its budget of files not spent); else its folder is
        listed again on the next call, which finds it still new, changed or missing."""
        if run.spend():
            return True
        run.manifest.set_dir(PurePosixPath(path).parent.as_posix(), _RELIST)
        return False

    @staticmethod
    def _guarded(run: _Run, path: str, handle: Callable[[], None]) -> None:
        """Handle one file; one that a person deleted meanwhile is left for the next call (which
        sees it deleted), one the system cannot read now is reported: neither fails the call."""
        try:
            handle()
        except _Gone:
            return
        except OSError as exc:
            run.problem(path, f"cannot be read now ({exc.strerror or exc})")

    def _sweep_files(self, run: _Run, subdirs: list[str], found: _Found, files: int) -> None:
        """The rolling sweep of ``files`` files: in-place edits do not move a folder's time."""
        m = run.manifest
        base = f"{self._paths.root}{os.sep}"
        window, self._cursors["sweep"] = m.stat_window(files, self._cursors.get("sweep", 0))
        for path, mtime_ns, size in window:
            if path in found.changed or path in found.missing:
                continue
            stat = _stat(base + path)
            if stat is not None and stat.st_mtime_ns == mtime_ns and stat.st_size == size:
                continue
            entry = m.get(path)  # the few that moved: their whole entry
            if entry is None or entry.tombstone:
                continue
            if stat is None:
                if path.rsplit("/", 1)[0] in subdirs:
                    found.missing[path] = entry
            elif not entry.same_stat(stat.st_mtime_ns, stat.st_size):
                found.changed[path] = (entry, stat)
        # Memories purged elsewhere, looked up for a smaller rolling window of files (a purge is rare
        # and explicit; its file goes within ``files / PURGE_WINDOW`` whole sweeps): at the sweep's
        # rate, PURGE_WINDOW files per query, so the memory calls between two look nothing up.
        self._purge_owed += PURGE_WINDOW * files / self._sweep
        if self._purge_owed < PURGE_WINDOW:
            return
        self._purge_owed = 0.0
        purge_window, self._cursors["purge"] = m.window(PURGE_WINDOW, self._cursors.get("purge", 0))
        untouched = [
            e
            for e in purge_window
            if e.memory_id and not e.tombstone and e.path not in found.changed and e.path not in found.missing
        ]
        self._drop_purged(run, untouched)

    def _folders(self, run: _Run) -> list[str] | None:
        """The type folders under ``memories/`` (listed again only when its time moved), or None
        when there is no ``memories/`` folder."""
        m = run.manifest
        known_dirs = m.dirs()
        root_stat = _stat(self.root)
        if root_stat is not None and not stat_kind.S_ISDIR(root_stat.st_mode):
            run.problem(MEMORIES_DIR, _LINKED_ROOT)  # a symlink: nothing under it is read or written
            return None
        if root_stat is None:
            if m.count():
                # The whole folder is gone: render it again (deleting the memory files one by one is
                # how a person deprecates memories, not removing the folder).
                for folder in known_dirs:
                    self._forget_folder(run, folder)
                m.drop_dirs(list(known_dirs))
            return None
        if known_dirs.get(MEMORIES_DIR) == root_stat.st_mtime_ns:
            return sorted(d for d in known_dirs if d != MEMORIES_DIR)
        m.set_dir(MEMORIES_DIR, root_stat.st_mtime_ns)
        subdirs = []
        with os.scandir(self.root) as entries:
            for e in entries:
                if e.name.startswith("."):
                    continue
                if e.is_symlink():
                    run.problem(f"{MEMORIES_DIR}/{e.name}", _LINKED)
                elif e.is_dir(follow_symlinks=False):
                    subdirs.append(f"{MEMORIES_DIR}/{e.name}")
        subdirs.sort()
        gone = [d for d in known_dirs if d != MEMORIES_DIR and d not in subdirs]
        for folder in gone:
            self._forget_folder(run, folder)
        m.drop_dirs(gone)
        return subdirs

    def _forget_folder(self, run: _Run, folder: str) -> None:
        """A whole type folder was deleted: its memories are rendered again, not deprecated."""
        for entry in run.manifest.in_dir(folder).values():
            run.manifest.drop(entry.path)
            if entry.memory_id:
                run.render.add(entry.memory_id)

    def _list_folder(self, m: Manifest, folder: str, found: _Found) -> None:
        """Compare a folder's files with the manifest: new, changed (stat) and missing files."""
        known = m.in_dir(folder)
        seen: set[str] = set()
        if (folder_stat := _stat(self._paths.root / folder)) is None or not stat_kind.S_ISDIR(folder_stat.st_mode):
            return  # replaced by a link meanwhile: listed (and reported) from the memories folder
        with os.scandir(self._paths.root / folder) as entries:
            for item in entries:
                # A link or a special file is listed too: reading it refuses it, and it is reported.
                if not _is_memory_file(item.name) or item.is_dir(follow_symlinks=False):
                    continue
                try:
                    stat = item.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue  # deleted while listed
                seen.add(item.name)
                entry = known.get(item.name)
                if entry is None or entry.tombstone:
                    found.new.append((f"{folder}/{item.name}", stat))
                elif not entry.same_stat(stat.st_mtime_ns, stat.st_size):
                    found.changed[entry.path] = (entry, stat)
        for name, entry in known.items():
            if name not in seen and not entry.tombstone:
                found.missing[entry.path] = entry

    def _drop_purged(self, run: _Run, entries: Sequence[FileEntry]) -> None:
        """Files of memories purged elsewhere (another process, another machine) go too."""
        if not entries:
            return
        ids = [str(e.memory_id) for e in entries]
        alive: set[str] = set()
        with self._db.read() as session:
            for start in range(0, len(ids), 500):
                alive.update(session.exec(select(MemoryRow.id).where(col(MemoryRow.id).in_(ids[start : start + 500]))))
        for entry in entries:
            if entry.memory_id not in alive:
                self._remove_file(run.manifest, entry)
                run.removed += 1

    def _remove_file(self, m: Manifest, entry: FileEntry) -> None:
        path = self._paths.root / entry.path
        stat = _stat(path)
        if stat is not None and not entry.same_stat(stat.st_mtime_ns, stat.st_size):
            # Edited since it was written: the edit survives; the next sync sees the changed file
            # of a memory the database no longer has, and brings the memory back from it.
            return
        if stat is not None:
            path.unlink(missing_ok=True)
        m.drop(entry.path)

    def _read(self, run: _Run, path: str, *, memory_id: str | None) -> MemoryFields | str:
        """A file's fields (secrets redacted), read behind the walls; or why it cannot be read
        (reported; its memory, ``memory_id``, is then not rendered over it). Raises :class:`_Gone`
        when the file was deleted meanwhile."""
        folder = path.split("/")[1] if path.count("/") >= 2 else None
        try:
            text = walls.read_within(self._paths.root, path).decode("utf-8")
            return _redacted_fields(parse_memory_file(text, folder_type=folder))
        except (FileNotFoundError, NotADirectoryError):
            raise _Gone(path) from None
        except (UnparseableFile, walls.UnsafeFile, UnicodeDecodeError, OSError) as exc:
            if isinstance(exc, UnicodeDecodeError):
                reason = "not UTF-8 text"
            elif isinstance(exc, OSError):
                reason = f"cannot be read ({exc.strerror or exc})"
            else:
                reason = str(exc)
            reason = run.problem(path, reason)
            if memory_id is not None:
                run.blocked.add(memory_id)
            return reason

    def _on_changed_file(self, run: _Run, entry: FileEntry, stat: os.stat_result) -> None:
        """A known file whose stat changed."""
        m = run.manifest
        if entry.ignored:
            m.drop(entry.path)
            self._on_new_file(run, entry.path, stat)
            return
        memory_id = str(entry.memory_id)
        fields = self._read(run, entry.path, memory_id=memory_id)
        if isinstance(fields, str):
            m.put(replace(entry, note=fields))  # its stat kept: read again (and reported) until fixed
            return
        row = self._row(memory_id)
        if row is None:
            # Its memory was purged, but the file was edited since: the edit brings it back.
            restored = self._insert(
                self._new_row(replace(self._normalise(fields), id=memory_id), memory_id=memory_id, restore=True)
            )
            self._index(restored)
            m.put(replace(entry, mtime_ns=stat.st_mtime_ns, size=stat.st_size, digest=None, rev=_RERENDER, note=None))
            run.render.add(memory_id)
            run.changes.append(
                FileChange(
                    path=entry.path,
                    memory_id=memory_id,
                    action="restored",
                    state=restored.state,
                    message=f"its memory {memory_id} had been purged; the edited file brought it back",
                )
            )
            return
        stored = fields_of_row(row)
        edited = self._normalise(replace(fields.over(stored), id=row.id))
        row_digest, file_digest = fields_digest(stored), fields_digest(edited)
        seen = replace(entry, mtime_ns=stat.st_mtime_ns, size=stat.st_size, note=None)
        if file_digest == row_digest:
            m.put(replace(seen, digest=row_digest, rev=row.rev))
            return
        file_changed = entry.digest is None or file_digest != entry.digest
        db_changed = entry.digest is None or row_digest != entry.digest
        m.put(seen)
        run.render.add(row.id)
        if not file_changed:
            return  # only the row changed: rendered below
        if db_changed:
            self._keep_both(run, entry.path, edited, row)
        else:
            self._apply_edit(run, entry.path, edited, row, stored)
        if (current := m.get(entry.path)) is not None and current.rev == row.rev:
            m.put(replace(current, rev=_RERENDER))

    def _apply_edit(self, run: _Run, path: str, edited: MemoryFields, row: MemoryRow, stored: MemoryFields) -> None:
        content = stored.content_differs(edited)
        if content and row.state in ("archived", "deprecated"):
            revived, conflicts = self._revive(edited, row)
            run.changes.append(
                FileChange(
                    path=path,
                    memory_id=row.id,
                    action="revived",
                    state=revived.state,
                    fields=content,
                    message=f"edited ({', '.join(content)}): {row.id} was {row.state}, now active again with the "
                    "file's text" + (f"; {len(conflicts)} close memory(ies) to judge" if conflicts else ""),
                    conflicts=conflicts,
                )
            )
        elif content:
            new, conflicts = self._new_version(edited, row)
            run.render.add(new.id)
            run.changes.append(
                FileChange(
                    path=path,
                    memory_id=row.id,
                    action="new_version",
                    new_id=new.id,
                    state="active",
                    fields=content,
                    message=f"edited ({', '.join(content)}): new version {new.id} supersedes {row.id}"
                    + (f"; {len(conflicts)} close memory(ies) to judge" if conflicts else ""),
                    conflicts=conflicts,
                )
            )
        elif edited.state != stored.state:
            self._change_state(run, path, edited, row)
        else:
            changed = [
                name
                for name in (
                    "id",
                    "created",
                    "updated",
                    "agent",
                    "session",
                    "supersedes",
                    "superseded_by",
                    "state_reason",
                )
                if getattr(edited, name) != getattr(stored, name)
            ]
            run.changes.append(
                FileChange(
                    path=path,
                    memory_id=row.id,
                    action="restored_fields",
                    fields=changed,
                    message=f"{', '.join(changed)} are the database's to say; the file was written again",
                )
            )

    def _change_state(self, run: _Run, path: str, edited: MemoryFields, row: MemoryRow) -> None:
        target = edited.state
        if target == "proposed":
            run.changes.append(
                FileChange(
                    path=path,
                    memory_id=row.id,
                    action="not_applied",
                    state=row.state,
                    fields=["state"],
                    message="state proposed is set by the review queue only; the file was written again",
                )
            )
            return
        if target == "active":
            reason = "approved in its file" if row.state == "proposed" else "brought back by an edit of its file"
        else:
            own = edited.state_reason if edited.state_reason and edited.state_reason != row.state_reason else None
            reason = own or f"{target} in its file"
        self._set_state(row.id, target, reason)
        run.changes.append(
            FileChange(
                path=path,
                memory_id=row.id,
                action="state_changed",
                state=target,
                fields=["state"],
                message=f"{row.state} → {target} ({reason})",
            )
        )

    def _keep_both(self, run: _Run, path: str, edited: MemoryFields, row: MemoryRow) -> None:
        stored = fields_of_row(row)
        if not stored.content_differs(edited):
            run.changes.append(
                FileChange(
                    path=path,
                    memory_id=row.id,
                    action="not_applied",
                    state=row.state,
                    fields=["state"],
                    message="the file and the database both changed since the last render; the file's state "
                    f"edit was not applied (the memory is {row.state}); edit the file again to apply it",
                )
            )
            return
        new_id = _version_id(self._clock.now(), row.id, edited)
        if row.superseded_by == new_id:  # a retry: an earlier call made this edit a new version
            run.changes.append(
                FileChange(
                    path=path,
                    memory_id=row.id,
                    action="new_version",
                    new_id=new_id,
                    state="active",
                    message=f"edited: new version {new_id} supersedes {row.id}",
                )
            )
            return
        new = self._insert(self._new_row(edited, memory_id=new_id))
        conflicts = self._gate_check(new, also=row)
        run.render.add(new.id)
        run.changes.append(
            FileChange(
                path=path,
                memory_id=row.id,
                action="kept_both",
                new_id=new.id,
                state="active",
                fields=stored.content_differs(edited),
                message=f"the file and the database both changed since the last render: kept both — {row.id} "
                f"(the database's) and {new.id} (the file's edit); judge the pair with "
                f"dokoro_memory_verdict(new_id='{new.id}', old_id='{row.id}', ...)",
                conflicts=conflicts,
            )
        )

    def _on_deleted_file(self, run: _Run, entry: FileEntry) -> None:
        m = run.manifest
        if entry.ignored:
            m.drop(entry.path)
            return
        row = self._row(str(entry.memory_id))
        if row is None:
            m.drop(entry.path)
            return
        if row.state != "deprecated":
            before = row.state
            row = self._set_state(row.id, "deprecated", FILE_DELETED) or row
            run.changes.append(
                FileChange(
                    path=entry.path,
                    memory_id=row.id,
                    action="deprecated",
                    state="deprecated",
                    message=f"file deleted: {row.id} deprecated (was {before}; kept in the database, "
                    "ranked far down; edit a copy of it back in to restore it)",
                )
            )
        fresh = self._row(row.id)
        m.put(
            replace(
                entry,
                mtime_ns=None,
                size=None,
                digest=fields_digest(fields_of_row(fresh or row)),
                rev=(fresh or row).rev,
            )
        )

    def _on_new_file(self, run: _Run, path: str, stat: os.stat_result) -> None:
        m = run.manifest
        fields = self._read(run, path, memory_id=None)
        if isinstance(fields, str):
            m.put(FileEntry(path, None, stat.st_mtime_ns, stat.st_size, None, 0, note=fields))
            return
        fields = self._normalise(fields)
        if fields.id is None:
            self._remember_file(run, path, stat, fields, "new file")
            return
        row = self._row(fields.id)
        if row is None:
            restored = self._insert(self._new_row(fields, memory_id=fields.id, restore=True))
            self._index(restored)
            m.put(FileEntry(path, restored.id, stat.st_mtime_ns, stat.st_size, None, _RERENDER))
            run.render.add(restored.id)
            run.changes.append(
                FileChange(
                    path=path,
                    memory_id=restored.id,
                    action="restored",
                    state=restored.state,
                    message=f"restored {restored.id} from its file (the database did not have it)",
                )
            )
            return
        other = m.of_memory(row.id)
        if (
            other is not None
            and other.path != path
            and not other.tombstone
            and _stat(self._paths.root / other.path) is not None
        ):
            # A copy of another memory's file: a new memory when it says something else.
            stored = fields_of_row(row)
            if not stored.content_differs(replace(fields.over(stored), id=row.id)):
                m.put(FileEntry(path, None, stat.st_mtime_ns, stat.st_size, None, 0, note=f"a copy of {other.path}"))
                return
            self._remember_file(run, path, stat, fields.over(stored), f"a changed copy of {other.path}")
            return
        # The memory's own file, moved here (or met again after the manifest was lost).
        if other is not None:
            m.drop(other.path)
        entry = FileEntry(path, row.id, None, None, other.digest if other else None, other.rev if other else _RERENDER)
        m.put(entry)
        self._on_changed_file(run, entry, stat)

    def _remember_file(self, run: _Run, path: str, stat: os.stat_result, fields: MemoryFields, what: str) -> None:
        """A file that is no memory's yet: remembered as a new user-stated memory, through the gate
        (once: its id comes from the file, so a retry finds the row an earlier call wrote)."""
        built = self._new_row(fields, memory_id=_file_id(self._clock.now(), path, fields))
        new = self._insert(built)
        if new is not built and new.state == "deprecated" and new.state_reason == FILE_DELETED:
            # An earlier call wrote it (and failed before the manifest took it), or the same file
            # came back after its deletion: it is this memory again.
            new = self._set_state(new.id, "active", "its file came back") or new
        conflicts = self._gate_check(new)
        run.manifest.put(FileEntry(path, new.id, stat.st_mtime_ns, stat.st_size, None, _RERENDER))
        run.render.add(new.id)
        run.changes.append(
            FileChange(
                path=path,
                memory_id=new.id,
                action="created",
                new_id=new.id,
                state="active",
                message=f"{what}: remembered as {new.id} (user-stated)",
                conflicts=conflicts,
            )
        )

    # ------------------------------------------------------------------ render (rows → files)
    def _render_changed(self, run: _Run, *, limit: int | None = None) -> None:
        """Render the rows changed since the folder's mark (and ``run.render``). ``limit``: at most
        that many changed rows on this call, oldest change first; the mark moves to the last one
        handled and the next call goes on (a store upgraded with many memories, a fresh clone's
        folder, does not hold one call for minutes)."""
        m = run.manifest
        mark = m.rev
        with self._db.read() as session:
            feed = [
                (str(i), int(r))
                for i, r in session.execute(_FEED, {"mark": mark, "limit": _NO_LIMIT if limit is None else limit}).all()
            ]
        top = max((rev for _id, rev in feed), default=mark)
        entries = m.of_memories([memory_id for memory_id, _rev in feed])
        wanted = set(run.render)
        for memory_id, rev in feed:
            entry = entries.get(memory_id)
            if entry is None or entry.rev != rev:
                wanted.add(memory_id)
        wanted -= run.blocked
        rows = self._load(wanted)
        for memory_id in sorted(wanted):
            row = rows.get(memory_id)
            if row is not None:
                self._render_one(run, row)
        # Only now, with every row up to ``top`` in its file (or blocked, reported), move the mark.
        m.rev = max(m.rev, top)

    def _render_one(self, run: _Run, row: MemoryRow) -> None:
        m = run.manifest
        entry = m.of_memory(row.id)
        if entry is not None and entry.tombstone and entry.rev == row.rev:
            return  # deleted by a person; not written back until the memory changes
        if entry is not None and not entry.tombstone:
            stat = _stat(self._paths.root / entry.path)
            if stat is not None and not entry.same_stat(stat.st_mtime_ns, stat.st_size):
                # Edited since it was last seen: hear the person before writing over it.
                self._on_changed_file(run, entry, stat)
                if row.id in run.blocked:
                    return
                fresh = self._row(row.id)
                if fresh is None:
                    return
                row, entry = fresh, m.of_memory(row.id)
        elif entry is None:
            target = self._paths.root / memory_path(row.id, row.type, row.title)
            stat = _stat(target)
            if stat is not None:
                # A file at its place the manifest does not know (a lost manifest): read it first.
                self._on_new_file(run, self._paths.relative(target), stat)
                if row.id in run.blocked:
                    return
                fresh = self._row(row.id)
                if fresh is None:
                    return
                row, entry = fresh, m.of_memory(row.id)
        if entry is not None and entry.rev == row.rev and entry.digest is not None and not entry.tombstone:
            return
        self._write(run, row, entry)

    def _write(self, run: _Run, row: MemoryRow, entry: FileEntry | None) -> None:
        m = run.manifest
        relative = entry.path if entry is not None else memory_path(row.id, row.type, row.title)
        target = self._paths.root / relative
        folder = target.parent
        if (why := walls.unsafe_on_path(self._paths.root, relative)) is not None:
            # A link (the file, its type folder, memories/) is never written through or over.
            where = relative if why.startswith(("the file", "not a regular")) else why.split(" ", 1)[0]
            run.problem(where, why)
            run.blocked.add(row.id)
            return
        if _stat(self.root) is None:
            self.root.mkdir(parents=True, exist_ok=True)
            self.dictionary.write_starter()
            if (created := _stat(self.root)) is not None:
                m.set_dir(MEMORIES_DIR, created.st_mtime_ns)
        root_before = _stat(self.root)
        before = _stat(folder)
        fields = fields_of_row(row)
        try:
            atomic_write_text(target, render_memory(fields), within=self._paths.root)
        except DokoroError as exc:  # a link swapped in since the check leads out of the store
            run.problem(relative, str(exc))
            run.blocked.add(row.id)
            return
        if (stat := _stat(target)) is None:
            return  # deleted by a person right after the write: the next sync renders it again
        m.put(FileEntry(relative, row.id, stat.st_mtime_ns, stat.st_size, fields_digest(fields), row.rev))
        run.rendered += 1
        # Our own write moved the folder's time; record it, unless the folder had moved before it
        # (a person's change not yet seen, which the next sync must still list).
        known = m.dirs()
        folder_key = PurePosixPath(relative).parent.as_posix()  # the file's path names its folder
        after = _stat(folder)
        if after is not None and (before is None or known.get(folder_key) == before.st_mtime_ns):
            m.set_dir(folder_key, after.st_mtime_ns)
        # A type folder this write created moved the memories folder's time.
        created_folder = before is None and root_before is not None
        if created_folder and root_before is not None and known.get(MEMORIES_DIR) == root_before.st_mtime_ns:
            root_after = _stat(self.root)
            if root_after is not None:
                m.set_dir(MEMORIES_DIR, root_after.st_mtime_ns)

    # ------------------------------------------------------------------ reindex (files → rows, all of them)
    def reindex(self, *, progress: Progress | None = None) -> tuple[MemoryReindex, list[str]]:
        """Rebuild the rows from the files: every memory file is read and its row made to say what
        the file says (id, type, trust, state, dates, chain and text; a file without an id becomes a
        new memory). Rows without a file are left as they are and rendered again. The manifest is
        rebuilt. Returns the report (``indexed`` still 0) and the ids whose documents to index."""
        self.dictionary.refresh()
        with self._locked() as m:
            m.reset()
            m.set_meta("database", str(self._database_key))  # set by _manifest()
            m.set_meta("version", "1")
            run = _Run(m)
            paths = self._all_files(run)
            counts = {"restored": 0, "updated": 0, "unchanged": 0, "created": 0}
            duplicates: list[FileProblem] = []
            owners: dict[str, str] = {}
            for done, path in enumerate(paths, start=1):
                stat = _stat(self._paths.root / path)
                try:
                    fields = self._read(run, path, memory_id=None) if stat is not None else None
                except _Gone:
                    fields = None
                if stat is not None and isinstance(fields, MemoryFields):
                    self._reindex_file(run, path, stat, self._normalise(fields), owners, counts, duplicates)
                if progress is not None:
                    progress(done, len(paths), "memory files")
            for problem in run.problems:
                if problem.path.count("/") < 2:
                    continue  # memories/ or a type folder (a link), not a file of the manifest
                if (stat := _stat(self._paths.root / problem.path)) is not None:
                    m.put(FileEntry(problem.path, None, stat.st_mtime_ns, stat.st_size, None, 0, note=problem.reason))
            with self._db.read() as session:
                total = session.exec(select(func.count()).select_from(MemoryRow)).one()
            self._render_changed(run)
            report = MemoryReindex(
                files=len(paths),
                problems=run.problems,
                duplicates=duplicates,
                rows_without_file=int(total) - len(owners),
                indexed=0,
                **counts,
            )
            return report, sorted(owners)

    def _all_files(self, run: _Run) -> list[str]:
        """Every file of the type folders (links among them too: reading them reports them); a
        linked type folder is reported, never listed."""
        if (root := _stat(self.root)) is None:
            return []
        if not stat_kind.S_ISDIR(root.st_mode):
            run.problem(MEMORIES_DIR, _LINKED_ROOT)
            return []
        found: list[str] = []
        with os.scandir(self.root) as folders:
            for folder in folders:
                if folder.name.startswith("."):
                    continue
                if folder.is_symlink():
                    run.problem(f"{MEMORIES_DIR}/{folder.name}", _LINKED)
                    continue
                if not folder.is_dir(follow_symlinks=False):
                    continue
                with os.scandir(folder.path) as entries:
                    found += [
                        f"{MEMORIES_DIR}/{folder.name}/{e.name}"
                        for e in entries
                        if _is_memory_file(e.name) and not e.is_dir(follow_symlinks=False)
                    ]
        return sorted(found)

    def _reindex_file(
        self,
        run: _Run,
        path: str,
        stat: os.stat_result,
        fields: MemoryFields,
        owners: dict[str, str],
        counts: dict[str, int],
        duplicates: list[FileProblem],
    ) -> None:
        m = run.manifest
        if fields.id is not None and fields.id in owners:
            duplicates.append(
                FileProblem(path=path, reason=f"{fields.id} is already the memory of {owners[fields.id]}")
            )
            m.put(FileEntry(path, None, stat.st_mtime_ns, stat.st_size, None, 0, note=f"a copy of {owners[fields.id]}"))
            return
        if fields.id is None:
            row = self._insert(self._new_row(fields, memory_id=_file_id(self._clock.now(), path, fields)))
            counts["created"] += 1
        else:
            existing = self._row(fields.id)
            if existing is None:
                row = self._insert(self._new_row(fields, memory_id=fields.id, restore=True))
                counts["restored"] += 1
            else:
                stored = fields_of_row(existing)
                wanted = replace(fields.over(stored), id=existing.id)
                if fields_digest(wanted) == fields_digest(stored):
                    counts["unchanged"] += 1
                    owners[existing.id] = path
                    # In step already: not written again.
                    m.put(
                        FileEntry(
                            path, existing.id, stat.st_mtime_ns, stat.st_size, fields_digest(stored), existing.rev
                        )
                    )
                    return
                else:
                    row = self._overwrite(existing.id, wanted)
                    counts["updated"] += 1
        owners[row.id] = path
        m.put(FileEntry(path, row.id, stat.st_mtime_ns, stat.st_size, None, _RERENDER))

    def _overwrite(self, memory_id: str, fields: MemoryFields) -> MemoryRow:
        """Make a row say what its file says (a reindex: the files are the truth they hold)."""
        fresh = self._new_row(fields, memory_id=memory_id, restore=True)
        with self._db.write() as session:
            row = session.get(MemoryRow, memory_id, with_for_update=True)
            assert row is not None
            names = (
                "type",
                "title",
                "body",
                "entities",
                "trust",
                "state",
                "agent_id",
                "session_id",
                "source",
                "created_at",
                "updated_at",
                "review_after",
                "valid_until",
                "supersedes",
                "superseded_by",
                "state_reason",
            )
            values = {name: getattr(fresh, name) for name in names}
            if fresh.state != "active":
                values["state_changed_at"] = row.state_changed_at or fresh.updated_at
            repository.rewrite(session, row, values)
        return row
