"""A read-only look at the memory files: what the read-only calls (``dokoro_memory_status``, the
briefing) say about the files instead of reading them in.

Those calls write nothing, so they cannot take a person's edit in; they say plainly what they have
not read. :func:`look` compares the folder with its manifest as a reconcile would, without acting:
the folders whose time moved are listed (new, edited, deleted files), a small folder's files are
stat-ed (edits made in place), and the few files found are parsed to tell a broken one from one the
next memory call takes in (at most :data:`READS` files, never one over the walls' size). The files
the folder holds that no memory can be made of (broken, refused, copies) are the manifest's notes:
reported until they are fixed or removed. :func:`check` puts it in one line with the counts.
"""

from __future__ import annotations

import os
import stat as stat_kind
from dataclasses import dataclass, field
from pathlib import Path

from dokoro_store.results.memories import FileProblem, FilesCheck
from dokoro_store.semantic.memories.files import scan as files_scan
from dokoro_store.semantic.memories.files.manifest import Manifest
from dokoro_store.semantic.memories.files.markdown import MEMORIES_DIR, UnparseableFile, parse_memory_file
from dokoro_store.semantic.memories.files.run import lstat
from dokoro_store.walls import containment as walls
from dokoro_store.walls.secrets import redact

__all__ = ["LISTED", "READS", "Look", "check", "look", "unread_line"]

# Files parsed (read only) to tell a broken one; files listed by name.
READS = 10
LISTED = 10
# A folder of at most this many files has every file stat-ed (edits made in place).
_STAT_ALL = 100
_NEVER = "memory files the folder has never read"


@dataclass
class Look:
    """What the folder holds that the rows do not say yet."""

    new: int = 0
    edited: int = 0
    deleted: int = 0
    files: list[FileProblem] = field(default_factory=list)  # the first ones, each with what it is
    never_read: bool = False  # the manifest knows no file, yet memories/ holds some
    not_read: int = 0  # files no memory can be made of until fixed (broken, refused, copies)
    not_read_files: list[FileProblem] = field(default_factory=list)

    @property
    def unread(self) -> int:
        return self.new + self.edited + self.deleted


def _why_broken(base: Path, path: str) -> str | None:
    folder = path.split("/")[1] if path.count("/") >= 2 else None
    try:
        parse_memory_file(walls.read_within(base, path).decode("utf-8"), folder_type=folder)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except UnicodeDecodeError:
        return "not UTF-8 text"
    except (UnparseableFile, walls.UnsafeFile) as exc:
        return redact(str(exc)).text
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    return None


def look(base: Path, m: Manifest | None) -> Look:
    """The folder at ``base`` against its manifest ``m`` (None: none for this database), read only."""
    seen = Look()
    linked = [FileProblem(path=p, reason=r) for p, r in files_scan.linked_folders(base)]
    if m is None:
        seen.never_read = files_scan.any_file_on_disk(base)
        seen.not_read, seen.not_read_files = len(linked), linked
        return seen
    notes = [FileProblem(path=e.path, reason=e.note or "") for e in m.noted(LISTED)]
    seen.not_read = m.noted_count() + len(linked)
    seen.not_read_files = (linked + notes)[:LISTED]
    root = lstat(base / MEMORIES_DIR)
    if root is None or not stat_kind.S_ISDIR(root.st_mode):
        return seen
    known = m.dirs()
    folders = []
    with os.scandir(base / MEMORIES_DIR) as entries:
        for entry in entries:
            if files_scan.is_type_folder(entry):
                folders.append(f"{MEMORIES_DIR}/{entry.name}")
    folders.sort()
    found = files_scan.Found()
    for folder in folders:
        now = lstat(base / folder)
        if now is not None and known.get(folder) != now.st_mtime_ns:
            files_scan.list_folder(base, m, folder, found)
    if not m.more_than(_STAT_ALL):
        files_scan.stat_window(base, m, folders, found, _STAT_ALL, 0)
    if not m.count() and found.new:
        seen.never_read = True
    seen.new, seen.edited, seen.deleted = len(found.new), len(found.changed), len(found.missing)
    listed = [(path, "new") for path, _stat in sorted(found.new)] + [(path, "edited") for path in sorted(found.changed)]
    for number, (path, what) in enumerate(listed[:LISTED]):
        why = _why_broken(base, path) if number < READS else None
        reason = f"{what}, cannot be read: {why}" if why else f"{what}, not read yet"
        seen.files.append(FileProblem(path=path, reason=reason))
    room = LISTED - len(seen.files)
    seen.files += [FileProblem(path=p, reason="deleted, not seen yet") for p in sorted(found.missing)[: max(0, room)]]
    return seen


def check(seen: Look, *, files: int, deleted: int, rows: int, unrendered: int) -> FilesCheck:
    """The files against the ``rows`` memories, in one line: counts from the manifest (``files``,
    ``deleted``), the rows changed since the folder's last render, and what :func:`look` saw."""
    missing = files + deleted - rows  # files whose memory the database lacks (at least)
    common = {
        "files": files,
        "deleted": deleted,
        "rows": rows,
        "unrendered": unrendered,
        "unknown_files": seen.never_read,
        "unread": seen.unread,
        "unread_files": seen.files,
        "not_read": seen.not_read,
        "not_read_files": seen.not_read_files,
    }
    if missing > 0 or (seen.never_read and rows == 0):
        what = f"{files} memory file(s)" if not seen.never_read else _NEVER
        message = (
            f"the files and the database differ: memories/ holds {what} but the database {rows} memory(ies) "
            "(memories purged elsewhere, whose files go on the next calls; a lost or replaced database; a fresh "
            "clone): dokoro_memory_reindex brings the database up to date from the files in one call (it moves "
            "forward only: nothing the database recorded since, a forget, a supersede, a purge, is undone)"
        )
        return FilesCheck(in_step=False, message=message, **common)
    parts = [f"{files} memory file(s)"]
    if seen.unread:
        kinds = ((seen.new, "new"), (seen.edited, "edited"), (seen.deleted, "deleted"))
        counts = ", ".join(f"{n} {what}" for n, what in kinds if n)
        parts.append(
            f"{seen.unread} changed since they were last read ({counts}): not in this answer; the next memory "
            "call that may write takes them in"
        )
    elif seen.never_read:
        parts.append(f"memories/ holds {_NEVER} (the next calls read them)")
    if seen.not_read:
        parts.append(f"{seen.not_read} file(s) hold no memory until fixed (listed)")
    if not seen.unread and not seen.never_read and not seen.not_read:
        parts[0] += ", in step with the rows"
    if deleted:
        parts.append(f"{deleted} deleted by a person")
    if unrendered:
        parts.append(f"{unrendered} changed memory(ies) are written to their files on the next calls")
    return FilesCheck(in_step=not (seen.unread or seen.never_read), message="; ".join(parts), **common)


def unread_line(seen: Look) -> str | None:
    """One line on what a read-only answer (the briefing) has not read, or None when nothing."""
    parts = []
    if seen.unread:
        parts.append(
            f"{seen.unread} changed since they were last read (not in this answer: the next memory call takes them in)"
        )
    elif seen.never_read:
        parts.append("memories/ holds files this folder has never read (the next memory calls read them)")
    if seen.not_read:
        parts.append(f"{seen.not_read} hold no memory until fixed (dokoro_memory_status lists them)")
    return "memory files: " + "; ".join(parts) if parts else None
