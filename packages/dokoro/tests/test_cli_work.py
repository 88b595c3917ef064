"""``dokoro session`` and ``dokoro time`` through Typer's runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dokoro.cli import app
from dokoro_store import Store
from typer.testing import CliRunner

runner = CliRunner(env={"COLUMNS": "200"})


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "dokoro"
    with Store.open(root) as store:
        store.docs.save("login", "Fix the login race", title="Login race", status="active")
    return root


def invoke(folder: Path, *args: str):
    return runner.invoke(app, [*args, "--path", str(folder)])


def test_a_session_starts_shows_and_ends_with_a_recalled_summary(folder):
    started = invoke(folder, "session", "start", "--focus", "login", "--json")
    session_id = json.loads(started.stdout)["id"]
    status = json.loads(invoke(folder, "session", "status", "--json").stdout)
    ended = invoke(folder, "session", "end", "--summary", "found the race")
    after = invoke(folder, "session", "status")

    assert started.exit_code == 0 and session_id.startswith("session-")
    assert [s["id"] for s in status["active"]] == [session_id]
    assert ended.exit_code == 0 and f"Ended session {session_id} after 0 minute(s)" in ended.output
    assert "No active session" in after.output and session_id in after.output
    with Store.open(folder) as store:
        assert [r.summary for r in store.episodic.recall(limit=3)] == ["found the race"]


def test_ending_without_a_session_or_focusing_on_a_missing_document_exits_1(folder):
    assert invoke(folder, "session", "end").exit_code == 1
    missing = invoke(folder, "session", "start", "--focus", "nope")
    assert missing.exit_code == 1 and "no document 'nope'" in missing.output


def test_a_timer_starts_shows_and_stops_into_the_actual_time(folder):
    started = invoke(folder, "time", "start", "login", "--slot", "2")
    again = invoke(folder, "time", "start", "login")
    status = json.loads(invoke(folder, "time", "status", "--json").stdout)
    stopped = invoke(folder, "time", "stop", "--notes", "first pass", "--json")
    card = json.loads(invoke(folder, "get", "login", "--json").stdout)

    assert started.exit_code == 0 and "Timer started on login" in started.output
    assert again.exit_code == 2 and "dokoro time stop login" in again.output
    assert [(t["doc_id"], t["slot"]) for t in status] == [("login", 2)]
    assert json.loads(stopped.stdout)["notes"] == "first pass"
    assert card["actual_min"] == 0 and card["slot"] == 2 and len(card["time_entries"]) == 1
    assert "No timer running" in invoke(folder, "time", "status").output
    assert invoke(folder, "time", "stop").exit_code == 1
    assert invoke(folder, "time", "start", "nope").exit_code == 1


def test_an_unknown_subcommand_exits_1_with_the_groups_help(folder):
    result = runner.invoke(app, ["session", "frobnicate"])

    assert result.exit_code == 1
    assert "No such command 'frobnicate'" in result.output and "start" in result.output
