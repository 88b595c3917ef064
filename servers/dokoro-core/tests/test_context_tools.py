"""Context-inspector tools through the MCP client: log, last, search."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.anyio


def _event(turn, snippet="plain", session="sess-1", timestamp="2026-06-09T08:00:00Z"):
    return {
        "event": "context_inspect",
        "sessionId": session,
        "turn": turn,
        "timestamp": timestamp,
        "totalEstimate": 300,
        "layers": [{"name": "rules", "reason": "always on", "tokenEstimate": 100, "contentSnippet": snippet}],
        "dropped": [{"reason": "over budget", "source": "daily/old.md", "tokenEstimate": 900}],
    }


async def test_an_event_is_logged_to_its_day_and_read_back_newest_first(call, root):
    logged = await call("dokoro_context_log", event=_event(1, snippet="y" * 800))
    assert logged.content[0].text == "logged context_inspect (turn=1, layers=1) -> context-inspect/2026-06-09.jsonl"
    await call("dokoro_context_log", event=_event(2, timestamp="2026-06-10T09:00:00Z"))
    no_turn = {k: v for k, v in _event(None).items() if k != "turn"}
    assert "(turn=?, layers=1)" in (await call("dokoro_context_log", event=no_turn)).content[0].text

    last = await call("dokoro_context_last", limit=2)

    events = json.loads(last.content[0].text)
    assert [e.get("turn") for e in events] == [2, None]
    assert last.structured_content["events"] == events
    every = json.loads((await call("dokoro_context_last", limit=10)).content[0].text)
    assert [e.get("turn") for e in every] == [2, None, 1]
    assert every[-1]["layers"][0]["contentSnippet"] == "y" * 500
    assert every[-1]["dropped"][0]["source"] == "daily/old.md"
    assert (root / "context-inspect" / "2026-06-10.jsonl").exists()


async def test_search_finds_events_by_session_and_layer_text(call):
    await call("dokoro_context_log", event=_event(1, snippet="Token Budget notes", session="alpha"))
    await call("dokoro_context_log", event=_event(2, snippet="other", session="beta"))

    found = await call("dokoro_context_search", query="token budget")
    assert [e["turn"] for e in json.loads(found.content[0].text)] == [1]
    assert [e["turn"] for e in (await call("dokoro_context_search", query="BETA")).structured_content["events"]] == [2]
    missing = await call("dokoro_context_search", query="nowhere")
    assert missing.content[0].text == "(no matching context events)"


async def test_nothing_logged_says_so(call):
    assert (await call("dokoro_context_last")).content[0].text == "(no context events)"


async def test_bad_events_and_limits_fail_and_write_nothing(fail, root):
    assert "not a context_inspect event" in await fail("dokoro_context_log", event={**_event(1), "event": "x"})
    message = await fail("dokoro_context_log", event={**_event(1), "layers": [{"name": "n"}]})
    assert "layers.0.reason" in message
    await fail("dokoro_context_last", limit=0)
    await fail("dokoro_context_last", limit=501)
    await fail("dokoro_context_search", query="x", limit=0)
    assert "query must not be empty" in await fail("dokoro_context_search", query=" ")
    assert not (root / "context-inspect").exists()
