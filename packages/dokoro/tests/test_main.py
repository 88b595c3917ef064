"""``dokoro`` / ``python -m dokoro``: no arguments serve, any argument goes to the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

_WATCHED = "m.split('.')[0] in ('typer', 'rich', 'textual') or m == 'dokoro.cli'"


def _python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    return done.stdout


def test_importing_the_entry_point_does_not_import_the_cli_libraries() -> None:
    loaded = json.loads(
        _python(f"import json, sys, dokoro.__main__; print(json.dumps(sorted(m for m in sys.modules if {_WATCHED})))")
    )

    assert loaded == []


def test_building_the_served_server_does_not_import_typer() -> None:
    # Everything the no-argument path does before it starts serving. (Rich is not checked
    # here: the MCP SDK's own logging setup loads it whenever it is installed.)
    loaded = json.loads(
        _python(
            "import json, sys, dokoro.server; "
            "from dokoro_server import DokoroSettings; "
            "dokoro.server.create_unified_server(DokoroSettings()); "
            "print(json.dumps(sorted(m for m in sys.modules "
            "if m.split('.')[0] in ('typer', 'textual') or m == 'dokoro.cli')))"
        )
    )

    assert loaded == []


def test_the_command_line_does_not_import_the_browser_until_asked() -> None:
    loaded = json.loads(
        _python("import json, sys, dokoro.cli; print(json.dumps(sorted(m for m in sys.modules if 'textual' in m)))")
    )

    assert loaded == []


def test_python_dash_m_dokoro_with_arguments_runs_the_cli() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "dokoro", "--help"], capture_output=True, text=True, check=False, timeout=120
    )

    assert done.returncode == 0
    assert "demo" in done.stdout


def test_an_unknown_command_fails_with_the_help() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "dokoro", "frobnicate"], capture_output=True, text=True, check=False, timeout=120
    )

    assert done.returncode == 1
    assert "No such command 'frobnicate'" in done.stderr
    assert "Commands:" in done.stderr


@pytest.mark.anyio
async def test_serve_with_path_serves_every_tool_on_that_store(tmp_path: Path) -> None:
    store = tmp_path / "elsewhere"
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "SYSTEMROOT", "TMPDIR")}
    env["DOKORO_PATH"] = str(tmp_path / "not-this-one")
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "dokoro", "serve", "--path", str(store)], env=env, cwd=str(tmp_path)
    )

    async with Client(params) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        claim = await client.call_tool("dokoro_workspace_claim", {"task": "Fix the flaky login test"})

    assert {"dokoro_init", "dokoro_workspace_claim", "dokoro_session_recall"} <= names
    assert not claim.is_error, claim.content
    assert (store / "current.md").is_file()
    assert (store / ".gitignore").read_text(encoding="utf-8").startswith("# Written by dokoro.")  # first start
    assert not (tmp_path / "not-this-one").exists()
