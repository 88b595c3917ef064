"""Tool schemas kept between starts: a cached server lists exactly what a freshly built one lists,
validates arguments the same way, and rebuilds what changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dokoro_server import DokoroSettings, build_server
from dokoro_server.registration import ToolCache
from mcp import Client

pytestmark = pytest.mark.anyio


def _server(tmp_path: Path, registers, cache: ToolCache | None = None):
    mcp = build_server(DokoroSettings(path=tmp_path / "dokoro", auto_feedback=False), name="kit", cwd=tmp_path)
    if cache is None:
        for register in registers:
            register(mcp)
        return mcp
    with cache.active():
        for register in registers:
            register(mcp)
    cache.save()
    return mcp


async def _listing(mcp) -> list[dict]:
    return [tool.model_dump() for tool in await mcp.list_tools()]


def _cached_names(mcp) -> set[str]:
    return mcp.unbuilt_tools()


async def test_a_second_start_lists_the_same_tools_from_the_cache(tmp_path: Path, registers) -> None:
    path = tmp_path / "cache" / "tools-kit.json"
    built = _server(tmp_path, registers)
    first = _server(tmp_path, registers, ToolCache(path))
    second = _server(tmp_path, registers, ToolCache(path))

    assert _cached_names(first) == set()  # nothing cached yet: built, then written
    assert path.exists()
    assert _cached_names(second) == {"kit_claim", "kit_tool_calls", "kit_echo"}
    assert await _listing(second) == await _listing(built)


async def test_a_cached_tool_validates_and_answers_like_a_built_one(tmp_path: Path, registers) -> None:
    path = tmp_path / "cache" / "tools-kit.json"
    _server(tmp_path, registers, ToolCache(path))
    cached = _server(tmp_path, registers, ToolCache(path))

    async with Client(cached) as client:
        echoed = await client.call_tool("kit_echo", {"text": "hi"})
        refused = await client.call_tool("kit_echo", {"text": "far too long for it"})
        unknown = await client.call_tool("kit_echo", {"text": "hi", "txt": "hi"})
        nul = await client.call_tool("kit_echo", {"text": "h\x00i"})

    assert not echoed.is_error and echoed.structured_content == {"text": "hi"}
    assert refused.is_error and "at most 10 characters" in refused.content[0].text
    assert unknown.is_error and unknown.content[0].text.startswith(
        "kit_echo has no argument 'txt' (did you mean text?)"
    )
    assert nul.is_error and "argument text contains a NUL character" in nul.content[0].text


async def test_an_entry_whose_sources_changed_is_rebuilt(tmp_path: Path, registers) -> None:
    path = tmp_path / "cache" / "tools-kit.json"
    _server(tmp_path, registers, ToolCache(path))
    data = json.loads(path.read_text(encoding="utf-8"))
    (entry,) = data["modules"].values()
    good = entry["fingerprint"]
    entry["fingerprint"] = "sources changed since"
    entry["tools"]["kit_echo"]["inputSchema"] = {"stale": True}
    path.write_text(json.dumps(data), encoding="utf-8")

    rebuilt = _server(tmp_path, registers, ToolCache(path))

    assert _cached_names(rebuilt) == set()
    (entry,) = json.loads(path.read_text(encoding="utf-8"))["modules"].values()
    assert entry["fingerprint"] == good
    assert entry["tools"]["kit_echo"]["inputSchema"] != {"stale": True}


@pytest.mark.parametrize("content", ["", "{not json", '{"version": 0, "modules": {}}', "[]"])
async def test_an_unreadable_cache_is_ignored_and_rewritten(tmp_path: Path, registers, content: str) -> None:
    path = tmp_path / "cache" / "tools-kit.json"
    path.parent.mkdir()
    path.write_text(content, encoding="utf-8")

    served = _server(tmp_path, registers, ToolCache(path))

    assert len(await _listing(served)) == 3
    assert json.loads(path.read_text(encoding="utf-8"))["version"] == ToolCache.VERSION


async def test_a_cache_that_cannot_be_written_costs_nothing_but_time(tmp_path: Path, registers) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder", encoding="utf-8")

    served = _server(tmp_path, registers, ToolCache(blocked / "tools-kit.json"))

    assert len(await _listing(served)) == 3
