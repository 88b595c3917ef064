"""The packages as a user meets them: built wheels, installed one server at a time into a fresh
virtual environment, started through their console scripts, asked for their tools over stdio.

``uv build --all-packages`` builds a wheel per workspace member. Each server is then installed
alone with ``uv pip install`` into a new venv: our packages come from the wheels just built (URL
constraints, so nothing of ours can come from a package index), everything else from the registry
at the versions of ``uv.lock`` (so the uv cache serves it and the run stays quick). What is not
declared in a wheel's metadata is therefore missing from its venv, and the server fails to start.

Slow: 2¼ minutes measured on 2 cores shared with other work (load average ~10), most of it server
start-up; run with ``-m slow`` or the full suite.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from email.parser import Parser
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

ROOT = Path(__file__).resolve().parents[1]
BRIDGE_TOOLS = {"bridge_index_research", "bridge_import_plan", "bridge_get_context"}
# What the minimal server must never pull in: each is tens to hundreds of megabytes. (onnxruntime
# is in every server: the default embedder, so every process on one store embeds alike; see
# docs/configuration.md, "One embedder per store".)
NOT_IN_CORE = ("lancedb", "pyarrow", "scipy")


@dataclass(frozen=True)
class Member:
    dist: str
    folder: Path
    project: dict[str, Any]

    @property
    def wheel_name(self) -> str:
        return self.dist.replace("-", "_")


# Development only: no wheel is built (not a workspace member), no user installs it.
DEV_ONLY = ("dokoro-testkit",)


def members() -> list[Member]:
    found = []
    for pyproject in sorted(ROOT.glob("*/*/pyproject.toml")):
        if pyproject.parent.parent.name not in ("shared", "servers", "packages"):
            continue
        if pyproject.parent.name in DEV_ONLY:
            continue
        project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        found.append(Member(project["name"], pyproject.parent, project))
    return found


MEMBERS = members()
SERVERS = [m for m in MEMBERS if m.folder.parent.name == "servers"]
# What a user installs: every server package, and the unified `dokoro`.
INSTALLABLE = [*SERVERS, *(m for m in MEMBERS if m.dist == "dokoro")]


def _uv() -> list[str]:
    # `uv run` tells its children where it is; otherwise the uv on PATH.
    found = os.environ.get("UV") or shutil.which("uv")
    if found is None:
        pytest.fail("the packaging tests need uv (pip install uv); it builds and installs the wheels")
    return [found]


def _run(*args: str, cwd: Path = ROOT) -> str:
    done = subprocess.run([*_uv(), *args], cwd=cwd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"uv {' '.join(args)} failed:\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    _run("build", "--all-packages", "--wheel", "--out-dir", str(out))
    return out


@pytest.fixture(scope="module")
def constraints(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Our packages pinned to the wheels just built; the rest to the versions of uv.lock."""
    ours = [f"{m.dist} @ {_wheel(dist, m).as_uri()}" for m in MEMBERS]
    locked = _run(
        "export", "--frozen", "--all-packages", "--all-extras", "--no-emit-workspace", "--no-hashes", "--no-header"
    )
    lines = [line for line in locked.splitlines() if line.strip() and not line.lstrip().startswith(("#", "-"))]
    path = tmp_path_factory.mktemp("constraints") / "constraints.txt"
    path.write_text("\n".join([*ours, *lines]) + "\n", encoding="utf-8")
    return path


def _wheel(dist: Path, member: Member) -> Path:
    wheels = list(dist.glob(f"{member.wheel_name}-*.whl"))
    assert len(wheels) == 1, f"expected one wheel of {member.dist} in {dist}, found {wheels}"
    return wheels[0]


def _requirement_name(requirement: str) -> str:
    name = requirement
    for stop in "[<>=!~; ":
        name = name.split(stop, 1)[0]
    return name.strip().lower()


def _metadata(wheel: Path) -> tuple[list[str], str]:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
        points = next((n for n in names if n.endswith(".dist-info/entry_points.txt")), None)
        requires = Parser().parsestr(archive.read(meta).decode()).get_all("Requires-Dist") or []
        entry_points = archive.read(points).decode() if points else ""
    return requires, entry_points


def test_the_build_makes_one_wheel_per_workspace_member_and_none_of_the_test_kit(dist: Path) -> None:
    assert {m.dist for m in MEMBERS} >= {"dokoro", "dokoro-store", "dokoro-server", "dokoro-core", "dokoro-bridge"}
    built = sorted(p.name.split("-")[0] for p in dist.glob("*.whl"))
    assert built == sorted(m.wheel_name for m in MEMBERS)
    assert not list(dist.glob("dokoro_testkit-*"))


@pytest.mark.parametrize("member", MEMBERS, ids=[m.dist for m in MEMBERS])
def test_a_wheel_declares_the_dependencies_and_scripts_of_its_pyproject(dist: Path, member: Member) -> None:
    requires, entry_points = _metadata(_wheel(dist, member))

    declared = [r for r in requires if "extra ==" not in r]
    assert sorted(_requirement_name(r) for r in declared) == sorted(
        _requirement_name(r) for r in member.project.get("dependencies", [])
    )
    for script, target in member.project.get("scripts", {}).items():
        assert f"{script} = {target}" in entry_points
    for group, points in member.project.get("entry-points", {}).items():
        assert f"[{group}]" in entry_points
        for name, target in points.items():
            assert f"{name} = {target}" in entry_points


@pytest.fixture
def venv(tmp_path: Path, constraints: Path) -> Iterator[Any]:
    """Factory: a fresh venv with the given distributions installed from the built wheels."""

    def make(*dists: str) -> Path:
        where = tmp_path / "venv"
        _run("venv", "--quiet", "--python", sys.executable, str(where))
        python = where / "bin" / "python"
        _run("pip", "install", "--quiet", "--python", str(python), "--constraint", str(constraints), *dists)
        return where

    yield make


def _installed(venv: Path, names: tuple[str, ...]) -> list[str]:
    code = f"import importlib.util, json; print(json.dumps([n for n in {names!r} if importlib.util.find_spec(n)]))"
    done = subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True, check=True)
    found: list[str] = json.loads(done.stdout)
    return found


async def _tools_over_stdio(script: Path, tmp_path: Path, **env: str) -> list[str]:
    environment = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "DOKORO_PATH": str(tmp_path / "store"), **env}
    params = StdioServerParameters(command=str(script), args=[], env=environment, cwd=str(tmp_path))
    async with Client(params) as client:
        return [tool.name for tool in (await client.list_tools()).tools]


async def _expected_tools(dist: str, tmp_path: Path, **settings: Any) -> list[str]:
    """The tools the package serves in this checkout (in process)."""
    import importlib

    from dokoro_server import DokoroSettings

    options = DokoroSettings(path=tmp_path / "expected", auto_feedback=False, **settings)
    if dist == "dokoro":
        from dokoro.server import create_unified_server

        server: Any = create_unified_server(options, cwd=tmp_path)
    else:
        server = importlib.import_module(f"{dist.replace('-', '_')}.server").create_server(options, cwd=tmp_path)
    async with Client(server) as client:
        return [tool.name for tool in (await client.list_tools()).tools]


@pytest.mark.parametrize("member", INSTALLABLE, ids=[m.dist for m in INSTALLABLE])
async def test_a_server_installed_alone_starts_and_lists_its_tools(member: Member, venv: Any, tmp_path: Path) -> None:
    where = venv(member.dist)
    (script,) = member.project["scripts"]

    flag = {"DOKORO_ENABLE_TACHIBOT_BRIDGE": "true"} if member.dist == "dokoro-bridge" else {}
    served = await _tools_over_stdio(where / "bin" / script, tmp_path, **flag)

    assert sorted(served) == sorted(await _expected_tools(member.dist, tmp_path))
    if flag:  # the bridge server too serves its tools only with the flag
        refused = subprocess.run(
            [str(where / "bin" / script)],
            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            cwd=tmp_path,
            timeout=300,
        )
        assert refused.returncode == 2 and "DOKORO_ENABLE_TACHIBOT_BRIDGE=true" in refused.stderr
        assert not (tmp_path / "dokoro").exists()
    ours = {m.wheel_name for m in MEMBERS}
    present = set(_installed(where, tuple(sorted(ours))))
    assert member.wheel_name in present
    if member.folder.parent.name == "servers":
        # A server brings the store and the kit, never another server (nor the launcher).
        assert present == {member.wheel_name, "dokoro_store", "dokoro_server"}
    if member.dist == "dokoro-core":
        assert _installed(where, NOT_IN_CORE) == []
    if member.dist == "dokoro-search":
        # The embedded vector engine comes with search (and shows the probe above can see a package).
        assert _installed(where, NOT_IN_CORE) == ["lancedb", "pyarrow"]
    # The default embedder's runtime comes with every server.
    assert _installed(where, ("onnxruntime", "tokenizers")) == ["onnxruntime", "tokenizers"]


async def test_the_installed_unified_server_serves_the_bridge_with_the_flag(venv: Any, tmp_path: Path) -> None:
    where = venv("dokoro")

    served = await _tools_over_stdio(where / "bin" / "dokoro", tmp_path, DOKORO_ENABLE_TACHIBOT_BRIDGE="true")

    assert sorted(served) == sorted(await _expected_tools("dokoro", tmp_path, enable_tachibot_bridge=True))
    assert set(served) >= BRIDGE_TOOLS


async def test_the_search_server_finds_an_installed_bridge_through_its_entry_point(venv: Any, tmp_path: Path) -> None:
    # What `uvx --with dokoro-bridge dokoro-search` installs.
    where = venv("dokoro-search", "dokoro-bridge")
    script = where / "bin" / "dokoro-search"

    plain = await _tools_over_stdio(script, tmp_path)
    bridged = await _tools_over_stdio(script, tmp_path, DOKORO_ENABLE_TACHIBOT_BRIDGE="true")

    assert not BRIDGE_TOOLS & set(plain)
    assert sorted(bridged) == sorted([*plain, *BRIDGE_TOOLS])


def _readme_recipe(script: str) -> list[str]:
    """The README's registration line for ``script`` from built wheels, as its words after ``--``."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    prefix = "claude mcp add dokoro -- uvx --find-links /path/to/dokoro/dist"
    (line,) = [line for line in readme.splitlines() if line.startswith(prefix) and line.endswith(f" {script}")]
    return line.split(" -- ", 1)[1].split()


@pytest.mark.parametrize("script", ["dokoro-core", "dokoro"])
async def test_the_readme_recipe_starts_the_server_from_the_built_wheels(
    dist: Path, tmp_path: Path, script: str
) -> None:
    """As a new user would: the README's uvx line (the clone's dist/ being the wheels just built),
    run from a project folder outside the repository, in a fresh uv tool environment. Our packages
    are not on the registry, so they can only come from the wheels; the third-party ones come from
    the registry or the uv cache, as for a user. The store lands in the project's ./dokoro."""
    uv = _uv()
    command = _readme_recipe(script)
    assert command[0] == "uvx"
    args = [a.replace("/path/to/dokoro/dist", str(dist)) for a in command[1:]]
    project = tmp_path / "project"
    project.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DOKORO_", "VIRTUAL_ENV", "UV_PROJECT"))}
    env["UV_TOOL_DIR"] = str(tmp_path / "tools")  # a fresh tool environment, not one made earlier
    version = subprocess.run(
        [*uv, "tool", "run", *args, "--version"], cwd=project, env=env, capture_output=True, text=True, timeout=900
    )
    assert version.returncode == 0, version.stderr
    assert version.stdout.startswith(f"{script} ")
    params = StdioServerParameters(
        command=uv[0], args=[*uv[1:], "tool", "run", *args], env={**env, "DOKORO_AUTO_FEEDBACK": "false"}, cwd=project
    )
    async with Client(params) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        claimed = await client.call_tool("dokoro_workspace_claim", {"task": "install check"})
    assert "dokoro_session_summary_add" in names and not claimed.is_error
    assert (project / "dokoro" / ".dokoro" / "db" / "dokoro.sqlite").is_file()  # the store is the project's
    assert not (ROOT / "dokoro").exists()
