"""The store's walls: no file access leaves the folder it belongs to, symlinks included.

Every read, write and scan of the store's files goes through here (:mod:`dokoro_store.walls.files`
takes the folder as ``within``; :class:`~dokoro_store.paths.StorePaths` resolves through
:func:`inside`; scans walk with :func:`scan`):

- :func:`inside` resolves a path, following every symlink on it, and refuses with
  :class:`~dokoro_store.errors.OutsideStoreError` one whose real target is not under the folder
  (``../`` traversal, an absolute path elsewhere, a symlinked file or folder pointing out).
- :func:`scan` walks a folder without following links: a symlink (file or folder) is skipped with
  a logged warning, and so is anything that is not a regular file (a FIFO would block a reader),
  so a link planted in the store can neither leak a file from outside nor make a tool fail.
- :func:`lock_file` is where a sidecar lock lives (``.mcp/locks/<name>.lock``): a plain name, a
  lock folder inside the store once resolved, and never a symlink as the lock file itself.
- :func:`regular_source` is the rule for files an agent asks the server to read from the project
  (``dokoro_save_file``, ``dokoro_save_image``): inside the project once resolved, and a regular
  file (never a device, FIFO, socket or a file of ``/proc``, ``/sys`` or ``/dev``).
- :func:`read_within` reads a file a person may have planted or replaced (a memory file): opened
  folder by folder from the store's folder without following any link, never blocking on a FIFO,
  a regular file of at most :data:`MAX_FILE_BYTES` (the megabyte a tool call takes);
  :func:`unsafe_on_path` is the same rule before a write: no link, no special file on the way.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import stat
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath

from dokoro_store.errors import InvalidArgumentError, NotFoundError, OutsideStoreError

__all__ = [
    "MAX_FILE_BYTES",
    "UnsafeFile",
    "inside",
    "is_inside",
    "lock_file",
    "plain_file",
    "read_source",
    "read_within",
    "regular_source",
    "scan",
    "unsafe_on_path",
]

log = logging.getLogger("dokoro.store")

_SPECIAL_ROOTS = (Path("/proc"), Path("/sys"), Path("/dev"))

# A lock is named, never pathed: no separator, no leading dot (so neither ``.`` nor ``..``).
_LOCK_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def _resolve(path: Path, what: str) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop, a name too long
        raise OutsideStoreError(
            f"{what} {path} cannot be resolved ({exc}); use a plain path inside the folder"
        ) from None


def is_inside(root: Path, path: Path) -> bool:
    """Whether ``path``'s real target (symlinks followed) is ``root`` or under it."""
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):
        return False


def inside(root: Path, path: Path, *, what: str = "path") -> Path:
    """``path`` resolved (symlinks followed); refused when its real target leaves ``root``."""
    if "\0" in str(path):
        raise InvalidArgumentError(f"{what} contains a NUL character; pass a plain path")
    resolved = _resolve(path, what)
    base = _resolve(root, "folder")
    if not resolved.is_relative_to(base):
        # The link's target is not named: where it leads on the server's disk is none of the caller's business.
        shown = f"{path} (a symlink leading out of it)" if resolved != path.absolute() else str(path)
        raise OutsideStoreError(
            f"{what} {shown} leaves {base}: dokoro reads and writes only inside it, and follows no symlink out. "
            "Use a path inside it, or replace the symlink by a copy of the file."
        )
    return resolved


def lock_file(root: Path, lock_dir: Path, name: str) -> Path:
    """The sidecar lock file ``<lock_dir>/<name>.lock`` of the folder ``root``, its folder created.

    ``name`` is a plain name (letters, digits, ``.``, ``_``, ``-``; no path); the lock folder must
    stay inside ``root`` once resolved (a symlinked ``.mcp`` or ``locks`` folder leading out is
    refused, checked before and after it is created); the lock file must not be a symlink: a lock
    is opened for writing, and it is never opened through a link, wherever the link points.
    """
    if not _LOCK_NAME.fullmatch(name):
        raise InvalidArgumentError(
            f"lock name {name!r} is not a plain name: use letters, digits, '.', '_' or '-' "
            "(no path, no leading dot, at most 100 characters)"
        )
    inside(root, lock_dir, what="lock folder")
    lock_dir.mkdir(parents=True, exist_ok=True)
    folder = inside(root, lock_dir, what="lock folder")  # created now: check what it really is
    path = folder / f"{name}.lock"
    if path.is_symlink():
        raise OutsideStoreError(
            f"lock file {path} is a symlink: dokoro opens no lock through a link. "
            "Remove the symlink; the next call recreates the lock file."
        )
    if path.exists() and not path.is_file():
        raise InvalidArgumentError(
            f"lock file {path} is not a regular file: remove it; the next call recreates the lock file."
        )
    return path


def scan(
    root: Path,
    base: Path,
    *,
    suffix: str = ".md",
    skip_dir: Callable[[str], bool] = lambda name: name.startswith("."),
    skip_file: Callable[[str], bool] = lambda _name: False,
) -> Iterator[Path]:
    """The regular files ending in ``suffix`` under ``base`` (a folder of the store ``root``),
    folders and files sorted by name.

    Links are never followed: a symlinked file or folder is skipped with a warning (its target may
    be outside the store, or loop back into it), and so is a FIFO, socket or device. A ``base``
    that is itself a symlink leading out of ``root`` yields nothing (with a warning).
    """
    if base.is_symlink() or (base.exists() and not is_inside(root, base)):
        log.warning("dokoro: skipped the symlinked folder %s (scans never follow links)", base)
        return
    yield from _scan(base, suffix, skip_dir, skip_file)


def _scan(base: Path, suffix: str, skip_dir: Callable[[str], bool], skip_file: Callable[[str], bool]) -> Iterator[Path]:
    try:
        entries = sorted(os.scandir(base), key=lambda entry: entry.name)
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        log.warning("dokoro: cannot list %s (%s); skipped", base, exc)
        return
    folders: list[Path] = []
    for entry in entries:
        try:
            if entry.is_symlink():
                log.warning("dokoro: skipped the symlink %s (scans never follow links)", entry.path)
                continue
            if entry.is_dir(follow_symlinks=False):
                if not skip_dir(entry.name):
                    folders.append(Path(entry.path))
                continue
            if not entry.name.endswith(suffix) or skip_file(entry.name):
                continue
            if not entry.is_file(follow_symlinks=False):
                log.warning("dokoro: skipped %s: not a regular file", entry.path)
                continue
        except OSError as exc:
            log.warning("dokoro: skipped %s (%s)", entry.path, exc)
            continue
        yield Path(entry.path)
    for folder in folders:
        yield from _scan(folder, suffix, skip_dir, skip_file)


def regular_source(path: Path, project: Path, *, what: str = "source") -> Path:
    """A file an agent asks the server to read: inside ``project`` once every symlink is
    followed, and a regular file; the resolved path."""
    if "\0" in str(path):
        raise InvalidArgumentError(f"{what} contains a NUL character; pass a plain file path")
    resolved = _resolve(path, what)
    if any(resolved.is_relative_to(special) for special in _SPECIAL_ROOTS):
        raise OutsideStoreError(f"{what} {path} is a system file; only files of the project are read")
    if not resolved.is_relative_to(_resolve(project, "project")):
        raise OutsideStoreError(
            f"{what} {path} is outside the project {project}"
            + (" (a symlink leading out of it)" if resolved != path.absolute() else "")
            + ": only files of the project the server was started for are read; copy the file into it first"
        )
    try:
        mode = resolved.stat().st_mode
    except FileNotFoundError:
        raise NotFoundError(f"{what} not found: {path}. Pass an existing file of the project {project}.") from None
    except OSError as exc:
        raise NotFoundError(f"{what} {path} cannot be read ({exc.strerror or exc}).") from None
    if not stat.S_ISREG(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file (a device, FIFO or socket)"
        raise InvalidArgumentError(f"{what} {path} is {kind}; pass a regular file")
    return resolved


def read_source(path: Path, project: Path, *, what: str = "source") -> tuple[Path, bytes]:
    """:func:`regular_source`, then its bytes, read without following a link swapped in since
    (``O_NOFOLLOW``) and without blocking on a FIFO (``O_NONBLOCK``)."""
    resolved = regular_source(path, project, what=what)
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(resolved, flags)
    except OSError as exc:
        raise NotFoundError(f"{what} {path} cannot be read ({exc.strerror or exc}).") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise InvalidArgumentError(f"{what} {path} is not a regular file; pass a regular file")
        return resolved, handle.read()


def plain_file(root: Path, path: Path) -> bool:
    """Whether ``path`` is a regular file of ``root`` that is no symlink (what a scan would yield);
    a symlink is logged and refused."""
    if path.is_symlink():
        log.warning("dokoro: skipped the symlink %s (never followed)", path)
        return False
    return path.is_file() and is_inside(root, path)


# The largest file read from a folder a person edits: the megabyte a tool call's body may be.
MAX_FILE_BYTES = 1_000_000


class UnsafeFile(Exception):
    """A file :func:`read_within` refuses (a link on the way, not a regular file, too big); the
    message says why and what to do."""


def _parts(relative: str) -> tuple[str, ...]:
    path = PurePosixPath(relative)
    if path.is_absolute() or not path.parts or any(part in (".", "..") for part in path.parts) or "\0" in relative:
        raise UnsafeFile(f"{relative!r} is not a plain path inside the folder")
    return path.parts


def read_within(root: Path, relative: str, *, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of ``root/relative``, opened one folder at a time from ``root`` (``O_NOFOLLOW``
    on every folder and on the file, each relative to the one before): a symlink anywhere below
    ``root`` is refused, never followed, and so is a FIFO, socket or device (``O_NONBLOCK``: no
    wait on a FIFO) and a file over ``limit`` bytes (read no further than that). Raises
    :class:`UnsafeFile`; ``FileNotFoundError`` when the file or a folder on the way is gone."""
    parts = _parts(relative)
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    folder_flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | nofollow
    fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))  # the store's folder itself: the person's
    try:
        for depth, part in enumerate(parts[:-1], start=1):
            try:
                inner = os.open(part, folder_flags, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise UnsafeFile(
                        f"{'/'.join(parts[:depth])} is a symlink or not a folder: nothing is read through a link "
                        "(its target may be outside the store); replace it by a real folder"
                    ) from None
                raise
            os.close(fd)
            fd = inner
        try:
            file_fd = os.open(parts[-1], os.O_RDONLY | nofollow | getattr(os, "O_NONBLOCK", 0), dir_fd=fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise UnsafeFile(
                    "a symlink: files are never read through a link (its target may be outside the store); "
                    "replace it by a regular file holding the text"
                ) from None
            raise
    finally:
        os.close(fd)
    with os.fdopen(file_fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file (a FIFO, socket or device)"
            raise UnsafeFile(f"{kind}: only regular files are read")
        data = handle.read(limit + 1) if info.st_size <= limit else b""
        if info.st_size > limit or len(data) > limit:
            size = max(info.st_size, len(data))
            raise UnsafeFile(
                f"{size:,} bytes: files are read up to {limit:,} bytes (what a tool call takes); "
                "shorten it or split it into several files"
            )
        return data


def unsafe_on_path(root: Path, relative: str) -> str | None:
    """Why writing ``root/relative`` would go through a link or over a special file (the first
    folder on the way that is a symlink or no folder, or a target that exists and is not a regular
    file), or None when it is safe. Folders not there yet are safe (they are created)."""
    parts = _parts(relative)
    current = root
    for depth, part in enumerate(parts, start=1):
        current = current / part
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            return None
        last = depth == len(parts)
        if stat.S_ISLNK(info.st_mode):
            what = "the file" if last else "/".join(parts[:depth])
            return f"{what} is a symlink: nothing is written through a link or over it; replace it by a real one"
        if not last and not stat.S_ISDIR(info.st_mode):
            return f"{'/'.join(parts[:depth])} is not a folder"
        if last and not stat.S_ISREG(info.st_mode):
            return "not a regular file: only regular files are written"
    return None
