"""The context inspector: per-day JSON lines, snippet limits, newest-first reads and search."""

from __future__ import annotations

import json

import pytest
from dokoro_store import InvalidArgumentError


def _event(turn=1, timestamp="2026-06-09T10:00:00Z", session="s-1", snippet="hello", **extra):
    event = {
        "event": "context_inspect",
        "sessionId": session,
        "turn": turn,
        "timestamp": timestamp,
        "totalEstimate": 120,
        "layers": [
            {"name": "memory", "reason": "recent decision", "tokenEstimate": 40, "contentSnippet": snippet},
        ],
    }
    event.update(extra)
    return event


def test_an_event_is_appended_to_the_file_of_its_day_with_snippets_cut(any_store, root):
    logged = any_store.context.log(_event(snippet="x" * 900, budgetTokens=4000, custom={"kept": True}))

    assert (logged.turn, logged.layers, logged.file) == (1, 1, "context-inspect/2026-06-09.jsonl")
    (line,) = (root / "context-inspect" / "2026-06-09.jsonl").read_text(encoding="utf-8").splitlines()
    stored = json.loads(line)
    assert stored["layers"][0]["contentSnippet"] == "x" * 500
    assert stored["budgetTokens"] == 4000
    assert stored["custom"] == {"kept": True}
    assert "dropped" not in stored  # only what was given is written back


def test_an_event_without_a_dated_timestamp_goes_to_today(any_store, root):
    logged = any_store.context.log(_event(timestamp="turn seven"))
    assert logged.file == "context-inspect/2026-06-10.jsonl"
    assert any_store.context.log(_event(timestamp="2026-02-30T00:00:00Z")).file == "context-inspect/2026-06-10.jsonl"


def test_only_context_inspect_events_are_accepted(any_store, root):
    with pytest.raises(InvalidArgumentError, match="not a context_inspect event"):
        any_store.context.log({**_event(), "event": "other"})
    with pytest.raises(InvalidArgumentError, match=r"layers\.0\.reason"):
        any_store.context.log(_event(layers=[{"name": "x", "tokenEstimate": 1, "contentSnippet": ""}]))
    with pytest.raises(InvalidArgumentError, match="totalEstimate"):
        any_store.context.log({k: v for k, v in _event().items() if k != "totalEstimate"})
    assert not (root / "context-inspect").exists()


def test_the_last_events_come_newest_first_across_days_skipping_bad_lines(any_store, root):
    any_store.context.log(_event(turn=1, timestamp="2026-06-08T10:00:00Z"))
    any_store.context.log(_event(turn=2, timestamp="2026-06-09T10:00:00Z"))
    with (root / "context-inspect" / "2026-06-09.jsonl").open("a", encoding="utf-8") as handle:
        handle.write("{torn line\n")
    any_store.context.log(_event(turn=3, timestamp="2026-06-09T11:00:00Z"))
    (root / "context-inspect" / "notes.txt").write_text("not a partition", encoding="utf-8")

    assert [e["turn"] for e in any_store.context.last(10)] == [3, 2, 1]
    assert [e["turn"] for e in any_store.context.last(2)] == [3, 2]
    with pytest.raises(InvalidArgumentError):
        any_store.context.last(0)
    with pytest.raises(InvalidArgumentError):
        any_store.context.last(501)


def test_search_matches_session_ids_and_layer_text_case_insensitively(any_store):
    any_store.context.log(_event(turn=1, session="alpha", snippet="The Cache layer"))
    any_store.context.log(_event(turn=2, session="beta", snippet="nothing here"))
    any_store.context.log(
        _event(
            turn=3,
            session="gamma",
            layers=[{"name": "n", "reason": "r", "tokenEstimate": 1, "contentSnippet": "", "source": "docs/CACHE.md"}],
        )
    )

    assert [e["turn"] for e in any_store.context.search("cache")] == [3, 1]
    assert [e["turn"] for e in any_store.context.search("BETA")] == [2]
    assert any_store.context.search("cache", limit=1)[0]["turn"] == 3
    assert any_store.context.search("absent") == []
    with pytest.raises(InvalidArgumentError):
        any_store.context.search("  ")


def test_nothing_logged_reads_as_empty(any_store):
    assert any_store.context.last() == []
    assert any_store.context.search("x") == []
