"""The tracking and analytics servers as an agent meets them: real processes over stdio, each
serving exactly its own tools (the task timers in both)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # two server processes

TRACKING = {
    *("dokoro_issue_add", "dokoro_issue_list", "dokoro_issue_work", "dokoro_issue_complete"),
    *("dokoro_feature_add", "dokoro_feature_list", "dokoro_feature_start", "dokoro_feature_plan"),
    *("dokoro_weekly_add_item", "dokoro_weekly_sync", "dokoro_weekly_status"),
    *("dokoro_backup_verify", "dokoro_restore_items", "dokoro_health_check"),
    *("dokoro_task_track", "dokoro_task_list"),
}
ANALYTICS = {
    *("dokoro_feature_status", "dokoro_pending", "dokoro_velocity_insights", "dokoro_timeline"),
    *("dokoro_test_checklist", "dokoro_compress_week", "dokoro_task_track", "dokoro_task_list"),
}


def _script(name: str, store: Path, cwd: Path, agent: str, base: StdioServerParameters) -> StdioServerParameters:
    """The installed console script itself (``dokoro-tracking``), not ``python -m``."""
    env = dict(base.env or {})
    env["DOKORO_AGENT_ID"] = agent
    return StdioServerParameters(command=str(Path(sys.executable).with_name(name)), args=[], env=env, cwd=str(cwd))


async def test_dokoro_tracking_and_dokoro_analytics_each_serve_exactly_their_tools(tmp_path: Path, server_params):
    store = tmp_path / "dokoro"
    base = server_params("dokoro_tracking", store, tmp_path)
    async with Client(_script("dokoro-tracking", store, tmp_path, "alice", base)) as tracking:
        assert {t.name for t in (await tracking.list_tools()).tools} == TRACKING
        added = await tracking.call_tool("dokoro_issue_add", {"title": "Crash on save", "priority": "high"})
        assert not added.is_error, added.content
        issue = added.structured_content["item"]["id"]
        timer = await tracking.call_tool("dokoro_task_track", {"action": "start", "title": "Fix the crash"})
        assert timer.structured_content["task"]["agent_id"] == "alice"

    async with Client(_script("dokoro-analytics", store, tmp_path, "alice", base)) as analytics:
        assert {t.name for t in (await analytics.list_tools()).tools} == ANALYTICS
        pending = await analytics.call_tool("dokoro_pending", {})
        assert {i["id"] for i in pending.structured_content["items"]} >= {issue}
        tasks = await analytics.call_tool("dokoro_task_list", {})
        assert [t["title"] for t in tasks.structured_content["active"]] == ["Fix the crash"]

    async with Client(server_params("dokoro_analytics", store, tmp_path)) as by_module:
        assert len((await by_module.list_tools()).tools) == 8
    assert (store / "tracking" / "issues" / "pending").is_dir()
