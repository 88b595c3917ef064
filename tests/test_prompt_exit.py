"""A server exits as soon as its client closes stdin, with real processes: it abandons a store still
opening (the opening starts with the process), and leaves the work written behind its writes
marked in the database (the next process completes it) instead of finishing it on the way out.

The Python MCP client waits 2 s for a server to exit and then kills it; these tests bound the
wait far more generously (a loaded machine is slow, not wrong) and assert what the exit did.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from dokoro_store import Store
from dokoro_store.models import Doc
from sqlalchemy import select

EXIT_BOUND_S = 30.0  # a hang, not a slow machine


# dokoro-search with its graph extraction step held back (as if the client left at once).
_SEARCH_HELD_BACK = (
    "import dokoro_store.semantic.graph.indexer as behind; behind.EXTRACT_DELAY = 3600.0; "
    "from dokoro_search.server import main; main()"
)


def _spawn(module: str, store: Path, cwd: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "DOKORO_PATH": str(store), "DOKORO_AUTO_FEEDBACK": "false"}
    env.pop("DOKORO_DATABASE_URL", None)
    command = ["-c", _SEARCH_HELD_BACK] if module == "held-back search" else ["-m", module]
    return subprocess.Popen(
        [sys.executable, *command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=env,
    )


def _send(process: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert process.stdin is not None
    process.stdin.write((json.dumps(message) + "\n").encode())
    process.stdin.flush()


def _answer(process: subprocess.Popen[bytes]) -> dict[str, Any]:
    assert process.stdout is not None
    answer: dict[str, Any] = json.loads(process.stdout.readline())
    return answer


def _handshake(process: subprocess.Popen[bytes], *, list_tools: bool) -> None:
    client = {"name": "exit-test", "version": "1"}
    params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client}
    _send(process, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
    assert "result" in _answer(process)
    _send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    if list_tools:
        _send(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        assert _answer(process)["result"]["tools"]


def _call(process: subprocess.Popen[bytes], name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    _send(process, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": params})
    answer = _answer(process)
    assert answer["result"]["isError"] is False, answer
    return answer


def _close_stdin(process: subprocess.Popen[bytes]) -> tuple[int, str]:
    assert process.stdin is not None
    process.stdin.close()
    try:
        process.wait(timeout=EXIT_BOUND_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail(f"the server was still running {EXIT_BOUND_S:.0f} s after its stdin closed")
    assert process.stdout is not None and process.stderr is not None
    stderr = process.stderr.read().decode()
    process.stdout.close()
    process.stderr.close()
    return process.returncode, stderr


def test_a_server_closed_right_after_its_handshake_exits_cleanly(tmp_path: Path) -> None:
    # The store starts opening at the process's start, while the SDK loads (dokoro_server.entry);
    # a client that goes before listing the tools finds the server gone at once all the same.
    store = tmp_path / "dokoro"
    process = _spawn("dokoro_core", store, tmp_path)
    _handshake(process, list_tools=False)

    status, stderr = _close_stdin(process)

    assert status == 0, stderr
    assert "Traceback" not in stderr
    with Store.open(store) as opened:  # whatever the opening got to, the next process opens the store
        assert opened.episodic.count() == 0


def test_a_server_whose_store_is_still_opening_exits_cleanly(tmp_path: Path) -> None:
    process = _spawn("dokoro_core", tmp_path / "dokoro", tmp_path)
    _handshake(process, list_tools=True)  # the store is opening in the background, or has just opened

    status, stderr = _close_stdin(process)  # at once: the opening is abandoned

    assert status == 0, stderr
    assert "Traceback" not in stderr
    # Whatever the opening got to, the next process opens the store and works.
    with Store.open(tmp_path / "dokoro") as opened:
        assert opened.episodic.count() == 0


def test_the_work_behind_a_write_is_left_marked_and_the_next_process_completes_it(tmp_path: Path) -> None:
    store = tmp_path / "dokoro"
    process = _spawn("held-back search", store, tmp_path)
    _handshake(process, list_tools=True)
    _call(process, "search_index_content", {"doc_id": "svc", "content": "services/api.py uses redis.", "title": "Svc"})

    status, stderr = _close_stdin(process)  # the background extraction has not run

    assert status == 0, stderr
    docs = Doc.__table__  # type: ignore[attr-defined]
    with Store.open(store) as opened:
        with opened.db.read() as session:
            marked = session.execute(select(docs.c.id).where(docs.c.unextracted.is_not(None))).scalars().all()
        assert list(marked) == ["svc"]  # left for later, not extracted on the way out
        assert [hit.name for hit in opened.graph.search("redis").hits] == ["redis"]  # a read completes it
