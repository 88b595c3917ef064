"""dokoro_feedback_record/query/route and the automatic capture of every tool outcome."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest

pytestmark = pytest.mark.anyio
BOTH_BACKENDS = pytest.mark.parametrize("store_url", ["sqlite", "postgresql"], indirect=True)


@pytest.fixture
def agent_client(make_client):
    """Factory: a client of a server acting for ``agent_id``, with capture on or off."""

    def connect(agent_id: str = "claude-a", auto_feedback: bool = True):
        return make_client(agent_id=agent_id, auto_feedback=auto_feedback)

    return connect


def _seed(store, agent, tool, outcome, count, days_ago=0.0):
    at = store.feedback.now() - timedelta(days=days_ago)
    for _ in range(count):
        store.feedback.record(agent, tool, outcome, recorded_at=at)


def _rows(store):
    from dokoro_store.models import AgentFeedback
    from sqlmodel import select

    with store.db.read() as session:
        return list(session.exec(select(AgentFeedback).order_by(AgentFeedback.id)))


# ---------------------------------------------------------------------------------------------- record / query


@BOTH_BACKENDS
async def test_record_stores_an_outcome_and_says_so(call, store):
    outcome = await call(
        "dokoro_feedback_record",
        agent_id="claude-a",
        tool_name="Bash",
        outcome="timeout",
        confidence=0.8,
        latency_ms=30000,
        error_message="hung on npm install",
        session_id="session-1",
        metadata={"cmd": "npm i"},
    )

    assert outcome.content[0].text == "recorded timeout for Bash"
    assert outcome.structured_content["outcome"] == "timeout"
    assert outcome.structured_content["recorded_at"].endswith("Z")
    (row,) = [r for r in _rows(store) if r.tool_name == "Bash"]
    assert (row.agent_id, row.confidence, row.latency_ms, row.error_message, row.session_id, row.metadata_json) == (
        "claude-a",
        0.8,
        30000,
        "hung on npm install",
        "session-1",
        {"cmd": "npm i"},
    )


async def test_record_without_agent_id_acts_for_the_servers_agent(agent_client, store):
    async with agent_client("claude-b", auto_feedback=False) as client:
        await client.call_tool("dokoro_feedback_record", {"tool_name": "Read", "outcome": "success"})

    assert [(r.agent_id, r.tool_name) for r in _rows(store)] == [("claude-b", "Read")]


@pytest.mark.parametrize(
    ("arguments", "needle"),
    [
        ({"tool_name": "t", "outcome": "great"}, "outcome"),
        ({"tool_name": "t", "outcome": "success", "confidence": 2}, "confidence"),
        ({"tool_name": "t", "outcome": "success", "latency_ms": -5}, "latency_ms"),
        ({"tool_name": "", "outcome": "success"}, "tool_name"),
        ({"outcome": "success"}, "tool_name"),
    ],
)
async def test_bad_feedback_is_an_error_naming_the_argument(fail, arguments, needle):
    assert needle in await fail("dokoro_feedback_record", **arguments)


async def test_query_lists_tools_most_used_first(call, store):
    _seed(store, "a", "grep", "success", 3)
    _seed(store, "a", "grep", "failure", 1)
    store.feedback.record("b", "edit", "success", confidence=0.5)

    outcome = await call("dokoro_feedback_query", agent_id="a")
    everything = await call("dokoro_feedback_query", tool_name="edit")

    assert outcome.content[0].text == "grep: total=4 success=3 failure=1 success_rate=0.750 avg_confidence=n/a"
    assert everything.content[0].text == "edit: total=1 success=1 failure=0 success_rate=1.000 avg_confidence=0.500"
    assert everything.structured_content["tools"][0]["avg_confidence"] == 0.5


async def test_query_and_route_of_an_empty_store_say_so(agent_client):
    async with agent_client(auto_feedback=False) as client:
        query = await client.call_tool("dokoro_feedback_query", {})
        route = await client.call_tool("dokoro_feedback_route", {})

    assert query.content[0].text == "(no feedback recorded)" == route.content[0].text
    assert route.structured_content["routes"] == []


async def test_query_refuses_a_since_that_is_not_a_date(fail):
    assert "is not an ISO-8601 date" in await fail("dokoro_feedback_query", since="last tuesday")


# ---------------------------------------------------------------------------------------------- route


@BOTH_BACKENDS
async def test_route_ranks_95_of_100_above_one_lucky_success(agent_client, store):
    _seed(store, "a", "lucky", "success", 1)
    _seed(store, "a", "steady", "success", 95)
    _seed(store, "a", "steady", "failure", 5)

    async with agent_client(auto_feedback=False) as client:
        outcome = await client.call_tool("dokoro_feedback_route", {"agent_id": "a"})

    assert outcome.content[0].text.splitlines()[:2] == [
        "steady n=100 success=95 failure=5 partial=0 rejected=0 timeout=0 decayed_rate=0.950 wilson_lower=0.8882 "
        "confident=true decayed_wilson=0.8882",
        "lucky n=1 success=1 failure=0 partial=0 rejected=0 timeout=0 decayed_rate=1.000 wilson_lower=0.2065 "
        "confident=false decayed_wilson=0.2065",
    ]
    assert "ranked by decayed_wilson" in outcome.content[0].text
    data = outcome.structured_content
    assert (data["grouped_by"], data["z"], data["half_life_days"], data["min_samples"]) == ("tool", 1.96, 14, 5)


async def test_route_weighs_recent_failures_over_old_successes(agent_client, store):
    _seed(store, "a", "flaky", "success", 10, days_ago=60)
    _seed(store, "a", "flaky", "failure", 10)

    async with agent_client(auto_feedback=False) as client:
        short = await client.call_tool("dokoro_feedback_route", {"agent_id": "a", "half_life_days": 7})

    assert "decayed_rate=0.003" in short.content[0].text
    assert short.structured_content["routes"][0]["decayed_rate"] == pytest.approx(0.002622, abs=1e-5)


@BOTH_BACKENDS
async def test_ten_old_failures_and_ten_fresh_successes_rank_by_the_half_life_and_say_how(agent_client, store):
    _seed(store, "a", "recovered", "failure", 10, days_ago=60)
    _seed(store, "a", "recovered", "success", 10)
    _seed(store, "a", "steady", "success", 15)
    _seed(store, "a", "steady", "failure", 5)

    async with agent_client(auto_feedback=False) as client:
        short = await client.call_tool("dokoro_feedback_route", {"agent_id": "a", "half_life_days": 14})
        long = await client.call_tool("dokoro_feedback_route", {"agent_id": "a", "half_life_days": 1000})

    # 14 days: the failures weigh 0.5^(60/14) = 0.051 each, so "recovered" is 10 of 10.5 and leads;
    # 1,000 days: they weigh 0.959 each, 10 of 19.6, and the steady 15 of 20 leads.
    assert [r["tool_name"] for r in short.structured_content["routes"]] == ["recovered", "steady"]
    assert [r["tool_name"] for r in long.structured_content["routes"]] == ["steady", "recovered"]
    recovered = short.structured_content["routes"][0]
    assert recovered["weighted_n"] == pytest.approx(10 + 10 * 0.5 ** (60 / 14), abs=1e-3)
    assert recovered["wilson_lower"] == pytest.approx(0.2993, abs=1e-4)  # the raw bound: the same at both
    assert "half-life 14 days" in short.content[0].text and "half-life 1000 days" in long.content[0].text


async def test_route_names_the_agent_of_each_row_unless_one_agent_is_asked_for(agent_client, store):
    _seed(store, "alice", "deploy", "success", 6)
    _seed(store, "bob", "deploy", "failure", 6)

    async with agent_client(auto_feedback=False) as client:
        everyone = await client.call_tool("dokoro_feedback_route", {})
        bob = await client.call_tool("dokoro_feedback_route", {"agent_id": "bob"})

    lines = everyone.content[0].text.splitlines()
    assert lines[0].startswith("deploy agent=alice n=6 success=6 failure=0")
    assert lines[1].startswith("deploy agent=bob n=6 success=0 failure=6")
    assert bob.content[0].text.startswith("deploy n=6 success=0 failure=6 ")
    assert "alice" not in bob.content[0].text
    assert everyone.structured_content["grouped_by"] == "agent_and_tool"


async def test_route_takes_another_confidence_level(agent_client, store):
    _seed(store, "a", "t", "success", 9)
    _seed(store, "a", "t", "failure", 1)

    async with agent_client(auto_feedback=False) as client:
        at_99 = await client.call_tool("dokoro_feedback_route", {"confidence_level": 0.99})

    assert at_99.structured_content["z"] == pytest.approx(2.5758, abs=1e-4)
    assert "wilson_lower=0.4928" in at_99.content[0].text  # wider than at 95 % (0.5958)


@pytest.mark.parametrize(
    "arguments",
    [{"half_life_days": 0}, {"min_samples": 0}, {"confidence_level": 1.0}, {"confidence_level": 0.2}],
)
async def test_route_refuses_bad_parameters(fail, arguments):
    assert await fail("dokoro_feedback_route", **arguments)


# ---------------------------------------------------------------------------------------------- capture


@BOTH_BACKENDS
async def test_every_tool_call_is_captured_with_outcome_and_latency(agent_client, store):
    async with agent_client("claude-a") as client:
        ok = await client.call_tool("dokoro_presence_ping", {})
        error = await client.call_tool("dokoro_block_write", {"block_key": "k", "content": "x", "expected_version": 4})
        invalid = await client.call_tool("dokoro_presence_list", {"ttl_seconds": 0})
        # The agent's own argument mistakes: a misspelt argument, a value of the wrong type.
        unknown = await client.call_tool("dokoro_presence_ping", {"statsu": "x"})
        mistyped = await client.call_tool("dokoro_presence_list", {"ttl_seconds": "soon"})
        seen = await client.call_tool("dokoro_feedback_query", {"agent_id": "claude-a"})

    assert not ok.is_error and error.is_error and invalid.is_error and unknown.is_error and mistyped.is_error
    # The feedback tools flush the capture queue first: an agent sees its latest calls.
    assert seen.content[0].text.splitlines() == [
        "dokoro_presence_list: total=2 success=0 failure=0 success_rate=0.000 avg_confidence=1.000",
        "dokoro_presence_ping: total=2 success=1 failure=0 success_rate=0.500 avg_confidence=1.000",
        "dokoro_block_write: total=1 success=0 failure=1 success_rate=0.000 avg_confidence=1.000",
    ]
    rows = _rows(store)  # the client is closed: everything is written
    # A refused argument is counted apart (rejected) from the tool's own failures.
    assert [(r.agent_id, r.tool_name, r.outcome) for r in rows] == [
        ("claude-a", "dokoro_presence_ping", "success"),
        ("claude-a", "dokoro_block_write", "failure"),
        ("claude-a", "dokoro_presence_list", "rejected"),
        ("claude-a", "dokoro_presence_ping", "rejected"),
        ("claude-a", "dokoro_presence_list", "rejected"),
        ("claude-a", "dokoro_feedback_query", "success"),
    ]
    assert all(r.latency_ms is not None and r.latency_ms >= 0 for r in rows)


async def test_capture_is_off_when_auto_feedback_is_false(agent_client, store):
    async with agent_client(auto_feedback=False) as client:
        await client.call_tool("dokoro_presence_ping", {})
        await client.call_tool("dokoro_block_read", {"block_key": "nothing"})

    assert _rows(store) == []


async def test_capture_records_the_authenticated_agent(agent_client, store, monkeypatch):
    from dokoro_server import identity

    monkeypatch.setattr(identity, "authenticated_agent", lambda: "alice")
    async with agent_client("server-default") as client:
        await client.call_tool("dokoro_presence_list", {})

    assert [(r.agent_id, r.tool_name) for r in _rows(store)] == [("alice", "dokoro_presence_list")]


async def test_a_failing_feedback_store_never_fails_the_tool(agent_client, store, monkeypatch, caplog):
    from dokoro_store.affective.service import FeedbackService

    def broken(self, outcomes):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(FeedbackService, "record_many", broken)
    caplog.set_level(logging.WARNING, logger="dokoro")
    async with agent_client() as client:
        outcome = await client.call_tool("dokoro_presence_ping", {"current_focus": "still works"})
        listed = await client.call_tool("dokoro_presence_list", {})

    assert not outcome.is_error and not listed.is_error
    assert "still works" in listed.content[0].text
    assert "tool outcome(s): could not write feedback" in caplog.text
    assert _rows(store) == []


async def test_an_authenticated_agent_cannot_record_feedback_as_another(agent_client, store, monkeypatch):
    from dokoro_server import identity

    monkeypatch.setattr(identity, "authenticated_agent", lambda: "alice")
    async with agent_client(auto_feedback=False) as client:
        refused = await client.call_tool(
            "dokoro_feedback_record", {"agent_id": "bob", "tool_name": "t", "outcome": "success"}
        )
        own = await client.call_tool("dokoro_feedback_record", {"tool_name": "t", "outcome": "success"})

    assert refused.is_error
    assert "authenticated as 'alice' and cannot act as 'bob'" in refused.content[0].text
    assert not own.is_error
    assert [r.agent_id for r in _rows(store)] == ["alice"]
