"""The original dokoro's legacy place (issue 46, item 6): a store kept in ``<project>/.dokoro``
(beside the workspace folder, the original's old layout) is moved into the store folder once —
backed up first, told once — and then opened as any store of the original.

Every test works on a copy of ``../shared/fixtures/original-store`` laid out the legacy way: its
``.dokoro`` folder beside ``dokoro/`` instead of inside it. The original's store is a SQLite file:
the move is the embedded store's (a team's PostgreSQL takes it with ``dokoro migrate --from-original``).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from dokoro_store import Store
from dokoro_testkit.original import original_copy
from mcp import Client

pytestmark = pytest.mark.anyio


def _legacy_layout(tmp_path: Path) -> tuple[Path, Path]:
    """``project/dokoro`` (the workspace folder) and ``project/.dokoro`` (the original's data, legacy place)."""
    project = tmp_path / "project"
    project.mkdir()
    store = original_copy(project)
    shutil.move(store / ".dokoro", project / ".dokoro")
    return project, store


def _text(outcome: object) -> str:
    assert not getattr(outcome, "is_error", False), outcome
    return "\n".join(getattr(block, "text", "") for block in getattr(outcome, "content", []))


def _summaries(database: Path) -> int:
    with sqlite3.connect(database) as connection:
        (count,) = connection.execute("SELECT count(*) FROM conversation_summaries").fetchone()
    return int(count)


async def test_a_server_started_on_the_legacy_layout_moves_it_once_and_says_so(tmp_path: Path, server_params) -> None:
    project, store = _legacy_layout(tmp_path)
    original = (project / ".dokoro" / "db" / "dokoro.sqlite").read_bytes()

    async with Client(server_params("dokoro", store, project)) as client:
        first = _text(await client.call_tool("dokoro_session_recall", {"query": "session refresh race"}))
        again = _text(await client.call_tool("dokoro_session_recall", {"limit": 10}))

    assert "Fixed race in session refresh" in first  # not "(no past sessions)"
    assert "moved the original dokoro's store from its legacy place (project/.dokoro)" in first
    assert "legacy place" not in again  # told once
    assert not (project / ".dokoro").exists()  # emptied, removed
    (backup,) = (store / ".dokoro" / "backup").glob("legacy-*")
    assert (backup / "legacy" / "db" / "dokoro.sqlite").read_bytes() == original  # the copy came first
    record = json.loads((backup / "legacy-move.json").read_text(encoding="utf-8"))
    assert "db/dokoro.sqlite" in record["moved"] and record["kept_in_legacy_folder"] == []
    assert str(tmp_path) not in first  # the answer names folders, never absolute paths

    async with Client(server_params("dokoro", store, project)) as client:
        later = _text(await client.call_tool("dokoro_session_recall", {"limit": 10}))
    assert "Fixed race in session refresh" in later and "legacy place" not in later
    assert len(list((store / ".dokoro" / "backup").glob("legacy-*"))) == 1


def test_an_empty_store_a_server_made_meanwhile_is_set_aside_for_the_legacy_one(tmp_path: Path) -> None:
    project, store = _legacy_layout(tmp_path)
    legacy = project / ".dokoro"
    hidden = tmp_path / "hidden"
    shutil.move(legacy, hidden)
    with Store.open(store) as fresh:  # what this dokoro did before it looked at the legacy place
        assert fresh.episodic.recall(limit=5) == []
        fresh.feedback.record("claude", "dokoro_session_recall", "success")  # bookkeeping, not data
    shutil.move(hidden, legacy)

    with Store.open(store) as opened:
        found = opened.episodic.recall(limit=10)

    assert any("Fixed race in session refresh" in s.summary for s in found)
    (backup,) = (store / ".dokoro" / "backup").glob("legacy-*")
    assert (backup / "store-db" / "dokoro.sqlite").is_file()  # the empty one, kept
    assert not legacy.exists()


def test_a_store_with_data_is_kept_and_the_legacy_one_left_and_named_once(tmp_path: Path, caplog) -> None:
    project, store = _legacy_layout(tmp_path)
    legacy = project / ".dokoro"
    hidden = tmp_path / "hidden"
    shutil.move(legacy, hidden)
    with Store.open(store) as own:
        own.episodic.add_summary("s-own", "model", "Our own session, written here")
    shutil.move(hidden, legacy)

    with caplog.at_level("WARNING", logger="dokoro.store"), Store.open(store) as opened:
        mine = opened.episodic.recall(limit=10)
    with caplog.at_level("WARNING", logger="dokoro.store"), Store.open(store):
        pass

    assert [s.session_id for s in mine] == ["s-own"]
    assert _summaries(legacy / "db" / "dokoro.sqlite") == 3  # untouched
    told = [r.getMessage() for r in caplog.records if "legacy store" in r.getMessage()]
    assert len(told) == 1 and "dokoro migrate --from-original" in told[0]
    assert (store / ".dokoro" / "backup" / "legacy-left.json").is_file()


def test_a_legacy_folder_that_is_a_symlink_or_no_original_store_is_never_touched(tmp_path: Path) -> None:
    project, store = _legacy_layout(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    shutil.move(project / ".dokoro", elsewhere)
    (project / ".dokoro").symlink_to(elsewhere, target_is_directory=True)

    with Store.open(store) as opened:
        assert opened.episodic.recall(limit=5) == []
    assert (project / ".dokoro").is_symlink() and (elsewhere / "db" / "dokoro.sqlite").is_file()

    (project / ".dokoro").unlink()
    (project / ".dokoro" / "db").mkdir(parents=True)
    (project / ".dokoro" / "db" / "dokoro.sqlite").write_bytes(b"not a database")
    with Store.open(store):
        pass
    assert (project / ".dokoro" / "db" / "dokoro.sqlite").read_bytes() == b"not a database"
