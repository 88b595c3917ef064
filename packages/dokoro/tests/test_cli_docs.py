"""``dokoro search/list/get/update/tags/tag/untag`` through Typer's runner (reference §1.5)."""

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
        store.docs.save("login", "Fix the login race in token refresh", title="Login race", status="active")
        store.docs.save("cache", "Warm the cache on start", title="Cache warmup", status="backlog", priority="low")
        store.docs.index_docs()
    return root


def invoke(folder: Path, *args: str):
    return runner.invoke(app, [*args, "--path", str(folder)])


def test_list_shows_active_documents_by_default_and_all_with_status_all(folder):
    active = invoke(folder, "list")
    everything = invoke(folder, "ls", "--status", "all", "--json")

    assert active.exit_code == 0, active.output
    assert "login" in active.output and "cache" not in active.output
    assert [d["id"] for d in json.loads(everything.stdout)] == ["login", "cache"]


def test_search_finds_a_document_and_filters_by_status(folder):
    found = invoke(folder, "search", "token refresh race", "--json")
    filtered = invoke(folder, "search", "token refresh race", "--status", "backlog")
    text = invoke(folder, "search", "cache")

    assert found.exit_code == 0, found.output
    assert json.loads(found.stdout)["hits"][0]["id"] == "login"
    assert "login" not in filtered.output
    assert "Cache warmup" in text.output


def test_search_refuses_a_bad_limit_or_mode(folder):
    assert invoke(folder, "search", "x", "--limit", "0").exit_code == 2
    bad_mode = invoke(folder, "search", "x", "--mode", "telepathy")
    assert bad_mode.exit_code == 2 and "--mode must be one of" in bad_mode.output


def test_get_shows_a_document_and_an_unknown_id_exits_1(folder):
    shown = invoke(folder, "get", "login")
    as_json = invoke(folder, "show", "login", "--json")
    missing = invoke(folder, "get", "nope")

    assert shown.exit_code == 0 and "Login race" in shown.output and "Fix the login race" in shown.output
    assert json.loads(as_json.stdout)["content"] == "Fix the login race in token refresh"
    assert missing.exit_code == 1
    assert "no document 'nope'" in missing.output and "dokoro list" in missing.output


def test_update_changes_fields_and_done_stamps_completion(folder):
    done = invoke(
        folder, "update", "login", "--status", "done", "--priority", "high", "--stage", "review", "--slot", "2"
    )
    card = json.loads(invoke(folder, "get", "login", "--json").stdout)

    assert done.exit_code == 0, done.output
    assert (card["status"], card["priority"], card["prd_stage"], card["slot"]) == ("done", "high", "review", 2)
    assert card["completed_at"] is not None
    assert invoke(folder, "update", "login", "--status", "bogus").exit_code == 2
    assert invoke(folder, "update", "nope", "--status", "done").exit_code == 1
    assert "nothing to update" in invoke(folder, "update", "login").output


def test_tags_count_documents_and_tag_untag_change_one(folder):
    assert invoke(folder, "tag", "login", "Auth").exit_code == 0
    invoke(folder, "tag", "cache", "auth")
    invoke(folder, "tag", "cache", "perf")

    counts = json.loads(invoke(folder, "tags", "--json").stdout)
    one = invoke(folder, "tags", "--doc", "cache")
    removed = invoke(folder, "untag", "cache", "perf")

    assert counts == [{"name": "auth", "count": 2}, {"name": "perf", "count": 1}]
    assert one.output.split() == ["auth", "perf"]
    assert removed.exit_code == 0 and "perf" not in removed.output
    assert invoke(folder, "tag", "nope", "x").exit_code == 1
    assert invoke(folder, "untag", "cache", "perf").exit_code == 1
    assert invoke(folder, "tag", "login", "two words").exit_code == 2
