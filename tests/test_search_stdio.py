"""The search server as an agent meets it: a real ``dokoro-search`` process over stdio."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

pytestmark = pytest.mark.anyio


async def test_the_search_server_indexes_and_finds_over_stdio(tmp_path: Path, server_params) -> None:
    store = tmp_path / "dokoro"
    (store / "decisions").mkdir(parents=True)
    (store / "decisions" / "adr-3.md").write_text("# ADR 3\nSessions live in Valkey, not in cookies.\n")

    async with Client(server_params("dokoro_search", store, tmp_path)) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"search_universal", "search_status", "dokoro_ambient_context"} <= names

        indexed = await client.call_tool(
            "search_index_content", {"doc_id": "research-1", "content": "Valkey is a Redis fork.", "title": "Valkey"}
        )
        assert not indexed.is_error, indexed.content
        found = await client.call_tool("search_universal", {"query": "where do sessions live"})
        status = await client.call_tool("search_status", {})

    results = found.structured_content["results"]
    assert results[0]["doc_id"] == "adr-3" and results[0]["vector_score"] is not None
    assert {r["doc_id"] for r in results} == {"adr-3", "research-1"}
    assert status.structured_content["indexed_docs"] == 2
