"""Reading a client's transcript: Claude Code's JSONL, one event per line, streamed and bounded.

A transcript is a file a person's tools write (and a person can edit): hostile input. It is never
read whole. Lines come one at a time from a byte offset, each at most :data:`MAX_LINE_BYTES` long
(a longer one, a pasted log or an image, is skipped without being held in memory), each call at
most ``max_bytes`` and until a deadline. A line that is not a JSON object, or has no shape this
reader knows, is skipped and counted, never fatal. The file is opened without following a
symbolic link.

The format (checked against Claude Code 2.1's transcripts, ``~/.claude/projects/<project>/
<session>.jsonl``): every line carries ``type`` (``user``, ``assistant``, ``summary``, ``system``,
and bookkeeping types such as ``file-history-snapshot``), ``uuid``, ``parentUuid``,
``isSidechain``, ``timestamp`` (ISO 8601), ``sessionId`` and ``cwd``; a ``user`` or ``assistant``
line holds ``message.content``, a string or a list of blocks (``text``, ``tool_use`` with
``name`` and ``input``, ``tool_result`` with ``content`` and ``is_error``, ``thinking``); a
``summary`` line holds ``summary`` and ``leafUuid``.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from dokoro_store.errors import InvalidArgumentError

__all__ = [
    "MAX_LINE_BYTES",
    "Line",
    "ReadBounds",
    "first_line_digest",
    "open_transcript",
    "parse_time",
    "peek_cwd",
    "read_lines",
]

# A line longer than this is not a conversation turn a person reads back (a pasted log, an image's
# base64, a whole file a tool returned): skipped without being held in memory.
MAX_LINE_BYTES = 1024 * 1024
_CHUNK = 64 * 1024
_HEAD_BYTES = 64 * 1024  # the first line's bytes digested to recognise a replaced transcript


@dataclass(frozen=True)
class ReadBounds:
    """How much one call reads: bytes, and a moment (``time.monotonic()``) it stops at."""

    max_bytes: int = 64 * 1024 * 1024
    deadline: float | None = None

    def over(self, read: int) -> bool:
        return read >= self.max_bytes or (self.deadline is not None and time.monotonic() >= self.deadline)


@dataclass(frozen=True)
class Line:
    """One line of a transcript: where it starts and ends (bytes), and its event, or why not."""

    start: int
    end: int
    event: dict[str, Any] | None
    problem: str | None = None  # "too long", "not JSON", "not an object"


def open_transcript(path: Path) -> BinaryIO:
    """The transcript opened for reading: a regular file, never through a symbolic link."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if path.is_symlink():
            raise InvalidArgumentError(f"{path} is a symbolic link: name the transcript file itself") from None
        raise InvalidArgumentError(f"cannot read the transcript {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise InvalidArgumentError(f"{path} is not a regular file: name a transcript (*.jsonl)")
    return os.fdopen(fd, "rb")


def first_line_digest(handle: BinaryIO) -> str | None:
    """sha256 of the file's first line (at most 64 KiB of it); None for an empty file."""
    handle.seek(0)
    head = handle.readline(_HEAD_BYTES)
    return hashlib.sha256(head).hexdigest() if head else None


def peek_cwd(handle: BinaryIO, lines: int = 50) -> str | None:
    """The ``cwd`` the transcript's first events name (where the session ran), if any."""
    for line in read_lines(handle, 0, ReadBounds(max_bytes=4 * 1024 * 1024)):
        cwd = line.event.get("cwd") if line.event is not None else None
        if isinstance(cwd, str) and cwd.startswith("/") and len(cwd) <= 4096:
            return cwd
        lines -= 1
        if lines <= 0:
            break
    return None


def read_lines(handle: BinaryIO, start: int, bounds: ReadBounds) -> Iterator[Line]:
    """The lines from byte ``start``, within ``bounds``; a last line without its newline (the
    client still writing it) is left for the next read."""
    handle.seek(start)
    offset = start
    while not bounds.over(offset - start):
        raw = handle.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            end = _skip_rest(handle, offset + len(raw))
            if end is None:
                return  # an unfinished long line: read again once the client has finished it
            yield Line(offset, end, None, "too long")
            offset = end
            continue
        if not raw.endswith(b"\n"):
            return  # unfinished
        end = offset + len(raw)
        yield _parse(offset, end, raw)
        offset = end


def _skip_rest(handle: BinaryIO, position: int) -> int | None:
    """Read past the rest of an over-long line in chunks; the offset after its newline, or None
    when the file ends first."""
    while True:
        chunk = handle.read(_CHUNK)
        if not chunk:
            return None
        newline = chunk.find(b"\n")
        if newline >= 0:
            end = position + newline + 1
            handle.seek(end)
            return end
        position += len(chunk)


def _parse(start: int, end: int, raw: bytes) -> Line:
    text = raw.strip()
    if not text:
        return Line(start, end, None, "blank")
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return Line(start, end, None, "not JSON")
    if not isinstance(value, dict):
        return Line(start, end, None, "not an object")
    return Line(start, end, value)


def parse_time(value: object) -> datetime | None:
    """A line's ``timestamp`` (ISO 8601, ``Z`` or an offset) as UTC; None when absent or unreadable."""
    if not isinstance(value, str) or not 10 <= len(value) <= 40:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)
