"""The servers as an agent meets them: real processes, real stdio, real files."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("module", ["dokoro_core", "dokoro"])
async def test_an_agent_claims_logs_summarises_recalls_and_dumps_over_stdio(
    tmp_path: Path, module: str, server_params
) -> None:
    store = tmp_path / "dokoro"
    async with Client(server_params(module, store, tmp_path)) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"dokoro_workspace_claim", "dokoro_session_recall", "dokoro_workspace_dump"} <= names

        claim = await client.call_tool("dokoro_workspace_claim", {"task": "Fix the flaky login test"})
        assert not claim.is_error, claim.content
        agent_id = claim.structured_content["agent_id"]

        log = await client.call_tool("dokoro_session_log", {"entry": "root cause: race in session refresh"})
        assert not log.is_error

        added = await client.call_tool(
            "dokoro_session_summary_add",
            {"session_id": "2026-05-19-login", "ai_model": "claude-opus-4-7", "summary": "Fixed race in login"},
        )
        assert added.content[0].text == "summary recorded for session 2026-05-19-login"

        recall = await client.call_tool("dokoro_session_recall", {"query": "login"})
        assert "session=2026-05-19-login model=claude-opus-4-7" in recall.content[0].text
        assert "Fixed race in login" in recall.content[0].text

        dump = await client.call_tool("dokoro_workspace_dump", {"reason": "end of day", "keepActive": False})
        assert not dump.is_error, dump.content
        relative = dump.structured_content["relative"]

    daily = store / relative
    assert daily.parent == store / "daily"
    text = daily.read_text(encoding="utf-8")
    assert "root cause: race in session refresh" in text
    assert f'agent_id: "{agent_id}"' in text
    assert not (store / "current.md").exists()
    assert not (store / ".mcp" / "workspace.lock").exists()


async def test_a_fresh_server_process_recalls_what_an_earlier_one_stored(tmp_path: Path, server_params) -> None:
    store = tmp_path / "dokoro"
    async with Client(server_params("dokoro_core", store, tmp_path)) as monday:
        await monday.call_tool(
            "dokoro_session_summary_add",
            {"session_id": "monday", "ai_model": "m", "summary": "partial fix in auth/session.ts"},
        )
    async with Client(server_params("dokoro_core", store, tmp_path)) as thursday:
        recall = await thursday.call_tool("dokoro_session_recall", {"query": "auth/session"})
        assert "partial fix in auth/session.ts" in recall.content[0].text
