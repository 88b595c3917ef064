"""Episodic memory: summaries, recall filters and compaction folding, on both backends."""

from __future__ import annotations

from datetime import timedelta

import pytest
from dokoro_store import InvalidArgumentError
from dokoro_store.episodic.service import COMPACTION_THRESHOLD_TOKENS, escape_like, estimate_tokens
from dokoro_store.limits import MAX_SUM, MAX_TOKEN_COUNT
from dokoro_store.models import ConversationSummary, EpisodeSession
from sqlmodel import select


def _rows(store, session_id):
    with store.db.read() as session:
        return list(
            session.exec(
                select(ConversationSummary)
                .where(ConversationSummary.session_id == session_id)
                .order_by(ConversationSummary.id)
            )
        )


def _session(store, session_id):
    with store.db.read() as session:
        return session.get(EpisodeSession, session_id)


def test_estimate_tokens_is_a_quarter_of_the_characters_rounded_up():
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2


def test_escape_like_escapes_wildcards_and_the_escape_itself():
    assert escape_like("100%_a\\b") == "100\\%\\_a\\\\b"


def test_adding_a_summary_creates_its_session_row(any_store):
    added = any_store.episodic.add_summary("s-1", "m", "did things", key_topics=["auth"], message_count=3)

    assert added.compaction is None
    owner = _session(any_store, "s-1")
    assert owner is not None
    assert owner.status == "completed"
    (row,) = _rows(any_store, "s-1")
    assert row.key_topics == ["auth"]
    assert row.key_decisions is None
    assert row.token_count == estimate_tokens("did things")
    assert row.compacted is False


def test_compaction_folds_every_summary_into_one_row_and_the_session(any_store, clock):
    any_store.episodic.add_summary("s-1", "m1", "first", token_count=20_000, key_decisions=["a"], message_count=4)
    clock.advance(timedelta(minutes=5))
    any_store.episodic.add_summary("s-other", "m1", "elsewhere", token_count=39_000)
    clock.advance(timedelta(minutes=5))
    added = any_store.episodic.add_summary("s-1", "m2", "second", token_count=20_001, key_decisions=["a", "b"])

    assert added.compaction is not None
    assert (added.compaction.compacted_count, added.compaction.total_tokens) == (2, 40_001)
    (row,) = _rows(any_store, "s-1")
    merged = "[1/2] (m1, ~20000 tokens): first\n\n[2/2] (m2, ~20001 tokens): second"
    assert row.compacted is True
    assert row.ai_model == "compaction"
    assert row.summary == merged
    assert row.token_count == 40_001
    assert row.key_decisions == ["a", "b"]
    assert row.message_count == 4
    assert row.started_at == clock.now()  # the latest source row's time
    owner = _session(any_store, "s-1")
    assert owner.summary == merged
    assert owner.metadata_json["compactedCount"] == 2
    assert owner.metadata_json["compactedTokens"] == 40_001
    assert owner.metadata_json["lastCompactedAt"] == "2026-06-10T22:33:15Z"  # the API's one timestamp format
    assert "compactionPending" not in owner.metadata_json
    assert [r.summary for r in _rows(any_store, "s-other")] == ["elsewhere"]


def test_exactly_the_threshold_does_not_compact(any_store):
    added = any_store.episodic.add_summary("s-1", "m", "x", token_count=COMPACTION_THRESHOLD_TOKENS)

    assert added.compaction is None
    assert not any_store.episodic.needs_compaction("s-1")


def test_repeated_compaction_folds_the_previous_compacted_row(any_store, clock):
    any_store.episodic.add_summary("s-1", "m", "one", token_count=40_001)
    clock.advance(timedelta(minutes=1))
    any_store.episodic.add_summary("s-1", "m", "two", token_count=30_000)
    assert not any_store.episodic.needs_compaction("s-1")  # the compacted row does not count
    clock.advance(timedelta(minutes=1))

    added = any_store.episodic.add_summary("s-1", "m", "three", token_count=10_001)

    assert (added.compaction.compacted_count, added.compaction.total_tokens) == (3, 80_002)
    (row,) = _rows(any_store, "s-1")
    assert row.summary.startswith("[1/3] (compaction, ~40001 tokens): [1/1] (m, ~40001 tokens): one\n\n")
    assert row.summary.endswith("[2/3] (m, ~30000 tokens): two\n\n[3/3] (m, ~10001 tokens): three")
    assert _session(any_store, "s-1").summary == row.summary


def test_the_largest_token_counts_added_many_times_keep_adding_and_compacting(any_store, root, clock, database_url):
    from dokoro_store import Store

    for i in range(3):
        clock.advance(timedelta(minutes=1))
        added = any_store.episodic.add_summary(
            "s-1", "m", f"huge {i}", token_count=MAX_TOKEN_COUNT, message_count=10**9
        )
        assert added.compaction is not None  # every add crosses the threshold and folds

    (row,) = _rows(any_store, "s-1")
    assert row.token_count == MAX_SUM  # clamped: the sum, 3e9, outgrows a 32-bit column
    assert row.message_count == MAX_SUM
    assert not any_store.episodic.needs_compaction("s-1")
    with Store.open(root, clock=clock, database_url=database_url) as again:  # opening sums them too
        again.episodic.add_summary("s-1", "m", "small", token_count=1)
        assert again.episodic.compact("s-1").total_tokens == MAX_SUM


def test_compact_on_demand_folds_a_small_session(any_store):
    any_store.episodic.add_summary("s-1", "m", "one", token_count=10)
    any_store.episodic.add_summary("s-1", "m", "two", token_count=10)

    result = any_store.episodic.compact("s-1")

    assert (result.compacted_count, result.total_tokens) == (2, 20)
    assert len(_rows(any_store, "s-1")) == 1
    assert any_store.episodic.compact("unknown-session") is None


def test_an_interrupted_compaction_is_finished_when_the_store_is_opened(any_store, root, clock, database_url):
    from dokoro_store import Store

    any_store.episodic.add_summary("s-1", "m", "one", token_count=10)
    any_store.episodic.add_summary("s-1", "m", "two", token_count=10)
    with any_store.db.write() as session:  # a crash right after the pre-flush mark
        owner = session.get(EpisodeSession, "s-1")
        owner.metadata_json = {"compactionPending": True}
        session.add(owner)
    assert any_store.episodic.pending_sessions() == ["s-1"]

    with Store.open(root, database_url=database_url, clock=clock) as reopened:
        assert [(r.session_id, r.compacted_count) for r in reopened.recovered] == [("s-1", 2)]
        assert reopened.episodic.pending_sessions() == []
        (row,) = _rows(reopened, "s-1")
        assert row.compacted is True


def test_a_pending_mark_on_a_session_without_summaries_is_cleared_without_blanking_it(any_store):
    any_store.episodic.add_summary("s-1", "m", "one", token_count=10)
    with any_store.db.write() as session:
        for row in session.exec(select(ConversationSummary)):
            session.delete(row)
        owner = session.get(EpisodeSession, "s-1")
        owner.summary = "an older compacted history"
        owner.metadata_json = {"compactionPending": True}
        session.add(owner)

    (result,) = any_store.episodic.recover()

    assert (result.compacted_count, result.total_tokens) == (0, 0)
    owner = _session(any_store, "s-1")
    assert owner.summary == "an older compacted history"
    assert "compactionPending" not in owner.metadata_json


def test_recall_filters_and_orders_newest_first(any_store, clock):
    any_store.episodic.add_summary("s-1", "m", "alpha 50% done")
    clock.advance(timedelta(days=1))
    any_store.episodic.add_summary("s-2", "m", "beta 500 done")
    clock.advance(timedelta(days=1))
    any_store.episodic.add_summary("s-1", "m", "gamma snake_case")

    assert [h.summary for h in any_store.episodic.recall()] == ["gamma snake_case", "beta 500 done", "alpha 50% done"]
    assert [h.summary for h in any_store.episodic.recall(query="0%")] == ["alpha 50% done"]
    assert [h.summary for h in any_store.episodic.recall(query="E_C")] == ["gamma snake_case"]
    assert [h.summary for h in any_store.episodic.recall(query="S-2")] == ["beta 500 done"]
    assert [h.summary for h in any_store.episodic.recall(session_id="s-1", limit=1)] == ["gamma snake_case"]
    assert [h.summary for h in any_store.episodic.recall(since="2026-06-11T22:23:15Z")] == [
        "gamma snake_case",
        "beta 500 done",
    ]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"limit": 0}, "limit must be between 1 and 100"),
        ({"limit": 101}, "limit must be between 1 and 100"),
        ({"since": "soon"}, "since: 'soon' is not an ISO-8601 date"),
    ],
)
def test_recall_refuses_bad_arguments(store, arguments, message):
    with pytest.raises(InvalidArgumentError, match=message):
        store.episodic.recall(**arguments)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"session_id": " ", "ai_model": "m", "summary": "s"}, "session_id must not be empty"),
        ({"session_id": "s", "ai_model": " ", "summary": "s"}, "ai_model must not be empty"),
        ({"session_id": "s", "ai_model": "m", "summary": " "}, "summary must not be empty"),
        ({"session_id": "s", "ai_model": "m", "summary": "s", "token_count": -1}, "token_count must be between 0"),
        ({"session_id": "s", "ai_model": "m", "summary": "s", "token_count": 2**62}, "token_count must be between 0"),
        ({"session_id": "s", "ai_model": "m", "summary": "s", "message_count": -1}, "message_count must be between 0"),
        ({"session_id": "s", "ai_model": "m", "summary": "s", "message_count": 2**63}, "message_count must be between"),
    ],
)
def test_add_summary_refuses_bad_arguments(store, arguments, message):
    with pytest.raises(InvalidArgumentError, match=message):
        store.episodic.add_summary(**arguments)
    assert store.episodic.count() == 0
