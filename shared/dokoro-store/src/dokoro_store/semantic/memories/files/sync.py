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
counts are not in the memory files, so recall never writes one; their last values go to the
folder's ledger (:mod:`.ledger`), at most every :data:`~.ledger.REFRESH_EVERY` seconds.

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

- an edit of a memory's content makes a new version: a new memory by the caller (a person's
  ``user-stated``, an agent's at the edited memory's trust, active) supersedes the edited one, and
  the conflict gate runs on it. The edited file is rendered again from its (now archived) row; the
  new version gets its own file. Editing an archived or deprecated memory's file brings that same
  memory back (active, the file's text, its chain kept), through the gate;
- a change of the front matter's ``state`` alone changes the memory's state (``active`` brings
  an archived or deprecated memory back; ``archived``/``deprecated`` retire it; a proposal is
  approved by a person's ``dokoro memory approve`` only);
- a deleted file deprecates its memory with the reason "file deleted" (never a purge); the
  file is not rendered again until the memory changes. A whole type folder deleted is
  rendered again instead (a safety net against ``rm -r``);
- when the file and the row both changed since the last render, both are kept: the file's
  version becomes a new memory, the pair is written to the conflict ledger (unresolved until
  a verdict) and the answer says so;
- a new file becomes the caller's new memory and keeps its name; a file carrying the id of a
  memory the database lacks restores it (not a purged one); a moved file stays its memory's file;
- a file that cannot be read is reported and left alone (its memory is not rendered over it)
  until it is fixed.

**Files carry content, not authority** (:mod:`.authority`). A change a file makes is made by the
caller (the agent this process acts for, or a person) with its rights only: no file changes a
memory's owner, raises its trust, approves a proposal or takes another memory's id; another agent's
memory edited in a file is kept beside (both, the pair in the conflict ledger), not replaced; a
memory the database lacks is restored only by a person or the agent that wrote it, never when it
was purged (its tombstone: an older copy of it is removed).

**Behind the store's walls** (:mod:`dokoro_store.walls.containment`): the files are a person's and so hostile
input. A symlink (a file, or a whole type folder) is never followed, read or written over: it is
reported and skipped. A file over :data:`~dokoro_store.walls.containment.MAX_FILE_BYTES` is reported, never
imported (and stays so across restarts: the manifest keeps the note until its stat changes). Front
matter is loaded by :func:`dokoro_store.walls.frontmatter.load` (no YAML anchors or aliases, nesting
bounded) and every value checked (:mod:`.markdown`: an id that is a path is refused); one that is
broken or never closes is reported, never a new version, and named in every call's answer
(:data:`STANDING` of them) until it is fixed. Secrets in a file
are redacted from every field read (and from every reason reported) before anything is stored or
echoed. A memory made from a file gets an id derived from the file (its path, text and time), so
a call that fails part-way and is retried finds the row it wrote instead of writing another. A
file deleted by a person while a call reads it is simply gone (seen as deleted next time), never
the call's failure. A memory call's own reconcile acts on at most :data:`READS_PER_CALL` files
(the rest on the next calls), and waits at most :data:`LOCK_WAIT` for another process's
reconcile: past that it goes on with the rows as they stand (its answer says so).

``memories/dictionary.md`` (:mod:`.dictionary`) is re-read when its stat changes.

**The parts.** :class:`MemoryFiles` holds the lock, the manifest and the pace of the sweep; the work
is done by :mod:`.scan` (the listing and the sweep's stats), :mod:`.reconcile` (files → rows, with
:mod:`.authority`), :mod:`.render` (rows → files), :mod:`.rows` (the rows they read and write,
through :mod:`.repository`), :mod:`.run` (one sync's report), :mod:`.ledger` (what a rebuild needs
beside the files), :mod:`.reindex` (the rebuild, forward only) and :mod:`.look` (what the read-only
calls say they have not read).
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from filelock import Timeout
from sqlalchemy import bindparam, func
from sqlalchemy import select as core_select

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.errors import NotFoundError
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.paths import StorePaths
from dokoro_store.results.memories import CloseMemory, FileProblem, FilesCheck, FilesSync
from dokoro_store.results.memory_files import MemoryReindex
from dokoro_store.semantic.memories.dictionary import DICTIONARY_FILE, EntityDictionary
from dokoro_store.semantic.memories.files import look as files_look
from dokoro_store.semantic.memories.files import scan as files_scan
from dokoro_store.semantic.memories.files.authority import Caller
from dokoro_store.semantic.memories.files.ledger import Ledger
from dokoro_store.semantic.memories.files.manifest import Manifest, ManifestFile
from dokoro_store.semantic.memories.files.markdown import MEMORIES_DIR
from dokoro_store.semantic.memories.files.reconcile import Reconciler
from dokoro_store.semantic.memories.files.reindex import Rebuild
from dokoro_store.semantic.memories.files.render import MEMORIES, Renderer
from dokoro_store.semantic.memories.files.rows import FileRows
from dokoro_store.semantic.memories.files.run import Run, lstat
from dokoro_store.semantic.memories.repair import find_unsafe

# The walls every file is read behind (files/reconcile.py reads through them; kept here by name, as before).
from dokoro_store.walls import containment as walls  # noqa: F401
from dokoro_store.walls.files import file_lock

if TYPE_CHECKING:
    from dokoro_store.semantic.documents.service import Progress
    from dokoro_store.semantic.memories.gate import ConflictGate

__all__ = ["DEFAULT_RENDER_BATCH", "DEFAULT_SWEEP", "LOCK_WAIT", "READS_PER_CALL", "STANDING", "MemoryFiles"]

DEFAULT_SWEEP = 2000
# Files whose memory is looked up per call, to find memories purged by another process.
PURGE_WINDOW = 250
# A memory call's own reconcile looks purges up at most this often (seconds): a purge elsewhere is rare
# and explicit, and in a small store, where every call sweeps every file, the lookup was a read
# transaction on every remember and recall. `sync_files` (a person's, the CLI's) always looks.
PURGE_EVERY = 2.0
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
# A memory call's own reconcile reads and acts on at most this many files (each may be a new memory
# to embed and check); the others wait for the next calls. An explicit sync reads them all.
READS_PER_CALL = 50
# How long a memory call waits for another process's reconcile of the folder before going on with
# the rows as they stand (seconds): one process's slow files never hold another's calls.
LOCK_WAIT = 1.0
# Files that hold no memory (broken, refused) named again in every memory call's answer, at most.
STANDING = 5
BUSY = (
    "the memory files are being reconciled by another process; this call used the memories as they "
    "stand (edits to the files are picked up by a later call)"
)


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
        actor: str | None = None,
    ) -> None:
        """``actor``: who this process acts for (its agent; None: a person), the caller of the
        changes a file makes on a memory call (:mod:`.authority`)."""
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
        self._purged_at: float | None = None  # when purges were last looked up (time.monotonic)
        self._database_key: str | None = None
        self._database_url: str | None = None
        self._manifest_file = ManifestFile(self.manifest_file)
        self.dictionary = EntityDictionary(self.root / DICTIONARY_FILE)

        self._rows = FileRows(db, clock, self.dictionary, index)
        # The gate is looked up on each call (``self._gate_check``), not bound once.
        self._reconciler = Reconciler(paths.root, self._rows, lambda row, also: self._gate_check(row, also))
        self._renderer = Renderer(paths, db, self._rows, self._reconciler, self.dictionary)
        self._caller = Caller.of(actor)
        self.ledger = Ledger(paths.root, db)
        self._rebuild = Rebuild(paths.root, self._rows, self._reconciler, self._renderer, self.ledger)

    @property
    def root(self) -> Path:
        return self._paths.root / MEMORIES_DIR

    @property
    def manifest_file(self) -> Path:
        return self._paths.data_dir / "index" / "memory-files.sqlite"

    def _manifest(self) -> contextlib.AbstractContextManager[Manifest]:
        """The manifest, for the database this folder is in step with (:meth:`ManifestFile.open`)."""
        self._manifest_key()
        return self._manifest_file.open(str(self._database_key), formerly=self._database_url)

    def _manifest_key(self) -> None:
        """The name of the database this folder's manifest is written for (once)."""
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
                run = Run(m, budget=None if sweep else READS_PER_CALL, caller=self._caller)
                run.render.update(render)
                if scan:
                    self._scan(run, window=self._sweep if sweep else self._sweep_window(m), purges=sweep)
                self._renderer.render_changed(run, limit=self._render_batch)
                if scan:
                    self.ledger.refresh(run, force=sweep)
                    self._standing(run)
                return run.result()
        except Timeout:
            return FilesSync(note=BUSY)

    def _standing(self, run: Run) -> None:
        """The files that still hold no memory (broken, refused, links), named in every call's answer
        until they are fixed or removed (the first :data:`STANDING`; the status lists them all)."""
        m = run.manifest
        reported = {p.path for p in run.problems}
        linked = [(p, r) for p, r in files_scan.linked_folders(self._paths.root) if p not in reported]
        notes = [(e.path, e.note or "") for e in m.noted(STANDING + len(reported)) if e.path not in reported]
        standing = (linked + notes)[:STANDING]
        for path, reason in standing:
            run.problems.append(FileProblem(path=path, reason=reason))
        already = sum(1 for path in reported if (e := m.get(path)) is not None and e.note is not None)
        more = len(linked) + m.noted_count() - already - len(standing)
        if more > 0:
            run.problems.append(
                FileProblem(
                    path=MEMORIES_DIR, reason=f"{more} more file(s) hold no memory: dokoro_memory_status lists them"
                )
            )

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
                    core_select(table.c.id, table.c.rev, table.c.state).where(table.c.id.in_(list(by_id)))
                )
            }
        try:
            with self._locked(LOCK_WAIT) as m:
                return self._renderer.render_rows(Run(m, caller=self._caller), by_id, revs)
        except Timeout:
            return FilesSync(note=BUSY)  # the next sync renders them (their change numbers are above the mark)

    def file_of(self, memory_id: str) -> Path:
        """The file of a memory, after a sync; written again when a person had deleted it."""
        self.sync(render=[memory_id])
        with self._locked() as m:
            entry = m.of_memory(memory_id)
            if entry is None or entry.tombstone:
                row = self._rows.row(memory_id)
                if row is None:
                    raise NotFoundError(f"no memory {memory_id!r}; find ids with dokoro_recall or `dokoro memory list`")
                self._renderer.write(Run(m, caller=self._caller), row, entry)
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
                self._renderer.remove_file(m, entry)
        except Timeout:
            return  # its file goes with a later call's sweep (a file of a memory the database lacks)

    def problems(self) -> list[FileProblem]:
        """The files under ``memories/`` that hold no memory, and why (with the symlinks found in
        it: a linked type folder or ``memories/`` itself is never read or written)."""
        found = [FileProblem(path=path, reason=reason) for path, reason in files_scan.linked_folders(self._paths.root)]
        found += self._unsafe_rows()
        with self._peek() as m:
            return found + ([FileProblem(path=e.path, reason=e.note or "") for e in m.noted()] if m else [])

    def _unsafe_rows(self) -> list[FileProblem]:
        """The rows no file can hold (an earlier version let them in), said until repaired."""
        problems = []
        for memory_id, why in find_unsafe(self._db):
            shown = memory_id if len(memory_id) <= 60 else memory_id[:57] + "..."
            problems.append(
                FileProblem(path=MEMORIES_DIR, reason=f"memory {shown!r} has {why}: `dokoro doctor --fix` repairs it")
            )
        return problems

    def _peek(self) -> contextlib.AbstractContextManager[Manifest | None]:
        self._manifest_key()
        return self._manifest_file.peek(str(self._database_key), formerly=self._database_url)

    def look(self) -> files_look.Look:
        """What the folder holds that its rows do not say yet, read only (:func:`.look.look`)."""
        with self._peek() as m:
            return files_look.look(self._paths.root, m)

    def rows_of(self, ids: Sequence[str]) -> list[MemoryRow]:
        """The rows of these memories (a rebuild's, to index)."""
        return list(self._rows.load(ids).values())

    def check(self, rows: int | None = None) -> FilesCheck:
        """The files against the ``rows`` memories of the database (counted when None), read-only and
        bounded: the manifest's counts, the rows changed since its last render, and a look at the
        folder (:mod:`.look`: the files changed since the folder read them, the ones that hold no memory)."""
        files = deleted = mark = 0
        with self._peek() as m:
            if m is not None:
                files, deleted = m.memory_counts()
                mark = m.rev
            seen = files_look.look(self._paths.root, m)
        with self._db.read() as session:
            unrendered = int(
                session.execute(
                    core_select(func.count()).select_from(MEMORIES).where(MEMORIES.c.rev > bindparam("mark")),
                    {"mark": mark},
                ).scalar_one()
            )
            if rows is None:
                rows = int(session.execute(core_select(func.count()).select_from(MEMORIES)).scalar_one())
        unsafe = self._unsafe_rows()  # rows no file can hold: said until repaired
        seen.not_read += len(unsafe)
        seen.not_read_files = (unsafe + seen.not_read_files)[: files_look.LISTED]
        return files_look.check(seen, files=files, deleted=deleted, rows=rows, unrendered=unrendered)

    def _gate_check(self, row: MemoryRow, also: MemoryRow | None = None) -> list[CloseMemory]:
        """Index the new memory, run the conflict gate on it, and (``also``) make sure the pair
        with ``also`` is in the ledger, unresolved, even when the gate found it not close."""
        self._index(row)
        found = self._gate.check(row)
        if also is not None:
            self._rows.record_pair(row, also)
        return found

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

    def _scan(self, run: Run, *, window: int, purges: bool = True) -> None:
        m = run.manifest
        subdirs = files_scan.type_folders(self._paths.root, run)
        if subdirs is None:
            return
        found = files_scan.Found()
        known_dirs = m.dirs()
        for folder in subdirs:
            folder_stat = lstat(self._paths.root / folder)
            if folder_stat is not None and known_dirs.get(folder) != folder_stat.st_mtime_ns:
                # The stat taken before the listing is recorded: a change during it shows next time.
                m.set_dir(folder, folder_stat.st_mtime_ns)
                files_scan.list_folder(self._paths.root, m, folder, found)
        if window > 0:
            if window >= self._sweep:
                self._swept_at = time.monotonic()
            self._sweep_files(run, subdirs, found, window, purges=purges)
        # New files first: a moved file takes its memory's entry before the old path counts as deleted.
        for path, stat in sorted(found.new):
            if files_scan.due(run, path):
                files_scan.guarded(run, path, functools.partial(self._reconciler.on_new_file, run, path, stat))
        for path, (entry, stat) in sorted(found.changed.items()):
            if m.get(path) == entry and files_scan.due(run, path):  # not taken over by a moved file above
                files_scan.guarded(run, path, functools.partial(self._reconciler.on_changed_file, run, entry, stat))
        for path in sorted(found.missing):
            current = m.get(path)
            gone = current is not None and not current.tombstone and lstat(self._paths.root / path) is None
            if gone and current is not None and files_scan.due(run, path):
                self._reconciler.on_deleted_file(run, current)

    def _sweep_files(
        self, run: Run, subdirs: list[str], found: files_scan.Found, files: int, *, purges: bool = True
    ) -> None:
        """The rolling sweep of ``files`` files: in-place edits do not move a folder's time.
        ``purges=False`` (a memory call's own reconcile): purges are looked up once per :data:`PURGE_EVERY`."""
        m = run.manifest
        self._cursors["sweep"] = files_scan.stat_window(
            self._paths.root, m, subdirs, found, files, self._cursors.get("sweep", 0)
        )
        # Memories purged elsewhere, looked up for a smaller rolling window of files (a purge is rare
        # and explicit; its file goes within ``files / PURGE_WINDOW`` whole sweeps): at the sweep's
        # rate, PURGE_WINDOW files per query, so the memory calls between two look nothing up.
        self._purge_owed += PURGE_WINDOW * files / self._sweep
        if self._purge_owed < PURGE_WINDOW:
            return
        now = time.monotonic()
        if not purges and self._purged_at is not None and now - self._purged_at < PURGE_EVERY:
            return  # owed still: the next call past PURGE_EVERY looks up
        self._purged_at = now
        self._purge_owed = 0.0
        purge_window, self._cursors["purge"] = m.window(PURGE_WINDOW, self._cursors.get("purge", 0))
        untouched = [
            e
            for e in purge_window
            if e.memory_id and not e.tombstone and e.path not in found.changed and e.path not in found.missing
        ]
        self._renderer.drop_purged(run, untouched)

    # ------------------------------------------------------------------ reindex (files → rows, all of them)
    def reindex(self, *, actor: str | None = None, progress: Progress | None = None) -> tuple[MemoryReindex, list[str]]:
        """Rebuild the rows from the files, forward only, with ``actor``'s rights (:mod:`.reindex`).
        Returns the report (``indexed`` still 0) and the ids whose documents to index."""
        self.dictionary.refresh()
        with self._locked() as m:
            return self._rebuild.run(m, str(self._database_key), Caller.of(actor), progress)
