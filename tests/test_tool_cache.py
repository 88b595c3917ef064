"""Every server's tools, listed from the schema cache of an earlier start, are exactly the tools
a freshly built server lists (names, descriptions, annotations, input and output schemas)."""

from __future__ import annotations

from pathlib import Path

import pytest
from dokoro.server import registers as unified_registers
from dokoro_core.server import register as core
from dokoro_planning.server import register as planning
from dokoro_search.server import register as search
from dokoro_server import DokoroSettings, build_server
from dokoro_server.registration import ToolCache

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("name", ["core", "search", "planning", "unified"])
async def test_tools_listed_from_the_cache_are_the_tools_built(tmp_path: Path, name: str) -> None:
    settings = DokoroSettings(path=tmp_path / "dokoro")
    registers = {"core": [core], "search": [search], "planning": [planning]}.get(name) or unified_registers(settings)
    cache_path = tmp_path / f"tools-{name}.json"

    def server(cache: ToolCache | None):
        mcp = build_server(settings, name=name, cwd=tmp_path)
        if cache is None:
            for register in registers:
                register(mcp)
            return mcp
        with cache.active():
            for register in registers:
                register(mcp)
        cache.save()
        return mcp

    built = server(None)
    server(ToolCache(cache_path))  # fills the cache
    cached = server(ToolCache(cache_path))

    assert cached.unbuilt_tools() == {tool.name for tool in await built.list_tools()}
    listed = [tool.model_dump() for tool in await cached.list_tools()]
    assert listed == [tool.model_dump() for tool in await built.list_tools()]
    assert len(listed) > 5
