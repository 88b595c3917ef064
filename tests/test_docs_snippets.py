"""Every `.mcp.json` snippet of the docs starts the servers it promises.

The snippets of ``docs/servers.md`` and the README are parsed out of the markdown; each server's
command is launched from this checkout and asked for its tools over stdio:

- ``uv run --directory /path/to/dokoro <script>`` runs as written, the placeholder replaced by the
  checkout;
- ``uvx [--from D] [--with D]... <script>`` becomes ``uv run --directory <checkout> <script>``
  (the packaging test installs the published form, the wheels, one by one); the distributions it
  names must be packages of this workspace, and the tools expected are those the named
  distributions would really bring (the search server serves the bridge only with ``--with dokoro-bridge``);
- ``/path/to/your/project/dokoro`` becomes a store in ``tmp_path``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "docs" / "servers.md", ROOT / "README.md"]
CLONE = "/path/to/dokoro"
PROJECT_STORE = "/path/to/your/project/dokoro"
BRIDGE_TOOLS = {"bridge_index_research", "bridge_import_plan", "bridge_get_context"}


def _scripts() -> dict[str, str]:
    """Console script -> the workspace distribution that declares it."""
    owners = {}
    for pyproject in ROOT.glob("*/*/pyproject.toml"):
        project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        for script in project.get("scripts", {}):
            owners[script] = project["name"]
    return owners


SCRIPTS = _scripts()


@dataclass(frozen=True)
class Snippet:
    page: str
    number: int  # 1-based among the page's .mcp.json snippets
    servers: dict[str, dict[str, Any]]

    @property
    def id(self) -> str:
        return f"{self.page}#{self.number}"


def snippets() -> list[Snippet]:
    found = []
    for page in PAGES:
        blocks = re.findall(r"```json\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.DOTALL)
        configs = [json.loads(block) for block in blocks if '"mcpServers"' in block]
        found += [Snippet(page.name, i, c["mcpServers"]) for i, c in enumerate(configs, start=1)]
    return found


SNIPPETS = snippets()


def test_the_pages_hold_the_snippets_of_every_setup() -> None:
    by_page = {page.name: [s for s in SNIPPETS if s.page == page.name] for page in PAGES}
    assert len(by_page["servers.md"]) >= 5  # core, core + search, everything, two bridge setups, clone
    assert by_page["README.md"]
    servers_md = [server for s in by_page["servers.md"] for server in s.servers.values()]
    flagged = [server for server in servers_md if server.get("env", {}).get("DOKORO_ENABLE_TACHIBOT_BRIDGE")]
    assert len(flagged) >= 2


@dataclass(frozen=True)
class Launch:
    script: str
    args: list[str]
    installs: frozenset[str]  # the distributions the command brings


def _launch(server: dict[str, Any]) -> Launch:
    command, args = server["command"], list(server["args"])
    if command == "uv":
        assert args[:2] == ["run", "--project"] and args[2] == CLONE, f"a clone snippet runs `uv run --project {CLONE}`"
        script, rest = args[3], args[4:]
        return Launch(script, rest, frozenset(SCRIPTS.values()))  # the clone has every package
    assert command == "uvx", f"snippets use uvx or uv run, not {command!r}"
    # Until the packages are published, uvx finds them among the wheels built in the clone.
    assert args[:2] == ["--find-links", f"{CLONE}/dist"], f"a uvx snippet installs from {CLONE}/dist"
    args = args[2:]
    named: list[str] = []
    while args and args[0] in ("--from", "--with"):
        named.append(re.split(r"[\[<>=!~ ]", args[1])[0])
        args = args[2:]
    script, rest = args[0], args[1:]
    if not any(a == "--from" for a in server["args"]) and script in SCRIPTS:
        named.append(SCRIPTS[script])  # uvx installs the package named like the script
    return Launch(script, rest, frozenset(named))


def _store(value: str, tmp_path: Path) -> str:
    return value.replace(PROJECT_STORE, str(tmp_path / "project" / "dokoro"))


async def _expected(launch: Launch, env: dict[str, str], tmp_path: Path) -> list[str]:
    """The tools this command serves, computed in process from what it would install."""
    import importlib

    from dokoro_server import DokoroSettings

    flag = env.get("DOKORO_ENABLE_TACHIBOT_BRIDGE", "false").lower() in ("1", "true", "yes")
    dist = SCRIPTS[launch.script]
    settings = DokoroSettings(path=tmp_path / "expected", auto_feedback=False, enable_tachibot_bridge=flag)
    if dist == "dokoro":
        from dokoro.server import create_unified_server

        server: Any = create_unified_server(settings, cwd=tmp_path)
    else:
        server = importlib.import_module(f"{dist.replace('-', '_')}.server").create_server(settings, cwd=tmp_path)
    async with Client(server) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
    if dist == "dokoro-search" and "dokoro-bridge" not in launch.installs:
        names = [n for n in names if n not in BRIDGE_TOOLS]  # a real install would not have the bridge
    return names


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[s.id for s in SNIPPETS])
async def test_a_snippet_starts_each_of_its_servers(snippet: Snippet, tmp_path: Path) -> None:
    uv = os.environ.get("UV") or shutil.which("uv")
    assert uv, "the snippet test needs uv"
    stores = set()
    served_by: dict[str, set[str]] = {}
    for name, server in snippet.servers.items():
        launch = _launch(server)
        assert launch.script in SCRIPTS, f"{snippet.id} {name}: no package declares the script {launch.script!r}"
        assert launch.installs <= set(SCRIPTS.values()), f"{snippet.id} {name}: unknown package in {launch.installs}"
        env = {key: _store(value, tmp_path) for key, value in server.get("env", {}).items()}
        # The checkout stands in for the package index: run there, store in the project.
        env.setdefault("DOKORO_PATH", str(tmp_path / "project" / "dokoro"))
        stores.add(env["DOKORO_PATH"])
        environment = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", str(tmp_path)), **env}
        params = StdioServerParameters(
            command=uv,
            args=["run", "--directory", str(ROOT), "--frozen", launch.script, *launch.args],
            env=environment,
            cwd=str(tmp_path),
        )
        async with Client(params) as client:
            served = [tool.name for tool in (await client.list_tools()).tools]

        assert sorted(served) == sorted(await _expected(launch, env, tmp_path)), f"{snippet.id} {name}"
        served_by[name] = set(served)

    assert len(stores) == 1, f"{snippet.id}: every server of one project points at one store"
    names = list(served_by)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            assert not served_by[a] & served_by[b], f"{snippet.id}: {a} and {b} serve the same tools"
    assert Path(stores.pop()).is_dir(), f"{snippet.id}: the servers did not open the project's store"
