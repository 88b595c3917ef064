"""A real server process fed raw, malformed request lines over stdio answers every one of them.

The SDK's stdio transport drops a line it cannot parse without a reply (the client then waits
for its own timeout); ``dokoro_server.stdio`` answers it with a JSON-RPC error carrying the
request's id when it can be recovered, and the session goes on.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

pytestmark = pytest.mark.anyio

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}


class RawSession:
    def __init__(self, process: Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.stdin = process.stdin
        self.stdout = BufferedByteReceiveStream(process.stdout)

    async def send(self, line: str | bytes) -> None:
        await self.stdin.send((line.encode() if isinstance(line, str) else line) + b"\n")

    async def receive(self) -> dict[str, Any]:
        with anyio.fail_after(60):  # a generous bound: the server starts and opens its store meanwhile
            reply = json.loads(await self.stdout.receive_until(b"\n", 10_000_000))
        assert isinstance(reply, dict)
        return reply


async def open_session(tmp_path: Path) -> tuple[Process, RawSession]:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    env.update(DOKORO_PATH=str(tmp_path / "dokoro"), PYTHONUNBUFFERED="1")
    process = await anyio.open_process([sys.executable, "-m", "dokoro"], env=env, cwd=tmp_path, stderr=None)
    session = RawSession(process)
    await session.send(json.dumps(INITIALIZE))
    assert (await session.receive())["id"] == 0
    await session.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    return process, session


def call(request_id: int, name: str, arguments: dict[str, Any]) -> str:
    params = {"name": name, "arguments": arguments}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})


async def test_every_malformed_line_gets_a_json_rpc_error_and_the_session_goes_on(tmp_path: Path) -> None:
    process, session = await open_session(tmp_path)
    async with process:
        # JavaScript cut an emoji in half: a lone surrogate escape, which strict JSON parsers refuse.
        await session.send(call(1, "dokoro_recall", {"query": "deploy \\ud83d"}).replace("\\\\ud83d", "\\ud83d"))
        reply = await session.receive()
        assert reply["id"] == 1
        assert reply["error"]["code"] == -32700
        assert "lone UTF-16 surrogate" in reply["error"]["message"]

        await session.send('{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": ')
        reply = await session.receive()
        assert reply["error"]["code"] == -32700
        assert reply["id"] is None  # the id cannot be read out of a truncated line
        assert "one JSON-RPC 2.0 message per line" in reply["error"]["message"]

        await session.send(b"\xff\xfe not even UTF-8")
        assert (await session.receive())["error"]["code"] == -32700

        await session.send(json.dumps({"jsonrpc": "2.0", "id": 3}))
        reply = await session.receive()
        assert (reply["id"], reply["error"]["code"]) == (3, -32600)
        assert '"method"' in reply["error"]["message"]

        await session.send(json.dumps([{"jsonrpc": "2.0", "id": 4, "method": "ping"}]))
        reply = await session.receive()
        assert reply["error"]["code"] == -32600
        assert "batches are not supported" in reply["error"]["message"]

        await session.send(json.dumps({"jsonrpc": "2.0", "id": 5, "method": 7}))
        assert (await session.receive())["id"] == 5

        await session.send("")  # a blank line between messages is not answered

        # A broken response from the client is never answered: the next reply is the ping's.
        await session.send(json.dumps({"jsonrpc": "2.0", "id": 9, "result": "not an object"}))
        await session.send(json.dumps({"jsonrpc": "2.0", "id": 6, "method": "ping"}))
        assert await session.receive() == {"jsonrpc": "2.0", "id": 6, "result": {}}

        await session.send(call(7, "dokoro_recall", {"query": "deploy \U0001f680"}))
        reply = await session.receive()
        assert reply["id"] == 7
        assert reply["result"]["isError"] is False

        await session.stdin.aclose()
        with anyio.fail_after(60):
            assert await process.wait() == 0
