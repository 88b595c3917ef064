"""The command line speaks to a person at a shell: every message says what to type
(`dokoro memory forget ID --purge --yes`), never a Python repr or a tool's argument syntax; a
mistyped command or category gets a "did you mean"; `-h` and `help` work; ids stay whole at 80
columns; issues are listed and found like every other document.

Each case checks the exit code and the one line a person reads."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from dokoro.cli import app
from dokoro.commands._words import for_people
from dokoro_store import Store
from typer.testing import CliRunner

runner = CliRunner()
ENV = {"DOKORO_PATH": "", "DOKORO_DATABASE_URL": "", "COLUMNS": "80"}
TOOL_SYNTAX = re.compile(r"\bdokoro_[a-z_]+|\b[a-z_]+=(true|false)\b|id='")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "dokoro"
    with Store.open(root) as store:
        store.memories.remember(type="fact", title="The API uses JWT", body="Tokens are JWT, signed with RS256.")
        store.tracking.add_issue("Login fails after a token refresh", priority="high")
        store.docs.save(
            "2026-12-03-17h54-thursday-session-write-the-regression-test-for",
            "# Session: write the regression test for the login race",
            title="Session: Write the regression test for the login race",
            doc_type="session",
        )
        store.docs.index_docs()
    return root


def _memory_id(folder: Path) -> str:
    with Store.open(folder) as store:
        return store.memories.of_types(["fact"])[0].id


def _run(*args: str, folder: Path | None = None) -> tuple[int, str]:
    path = ["--path", str(folder)] if folder is not None else []
    result = runner.invoke(app, [*args, *path], env=ENV)
    return result.exit_code, result.output


def _line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1, output
    assert not TOOL_SYNTAX.search(lines[0]), lines[0]
    return lines[0]


# ---------------------------------------------------------------------- dokoro memory forget
def test_forget_without_a_reason_says_what_to_type(folder):
    code, out = _run("memory", "forget", "mem_x", folder=folder)

    assert code == 2
    line = _line(out)
    assert 'dokoro memory forget mem_x --reason "…"' in line and "dokoro memory forget mem_x --purge --yes" in line


def test_forget_with_a_reason_says_what_it_did(folder):
    memory_id = _memory_id(folder)

    code, out = _run("memory", "forget", memory_id, "--reason", "we moved to opaque tokens", folder=folder)

    assert code == 0
    assert _line(out) == f"Deprecated memory {memory_id} (The API uses JWT): we moved to opaque tokens."


def test_purge_without_yes_and_no_terminal_deletes_nothing_and_says_how(folder):
    memory_id = _memory_id(folder)

    code, out = _run("memory", "forget", memory_id, "--purge", folder=folder)

    assert code == 1
    assert _line(out).endswith(f"run dokoro memory forget {memory_id} --purge --yes")
    code, out = _run("memory", "forget", memory_id, "--purge", "--yes", folder=folder)
    assert code == 0 and _line(out) == f"Deleted memory {memory_id} (The API uses JWT) for good."


def test_an_unknown_memory_points_at_the_list_command(folder):
    code, out = _run("memory", "show", "mem_nope", folder=folder)

    assert code == 1
    assert _line(out) == "dokoro: no memory 'mem_nope'; list ids with `dokoro memory list`"


def test_renew_speaks_in_options(folder):
    memory_id = _memory_id(folder)

    code, out = _run("memory", "renew", memory_id, "--retire", "--review-after", "2030-01-01", folder=folder)

    assert code == 2
    assert _line(out).startswith("dokoro: --retire takes no new dates")


def test_tool_phrases_are_said_as_commands():
    assert for_people("reason is required; to delete it for good use purge=true with confirm=true") == (
        "reason is required; to delete it for good: `dokoro memory forget ID --purge --yes`"
    )
    assert for_people("no memory 'x'; find ids with dokoro_recall or dokoro_memory_status") == (
        "no memory 'x'; list ids with `dokoro memory list`"
    )
    assert for_people("give a later review_after to renew it, or retire=true with a reason") == (
        "give a later --review-after to renew it, or --retire with a reason"
    )
    assert for_people("no document 'x'; list ids with `dokoro list`") == "no document 'x'; list ids with `dokoro list`"


# ---------------------------------------------------------------------- did you mean, -h, help
@pytest.mark.parametrize(
    ("typed", "meant"), [(["serch", "x"], "search"), (["memroy", "list"], "memory"), (["memory", "lst"], "list")]
)
def test_a_mistyped_command_names_the_one_meant(typed, meant):
    code, out = _run(*typed)

    assert code == 1
    assert f"Did you mean '{meant}'?" in _line(out)


def test_dash_h_and_help_print_the_help():
    long = runner.invoke(app, ["memory", "forget", "--help"], env=ENV)
    short = runner.invoke(app, ["memory", "forget", "-h"], env=ENV)
    spoken = runner.invoke(app, ["help", "memory", "forget"], env=ENV)
    top = runner.invoke(app, ["help"], env=ENV)

    assert long.exit_code == short.exit_code == spoken.exit_code == top.exit_code == 0
    assert long.output == short.output == spoken.output
    assert long.output.startswith("Usage: dokoro memory forget")
    assert top.output == runner.invoke(app, ["-h"], env=ENV).output and "Commands:" in top.output


def test_help_for_a_mistyped_command_names_the_one_meant():
    code, out = _run("help", "serch")

    assert code == 1 and "Did you mean 'search'?" in _line(out)


# ---------------------------------------------------------------------- ids whole, issues listed
def test_ids_stay_whole_on_one_line_at_80_columns(folder):
    long_id = "2026-12-03-17h54-thursday-session-write-the-regression-test-for"

    code, out = _run("list", "--status", "all", folder=folder)

    assert code == 0
    assert all(len(line) <= 80 for line in out.splitlines()), out
    ids = [line.split()[0] for line in out.splitlines()[1:] if line and not line.startswith((" ", "─", "id "))]
    assert long_id in ids and any(i.startswith("issue:") for i in ids), out
    code, out = _run("memory", "list", folder=folder)
    assert code == 0 and re.search(r"^mem_\w+ ", out, re.MULTILINE), out


def test_an_issue_is_listed_and_found(folder):
    default_code, default = _run("list", folder=folder)
    listed_code, listed = _run("list", "--status", "pending", "--type", "issue", folder=folder)
    found_code, found = _run("search", "login fails after a token refresh", folder=folder)

    assert default_code == listed_code == found_code == 0
    assert _line(default) == (  # a new issue is pending, so the default (active) list says where it is
        "No active documents. Other statuses: inbox 1, pending 1 (`dokoro list --status all`, or --status NAME)."
    )
    assert re.search(r"^issue:\S+ +Login fails after a", listed, re.MULTILINE), listed
    assert re.search(r"^issue:\S+ +Login fails after a", found, re.MULTILINE), found
