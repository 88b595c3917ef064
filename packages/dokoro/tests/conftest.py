"""Fixtures of the launcher tests: a store filled with a bit of everything ``dokoro browse`` shows."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from dokoro_store import FrozenClock, Store

# Thursday 2026-06-11, 10:00 UTC (ISO week 24); every date of the world below is relative to it.
NOW = datetime(2026, 6, 11, 10, 0, tzinfo=UTC)
ROOT_FOR_CLAIMS = Path("/work/project")


def _file(root: Path, relative: str, text: str, at: datetime) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.utime(path, (at.timestamp(), at.timestamp()))
    return path


def fill_world(store: Store) -> None:
    """Files, plans, claims, agents, questions, feedback, entities, memories and a sweep status."""
    root = store.paths.root
    _file(
        root,
        "daily/2026-06-11-09h00-thursday-session-login.md",
        "# Session: login race\n\n- found the race in **token refresh**\n",
        NOW - timedelta(hours=1),
    )
    _file(
        root,
        "daily/2026-06-02-09h00-tuesday-session-cache.md",
        "# Session: cache\n\n- cache warmed on start\n",
        NOW - timedelta(days=9),
    )
    _file(
        root,
        "retrospective/weekly/2026-W22-consolidated.md",
        "# Week 22\n\n## Accomplishments\n- shipped search\n",
        NOW - timedelta(days=10),
    )
    _file(root, "archive/daily/2026-W21/2026-05-20-09h00-wednesday-session-old.md", "# Old\n", NOW - timedelta(days=22))
    ship = store.plans.create("Ship the login fix", ["reproduce", "fix the race", "add a regression test"], "first cut")
    store.plans.check(1, plan_id=ship.id, notes="seen twice")
    done = store.plans.create("Tidy the cache", ["drop stale keys"])
    store.plans.check(1, plan_id=done.id)
    old = store.plans.create("Old spike", ["try it"])
    store.plans.archive(old.id)
    store.coord.claims.claim(["src/auth/session.ts"], "claude", root=ROOT_FOR_CLAIMS, ttl_seconds=3600, intent="fix")
    store.working.questions.add("Is the token cache safe across tabs?", context="auth", priority="high")
    answered = store.working.questions.add("Which test runner?", priority="low").question
    store.working.questions.answer("vitest", answered.id)
    store.feedback.record("claude", "dokoro_search", "success", latency_ms=40, recorded_at=NOW - timedelta(minutes=5))
    store.feedback.record(
        "claude", "dokoro_plan_check", "failure", error_message="no plan", recorded_at=NOW - timedelta(minutes=3)
    )
    auth = store.graph.upsert_entity("component", "auth")
    login = store.graph.upsert_entity("service", "login-api")
    assert auth.id is not None and login.id is not None
    store.graph.upsert_relation(login.id, auth.id, "depends_on")
    store.memories.remember(type="rule", title="Run the tests before a commit", body="Always run pytest first.")
    store.memories.remember(
        type="fact", title="The API uses JWT", body="Tokens are JWT, signed with RS256.", trust="user-stated"
    )
    store.tracking.add_issue("Login fails after a token refresh", category="bug", priority="high")
    feature = store.tracking.add_feature("Offline mode", complexity="complex")
    store.tracking.start_feature(feature.item.id)
    (root / ".mcp").mkdir(exist_ok=True)
    status = {
        "last_run": "2026-06-11T08:00:00Z",
        "moved_daily": 1,
        "archived_plans": 1,
        "errors": [],
        "last_error": None,
    }
    (root / ".mcp" / "archive-status.json").write_text(json.dumps(status), encoding="utf-8")
    # Last: questions and plans append to current.md; the person's version and time win.
    _file(
        root,
        "current.md",
        "# Current Workspace\n\n## Task\nFix the login race\n\n## Progress\n- [x] reproduce\n- [ ] fix `session.ts`\n",
        NOW - timedelta(minutes=20),
    )


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock(NOW)


@pytest.fixture
def world(tmp_path: Path, clock: FrozenClock, database_url: str | None) -> Iterator[Store]:
    """A filled store on each backend in turn (SQLite, then PostgreSQL)."""
    with Store.open(tmp_path / "dokoro", database_url=database_url, clock=clock) as store:
        fill_world(store)
        yield store


@pytest.fixture
def sqlite_world(tmp_path: Path, clock: FrozenClock) -> Iterator[Store]:
    """A filled store on SQLite (snapshots and most screen tests)."""
    with Store.open(tmp_path / "dokoro", clock=clock) as store:
        fill_world(store)
        yield store
