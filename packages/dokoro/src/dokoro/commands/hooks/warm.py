"""The warm hook server: one process per store that keeps the store open and the model loaded, so a
hook costs a process start and a socket round trip instead of opening the store each time.

A hook process is short-lived by nature (Claude Code starts one per event), and opening a store —
SQLAlchemy, the tables, the services, the embedding model for a prompt — costs most of a second of
CPU, every prompt. So the first hook of a project starts this server in the background (a session
of its own, no terminal); the next hooks find its socket, send their event and print its answer.
Without a live server (or with ``DOKORO_HOOK_WARM=0``) a hook answers in its own process, as before.

- The socket lives in the user's runtime folder (``$XDG_RUNTIME_DIR/dokoro``, else
  ``<tmp>/dokoro-<uid>``, created 0700 and refused when another user owns it or it is a link),
  named after the store, its database URL, the embedder and this build of dokoro: another store, or
  a newer dokoro, gets a server of its own (the old one leaves when idle).
- One request at a time, one JSON line each way; the server journals each run in the store, as an
  in-process hook does.
- It leaves after ``--idle`` seconds without a request (default 30 minutes), when its store folder
  is gone, or on SIGTERM; a second server for the same socket leaves at once (a lock file).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["IDLE_SECONDS", "ask", "serve", "socket_path", "spawn", "starting", "wait_for"]

IDLE_SECONDS = 1800.0
_MAX_MESSAGE = 16 * 1024 * 1024
_PROTOCOL = 1


def _build() -> str:
    """This build of dokoro: the version and the modules the answers come from (a changed checkout
    gets a new server)."""
    from dokoro import __version__

    here = Path(__file__).resolve()
    parts = [__version__]
    for path in (here, here.with_name("run.py")):
        with contextlib.suppress(OSError):
            info = path.stat()
            parts.append(f"{info.st_mtime_ns}:{info.st_size}")
    return "/".join(parts)


def _runtime_folder() -> Path | None:
    """The user's private folder for sockets, or None when it is not private."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    folder = Path(base) / "dokoro" if base else Path(tempfile.gettempdir()) / f"dokoro-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        info = folder.lstat()
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        return None  # a link, another user's, or open to others: no socket of ours goes there
    return folder


def socket_path(root: Path, url: str | None, embedder: str) -> Path | None:
    """Where the warm server of this store listens (None: no private folder for it)."""
    folder = _runtime_folder()
    if folder is None:
        return None
    key = hashlib.sha256(f"{root}\0{url or ''}\0{embedder}\0{_build()}".encode()).hexdigest()[:24]
    return folder / f"hooks-{key}.sock"


def _read_line(conn: socket.socket) -> bytes:
    data = bytearray()
    while not data.endswith(b"\n"):
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
        if len(data) > _MAX_MESSAGE:
            raise ValueError("message too long")
    return bytes(data)


def ask(path: Path, request: dict[str, Any], timeout: float) -> dict[str, Any] | None:
    """The server's answer to ``request``; None when no server answers (not there, refused, too slow
    or a reply that is not one)."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(max(0.05, timeout))
            conn.connect(str(path))
            conn.sendall(json.dumps({**request, "protocol": _PROTOCOL, "build": _build()}).encode() + b"\n")
            reply = json.loads(_read_line(conn) or b"null")
    except (OSError, ValueError):
        return None
    return reply if isinstance(reply, dict) else None


def starting(path: Path) -> bool:
    """Whether a server of this socket holds its lock (starting or serving)."""
    import fcntl

    try:
        fd = os.open(path.with_suffix(".lock"), os.O_RDWR | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing drops a lock this probe took
    return False


def wait_for(path: Path, seconds: float) -> bool:
    """Wait up to ``seconds`` for a starting server's socket (the store opening, the model loading)."""
    deadline = time.monotonic() + seconds
    while not path.exists():
        if time.monotonic() >= deadline or not starting(path):
            return False
        time.sleep(0.05)
    return True


def spawn(root: Path, url: str | None) -> None:
    """Start the warm server of this store in the background (it leaves at once if one runs)."""
    env = dict(os.environ)
    if url:
        env["DOKORO_DATABASE_URL"] = url
    argv = [sys.executable, "-m", "dokoro", "hook", "warm", "--path", str(root)]
    with contextlib.suppress(ValueError):  # DOKORO_HOOK_WARM_IDLE: seconds before the server leaves
        idle = float(os.environ.get("DOKORO_HOOK_WARM_IDLE", ""))
        if 1 <= idle <= 86_400:
            argv += ["--idle", str(idle)]
    with contextlib.suppress(OSError):
        subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
            cwd=str(root),
            env=env,
        )


def serve(
    root: Path,
    url: str | None,
    embedder: str,
    *,
    open_store: Callable[[Path, str | None], Any],
    answer: Callable[[Any, dict[str, Any]], dict[str, Any]],
    idle: float = IDLE_SECONDS,
) -> int:
    """Serve the hooks of the store at ``root`` until idle for ``idle`` seconds: ``open_store`` opens
    it as a hook does, ``answer`` answers one request (both from :mod:`.run`)."""
    import fcntl

    path = socket_path(root, url, embedder)
    if path is None:
        return 1
    lock = os.open(path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(lock)
        return 0  # another server of this store is starting or running
    os.ftruncate(lock, 0)
    os.write(lock, f"{os.getpid()}\n".encode())  # who serves (dokoro hooks status, the bench)
    store = open_store(root, url)
    with contextlib.suppress(Exception):  # the model loaded now, not on the first prompt (best effort)
        model = store.embedder.get()
        if model is not None:
            model.embed(["warm"], query=True)
    stopping = False

    def stop(_signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o077)
    try:
        server.bind(str(path))
    finally:
        os.umask(old)
    server.listen(16)
    server.settimeout(1.0)
    build = _build()
    last = time.monotonic()
    try:
        while not stopping and time.monotonic() - last < idle and root.is_dir():
            try:
                conn, _addr = server.accept()
            except TimeoutError:
                continue
            except OSError:
                break
            with conn:
                conn.settimeout(60)
                retire = _handle(conn, store, build, answer)
            last = time.monotonic()
            if retire:
                break
    finally:
        with contextlib.suppress(OSError):
            path.unlink()
        server.close()
        store.close(finish=True)
        os.close(lock)
    return 0


def _handle(
    conn: socket.socket, store: Any, build: str, answer: Callable[[Any, dict[str, Any]], dict[str, Any]]
) -> bool:
    """Answer one request; True when this server should leave (a client of another build)."""
    try:
        request = json.loads(_read_line(conn) or b"null")
    except (OSError, ValueError):
        return False
    if not isinstance(request, dict):
        return False
    if request.get("protocol") != _PROTOCOL or request.get("build") != build:
        with contextlib.suppress(OSError):
            conn.sendall(b'{"retired": true}\n')
        return True
    reply = answer(store, request)
    with contextlib.suppress(OSError):
        conn.sendall(json.dumps(reply, ensure_ascii=False).encode() + b"\n")
    # A failure may be the server's own state going stale (the store re-embedded, its database
    # moved): it leaves, and the next hook starts a fresh one.
    return "error" in reply
