"""Fixtures shared by the cross-package tests: real server processes over stdio."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, AbstractContextManager, asynccontextmanager, contextmanager
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

ServerParams = Callable[..., StdioServerParameters]
KilledAfter = Callable[[subprocess.Popen[str], int], list[str]]


def _server_params(module: str, store: Path, cwd: Path, **env: str) -> StdioServerParameters:
    environment = _base_env()
    environment.update(DOKORO_PATH=str(store), PYTHONUNBUFFERED="1", **env)
    return StdioServerParameters(command=sys.executable, args=["-m", module], env=environment, cwd=str(cwd))


@pytest.fixture
def server_params() -> ServerParams:
    """Factory: parameters that start ``python -m <module>`` as a real server process over stdio."""
    return _server_params


def _base_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "SYSTEMROOT", "TMPDIR")}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def tokens(tmp_path: Path) -> dict[str, str]:
    """Bearer tokens of agents alice and bob in the store of ``tmp_path/dokoro``."""
    from dokoro_store import Store

    with Store.open(tmp_path / "dokoro") as store:
        return {name: store.tokens.create(name).token for name in ("alice", "bob")}


@pytest.fixture
def http_server(tmp_path: Path, tokens: dict[str, str]) -> Iterator[str]:
    """A real ``dokoro serve --http --require-token`` process; yields its URL once it listens."""
    with _serving_http(tmp_path) as url:
        yield url


@pytest.fixture
def start_http_server() -> Callable[..., AbstractContextManager[str]]:
    """Factory: ``with start_http_server(tmp_path, **env) as url`` runs ``dokoro serve --http
    --require-token`` on ``tmp_path/dokoro`` with ``env`` added (the ``tokens`` fixture's store)."""
    return _serving_http


@contextmanager
def _serving_http(tmp_path: Path, **env: str) -> Iterator[str]:
    port = free_port()
    args = ["-m", "dokoro", "serve", "--http", "--host", "127.0.0.1", "--port", str(port), "--require-token"]
    proc = subprocess.Popen(
        [sys.executable, *args],
        env={**_base_env(), "DOKORO_PATH": str(tmp_path / "dokoro"), **env},
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    try:
        deadline = time.monotonic() + 60
        while True:  # bounded: the port accepts connections once uvicorn is up
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"dokoro serve --http did not start: {proc.communicate()[1]}") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


@asynccontextmanager
async def http_client(url: str, token: str) -> AsyncIterator[Client]:
    """An MCP client of the shared HTTP server, authenticated with ``token``."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


@pytest.fixture
def connect() -> Callable[[str, str], AbstractAsyncContextManager[Client]]:
    """Factory: ``async with connect(url, token) as client`` on the shared HTTP server."""
    return http_client


def _killed_after(process: subprocess.Popen[str], count: int) -> list[str]:
    """Kill a writer (SIGKILL: no cleanup, no step at close) once it printed ``count`` lines, one per
    committed write; the lines it printed."""
    written: list[str] = []
    assert process.stdout is not None
    for line in process.stdout:
        written.append(line.strip())
        if len(written) == count:
            process.send_signal(signal.SIGKILL)
            break
    _out, err = process.communicate(timeout=60)  # reads and closes the pipes
    assert process.returncode == -signal.SIGKILL, err
    return written


@pytest.fixture
def killed_after() -> KilledAfter:
    """``killed_after(process, count)``: SIGKILL a writer process once it committed ``count`` writes."""
    return _killed_after
