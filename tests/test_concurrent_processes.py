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


_CLAIMER = """
import sys
from pathlib import Path
from dokoro_store import Store, WorkspaceLockedError
with Store.open(Path(sys.argv[1])) as store:
    try:
        claimed = store.working.workspace.claim("take over", agent_id=sys.argv[2])
    except WorkspaceLockedError:
        print("refused")
    else:
        print("took-over-from", claimed.took_over)
"""


def test_only_one_of_many_processes_takes_over_a_stale_workspace_lock(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    store = tmp_path / "dokoro"
    (store / ".mcp").mkdir(parents=True)
    (store / ".mcp" / "workspace.lock").write_text(
        json.dumps(
            {
                "agent_id": "crashed-agent",
                "session_id": "s-old",
                "acquired_at": "2020-01-01T00:00:00Z",
                "expires_at": "2020-01-01T00:30:00Z",
                "last_heartbeat": "2020-01-01T00:00:00Z",
                "pid": 1,
            }
        ),
        encoding="utf-8",
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", _CLAIMER, str(store), f"agent-{n}"], stdout=subprocess.PIPE, text=True)
        for n in range(AGENTS)
    ]
    outputs = [proc.communicate(timeout=120)[0].strip() for proc in procs]
    assert all(proc.returncode == 0 for proc in procs)
    winners = [out for out in outputs if out.startswith("took-over-from")]
    assert winners == ["took-over-from crashed-agent"]
    assert outputs.count("refused") == AGENTS - 1
    holder = json.loads((store / ".mcp" / "workspace.lock").read_text(encoding="utf-8"))["agent_id"]
    assert holder in {f"agent-{n}" for n in range(AGENTS)}
