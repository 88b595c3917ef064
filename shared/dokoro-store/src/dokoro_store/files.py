"""Safe file writes: atomic replacement and cross-process serialisation.

A workspace file is only ever replaced whole (temp file in the same folder, fsync, rename),
so a reader sees the old or the new text, never half of one. Read-modify-write of a shared
file (current.md, session.json) runs under a sidecar file lock so two server processes never
lose each other's lines.

Every read and write names the folder it must stay in (``within``): the path is resolved through
:func:`dokoro_store.walls.inside` first, so no symlink or ``../`` takes a write or a read out of
the store. ``within=None`` is for paths the person chose outside any store (an export file).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock

from dokoro_store.walls import inside

__all__ = ["atomic_write_bytes", "atomic_write_text", "file_lock", "read_text_or_none"]

_LOCK_TIMEOUT_S = 30.0


def atomic_write_bytes(path: Path, data: bytes, *, within: Path | None) -> None:
    """Replace ``path`` with ``data`` atomically (temp + fsync + rename), inside ``within``.

    The folder is resolved (a symlinked folder on the way must stay inside ``within``); the file
    itself, when it is a symlink, is replaced by the new file, never written through.
    """
    if within is not None:
        inside(within, path.parent, what="folder")
    path.parent.mkdir(parents=True, exist_ok=True)
    if within is not None:
        inside(within, path.parent, what="folder")  # created now: check what it really is
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp creates 0600; keep the replaced file's mode, or the usual 0644 for a new one.
        try:
            mode = path.stat().st_mode & 0o777
        except FileNotFoundError:
            mode = 0o644
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        Path(tmp).replace(path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            Path(tmp).unlink()
        raise


def atomic_write_text(path: Path, text: str, *, within: Path | None) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), within=within)


def read_text_or_none(path: Path, *, within: Path | None, errors: str = "strict") -> str | None:
    """The text of ``path`` (inside ``within``, symlinks followed only if they stay in), or None
    when there is no such file. ``errors`` is how undecodable bytes are handled (``replace``)."""
    if within is not None:
        inside(within, path)
    try:
        return path.read_text(encoding="utf-8", errors=errors)
    except FileNotFoundError:
        return None


@contextlib.contextmanager
def file_lock(lock_dir: Path, name: str) -> Iterator[None]:
    """Hold the cross-process lock ``<lock_dir>/<name>.lock`` for the duration of the block."""
    lock_dir.mkdir(parents=True, exist_ok=True)
    with FileLock(str(lock_dir / f"{name}.lock"), timeout=_LOCK_TIMEOUT_S):
        yield
