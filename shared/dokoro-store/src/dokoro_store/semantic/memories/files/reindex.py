"""The rebuild of the memories from their files (``dokoro_memory_reindex``, ``dokoro memory reindex``).

It moves forward, never back. Every memory file is read and weighed against its row:

- a file equal to its row changes nothing (a title, a body's line breaks: both sides are compared as
  the file reads back, :func:`~.markdown.fields_of_row`);
- a file older than its row is **behind** (the folder's manifest says the row changed since the file
  was last in step; without a manifest, the file's ``revision`` is below the row's): it is written
  again from the row. A forget, supersede or verdict made elsewhere is never undone by a folder
  that missed it. When such a file also says something else than its row (an edit of a stale
  file), both are kept (:meth:`~.reconcile.Reconciler.judge`);
- otherwise its differences are an edit, made by the caller with the caller's rights only
  (:mod:`.authority`), exactly as a memory call's reconcile makes it;
- a file naming a memory the database lacks restores it (:meth:`~.reconcile.Reconciler.restore_file`),
  unless the memory was purged (the ledger's or the database's tombstone: an older copy is
  removed), its id is none dokoro writes, or it is another agent's and the caller is not a person;
- a file without an id is the caller's new memory; one that cannot be read, or names an id
  another file holds, is skipped and reported (never a row, never the end of the rebuild).

When two files name one id, the one the folder's manifest knew as its file wins, else the one named
after it (``<id>-<slug>.md``) in its type's folder; the others are duplicates. The ledger
(:mod:`.ledger`) is read first for purges and last for verdicts and use counters; the restored
memories' ``depends_on`` links are written once every file is in. Then the folder is rendered from
the rows and its ledger written whole.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from sqlalchemy import func
from sqlmodel import select

from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.results.memories import FileChange, FileProblem
from dokoro_store.results.memory_files import MemoryReindex
from dokoro_store.semantic.memories.files import scan as files_scan
from dokoro_store.semantic.memories.files.authority import Caller
from dokoro_store.semantic.memories.files.ledger import Ledger
from dokoro_store.semantic.memories.files.manifest import FileEntry, Manifest
from dokoro_store.semantic.memories.files.markdown import MemoryFields, fields_digest, fields_of_row
from dokoro_store.semantic.memories.files.reconcile import PendingLinks, Reconciler
from dokoro_store.semantic.memories.files.render import Renderer
from dokoro_store.semantic.memories.files.rows import FileRows, file_id
from dokoro_store.semantic.memories.files.run import RERENDER, Gone, Run, lstat

__all__ = ["MAX_LISTED", "Rebuild"]

# The changes a rebuild's report lists (its counts count every file).
MAX_LISTED = 100
Progress = Callable[[int, int, str], None]


@dataclass
class _Pass:
    """One rebuild's state."""

    run: Run
    before: dict[str, FileEntry]
    holder: dict[str, str]  # memory id -> the path the manifest knew as its file
    owners: dict[str, str] = field(default_factory=dict)  # memory id -> the path that holds it now
    counts: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(("restored", "updated", "unchanged", "created", "behind"), 0)
    )
    duplicates: list[FileProblem] = field(default_factory=list)
    links: PendingLinks = field(default_factory=list)


class Rebuild:
    """The rebuild of one folder's memories (see the module doc)."""

    def __init__(self, base: Path, rows: FileRows, reconciler: Reconciler, renderer: Renderer, ledger: Ledger) -> None:
        self._base = base
        self._rows = rows
        self._reconciler = reconciler
        self._renderer = renderer
        self._ledger = ledger

    def run(
        self, m: Manifest, database: str, caller: Caller, progress: Progress | None = None
    ) -> tuple[MemoryReindex, list[str]]:
        """Rebuild; the report (``indexed`` still 0) and the ids whose documents to index."""
        before = {e.path: e for e in m.entries() if e.memory_id is not None and not e.tombstone}
        m.reset()
        m.set_meta("database", database)
        m.set_meta("version", "1")
        state = _Pass(
            run=Run(m, caller=caller),
            before=before,
            holder={str(e.memory_id): e.path for e in before.values()},
        )
        purges = self._ledger.restore_purges(state.run)
        paths = files_scan.all_files(self._base, state.run)
        deferred: list[str] = []
        for done, path in enumerate(paths, start=1):
            if not self._file(state, path, defer=True):
                deferred.append(path)
            if progress is not None:
                progress(done, len(paths), "memory files")
        for path in deferred:
            self._file(state, path, defer=False)
        links = self._rows.restore_links(state.links)
        restored = self._ledger.restore(state.run)
        for problem in state.run.problems:
            if problem.path.count("/") < 2 or PurePosixPath(problem.path).suffix != ".md":
                continue  # memories/, a type folder (a link), the ledger: not a file of the manifest
            if (stat := lstat(self._base / problem.path)) is not None and m.get(problem.path) is None:
                m.put(FileEntry(problem.path, None, stat.st_mtime_ns, stat.st_size, None, 0, note=problem.reason))
        with self._rows.db.read() as session:
            total = int(session.exec(select(func.count()).select_from(MemoryRow)).one())
        self._renderer.render_changed(state.run)
        self._ledger.refresh(state.run, force=True, whole=True)
        run = state.run
        report = MemoryReindex(
            files=len(paths),
            problems=run.problems,
            duplicates=state.duplicates,
            changes=run.changes[:MAX_LISTED],
            rows_without_file=total - len(state.owners),
            indexed=0,
            removed=run.removed,
            skipped=len({p.path for p in run.problems}),
            links=links,
            verdicts=restored.verdicts,
            uses=restored.uses,
            purges=purges,
            **state.counts,
        )
        return report, sorted(state.owners)

    def _file(self, state: _Pass, path: str, *, defer: bool) -> bool:
        """Take in one file; False when it waits for the second round (another file may hold its id)."""
        run, m = state.run, state.run.manifest
        stat = lstat(self._base / path)
        if stat is None:
            return True
        try:
            fields = self._reconciler.read(run, path, memory_id=None)
        except Gone:
            return True
        if isinstance(fields, str):
            return True  # reported (the manifest notes it below)
        fields = self._rows.normalise(fields)
        if fields.id is None:
            new = self._rows.insert(
                self._rows.new_row(fields, memory_id=file_id(self._rows.clock.now(), path, fields), caller=run.caller)
            )
            state.counts["created"] += 1
            state.owners[new.id] = path
            m.put(FileEntry(path, new.id, stat.st_mtime_ns, stat.st_size, None, RERENDER))
            run.changes.append(
                FileChange(
                    path=path,
                    memory_id=new.id,
                    action="created",
                    new_id=new.id,
                    state=new.state,
                    message=f"new file: remembered as {new.id} ({new.trust})",
                )
            )
            return True
        memory_id = fields.id
        if memory_id in state.owners:
            state.duplicates.append(
                FileProblem(path=path, reason=f"{memory_id} is already the memory of {state.owners[memory_id]}")
            )
            m.put(
                FileEntry(
                    path, None, stat.st_mtime_ns, stat.st_size, None, 0, note=f"a copy of {state.owners[memory_id]}"
                )
            )
            return True
        if defer and not self._holds(state, path, memory_id, fields):
            return False
        row = self._rows.row(memory_id)
        if row is None:
            restored = self._reconciler.restore_file(run, path, stat, fields, state.links)
            if restored is not None:
                state.counts["restored"] += 1
                state.owners[restored.id] = path
            return True
        state.owners[row.id] = path
        self._known(state, path, stat, fields, row)
        return True

    def _holds(self, state: _Pass, path: str, memory_id: str, fields: MemoryFields) -> bool:
        """Whether ``path`` is the file of ``memory_id`` (or no better one is known): the manifest's
        file for it, else a file named after it in its type's folder."""
        known = state.holder.get(memory_id)
        if known is not None:
            return known == path or lstat(self._base / known) is None
        name = PurePosixPath(path)
        return name.name.startswith(f"{memory_id}-") and name.parent.name == fields.type

    def _known(self, state: _Pass, path: str, stat: os.stat_result, fields: MemoryFields, row: MemoryRow) -> None:
        """A file of a memory the database has: unchanged, behind, or an edit by the caller (module doc)."""
        run, m = state.run, state.run.manifest
        stored = fields_of_row(row)
        edited = self._rows.normalise(replace(fields.over(stored), id=row.id))
        if fields_digest(edited) == fields_digest(stored):
            state.counts["unchanged"] += 1
            # In step already; rendered again only when its revision or dependencies are not shown.
            due = fields.revision != row.revision
            m.put(
                FileEntry(
                    path, row.id, stat.st_mtime_ns, stat.st_size, fields_digest(stored), RERENDER if due else row.rev
                )
            )
            if due:
                run.render.add(row.id)
            return
        old = state.before.get(path)
        if old is not None and old.memory_id == row.id and old.digest is not None:
            file_changed = self._reconciler.as_written(fields, row.id) != old.digest
            db_changed = fields_digest(stored) != old.digest
        else:
            behind = (fields.revision or 0) < row.revision
            db_changed = behind
            file_changed = not behind or bool(stored.content_differs(edited))
        m.put(FileEntry(path, row.id, stat.st_mtime_ns, stat.st_size, None, RERENDER))
        run.render.add(row.id)
        if not file_changed:
            state.counts["behind"] += 1
            run.changes.append(
                FileChange(
                    path=path,
                    memory_id=row.id,
                    action="behind",
                    state=row.state,
                    message=f"behind the database (revision {fields.revision or 'none'}, the memory's {row.revision}: "
                    f"{row.state}" + (f", {row.state_reason}" if row.state_reason else "") + "): written again from it",
                )
            )
            return
        state.counts["updated"] += 1
        self._reconciler.judge(run, path, edited, row, file_changed=True, db_changed=db_changed)
