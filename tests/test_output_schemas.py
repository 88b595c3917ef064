"""Every tool's published output schema is one a client checks cheaply: no references to resolve."""

from __future__ import annotations

from pathlib import Path

import pytest
from dokoro.server import create_unified_server
from dokoro_server import DokoroSettings
from mcp import Client


@pytest.mark.anyio
async def test_every_output_schema_is_inlined(tmp_path: Path) -> None:
    server = create_unified_server(DokoroSettings(path=tmp_path / "dokoro"), cwd=tmp_path)
    async with Client(server) as client:
        tools = (await client.list_tools()).tools

    with_schema = {tool.name: tool.output_schema for tool in tools if tool.output_schema}
    assert "dokoro_session_recall" in with_schema and len(with_schema) > 50
    assert [name for name, schema in with_schema.items() if "$ref" in str(schema)] == []
