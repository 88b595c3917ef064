"""A store the original TypeScript dokoro wrote opens as it is: backed up, converted once, used.

Every test works on a copy of ``../shared/fixtures/original-store`` (never the fixture itself).
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from dokoro_testkit.original import ORIGINAL_STORE, original_copy
from mcp import Client

pytestmark = pytest.mark.anyio


def _text(outcome: object) -> str:
    assert not getattr(outcome, "is_error", False), outcome
    return "\n".join(getattr(block, "text", "") for block in getattr(outcome, "content", []))


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# Written behind the writes by whichever process comes first (a server that exits at once leaves
# them to the next one): the moved-in summaries' vectors. The moved-in document is embedded as it
# is indexed, so its chunks are compared whole.
WRITTEN_BEHIND: dict[str, frozenset[str]] = {"conversation_summaries": frozenset({"embedding", "embedder"})}


def _tables(database: Path, *, without_written_behind: bool = False) -> dict[str, list[tuple[object, ...]]]:
    with sqlite3.connect(database) as connection:
        names = [r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
        found: dict[str, list[tuple[object, ...]]] = {}
        for name in names:
            if name.startswith(("summaries_fts", "docs_fts", "docs_trigram")):
                continue
            cursor = connection.execute(f'SELECT * FROM "{name}"')
            skipped = WRITTEN_BEHIND.get(name, frozenset()) if without_written_behind else frozenset()
            keep = [i for i, column in enumerate(cursor.description) if column[0] not in skipped]
            found[name] = sorted((tuple(row[i] for i in keep) for row in cursor), key=repr)
        return found


def _unembedded_summaries(database: Path) -> int:
    with sqlite3.connect(database) as connection:
        (count,) = connection.execute("SELECT count(*) FROM conversation_summaries WHERE embedding IS NULL").fetchone()
        return int(count)


async def test_the_original_store_opens_over_stdio_with_its_whole_history(tmp_path: Path, server_params) -> None:
    store = original_copy(tmp_path)
    originals = {p.relative_to(store): _digest(p) for p in store.rglob("*") if p.is_file() and ".dokoro" not in p.parts}
    async with Client(server_params("dokoro", store, tmp_path)) as client:
        recall = _text(await client.call_tool("dokoro_session_recall", {"query": "session refresh race"}))
        assert "Fixed race in session refresh" in recall
        assert "moved in from the original dokoro store" in recall  # said once, on the first answer
        everything = _text(await client.call_tool("dokoro_session_recall", {"limit": 10}))
        assert "sqlite cache behind a write-ahead log" in everything and "ubuntu-24.04" in everything
        assert "moved in from the original" not in everything  # only once

        plan = _text(await client.call_tool("dokoro_plan_status", {}))
        assert "Harden login" in plan and "needs a staging account" in plan and "33%" in plan
        questions = _text(await client.call_tool("dokoro_question_list", {"status": "all"}))
        assert "Which CI runner should the e2e job use?" in questions and "No, removed in May" in questions
        feedback = _text(await client.call_tool("dokoro_feedback_query", {"tool_name": "sed"}))
        assert "sed: total=1 success=0 failure=1" in feedback
        grep = _text(await client.call_tool("dokoro_feedback_query", {"tool_name": "grep"}))
        assert "grep: total=2" in grep  # two identical outcomes in one second are both kept
        block = _text(await client.call_tool("dokoro_block_read", {"block_key": "conventions"}))
        assert "tests live beside the code" in block and "version 1" in block
        handoffs = _text(await client.call_tool("dokoro_handoff_inbox", {}))
        assert "login race half fixed" in handoffs and "regression test" in handoffs
        notes = _text(await client.call_tool("dokoro_shared_note_read", {}))
        assert "keep the old endpoint one more week" in notes
        found = _text(await client.call_tool("search_universal", {"query": "flaky login test regression"}))
        assert "2026-12-02-01h57-wednesday-session-fix-flaky-login-test" in found

        # And it goes on: the original's plan can be continued.
        checked = await client.call_tool("dokoro_plan_check", {"itemIndex": 2, "notes": "staging account arrived"})
        assert not checked.is_error, checked.content

    (backup,) = (store / ".dokoro" / "backup").glob("original-*")
    assert (backup / "conversion.json").is_file()
    # The original's database lives on in the backup, unchanged in what it holds.
    assert (
        _tables(backup / "dokoro.sqlite")["conversation_summaries"]
        == _tables(ORIGINAL_STORE / ".dokoro" / "db" / "dokoro.sqlite")["conversation_summaries"]
    )
    # None of the original's files is gone (the plan file is its rendering now, the rest untouched).
    for relative, digest in originals.items():
        assert (store / relative).is_file(), relative
        if relative.parts[:2] != (".mcp", "plans") and relative.name != "session.json":
            assert _digest(store / relative) == digest, relative


async def test_a_second_open_changes_nothing(tmp_path: Path, server_params) -> None:
    store = original_copy(tmp_path)
    async with Client(server_params("dokoro", store, tmp_path)) as client:
        _text(await client.call_tool("dokoro_block_read", {"block_key": "conventions"}))
    database = store / ".dokoro" / "db" / "dokoro.sqlite"
    before = _tables(database, without_written_behind=True)
    backups = sorted((store / ".dokoro" / "backup").iterdir())
    async with Client(server_params("dokoro", store, tmp_path)) as client:
        again = _text(await client.call_tool("dokoro_block_read", {"block_key": "conventions"}))
        assert "moved in" not in again
    after = _tables(database, without_written_behind=True)
    # Only the outcome capture of the calls themselves is new (and, if the first server exited
    # before its write-behind step ran, the vectors the second one filled in: not compared).
    assert {k: v for k, v in after.items() if k != "agent_feedback"} == {
        k: v for k, v in before.items() if k != "agent_feedback"
    }
    assert set(before["agent_feedback"]) <= set(after["agent_feedback"])
    assert sorted((store / ".dokoro" / "backup").iterdir()) == backups


def test_a_second_open_finishes_the_vectors_the_first_left_and_changes_nothing_else(tmp_path: Path) -> None:
    """The first process went before its write-behind step (as a server does when its client leaves
    at once): the next one embeds the moved-in summaries, and that is all it changes."""
    from dokoro_store import Store
    from dokoro_store.retrieval import RetrievalConfig

    store = original_copy(tmp_path)
    behind = RetrievalConfig(embed_behind=True)
    Store.open(store, retrieval=behind).close(finish=False)
    database = store / ".dokoro" / "db" / "dokoro.sqlite"
    assert _unembedded_summaries(database) == 3
    before = _tables(database, without_written_behind=True)

    Store.open(store, retrieval=behind).close(finish=True)

    assert _unembedded_summaries(database) == 0
    assert _tables(database, without_written_behind=True) == before
