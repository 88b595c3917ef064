"""The warm hook server (``dokoro.commands.hooks.warm``): the first hook of a store starts it, the
next hooks are answered through its socket, it leaves when idle; without a usable one a hook answers
in its own process. Real processes throughout, as Claude Code runs hooks."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from dokoro.commands.hooks.warm import socket_path
from dokoro_store import Store, StorePaths

FIXTURE = Path(__file__).parents[3] / "shared/dokoro-store/tests/fixtures/transcripts/session-one.jsonl"
SESSION = "7f3c2a10-5b1e-4c8d-9a2f-0e6b1d4c8a21"
# Background servers, real processes and their idle time-outs: the slow suite.
pytestmark = pytest.mark.slow

QUESTION = "what did we decide about session expiry for customers?"


def _env(**extra: str) -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if not k.startswith("DOKORO_")}, **extra}


def _payload(project: Path, prompt: str) -> dict[str, str]:
    return {"session_id": "later", "transcript_path": str(project / "none.jsonl"), "cwd": str(project),
            "hook_event_name": "UserPromptSubmit", "prompt": prompt}  # fmt: skip


def hook(project: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dokoro", "hook", "prompt", "--timeout", "60"],
        input=json.dumps(_payload(project, QUESTION)),
        capture_output=True,
        text=True,
        cwd=project,
        env=env,
        timeout=180,
    )


@pytest.fixture
def runtime() -> Iterator[Path]:
    # Short: a Unix socket's path has at most 107 bytes, and pytest's tmp_path is long.
    folder = Path(tempfile.mkdtemp(prefix="dkr-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def store_root(tmp_path: Path) -> Path:
    root = tmp_path / "shop" / "dokoro"
    transcript = tmp_path / f"{SESSION}.jsonl"
    shutil.copyfile(FIXTURE, transcript)
    with Store.open(root) as store:
        store.capture.ingest(SESSION, transcript)
    return root


def _until(condition, what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"waited {seconds} s for {what}"
        time.sleep(0.1)


def _journal(root: Path) -> list[dict[str, object]]:
    path = StorePaths(root).data_dir / "hooks.log"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_first_hook_starts_the_warm_server_and_the_next_are_answered_through_it(
    store_root: Path, runtime: Path
) -> None:
    project = store_root.parent
    env = _env(DOKORO_HOOK_WARM="on", DOKORO_HOOK_WARM_IDLE="20", XDG_RUNTIME_DIR=str(runtime))
    first = hook(project, env)
    assert first.returncode == 0 and f"turn:{SESSION}:a-0004" in first.stdout  # answered in its own process
    (folder,) = runtime.iterdir()
    _until(lambda: any(p.suffix == ".sock" for p in folder.iterdir()), "the warm server's socket")

    second = hook(project, env)
    assert second.returncode == 0
    assert json.loads(second.stdout) == json.loads(first.stdout)
    runs = [r for r in _journal(store_root) if r["event"] == "prompt"]
    assert [r.get("warm", False) for r in runs] == [False, True]

    # Idle for 20 s, the server leaves and takes its socket with it.
    _until(lambda: not any(p.suffix == ".sock" for p in folder.iterdir()), "the idle server to leave")


def test_a_socket_nobody_listens_on_is_answered_in_process_and_replaced(
    store_root: Path, runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = store_root.parent
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    path = socket_path(store_root, None, "auto")
    assert path is not None
    dead = socket.socket(socket.AF_UNIX)
    dead.bind(str(path))  # a server killed without cleaning up: its socket file stays
    dead.close()
    env = _env(DOKORO_HOOK_WARM="on", DOKORO_HOOK_WARM_IDLE="20", XDG_RUNTIME_DIR=str(runtime))
    done = hook(project, env)
    assert done.returncode == 0 and f"turn:{SESSION}:a-0004" in done.stdout

    def live() -> bool:
        with socket.socket(socket.AF_UNIX) as probe:
            try:
                probe.connect(str(path))
            except OSError:
                return False
            return True

    _until(live, "a new server on the dead socket's path")
    _until(lambda: not path.exists(), "the idle server to leave")


def test_a_runtime_folder_others_can_open_is_never_used(
    store_root: Path, runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = runtime / "dokoro"
    folder.mkdir()
    folder.chmod(0o777)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    assert socket_path(store_root, None, "auto") is None
    folder.chmod(0o700)
    path = socket_path(store_root, None, "auto")
    assert path is not None and path.parent == folder
    assert socket_path(store_root, "postgresql+psycopg://x/y", "auto") != path  # another database: another server
