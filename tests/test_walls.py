"""The store's walls, tried through every tool of the unified server (bridge included).

- Every path-like argument of every tool (found from the tool schemas, so a new one is covered or
  this file fails) gets ``../`` traversal, an absolute path elsewhere, a symlink in the project
  leading out, ``/proc/self/environ`` and a device: the call answers (a result, or an error
  that says what to do), nothing outside changes and the secret outside never comes back.
- Symlinks planted inside the store (a markdown file, a folder, an asset folder, current.md) are
  never followed out: every tool still answers with a message, and the secret stays outside.

The project is ``tmp_path`` (the server's cwd), the store ``tmp_path/dokoro``; "outside" is a
sibling folder holding the secret.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from dokoro_server import DokoroSettings, Register
from mcp import Client

pytestmark = pytest.mark.anyio

SECRET = "TOP-SECRET-4f1d9c-never-inside-the-store"

# Argument names that name a file or folder. A new tool argument matching this and missing from
# PATH_ARGUMENTS fails test_every_path_argument_is_probed.
PATH_LIKE = re.compile(r"(?i)(path|file|folder|dir|root|source)")

# Every path-like argument, and what it is: "read" (a file of the project the server reads),
# "folder" (a folder of the project the server works in), "store folder" (a folder under the
# store, where any name that stays inside is fine), "key" (a name the server never opens: claim
# keys, labels).
PATH_ARGUMENTS: dict[tuple[str, str], str] = {
    ("dokoro_init", "projectPath"): "folder",
    ("dokoro_save_image", "source"): "read",
    ("dokoro_save_image", "subfolder"): "store folder",
    ("dokoro_save_file", "source"): "read",
    ("dokoro_archive_sweep", "claimRoot"): "key",
    ("dokoro_file_claim", "paths"): "key",
    ("dokoro_file_claim", "root"): "key",
    ("dokoro_file_release", "paths"): "key",
    ("dokoro_file_release", "root"): "key",
    ("dokoro_claim_list", "root"): "key",
    ("dokoro_ambient_context", "projectPath"): "folder",
    ("bridge_import_plan", "filepath"): "key",
    ("bridge_index_research", "source"): "key",
    ("dokoro_remember", "source"): "key",
    ("dokoro_capture_research", "sources"): "key",
    ("dokoro_restore_items", "source"): "key",  # an enum: backup | auto
}


@pytest.fixture
def registers() -> Sequence[Register]:
    from dokoro.server import registers as unified

    return unified(DokoroSettings(enable_tachibot_bridge=True))


@pytest.fixture
def outside(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("outside")
    (folder / "secret.txt").write_text(SECRET + "\n", encoding="utf-8")
    (folder / "secret.md").write_text(f"# Secret\n\n{SECRET}\n", encoding="utf-8")
    (folder / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n" + SECRET.encode())
    return folder


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): (b"<link>" if p.is_symlink() else p.read_bytes() if p.is_file() else b"<dir>")
        for p in sorted(folder.rglob("*"))
    }


def _store_bytes(root: Path) -> bytes:
    """Every byte of every regular file of the store (database and WAL included), links not followed."""
    chunks = [p.read_bytes() for p in root.rglob("*") if p.is_file() and not p.is_symlink()]
    return b"".join(chunks)


def _text(outcome: Any) -> str:
    return "\n".join(str(getattr(block, "text", "")) for block in outcome.content)


def _value(schema: dict[str, Any]) -> Any:
    """A plain value of a JSON-schema property (its default, else the first enum value, else a sample)."""
    if "default" in schema and schema["default"] is not None:
        return schema["default"]
    options = schema.get("anyOf") or [schema]
    typed = next((o for o in options if o.get("type") not in (None, "null")), options[0])
    if "enum" in typed:
        return typed["enum"][0]
    kind = typed.get("type")
    if kind == "integer":
        return max(1, int(typed.get("minimum", typed.get("exclusiveMinimum", 0) + 1)))
    if kind == "number":
        return 1.0
    if kind == "boolean":
        return False
    if kind == "array":
        return ["probe"]
    if kind == "object":
        return {}
    return "probe"


async def _tools(client: Client) -> dict[str, dict[str, Any]]:
    return {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}


def _minimal(schema: dict[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties", {})
    return {name: _value(properties[name]) for name in schema.get("required", [])}


def _answers_with_a_message(tool: str, outcome: Any, where: str = "") -> None:
    """A result, or an error result that says what went wrong (the SDK prefixes every error with
    "Error executing tool <name>"; alone, it is the crash it reports for an unexpected exception)."""
    text = _text(outcome).strip()
    assert text, f"{where or tool} answered nothing"
    if outcome.is_error:
        assert text != f"Error executing tool {tool}", f"{where or tool} crashed with no message"


async def test_every_path_argument_is_probed(client: Client) -> None:
    found = {
        (tool, argument)
        for tool, schema in (await _tools(client)).items()
        for argument in schema.get("properties", {})
        if PATH_LIKE.search(argument)
    }
    assert found == set(PATH_ARGUMENTS), (
        "tools with path-like arguments changed: add the new ones to PATH_ARGUMENTS with what they are "
        f"(missing: {sorted(found - set(PATH_ARGUMENTS))}, gone: {sorted(set(PATH_ARGUMENTS) - found)})"
    )


def _hostile(tmp_path: Path, outside: Path) -> dict[str, str]:
    """Hostile values of a path argument, by name. The project is ``tmp_path``."""
    (tmp_path / "link-to-secret.txt").symlink_to(outside / "secret.txt")
    (tmp_path / "link-to-image.png").symlink_to(outside / "image.png")
    (tmp_path / "link-to-outside").symlink_to(outside, target_is_directory=True)
    relative = Path("..") / outside.name
    return {
        "traversal file": str(relative / "secret.txt"),
        "traversal image": str(relative / "image.png"),
        "traversal folder": str(relative),
        "deep traversal": "../../../../../../../../etc/passwd",
        "absolute file": str(outside / "secret.txt"),
        "absolute folder": str(outside),
        "symlinked file": "link-to-secret.txt",
        "symlinked image": "link-to-image.png",
        "symlinked folder": "link-to-outside",
        "through a symlinked folder": "link-to-outside/secret.txt",
        "proc": "/proc/self/environ",
        "device": "/dev/zero",
    }


@pytest.mark.slow
async def test_no_path_argument_reads_or_writes_outside_the_project(
    client: Client, tmp_path: Path, root: Path, outside: Path
) -> None:
    schemas = await _tools(client)
    hostile = _hostile(tmp_path, outside)
    before = _snapshot(outside)
    project_before = {p.name for p in tmp_path.iterdir()}
    tried = 0
    for (tool, argument), kind in sorted(PATH_ARGUMENTS.items()):
        schema = schemas[tool]
        for label, value in hostile.items():
            arguments = _minimal(schema)
            is_list = schema["properties"][argument].get("type") == "array"
            arguments[argument] = [value] if is_list else value
            if tool == "dokoro_save_image" and argument == "subfolder":
                arguments["source"] = "data:image/png;base64,iVBORw0KGgo="
            outcome = await client.call_tool(tool, arguments)
            tried += 1
            where = f"{tool}({argument}={label!r})"
            _answers_with_a_message(tool, outcome, where)
            assert SECRET not in _text(outcome), f"{where} returned the secret"
            escapes = label.startswith(("traversal", "deep", "absolute", "proc", "device"))
            if kind in ("read", "folder") or (kind == "store folder" and escapes):
                assert outcome.is_error, f"{where} was accepted: {_text(outcome)}"
            assert _snapshot(outside) == before, f"{where} changed a file outside the project"
            assert SECRET.encode() not in _store_bytes(root), f"{where} copied the secret into the store"
    assert {p.name for p in tmp_path.iterdir()} == project_before | {"dokoro"} or (
        {p.name for p in tmp_path.iterdir()} == project_before
    )
    assert tried == len(PATH_ARGUMENTS) * len(hostile)


async def test_save_file_takes_a_regular_file_of_the_project(call: Any, fail: Any, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("plain notes", encoding="utf-8")
    (tmp_path / "inner").mkdir()
    (tmp_path / "inner-link.txt").symlink_to(tmp_path / "notes.txt")

    saved = await call("dokoro_save_file", source="notes.txt")
    linked = await call("dokoro_save_file", source="inner-link.txt", name="via-link.txt")
    folder = await fail("dokoro_save_file", source="inner")

    assert saved.structured_content["relative"] == "assets/other/notes.txt"
    assert linked.structured_content["relative"] == "assets/other/via-link.txt"
    assert "is a folder" in folder


async def test_save_file_refuses_a_fifo(fail: Any, tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / "pipe.txt")

    message = await fail("dokoro_save_file", source="pipe.txt")

    assert "not a regular file" in message


def _plant(root: Path, outside: Path) -> None:
    """Symlinks inside the store, each leading out of it."""
    for folder in ("insights", "daily", "assets/images", "assets/other", ".mcp/plans/archive", "decisions"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    (root / "insights" / "x.md").symlink_to(outside / "secret.md")
    (root / "daily" / "2020-01-01-evil.md").symlink_to(outside / "secret.md")
    (root / "decisions" / "loop").symlink_to(root, target_is_directory=True)
    (root / "research").symlink_to(outside, target_is_directory=True)
    (root / "assets" / "images" / "evil").symlink_to(outside, target_is_directory=True)
    (root / "assets" / "other" / "secret.txt").symlink_to(outside / "secret.txt")
    (root / ".mcp" / "plans" / "archive" / "2020-01").symlink_to(outside, target_is_directory=True)
    (root / "features").symlink_to(outside / "secret.md")  # a file link where a folder is expected


@pytest.mark.slow
async def test_symlinks_in_the_store_are_never_followed_out_and_fail_no_tool(
    client: Client, root: Path, outside: Path
) -> None:
    schemas = await _tools(client)
    await client.call_tool("dokoro_workspace_claim", {"task": "walls"})
    _plant(root, outside)
    before = _snapshot(outside)
    # Calls that reach the planted links: scans, writes into the linked folders, reads by name.
    targeted: list[tuple[str, dict[str, Any]]] = [
        ("search_dokoros", {"query": "secret", "type": "all"}),
        ("search_dokoros", {"query": "secret", "type": "insights"}),
        ("search_dokoros", {"query": "secret", "type": "daily"}),
        ("list_recent_dokoros", {"days": 3650, "type": "all"}),
        ("list_recent_dokoros", {"days": 3650, "type": "features"}),
        ("search_reindex", {"full": True}),
        ("search_universal", {"query": "secret"}),
        ("dokoro_regenerate_current", {"includeDays": 3650}),
        ("dokoro_save_image", {"source": "data:image/png;base64,iVBORw0KGgo=", "subfolder": "evil"}),
        ("dokoro_save_image", {"source": "data:image/png;base64,iVBORw0KGgo=", "name": "x.png", "subfolder": "evil"}),
        ("dokoro_list_assets", {"category": "all"}),
        ("dokoro_archive_sweep", {"olderThanDays": 1}),
        ("dokoro_workspace_dump", {"reason": "walls", "keepActive": True}),
        ("dokoro_plan_list", {}),
        ("dokoro_whats_next", {}),
    ]
    calls = targeted + [(tool, _minimal(schema)) for tool, schema in sorted(schemas.items())]
    for tool, arguments in calls:
        outcome = await client.call_tool(tool, arguments)
        where = f"{tool}({arguments})"
        _answers_with_a_message(tool, outcome, where)
        assert SECRET not in _text(outcome), f"{where} returned the secret"
        assert _snapshot(outside) == before, f"{where} wrote outside the store"
    assert SECRET.encode() not in _store_bytes(root)
    assert not (outside / "x.png").exists()


async def test_a_symlinked_current_md_is_neither_read_nor_written_through(
    client: Client, root: Path, outside: Path
) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "current.md").symlink_to(outside / "secret.md")
    before = _snapshot(outside)

    for tool, arguments in (
        ("dokoro_get_current_focus", {}),
        ("dokoro_session_log", {"entry": "hello"}),
        ("dokoro_update_current_section", {"section": "Next", "content": "x"}),
        ("dokoro_workspace_status", {}),
        ("dokoro_workspace_dump", {"reason": "leak?"}),
        ("search_dokoros", {"query": "secret", "type": "current"}),
    ):
        outcome = await client.call_tool(tool, arguments)
        _answers_with_a_message(tool, outcome)
        assert SECRET not in _text(outcome), f"{tool} returned the secret"
    assert _snapshot(outside) == before
    assert SECRET.encode() not in _store_bytes(root)


async def test_ambient_context_stays_in_the_project(fail: Any, tmp_path: Path, outside: Path) -> None:
    import subprocess

    subprocess.run(["git", "init", "-q", str(outside)], check=True)
    (tmp_path / "elsewhere").symlink_to(outside, target_is_directory=True)

    for project in (str(outside), "../" + outside.name, "elsewhere", "/"):
        message = await fail("dokoro_ambient_context", projectPath=project)
        assert "leaves" in message, message
