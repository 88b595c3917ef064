"""Safe file writes: atomic replacement and cross-process serialisation.

A workspace file is only ever replaced whole (temp file in the same folder, fsync, rename),
so a reader sees the old or the new text, never half of one. Read-modify-write of a shared
file (current.md, session.json) runs under a sidecar file lock so two server processes never
lose each other's lines.

Every read and write names the folder it must stay in (``within``): the path is resolved through
:func:`dokoro_store.walls.containment.inside` first, so no symlink or ``../`` takes a write or a read out of
the store. ``within=None`` is for paths the person chose outside any store (an export file).

Every text file the store writes is redacted of secrets on the way (:mod:`dokoro_store.walls.secrets`):
a rendering, a copied asset, a backup, an appended log line. Binary data is written as is.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock

from dokoro_store.walls.containment import inside, lock_file
from dokoro_store.walls.secrets import redact

__all__ = ["append_text", "atomic_write_bytes", "atomic_write_text", "file_lock", "read_text_or_none", "redact_bytes"]

_LOCK_TIMEOUT_S = 30.0


def redact_bytes(data: bytes) -> bytes:
    """``data`` with secrets redacted when it is text (UTF-8 without NUL); binary data unchanged."""
    if b"\0" in data:
        return data
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    cleaned = redact(text)
    return cleaned.text.encode("utf-8") if cleaned.kinds else data


def atomic_write_bytes(path: Path, data: bytes, *, within: Path | None) -> None:
    """Replace ``path`` with ``data`` atomically (temp + fsync + rename), inside ``within``.

    The folder is resolved (a symlinked folder on the way must stay inside ``within``); the file
    itself, when it is a symlink, is replaced by the new file, never written through. Text is
    redacted of secrets first (:func:`redact_bytes`).
    """
    data = redact_bytes(data)
    if within is not None:
        inside(within, path.parent, what="folder")
    if not path.parent.is_dir():
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


def append_text(path: Path, text: str, *, within: Path | None) -> None:
    """Append ``text`` to ``path`` (inside ``within``, created when missing) and fsync it, secrets
    redacted. For append-only logs (one JSON line per event); the caller serialises writers with
    :func:`file_lock`."""
    if within is not None:
        inside(within, path)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(redact(text).text)
        handle.flush()
        os.fsync(handle.fileno())


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
def file_lock(lock_dir: Path, name: str, *, within: Path, timeout: float = _LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold the cross-process lock ``<lock_dir>/<name>.lock`` for the duration of the block;
    ``filelock.Timeout`` when another process held it for ``timeout`` seconds.

    The lock file is placed by :func:`dokoro_store.walls.containment.lock_file`: ``name`` a plain name, the
    lock folder inside ``within`` (the store folder) once resolved, the lock file no symlink.
    """
    path = lock_file(within, lock_dir, name)
    with FileLock(str(path), timeout=timeout):
        yield
