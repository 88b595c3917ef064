"""No answer carries the server's absolute paths: its store folder, the files in it, its cwd.

An agent (a remote one on the shared HTTP server above all) has no use for where the server keeps
its store, and an absolute path in an answer tells it about the server's disk. Answers name files
relative to the store (``daily/….md``) or to the project. Every tool of the unified server (the
bridge flag on) is called with the simplest arguments its schema allows, then with a required
argument missing, with paths that do not exist and with paths outside the project, after a fill
that gives the tools something to show; every text and structured answer, error answers
included, is scanned for the absolute store folder, the server's cwd, the test's folder and the
folder dokoro is installed in. (The HTTP server answers through the same tools: see
``test_http_server.py`` for the same check over HTTP.)
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from dokoro.server import BRIDGE_PACKAGES, TOOL_PACKAGES, UNIFIED_TOOLS

if TYPE_CHECKING:
    from dokoro_server import Register
    from mcp import Client
    from mcp_types import CallToolResult, Tool

pytestmark = pytest.mark.anyio

PATH_NAMES = {"projectPath", "root", "claimRoot", "subfolder", "source", "name", "filepath", "paths", "path"}
# Path arguments that are missing, outside the project, or absolute.
BAD_PATHS = ["missing/nowhere.md", "../../../outside.md", "/etc/hostname"]


@pytest.fixture
def registers() -> Sequence[Register]:
    modules = [*TOOL_PACKAGES, *UNIFIED_TOOLS, *BRIDGE_PACKAGES]
    return [importlib.import_module(name).register for name in modules]


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "notes.md").write_text("# notes\n\nA note about login sessions.\n", encoding="utf-8")
    return folder


def _simplest(schema: dict[str, Any]) -> Any:
    if "anyOf" in schema:
        options = [option for option in schema["anyOf"] if option.get("type") != "null"]
        return _simplest(options[0]) if options else None
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "string":
        return "login sessions"[: schema.get("maxLength", 50)].ljust(schema.get("minLength", 0), "x")
    if kind == "integer":
        return max(schema.get("minimum", 1), schema.get("exclusiveMinimum", 0) + 1)
    if kind == "number":
        return schema.get("minimum", 1.0)
    if kind == "boolean":
        return False
    if kind == "array":
        return [_simplest(schema.get("items", {"type": "string"}))] * max(1, schema.get("minItems", 1))
    if kind == "object":
        return {}
    return "x"


def _calls(tool: Tool) -> list[dict[str, Any]]:
    """The simplest valid call, one with each required argument missing, and bad paths."""
    properties: dict[str, Any] = tool.input_schema.get("properties", {})
    required = list(tool.input_schema.get("required", []))
    simplest = {name: _simplest(properties[name]) for name in required}
    for name in properties:
        if name in PATH_NAMES and name not in simplest:
            simplest[name] = "notes.md"
    calls = [simplest]
    calls += [{k: v for k, v in simplest.items() if k != name} for name in required]
    for name, schema in properties.items():
        if name in PATH_NAMES:
            many = schema.get("type") == "array" or any(o.get("type") == "array" for o in schema.get("anyOf", []))
            calls += [{**simplest, name: [bad] if many else bad} for bad in BAD_PATHS]
    return calls


def _answer(outcome: CallToolResult) -> str:
    texts = [getattr(block, "text", "") for block in outcome.content]
    return "\n".join(texts) + json.dumps(outcome.structured_content or {})


async def _fill(client: Client) -> None:
    for tool, arguments in (
        ("dokoro_init", {}),
        ("dokoro_workspace_claim", {"task": "login sessions"}),
        ("dokoro_session_log", {"entry": "sessions expire after an hour", "type": "issue"}),
        ("dokoro_question_add", {"question": "Who owns the login code?"}),
        ("dokoro_save_file", {"source": "notes.md", "category": "data", "description": "notes"}),
        ("dokoro_remember", {"type": "fact", "title": "Login sessions", "body": "Login sessions live one hour."}),
        ("dokoro_plan_create", {"title": "Fix login", "items": ["Reproduce", "Fix"]}),
        ("search_index_content", {"doc_id": "sessions", "content": "About login sessions."}),
    ):
        outcome = await client.call_tool(tool, arguments)
        assert not outcome.is_error, (tool, _answer(outcome))


async def test_no_answer_names_the_servers_absolute_paths(make_client, root: Path, cwd: Path, tmp_path: Path) -> None:
    leaks: list[str] = []
    count = 0
    import dokoro_store

    install = str(Path(dokoro_store.__file__).parents[1])  # site-packages, or the clone's src folder
    secrets = {str(root), str(root.resolve()), str(cwd), str(tmp_path), str(tmp_path.resolve()), install}
    async with make_client(enable_tachibot_bridge=True) as client:
        await _fill(client)
        tools = (await client.list_tools()).tools
        for tool in sorted(tools, key=lambda t: t.name):
            if tool.name == "dokoro_workspace_dump":
                continue  # ends the workspace the other tools read; called last
            for arguments in _calls(tool):
                outcome = await client.call_tool(tool.name, arguments)
                count += 1
                text = _answer(outcome)
                for secret in secrets:
                    if secret in text:
                        leaks.append(f"{tool.name}({arguments!r:.120}) error={outcome.is_error}: {text[:300]!r}")
                        break
        for arguments in ({"reason": "end of day", "keepActive": False},):
            outcome = await client.call_tool("dokoro_workspace_dump", arguments)
            count += 1
            if any(secret in _answer(outcome) for secret in secrets):
                leaks.append(f"dokoro_workspace_dump: {_answer(outcome)[:300]!r}")
    assert count > 2 * len(tools)
    assert not leaks, "\n".join(leaks)


async def test_a_symlinks_target_is_never_named(make_client, cwd: Path, tmp_path: Path) -> None:
    """A link in the project to a file elsewhere on the disk: the refusal says it leads out, not where."""
    elsewhere = tmp_path / "elsewhere" / "private-notes.md"
    elsewhere.parent.mkdir()
    elsewhere.write_text("private", encoding="utf-8")
    (cwd / "link.md").symlink_to(elsewhere)
    (cwd / "system.md").symlink_to("/etc/hostname")
    async with make_client() as client:
        for source in ("link.md", "system.md"):
            outcome = await client.call_tool("dokoro_save_file", {"source": source, "category": "data"})
            text = _answer(outcome)
            assert outcome.is_error, text
            assert "private-notes" not in text and "elsewhere" not in text and "/etc" not in text, text
            assert str(tmp_path) not in text


async def test_a_store_open_error_names_no_folder_of_the_servers_disk(make_client, tmp_path: Path) -> None:
    """The store cannot be opened (DOKORO_PATH under a file): the answer says why, not where."""
    blocker = tmp_path / "srv" / "blocker.txt"
    blocker.parent.mkdir()
    blocker.write_text("a file, not a folder", encoding="utf-8")
    async with make_client(path=blocker / "dokoro") as client:
        outcome = await client.call_tool("dokoro_recall", {"query": "anything"})
    text = _answer(outcome)
    assert outcome.is_error and "is a file" in text, text
    assert str(tmp_path) not in text and "blocker.txt" not in text.replace("…/", ""), text
