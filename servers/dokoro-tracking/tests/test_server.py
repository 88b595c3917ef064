"""The tracking server on its own: exactly its sixteen tools."""

from __future__ import annotations

import pytest
from dokoro_server import DokoroSettings
from dokoro_tracking.server import create_server
from mcp import Client

pytestmark = pytest.mark.anyio

TRACKING_TOOLS = {
    *("dokoro_issue_add", "dokoro_issue_list", "dokoro_issue_work", "dokoro_issue_complete"),
    *("dokoro_feature_add", "dokoro_feature_list", "dokoro_feature_start", "dokoro_feature_plan"),
    *("dokoro_weekly_add_item", "dokoro_weekly_sync", "dokoro_weekly_status"),
    *("dokoro_backup_verify", "dokoro_restore_items", "dokoro_health_check"),
    *("dokoro_task_track", "dokoro_task_list"),
}


async def test_the_tracking_server_serves_its_sixteen_tools(tmp_path):
    server = create_server(DokoroSettings(path=tmp_path / "dokoro", auto_feedback=False), cwd=tmp_path)
    async with Client(server) as client:
        tools = (await client.list_tools()).tools
    assert sorted(t.name for t in tools) == sorted(TRACKING_TOOLS)
    assert len(tools) == 16
    by_name = {t.name: t for t in tools}
    assert by_name["dokoro_issue_list"].annotations.read_only_hint is True
    assert by_name["dokoro_issue_add"].output_schema["properties"]["item"]
