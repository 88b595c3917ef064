"""The listing of the memory files (:mod:`.files`): what changed on disk since the manifest last saw it.

A folder is listed only when its modification time moved; the rolling sweep stats a window of the
manifest's files for edits made in place. Symlinks are never followed: a linked ``memories/`` or
type folder is reported and nothing under it is read. Every function here reads the disk and the
manifest only; what a found file does to its memory is :mod:`.files_reconcile`'s.
"""

from __future__ import annotations

import contextlib
import os
import stat as stat_kind
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from dokoro_store.semantic.memories.files.ledger import LEDGER_DIR
from dokoro_store.semantic.memories.files.manifest import FileEntry, Manifest
from dokoro_store.semantic.memories.files.markdown import MEMORIES_DIR
from dokoro_store.semantic.memories.files.run import RELIST, Gone, Run, is_memory_file, lstat

__all__ = [
    "LINKED",
    "LINKED_ROOT",
    "Found",
    "all_files",
    "any_file_on_disk",
    "due",
    "guarded",
    "is_type_folder",
    "linked_folders",
    "list_folder",
    "stat_window",
    "type_folders",
]

LINKED = (
    "a symlink: nothing is read through it or written over it (its target may be outside the store); "
    "replace it by a real folder or file"
)
LINKED_ROOT = "a symlink or not a folder: no memory file is read or written until it is a real folder"


def is_type_folder(entry: os.DirEntry[str]) -> bool:
    """Whether an entry of ``memories/`` is a folder of memory files (not a link, a hidden folder or
    the ledger, :mod:`.ledger`)."""
    if entry.name.startswith(".") or entry.name == LEDGER_DIR:
        return False
    try:
        return not entry.is_symlink() and entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


@dataclass
class Found:
    """What a scan found: files the manifest does not know, files whose stat changed, files gone."""

    new: list[tuple[str, os.stat_result]] = field(default_factory=list)
    changed: dict[str, tuple[FileEntry, os.stat_result]] = field(default_factory=dict)
    missing: dict[str, FileEntry] = field(default_factory=dict)


def type_folders(base: Path, run: Run) -> list[str] | None:
    """The type folders under ``memories/`` (listed again only when its time moved), or None
    when there is no ``memories/`` folder."""
    m = run.manifest
    known_dirs = m.dirs()
    root = base / MEMORIES_DIR
    root_stat = lstat(root)
    if root_stat is not None and not stat_kind.S_ISDIR(root_stat.st_mode):
        run.problem(MEMORIES_DIR, LINKED_ROOT)  # a symlink: nothing under it is read or written
        return None
    if root_stat is None:
        if m.count():
            # The whole folder is gone: render it again (deleting the memory files one by one is
            # how a person deprecates memories, not removing the folder).
            for folder in known_dirs:
                _forget_folder(run, folder)
            m.drop_dirs(list(known_dirs))
        return None
    if known_dirs.get(MEMORIES_DIR) == root_stat.st_mtime_ns:
        return sorted(d for d in known_dirs if d != MEMORIES_DIR)
    m.set_dir(MEMORIES_DIR, root_stat.st_mtime_ns)
    subdirs = []
    with os.scandir(root) as entries:
        for e in entries:
            if e.name.startswith("."):
                continue
            if e.is_symlink():
                run.problem(f"{MEMORIES_DIR}/{e.name}", LINKED)
            elif is_type_folder(e):
                subdirs.append(f"{MEMORIES_DIR}/{e.name}")
    subdirs.sort()
    gone = [d for d in known_dirs if d != MEMORIES_DIR and d not in subdirs]
    for folder in gone:
        _forget_folder(run, folder)
    m.drop_dirs(gone)
    return subdirs


def _forget_folder(run: Run, folder: str) -> None:
    """A whole type folder was deleted: its memories are rendered again, not deprecated."""
    for entry in run.manifest.in_dir(folder).values():
        run.manifest.drop(entry.path)
        if entry.memory_id:
            run.render.add(entry.memory_id)


def list_folder(base: Path, m: Manifest, folder: str, found: Found) -> None:
    """Compare a folder's files with the manifest: new, changed (stat) and missing files."""
    known = m.in_dir(folder)
    seen: set[str] = set()
    if (folder_stat := lstat(base / folder)) is None or not stat_kind.S_ISDIR(folder_stat.st_mode):
        return  # replaced by a link meanwhile: listed (and reported) from the memories folder
    with os.scandir(base / folder) as entries:
        for item in entries:
            # A link or a special file is listed too: reading it refuses it, and it is reported.
            if not is_memory_file(item.name) or item.is_dir(follow_symlinks=False):
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


def stat_window(base: Path, m: Manifest, subdirs: list[str], found: Found, files: int, cursor: int) -> int:
    """Stat the next ``files`` files of the manifest from ``cursor`` (in-place edits do not move a
    folder's time), adding the changed and missing ones to ``found``; the cursor to go on from."""
    prefix = f"{base}{os.sep}"
    window, cursor = m.stat_window(files, cursor)
    for path, mtime_ns, size in window:
        if path in found.changed or path in found.missing:
            continue
        stat = lstat(prefix + path)
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
    return cursor


def due(run: Run, path: str) -> bool:
    """Whether this call handles ``path`` (its budget of files not spent); else its folder is
    listed again on the next call, which finds it still new, changed or missing."""
    if run.spend():
        return True
    run.manifest.set_dir(PurePosixPath(path).parent.as_posix(), RELIST)
    return False


def guarded(run: Run, path: str, handle: Callable[[], None]) -> None:
    """Handle one file; one that a person deleted meanwhile is left for the next call (which
    sees it deleted), one the system cannot read now is reported: neither fails the call."""
    try:
        handle()
    except Gone:
        return
    except OSError as exc:
        run.problem(path, f"cannot be read now ({exc.strerror or exc})")


def all_files(base: Path, run: Run) -> list[str]:
    """Every file of the type folders (links among them too: reading them reports them); a
    linked type folder is reported, never listed."""
    root_dir = base / MEMORIES_DIR
    if (root := lstat(root_dir)) is None:
        return []
    if not stat_kind.S_ISDIR(root.st_mode):
        run.problem(MEMORIES_DIR, LINKED_ROOT)
        return []
    found: list[str] = []
    with os.scandir(root_dir) as folders:
        for folder in folders:
            if folder.name.startswith("."):
                continue
            if folder.is_symlink():
                run.problem(f"{MEMORIES_DIR}/{folder.name}", LINKED)
                continue
            if not is_type_folder(folder):
                continue
            with os.scandir(folder.path) as entries:
                found += [
                    f"{MEMORIES_DIR}/{folder.name}/{e.name}"
                    for e in entries
                    if is_memory_file(e.name) and not e.is_dir(follow_symlinks=False)
                ]
    return sorted(found)


def any_file_on_disk(base: Path) -> bool:
    """Whether a type folder of ``memories/`` holds a memory file (stops at the first one)."""
    root_dir = base / MEMORIES_DIR
    root = lstat(root_dir)
    if root is None or not stat_kind.S_ISDIR(root.st_mode):
        return False
    with contextlib.suppress(OSError), os.scandir(root_dir) as folders:
        for folder in folders:
            if not is_type_folder(folder):
                continue
            with os.scandir(folder.path) as entries:
                if any(is_memory_file(e.name) for e in entries):
                    return True
    return False


def linked_folders(base: Path) -> list[tuple[str, str]]:
    """``memories/`` or its type folders when they are symlinks or no folders (a few entries)."""
    root_dir = base / MEMORIES_DIR
    root = lstat(root_dir)
    if root is None:
        return []
    if not stat_kind.S_ISDIR(root.st_mode):
        return [(MEMORIES_DIR, LINKED_ROOT)]
    linked: list[tuple[str, str]] = []
    with contextlib.suppress(OSError), os.scandir(root_dir) as entries:
        for entry in entries:
            if entry.is_symlink() and not entry.name.startswith("."):
                linked.append((f"{MEMORIES_DIR}/{entry.name}", LINKED))
    return sorted(linked)
