"""Two agents, each its own server process, tracking tasks at the same time on one store."""

from __future__ import annotations

import itertools
from pathlib import Path

import anyio
import pytest
from mcp import Client

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

ROUNDS = 3
ACTIVE_BEFORE_PAUSE = 0.10
PAUSED = 0.15
ACTIVE_AFTER_PAUSE = 0.05


async def test_two_agent_processes_keep_separate_correct_durations(tmp_path: Path, server_params) -> None:
    store = tmp_path / "dokoro"
    errors: list[str] = []
    ids: dict[str, list[str]] = {"alice": [], "bob": []}

    async def agent(name: str, module: str) -> None:
        async with Client(server_params(module, store, tmp_path, DOKORO_AGENT_ID=name)) as client:
            for round_ in range(ROUNDS):
                steps = [
                    ("start", {"title": f"{name}-task-{round_}"}, ACTIVE_BEFORE_PAUSE),
                    ("pause", {"reason": f"{name}-pause-{round_}"}, PAUSED),
                    ("resume", {}, ACTIVE_AFTER_PAUSE),
                    ("iterate", {}, 0),
                    ("complete", {}, 0),
                ]
                for action, extra, wait in steps:
                    outcome = await client.call_tool("dokoro_task_track", {"action": action, **extra})
                    if outcome.is_error:
                        errors.append(f"{name} {action}: {outcome.content[0].text}")
                    elif action == "start":
                        ids[name].append(outcome.structured_content["task"]["id"])
                    await anyio.sleep(wait)

    # One agent on the tracking server, the other on the analytics server: one implementation.
    async with anyio.create_task_group() as group:
        group.start_soon(agent, "alice", "dokoro_tracking")
        group.start_soon(agent, "bob", "dokoro_analytics")

    assert errors == []
    from dokoro_store import Store
    from dokoro_store.models import TaskTimer
    from sqlmodel import select

    with Store.open(store) as opened, opened.db.read() as session:
        rows = list(session.exec(select(TaskTimer)))
    assert len(rows) == 2 * ROUNDS
    for row in rows:
        owner = row.title.split("-task-")[0]
        assert row.agent_id == owner and row.id in ids[owner]
        assert row.status == "completed" and row.iterations == 2
        # Only this agent's own pause, and it was counted: never as active time, never lost.
        assert [p["reason"] for p in row.pauses] == [row.title.replace("-task-", "-pause-")]
        assert row.pause_seconds >= PAUSED
        assert row.active_seconds >= ACTIVE_BEFORE_PAUSE + ACTIVE_AFTER_PAUSE
        assert row.ended_at is not None
        wall = (row.ended_at - row.started_at).total_seconds()
        assert row.active_seconds + row.pause_seconds == pytest.approx(wall, abs=1e-6)
    for name in ("alice", "bob"):
        mine = sorted((r for r in rows if r.agent_id == name), key=lambda r: r.started_at)
        # One agent runs one task at a time: each starts after the previous one ended.
        for earlier, later in itertools.pairwise(mine):
            assert earlier.ended_at is not None and later.started_at >= earlier.ended_at
