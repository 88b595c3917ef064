"""The tool counts the README and docs/tools.md state are what ``tools/list`` answers (issue 46,
item 7): a tool added or removed fails this test until the sentences are changed with it."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest
from dokoro_server import DokoroSettings
from mcp import Client

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[1]


async def _listed(package: str, tmp_path: Path, *, bridge: bool = False) -> int:
    settings = DokoroSettings(path=tmp_path / "dokoro", auto_feedback=False, enable_tachibot_bridge=bridge)
    if package == "dokoro":
        from dokoro.server import create_unified_server

        server = create_unified_server(settings, cwd=tmp_path)
    else:
        server = importlib.import_module(f"{package}.server").create_server(settings, cwd=tmp_path)
    async with Client(server) as client:
        return len((await client.list_tools()).tools)


def _stated(path: Path, pattern: str) -> list[int]:
    text = " ".join(path.read_text(encoding="utf-8").split())
    found = re.search(pattern, text)
    assert found, f"{path.name} no longer says {pattern!r}: keep the tool counts in it, or change this test"
    return [int(n) for n in found.groups()]


async def test_the_readme_counts_the_tools_that_tools_list_answers(tmp_path: Path) -> None:
    core, unified, bridged = (
        await _listed("dokoro_core", tmp_path),
        await _listed("dokoro", tmp_path),
        await _listed("dokoro", tmp_path, bridge=True),
    )

    readme = _stated(
        ROOT / "README.md", r"`dokoro-core` serves (\d+) tools .*? `dokoro` serves all (\d+) \((\d+) with the tachibot"
    )
    assert readme == [core, unified, bridged]


async def test_the_tools_reference_counts_the_tools_of_each_server(tmp_path: Path) -> None:
    counts = [
        await _listed("dokoro_core", tmp_path),
        await _listed("dokoro_search", tmp_path),
        await _listed("dokoro_planning", tmp_path),
        await _listed("dokoro_tracking", tmp_path),
        await _listed("dokoro_analytics", tmp_path),
        await _listed("dokoro", tmp_path),
        await _listed("dokoro", tmp_path, bridge=True),
    ]

    stated = _stated(
        ROOT / "docs" / "tools.md",
        r"`dokoro-core` serves (\d+) tools .*? `dokoro-search` serves its (\d+) search tools, `dokoro-planning` the "
        r"(\d+) planning helpers, `dokoro-tracking` its (\d+) tools and `dokoro-analytics` its (\d+) .*? `dokoro` "
        r"serves all (\d+) on one server, .*?\((\d+) with the tachibot bridge\)",
    )
    assert stated == counts
