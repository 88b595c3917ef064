"""``dokoro hook <event>`` as Claude Code runs it (a real process, the event on stdin), the
settings merge of ``dokoro hooks install|uninstall``, ``dokoro import transcripts`` and
``dokoro forget --session``."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from dokoro.cli import app
from dokoro.commands.hooks.events import parse_event
from dokoro.commands.hooks.run import parse_args
from dokoro.commands.hooks.settings_file import (
    SettingsError,
    installed_events,
    is_dokoro_command,
    plan_install,
    plan_uninstall,
    read_settings,
    write_settings,
)
from dokoro_store import Store, StorePaths, last_hook_runs
from typer.testing import CliRunner

FIXTURE = Path(__file__).parents[3] / "shared/dokoro-store/tests/fixtures/transcripts/session-one.jsonl"
SESSION = "7f3c2a10-5b1e-4c8d-9a2f-0e6b1d4c8a21"
runner = CliRunner(env={"COLUMNS": "200"})


def _env(database_url: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOKORO_")}
    # Each hook answers in its own process here: a warm server per test's store would outlive the
    # test (test_hooks_warm.py covers the warm path).
    env["DOKORO_HOOK_WARM"] = "off"
    if database_url:
        env["DOKORO_DATABASE_URL"] = database_url
    return env


def hook(
    event: str, payload: dict[str, Any] | str, cwd: Path, *args: str, database_url: str | None = None
) -> subprocess.CompletedProcess[str]:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(
        [sys.executable, "-m", "dokoro", "hook", event, *args],
        input=data,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=_env(database_url),
        timeout=180,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "shop"
    folder.mkdir()
    return folder


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    copy = tmp_path / "claude" / f"{SESSION}.jsonl"
    copy.parent.mkdir()
    shutil.copyfile(FIXTURE, copy)
    return copy


def _payload(
    event: str, project: Path, transcript: Path | None = None, session: str = SESSION, **fields: Any
) -> dict[str, Any]:
    return {
        "session_id": session,
        "transcript_path": str(transcript) if transcript else str(project / "none.jsonl"),
        "cwd": str(project),
        "hook_event_name": event,
        "permission_mode": "default",  # a field this reader does not know: ignored
        **fields,
    }


# ------------------------------------------------------------------------------------ the events


@pytest.mark.parametrize(
    ("raw", "field", "value"),
    [
        ({"hook_event_name": "SessionStart", "source": "startup"}, "source", "startup"),
        ({"hook_event_name": "SessionStart", "source": "compact"}, "source", "compact"),
        (
            {"hook_event_name": "UserPromptSubmit", "prompt": "why is the cache cold?"},
            "prompt",
            "why is the cache cold?",
        ),
        ({"hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": ""}, "trigger", "auto"),
        ({"hook_event_name": "Stop", "stop_hook_active": False}, "hook_event_name", "Stop"),
        ({"hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}, "reason", "prompt_input_exit"),
    ],
)
def test_each_events_documented_payload_is_read(raw: dict[str, Any], field: str, value: str) -> None:
    common = {
        "session_id": SESSION,
        "transcript_path": "/home/dev/.claude/projects/-home-dev-shop/x.jsonl",
        "cwd": "/home/dev/shop",
    }
    event = parse_event(json.dumps({**common, **raw, "model": {"id": "claude"}, "unknown": [1, 2]}).encode())
    assert getattr(event, field) == value
    assert (event.session_id, event.cwd) == (SESSION, "/home/dev/shop")


def test_an_event_that_is_not_an_object_is_refused() -> None:
    with pytest.raises(ValueError, match="not a JSON object"):
        parse_event(b"[1, 2]")
    with pytest.raises(ValueError):
        parse_event(b"{not json")
    assert parse_event(b"").session_id is None


def test_the_hook_options_are_checked() -> None:
    options = parse_args(["prompt", "--timeout", "3", "--budget=800", "--path", "store"])
    assert (options.timeout, options.budget, options.path) == (3.0, 800, Path("store"))
    assert parse_args(["session-start"]).budget == 1500 and parse_args(["prompt"]).timeout == 2.0
    for bad in (["later"], ["prompt", "--timeout", "0"], ["prompt", "--colour"], ["prompt", "--budget"]):
        with pytest.raises(ValueError):
            parse_args(bad)


# ------------------------------------------------------------------------------------ the settings


EXISTING = {
    "permissions": {"allow": ["Bash(npm test)"]},
    "hooks": {
        "Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "notify-send 'done'"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 5}]}],
    },
}


def test_install_adds_dokoros_hooks_and_keeps_every_other_entry(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(EXISTING), encoding="utf-8")
    change = plan_install(settings, "dokoro")
    assert change.changed and "+" in change.diff()
    write_settings(change)
    after = read_settings(settings)
    assert after["permissions"] == EXISTING["permissions"]
    assert after["hooks"]["PreToolUse"] == EXISTING["hooks"]["PreToolUse"]
    assert after["hooks"]["Stop"][0] == EXISTING["hooks"]["Stop"][0]
    assert after["hooks"]["UserPromptSubmit"] == [
        {"matcher": "", "hooks": [{"type": "command", "command": "dokoro hook prompt", "timeout": 10}]}
    ]
    assert set(installed_events(after)) == {"session-start", "prompt", "pre-compact", "stop", "session-end"}
    assert not plan_install(settings, "dokoro").changed  # twice: nothing more


def test_install_refreshes_dokoros_entry_in_place(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    old = {
        "hooks": {
            "UserPromptSubmit": [
                {"hooks": [{"type": "command", "command": "/old/bin/dokoro hook prompt", "timeout": 3}]}
            ]
        }
    }
    settings.write_text(json.dumps(old), encoding="utf-8")
    write_settings(plan_install(settings, "dokoro", options="--path /srv/store"))
    groups = read_settings(settings)["hooks"]["UserPromptSubmit"]
    assert groups == [
        {"hooks": [{"type": "command", "command": "dokoro hook prompt --path /srv/store", "timeout": 10}]}
    ]


def test_uninstall_removes_only_dokoros_hooks(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps(EXISTING), encoding="utf-8")
    write_settings(plan_install(settings, "uvx dokoro"))
    write_settings(plan_uninstall(settings))
    assert read_settings(settings) == EXISTING
    only_ours = tmp_path / "ours.json"
    write_settings(plan_install(only_ours, "dokoro"))
    write_settings(plan_uninstall(only_ours))
    assert read_settings(only_ours) == {}


def test_a_settings_file_dokoro_must_not_rewrite_is_left_alone(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"hooks": ', encoding="utf-8")
    with pytest.raises(SettingsError, match="not valid JSON"):
        plan_install(broken, "dokoro")
    assert broken.read_text(encoding="utf-8") == '{"hooks": '
    target = tmp_path / "real.json"
    target.write_text("{}", encoding="utf-8")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    with pytest.raises(SettingsError, match="symbolic link"):
        plan_install(link, "dokoro")
    odd = tmp_path / "odd.json"
    odd.write_text('{"hooks": []}', encoding="utf-8")
    with pytest.raises(SettingsError, match='"hooks" is not an object'):
        plan_install(odd, "dokoro")


@pytest.mark.parametrize(
    ("command", "event"),
    [
        ("dokoro hook prompt", "prompt"),
        ("/home/me/.local/bin/dokoro hook session-start --budget 900", "session-start"),
        ("uvx dokoro hook stop", "stop"),
        ("'/opt/my tools/dokoro' hook session-end", "session-end"),
        ("/usr/bin/python3 -m dokoro hook pre-compact", "pre-compact"),
        ("mydokoro hook prompt", None),
        ("dokoro hooks status", None),
        ("echo dokoro", None),
    ],
)
def test_dokoros_entries_are_told_apart_from_the_rest(command: str, event: str | None) -> None:
    assert is_dokoro_command(command) == event


def test_the_install_command_shows_the_change_and_writes_only_when_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    dry = runner.invoke(app, ["hooks", "install", "--dry-run"])
    assert dry.exit_code == 0 and "UserPromptSubmit" in dry.stdout and "Dry run" in dry.stdout
    assert not (tmp_path / ".claude" / "settings.json").exists()
    done = runner.invoke(app, ["hooks", "install", "--yes"])
    assert done.exit_code == 0, done.output
    assert set(installed_events(read_settings(tmp_path / ".claude" / "settings.json"))) >= {"prompt", "stop"}
    status = runner.invoke(app, ["hooks", "status"])
    assert "session-end" in status.stdout and "prompt" in status.stdout
    gone = runner.invoke(app, ["hooks", "uninstall", "--yes"])
    assert gone.exit_code == 0 and read_settings(tmp_path / ".claude" / "settings.json") == {}


# ------------------------------------------------------------------------------------ the hooks as processes


def test_a_hook_without_a_store_exits_0_and_says_nothing(project: Path, transcript: Path) -> None:
    for event in ("session-start", "prompt", "session-end"):
        done = hook(event, _payload("X", project, transcript, prompt="anything?"), project)
        assert (done.returncode, done.stdout) == (0, "")
    assert not (project / "dokoro").exists()  # nothing created


def test_a_bad_event_exits_0_says_nothing_and_is_journaled(project: Path) -> None:
    Store.open(project / "dokoro").close()
    done = hook("prompt", "{not json", project)
    assert (done.returncode, done.stdout) == (0, "")
    runs = last_hook_runs(StorePaths(project / "dokoro"))
    # The event named no folder: the hook looked from its own working folder (the project).
    assert runs["prompt"]["outcome"] == "error" and "not read" in runs["prompt"]["detail"]


def test_a_hook_past_its_time_out_prints_nothing_and_exits_0(project: Path, transcript: Path) -> None:
    Store.open(project / "dokoro").close()
    holder = sqlite3.connect(StorePaths(project / "dokoro").sqlite_file, timeout=1)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the database: the capture cannot write
    try:
        done = hook("stop", _payload("Stop", project, transcript), project, "--timeout", "1.5")
    finally:
        holder.rollback()
        holder.close()
    assert (done.returncode, done.stdout) == (0, "")
    run = last_hook_runs(StorePaths(project / "dokoro"))["stop"]
    assert run["outcome"] == "timed out" and "nothing printed" in run["detail"]
    with Store.open(project / "dokoro") as store:
        assert store.capture.sessions() == []  # the cut-short write was rolled back, to be done next time


def test_capture_switched_off_captures_nothing(project: Path, transcript: Path) -> None:
    Store.open(project / "dokoro").close()
    (project / ".dokoro.yml").write_text("capture: off\n", encoding="utf-8")
    done = hook("session-end", _payload("SessionEnd", project, transcript, reason="logout"), project)
    assert (done.returncode, done.stdout) == (0, "")
    assert "capture: off" in last_hook_runs(StorePaths(project / "dokoro"))["session-end"]["outcome"]
    with Store.open(project / "dokoro") as store:
        assert store.capture.sessions() == []


def test_session_start_says_nothing_on_an_empty_store_and_the_rules_otherwise(project: Path) -> None:
    Store.open(project / "dokoro").close()
    quiet = hook("session-start", _payload("SessionStart", project, source="startup"), project)
    assert (quiet.returncode, quiet.stdout) == (0, "")
    with Store.open(project / "dokoro") as store:
        rule = store.memories.remember(
            type="rule", title="Run the linter first", body="ruff check before commit"
        ).memory
    said = hook("session-start", _payload("SessionStart", project, source="startup"), project, "--budget", "400")
    output = json.loads(said.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == "SessionStart"
    assert "Run the linter first" in output["additionalContext"] and rule.id in output["additionalContext"]
    assert len(output["additionalContext"]) <= 400 * 4 + 200


def test_hooks_status_says_when_each_hook_last_ran_and_what_it_did(
    project: Path, transcript: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    Store.open(project / "dokoro").close()
    before = runner.invoke(app, ["hooks", "status", "--path", str(project / "dokoro")])
    hook("session-end", _payload("SessionEnd", project, transcript, reason="other"), project)
    monkeypatch.chdir(project)
    monkeypatch.setenv("DOKORO_HOOK_WARM", "off")
    after = runner.invoke(app, ["hooks", "status", "--path", str(project / "dokoro")])

    assert before.exit_code == after.exit_code == 0, after.output
    assert "none yet" in before.stdout and "none yet" not in after.stdout
    (line,) = [ln for ln in after.stdout.splitlines() if ln.strip().startswith("session-end ")]
    assert "captured: 4 turn(s)" in line and " ms)" in line  # what it did, and how long it took
    assert "Recently captured sessions:" in after.stdout and SESSION in after.stdout


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_later_session_is_told_what_an_earlier_one_said_in_other_words(
    backend: str, project: Path, transcript: Path, request: pytest.FixtureRequest
) -> None:
    url = None if backend == "sqlite" else str(request.getfixturevalue("postgres_url"))
    Store.open(project / "dokoro", database_url=url).close()
    ended = hook("session-end", _payload("SessionEnd", project, transcript, reason="other"), project, database_url=url)
    assert (ended.returncode, ended.stdout) == (0, "")
    assert last_hook_runs(StorePaths(project / "dokoro"))["session-end"]["outcome"].startswith("captured: 4 turn(s)")

    asked = hook(
        "prompt",
        _payload(
            "UserPromptSubmit",
            project,
            session="second-session",
            prompt="what did we decide about session expiry for customers?",
        ),
        project,
        "--timeout",
        "60",  # the default 2 s is for a person's prompt; a loaded test machine may need more
        database_url=url,
    )
    assert asked.returncode == 0, asked.stderr
    context = json.loads(asked.stdout)["hookSpecificOutput"]
    assert context["hookEventName"] == "UserPromptSubmit"
    assert f"turn:{SESSION}:a-0004" in context["additionalContext"]
    assert "sliding expiry" in context["additionalContext"]

    nothing = hook(
        "prompt",
        _payload(
            "UserPromptSubmit",
            project,
            session="second-session",
            prompt="quarterly revenue forecast for the bakery in Lisbon",
        ),
        project,
        "--timeout",
        "60",
        database_url=url,
    )
    assert (nothing.returncode, nothing.stdout) == (0, "")


# ------------------------------------------------------------------------------------ back-fill and forget


def test_import_transcripts_previews_then_adds_nothing_twice(tmp_path: Path, transcript: Path) -> None:
    root = tmp_path / "dokoro"
    Store.open(root).close()
    other = transcript.parent / "0b9e-second.jsonl"
    other.write_text(transcript.read_text(encoding="utf-8").replace(SESSION, "0b9e-second"), encoding="utf-8")
    dry = runner.invoke(app, ["import", "transcripts", str(transcript.parent), "--dry-run", "--path", str(root)])
    assert dry.exit_code == 0 and "2 transcript(s)" in dry.stdout and "2 new session(s)" in dry.stdout
    first = runner.invoke(app, ["import", "transcripts", str(transcript.parent), "--yes", "--path", str(root)])
    assert first.exit_code == 0, first.output
    assert "Captured 8 turn(s) from 2 transcript(s)" in first.stdout
    again = runner.invoke(app, ["import", "transcripts", str(transcript.parent), "--yes", "--path", str(root)])
    assert "0 new session(s), 2 captured before" in again.stdout
    with Store.open(root) as store:
        assert sorted(s.session_id for s in store.capture.sessions()) == ["0b9e-second", SESSION]
        assert sum(s.turns for s in store.capture.sessions()) == 8


def test_forget_session_removes_the_captured_session(tmp_path: Path, transcript: Path) -> None:
    root = tmp_path / "dokoro"
    with Store.open(root) as store:
        store.capture.ingest(SESSION, transcript)
    done = runner.invoke(app, ["forget", "--session", SESSION, "--yes", "--path", str(root)])
    assert done.exit_code == 0, done.output
    assert "4 turn(s)" in done.stdout
    with Store.open(root) as store:
        assert store.capture.sessions() == [] and store.capture.turns_of(SESSION) == []
    unknown = runner.invoke(app, ["forget", "--session", "nope", "--yes", "--path", str(root)])
    assert unknown.exit_code == 2 and "no captured session" in unknown.output


def test_the_quick_rules_answer_as_the_command_line_does(tmp_path: Path) -> None:
    root = tmp_path / "dokoro"
    with Store.open(root) as store:
        store.memories.remember(type="guardrail", title="Never push to main", body="use pull requests")
        store.memories.remember(type="rule", title="Run tests first", body="pytest before commit")
    quick = subprocess.run(
        [sys.executable, "-m", "dokoro", "rules", "--json", "--path", str(root)],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )
    typed = runner.invoke(app, ["rules", "--json", "--path", str(root)])
    assert quick.returncode == 0 and json.loads(quick.stdout) == json.loads(typed.stdout)
    text = subprocess.run(
        [sys.executable, "-m", "dokoro", "rules", "--path", str(root)],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )
    assert text.stdout.splitlines()[0].startswith("guardrail Never push to main")


def test_hook_help_falls_through_to_the_command_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "dokoro", "hook", "--help"], capture_output=True, text=True, env=_env(), timeout=120
    )
    assert done.returncode == 0 and "session-start" in done.stdout


def test_init_offers_the_hooks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    done = runner.invoke(app, ["init", "--path", str(tmp_path / "dokoro")])
    assert done.exit_code == 0, done.output
    assert "dokoro hooks install" in done.stdout  # no terminal to ask on: it says how


def test_capture_is_switched_off_and_on_for_the_store_or_one_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "dokoro"
    Store.open(root).close()
    monkeypatch.chdir(tmp_path)
    off = runner.invoke(app, ["hooks", "capture", "off", "--path", str(root)])
    assert off.exit_code == 0 and (root / ".dokoro.yml").read_text(encoding="utf-8") == "capture: off\n"
    with Store.open(root) as store:
        assert not store.capture.switches(None).on
    runner.invoke(app, ["hooks", "capture", "on", "--path", str(root)])
    (tmp_path / ".dokoro.yml").write_text("exclude:\n  - secrets/**\n", encoding="utf-8")
    runner.invoke(app, ["hooks", "capture", "off", "--project"])
    assert (tmp_path / ".dokoro.yml").read_text(encoding="utf-8") == "capture: off\nexclude:\n  - secrets/**\n"
    with Store.open(root) as store:
        switches = store.capture.switches(tmp_path)
        assert not switches.on and switches.exclude == ["secrets/**"]
    assert runner.invoke(app, ["hooks", "capture", "maybe", "--path", str(root)]).exit_code == 2


@pytest.mark.parametrize(
    "argv",
    [["hook", "session-start", "--timeout", "60"], ["hook", "prompt", "--timeout", "60"], ["hook", "stop"], ["rules"]],
)
def test_the_hooks_and_rules_load_neither_the_cli_nor_the_server_stack(
    argv: list[str], project: Path, transcript: Path
) -> None:
    with Store.open(project / "dokoro") as store:
        store.memories.remember(type="rule", title="Run the linter first", body="ruff check before commit")
    code = (
        "import sys\n"
        "from dokoro.__main__ import main\n"
        f"sys.argv = ['dokoro', *{argv!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = {'mcp', 'dokoro_server', 'typer', 'rich', 'click', 'pydantic_settings', 'starlette', 'uvicorn'}\n"
        "sys.stderr.write('LOADED ' + ' '.join(sorted({m.split('.')[0] for m in sys.modules} & heavy)) + '\\n')\n"
    )
    event = _payload("UserPromptSubmit", project, transcript, prompt="what did we decide about session expiry?")
    done = subprocess.run(
        [sys.executable, "-c", code], input=json.dumps(event), capture_output=True, text=True, cwd=project, env=_env(),
        timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("LOADED")]
    assert line == "LOADED "
