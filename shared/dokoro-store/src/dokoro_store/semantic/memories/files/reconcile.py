"""Files → rows: what a changed, new or deleted memory file does to its memory (:mod:`.files`).

:class:`Reconciler` reads a file behind the store's walls (secrets redacted, a broken one reported
and its memory not rendered over it) and acts on it: an edit of a memory's content becomes a new
version (or brings an archived memory back), a change of ``state`` alone a state, both sides changed
keeps both, a deleted file deprecates its memory, a new file becomes a memory or restores the one it
names. Rows are changed through :class:`~.files_rows.FileRows`; every new or revived memory goes
through the conflict gate (``gate_check``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.results.memories import CloseMemory, FileChange, FileProblem
from dokoro_store.semantic.memories.files.manifest import FileEntry
from dokoro_store.semantic.memories.files.markdown import (
    MemoryFields,
    UnparseableFile,
    fields_digest,
    fields_of_row,
    parse_memory_file,
)
from dokoro_store.semantic.memories.files.rows import FileRows, file_id, redacted_fields, version_id
from dokoro_store.semantic.memories.files.run import RERENDER, Gone, Run, lstat
from dokoro_store.walls import containment as walls

__all__ = ["FILE_DELETED", "GateCheck", "Reconciler"]

FILE_DELETED = "file deleted"
# Index a new or revived memory and run the conflict gate on it; with a second row, make sure that
# pair is in the ledger too. Returns the close memories found.
GateCheck = Callable[[MemoryRow, MemoryRow | None], list[CloseMemory]]


class Reconciler:
    """The files → rows half of a sync for the workspace at ``base`` (see the module doc)."""

    def __init__(self, base: Path, rows: FileRows, gate_check: GateCheck) -> None:
        self._base = base
        self._rows = rows
        self._gate_check = gate_check

    def _new_version(self, fields: MemoryFields, old: MemoryRow) -> tuple[MemoryRow, list[CloseMemory]]:
        new, written = self._rows.new_version(fields, old)
        return new, self._gate_check(new, None) if written else []

    def _revive(self, fields: MemoryFields, old: MemoryRow) -> tuple[MemoryRow, list[CloseMemory]]:
        row = self._rows.revive(fields, old)
        return (old, []) if row is None else (row, self._gate_check(row, None))

    def read(self, run: Run, path: str, *, memory_id: str | None) -> MemoryFields | str:
        """A file's fields (secrets redacted), read behind the walls; or why it cannot be read
        (reported; its memory, ``memory_id``, is then not rendered over it). Raises :class:`Gone`
        when the file was deleted meanwhile."""
        folder = path.split("/")[1] if path.count("/") >= 2 else None
        try:
            text = walls.read_within(self._base, path).decode("utf-8")
            return redacted_fields(parse_memory_file(text, folder_type=folder))
        except (FileNotFoundError, NotADirectoryError):
            raise Gone(path) from None
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

    def on_changed_file(self, run: Run, entry: FileEntry, stat: os.stat_result) -> None:
        """A known file whose stat changed."""
        m = run.manifest
        if entry.ignored:
            m.drop(entry.path)
            self.on_new_file(run, entry.path, stat)
            return
        memory_id = str(entry.memory_id)
        fields = self.read(run, entry.path, memory_id=memory_id)
        if isinstance(fields, str):
            m.put(replace(entry, note=fields))  # its stat kept: read again (and reported) until fixed
            return
        row = self._rows.row(memory_id)
        if row is None:
            # Its memory was purged, but the file was edited since: the edit brings it back.
            restored = self._rows.insert(
                self._rows.new_row(
                    replace(self._rows.normalise(fields), id=memory_id), memory_id=memory_id, restore=True
                )
            )
            self._rows.index(restored)
            m.put(replace(entry, mtime_ns=stat.st_mtime_ns, size=stat.st_size, digest=None, rev=RERENDER, note=None))
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
        edited = self._rows.normalise(replace(fields.over(stored), id=row.id))
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
            m.put(replace(current, rev=RERENDER))

    def _apply_edit(self, run: Run, path: str, edited: MemoryFields, row: MemoryRow, stored: MemoryFields) -> None:
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

    def _change_state(self, run: Run, path: str, edited: MemoryFields, row: MemoryRow) -> None:
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
        self._rows.set_state(row.id, target, reason)
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

    def _keep_both(self, run: Run, path: str, edited: MemoryFields, row: MemoryRow) -> None:
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
        new_id = version_id(self._rows.clock.now(), row.id, edited)
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
        new = self._rows.insert(self._rows.new_row(edited, memory_id=new_id))
        conflicts = self._gate_check(new, row)
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

    def on_deleted_file(self, run: Run, entry: FileEntry) -> None:
        m = run.manifest
        if entry.ignored:
            m.drop(entry.path)
            return
        row = self._rows.row(str(entry.memory_id))
        if row is None:
            m.drop(entry.path)
            return
        if row.state != "deprecated":
            before = row.state
            row = self._rows.set_state(row.id, "deprecated", FILE_DELETED) or row
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
        fresh = self._rows.row(row.id)
        m.put(
            replace(
                entry,
                mtime_ns=None,
                size=None,
                digest=fields_digest(fields_of_row(fresh or row)),
                rev=(fresh or row).rev,
            )
        )

    def on_new_file(self, run: Run, path: str, stat: os.stat_result) -> None:
        m = run.manifest
        fields = self.read(run, path, memory_id=None)
        if isinstance(fields, str):
            m.put(FileEntry(path, None, stat.st_mtime_ns, stat.st_size, None, 0, note=fields))
            return
        fields = self._rows.normalise(fields)
        if fields.id is None:
            self._remember_file(run, path, stat, fields, "new file")
            return
        row = self._rows.row(fields.id)
        if row is None:
            restored = self._rows.insert(self._rows.new_row(fields, memory_id=fields.id, restore=True))
            self._rows.index(restored)
            m.put(FileEntry(path, restored.id, stat.st_mtime_ns, stat.st_size, None, RERENDER))
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
            and lstat(self._base / other.path) is not None
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
        entry = FileEntry(path, row.id, None, None, other.digest if other else None, other.rev if other else RERENDER)
        m.put(entry)
        self.on_changed_file(run, entry, stat)

    def _remember_file(self, run: Run, path: str, stat: os.stat_result, fields: MemoryFields, what: str) -> None:
        """A file that is no memory's yet: remembered as a new user-stated memory, through the gate
        (once: its id comes from the file, so a retry finds the row an earlier call wrote)."""
        built = self._rows.new_row(fields, memory_id=file_id(self._rows.clock.now(), path, fields))
        new = self._rows.insert(built)
        if new is not built and new.state == "deprecated" and new.state_reason == FILE_DELETED:
            # An earlier call wrote it (and failed before the manifest took it), or the same file
            # came back after its deletion: it is this memory again.
            new = self._rows.set_state(new.id, "active", "its file came back") or new
        conflicts = self._gate_check(new, None)
        run.manifest.put(FileEntry(path, new.id, stat.st_mtime_ns, stat.st_size, None, RERENDER))
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

    def reindex_file(
        self,
        run: Run,
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
            row = self._rows.insert(self._rows.new_row(fields, memory_id=file_id(self._rows.clock.now(), path, fields)))
            counts["created"] += 1
        else:
            existing = self._rows.row(fields.id)
            if existing is None:
                row = self._rows.insert(self._rows.new_row(fields, memory_id=fields.id, restore=True))
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
                    row = self._rows.overwrite(existing.id, wanted)
                    counts["updated"] += 1
        owners[row.id] = path
        m.put(FileEntry(path, row.id, stat.st_mtime_ns, stat.st_size, None, RERENDER))
