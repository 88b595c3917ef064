"""Typed memories through the MCP client: the gate, the lifecycle, weathering, filters, briefing."""

from __future__ import annotations

from datetime import timedelta

import pytest

pytestmark = pytest.mark.anyio

JWT = dict(
    type="fact",
    title="Login sessions use JWT",
    body="auth/session.ts keeps login sessions as stateless JWT tokens signed with the app key.",
    entities=["auth/session.ts"],
)
COOKIES = dict(
    type="fact",
    title="Login sessions use cookies",
    body="auth/session.ts keeps login sessions as signed session cookies since the refresh race fix.",
    entities=["auth/session.ts"],
)


async def _remember(call, **arguments):
    outcome = await call("dokoro_remember", **arguments)
    return outcome.structured_content


async def test_remember_stores_a_typed_memory_with_provenance(call, store):
    data = await _remember(call, **JWT, trust="user-stated", source="chat with Ana", session_id="s-1")

    memory = data["memory"]
    assert memory["id"].startswith("mem_") and memory["state"] == "active"
    assert memory["trust"] == "user-stated" and memory["source"] == "chat with Ana"
    assert memory["session_id"] == "s-1" and memory["entities"] == ["auth/session.ts"]
    assert data["conflicts"] == [] and data["indexed"] is True
    assert store.memories.get(memory["id"]).title == "Login sessions use JWT"


async def test_the_conflict_gate_surfaces_a_close_neighbour_once_and_overwrites_nothing(call, store):
    old = (await _remember(call, **JWT))["memory"]
    outcome = await call("dokoro_remember", **COOKIES)
    data = outcome.structured_content

    (conflict,) = data["conflicts"]
    assert conflict["memory"]["id"] == old["id"]
    assert conflict["shared_entities"] == ["auth/session.ts"]
    assert conflict["latest_wins_eligible"] is True
    text = outcome.content[0].text
    assert "nothing was overwritten" in text
    # Both memories in full, so the agent can judge the pair from this answer alone.
    assert JWT["body"] in text and COOKIES["body"] in text
    assert f"{old['id']} [fact, agent-inferred, created " in text
    assert conflict["semantic"] is not None and conflict["lexical"] > 0
    assert store.memories.get(old["id"]).state == "active"  # no verdict, no change

    status = (await call("dokoro_memory_status")).structured_content
    assert status["unresolved_conflicts"] == [{"new_id": data["memory"]["id"], "old_id": old["id"]}]

    await call("dokoro_memory_verdict", new_id=data["memory"]["id"], old_id=old["id"], verdict="keep_both")
    status = (await call("dokoro_memory_status")).structured_content
    assert status["unresolved_conflicts"] == []
    # A third close memory shows its own new pairs, never the pair already judged.
    third = await _remember(call, **{**COOKIES, "body": COOKIES["body"] + " Confirmed in review."})
    shown = {c["memory"]["id"] for c in third["conflicts"]}
    assert shown == {old["id"], data["memory"]["id"]}
    later = (await call("dokoro_memory_status")).structured_content["unresolved_conflicts"]
    assert {"new_id": data["memory"]["id"], "old_id": old["id"]} not in later


async def test_a_judged_pair_cannot_be_judged_again(call, fail):
    old = (await _remember(call, **JWT))["memory"]
    new = (await _remember(call, **COOKIES))["memory"]
    await call("dokoro_memory_verdict", new_id=new["id"], old_id=old["id"], verdict="keep_both")

    message = await fail("dokoro_memory_verdict", new_id=new["id"], old_id=old["id"], verdict="supersede")

    assert "already has the verdict 'keep_both'" in message


async def test_a_supersede_verdict_archives_the_old_memory_and_keeps_the_chain(call, store):
    old = (await _remember(call, **JWT))["memory"]
    new = (await _remember(call, **COOKIES))["memory"]

    data = (
        await call("dokoro_memory_verdict", new_id=new["id"], old_id=old["id"], verdict="supersede")
    ).structured_content

    assert data["old"]["state"] == "archived" and data["old"]["superseded_by"] == new["id"]
    assert data["new"]["supersedes"] == old["id"]
    hits = (await call("dokoro_recall", query="login sessions auth")).structured_content["hits"]
    assert [h["memory"]["id"] for h in hits] == [new["id"]]  # archived memories only on request
    everything = (await call("dokoro_recall", query="login sessions auth", include_archived=True)).structured_content
    states = {h["memory"]["id"]: h["memory"]["state"] for h in everything["hits"]}
    assert states == {new["id"]: "active", old["id"]: "archived"}


async def test_remember_with_supersedes_archives_at_once(call, fail):
    old = (await _remember(call, **JWT))["memory"]
    data = await _remember(call, **COOKIES, supersedes=old["id"])

    assert data["superseded"]["id"] == old["id"] and data["superseded"]["state"] == "archived"
    assert data["conflicts"] == []
    # The same call again is a retry: it gets the memory the first call stored.
    again = await _remember(call, **COOKIES, supersedes=old["id"])
    assert again["retried"] and again["memory"]["id"] == data["memory"]["id"]
    # Another memory cannot supersede the archived one.
    message = await fail("dokoro_remember", **{**COOKIES, "title": "Cookies, signed"}, supersedes=old["id"])
    assert "already archived" in message and "Nothing was stored" in message


async def test_a_discard_new_verdict_deprecates_the_duplicate(call):
    old = (await _remember(call, **JWT))["memory"]
    dup = (await _remember(call, **{**JWT, "title": "Sessions are JWT"}))["memory"]

    data = (
        await call("dokoro_memory_verdict", new_id=dup["id"], old_id=old["id"], verdict="discard_new")
    ).structured_content

    assert data["new"]["state"] == "deprecated" and data["old"]["state"] == "active"


async def test_forget_needs_a_reason_to_deprecate_and_a_confirmation_to_purge(call, fail, store):
    memory = (await _remember(call, **JWT))["memory"]

    assert "reason is required" in await fail("dokoro_forget", id=memory["id"])
    assert "confirm=true" in await fail("dokoro_forget", id=memory["id"], purge=True)
    assert store.memories.get(memory["id"]).state == "active"

    done = (await call("dokoro_forget", id=memory["id"], reason="we moved to cookies")).structured_content
    assert done == {"id": memory["id"], "action": "deprecated", "state": "deprecated", "dependents_flagged": []}
    assert store.memories.get(memory["id"]).state_reason == "we moved to cookies"

    purged = (await call("dokoro_forget", id=memory["id"], purge=True, confirm=True)).structured_content
    assert purged["action"] == "purged"
    assert "no memory" in await fail("dokoro_forget", id=memory["id"], reason="again")


async def test_a_fresher_used_memory_outranks_an_equally_relevant_stale_one(call, clock):
    stale = await _remember(call, type="lesson", title="Flaky login test", body="The login test flakes under load.")
    clock.advance(timedelta(days=400))
    fresh = await _remember(call, type="lesson", title="Flaky login test", body="The login test flakes under load!")
    await call("dokoro_recall", query="flaky login test")  # a use for both...
    clock.advance(timedelta(days=1))
    await call("dokoro_recall", query="login flakes", limit=1)  # ...and one more for the top one

    hits = (await call("dokoro_recall", query="flaky login test")).structured_content["hits"]

    assert [h["memory"]["id"] for h in hits] == [fresh["memory"]["id"], stale["memory"]["id"]]
    assert "401d old" in hits[1]["reason"] and "recalled 1×" in hits[1]["reason"]
    assert hits[0]["memory"]["recall_count"] >= 2


async def test_recall_filters_by_type_entity_and_time_and_says_why(call, clock):
    rule = await _remember(call, type="rule", title="Never push to main", body="Open a PR; CI must pass first.")
    await _remember(
        call, type="fact", title="CI runs on push", body="CI runs pytest on every push to a PR branch.", entities=["ci"]
    )
    clock.advance(timedelta(days=10))
    late = await _remember(
        call, type="fact", title="CI caches uv", body="CI caches the uv download between pushes.", entities=["ci"]
    )

    by_type = (await call("dokoro_recall", query="push CI", types=["rule"])).structured_content["hits"]
    assert [h["memory"]["id"] for h in by_type] == [rule["memory"]["id"]]
    by_entity = (await call("dokoro_recall", query="push CI", entity="CI")).structured_content["hits"]
    assert {h["memory"]["type"] for h in by_entity} == {"fact"}
    since = (clock.now() - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    recent = (await call("dokoro_recall", query="push CI", since=since)).structured_content["hits"]
    assert [h["memory"]["id"] for h in recent] == [late["memory"]["id"]]
    assert all(h["reason"] for h in by_entity)


async def test_bad_memory_arguments_are_refused_with_the_fix(fail, store):
    assert "title must not be empty" in await fail("dokoro_remember", type="fact", title=" ", body="x")
    assert "Input should be" in await fail("dokoro_remember", type="gossip", title="t", body="b")
    assert "review_after" in await fail("dokoro_remember", type="fact", title="t", body="b", review_after="soon")
    assert "no memory" in await fail("dokoro_remember", type="fact", title="t", body="b", supersedes="mem_nope")
    assert store.memories.status().total == 0


async def test_secrets_in_a_memory_are_redacted_and_the_answer_says_so(call, store):
    outcome = await call(
        "dokoro_remember",
        type="lesson",
        title="Leaked key",
        body="We pasted ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8 once.",
    )

    assert "redacted 1 secret" in outcome.content[0].text
    memory = store.memories.get(outcome.structured_content["memory"]["id"])
    assert "ghp_" not in memory.body and "[REDACTED:github-token]" in memory.body


async def test_status_reports_stale_never_recalled_and_compaction_candidates(call, clock):
    await _remember(
        call, type="fact", title="Node 20", body="The frontend builds on Node 20.", review_after="2026-06-20"
    )
    for n in range(3):
        await _remember(
            call, type="episode", title=f"Deploy {n}", body=f"Deploy number {n} of the api went fine.", entities=["api"]
        )
    clock.advance(timedelta(days=45))

    status = (await call("dokoro_memory_status")).structured_content

    assert len(status["stale"]) == 1
    assert status["never_recalled"] == 4
    assert len(status["compaction_candidates"]["api"]) == 3
    assert status["index_pending"] == 0


async def test_the_briefing_stays_within_budget_and_counts_the_overflow(call):
    for n in range(12):
        await _remember(
            call,
            type="rule",
            title=f"Rule {n} about the database",
            body=f"Rule number {n}: " + "always run the migrations before deploying. " * 6,
        )
    await _remember(
        call,
        type="guardrail",
        title="Never drop the login table",
        body="The login table holds live sessions; never drop or truncate it.",
    )
    await call("dokoro_question_add", question="Can we drop the legacy table?", priority="blocker")
    await call("dokoro_session_summary_add", session_id="s-1", ai_model="m", summary="Moved sessions to cookies")

    outcome = await call("dokoro_briefing", budget=400, focus="drop the login table")
    data = outcome.structured_content
    text = outcome.content[0].text

    assert data["used"] <= 400
    assert data["rules_total"] == 13 and data["rules_overflow"] > 0
    assert (
        data["rules_shown"][0]
        == (await call("dokoro_recall", query="login table", types=["guardrail"])).structured_content["hits"][0][
            "memory"
        ]["id"]
    )
    assert f"…and {data['rules_overflow']} more" in text


async def test_recall_reports_a_file_edited_in_place_a_second_later_in_a_large_folder(call, root, monkeypatch):
    from types import SimpleNamespace

    from dokoro_store.semantic.memories.files import sync as memory_files

    monkeypatch.setattr(memory_files, "SWEEP_ALWAYS", 2)  # a "large" folder: the sweep goes at its rate
    now = [1000.0]
    monkeypatch.setattr(memory_files, "time", SimpleNamespace(monotonic=lambda: now[0]))
    made = [
        (await _remember(call, type="fact", title=f"Note {i}", body=f"Note number {i} of a large folder."))["memory"]
        for i in range(4)
    ]
    await call("dokoro_recall", query="note")  # swept (its first call in this process)
    [path] = list((root / "memories").rglob(f"{made[0]['id']}*.md"))
    with path.open("r+", encoding="utf-8") as handle:  # in place: the folder's time does not move
        content = handle.read().replace("Note number 0", "Note number zero")
        handle.seek(0)
        handle.write(content)
        handle.truncate()

    now[0] += 1.0  # a second later: a whole window of files is due
    answer = await call("dokoro_recall", query="note")

    assert made[0]["id"] in answer.content[0].text.split("memory files edited by a person", 1)[1]
    assert answer.structured_content["files"]["changes"]


@pytest.mark.parametrize("store_url", ["sqlite", "postgresql"], indirect=True)
async def test_recall_with_include_archived_marks_the_superseded_memory_in_the_text_and_ranks_it_last(call):
    old = (await _remember(call, **JWT))["memory"]
    new = (await _remember(call, **COOKIES, supersedes=old["id"]))["memory"]

    outcome = await call("dokoro_recall", query="login sessions use JWT tokens", include_archived=True)

    hits = outcome.structured_content["hits"]
    assert [h["memory"]["id"] for h in hits] == [new["id"], old["id"]]
    assert hits[1]["retired"] == f"superseded by {new['id']}"
    lines = outcome.content[0].text.splitlines()
    assert lines[0].startswith("1. [fact] Login sessions use cookies")
    assert f"2. [fact, ⚠️ RETIRED: superseded by {new['id']}] Login sessions use JWT" in outcome.content[0].text


async def test_recall_under_another_embedder_matches_words_and_names_the_fix(make_client):
    async with make_client(embedder="hashing") as client:
        assert not (await client.call_tool("dokoro_remember", JWT)).is_error
    async with make_client(embedder="static") as client:
        outcome = await client.call_tool("dokoro_recall", {"query": "login sessions"})
        again = await client.call_tool("dokoro_recall", {"query": "JWT"})

    # One embedder per store: word matching still answers, and every answer says why and how to fix it.
    assert not outcome.is_error
    text = outcome.content[0].text  # type: ignore[union-attr]
    assert "Login sessions use JWT" in text
    assert "word matching only" in text and "dokoro reembed" in text
    assert "mode='keyword'" not in text
    assert "word matching only" in again.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize("store_url", ["sqlite", "postgresql"], indirect=True)
async def test_recall_of_a_forgotten_topic_says_no_close_match_instead_of_a_high_score(call):
    pnpm = (await _remember(call, type="fact", title="Package manager", body="We use pnpm for the web app."))["memory"]
    await _remember(call, type="fact", title="Staging host", body="The staging database runs on db-new.internal.")
    await call("dokoro_forget", id=pnpm["id"], reason="moved to npm workspaces")

    outcome = await call("dokoro_recall", query="pnpm")
    matching = await call("dokoro_recall", query="staging database host")

    text = outcome.content[0].text
    assert text.startswith("(no close match: no memory reaches relevance 0.15; the nearest are)")
    (hit,) = outcome.structured_content["hits"]
    assert hit["memory"]["title"] == "Staging host" and hit["relevance"] < 0.15
    assert f"relevance {hit['relevance']:.2f})" in text
    best = matching.structured_content["hits"][0]
    assert best["memory"]["title"] == "Staging host" and best["relevance"] >= 0.3
    assert not matching.content[0].text.startswith("(no close match")


def test_the_tools_offer_exactly_the_store_memory_types() -> None:
    from typing import get_args

    from dokoro_core.tools.memories import MemoryType
    from dokoro_store import MEMORY_TYPES

    assert get_args(MemoryType) == MEMORY_TYPES
    assert {"best-practice", "context"} <= set(MEMORY_TYPES)
