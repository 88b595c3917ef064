"""``dokoro demo``: the Monday/Thursday story against real server processes."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tempfile
from datetime import date, timedelta
from pathlib import Path

import pytest
from dokoro.commands import demo
from rich.console import Console


@pytest.mark.slow
def test_the_demo_plays_the_story_and_thursday_recalls_monday(tmp_path: Path) -> None:
    # The demo makes its store with tempfile, which honours TMPDIR: keep it inside tmp_path.
    env = {**os.environ, "COLUMNS": "200", "TMPDIR": str(tmp_path)}
    env.pop("DOKORO_PATH", None)
    env.pop("DOKORO_DATABASE_URL", None)

    done = subprocess.run(
        [sys.executable, "-m", "dokoro", "demo"], capture_output=True, text=True, env=env, timeout=300, check=False
    )

    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    monday, thursday = out.split("Thursday — ", 1)
    assert "→ dokoro_workspace_claim" in monday
    assert "summary recorded for session" in monday
    recall = thursday.split("→ dokoro_session_recall", 1)[1].split("→ ", 1)[0]
    assert "-login model=claude-opus-4-7 msgs=42" in recall
    assert "race in session refresh" in recall
    assert "partial fix in auth/session.ts" in recall
    assert "The login race needs a regression test" in thursday
    assert "-monday-session-fix-the-flaky" in monday and "-thursday-session-write-the-regression" in thursday
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("today", [date(2026, 12, 7) + timedelta(days=n) for n in range(7)])
def test_the_story_is_the_last_thursday_and_the_monday_before_it(today: date) -> None:
    monday, thursday = demo.story_days(today)

    assert (monday.strftime("%A"), thursday.strftime("%A")) == ("Monday", "Thursday")
    assert thursday <= today < thursday + timedelta(days=7) and thursday - monday == timedelta(days=3)


@pytest.mark.slow
def test_an_error_result_fails_the_demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    broken = demo.Session(
        title="Broken",
        prompt="You ▸ answer a question nobody asked",
        calls=(
            demo.Call("dokoro_workspace_status", {}),
            demo.Call("dokoro_question_answer", {"id": "q-does-not-exist", "answer": "42"}),
            demo.Call("dokoro_workspace_status", {}),
        ),
    )
    monkeypatch.setattr(demo, "story", lambda _monday: (broken,))
    out = io.StringIO()

    ok = demo.run_demo(console=Console(file=out, width=200, soft_wrap=True))

    assert not ok
    text = out.getvalue()
    assert "dokoro_question_answer returned an error result (after 1 successful calls)" in text
    assert text.count("→ dokoro_workspace_status") == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_keep_leaves_the_store_in_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    short = demo.Session(title="Short", prompt="You ▸ hi", calls=(demo.Call("dokoro_workspace_status", {}),))
    monkeypatch.setattr(demo, "story", lambda _monday: (short,))
    out = io.StringIO()

    ok = demo.run_demo(keep=True, console=Console(file=out, width=400, soft_wrap=True))

    assert ok
    kept = Path(out.getvalue().split("Store kept at ", 1)[1].split(" (remove", 1)[0])
    assert kept.parent.parent == tmp_path
    assert (kept / ".dokoro" / "db" / "dokoro.sqlite").is_file()
