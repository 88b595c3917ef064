"""The workspace lock file: damaged locks expire, takeovers keep the previous log, dump names stay unique."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import pytest
from dokoro_store import FrozenClock, Store, WorkspaceLockedError


def test_an_empty_lock_file_left_by_a_crash_expires_like_any_lock(store: Store, clock: FrozenClock) -> None:
    lock = store.paths.workspace_lock
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("", encoding="utf-8")
    written = clock.now().timestamp()
    os.utime(lock, (written, written))

    with pytest.raises(WorkspaceLockedError, match="locked by unknown"):
        store.working.workspace.claim("right after the crash")

    clock.advance(timedelta(minutes=31))
    claimed = store.working.workspace.claim("later")
    assert claimed.took_over == "unknown"


def test_a_takeover_of_a_stale_lock_keeps_the_previous_sessions_log(store: Store, clock: FrozenClock) -> None:
    workspace = store.working.workspace
    workspace.claim("alice's refactor", agent_id="alice")
    workspace.log("half-way: moved the cache behind an interface")

    clock.advance(timedelta(minutes=31))  # alice's lock expired: stale
    taken = workspace.claim("bob's hotfix", agent_id="bob")

    assert taken.took_over == "alice"
    (kept,) = store.paths.daily_dir.glob("*-abandoned-alice-s-refactor.md")
    assert "half-way: moved the cache behind an interface" in kept.read_text(encoding="utf-8")
    assert "bob's hotfix" in store.paths.current_md.read_text(encoding="utf-8")


def test_two_developers_dumping_the_same_task_in_the_same_minute_keep_both(
    tmp_path: Path, clock: FrozenClock, database_url: str | None
) -> None:
    # Two machines: two folders, one (team) database.
    database_url = database_url or f"sqlite:///{tmp_path / 'team.sqlite'}"
    with (
        Store.open(tmp_path / "alice", database_url=database_url, clock=clock) as alice,
        Store.open(tmp_path / "bob", database_url=database_url, clock=clock) as bob,
    ):
        alice.working.workspace.claim("fix login")
        bob.working.workspace.claim("fix login")
        first = alice.working.workspace.dump("alice done", keep_active=False)
        second = bob.working.workspace.dump("bob done", keep_active=False)
    assert first.doc_id != second.doc_id
    assert second.doc_id == f"{first.doc_id}-2"
