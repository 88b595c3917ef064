"""One embedder per store: a core server, the CLI's full reindex, and the core server again agree."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client

pytestmark = pytest.mark.anyio


def _text(outcome: object) -> str:
    assert not getattr(outcome, "is_error", False), outcome
    return "\n".join(getattr(block, "text", "") for block in getattr(outcome, "content", []))


async def _remember_and_recall(client: Client, title: str, body: str, query: str) -> str:
    _text(await client.call_tool("dokoro_remember", {"type": "fact", "title": title, "body": body}))
    return _text(await client.call_tool("dokoro_recall", {"query": query}))


@pytest.mark.parametrize("core_embedder", [None, "static"])
async def test_core_then_a_cli_full_reindex_then_core_again_still_remembers_and_recalls(
    tmp_path: Path, server_params, core_embedder: str | None
) -> None:
    store = tmp_path / "dokoro"
    env = {"DOKORO_EMBEDDER": core_embedder} if core_embedder else {}
    async with Client(server_params("dokoro_core", store, tmp_path, **env)) as core:
        recalled = await _remember_and_recall(
            core, "Session cookies", "The login keeps its session in an HttpOnly cookie.", "where is the session kept"
        )
        assert "Session cookies" in recalled

    from dokoro_store import Store

    with Store.open(store) as opened:
        stamp = opened.docs.stamp()[0]
    assert stamp is not None and (core_embedder is None or stamp.startswith(f"{core_embedder}:"))

    # The CLI (the unified package, every embedder installed, DOKORO_EMBEDDER left on auto).
    cli_env = {k: v for k, v in os.environ.items() if k != "DOKORO_EMBEDDER"}
    done = subprocess.run(
        [sys.executable, "-m", "dokoro", "reindex", "--full", "--path", str(store)],
        capture_output=True,
        text=True,
        env=cli_env,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"stamp {stamp}" in done.stdout  # the store's embedder, not the CLI's default

    async with Client(server_params("dokoro_core", store, tmp_path, **env)) as core:
        recalled = await _remember_and_recall(
            core, "Token refresh", "Access tokens are refreshed five minutes before expiry.", "session cookie login"
        )
        assert "Session cookies" in recalled and "cannot be compared" not in recalled
        found = _text(await core.call_tool("dokoro_recall", {"query": "when are tokens refreshed"}))
        assert "Token refresh" in found
