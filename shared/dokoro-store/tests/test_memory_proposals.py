"""The proposals ledger on both backends: upkeep proposed with its evidence, applied only once
approved, recorded when rejected, and never filed twice."""

from __future__ import annotations

from datetime import timedelta

import pytest
from dokoro_store import ConflictError, FrozenClock, NotFoundError, Store
from dokoro_store.errors import InvalidArgumentError, NotOwnerError
from dokoro_store.models.memories import MemoryConflict
from dokoro_store.models.proposals import MemoryProposal
from dokoro_store.semantic.memories.proposals.proposers import PRUNE_AGE, RECURRING, TOOL_FAILURES
from sqlmodel import select


def _pair(store: Store, *, agent: str | None = None) -> tuple[str, str]:
    old = store.memories.remember(
        type="fact",
        title="Staging database",
        body="The staging database runs PostgreSQL 16 on port 5433",
        entities=["postgres"],
        agent_id=agent,
    ).memory
    new = store.memories.remember(
        type="fact",
        title="Staging database port",
        body="The staging database runs PostgreSQL 15 on port 5432",
        entities=["postgres"],
        agent_id=agent,
    )
    assert [c.memory.id for c in new.conflicts] == [old.id]
    return old.id, new.memory.id


def _of_kind(store: Store, kind: str) -> list:
    return store.proposals.listing(kind=kind).proposals


def test_an_approved_merge_supersedes_the_older_memory_and_records_the_decision(any_store: Store) -> None:
    old_id, new_id = _pair(any_store)

    [proposal] = _of_kind(any_store, "merge")
    assert proposal.status == "proposed" and proposal.memory_ids == [new_id, old_id]
    assert proposal.evidence["keep"] == new_id and proposal.evidence["supersede"] == [old_id]
    assert proposal.evidence["similarity"] > 0 and set(proposal.evidence["created"]) == {new_id, old_id}
    # Nothing changed by proposing it.
    assert any_store.memories.get(old_id).state == "active"

    done = any_store.proposals.approve(proposal.id, by="ana")

    assert (done.proposal.status, done.proposal.decided_by) == ("approved", "ana")
    assert done.proposal.decided_at is not None and done.proposal.outcome == f"{old_id} superseded by {new_id}"
    old = any_store.memories.get(old_id)
    assert (old.state, old.superseded_by) == ("archived", new_id)
    assert any_store.memories.get(new_id).state == "active"
    assert [h.memory.id for h in any_store.memories.recall("staging database port")] == [new_id]
    with any_store.db.read() as session:
        pair = session.exec(select(MemoryConflict).where(MemoryConflict.new_id == new_id)).one()
    assert (pair.verdict, pair.decided_by) == ("supersede", "ana")
    assert any_store.memories.status().unresolved == []
    with pytest.raises(ConflictError, match="was approved"):
        any_store.proposals.approve(proposal.id)
    # Filed once: the next pass files nothing new, and the approved one is listed as approved.
    assert any_store.proposals.scan() == []
    assert [p.id for p in any_store.proposals.listing("approved").proposals] == [proposal.id]


def test_a_rejected_merge_changes_no_memory_and_is_never_proposed_again(any_store: Store) -> None:
    old_id, new_id = _pair(any_store)
    [proposal] = _of_kind(any_store, "merge")

    done = any_store.proposals.reject(proposal.id, reason="they differ on purpose", by="ana")

    assert done.proposal.status == "rejected" and done.created == [] and done.changed == []
    assert done.proposal.outcome == "rejected by ana: they differ on purpose"
    assert {any_store.memories.get(i).state for i in (old_id, new_id)} == {"active"}
    # The pair is decided (keep both): the status no longer counts it, the pass never files it again.
    assert any_store.memories.status().unresolved == []
    assert any_store.proposals.scan() == [] and _of_kind(any_store, "merge") == []
    assert [p.id for p in any_store.proposals.listing("rejected").proposals] == [proposal.id]
    with pytest.raises(ConflictError, match="was rejected"):
        any_store.proposals.reject(proposal.id)


def test_an_old_memory_never_recalled_is_proposed_for_pruning_and_approving_archives_it(
    any_store: Store, clock: FrozenClock
) -> None:
    kept = any_store.memories.remember(type="fact", title="Linter", body="ruff checks every file.").memory
    idle = any_store.memories.remember(type="lesson", title="Old cache", body="Clear the cache by hand.").memory
    rule = any_store.memories.remember(type="rule", title="Tests", body="Run the tests before landing.").memory
    assert [h.memory.id for h in any_store.memories.recall("ruff checks every file", limit=1)] == [kept.id]
    assert _of_kind(any_store, "prune") == []  # too young yet
    clock.advance(PRUNE_AGE + timedelta(days=1))

    [proposal] = _of_kind(any_store, "prune")

    assert proposal.memory_ids == [idle.id] and proposal.evidence["recall_count"] == 0
    assert proposal.evidence["age_days"] == PRUNE_AGE.days + 1
    done = any_store.proposals.approve(proposal.id)
    assert [m.id for m in done.changed] == [idle.id] and done.changed[0].state == "archived"
    assert "pruned: never recalled" in (any_store.memories.get(idle.id).state_reason or "")
    # The memory's file follows (the reconcile after the decision renders it).
    [file] = (any_store.paths.root / "memories" / "lesson").glob(f"{idle.id}-*.md")
    assert "state: archived" in file.read_text(encoding="utf-8")
    assert {any_store.memories.get(i).state for i in (kept.id, rule.id)} == {"active"}


def test_a_run_of_aging_episodes_becomes_one_summary_with_the_episodes_archived_behind_it(
    any_store: Store, clock: FrozenClock
) -> None:
    steps = {
        "Race found": "Found the race in token refresh while two tabs log in.",
        "Regression test": "Wrote a regression test that opens concurrent sessions.",
        "Patch shipped": "Released the patch to staging and watched the error rate drop.",
    }
    episodes = [
        any_store.memories.remember(type="episode", title=title, body=body, entities=["login"]).memory
        for title, body in steps.items()
    ]
    assert _of_kind(any_store, "merge") == []  # distinct episodes, not duplicates
    clock.advance(timedelta(days=31))

    [proposal] = _of_kind(any_store, "summarise")
    assert proposal.evidence["entity"] == "login" and proposal.evidence["count"] == 3
    assert sorted(proposal.memory_ids) == sorted(e.id for e in episodes)
    rejected_first = any_store.proposals.reject(proposal.id)
    assert {any_store.memories.get(e.id).state for e in episodes} == {"active"}
    assert rejected_first.proposal.status == "rejected" and _of_kind(any_store, "summarise") == []

    # A fourth episode makes a new run (a different proposal); approving it writes the summary.
    any_store.memories.remember(
        type="episode", title="Docs", body="Documented the session refresh in the handbook.", entities=["login"]
    )
    clock.advance(timedelta(days=31))
    [again] = _of_kind(any_store, "summarise")
    done = any_store.proposals.approve(again.id, by="ana")

    [summary] = done.created
    assert summary.type == "context" and summary.entities == ["login"] and summary.trust == "user-stated"
    assert summary.title.startswith("Summary: 4 episodes about login")
    assert summary.title == again.evidence["draft"]["title"] and summary.body == again.evidence["draft"]["body"]
    assert all(f"({e.id})" in summary.body for e in episodes)
    assert summary.source is not None and all(e.id in summary.source for e in episodes)
    for episode in episodes:
        archived = any_store.memories.get(episode.id)
        assert (archived.state, archived.superseded_by) == ("archived", summary.id)
    assert [h.memory.id for h in any_store.memories.recall("token refresh race")] == [summary.id]


def test_a_correction_the_gate_upheld_again_and_again_is_proposed_as_a_guardrail(any_store: Store) -> None:
    kept = any_store.memories.remember(
        type="fact",
        title="Deploy day",
        body="Production deploys happen on Tuesdays only",
        entities=["deploys"],
    ).memory
    for day in ("Mondays", "Fridays", "Sundays")[:RECURRING]:
        new = any_store.memories.remember(
            type="fact", title="Deploy day", body=f"Production deploys happen on {day} only", entities=["deploys"]
        )
        assert [c.memory.id for c in new.conflicts] == [kept.id]
        any_store.memories.verdict(new.memory.id, kept.id, "discard_new")

    [proposal] = _of_kind(any_store, "guardrail")
    assert proposal.evidence["count"] == RECURRING and proposal.memory_ids == [kept.id]
    done = any_store.proposals.approve(proposal.id)

    [guardrail] = done.created
    assert (guardrail.type, guardrail.supersedes, guardrail.body) == ("guardrail", kept.id, kept.body)
    assert any_store.memories.get(kept.id).superseded_by == guardrail.id
    assert [m.id for m in any_store.memories.of_types(["guardrail"])] == [guardrail.id]


def test_the_same_tool_failure_recurring_is_proposed_as_a_guardrail_rule(any_store: Store, clock: FrozenClock) -> None:
    for n in range(TOOL_FAILURES):
        any_store.feedback.record(
            "claude",
            "dokoro_plan_check",
            "failure",
            error_message="item index out of range",
            recorded_at=clock.now() - timedelta(hours=n),
        )
    for n in range(TOOL_FAILURES - 1):  # one short of a pattern
        any_store.feedback.record("claude", "dokoro_search", "failure", recorded_at=clock.now() - timedelta(hours=n))

    [proposal] = _of_kind(any_store, "guardrail")

    assert proposal.evidence["tool"] == "dokoro_plan_check" and proposal.evidence["count"] == TOOL_FAILURES
    assert proposal.owners == ["claude"] and proposal.memory_ids == []
    with pytest.raises(NotOwnerError, match="changes data of claude"):
        any_store.proposals.approve(proposal.id, acting_agent="gemini")
    done = any_store.proposals.approve(proposal.id, acting_agent="claude")
    [guardrail] = done.created
    assert guardrail.type == "guardrail" and guardrail.agent_id == "claude"
    assert "item index out of range" in guardrail.body
    assert done.proposal.decided_by == "claude"


def test_an_agent_decides_only_proposals_about_its_own_memories(any_store: Store) -> None:
    _pair(any_store, agent="claude")
    [proposal] = any_store.proposals.listing(kind="merge", acting_agent="claude").proposals
    assert any_store.proposals.listing(kind="merge", acting_agent="gemini").proposals == []

    with pytest.raises(NotOwnerError, match="Nothing changed"):
        any_store.proposals.reject(proposal.id, acting_agent="gemini")
    assert any_store.proposals.get(proposal.id).status == "proposed"
    assert any_store.proposals.approve(proposal.id, acting_agent="claude").proposal.status == "approved"


def test_a_proposal_overtaken_by_a_change_is_refused_and_changes_nothing(any_store: Store) -> None:
    old_id, new_id = _pair(any_store)
    [proposal] = _of_kind(any_store, "merge")
    any_store.memories.forget(old_id, reason="wrong all along")

    with pytest.raises(ConflictError, match="out of date"):
        any_store.proposals.approve(proposal.id)

    assert any_store.proposals.get(proposal.id).status == "proposed"
    assert any_store.memories.get(new_id).state == "active"
    with pytest.raises(NotFoundError, match="no proposal"):
        any_store.proposals.approve("prop_nope")


def test_two_passes_file_each_proposal_once(any_store: Store) -> None:
    _pair(any_store)
    first = any_store.proposals.scan()
    second = any_store.proposals.scan()

    assert len(first) == 1 and second == []
    with any_store.db.read() as session:
        assert len(session.exec(select(MemoryProposal)).all()) == 1


def test_a_secret_in_a_rejection_reason_is_not_stored(any_store: Store) -> None:
    _pair(any_store)
    [proposal] = _of_kind(any_store, "merge")
    token = "ghp_" + "Zq8Wm3" * 6

    done = any_store.proposals.reject(proposal.id, reason=f"the token {token} was in it")

    assert token not in (done.proposal.outcome or "") and "[REDACTED" in (done.proposal.outcome or "")
    assert token not in (any_store.proposals.get(proposal.id).outcome or "")


def test_an_agents_approval_obeys_the_type_switches_and_a_person_still_decides(
    any_store: Store, clock: FrozenClock
) -> None:
    for n in range(TOOL_FAILURES):
        any_store.feedback.record(
            "claude",
            "dokoro_plan_check",
            "failure",
            error_message="bad index",
            recorded_at=clock.now() - timedelta(hours=n),
        )
    [proposal] = _of_kind(any_store, "guardrail")

    any_store.upkeep.switches.set(["guardrail"], agents_write=False, by="ana")
    with pytest.raises(InvalidArgumentError, match="switched off for agents"):
        any_store.proposals.approve(proposal.id, acting_agent="claude")
    any_store.upkeep.switches.set(["guardrail"], agents_write=True, needs_review=True, by="ana")
    with pytest.raises(NotOwnerError, match="wait for a person's review"):
        any_store.proposals.approve(proposal.id, acting_agent="claude")
    assert any_store.proposals.get(proposal.id).status == "proposed"
    assert any_store.memories.of_types(["guardrail"]) == []

    done = any_store.proposals.approve(proposal.id, by="ana")
    assert [m.type for m in done.created] == ["guardrail"] and done.proposal.decided_by == "ana"
