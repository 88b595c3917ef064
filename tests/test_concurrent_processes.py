"""Several agents, each its own server process, writing to one store at once."""

from __future__ import annotations

import re
from pathlib import Path

import anyio
import pytest
from mcp import Client

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

AGENTS = 6
CALLS = 20
TOKENS = 3_000  # 14 rows pass the 40,000-token threshold, so compaction runs again and again


async def test_parallel_server_processes_lose_and_duplicate_nothing(tmp_path: Path, server_params) -> None:
    store = tmp_path / "dokoro"
    async with Client(server_params("dokoro_core", store, tmp_path)) as first:
        claim = await first.call_tool("dokoro_workspace_claim", {"task": "crowded session"})
        assert not claim.is_error

    errors: list[str] = []

    async def agent(number: int) -> None:
        async with Client(server_params("dokoro_core", store, tmp_path, DOKORO_AGENT_ID=f"a{number}")) as client:
            for call in range(CALLS):
                log = await client.call_tool("dokoro_session_log", {"entry": f"<a{number}-line-{call}>"})
                summary = await client.call_tool(
                    "dokoro_session_summary_add",
                    {
                        "session_id": "crowd",
                        "ai_model": f"model-{number}",
                        "summary": f"<a{number}-summary-{call}>",
                        "token_count": TOKENS,
                    },
                )
                errors.extend(r.content[0].text for r in (log, summary) if r.is_error)

    async with anyio.create_task_group() as group:
        for number in range(AGENTS):
            group.start_soon(agent, number)

    assert errors == []
    current = (store / "current.md").read_text(encoding="utf-8")
    for number in range(AGENTS):
        for call in range(CALLS):
            assert current.count(f"<a{number}-line-{call}>") == 1, (number, call)

    from dokoro_store import Store

    with Store.open(store) as opened:
        rows = opened.episodic.recall(session_id="crowd", limit=100)
    text = "\n".join(row.summary for row in rows)
    for number in range(AGENTS):
        for call in range(CALLS):
            assert text.count(f"<a{number}-summary-{call}>") == 1, (number, call)
    # Tokens are conserved through every fold: the compacted row carries the sum of its sources.
    assert sum(row.token_count or 0 for row in rows) == AGENTS * CALLS * TOKENS
    assert any(row.compacted for row in rows)
    assert len(re.findall(r"<a\d+-summary-\d+>", text)) == AGENTS * CALLS
