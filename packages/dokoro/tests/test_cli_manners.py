"""The command line never surprises: only ``init`` (and a server) makes a store; every other
command on a folder without one says where it looked and how to make one; a read-only store, a
file in the store's place and a bad path get one line, never a traceback; a server typed in a
terminal prints its help; ``--help`` and ``--version`` create nothing.

Each case asserts the exit code, that the message is one line, and that nothing was created.
"""

from __future__ import annotations

import contextlib
import os
import pty
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from dokoro.cli import app
from dokoro_store import Store
from typer.testing import CliRunner

runner = CliRunner()
BIN = Path(sys.executable).parent
SERVERS = ("dokoro-core", "dokoro-search", "dokoro-planning", "dokoro-tracking", "dokoro-analytics", "dokoro-bridge")
READ_COMMANDS = (
    ["list"],
    ["search", "login"],
    ["browse"],
    ["rules"],
    ["doctor"],
    ["import", "missing.json"],
    ["memory", "list"],
    ["token", "list"],
    ["session", "status"],
    ["tags"],
    ["export"],
    ["reindex"],
)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOKORO_")}
    return {**env, **extra}


def _run(
    args: list[str], cwd: Path, *, stdin: int | None = subprocess.DEVNULL, **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=_env(**env), stdin=stdin, capture_output=True, text=True, timeout=300)


def _one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    assert "Traceback" not in text
    return lines[0]


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


# ---------------------------------------------------------------------- a missing store
@pytest.mark.parametrize("command", READ_COMMANDS, ids=lambda c: " ".join(c))
def test_a_command_on_a_missing_store_says_where_it_looked_and_creates_nothing(tmp_path: Path, command) -> None:
    where = tmp_path / "typo"

    result = runner.invoke(app, [*command, "--path", str(where)], env={"DOKORO_PATH": ""})

    assert result.exit_code == 1, result.output
    line = _one_line(result.output)
    assert str(where) in line and "--path" in line and "dokoro init" in line
    assert not where.exists() and _tree(tmp_path) == []


def test_a_typo_in_dokoro_path_creates_no_tree(tmp_path: Path) -> None:
    typo = tmp_path / "projcet" / "dokoro"

    done = _run([str(BIN / "dokoro"), "list"], tmp_path, DOKORO_PATH=str(typo))

    assert done.returncode == 1, done.stderr
    line = _one_line(done.stderr)
    assert str(typo) in line and "DOKORO_PATH" in line and "dokoro init" in line
    assert _tree(tmp_path) == []


def test_the_default_store_of_the_working_folder_is_named_when_missing(tmp_path: Path) -> None:
    done = _run([str(BIN / "dokoro"), "browse"], tmp_path)

    assert done.returncode == 1
    line = _one_line(done.stderr)
    assert str(tmp_path / "dokoro") in line and "default ./dokoro" in line
    assert _tree(tmp_path) == []


def test_init_creates_the_store_the_others_then_use(tmp_path: Path) -> None:
    root = tmp_path / "dokoro"
    assert runner.invoke(app, ["init", "--path", str(root)]).exit_code == 0

    assert runner.invoke(app, ["list", "--path", str(root)]).exit_code == 0
    assert runner.invoke(app, ["rules", "--path", str(root)]).exit_code == 0


# ---------------------------------------------------------------------- a store that cannot be used
def test_a_file_in_the_stores_place_gets_one_line(tmp_path: Path) -> None:
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a store\n", encoding="utf-8")

    by_env = _run([str(BIN / "dokoro"), "list"], tmp_path, DOKORO_PATH=str(a_file))
    inside = _run([str(BIN / "dokoro"), "doctor"], tmp_path, DOKORO_PATH=str(a_file / "dokoro"))
    by_option = runner.invoke(app, ["list", "--path", str(a_file)])

    assert by_env.returncode == 1 and "is a file, not a dokoro folder" in _one_line(by_env.stderr)
    assert inside.returncode == 1 and str(a_file / "dokoro") in _one_line(inside.stderr)
    assert by_option.exit_code == 2 and "is a file" in by_option.output and "Traceback" not in by_option.output
    assert a_file.read_text(encoding="utf-8") == "not a store\n"
    assert _tree(tmp_path) == ["notes.txt"]


def test_the_store_itself_words_a_file_in_its_place(tmp_path: Path) -> None:
    from dokoro_store import StoreUnavailableError

    a_file = tmp_path / "passwd"
    a_file.write_text("root:x:0:0\n", encoding="utf-8")

    with pytest.raises(StoreUnavailableError, match="is a file, not a dokoro folder"):
        Store.open(a_file)
    with pytest.raises(StoreUnavailableError, match="is a file; point DOKORO_PATH"):
        Store.open(a_file / "dokoro")
    assert _tree(tmp_path) == ["passwd"]


@contextlib.contextmanager
def _read_only(root: Path) -> Iterator[None]:
    """The store's files and folders made unwritable: by mode bits, or (as root, whom modes do not
    stop) by the immutable attribute."""
    paths = [root, *sorted(root.rglob("*"))]
    if os.geteuid() != 0:
        for path in paths:
            path.chmod(path.stat().st_mode & ~0o222)
        try:
            yield
        finally:
            for path in paths:
                path.chmod(path.stat().st_mode | 0o200)
        return
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", *map(str, paths)], capture_output=True).returncode != 0:
        pytest.skip("running as root where the immutable attribute cannot be set: nothing is read-only to root")
    try:
        yield
    finally:
        subprocess.run([chattr, "-i", *map(str, paths)], check=True)


def test_a_read_only_store_gets_one_line_for_every_command(tmp_path: Path) -> None:
    root = tmp_path / "dokoro"
    Store.open(root).close()
    before = _tree(root)

    with _read_only(root):
        results = {
            name: _run([str(BIN / "dokoro"), name, "--path", str(root)], tmp_path) for name in ("list", "doctor")
        }

    for name, done in results.items():
        assert done.returncode == 2, (name, done.stderr)
        line = _one_line(done.stderr)
        assert "read-only" in line and str(root) in line
    assert _tree(root) == before


# ---------------------------------------------------------------------- servers typed by a person
def test_dokoro_on_a_terminal_prints_a_short_help_instead_of_waiting(tmp_path: Path) -> None:
    leader, follower = pty.openpty()
    try:
        for script in ("dokoro", "dokoro-core"):
            done = _run([str(BIN / script)], tmp_path, stdin=follower)
            assert done.returncode == 0, done.stderr
            assert "MCP" in done.stdout and "claude mcp add" in done.stdout
    finally:
        os.close(leader)
        os.close(follower)
    assert _tree(tmp_path) == []


@pytest.mark.parametrize("script", SERVERS)
def test_every_server_script_prints_help_and_version_and_creates_nothing(tmp_path: Path, script: str) -> None:
    helped = _run([str(BIN / script), "--help"], tmp_path)
    versioned = _run([str(BIN / script), "--version"], tmp_path)
    refused = _run([str(BIN / script), "--verbose"], tmp_path)

    assert helped.returncode == 0 and f"usage: {script}" in helped.stdout and "DOKORO_PATH" in helped.stdout
    assert versioned.returncode == 0 and versioned.stdout.startswith(f"{script} ")
    assert refused.returncode == 2 and "--verbose" in _one_line(refused.stderr)
    assert _tree(tmp_path) == []


# ---------------------------------------------------------------------- the command line itself
def test_the_quick_version_is_the_installed_one_and_loads_no_command_line(tmp_path: Path) -> None:
    from importlib.metadata import version

    for flag in ("--version", "-V"):
        probe = (
            f"import sys; from dokoro.__main__ import main; sys.argv = ['dokoro', '{flag}']; main(); "
            "print(sorted(m for m in ('typer', 'rich', 'pydantic_settings', 'dokoro.cli') if m in sys.modules))"
        )
        done = _run([sys.executable, "-c", probe], tmp_path)
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines() == [f"dokoro {version('dokoro')}", "[]"]
    assert _tree(tmp_path) == []


def test_version_and_shell_completion(tmp_path: Path) -> None:
    version = runner.invoke(app, ["--version"])
    completion = runner.invoke(app, ["--show-completion", "bash"])
    completed = _run(
        [str(BIN / "dokoro")], tmp_path, _DOKORO_COMPLETE="complete_bash", COMP_WORDS="dokoro memo", COMP_CWORD="1"
    )

    assert version.exit_code == 0 and version.output.startswith("dokoro ")
    assert completion.exit_code == 0 and "_dokoro_completion" in completion.output
    assert completed.returncode == 0 and completed.stdout.split() == ["memory"]
    assert _tree(tmp_path) == []


def test_an_empty_search_is_refused_before_any_store_is_looked_for(tmp_path: Path) -> None:
    result = runner.invoke(app, ["search", "  ", "--path", str(tmp_path / "nowhere")])

    assert result.exit_code == 2
    assert "must not be empty" in _one_line(result.output)
    assert _tree(tmp_path) == []
