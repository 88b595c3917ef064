"""The memory files over MCP, two agents' servers each on its own workspace folder and one database (the
SQLite file shared by its path, a PostgreSQL): agent B, whose folder still has the old files, calls
``dokoro_memory_reindex`` after agent A forgot, superseded and purged through folder A; nothing comes
back, and ``dokoro_memory_status`` never advises a rebuild that would undo anything. A hostile file in
B's folder is one file skipped, and A's tools go on; B's status names what it has not read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from dokoro_testkit import Connect

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("store_url", ["sqlite", "postgresql"], indirect=True)]


@pytest.fixture
def folder_b(tmp_path: Path) -> Path:
    return tmp_path / "folder-b"


@pytest.fixture
def shared_url(root: Path, store_url: str | None) -> str:
    return store_url or f"sqlite:///{root / '.dokoro' / 'db' / 'dokoro.sqlite'}"


async def _ok(client: Any, tool: str, **arguments: Any) -> Any:
    outcome = await client.call_tool(tool, arguments)
    assert not outcome.is_error, outcome.content[0].text
    return outcome


async def _id(client: Any, title: str, body: str, **extra: Any) -> str:
    done = await _ok(client, "dokoro_remember", type="fact", title=title, body=body, **extra)
    return str(done.structured_content["memory"]["id"])


async def test_a_stale_folders_reindex_brings_nothing_back(connect: Connect, folder_b: Path, shared_url: str) -> None:
    async with connect("alice") as a, connect("bob", path=folder_b, database_url=shared_url) as b:
        m1 = await _id(a, "Deploy host", "We deploy to host-a.")
        m2 = await _id(a, "Build tool", "Builds use make.")
        m3 = await _id(a, "Token place", "The deploy token sits in the vault.")
        await _ok(b, "dokoro_memory_status")  # B's folder... (read-only: renders nothing)
        await _ok(b, "dokoro_recall", query="deploy")  # ...its first memory call renders the three
        assert len(list((folder_b / "memories" / "fact").glob("*.md"))) == 3
        await _ok(a, "dokoro_forget", id=m1, reason="host-a is retired")
        await _ok(a, "dokoro_remember", type="fact", title="Build tool now", body="Builds use bazel.", supersedes=m2)
        await _ok(a, "dokoro_forget", id=m3, purge=True, confirm=True)

        status = await _ok(b, "dokoro_memory_status")
        rebuilt = await _ok(b, "dokoro_memory_reindex")
        recalled = await _ok(a, "dokoro_recall", query="deploy host build token", include_archived=True)

        check = status.structured_content["files_check"]
        assert "dokoro_memory_reindex" not in check["message"] or "forward only" in check["message"]
        report = rebuilt.structured_content
        assert (report["behind"], report["removed"], report["restored"], report["updated"]) == (2, 1, 0, 0)
        assert "2 behind the database" in rebuilt.content[0].text
        states = {h["memory"]["id"]: h["memory"]["state"] for h in recalled.structured_content["hits"]}
        assert states[m1] == "deprecated" and states[m2] == "archived" and m3 not in states
        assert not list((folder_b / "memories").glob(f"*/{m3}*.md"))


async def test_a_hostile_file_in_one_folder_never_takes_the_tools_down_for_the_other(
    connect: Connect, folder_b: Path, shared_url: str
) -> None:
    async with connect("alice") as a, connect("bob", path=folder_b, database_url=shared_url) as b:
        await _id(b, "Seed", "A first memory makes bob's folders.")
        facts = folder_b / "memories" / "fact"
        (facts / "evil.md").write_text("---\nid: ../../../etc/passwd\n---\n# Evil\n\nA path as an id.\n")
        (facts / "hand.md").write_text("# Hand written\n\nBob's person wrote this by hand.\n")

        status = await _ok(b, "dokoro_memory_status")
        recalled = await _ok(b, "dokoro_recall", query="written by hand")
        rebuilt = await _ok(b, "dokoro_memory_reindex")
        written = await _id(a, "After", "Alice writes after the hostile file.")
        found = await _ok(a, "dokoro_recall", query="alice writes after the hostile file")

        text = status.content[0].text
        assert "2 changed since they were last read (2 new)" in text and "memories/fact/evil.md" in text
        assert "is not a memory id" in recalled.content[0].text  # named in the answer...
        again = await _ok(b, "dokoro_recall", query="written by hand")
        assert "memories/fact/evil.md" in again.content[0].text  # ...and on every call until fixed
        assert "memories/fact/evil.md: skipped (id: '../../../etc/passwd' is not a memory id" in rebuilt.content[0].text
        assert found.structured_content["hits"][0]["memory"]["id"] == written


async def test_an_agents_reindex_acts_with_its_own_rights_only(
    connect: Connect, folder_b: Path, shared_url: str
) -> None:
    async with connect("alice") as a, connect("bob", path=folder_b, database_url=shared_url) as b:
        theirs = await _id(a, "Ports", "The api listens on 8080.")
        await _ok(b, "dokoro_recall", query="api")
        path = next((folder_b / "memories" / "fact").glob(f"{theirs}-*.md"))
        path.write_text(
            path.read_text().replace("agent: alice", "agent: bob").replace("state: active", "state: deprecated")
        )

        rebuilt = await _ok(b, "dokoro_memory_reindex")
        memory = (await _ok(a, "dokoro_recall", query="api listens")).structured_content["hits"][0]["memory"]

        assert (memory["id"], memory["agent_id"], memory["state"]) == (theirs, "alice", "active")
        assert "alice's memory: agent bob may not change its state" in rebuilt.content[0].text
