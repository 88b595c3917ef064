"""How the server packages compose: each serves its own tools alone, the unified server serves the
union exactly once, and the bridge tools appear only with ``DOKORO_ENABLE_TACHIBOT_BRIDGE=true``.

The server packages are discovered from ``servers/*/pyproject.toml``, so a package added later is
held to the same rules without anyone editing this file.
"""

from __future__ import annotations

import collections
import importlib
import json
import logging
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from dokoro.server import BRIDGE_PACKAGES, TOOL_PACKAGES, UNIFIED_TOOLS, create_unified_server
from dokoro_server import DokoroSettings, build_server
from dokoro_server.task_tools import TASK_TOOL_NAMES
from mcp import Client
from mcp.client.stdio import StdioServerParameters

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[1]
BRIDGE_TOOLS = {"bridge_index_research", "bridge_import_plan", "bridge_get_context"}
ALLOWED_DEPENDENCIES = {"dokoro-store", "dokoro-server"}


@dataclass(frozen=True)
class ServerPackage:
    dist: str  # dokoro-core
    package: str  # dokoro_core
    scripts: dict[str, str]  # console script -> "module:function"
    dependencies: tuple[str, ...]

    @property
    def module(self) -> str:
        return f"{self.package}.server"


def _requirement_name(requirement: str) -> str:
    name = requirement
    for stop in "[<>=!~; ":
        name = name.split(stop, 1)[0]
    return name.strip().lower()


def server_packages() -> list[ServerPackage]:
    found = []
    for pyproject in sorted(ROOT.glob("servers/*/pyproject.toml")):
        project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        found.append(
            ServerPackage(
                dist=project["name"],
                package=project["name"].replace("-", "_"),
                scripts=dict(project.get("scripts", {})),
                dependencies=tuple(project.get("dependencies", ())),
            )
        )
    return found


PACKAGES = server_packages()
IDS = [p.dist for p in PACKAGES]


def _settings(tmp_path: Path, **overrides: Any) -> DokoroSettings:
    return DokoroSettings(path=tmp_path / "dokoro", auto_feedback=False, **overrides)


async def _tool_names(server: Any) -> list[str]:
    async with Client(server) as client:
        return [tool.name for tool in (await client.list_tools()).tools]


async def _features(server: Any) -> list[str]:
    """Everything else a server offers, one entry each: resources, resource templates, prompts."""
    async with Client(server) as client:
        return (
            [f"resource {r.uri}" for r in (await client.list_resources()).resources]
            + [f"template {t.uri_template}" for t in (await client.list_resource_templates()).resource_templates]
            + [f"prompt {p.name}" for p in (await client.list_prompts()).prompts]
        )


async def _registered(module: str, tmp_path: Path) -> list[str]:
    """The tools ``module.register`` adds to an empty server."""
    alone = build_server(_settings(tmp_path), name="alone", cwd=tmp_path)
    importlib.import_module(module).register(alone)
    return await _tool_names(alone)


async def _registered_features(module: str, tmp_path: Path) -> list[str]:
    """The resources, templates and prompts ``module.register`` adds to an empty server."""
    alone = build_server(_settings(tmp_path), name="alone", cwd=tmp_path)
    importlib.import_module(module).register(alone)
    return await _features(alone)


def test_the_discovery_sees_every_known_server_package() -> None:
    assert {"dokoro-core", "dokoro-search", "dokoro-planning", "dokoro-bridge"} <= set(IDS)


def test_every_server_package_is_in_the_unified_launcher() -> None:
    # A package missing here would be a server whose tools the unified server silently lacks.
    assert {p.module for p in PACKAGES} == set(TOOL_PACKAGES) | set(BRIDGE_PACKAGES)
    assert BRIDGE_PACKAGES == ("dokoro_bridge.server",)
    assert not set(TOOL_PACKAGES) & set(BRIDGE_PACKAGES)


@pytest.mark.parametrize("package", PACKAGES, ids=IDS)
def test_a_server_package_depends_only_on_the_store_and_the_kit(package: ServerPackage) -> None:
    ours = {_requirement_name(r) for r in package.dependencies if _requirement_name(r).startswith("dokoro")}
    assert ours == ALLOWED_DEPENDENCIES
    # The script is the server module's main, or the package's __main__ (which prepares the store
    # while the SDK imports, then serves that server module: dokoro_server.entry).
    (script,) = package.scripts.items()
    package_name = package.module.rsplit(".", 1)[0]
    assert script[0] == package.dist
    assert script[1] in {f"{package.module}:main", f"{package_name}.__main__:main"}
    module_name, function = script[1].split(":")
    assert callable(getattr(importlib.import_module(module_name), function))


def test_the_unified_package_depends_on_every_server_package() -> None:
    project = tomllib.loads((ROOT / "packages/dokoro/pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert {p.dist for p in PACKAGES} <= {_requirement_name(r) for r in project["dependencies"]}


@pytest.mark.parametrize("package", PACKAGES, ids=IDS)
async def test_a_server_alone_serves_exactly_what_its_register_adds(package: ServerPackage, tmp_path: Path) -> None:
    module = importlib.import_module(package.module)
    async with Client(module.create_server(_settings(tmp_path), cwd=tmp_path)) as client:
        assert client.server_info is not None and client.server_info.name == package.dist
        served = [tool.name for tool in (await client.list_tools()).tools]

    assert served
    assert len(served) == len(set(served))
    assert sorted(served) == sorted(await _registered(package.module, tmp_path))
    offered = await _features(module.create_server(_settings(tmp_path), cwd=tmp_path))
    assert len(offered) == len(set(offered))
    assert sorted(offered) == sorted(await _registered_features(package.module, tmp_path))


async def test_no_tool_name_is_in_two_packages(tmp_path: Path) -> None:
    # The SDK keeps the first of two same-named tools and drops the other silently, so each
    # package registers on a server of its own here. The one deliberate exception, as in the
    # reference: the kit's task timer tools, one implementation served by tracking and analytics.
    owners: dict[str, list[str]] = collections.defaultdict(list)
    for package in PACKAGES:
        for name in await _registered(package.module, tmp_path):
            owners[name].append(package.dist)

    shared = {name: dists for name, dists in owners.items() if len(dists) > 1}
    assert shared == {name: ["dokoro-analytics", "dokoro-tracking"] for name in TASK_TOOL_NAMES}


async def test_no_resource_template_or_prompt_is_in_two_packages(tmp_path: Path) -> None:
    owners: dict[str, list[str]] = collections.defaultdict(list)
    for package in PACKAGES:
        for feature in await _registered_features(package.module, tmp_path):
            owners[feature].append(package.dist)

    assert {feature: dists for feature, dists in owners.items() if len(dists) > 1} == {}


async def test_the_unified_server_offers_every_resource_and_prompt_exactly_once(tmp_path: Path) -> None:
    for flag in (False, True):
        settings = _settings(tmp_path, enable_tachibot_bridge=flag)
        unified = await _features(create_unified_server(settings, cwd=tmp_path))
        union: list[str] = []
        for module in TOOL_PACKAGES + (BRIDGE_PACKAGES if flag else ()):
            union += await _registered_features(module, tmp_path)

        assert len(unified) == len(set(unified))
        assert sorted(unified) == sorted(union)
    assert sorted(unified) == [
        "prompt end-session",
        "prompt onboard-project",
        "prompt plan-feature",
        "prompt resume-session",
        "resource dokoro://briefing",
        "resource dokoro://current",
        "resource dokoro://sessions/recent",
        "template dokoro://plans/{id}",
    ]


async def test_the_unified_server_serves_the_union_of_the_packages_exactly_once(tmp_path: Path) -> None:
    unified = await _tool_names(create_unified_server(_settings(tmp_path), cwd=tmp_path))
    union: set[str] = set()
    for module in (*TOOL_PACKAGES, *UNIFIED_TOOLS):
        union |= set(await _registered(module, tmp_path))

    assert len(unified) == len(set(unified))
    assert sorted(unified) == sorted(union)
    assert "test_connection" in unified
    assert not BRIDGE_TOOLS & set(unified)


async def test_with_the_flag_the_unified_server_adds_the_three_bridge_tools(tmp_path: Path) -> None:
    plain = await _tool_names(create_unified_server(_settings(tmp_path), cwd=tmp_path))
    bridged = await _tool_names(create_unified_server(_settings(tmp_path, enable_tachibot_bridge=True), cwd=tmp_path))

    assert len(bridged) == len(set(bridged))
    assert sorted(bridged) == sorted([*plain, *BRIDGE_TOOLS])


async def test_the_search_server_adds_the_bridge_tools_only_with_the_flag(tmp_path: Path) -> None:
    from dokoro_search.server import create_server

    plain = await _tool_names(create_server(_settings(tmp_path), cwd=tmp_path))
    bridged = await _tool_names(create_server(_settings(tmp_path, enable_tachibot_bridge=True), cwd=tmp_path))

    assert not BRIDGE_TOOLS & set(plain)
    assert sorted(bridged) == sorted([*plain, *BRIDGE_TOOLS])


async def test_the_search_server_with_the_flag_but_no_bridge_installed_says_so_and_serves_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import importlib.metadata

    from dokoro_search.server import create_server

    monkeypatch.setattr(importlib.metadata, "entry_points", lambda **_kw: [])
    plain = await _tool_names(create_server(_settings(tmp_path), cwd=tmp_path))
    with caplog.at_level(logging.WARNING, logger="dokoro"):
        flagged = await _tool_names(create_server(_settings(tmp_path, enable_tachibot_bridge=True), cwd=tmp_path))

    assert flagged == plain
    assert "uvx --with dokoro-bridge dokoro-search" in caplog.text


def _script(name: str) -> str:
    script = Path(sys.executable).parent / name
    assert script.is_file(), f"console script {name} is not installed in {script.parent}; run uv sync --all-packages"
    return str(script)


async def _served_over_stdio(command: str, tmp_path: Path, **env: str) -> list[str]:
    environment = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "DOKORO_PATH": str(tmp_path / "dokoro"), **env}
    params = StdioServerParameters(command=command, args=[], env=environment, cwd=str(tmp_path))
    async with Client(params) as client:
        return [tool.name for tool in (await client.list_tools()).tools]


@pytest.mark.parametrize("package", PACKAGES, ids=IDS)
async def test_a_console_script_serves_its_package_over_stdio(package: ServerPackage, tmp_path: Path) -> None:
    # dokoro-bridge, like every server, serves the bridge tools only with the flag.
    flag = {"DOKORO_ENABLE_TACHIBOT_BRIDGE": "true"} if package.dist == "dokoro-bridge" else {}
    served = await _served_over_stdio(_script(package.dist), tmp_path, **flag)

    assert sorted(served) == sorted(await _registered(package.module, tmp_path))


def test_the_bridge_server_without_the_flag_says_so_and_creates_nothing(tmp_path: Path) -> None:
    environment = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "DOKORO_PATH": str(tmp_path / "dokoro")}
    refused = subprocess.run(
        [_script("dokoro-bridge")],
        env=environment,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )

    assert refused.returncode == 2
    assert "DOKORO_ENABLE_TACHIBOT_BRIDGE=true" in refused.stderr and "Traceback" not in refused.stderr
    assert not (tmp_path / "dokoro").exists()


@pytest.mark.parametrize("script", ["dokoro-search", "dokoro"])
async def test_the_environment_flag_turns_the_bridge_on_over_stdio(script: str, tmp_path: Path) -> None:
    # Without the flag, the console-script test above and the end-to-end tests cover both servers.
    served = await _served_over_stdio(_script(script), tmp_path, DOKORO_ENABLE_TACHIBOT_BRIDGE="true")

    assert set(served) >= BRIDGE_TOOLS
    assert len(served) == len(set(served))


_HEAVY_PROBE = """
import json, sys, tempfile, anyio
from pathlib import Path
from mcp import Client
from dokoro_server import DokoroSettings
from dokoro.server import create_unified_server

async def main():
    tmp = Path(tempfile.mkdtemp())
    server = create_unified_server(DokoroSettings(path=tmp / "dokoro", enable_tachibot_bridge=True), cwd=tmp)
    async with Client(server) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
    assert "bridge_get_context" in names
    print(json.dumps(sorted(m for m in ("lancedb", "pyarrow", "scipy", "numpy", "model2vec", "onnxruntime")
                            if m in sys.modules)))

anyio.run(main)
"""


def test_serving_the_bridge_tools_imports_no_heavy_library() -> None:
    done = subprocess.run([sys.executable, "-c", _HEAVY_PROBE], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


def test_every_prompt_lists_the_arguments_the_sdk_derives_from_its_function(tmp_path: Path) -> None:
    # The kit lists prompts from their signatures and builds the SDK's prompt at first use (start-up
    # time); what it lists must be what the SDK's own derivation says.
    from mcp.server.mcpserver.prompts.base import Prompt

    unified = create_unified_server(_settings(tmp_path), cwd=tmp_path)
    listed = unified._prompt_manager.list_prompts()

    assert listed
    for prompt in listed:
        derived = Prompt.from_function(prompt.fn, name=prompt.name)
        assert prompt.arguments == derived.arguments, prompt.name
