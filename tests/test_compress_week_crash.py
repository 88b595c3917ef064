"""A weekly compression killed between writing the summary and moving the dailies loses nothing:
a rerun ends in the very state an uninterrupted run leaves."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from mcp import Client

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # server processes killed half-way

# The dependency-free embedder: this test is about files and order, not about vectors.
FAST = {"DOKORO_EMBEDDER": "hashing"}

WEEK = {
    "2026-06-01-09h00-monday-session-auth.md": (
        "---\ntags:\n  scope: auth\n---\n# auth\n\n## Summary\nJWT sessions.\n\n- [x] Replaced the cookie store\n"
        "- decision: use short-lived JWTs\n- insight: refresh tokens need their own table\n"
    ),
    "2026-06-03-11h00-wednesday-session-search.md": "# search\n\n- [x] Added the trigram index\nchose: FTS5 first\n",
    "2026-06-05-16h00-friday-session-release.md": "# release\n\n- [x] Tagged 2.3\n- [x] Wrote the notes\n",
}

# The child compresses week 2026-W23 and dies (os._exit: no cleanup, no finally) at the chosen point.
_CHILD = textwrap.dedent(
    """
    import os, shutil, sys
    from pathlib import Path
    from dokoro_store import Store
    from dokoro_store.retrieval import RetrievalConfig
    from dokoro_store.procedural.analytics import compress

    where = sys.argv[2]
    if where == "before-move":
        compress.WeekCompressor._move_dailies = lambda self, files, target: os._exit(17)
    else:  # "mid-move": after the first daily file has moved
        original = shutil.move
        def move_once(source, target):
            original(source, target)
            os._exit(17)
        compress.shutil.move = move_once

    with Store.open(Path(sys.argv[1]), retrieval=RetrievalConfig(embedder="hashing")) as store:
        store.analytics.compress_week(23, 2026)
    """
)


def _week(store: Path) -> dict[str, bytes]:
    (store / "daily").mkdir(parents=True)
    for name, text in WEEK.items():
        (store / "daily" / name).write_text(text, encoding="utf-8")
    return {name: (store / "daily" / name).read_bytes() for name in WEEK}


def _state(store: Path) -> dict[str, bytes]:
    """Every file a compression is about: the summary, the archive, what is left in daily/."""
    files = {}
    for folder in ("retrospective", "archive", "daily"):
        for path in sorted((store / folder).rglob("*.md")) if (store / folder).exists() else []:
            files[path.relative_to(store).as_posix()] = path.read_bytes()
    return files


@pytest.mark.parametrize("where", ["before-move", "mid-move"])
async def test_a_compression_killed_half_way_is_finished_by_a_rerun(tmp_path: Path, server_params, where: str):
    reference = tmp_path / "reference" / "dokoro"
    _week(reference)
    async with Client(server_params("dokoro_analytics", reference, tmp_path, **FAST)) as client:
        done = await client.call_tool("dokoro_compress_week", {"weekNumber": 23, "year": 2026})
        assert not done.is_error, done.content
    expected = _state(reference)

    store = tmp_path / "crashed" / "dokoro"
    original = _week(store)
    crashed = subprocess.run([sys.executable, "-c", _CHILD, str(store), where], capture_output=True, text=True)
    assert crashed.returncode == 17, crashed.stderr

    summary = store / "retrospective" / "weekly" / "2026-W23-consolidated.md"
    assert summary.read_bytes() == expected["retrospective/weekly/2026-W23-consolidated.md"]  # written first
    left = {p.name for p in (store / "daily").iterdir()}
    assert left == set(WEEK) if where == "before-move" else len(left) == len(WEEK) - 1

    async with Client(server_params("dokoro_analytics", store, tmp_path, **FAST)) as client:
        rerun = await client.call_tool("dokoro_compress_week", {"weekNumber": 23, "year": 2026})
        assert not rerun.is_error, rerun.content
        assert "Week Compressed" in rerun.content[0].text

    assert _state(store) == expected
    archive = store / "archive" / "daily" / "2026-W23"
    assert {p.name: p.read_bytes() for p in archive.iterdir()} == original
    text = summary.read_text(encoding="utf-8")
    assert "- use short-lived JWTs" in text and "- FTS5 first" in text
    assert "1. Replaced the cookie store" in text
