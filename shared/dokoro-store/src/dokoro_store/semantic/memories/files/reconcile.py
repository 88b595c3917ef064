"""Files → rows: what a changed, new or deleted memory file does to its memory (:mod:`.files`).

:class:`Reconciler` reads a file behind the store's walls (secrets redacted, a broken one reported
and its memory not rendered over it) and acts on it, with the caller's rights only
(:mod:`.authority`: files carry content, not authority): an edit of a memory's content becomes a new
version by the caller (or brings an archived memory back), a change of ``state`` alone a state, both
sides changed keeps both, a deleted file deprecates its memory, a new file becomes the caller's
memory or restores the one it names. A file never restores a purged memory (its tombstone says so:
an older copy is removed), never approves a proposal, never changes an owner nor raises a trust.
Rows are changed through :class:`~.files_rows.FileRows`; every new or revived memory goes through
the conflict gate (``gate_check``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from dokoro_store.clock import iso
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.results.memories import CloseMemory, FileChange
from dokoro_store.semantic.memories.files.authority import TRUST_RANK
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
from dokoro_store.semantic.memories.owners import asked, owner_words
from dokoro_store.semantic.memories.repository import is_memory_id
from dokoro_store.walls import containment as walls
from dokoro_store.walls.ownership import PERSON

__all__ = ["FILE_DELETED", "GateCheck", "Reconciler"]

FILE_DELETED = "file deleted"
# Index a new or revived memory and run the conflict gate on it; with a second row, make sure that
# pair is in the ledger too. Returns the close memories found.
GateCheck = Callable[[MemoryRow, MemoryRow | None], list[CloseMemory]]
# A restored memory's dependencies, linked once every file of a rebuild is in (memory, targets, updated).
PendingLinks = list[tuple[str, tuple[str, ...], datetime]]
_RETIRED = ("archived", "deprecated")


class Reconciler:
    """The files → rows half of a sync for the workspace at ``base`` (see the module doc)."""

    def __init__(self, base: Path, rows: FileRows, gate_check: GateCheck) -> None:
        self._base = base
        self._rows = rows
        self._gate_check = gate_check

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

    # ------------------------------------------------------------------ a known file changed
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
            self._edited_after_purge(run, entry, stat, replace(self._rows.normalise(fields), id=memory_id))
            return
        stored = fields_of_row(row)
        edited = self._rows.normalise(replace(fields.over(stored), id=row.id))
        row_digest, file_digest = fields_digest(stored), fields_digest(edited)
        seen = replace(entry, mtime_ns=stat.st_mtime_ns, size=stat.st_size, note=None)
        if file_digest == row_digest:
            m.put(replace(seen, digest=row_digest, rev=row.rev))
            return
        # Whether the file changed since it was last in step: the file as written (a key left out is
        # empty, as when it was rendered), not completed from the row as it now stands.
        file_changed = entry.digest is None or self.as_written(fields, row.id) != entry.digest
        db_changed = entry.digest is None or row_digest != entry.digest
        m.put(seen)
        run.render.add(row.id)
        self.judge(run, entry.path, edited, row, file_changed=file_changed, db_changed=db_changed)
        if (current := m.get(entry.path)) is not None and current.rev == row.rev:
            m.put(replace(current, rev=RERENDER))

    def as_written(self, fields: MemoryFields, memory_id: str) -> str:
        """The digest of a file's fields as it is written (keys it leaves out are empty)."""
        return fields_digest(self._rows.normalise(replace(fields, id=memory_id)))

    def _edited_after_purge(self, run: Run, entry: FileEntry, stat: os.stat_result, fields: MemoryFields) -> None:
        """A file edited since its memory was purged (by another process): the purge stands (a
        purged memory never comes back); the edit is kept, as a new memory by the caller."""
        tomb = self._rows.tombstone(str(entry.memory_id))
        run.manifest.drop(entry.path)
        if tomb is not None:
            by = f" by {tomb.purged_by}" if tomb.purged_by else ""
            what = f"its memory {entry.memory_id} was purged{by} on {iso(tomb.purged_at)}; the edit is kept as"
            self._remember_file(run, entry.path, stat, replace(fields, id=None), what + " a new memory")
            return
        # Gone without a purge (a database that lost rows): the edited file brings it back.
        self.restore_file(run, entry.path, stat, fields)

    def judge(
        self, run: Run, path: str, edited: MemoryFields, row: MemoryRow, *, file_changed: bool, db_changed: bool
    ) -> None:
        """What a file that differs from its row does: nothing when only the row changed (the file is
        behind: it is rendered again), keeps both when both changed, else the edit (:meth:`_apply_edit`)."""
        if not file_changed:
            return
        if db_changed:
            self._keep_both(run, path, edited, row)
        else:
            self._apply_edit(run, path, edited, row, fields_of_row(row))

    def _apply_edit(self, run: Run, path: str, edited: MemoryFields, row: MemoryRow, stored: MemoryFields) -> None:
        caller = run.caller
        content = stored.content_differs(edited)
        if content == ["trust"] and not caller.person and TRUST_RANK[edited.trust] > TRUST_RANK[row.trust]:
            message = f"trust is not raised by a file (it stays {row.trust}); the file was written again"
            self._not_applied(run, path, row, ["trust"], message)
        elif content and (keeper := caller.keeper(row.agent_id, row.trust)) is not None:
            self._keep_both(run, path, edited, row, owner=keeper)
        elif content and row.state in _RETIRED:
            revived = self._rows.revive(edited, row, caller)
            conflicts = self._gate_check(revived, None) if revived is not None else []
            run.changes.append(
                FileChange(
                    path=path,
                    memory_id=row.id,
                    action="revived",
                    state=revived.state if revived is not None else row.state,
                    fields=content,
                    message=f"edited ({', '.join(content)}): {row.id} was {row.state}, now active again with the "
                    "file's text" + (f"; {len(conflicts)} close memory(ies) to judge" if conflicts else ""),
                    conflicts=conflicts,
                )
            )
        elif content:
            new, written = self._rows.new_version(edited, row, caller)
            conflicts = self._gate_check(new, None) if written else []
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
                    + (f" (trust {new.trust}: a file does not raise it)" if new.trust != edited.trust else "")
                    + (f"; {len(conflicts)} close memory(ies) to judge" if conflicts else ""),
                    conflicts=conflicts,
                )
            )
        elif edited.state != stored.state:
            self._change_state(run, path, edited, row)
        else:
            names = ("id", "created", "updated", "agent", "session", "supersedes", "superseded_by", "state_reason")
            changed = [name for name in names if getattr(edited, name) != getattr(stored, name)]
            run.changes.append(
                FileChange(
                    path=path,
                    memory_id=row.id,
                    action="restored_fields",
                    fields=changed,
                    message=f"{', '.join(changed)} are the database's to say; the file was written again",
                )
            )

    def _not_applied(self, run: Run, path: str, row: MemoryRow, fields: list[str], message: str) -> None:
        run.changes.append(
            FileChange(
                path=path, memory_id=row.id, action="not_applied", state=row.state, fields=fields, message=message
            )
        )

    def _change_state(self, run: Run, path: str, edited: MemoryFields, row: MemoryRow) -> None:
        target, caller = edited.state, run.caller
        if target == "proposed":
            self._not_applied(
                run, path, row, ["state"], "state proposed is set by the review queue only; the file was written again"
            )
            return
        if row.state == "proposed" and target == "active":
            self._not_applied(
                run,
                path,
                row,
                ["state"],
                "a file does not approve a proposal: a person approves it with `dokoro memory approve "
                f"{row.id}` (or v in dokoro browse); the file was written again",
            )
            return
        keeper = caller.keeper(row.agent_id, row.trust)
        if keeper is not None:
            self._not_applied(
                run,
                path,
                row,
                ["state"],
                f"{row.id} is {owner_words(keeper)}: {caller.describe()} may not change its state through a "
                f"file (it stays {row.state}; ask {asked(keeper)}); the file was written again",
            )
            return
        if target == "active":
            reason = "brought back by an edit of its file"
        else:
            own = edited.state_reason if edited.state_reason and edited.state_reason != row.state_reason else None
            reason = own or f"{target} in its file"
        self._rows.set_state(row.id, target, reason, agent=caller.agent)
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

    def _keep_both(
        self, run: Run, path: str, edited: MemoryFields, row: MemoryRow, *, owner: str | None = None
    ) -> None:
        """The file's version becomes a new memory by the caller beside the row's (which stays as
        it is), the pair unresolved in the conflict ledger: both changed since the last render, or
        the memory is another agent's (``owner``)."""
        stored = fields_of_row(row)
        why = (
            f"{row.id} is {owner_words(owner)}, which {run.caller.describe()} may not replace"
            if owner
            else "the file and the database both changed since the last render"
        )
        if not stored.content_differs(edited):
            self._not_applied(
                run,
                path,
                row,
                ["state"],
                f"{why}; the file's state edit was not applied (the memory is {row.state})"
                + ("" if owner else "; edit the file again to apply it"),
            )
            return
        new_id = version_id(self._rows.clock.now(), row.id, edited)
        trust = run.caller.version_trust(edited.trust, row.trust)
        new = self._rows.insert(self._rows.new_row(edited, memory_id=new_id, caller=run.caller, trust=trust))
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
                message=f"{why}: kept both — {row.id} (as it is) and {new.id} (the file's edit); judge the pair "
                f"with dokoro_memory_verdict(new_id='{new.id}', old_id='{row.id}', ...)",
                conflicts=conflicts,
            )
        )

    # ------------------------------------------------------------------ a file deleted
    def on_deleted_file(self, run: Run, entry: FileEntry) -> None:
        m = run.manifest
        if entry.ignored:
            m.drop(entry.path)
            return
        row = self._rows.row(str(entry.memory_id))
        if row is None:
            m.drop(entry.path)
            return
        keeper = run.caller.keeper(row.agent_id, row.trust)
        if row.state != "deprecated" and keeper is not None:
            run.changes.append(
                FileChange(
                    path=entry.path,
                    memory_id=row.id,
                    action="not_applied",
                    state=row.state,
                    message=f"file deleted: {row.id} is {owner_words(keeper)} and stays {row.state} (deleting a file "
                    f"is not forgetting another's memory; ask {asked(keeper)}); its file is not written again here "
                    "until it changes",
                )
            )
        elif row.state != "deprecated":
            before = row.state
            row = self._rows.set_state(row.id, "deprecated", FILE_DELETED, agent=run.caller.agent) or row
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
        fresh = self._rows.row(row.id) or row
        m.put(replace(entry, mtime_ns=None, size=None, digest=fields_digest(fields_of_row(fresh)), rev=fresh.rev))

    # ------------------------------------------------------------------ a new file
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
            self.restore_file(run, path, stat, fields)
            return
        other = m.of_memory(row.id)
        if (
            other is not None
            and other.path != path
            and not other.tombstone
            and lstat(self._base / other.path) is not None
        ):
            # A copy of another memory's file (it cannot take that memory's id): a new memory when it
            # says something else.
            stored = fields_of_row(row)
            if not stored.content_differs(replace(fields.over(stored), id=row.id)):
                m.put(FileEntry(path, None, stat.st_mtime_ns, stat.st_size, None, 0, note=f"a copy of {other.path}"))
                return
            self._remember_file(
                run, path, stat, replace(fields.over(stored), id=None), f"a changed copy of {other.path}"
            )
            return
        # The memory's own file, moved here (or met again after the manifest was lost).
        if other is not None:
            m.drop(other.path)
        entry = FileEntry(path, row.id, None, None, other.digest if other else None, other.rev if other else RERENDER)
        m.put(entry)
        self.on_changed_file(run, entry, stat)

    def unrestorable(self, run: Run, fields: MemoryFields) -> tuple[str, str] | None:
        """Why a file naming a memory the database lacks may not restore it, as (what is done, why):
        ``removed`` (an older copy of a purged memory), ``skipped`` (a later one, an id dokoro never
        writes, another agent's memory for this caller); None when it may."""
        memory_id = str(fields.id)
        tomb = self._rows.tombstone(memory_id)
        if tomb is not None:
            by = f" by {tomb.purged_by}" if tomb.purged_by else ""
            purged = f"its memory {memory_id} was purged{by} on {iso(tomb.purged_at)} (revision {tomb.revision})"
            if (fields.revision or 0) <= tomb.revision:
                return "removed", f"{purged}: this older copy is removed, the purge stands"
            return "skipped", f"{purged}, and a purged memory never comes back; remove its id line to remember it anew"
        if not is_memory_id(memory_id):
            return "skipped", (
                f"id {memory_id!r} is not a memory id dokoro wrote (mem_YYYYMMDD_hex), so it restores nothing; "
                "remove the id line to remember the file as a new memory"
            )
        keeper = run.caller.keeper(fields.agent, fields.trust)
        if keeper is not None:  # the walls' one rule: a file naming another agent, or a person, speaks for nobody
            own_call = "" if keeper == PERSON else f"{keeper}'s own call or "
            return "skipped", (
                f"{memory_id} is {owner_words(keeper)} by its file, which the database lacks: "
                f"{run.caller.describe()} does not restore another's memory from a file; {own_call}a person's "
                "`dokoro memory reindex` restores it"
            )
        return None

    def restore_file(
        self, run: Run, path: str, stat: os.stat_result, fields: MemoryFields, links: PendingLinks | None = None
    ) -> MemoryRow | None:
        """Bring back the memory a file names that the database lacks, as the file says (id, trust,
        state, dates, chain, revision, dependencies), when :meth:`unrestorable` allows; else the
        file is removed (an older copy of a purged memory) or reported. ``links``: where a rebuild
        collects the dependencies, linked once all its files are in (else linked now)."""
        m = run.manifest
        refused = self.unrestorable(run, fields)
        if refused is not None:
            action, why = refused
            if action == "removed" and (now := lstat(self._base / path)) is not None and now.st_ino == stat.st_ino:
                (self._base / path).unlink(missing_ok=True)
                m.drop(path)
                run.removed += 1
                run.changes.append(
                    FileChange(path=path, memory_id=str(fields.id), action="removed", state="purged", message=why)
                )
            else:
                m.put(FileEntry(path, None, stat.st_mtime_ns, stat.st_size, None, 0, note=run.problem(path, why)))
            return None
        restored = self._rows.insert(self._rows.restored_row(fields, str(fields.id)))
        self._rows.index(restored)
        wanted = [(restored.id, fields.depends_on, restored.updated_at)]
        if links is None:
            self._rows.restore_links(wanted)
        else:
            links += wanted
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
        return restored

    def _remember_file(self, run: Run, path: str, stat: os.stat_result, fields: MemoryFields, what: str) -> None:
        """A file that is no memory's yet: remembered as the caller's new memory, through the gate
        (once: its id comes from the file, so a retry finds the row an earlier call wrote)."""
        built = self._rows.new_row(fields, memory_id=file_id(self._rows.clock.now(), path, fields), caller=run.caller)
        new = self._rows.insert(built)
        if new is not built and new.state == "deprecated" and new.state_reason == FILE_DELETED:
            # An earlier call wrote it (and failed before the manifest took it), or the same file
            # came back after its deletion: it is this memory again.
            new = self._rows.set_state(new.id, "active", "its file came back", agent=run.caller.agent) or new
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
                message=f"{what}: remembered as {new.id} ({new.trust}"
                + (f", {run.caller.agent}'s" if run.caller.agent else "")
                + ")",
                conflicts=conflicts,
            )
        )
