"""Safe file writes: atomic replacement and cross-process serialisation.

A workspace file is only ever replaced whole (temp file in the same folder, fsync, rename),
so a reader sees the old or the new text, never half of one. Read-modify-write of a shared
file (current.md, session.json) runs under a sidecar file lock so two server processes never
lose each other's lines.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock

from dokoro_store.secrets import redact

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


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically (temp + fsync + rename).

    Every file the store writes goes through here, so a text file (a copied asset, a rendering, a
    backup) is redacted of secrets first (:mod:`dokoro_store.secrets`); binary data is written as is.
    """
    data = redact_bytes(data)
    path.parent.mkdir(parents=True, exist_ok=True)
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


def atomic_write_text(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` atomically, secrets redacted."""
    atomic_write_bytes(path, text.encode("utf-8"))


def append_text(path: Path, text: str) -> None:
    """Append ``text`` to ``path`` (created when missing) and fsync it, secrets redacted.

    For append-only logs (one JSON line per event); the caller serialises writers with
    :func:`file_lock`.
    """
    with path.open("a", encoding="utf-8") as handle:
        handle.write(redact(text).text)
        handle.flush()
        os.fsync(handle.fileno())


def read_text_or_none(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


@contextlib.contextmanager
def file_lock(lock_dir: Path, name: str) -> Iterator[None]:
    """Hold the cross-process lock ``<lock_dir>/<name>.lock`` for the duration of the block."""
    lock_dir.mkdir(parents=True, exist_ok=True)
    with FileLock(str(lock_dir / f"{name}.lock"), timeout=_LOCK_TIMEOUT_S):
        yield
