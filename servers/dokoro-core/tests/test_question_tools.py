"""dokoro_question_add/answer/list/check through an MCP client."""

from __future__ import annotations

from datetime import timedelta

import pytest

# These tools keep their state in the database: every test runs on SQLite and on PostgreSQL.
pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("store_url", ["sqlite", "postgresql"], indirect=True)]


@pytest.fixture
def ask(call, clock):
    """``await ask(question, priority)``: add a question one minute after the previous one; returns its id."""

    async def run(question: str, priority: str = "medium", **extra: str) -> str:
        clock.advance(timedelta(minutes=1))
        outcome = await call("dokoro_question_add", question=question, priority=priority, **extra)
        return outcome.structured_content["question"]["id"]

    return run


async def test_add_records_an_open_question_and_counts_the_open_ones(call):
    outcome = await call("dokoro_question_add", question="Which database?", context="storage layer")

    question = outcome.structured_content["question"]
    assert question["id"].startswith("q-")
    assert question["question"] == "Which database?"
    assert question["context"] == "storage layer"
    assert question["priority"] == "medium"
    assert question["status"] == "open"
    assert question["answer"] is None
    assert question["created_at"] == "2026-06-10T22:23:15Z"
    assert outcome.structured_content["counts"] == {"open": 1, "blockers": 0, "by_priority": {"medium": 1}}
    text = outcome.content[0].text
    assert "Question Added" in text
    assert question["id"] in text
    assert "PRIORITY:** MEDIUM" in text
    assert "Open questions:** 1 (0 blockers)" in text


async def test_a_blocker_is_added_with_a_warning(call):
    outcome = await call("dokoro_question_add", question="Can we drop v1?", priority="blocker")

    assert outcome.structured_content["counts"]["blockers"] == 1
    assert outcome.content[0].text.startswith("### ⚠️ Question Added")


async def test_add_logs_the_question_to_a_claimed_workspace(call, read_current):
    await call("dokoro_workspace_claim", task="fix login")

    await call("dokoro_question_add", question="Which database?", context="storage", priority="high")

    assert "❗ [22:23:15] QUESTION: Which database? (Context: storage)" in read_current()[1]


@pytest.mark.parametrize(
    ("arguments", "hint"),
    [
        ({"question": "  "}, "question must not be empty"),
        ({"question": "Why?", "priority": "urgent"}, "'low', 'medium', 'high' or 'blocker'"),
        ({}, "question"),
    ],
)
async def test_add_rejects_bad_arguments_and_stores_nothing(call, fail, arguments, hint):
    message = await fail("dokoro_question_add", **arguments)

    assert hint in message
    listing = await call("dokoro_question_list", status="all")
    assert listing.structured_content == {"questions": []}


# ---------------------------------------------------------------------------------------------- answer


async def test_answer_by_id_closes_the_question_and_says_how_long_it_was_open(call, clock, ask, read_current):
    await call("dokoro_workspace_claim", task="fix login")
    question_id = await ask("Which database?")
    await ask("Which port?")
    clock.advance(timedelta(minutes=90))

    outcome = await call("dokoro_question_answer", id=question_id, answer="SQLite by default")

    data = outcome.structured_content
    assert data["question"]["id"] == question_id
    assert data["question"]["status"] == "answered"
    assert data["question"]["answer"] == "SQLite by default"
    assert data["question"]["answered_at"] == "2026-06-10T23:55:15Z"
    assert data["open_for_seconds"] == 91 * 60
    assert data["counts"]["open"] == 1
    text = outcome.content[0].text
    assert "Question Answered" in text
    assert "Was open for:** 1h" in text
    assert "Remaining open:** 1" in text
    assert "ANSWERED: Which database?\n   → SQLite by default" in read_current()[1]


async def test_answer_without_an_id_closes_the_most_recent_open_question(call, ask):
    await ask("first?")
    newest = await ask("second?")

    outcome = await call("dokoro_question_answer", answer="yes")

    assert outcome.structured_content["question"]["id"] == newest
    assert "Was open for:** 0m" in outcome.content[0].text


async def test_answering_an_unknown_id_is_an_error_that_points_at_the_list(call, fail, ask):
    await ask("Which database?")

    message = await fail("dokoro_question_answer", id="q-nope", answer="whatever")

    assert "No question with ID 'q-nope'" in message
    assert "dokoro_question_list" in message
    listing = await call("dokoro_question_list")
    assert [q["status"] for q in listing.structured_content["questions"]] == ["open"]


async def test_answering_an_answered_question_again_is_refused(call, fail, ask):
    question_id = await ask("Which database?")
    await call("dokoro_question_answer", id=question_id, answer="SQLite")

    message = await fail("dokoro_question_answer", id=question_id, answer="PostgreSQL")

    assert "already answered: SQLite" in message
    listing = await call("dokoro_question_list", status="answered")
    assert listing.structured_content["questions"][0]["answer"] == "SQLite"


async def test_answering_with_no_open_question_says_how_to_add_one(fail):
    message = await fail("dokoro_question_answer", answer="42")

    assert "No open questions" in message
    assert "dokoro_question_add" in message


async def test_an_empty_answer_is_refused(call, fail, ask):
    question_id = await ask("Which database?")

    message = await fail("dokoro_question_answer", id=question_id, answer="   ")

    assert "answer must not be empty" in message
    listing = await call("dokoro_question_list")
    assert listing.structured_content["questions"][0]["status"] == "open"


# ---------------------------------------------------------------------------------------------- list


async def test_list_puts_blockers_first_then_priority_then_newest(call, ask):
    low = await ask("low one", "low")
    blocker = await ask("blocker one", "blocker")
    old_medium = await ask("older medium", "medium")
    high = await ask("high one", "high")
    new_medium = await ask("newer medium", "medium", context="why it matters")

    outcome = await call("dokoro_question_list")

    ids = [q["id"] for q in outcome.structured_content["questions"]]
    assert ids == [blocker, high, new_medium, old_medium, low]
    text = outcome.content[0].text
    assert text.startswith("## Questions (5)")
    assert f"### 🚨 BLOCKERS\n- 🚨 **blocker one** `[{blocker}]`" in text
    assert text.index("❗ high one") < text.index("• newer medium") < text.index("• older medium")
    assert text.index("• older medium") < text.index("○ low one")
    assert "_why it matters_" in text


async def test_list_all_shows_answered_questions_after_the_open_ones(call, ask):
    answered = await ask("done?", "blocker")
    still_open = await ask("open?", "low")
    await call("dokoro_question_answer", id=answered, answer="yes")

    outcome = await call("dokoro_question_list", status="all")

    assert [q["id"] for q in outcome.structured_content["questions"]] == [still_open, answered]
    text = outcome.content[0].text
    assert "### Answered" in text
    assert f"- ~~done?~~ → yes `[{answered}]`" in text
    assert "BLOCKERS" not in text


async def test_list_answered_only_and_include_answered(call, ask):
    answered = await ask("done?")
    still_open = await ask("open?")
    await call("dokoro_question_answer", id=answered, answer="yes")

    only_answered = await call("dokoro_question_list", status="answered")
    with_answered = await call("dokoro_question_list", includeAnswered=True)

    assert [q["id"] for q in only_answered.structured_content["questions"]] == [answered]
    assert [q["id"] for q in with_answered.structured_content["questions"]] == [still_open, answered]
    assert "### Answered" in with_answered.content[0].text
    answered_with_flag = await call("dokoro_question_list", status="answered", includeAnswered=True)
    assert [q["id"] for q in answered_with_flag.structured_content["questions"]] == [answered]


async def test_list_shows_ten_answered_questions_and_counts_the_rest(call, ask):
    for n in range(12):
        question_id = await ask(f"question {n}?")
        await call("dokoro_question_answer", id=question_id, answer=f"answer {n}")

    outcome = await call("dokoro_question_list", status="answered")

    text = outcome.content[0].text
    assert len(outcome.structured_content["questions"]) == 12
    assert text.count("~~") == 20
    assert "...and 2 more" in text
    assert "question 11?" in text
    assert "question 0?" not in text


async def test_an_empty_list_is_an_info_card(call):
    outcome = await call("dokoro_question_list")

    assert outcome.structured_content == {"questions": []}
    assert "No Questions" in outcome.content[0].text
    assert "No open questions" in outcome.content[0].text


async def test_list_rejects_an_unknown_status(fail):
    message = await fail("dokoro_question_list", status="closed")

    assert "'open', 'answered' or 'all'" in message


# ---------------------------------------------------------------------------------------------- check


async def test_check_reports_blocked_while_a_blocker_is_open(call, ask):
    blocker = await ask("Can we drop v1?", "blocker", context="API")
    await ask("Naming?", "low")

    outcome = await call("dokoro_question_check")

    data = outcome.structured_content
    assert data["blocked"] is True
    assert [q["id"] for q in data["blockers"]] == [blocker]
    assert data["counts"] == {"open": 2, "blockers": 1, "by_priority": {"blocker": 1, "low": 1}}
    text = outcome.content[0].text
    assert text.startswith("## 🚨 BLOCKED: 1 question(s) must be answered")
    assert f"**Can we drop v1?** `[{blocker}]` — API" in text
    assert "dokoro_question_answer" in text


async def test_check_with_open_questions_but_no_blocker_warns(call, ask):
    await ask("Naming?", "low")
    await ask("Port?", "high")

    outcome = await call("dokoro_question_check")

    assert outcome.structured_content["blocked"] is False
    assert outcome.structured_content["blockers"] == []
    text = outcome.content[0].text
    assert "Open Questions" in text
    assert "2 open, none blocking." in text
    assert "Low:** 1" in text
    assert "High:** 1" in text


async def test_check_is_all_clear_once_everything_is_answered(call, ask):
    question_id = await ask("Can we drop v1?", "blocker")
    await call("dokoro_question_answer", id=question_id, answer="yes")

    outcome = await call("dokoro_question_check")

    assert outcome.structured_content == {
        "blocked": False,
        "blockers": [],
        "counts": {"open": 0, "blockers": 0, "by_priority": {}},
    }
    assert "All Clear" in outcome.content[0].text


async def test_questions_are_shared_by_every_agent_of_the_store(ask, make_client):
    question_id = await ask("Which database?")

    async with make_client() as other:
        outcome = await other.call_tool("dokoro_question_list", {})

    assert [q["id"] for q in outcome.structured_content["questions"]] == [question_id]
