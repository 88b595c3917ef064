"""Two agents on two machines' worth of server processes, sharing one PostgreSQL memory."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # two agents' server processes at once


async def test_a_memory_written_by_one_agent_is_recalled_by_the_other(
    tmp_path: Path, postgres_url: str, server_params
) -> None:
    # Each developer has a workspace folder of their own; the database is the team's.
    alice_params = server_params(
        "dokoro", tmp_path / "alice" / "dokoro", tmp_path, DOKORO_DATABASE_URL=postgres_url, DOKORO_AGENT_ID="alice"
    )
    bob_params = server_params(
        "dokoro", tmp_path / "bob" / "dokoro", tmp_path, DOKORO_DATABASE_URL=postgres_url, DOKORO_AGENT_ID="bob"
    )
    async with Client(alice_params) as alice, Client(bob_params) as bob:
        added = await alice.call_tool(
            "dokoro_session_summary_add",
            {"session_id": "alice-monday", "ai_model": "claude", "summary": "Moved sessions to signed cookies"},
        )
        assert not added.is_error, added.content
        asked = await alice.call_tool(
            "dokoro_question_add", {"question": "Do we rotate the cookie key?", "priority": "blocker"}
        )
        assert not asked.is_error

        recall = await bob.call_tool("dokoro_session_recall", {"query": "signed cookies"})
        assert "session=alice-monday" in recall.content[0].text
        check = await bob.call_tool("dokoro_question_check", {})
        assert check.structured_content["blocked"] is True
        assert "Do we rotate the cookie key?" in check.content[0].text

        answered = await bob.call_tool("dokoro_question_answer", {"answer": "Yes, weekly."})
        assert not answered.is_error
        listed = await alice.call_tool("dokoro_question_list", {"status": "answered"})
        assert "Yes, weekly." in listed.content[0].text

    # Nothing was written to a local database in either folder: the team database holds it all.
    for who in ("alice", "bob"):
        assert not (tmp_path / who / "dokoro" / ".dokoro" / "db" / "dokoro.sqlite").exists()


async def test_a_server_pointed_at_an_unreachable_database_exits_with_the_reason(tmp_path: Path) -> None:
    # A client initialises and calls a tool: the store opens in the background, its failure is
    # the tool's answer (with the fix), then stderr says why and the process exits with status 2.
    # (A server whose stdin closes before any client spoke opens nothing and exits at once.)
    import json
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    env.update(DOKORO_PATH=str(tmp_path / "dokoro"), DOKORO_DATABASE_URL="postgresql://x:pw@127.0.0.1:9/team")
    client = {"name": "raw", "version": "1"}
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client},
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "dokoro_workspace_status", "arguments": {}},
        },
    ]
    for module in ("dokoro", "dokoro_core"):
        command = [sys.executable, "-m", module]
        with subprocess.Popen(
            command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        ) as server:
            assert server.stdin is not None and server.stdout is not None and server.stderr is not None
            server.stdin.write("".join(json.dumps(line) + "\n" for line in lines))
            server.stdin.flush()
            answer: dict[str, object] = {}
            for raw in server.stdout:  # bounded by the process's own exit
                message = json.loads(raw)
                if message.get("id") == 2:
                    answer = message
                    break
            server.stdin.close()
            returncode = server.wait(timeout=60)
            stderr = server.stderr.read()
        result = answer["result"]
        assert isinstance(result, dict) and result["isError"] is True
        assert "DOKORO_DATABASE_URL" in json.dumps(result)
        assert returncode == 2, stderr
        assert "127.0.0.1:9" in stderr and "DOKORO_DATABASE_URL" in stderr
        assert "Traceback" not in stderr


async def test_a_file_claim_by_one_agent_is_seen_and_respected_by_the_other(
    tmp_path: Path, postgres_url: str, server_params
) -> None:
    (tmp_path / "auth").mkdir()
    params = {
        who: server_params(
            "dokoro", tmp_path / who / "dokoro", tmp_path, DOKORO_DATABASE_URL=postgres_url, DOKORO_AGENT_ID=who
        )
        for who in ("alice", "bob")
    }
    async with Client(params["alice"]) as alice, Client(params["bob"]) as bob:
        claimed = await alice.call_tool(
            "dokoro_file_claim", {"paths": ["auth/session.ts"], "intent": "cookie sessions", "ttl_seconds": 600}
        )
        assert claimed.structured_content["claimed"] is True

        listed = await bob.call_tool("dokoro_claim_list", {})
        (claim,) = listed.structured_content["claims"]
        assert (claim["path"], claim["agent_id"], claim["intent"]) == ("auth/session.ts", "alice", "cookie sessions")

        refused = await bob.call_tool("dokoro_file_claim", {"paths": ["auth/session.ts", "auth/token.ts"]})
        assert not refused.is_error  # a conflict is an answer, not an error
        assert refused.structured_content["claimed"] is False
        statuses = {item["path"]: item["status"] for item in refused.structured_content["report"]}
        assert statuses == {"auth/session.ts": "conflict", "auth/token.ts": "would_acquire"}

        released = await alice.call_tool("dokoro_file_release", {"paths": ["auth/session.ts"]})
        assert not released.is_error
        taken = await bob.call_tool("dokoro_file_claim", {"paths": ["auth/session.ts"]})
        assert taken.structured_content["claimed"] is True
