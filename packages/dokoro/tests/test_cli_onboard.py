"""``dokoro onboard`` through Typer's runner (issue 46, item 5): the project's files proposed as
typed memories; at a terminal each is approved, edited, rejected or left; ``--yes`` approves all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dokoro.cli import app
from dokoro_store import Store
from typer.testing import CliRunner

runner = CliRunner(env={"COLUMNS": "200"})


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    project = tmp_path / "harbour"
    project.mkdir()
    (project / "README.md").write_text("# Harbour\n\nHarbour shows tide readings on a map.\n", encoding="utf-8")
    (project / "Makefile").write_text("test:\n\tuv run pytest -q\nlint:\n\tuv run ruff check .\n", encoding="utf-8")
    (project / "pyproject.toml").write_text('[project]\nname = "harbour"\nrequires-python = ">=3.12"\n', "utf-8")
    root = tmp_path / "dokoro"
    Store.open(root).close()
    return project, root


def invoke(project: Path, root: Path, *args: str, **kwargs: object):
    return runner.invoke(app, ["onboard", "--project", str(project), "--path", str(root), *args], **kwargs)


def test_dry_run_shows_the_drafts_and_files_nothing(folders):
    project, root = folders

    done = invoke(project, root, "--dry-run")

    assert done.exit_code == 0, done.output
    assert "Read 3 file(s) of harbour: README.md, pyproject.toml, Makefile" in done.output
    assert "context: About harbour" in done.output and "make test (runs `uv run pytest -q`)" in done.output
    assert "Dry run: nothing filed." in done.output
    with Store.open(root) as store:
        assert store.proposals.listing(kind="onboard", scan=False).proposals == []


def test_without_a_terminal_the_proposals_wait_for_a_decision(folders):
    project, root = folders

    done = invoke(project, root)

    assert done.exit_code == 0, done.output
    assert "3 proposal(s) filed." in done.output
    assert "3 proposal(s) wait for a decision: `dokoro memory proposals list --kind onboard`" in done.output


def test_yes_approves_every_draft_as_it_is(folders):
    project, root = folders

    done = invoke(project, root, "--yes", "--json")

    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert report["filed"] == 3 and {d["status"] for d in report["drafts"]} == {"approved"}
    with Store.open(root) as store:
        assert {m.type for m in store.memories.of_types(["context", "reference"])} == {"context", "reference"}


def test_at_a_terminal_each_draft_is_approved_rejected_or_left(folders, monkeypatch):
    import dokoro.commands.onboard as command

    project, root = folders
    monkeypatch.setattr(command, "stdin_is_terminal", lambda: True)

    # about: approve, stack: reject, commands: skip (Enter).
    done = invoke(project, root, input="a\nr\n\n")

    assert done.exit_code == 0, done.output
    assert "approved: new context" in done.output and "rejected prop_" in done.output
    assert "1 proposal(s) wait for a decision" in done.output
    with Store.open(root) as store:
        statuses = {p.evidence["topic"]: p.status for p in store.proposals.listing("all", kind="onboard").proposals}
    assert statuses == {"about": "approved", "stack": "rejected", "commands": "proposed"}
