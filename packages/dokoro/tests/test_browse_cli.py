"""``dokoro browse`` off a terminal: the summary, ``--json`` and unknown categories (reference §5)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from dokoro.cli import app
from typer.testing import CliRunner

runner = CliRunner()


@pytest.fixture
def folder(world) -> Path:
    return world.paths.root


def test_json_lists_the_categories_with_counts(folder, database_url):
    result = runner.invoke(app, ["browse", "--json", "--path", str(folder)], env=_env(database_url))

    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["dokoroPath"] == str(folder)
    counts = {c["id"]: c["count"] for c in doc["categories"]}
    # The CLI runs on today's clock: the world's fact, written in June and never recalled, is
    # proposed for pruning (the rule is not: the briefing shows rules without a recall).
    assert counts == {
        "current": 1, "daily": 2, "weekly": 1, "archive": 2, "plans": 3, "claims": 1, "agents": 0,
        "questions": 1, "feedback": 2, "entities": 2, "sweep": 1, "memories": 2, "stale": 0, "proposals": 1,
        "tracking": 2, "sessions": 0,
    }  # fmt: skip


def test_json_of_one_category_lists_its_items(folder, database_url):
    result = runner.invoke(
        app, ["browse", "--json", "--category", "PLANS", "--path", str(folder)], env=_env(database_url)
    )

    doc = json.loads(result.stdout)
    assert doc["category"] == "plans"
    assert [(i["label"], i["kind"], i["archived"]) for i in doc["items"]] == [
        ("Tidy the cache", "plan", False),
        ("Ship the login fix", "plan", False),
        ("Old spike", "plan", True),
    ]


def test_an_unknown_category_with_json_fails_with_nothing_on_stdout(tmp_path):
    result = runner.invoke(app, ["browse", "--json", "--category", "nope", "--path", str(tmp_path / "d")])

    assert result.exit_code == 1
    assert result.stdout == ""
    assert "unknown category 'nope'" in result.stderr


def test_off_a_terminal_it_prints_a_summary(folder, database_url):
    summary = runner.invoke(app, ["browse", "--path", str(folder)], env=_env(database_url))
    daily = runner.invoke(app, ["browse", "--category", "daily", "--path", str(folder)], env=_env(database_url))
    unknown = runner.invoke(app, ["browse", "--category", "nope", "--path", str(folder)], env=_env(database_url))

    assert summary.exit_code == 0
    assert "Daily sessions" in summary.output and "not a terminal" in summary.output
    assert daily.output.splitlines()[1:3] == [
        "Daily sessions (2)",
        "  2026-06-11-09h00-thursday-session-login.md  Session: login race",
    ]
    assert unknown.exit_code == 1 and "unknown category 'nope'" in unknown.stderr


def test_a_mistyped_category_names_the_one_meant_and_every_one_there_is(tmp_path):
    result = runner.invoke(app, ["browse", "--category", "dayli", "--path", str(tmp_path / "d")])

    assert result.exit_code == 1 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("dokoro: unknown category 'dayli'; did you mean 'daily'? the categories are current, daily,")
    assert line.endswith("proposals, tracking, sessions")


def test_a_piped_dokoro_browse_process_prints_the_summary(folder, database_url):
    env = {**_env(database_url), "PATH": ""}
    done = subprocess.run(
        [sys.executable, "-m", "dokoro", "browse", "--path", str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={k: v for k, v in env.items() if v is not None} | {"HOME": str(folder.parent)},
    )

    assert done.returncode == 0, done.stderr
    assert "Plans" in done.stdout and "Memories" in done.stdout


def _env(database_url: str | None) -> dict[str, str | None]:
    return {"DOKORO_DATABASE_URL": database_url, "DOKORO_PATH": None}
