"""Scores and rates in the typed results: rounded on the wire, full precision in Python (the text
a tool renders from them keeps every digit)."""

from __future__ import annotations

from datetime import UTC, datetime

from dokoro_store.results.feedback import ToolTally
from dokoro_store.results.memories import Memory, RecallHit


def _memory() -> Memory:
    at = datetime(2026, 6, 10, 22, 23, 15, 987654, tzinfo=UTC)
    return Memory(
        id="mem_1",
        type="fact",
        title="t",
        body="b",
        entities=[],
        trust="user-stated",
        state="active",
        agent_id=None,
        session_id=None,
        source=None,
        created_at=at,
        updated_at=at,
        review_after=None,
        valid_until=None,
        supersedes=None,
        superseded_by=None,
        state_reason=None,
        recall_count=0,
    )


def test_scores_are_rounded_on_the_wire_only_and_times_are_iso() -> None:
    hit = RecallHit(memory=_memory(), score=1.23456789, relevance=2 / 3, reason="why")

    wire = hit.model_dump(mode="json")

    assert (wire["score"], wire["relevance"]) == (1.2346, 0.6667)
    assert wire["memory"]["created_at"] == "2026-06-10T22:23:15Z"
    assert hit.score == 1.23456789  # the text a tool renders keeps every digit
    assert RecallHit.model_validate(wire).memory.created_at == datetime(2026, 6, 10, 22, 23, 15, tzinfo=UTC)


def test_a_rate_keeps_six_decimals_on_the_wire() -> None:
    tally = ToolTally(
        tool_name="edit",
        total=3,
        success=1,
        failure=2,
        partial=0,
        rejected=0,
        timeout=0,
        success_rate=1 / 3,
        avg_confidence=None,
        avg_latency_ms=None,
    )

    assert tally.model_dump(mode="json")["success_rate"] == 0.333333
    assert f"{tally.success_rate:.3f}" == "0.333"
