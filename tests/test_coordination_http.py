"""Coordination and feedback on the shared HTTP server: each token acts for its own agent only."""

from __future__ import annotations

import json
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


@pytest.fixture
def tokens(tmp_path: Path) -> dict[str, str]:
    with Store.open(tmp_path / "dokoro") as store:
        return {name: store.tokens.create(name).token for name in ("alice", "bob")}


@pytest.fixture
def server(tmp_path: Path, tokens: dict[str, str]) -> Iterator[str]:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    env["DOKORO_PATH"] = str(tmp_path / "dokoro")
    args = ["-m", "dokoro", "serve", "--http", "--host", "127.0.0.1", "--port", str(port), "--require-token"]
    proc = subprocess.Popen([sys.executable, *args], env=env, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
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


async def test_claims_notes_and_feedback_belong_to_the_tokens_agent(
    server: str, tokens: dict[str, str], tmp_path: Path
) -> None:
    await _wait_until_listening(server)
    async with _client(server, tokens["alice"]) as alice:
        claimed = await alice.call_tool("dokoro_file_claim", {"paths": ["src/app.py"], "intent": "refactor"})
        assert not claimed.is_error and claimed.structured_content["agent_id"] == "alice"
        await alice.call_tool("dokoro_presence_ping", {"current_focus": "app"})

    async with _client(server, tokens["bob"]) as bob:
        release = await bob.call_tool("dokoro_file_release", {"agent_id": "alice", "all": True})
        posing = await bob.call_tool("dokoro_file_claim", {"paths": ["src/app.py"], "agent_id": "alice"})
        conflict = await bob.call_tool("dokoro_file_claim", {"paths": ["src/app.py"]})
        note = await bob.call_tool("dokoro_shared_note_append", {"content": "waiting for app.py"})
        feedback = await bob.call_tool("dokoro_feedback_query", {"agent_id": "bob"})

    assert release.is_error and "authenticated as 'bob' and cannot act as 'alice'" in release.content[0].text
    assert posing.is_error
    assert not conflict.is_error
    holder = json.loads(conflict.content[1].text)["report"][0]["holder"]
    assert (holder["agent_id"], holder["intent"], holder["presence"]) == ("alice", "refactor", "live")
    assert note.content[0].text == "note appended by bob"
    # Capture records each call for the token's agent: bob's two refused calls are failures.
    lines = feedback.content[0].text.splitlines()
    assert any(line.startswith("dokoro_file_release: total=1 success=0 failure=1") for line in lines)
    assert any(line.startswith("dokoro_file_claim: total=2 success=1 failure=1") for line in lines)
