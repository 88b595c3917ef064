"""Affective memory: recording outcomes, tallies, and the routing maths on hand-computed cases.

Every test runs on SQLite and on PostgreSQL (``any_store``). Outcomes are dated on the database
clock, so tests place them in the past relative to ``feedback.now()``.
"""

from __future__ import annotations

import math
from datetime import timedelta

import pytest
from dokoro_store import InvalidArgumentError, Store
from dokoro_store.affective.service import Outcome, wilson_lower_bound, z_for_confidence
from dokoro_store.db import sqlite_functions
from dokoro_store.models import AgentFeedback


def _seed(store: Store, agent: str, tool: str, outcome: str, count: int, *, days_ago: float = 0.0) -> None:
    at = store.feedback.now() - timedelta(days=days_ago)
    for _ in range(count):
        store.feedback.record(agent, tool, outcome, recorded_at=at)


def _route(store: Store, **kwargs):
    return {(r.agent_id, r.tool_name): r for r in store.feedback.route(**kwargs)}


# ---------------------------------------------------------------------------------------------- record


def test_a_recorded_outcome_is_stamped_with_the_database_clock(any_store: Store):
    before = any_store.feedback.now()
    row = any_store.feedback.record(
        "claude", "dokoro_recall", "partial", confidence=0.5, latency_ms=12, error_message="slow", metadata={"k": 1}
    )
    after = any_store.feedback.now()

    assert before - timedelta(seconds=1) <= row.recorded_at <= after + timedelta(seconds=1)
    with any_store.db.read() as session:
        stored = session.get(AgentFeedback, row.id)
    assert stored is not None
    assert (stored.agent_id, stored.tool_name, stored.outcome, stored.confidence, stored.latency_ms) == (
        "claude",
        "dokoro_recall",
        "partial",
        0.5,
        12,
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"outcome": "great"}, "outcome must be one of success, failure, partial, rejected, timeout"),
        ({"tool_name": "  "}, "tool_name must not be empty"),
        ({"agent_id": ""}, "agent_id must not be empty"),
        ({"confidence": 1.5}, "confidence must be between 0 and 1"),
        ({"latency_ms": -1}, "latency_ms must be 0 or more"),
    ],
)
def test_bad_feedback_is_refused_with_a_fix_and_writes_nothing(any_store: Store, kwargs, message):
    arguments = {"agent_id": "a", "tool_name": "t", "outcome": "success"} | kwargs
    agent, tool, outcome = arguments.pop("agent_id"), arguments.pop("tool_name"), arguments.pop("outcome")

    with pytest.raises(InvalidArgumentError, match=message):
        any_store.feedback.record(agent, tool, outcome, **arguments)
    assert any_store.feedback.query() == []


def test_a_batch_is_dated_when_each_outcome_happened(any_store: Store):
    now = any_store.feedback.now()
    written = any_store.feedback.record_many(
        [
            Outcome("a", "t1", "success", latency_ms=3, confidence=1.0, age_seconds=0),
            Outcome("a", "t1", "failure", latency_ms=9, confidence=1.0, age_seconds=3600),
        ]
    )

    assert written == 2
    assert any_store.feedback.record_many([]) == 0
    (tally,) = any_store.feedback.query()
    assert (tally.total, tally.success, tally.failure, tally.avg_latency_ms) == (2, 1, 1, 6.0)
    # The hour-old failure is dated an hour back: a since filter of 30 minutes ago leaves only the success.
    since = (now - timedelta(minutes=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    (recent,) = any_store.feedback.query(since=since)
    assert (recent.total, recent.success) == (1, 1)


def test_an_odd_outcome_in_a_batch_is_skipped_or_trimmed_not_the_batch(any_store: Store):
    written = any_store.feedback.record_many(
        [
            Outcome("a", "", "success"),
            Outcome("a", "t", "exploded"),
            Outcome("a", "x" * 500, "failure"),
            Outcome("a", "t", "success"),
        ]
    )

    assert written == 2
    assert sorted((t.tool_name[:3], t.total) for t in any_store.feedback.query()) == [("t", 1), ("xxx", 1)]
    assert max(len(t.tool_name) for t in any_store.feedback.query()) == 200


# ---------------------------------------------------------------------------------------------- query


def test_query_tallies_per_tool_most_used_first(any_store: Store):
    _seed(any_store, "a", "grep", "success", 3)
    _seed(any_store, "a", "grep", "failure", 1)
    _seed(any_store, "b", "edit", "success", 1)
    any_store.feedback.record("a", "edit", "timeout", confidence=0.2)
    any_store.feedback.record("a", "edit", "rejected", confidence=0.6)

    grep, edit = any_store.feedback.query()

    assert (grep.tool_name, grep.total, grep.success, grep.failure) == ("grep", 4, 3, 1)
    assert grep.success_rate == 0.75
    assert grep.avg_confidence is None  # no confidence given: nothing to average
    assert (edit.tool_name, edit.total, edit.success, edit.timeout, edit.rejected) == ("edit", 3, 1, 1, 1)
    assert edit.avg_confidence == pytest.approx(0.4)
    assert [t.tool_name for t in any_store.feedback.query(agent_id="b")] == ["edit"]
    assert [t.tool_name for t in any_store.feedback.query(tool_name="edit")] == ["edit"]
    assert [t.tool_name for t in any_store.feedback.query(limit=1)] == ["grep"]


def test_query_since_compares_times_not_strings(any_store: Store):
    _seed(any_store, "a", "old", "success", 1, days_ago=10)
    _seed(any_store, "a", "new", "success", 1, days_ago=1)
    cutoff = (any_store.feedback.now() - timedelta(days=5)).date().isoformat()

    assert [t.tool_name for t in any_store.feedback.query(since=cutoff)] == ["new"]
    with pytest.raises(InvalidArgumentError, match="since: 'last week' is not an ISO-8601 date"):
        any_store.feedback.query(since="last week")


# ---------------------------------------------------------------------------------------------- route


def test_one_lucky_success_does_not_outrank_95_out_of_100(any_store: Store):
    _seed(any_store, "a", "lucky", "success", 1)
    _seed(any_store, "a", "steady", "success", 95)
    _seed(any_store, "a", "steady", "failure", 5)

    steady, lucky = any_store.feedback.route(agent_id="a")

    assert (steady.tool_name, lucky.tool_name) == ("steady", "lucky")
    # Wilson lower bound, z = 1.96, worked by hand: (0.95 + 0.019208 - 0.046836) / 1.038416.
    assert round(steady.wilson_lower, 4) == 0.8882
    # (1 + 1.9208 - 1.96 * sqrt(0.9604)) / 4.8416
    assert round(lucky.wilson_lower, 4) == 0.2065
    assert lucky.decayed_rate == pytest.approx(1.0)  # reported, but not what ranks
    assert (steady.n, steady.success, steady.failure, steady.confident) == (100, 95, 5, True)
    assert lucky.confident is False


def test_recent_failures_outweigh_old_successes_with_a_short_half_life(any_store: Store):
    _seed(any_store, "a", "flaky", "success", 10, days_ago=60)
    _seed(any_store, "a", "flaky", "failure", 10, days_ago=0)

    short = _route(any_store, agent_id="a", half_life_days=7)[("a", "flaky")]
    default = _route(any_store, agent_id="a")[("a", "flaky")]

    # 10 * 0.5^(60/7) / (10 * 0.5^(60/7) + 10) = 0.002622
    assert short.decayed_rate == pytest.approx(0.002622, abs=1e-5)
    # 0.5^(60/14) = 0.05127; 0.05127 / 1.05127 = 0.04877
    assert default.decayed_rate == pytest.approx(0.04877, abs=1e-4)
    assert short.success == 10 and short.failure == 10  # raw counts are not decayed
    assert short.wilson_lower == default.wilson_lower == pytest.approx(wilson_lower_bound(10, 20))


def test_one_half_life_halves_the_weight(any_store: Store):
    _seed(any_store, "a", "t", "success", 2, days_ago=14)
    _seed(any_store, "a", "t", "failure", 2, days_ago=0)

    (route,) = any_store.feedback.route()

    # weights 0.5, 0.5, 1, 1 → 1 / 3
    assert route.decayed_rate == pytest.approx(1 / 3, abs=1e-6)


def test_an_outcome_dated_in_the_future_weighs_one(any_store: Store):
    _seed(any_store, "a", "t", "success", 1, days_ago=-3)
    _seed(any_store, "a", "t", "failure", 1, days_ago=0)

    (route,) = any_store.feedback.route()

    assert route.decayed_rate == pytest.approx(0.5, abs=1e-6)


def test_routing_keeps_each_agents_record_apart(any_store: Store):
    _seed(any_store, "alice", "deploy", "success", 10)
    _seed(any_store, "bob", "deploy", "failure", 10)

    everyone = any_store.feedback.route()
    bob = any_store.feedback.route(agent_id="bob")

    assert [(r.agent_id, r.tool_name, r.success, r.failure) for r in everyone] == [
        ("alice", "deploy", 10, 0),
        ("bob", "deploy", 0, 10),
    ]
    assert [(r.agent_id, r.tool_name, r.n, r.decayed_rate, r.wilson_lower) for r in bob] == [
        ("bob", "deploy", 10, 0.0, 0.0)
    ]
    assert [r.agent_id for r in any_store.feedback.route(tool_name="deploy")] == ["alice", "bob"]


def test_every_outcome_kind_is_counted_and_only_success_succeeds(any_store: Store):
    for outcome in ("success", "failure", "partial", "rejected", "timeout"):
        _seed(any_store, "a", "t", outcome, 1)

    (route,) = any_store.feedback.route(min_samples=5)

    assert (route.n, route.success, route.failure, route.partial, route.rejected, route.timeout) == (5, 1, 1, 1, 1, 1)
    assert route.decayed_rate == pytest.approx(0.2, abs=1e-6)
    assert route.confident is True
    assert any_store.feedback.route(min_samples=6)[0].confident is False


def test_routing_an_empty_store_returns_nothing(any_store: Store):
    assert any_store.feedback.route() == []
    assert any_store.feedback.query() == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"half_life_days": 0}, "half_life_days must be a positive number"),
        ({"half_life_days": math.inf}, "half_life_days must be a positive number"),
        ({"min_samples": 0}, "min_samples must be 1 or more"),
        ({"confidence_level": 1.0}, r"confidence_level must be in \[0.5, 1\)"),
    ],
)
def test_bad_routing_arguments_are_refused(store: Store, kwargs, message):
    with pytest.raises(InvalidArgumentError, match=message):
        store.feedback.route(**kwargs)


def test_the_default_confidence_is_the_references_z_and_others_come_from_scipy(store: Store):
    assert z_for_confidence(0.95) == 1.96
    assert z_for_confidence(0.99) == pytest.approx(2.5758, abs=1e-4)
    assert z_for_confidence(0.90) == pytest.approx(1.6449, abs=1e-4)
    _seed(store, "a", "t", "success", 9)
    _seed(store, "a", "t", "failure", 1)

    (at_95,) = store.feedback.route()
    (at_99,) = store.feedback.route(confidence_level=0.99)

    assert at_95.wilson_lower == pytest.approx(wilson_lower_bound(9, 10, 1.96))
    assert at_99.wilson_lower == pytest.approx(wilson_lower_bound(9, 10, 2.5758293))
    assert at_99.wilson_lower < at_95.wilson_lower


def test_without_scipy_a_non_default_confidence_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch):
    import sys

    monkeypatch.setitem(sys.modules, "scipy", None)
    monkeypatch.setitem(sys.modules, "scipy.stats", None)

    assert z_for_confidence(0.95) == 1.96
    with pytest.raises(InvalidArgumentError, match=r"needs scipy.*dokoro-store\[stats\]"):
        z_for_confidence(0.99)


def test_routing_works_where_sqlite_lacks_power(store: Store, monkeypatch: pytest.MonkeyPatch):
    _seed(store, "a", "t", "success", 2, days_ago=14)
    _seed(store, "a", "t", "failure", 2)
    (native,) = store.feedback.route()
    monkeypatch.setattr(sqlite_functions, "_has_power", lambda _connection: False)
    store.db.engine.dispose()  # new connections register the Python power()

    (fallback,) = store.feedback.route()

    assert fallback.decayed_rate == pytest.approx(native.decayed_rate, abs=1e-6)


def test_the_python_power_matches_sqlites_contract():
    import sqlite3

    connection = sqlite3.connect(":memory:")
    assert sqlite_functions.install_math_functions(connection, force=True) is True
    assert connection.execute("SELECT power(0.5, 2), power(NULL, 1), power(-8, 0.5)").fetchone() == (0.25, None, None)
    connection.close()
