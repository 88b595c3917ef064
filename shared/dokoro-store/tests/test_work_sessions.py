"""Work sessions a person starts and ends from the command line, on both backends."""

from __future__ import annotations

from datetime import timedelta

import pytest
from dokoro_store import NotFoundError


def test_a_session_starts_ends_with_its_duration_and_its_summary_is_recalled(any_store, clock):
    any_store.docs.save("login", "Fix the login race", title="Login race")
    started = any_store.work_sessions.start(focus="login")
    assert started.id.startswith("session-") and started.status == "active" and started.focus == "login"
    assert [s.id for s in any_store.work_sessions.status().active] == [started.id]

    clock.advance(timedelta(minutes=47))
    ended = any_store.work_sessions.end("Found the race in the token refresh")

    assert (ended.status, ended.duration_min) == ("completed", 47)
    status = any_store.work_sessions.status()
    assert status.active == [] and status.last_ended is not None and status.last_ended.id == started.id
    recalled = any_store.episodic.recall(limit=5)
    assert [(r.session_id, r.ai_model) for r in recalled] == [(started.id, "human")]


def test_ending_without_an_active_session_or_focusing_on_a_missing_doc_says_what_to_do(any_store):
    with pytest.raises(NotFoundError, match="dokoro session start"):
        any_store.work_sessions.end()
    with pytest.raises(NotFoundError, match="dokoro list"):
        any_store.work_sessions.start(focus="nope")


def test_agent_sessions_are_not_a_persons(any_store):
    any_store.episodic.add_summary("agent-s1", "claude", "did things")

    assert any_store.work_sessions.status().active == []
