"""The shared server over streamable HTTP: tokens, agents, and refusals."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from dokoro_store import Store
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

pytestmark = pytest.mark.anyio


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _env(store: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    env["DOKORO_PATH"] = str(store)
    return env


@pytest.fixture
def tokens(tmp_path: Path) -> dict[str, str]:
    with Store.open(tmp_path / "dokoro") as store:
        return {name: store.tokens.create(name).token for name in ("alice", "bob")}


@pytest.fixture
def server(tmp_path: Path, tokens: dict[str, str]) -> Iterator[str]:
    port = _free_port()
    args = ["-m", "dokoro", "serve", "--http", "--host", "127.0.0.1", "--port", str(port), "--require-token"]
    proc = subprocess.Popen(
        [sys.executable, *args], env=_env(tmp_path / "dokoro"), stderr=subprocess.PIPE, text=True
    )
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


async def _wait_until_listening(url: str) -> None:
    with anyio.fail_after(30):
        while True:
            try:
                async with httpx2.AsyncClient() as http:
                    await http.get(url.removesuffix("/mcp") + "/")
                return
            except httpx2.TransportError:
                await anyio.sleep(0.05)


@asynccontextmanager
async def _client(url: str, token: str) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


async def test_a_request_without_a_token_is_refused(server: str) -> None:
    await _wait_until_listening(server)
    async with httpx2.AsyncClient() as http:
        response = await http.post(server, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        wrong = await http.post(
            server,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Authorization": "Bearer dkr_not_a_token"},
        )
    assert response.status_code == 401
    assert wrong.status_code == 401


async def test_the_right_token_works_and_claims_under_its_agent(server: str, tokens: dict[str, str]) -> None:
    await _wait_until_listening(server)
    async with _client(server, tokens["alice"]) as alice:
        claim = await alice.call_tool("dokoro_workspace_claim", {"task": "shared server"})
        assert not claim.is_error, claim.content
        assert claim.structured_content["agent_id"] == "alice"
        added = await alice.call_tool("dokoro_question_add", {"question": "who asked?"})
        assert not added.is_error


async def test_an_agent_cannot_act_as_another(server: str, tokens: dict[str, str]) -> None:
    await _wait_until_listening(server)
    async with _client(server, tokens["alice"]) as alice:
        assert not (await alice.call_tool("dokoro_workspace_claim", {"task": "alice's work"})).is_error
    async with _client(server, tokens["bob"]) as bob:
        dump = await bob.call_tool("dokoro_workspace_dump", {"reason": "not mine", "keepActive": False})
        assert dump.is_error
        assert "held by alice" in dump.content[0].text and "you are bob" in dump.content[0].text
        status = await bob.call_tool("dokoro_workspace_status", {})
        assert status.structured_content["locked_by"] == "alice"


async def test_a_remote_agent_cannot_make_the_server_read_its_disk(server: str, tokens: dict[str, str]) -> None:
    await _wait_until_listening(server)
    async with _client(server, tokens["bob"]) as bob:
        copied = await bob.call_tool("dokoro_save_file", {"source": "/etc/hostname"})
        assert copied.is_error and "not accepted on the shared HTTP server" in copied.content[0].text
        image = await bob.call_tool("dokoro_save_image", {"source": "/etc/hostname"})
        assert image.is_error and "base64" in image.content[0].text
        init = await bob.call_tool("dokoro_init", {"projectPath": "/tmp"})
        assert init.is_error and "projectPath is not accepted" in init.content[0].text


@pytest.mark.parametrize("host", ["127.0.0.2", "0.0.0.0"])
def test_any_host_but_the_protected_loopback_names_needs_tokens(tmp_path: Path, host: str) -> None:
    args = ["-m", "dokoro", "serve", "--http", "--host", host, "--port", str(_free_port())]
    done = subprocess.run(
        [sys.executable, *args], env=_env(tmp_path / "dokoro"), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert "dokoro token create" in done.stderr
