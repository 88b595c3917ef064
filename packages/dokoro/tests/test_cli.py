"""The ``dokoro`` command line, through Typer's runner."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from dokoro.cli import app
from typer.testing import CliRunner

runner = CliRunner()


def test_help_lists_every_command() -> None:
    result = runner.invoke(app, ["--help"])

    assert result.exit_code == 0
    for command in (
        *("serve", "init", "demo", "search", "list", "get", "update", "tags", "tag", "session", "time"),
        *("cleanup", "memory", "rules", "browse"),
    ):
        assert command in result.output


def test_an_unknown_command_fails_loudly_with_the_help() -> None:
    result = runner.invoke(app, ["frobnicate"])

    assert result.exit_code == 1
    assert "No such command 'frobnicate'" in result.output
    assert "Commands:" in result.output


def test_init_lays_out_the_folder_and_creates_the_database(tmp_path: Path) -> None:
    root = tmp_path / "dokoro"

    result = runner.invoke(app, ["init", "--path", str(root)])

    assert result.exit_code == 0, result.output
    for folder in ("daily", "decisions", "insights", "research", "retrospective/weekly", "archive", ".mcp"):
        assert (root / folder).is_dir(), folder
    for file in ("README.md", ".gitignore", "current.md"):
        assert (root / file).is_file(), file
    database = root / ".dokoro" / "db" / "dokoro.sqlite"
    assert database.is_file()
    with sqlite3.connect(database) as connection:
        tables = {row[0] for row in connection.execute("select name from sqlite_master where type = 'table'")}
    assert "conversation_summaries" in tables
    assert f"Created the dokoro folder {root}" in result.output
    assert str(database) in result.output


def test_init_twice_leaves_the_folder_untouched(tmp_path: Path) -> None:
    root = tmp_path / "dokoro"
    runner.invoke(app, ["init", "--path", str(root)])
    (root / "current.md").write_text("my notes\n", encoding="utf-8")

    result = runner.invoke(app, ["init", "--path", str(root)])

    assert result.exit_code == 0, result.output
    assert "already set up" in result.output
    assert (root / "current.md").read_text(encoding="utf-8") == "my notes\n"


def test_init_without_path_uses_dokoro_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "elsewhere"

    result = runner.invoke(app, ["init"], env={"DOKORO_PATH": str(target)})

    assert result.exit_code == 0, result.output
    assert (target / ".dokoro" / "db" / "dokoro.sqlite").is_file()
    assert not (tmp_path / "dokoro").exists()


def test_init_without_path_or_env_creates_dokoro_in_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DOKORO_PATH", raising=False)
    monkeypatch.delenv("DOKORO_DATABASE_URL", raising=False)

    result = runner.invoke(app, ["init"])

    assert result.exit_code == 0, result.output
    assert (tmp_path / "dokoro" / "daily").is_dir()
