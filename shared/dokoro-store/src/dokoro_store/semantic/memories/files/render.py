"""Rows → files: each memory rendered to its markdown file (:mod:`.files`), and a purged memory's file removed.

:class:`Renderer` writes the rows changed since the folder's mark (their change numbers, ``rev``,
above it) and the memories a write just committed, atomically and never through or over a link. A
file a person changed since it was last seen is heard first (:class:`~.files_reconcile.Reconciler`):
an edit is never written over. A row an earlier version let in under an id that cannot name a file
(``../../etc/passwd``) is reported and skipped, never the call's failure (``dokoro doctor --fix``
gives it a safe id).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath

from sqlalchemy import bindparam
from sqlalchemy import select as core_select

from dokoro_store.db.engine import Database
from dokoro_store.errors import DokoroError
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.paths import StorePaths
from dokoro_store.results.memories import FilesSync
from dokoro_store.semantic.memories.dictionary import EntityDictionary
from dokoro_store.semantic.memories.files.manifest import FileEntry, Manifest
from dokoro_store.semantic.memories.files.markdown import (
    MEMORIES_DIR,
    fields_digest,
    fields_of_row,
    memory_path,
    render_memory,
)
from dokoro_store.semantic.memories.files.reconcile import Reconciler
from dokoro_store.semantic.memories.files.rows import FileRows
from dokoro_store.semantic.memories.files.run import Run, lstat
from dokoro_store.semantic.memories.repository import is_safe_id
from dokoro_store.semantic.memories.rows import MEMORY_TYPES
from dokoro_store.walls import containment as walls
from dokoro_store.walls.files import atomic_write_text

__all__ = ["MEMORIES", "Renderer"]

MEMORIES = MemoryRow.__table__  # type: ignore[attr-defined]
# The rows changed since a folder's mark, oldest change first (built once: every memory call asks).
_FEED = (
    core_select(MEMORIES.c.id, MEMORIES.c.rev)
    .where(MEMORIES.c.rev > bindparam("mark"))
    .order_by(MEMORIES.c.rev)
    .limit(bindparam("limit"))
)
_NO_LIMIT = 2**62  # the feed's limit when a call renders every changed row (both databases take it)


class Renderer:
    """The rows → files half of a sync (see the module doc)."""

    def __init__(
        self, paths: StorePaths, db: Database, rows: FileRows, reconciler: Reconciler, dictionary: EntityDictionary
    ) -> None:
        self._paths = paths
        self._db = db
        self._rows = rows
        self._reconciler = reconciler
        self._dictionary = dictionary
        self._root = paths.root / MEMORIES_DIR
        # The dependencies of the rows about to be written (loaded in one query per batch).
        self._links: dict[str, tuple[str, ...]] = {}

    def render_changed(self, run: Run, *, limit: int | None = None) -> None:
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
        rows = self._rows.load(wanted)
        linked = self._rows.links(rows)
        self._links.update({memory_id: linked.get(memory_id, ()) for memory_id in rows})
        for memory_id in sorted(wanted):
            row = rows.get(memory_id)
            if row is not None:
                self._render_one(run, row)
        self._links.clear()
        # Only now, with every row up to ``top`` in its file (or blocked, reported), move the mark.
        m.rev = max(m.rev, top)

    def _render_one(self, run: Run, row: MemoryRow) -> None:
        m = run.manifest
        if self._unsafe(run, row):
            return
        entry = m.of_memory(row.id)
        if entry is not None and entry.tombstone and entry.rev == row.rev:
            return  # deleted by a person; not written back until the memory changes
        if entry is not None and not entry.tombstone:
            stat = lstat(self._paths.root / entry.path)
            if stat is not None and not entry.same_stat(stat.st_mtime_ns, stat.st_size):
                # Edited since it was last seen: hear the person before writing over it.
                self._reconciler.on_changed_file(run, entry, stat)
                if row.id in run.blocked:
                    return
                fresh = self._rows.row(row.id)
                if fresh is None:
                    return
                row, entry = fresh, m.of_memory(row.id)
        elif entry is None:
            relative = memory_path(row.id, row.type, row.title)
            stat = lstat(self._paths.root / relative)
            if stat is not None:
                # A file at its place the manifest does not know (a lost manifest): read it first
                # (a link there is reported by the read, never followed).
                self._reconciler.on_new_file(run, relative, stat)
                if row.id in run.blocked:
                    return
                fresh = self._rows.row(row.id)
                if fresh is None:
                    return
                row, entry = fresh, m.of_memory(row.id)
        if entry is not None and entry.rev == row.rev and entry.digest is not None and not entry.tombstone:
            return
        self.write(run, row, entry)

    def _unsafe(self, run: Run, row: MemoryRow) -> bool:
        """A row no file can hold (an id or a type an earlier version let in): reported, skipped."""
        if is_safe_id(row.id) and row.type in MEMORY_TYPES:
            return False
        shown = row.id if len(row.id) <= 60 else row.id[:57] + "..."
        what = f"id {shown!r}" if not is_safe_id(row.id) else f"type {row.type!r}"
        run.problem(
            MEMORIES_DIR,
            f"memory {shown!r} has an {what} that cannot name a file (an earlier version let it in): not written; "
            "`dokoro doctor --fix` repairs it",
        )
        run.blocked.add(row.id)
        return True

    def write(self, run: Run, row: MemoryRow, entry: FileEntry | None) -> None:
        m = run.manifest
        if entry is None and self._unsafe(run, row):
            return
        relative = entry.path if entry is not None else memory_path(row.id, row.type, row.title)
        target = self._paths.root / relative
        folder = target.parent
        if (why := walls.unsafe_on_path(self._paths.root, relative)) is not None:
            # A link (the file, its type folder, memories/) is never written through or over.
            where = relative if why.startswith(("the file", "not a regular")) else why.split(" ", 1)[0]
            run.problem(where, why)
            run.blocked.add(row.id)
            return
        if lstat(self._root) is None:
            self._root.mkdir(parents=True, exist_ok=True)
            self._dictionary.write_starter()
            if (created := lstat(self._root)) is not None:
                m.set_dir(MEMORIES_DIR, created.st_mtime_ns)
        root_before = lstat(self._root)
        before = lstat(folder)
        links = self._links[row.id] if row.id in self._links else self._rows.links([row.id]).get(row.id, ())
        fields = fields_of_row(row, links)
        try:
            atomic_write_text(target, render_memory(fields), within=self._paths.root)
        except DokoroError as exc:  # a link swapped in since the check leads out of the store
            run.problem(relative, str(exc))
            run.blocked.add(row.id)
            return
        if (stat := lstat(target)) is None:
            return  # deleted by a person right after the write: the next sync renders it again
        m.put(FileEntry(relative, row.id, stat.st_mtime_ns, stat.st_size, fields_digest(fields), row.rev))
        run.rendered += 1
        # Our own write moved the folder's time; record it, unless the folder had moved before it
        # (a person's change not yet seen, which the next sync must still list).
        known = m.dirs()
        folder_key = PurePosixPath(relative).parent.as_posix()  # the file's path names its folder
        after = lstat(folder)
        if after is not None and (before is None or known.get(folder_key) == before.st_mtime_ns):
            m.set_dir(folder_key, after.st_mtime_ns)
        # A type folder this write created moved the memories folder's time.
        created_folder = before is None and root_before is not None
        if created_folder and root_before is not None and known.get(MEMORIES_DIR) == root_before.st_mtime_ns:
            root_after = lstat(self._root)
            if root_after is not None:
                m.set_dir(MEMORIES_DIR, root_after.st_mtime_ns)

    def render_rows(self, run: Run, by_id: dict[str, MemoryRow], revs: dict[str, tuple[int, str]]) -> FilesSync:
        m = run.manifest
        linked = self._rows.links(by_id)
        self._links.update({memory_id: linked.get(memory_id, ()) for memory_id in by_id})
        for memory_id in sorted(by_id):
            if memory_id not in revs:
                continue  # gone since (purged by another process)
            rev, state = revs[memory_id]
            row = by_id[memory_id]
            if rev != row.rev or state != row.state:  # changed since: the next sync renders it
                continue
            self._render_one(run, row)
        self._links.clear()
        mark = m.rev
        for rev, _state in sorted(revs.values()):
            if rev == mark + 1:
                mark = rev
        m.rev = mark
        return run.result()

    def drop_purged(self, run: Run, entries: Sequence[FileEntry]) -> None:
        """Files of memories purged elsewhere (another process, another machine) go too."""
        if not entries:
            return
        ids = [str(e.memory_id) for e in entries]
        alive = self._rows.alive(ids)
        for entry in entries:
            if entry.memory_id not in alive:
                self.remove_file(run.manifest, entry)
                run.removed += 1

    def remove_file(self, m: Manifest, entry: FileEntry) -> None:
        path = self._paths.root / entry.path
        stat = lstat(path)
        if stat is not None and not entry.same_stat(stat.st_mtime_ns, stat.st_size):
            # Edited since it was written: the edit survives; the next sync sees the changed file
            # of a memory the database no longer has, and brings the memory back from it.
            return
        if stat is not None:
            path.unlink(missing_ok=True)
        m.drop(entry.path)
