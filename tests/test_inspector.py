"""A client dokoro did not write: the MCP Inspector's command-line mode drives the unified server
(tools, resources and prompts).

The Inspector (npm ``@modelcontextprotocol/inspector``, pinned with its whole dependency tree in
``tests/inspector/package-lock.json``) is installed once from that lock into a cache folder named
after the lock's hash (``$DOKORO_TEST_CACHE`` or ``~/.cache/dokoro-tests``), so CI repeats exactly
the same install. Every Inspector call starts ``python -m dokoro`` over stdio, as an MCP client
configured by a user would; the store persists between calls in ``tmp_path``.

The Inspector's client validates what it receives (tool schemas, and structured content against
each tool's output schema), so these calls check the wire format as well as the answers.

Skipped only when Node.js or npm is not installed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
PINNED = ROOT / "tests" / "inspector"
INSTALL_TIMEOUT_S = 600
CALL_TIMEOUT_S = 180


def _cache_root() -> Path:
    configured = os.environ.get("DOKORO_TEST_CACHE")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dokoro-tests"


@pytest.fixture(scope="module")
def inspector() -> Path:
    """The ``mcp-inspector`` launcher of the pinned Inspector, installed on first use."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("Node.js and npm are not installed: the MCP Inspector test needs them (node >= 20)")
    lock = (PINNED / "package-lock.json").read_bytes()
    home = _cache_root() / f"inspector-{hashlib.sha256(lock).hexdigest()[:16]}"
    launcher = home / "node_modules" / ".bin" / "mcp-inspector"
    if launcher.exists():
        return launcher
    home.parent.mkdir(parents=True, exist_ok=True)
    # Install next to the target and rename into place: another test run may be installing too.
    staging = Path(tempfile.mkdtemp(prefix="inspector-", dir=home.parent))
    try:
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(PINNED / name, staging / name)
        done = subprocess.run(
            # `npm install` with the lock installs exactly the locked tree. `npm ci` would refuse it:
            # vite lists an optional dependency the registry does not have (napi-windows-process-start-time).
            [npm, "install", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"],
            cwd=staging,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_S,
            check=False,
        )
        assert done.returncode == 0, f"npm install of the pinned MCP Inspector failed:\n{done.stderr}"
        try:
            staging.rename(home)
        except OSError:
            if not launcher.exists():  # not a lost race: a real failure
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return launcher


class Inspector:
    """Runs ``mcp-inspector --cli`` against ``python -m dokoro`` with one store."""

    def __init__(self, launcher: Path, store: Path, cwd: Path, **env: str) -> None:
        self.launcher = launcher
        self.cwd = cwd
        self.env = {"DOKORO_PATH": str(store), "DOKORO_AGENT_ID": "inspector", **env}

    def run(self, method: str, *args: str, ok: bool = True) -> dict[str, Any]:
        command = [str(self.launcher), "--cli"]
        for key, value in self.env.items():
            command += ["-e", f"{key}={value}"]
        command += [sys.executable, "-m", "dokoro", "--method", method, *args]
        environment = {**os.environ, "HOME": str(self.cwd)}  # the Inspector keeps its catalog under HOME
        done = subprocess.run(
            command, cwd=self.cwd, env=environment, capture_output=True, text=True, timeout=CALL_TIMEOUT_S, check=False
        )
        if ok:
            assert done.returncode == 0, f"inspector {method} {args} exited {done.returncode}:\n{done.stderr}"
        answer: dict[str, Any] = json.loads(done.stdout)
        answer["_returncode"] = done.returncode
        answer["_stderr"] = done.stderr
        return answer

    def call(self, tool: str, ok: bool = True, **arguments: Any) -> dict[str, Any]:
        pairs = [f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in arguments.items()]
        args = ["--tool-name", tool]
        if pairs:
            args += ["--tool-arg", *pairs]
        answer = self.run("tools/call", *args, ok=ok)
        assert answer.get("isError", False) is not ok, answer
        return answer


def _text(answer: dict[str, Any]) -> str:
    return "\n".join(part["text"] for part in answer["content"] if part["type"] == "text")


@pytest.fixture
def dokoro(inspector: Path, tmp_path: Path) -> Inspector:
    return Inspector(inspector, tmp_path / "dokoro", tmp_path)


async def _unified_tools(tmp_path: Path, **settings: Any) -> dict[str, Any]:
    from dokoro.server import create_unified_server
    from dokoro_server import DokoroSettings
    from mcp import Client

    server = create_unified_server(
        DokoroSettings(path=tmp_path / "expected", auto_feedback=False, **settings), cwd=tmp_path
    )
    async with Client(server) as client:
        return {tool.name: tool for tool in (await client.list_tools()).tools}


@pytest.mark.anyio
async def test_the_inspector_lists_every_tool_of_dokoro_with_portable_schemas(
    dokoro: Inspector, tmp_path: Path
) -> None:
    # --strict fails (exit 6) on any schema-portability problem of error severity.
    listed = dokoro.run("tools/list", "--strict")

    tools = {tool["name"]: tool for tool in listed["tools"]}
    expected = await _unified_tools(tmp_path)
    assert sorted(tools) == sorted(expected)
    for name, tool in tools.items():
        assert tool["inputSchema"]["type"] == "object", name
        assert tool["description"], name
        hints = tool["annotations"]
        assert hints["readOnlyHint"] == expected[name].annotations.read_only_hint, name
        assert hints["destructiveHint"] == expected[name].annotations.destructive_hint, name
        assert hints["idempotentHint"] == expected[name].annotations.idempotent_hint, name
        assert hints["openWorldHint"] == expected[name].annotations.open_world_hint, name
    assert tools["dokoro_ambient_context"]["annotations"]["openWorldHint"] is True  # it runs git
    assert tools["dokoro_whats_next"]["annotations"]["readOnlyHint"] is False  # it indexes hand-edited markdown
    assert "outputSchema" in tools["dokoro_plan_create"]


def test_the_inspector_works_a_session_through_dokoro(dokoro: Inspector, tmp_path: Path) -> None:
    claim = dokoro.call("dokoro_workspace_claim", task="Fix the flaky login test")
    assert claim["structuredContent"]["agent_id"]
    assert "Fix the flaky login test" in (tmp_path / "dokoro" / "current.md").read_text(encoding="utf-8")

    plan = dokoro.call("dokoro_plan_create", title="Fix login", items=["Reproduce the race", "Fix session refresh"])
    plan_id = plan["structuredContent"]["id"]
    assert "Plan Created" in _text(plan)

    failed = dokoro.call("dokoro_plan_check", ok=False, planId=plan_id, itemIndex=9)
    assert failed["_returncode"] != 0  # the Inspector, too, sees an error result as a failure
    assert "itemIndex is 1-based: 1..2" in _text(failed)
    assert "Traceback" not in _text(failed)

    checked = dokoro.call("dokoro_plan_check", planId=plan_id, itemIndex=1, notes="reproduced with two tabs")
    assert checked["structuredContent"]["plan"]["done"] == 1
    assert checked["structuredContent"]["item"]["notes"] == "reproduced with two tabs"

    summary = dokoro.call(
        "dokoro_session_summary_add",
        session_id="2026-05-19-login",
        ai_model="claude-opus-4-7",
        summary="Fixed the race in session refresh; a regression test is still missing",
    )
    assert _text(summary) == "summary recorded for session 2026-05-19-login"

    recall = dokoro.call("dokoro_session_recall", query="session refresh")
    assert "session=2026-05-19-login model=claude-opus-4-7" in _text(recall)


def test_the_inspector_indexes_and_finds_a_document(dokoro: Inspector) -> None:
    dokoro.call(
        "search_index_content",
        doc_id="adr-012-sessions",
        title="ADR 012: sessions",
        content="Sessions are refreshed by one worker holding a PostgreSQL advisory lock; the others wait.",
    )

    found = dokoro.call("search_universal", query="who refreshes sessions", limit=3)

    assert found["structuredContent"]["results"][0]["doc_id"] == "adr-012-sessions"


def test_the_inspector_calls_the_bridge_tools_when_the_flag_is_on(inspector: Path, tmp_path: Path) -> None:
    bridged = Inspector(inspector, tmp_path / "dokoro", tmp_path, DOKORO_ENABLE_TACHIBOT_BRIDGE="true")

    indexed = bridged.call(
        "bridge_index_research",
        source="perplexity_ask",
        query="advisory locks",
        content="pg_advisory_xact_lock is released at commit, so a crashed worker leaves no lock behind.",
        metadata={"model": "sonar"},
    )
    context = bridged.call("bridge_get_context", query="which lock is released at commit")

    assert indexed["structuredContent"]["action"] == "indexed"
    assert context["structuredContent"]["entries"][0]["doc_id"] == indexed["structuredContent"]["doc_id"]


def test_the_inspector_lists_and_reads_the_resources_of_dokoro(dokoro: Inspector, tmp_path: Path) -> None:
    dokoro.call("dokoro_workspace_claim", task="Fix the flaky login test")
    plan_id = dokoro.call("dokoro_plan_create", title="Fix login", items=["Reproduce", "Fix"])["structuredContent"][
        "id"
    ]

    listed = dokoro.run("resources/list")
    templates = dokoro.run("resources/templates/list")
    current = dokoro.run("resources/read", "--uri", "dokoro://current")
    plan = dokoro.run("resources/read", "--uri", f"dokoro://plans/{plan_id}")

    assert sorted(r["uri"] for r in listed["resources"]) == [
        "dokoro://briefing",
        "dokoro://current",
        "dokoro://sessions/recent",
    ]
    assert [t["uriTemplate"] for t in templates["resourceTemplates"]] == ["dokoro://plans/{id}"]
    (content,) = current["contents"]
    assert content["uri"] == "dokoro://current" and content["mimeType"] == "text/markdown"
    assert content["text"] == (tmp_path / "dokoro" / "current.md").read_text(encoding="utf-8")
    assert f"- **ID:** {plan_id}" in plan["contents"][0]["text"]


def test_the_inspector_lists_and_gets_the_prompts_of_dokoro(dokoro: Inspector) -> None:
    dokoro.call("dokoro_workspace_claim", task="Fix the flaky login test")

    listed = dokoro.run("prompts/list")
    resume = dokoro.run("prompts/get", "--prompt-name", "resume-session", "--prompt-args", "task=login")

    prompts = {prompt["name"]: prompt for prompt in listed["prompts"]}
    assert sorted(prompts) == ["end-session", "onboard-project", "plan-feature", "resume-session"]
    assert {"name": "feature", "description": "The feature to plan, in a sentence.", "required": True} in prompts[
        "plan-feature"
    ]["arguments"]
    (message,) = resume["messages"]
    assert message["role"] == "user"
    assert "# Briefing" in message["content"]["text"]
    assert "- Task: Fix the flaky login test" in message["content"]["text"]
    assert 'dokoro_workspace_claim with task="login"' in message["content"]["text"]
