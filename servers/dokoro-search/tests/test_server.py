"""The search server alone: its tools, and that it registers on any server."""

from __future__ import annotations

import pytest
from dokoro_search.server import create_server
from dokoro_server import DokoroSettings
from mcp import Client

pytestmark = pytest.mark.anyio

SEARCH_TOOLS = {
    "search_universal",
    "search_reindex",
    "search_index_content",
    "search_status",
    "search_dokoros",
    "list_recent_dokoros",
    "dokoro_ambient_context",
}


async def test_the_search_server_serves_exactly_the_search_tools(tmp_path):
    async with Client(create_server(DokoroSettings(path=tmp_path / "dokoro"), cwd=tmp_path)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}

    assert set(tools) == SEARCH_TOOLS
    assert tools["search_status"].annotations.read_only_hint
    assert not tools["search_reindex"].annotations.read_only_hint
    for tool in tools.values():
        assert tool.description and len(tool.description) > 40
