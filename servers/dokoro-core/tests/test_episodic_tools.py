"""dokoro_session_summary_add and dokoro_session_recall through an MCP client."""

from __future__ import annotations

from datetime import timedelta

import pytest

# These tools keep their state in the database: every test runs on SQLite and on PostgreSQL.
pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("store_url", ["sqlite", "postgresql"], indirect=True)]


@pytest.fixture
def remember(call, clock):
    """``await remember(session_id, summary, **extra)``: add a summary one minute after the previous one."""

    async def run(session_id: str, summary: str, **extra: object) -> dict:
        clock.advance(timedelta(minutes=1))
        outcome = await call(
            "dokoro_session_summary_add", session_id=session_id, ai_model="claude-opus-4-7", summary=summary, **extra
        )
        return outcome.structured_content

    return run


async def recalled(call, **arguments) -> list[str]:
    outcome = await call("dokoro_session_recall", **arguments)
    return [episode["summary"] for episode in outcome.structured_content["episodes"]]


async def test_summary_add_records_a_summary(call, store):
    outcome = await call(
        "dokoro_session_summary_add",
        session_id="2026-06-10-login",
        ai_model="claude-opus-4-7",
        summary="Fixed the race in session refresh.",
        key_decisions=["use a refresh lock"],
        key_topics=["auth"],
        message_count=42,
        token_count=1200,
    )

    assert outcome.content[0].text == "summary recorded for session 2026-06-10-login"
    data = outcome.structured_content
    assert data["session_id"] == "2026-06-10-login"
    assert isinstance(data["id"], int)
    assert data["compaction"] is None
    assert store.episodic.count("2026-06-10-login") == 1


async def test_recall_shows_past_sessions_newest_first_in_the_reference_format(call, remember):
    await remember("s-1", "Fixed the race in session refresh.", message_count=42, key_topics=["auth"])
    await remember("s-2", "Wrote the billing export.")

    outcome = await call("dokoro_session_recall")

    assert outcome.content[0].text == (
        "[2026-06-10T22:25:15Z] session=s-2 model=claude-opus-4-7 msgs=null\n"
        "  Wrote the billing export.\n\n"
        "[2026-06-10T22:24:15Z] session=s-1 model=claude-opus-4-7 msgs=42\n"
        "  Fixed the race in session refresh."
    )
    data = outcome.structured_content
    assert data["ranking"] == "recency"
    first, second = data["episodes"]
    assert first["session_id"] == "s-2"
    assert first["message_count"] is None
    assert first["token_count"] == 7  # estimated from the summary: 25 characters / 4, rounded up
    assert second["key_topics"] == ["auth"]
    assert second["key_decisions"] == []
    assert second["compacted"] is False
    assert second["started_at"] == "2026-06-10T22:24:15Z"


async def test_recall_with_nothing_stored_says_so(call):
    outcome = await call("dokoro_session_recall")

    assert outcome.content[0].text == "(no past sessions)"
    assert outcome.structured_content == {"ranking": "recency", "episodes": [], "close_match": True}


async def test_recall_query_matches_summaries_and_session_ids_case_insensitively(call, remember):
    await remember("s-login", "Fixed the RACE in session refresh.")
    await remember("s-billing", "Wrote the billing export.")
    await remember("s-other", "Nothing to see.")

    assert await recalled(call, query="race") == ["Fixed the RACE in session refresh."]
    assert await recalled(call, query="BILLING") == ["Wrote the billing export."]


async def test_recall_treats_like_wildcards_in_the_query_literally(call, remember):
    await remember("s-1", "Coverage is 100% now.")
    await remember("s-2", "Ran 1000 tests.")
    await remember("s-3", "Renamed snake_case helpers.")
    await remember("s-4", "Renamed snakeXcase helpers.")
    await remember("s-5", "Escaped a back\\slash.")

    assert await recalled(call, query="0%") == ["Coverage is 100% now."]
    assert await recalled(call, query="%") == ["Coverage is 100% now."]
    assert await recalled(call, query="e_c") == ["Renamed snake_case helpers."]
    assert await recalled(call, query="back\\slash") == ["Escaped a back\\slash."]


async def test_recall_filters_by_session_id(call, remember):
    await remember("s-1", "first of s-1")
    await remember("s-2", "only one of s-2")
    await remember("s-1", "second of s-1")

    assert await recalled(call, session_id="s-1") == ["second of s-1", "first of s-1"]


async def test_recall_since_keeps_summaries_from_that_moment_on(call, clock, remember):
    await remember("s-1", "yesterday's work")
    clock.advance(timedelta(days=1))
    await remember("s-2", "today's work")

    assert await recalled(call, since="2026-06-11") == ["today's work"]
    assert await recalled(call, since="2026-06-11T22:24:15Z") == ["today's work"]
    assert await recalled(call, since="2026-06-12T00:00:00+09:00") == ["today's work"]  # 2026-06-11T15:00Z
    assert await recalled(call, since="2026-06-10") == ["today's work", "yesterday's work"]
    assert await recalled(call, since="2026-06-12") == []


async def test_recall_limit_keeps_the_newest(call, remember):
    for n in range(5):
        await remember("s-1", f"summary {n}")

    assert await recalled(call, limit=2) == ["summary 4", "summary 3"]


async def test_recall_filters_combine(call, clock, remember):
    await remember("s-1", "login fix one")
    clock.advance(timedelta(days=2))
    await remember("s-1", "login fix two")
    await remember("s-2", "login fix elsewhere")

    assert await recalled(call, query="login", session_id="s-1", since="2026-06-12") == ["login fix two"]


async def test_recall_rejects_a_since_that_is_not_a_date(fail):
    message = await fail("dokoro_session_recall", since="last tuesday")

    assert "since" in message
    assert "YYYY-MM-DD" in message


@pytest.mark.parametrize("limit", [0, -1, 101])
async def test_recall_rejects_a_limit_outside_one_to_a_hundred(fail, limit):
    message = await fail("dokoro_session_recall", limit=limit)

    assert "limit" in message
    assert ("greater than or equal to 1" in message) or ("less than or equal to 100" in message)


@pytest.mark.parametrize(
    ("arguments", "hint"),
    [
        ({"session_id": " ", "ai_model": "m", "summary": "s"}, "session_id must not be empty"),
        ({"session_id": "s", "ai_model": "", "summary": "s"}, "ai_model must not be empty"),
        ({"session_id": "s", "ai_model": "m", "summary": "  "}, "summary must not be empty"),
        ({"session_id": "s", "ai_model": "m", "summary": "x", "token_count": -5}, "greater than or equal to 0"),
        ({"session_id": "s", "ai_model": "m", "summary": "x", "message_count": -1}, "greater than or equal to 0"),
        ({"session_id": "s", "ai_model": "m", "summary": "x", "key_topics": "auth"}, "valid list"),
        ({"session_id": "s", "ai_model": "m"}, "summary"),
    ],
)
async def test_summary_add_rejects_bad_arguments_and_stores_nothing(fail, store, arguments, hint):
    message = await fail("dokoro_session_summary_add", **arguments)

    assert hint in message
    assert store.episodic.count() == 0


# ---------------------------------------------------------------------------------------------- compaction


async def test_a_session_past_forty_thousand_tokens_is_compacted_into_one_entry(call, remember, store):
    await remember("s-1", "explored the auth module", token_count=25_000)
    below = await remember("s-1", "wrote the fix", token_count=15_000)  # exactly 40,000: not past it
    assert below["compaction"] is None

    outcome = await call(
        "dokoro_session_summary_add", session_id="s-1", ai_model="claude-opus-4-7", summary="shipped", token_count=10
    )

    assert outcome.content[0].text == "summary recorded for session s-1 (compacted 3 summaries, ~40010 tokens)"
    assert outcome.structured_content["compaction"] == {"compacted_count": 3, "total_tokens": 40_010}
    recall = await call("dokoro_session_recall", session_id="s-1")
    (episode,) = recall.structured_content["episodes"]
    assert episode["compacted"] is True
    assert episode["ai_model"] == "compaction"
    assert episode["token_count"] == 40_010
    assert episode["summary"] == (
        "[1/3] (claude-opus-4-7, ~25000 tokens): explored the auth module\n\n"
        "[2/3] (claude-opus-4-7, ~15000 tokens): wrote the fix\n\n"
        "[3/3] (claude-opus-4-7, ~10 tokens): shipped"
    )
    assert store.episodic.count("s-1") == 1


async def test_compaction_leaves_other_sessions_alone(call, remember, store):
    await remember("s-2", "unrelated", token_count=39_000)
    await remember("s-1", "big", token_count=30_000)

    added = await remember("s-1", "bigger", token_count=30_000)

    assert added["compaction"]["compacted_count"] == 2
    assert await recalled(call, session_id="s-2") == ["unrelated"]
    assert store.episodic.count() == 2


async def test_summaries_without_a_token_count_are_estimated_and_can_trigger_compaction(remember):
    added = await remember("s-1", "x" * 160_004)  # 40,001 estimated tokens

    assert added["compaction"] == {"compacted_count": 1, "total_tokens": 40_001}


async def test_a_compacted_session_folds_again_when_new_summaries_pass_the_threshold(call, remember):
    await remember("s-1", "part one", token_count=41_000)
    await remember("s-1", "part two", token_count=20_000)  # 20,000 new tokens: the compacted row does not count

    added = await remember("s-1", "part three", token_count=21_000)

    assert added["compaction"] == {"compacted_count": 3, "total_tokens": 82_000}
    (summary,) = await recalled(call, session_id="s-1")
    assert summary.startswith("[1/3] (compaction, ~41000 tokens): [1/1] (claude-opus-4-7, ~41000 tokens): part one")
    assert summary.endswith("[3/3] (claude-opus-4-7, ~21000 tokens): part three")


async def _session_history(remember) -> None:
    await remember("s-auth", "Fixed race in session refresh")
    await remember("s-billing", "Wrote the billing export and its CSV totals.")
    await remember("s-docs", "Reworded the README introduction for new contributors.")
    await remember("s-ci", "Pinned the CI runner image and cached the wheels.")


@pytest.mark.parametrize(
    "query", ["session refresh race", "refresh race", "refresh session race bug", "authentication refresh bug"]
)
async def test_recall_finds_a_summary_from_its_words_in_another_order(call, remember, query):
    await _session_history(remember)

    outcome = await call("dokoro_session_recall", query=query)

    episodes = outcome.structured_content["episodes"]
    assert [e["summary"] for e in episodes][:1] == ["Fixed race in session refresh"]
    assert outcome.content[0].text.startswith("[2026-")  # the reference's format, then how it ranked
    assert "session=s-auth model=claude-opus-4-7 msgs=null\n  Fixed race in session refresh" in outcome.content[0].text
    assert "(ranked by relevance (similarity by " in outcome.content[0].text


async def test_recall_finds_a_summary_from_a_paraphrase(call, remember):
    await _session_history(remember)

    found = await recalled(call, query="concurrency bug when renewing the login session")

    assert found == ["Fixed race in session refresh"]  # no shared word: found by meaning alone


@pytest.mark.parametrize("embedder", ["onnx", "static"])
async def test_a_paraphrase_finds_its_session_by_meaning_and_a_far_query_gets_the_nearest_with_scores(
    make_client, clock, embedder
):
    summaries = [
        ("s-rate", "Added rate limiting to the login endpoint: five attempts per minute per IP."),
        ("s-css", "Restyled the settings page with the new colour palette."),
    ]
    async with make_client(embedder=embedder) as client:
        for session_id, summary in summaries:
            added = await client.call_tool(
                "dokoro_session_summary_add", {"session_id": session_id, "summary": summary, "ai_model": "m"}
            )
            assert not added.is_error
            clock.advance(timedelta(hours=1))
        outcome = await client.call_tool("dokoro_session_recall", {"query": "throttling brute force"})
        unrelated = await client.call_tool("dokoro_session_recall", {"query": "quarterly tax filing deadline"})
        filtered = await client.call_tool(
            "dokoro_session_recall", {"query": "throttling brute force", "since": "2099-01-01"}
        )

    # The paraphrase finds its session first, by meaning, whether or not it comes within the floor.
    data = outcome.structured_content
    assert data["episodes"][0]["session_id"] == "s-rate"  # type: ignore[index]
    assert data["episodes"][0]["similarity"] is not None  # type: ignore[index]
    if not data["close_match"]:  # type: ignore[index]
        assert outcome.content[0].text.startswith("(no close match; the nearest are below)")  # type: ignore[union-attr]
    # Nothing close at all: the nearest, with their scores, said to be no close match.
    text = unrelated.content[0].text  # type: ignore[union-attr]
    assert text.startswith("(no close match; the nearest are below)")
    far = unrelated.structured_content
    assert far["close_match"] is False and far["ranking"].startswith("no close match")  # type: ignore[index]
    episodes = far["episodes"]  # type: ignore[index]
    assert {e["session_id"] for e in episodes} == {"s-rate", "s-css"}
    assert all(f"similarity={e['similarity']:.3f}" in text for e in episodes)
    assert filtered.content[0].text == "(no past sessions)"  # type: ignore[union-attr]


async def test_recall_by_meaning_keeps_since_and_until(call, clock, remember):
    await _session_history(remember)
    clock.advance(timedelta(days=2))
    await remember("s-auth-2", "Second fix of the race in session refresh.")

    assert await recalled(call, query="refresh race", until="2026-06-11") == ["Fixed race in session refresh"]
    assert await recalled(call, query="refresh race", since="2026-06-12") == [
        "Second fix of the race in session refresh."
    ]
