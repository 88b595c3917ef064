"""Ownership: the services refuse a known agent's destroying or taking over another's data.

Each rule runs on both backends (``database_url``); two agents are two stores opened on one
folder and one database, as two server processes would be. The table these rules implement is
in docs/team.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from dokoro_store import FrozenClock, Store
from dokoro_store.errors import NotFoundError, NotOwnerError, WorkspaceLockedError


@pytest.fixture
def two(root: Path, clock: FrozenClock, database_url: str | None) -> Iterator[tuple[Store, Store]]:
    """Two server processes (alice's and bob's) on one store."""
    with (
        Store.open(root, database_url=database_url, clock=clock) as alice,
        Store.open(root, database_url=database_url, clock=clock) as bob,
    ):
        yield alice, bob


# ---------------------------------------------------------------------------- memories
def test_an_agent_cannot_purge_a_memory_another_agent_wrote(two: tuple[Store, Store]) -> None:
    alice, bob = two
    written = alice.memories.remember(
        type="fact", title="The cache TTL is 5 min", body="set in config", agent_id="alice"
    )

    with pytest.raises(NotOwnerError, match=r"is alice's memory; you \(bob\) may not purge it.*Ask alice"):
        bob.memories.forget(written.memory.id, purge=True, confirm=True, acting_agent="bob")

    kept = alice.memories.get(written.memory.id)
    assert (kept.state, kept.title) == ("active", "The cache TTL is 5 min")


def test_another_agent_may_not_deprecate_a_memory_and_is_told_whose_it_is(two: tuple[Store, Store]) -> None:
    alice, bob = two
    written = alice.memories.remember(type="fact", title="Deploys on Fridays", body="yes", agent_id="alice")

    with pytest.raises(NotOwnerError, match=r"is alice's memory; you \(bob\) may not deprecate it. Nothing changed"):
        bob.memories.forget(written.memory.id, reason="we stopped that", acting_agent="bob")

    kept = alice.memories.get(written.memory.id)
    assert (kept.state, kept.state_changed_by) == ("active", None)
    memory, done = alice.memories.forget(written.memory.id, reason="we stopped that", acting_agent="alice")
    assert (done.action, memory.state, memory.state_changed_by) == ("deprecated", "deprecated", "alice")


def test_the_author_and_the_person_may_purge_and_a_memory_without_author_is_anyones(two: tuple[Store, Store]) -> None:
    alice, bob = two
    own = alice.memories.remember(type="fact", title="mine", body="x", agent_id="alice")
    person = alice.memories.remember(type="fact", title="no author", body="y")
    cli = alice.memories.remember(type="fact", title="purged from the CLI", body="z", agent_id="alice")

    alice.memories.forget(own.memory.id, purge=True, confirm=True, acting_agent="alice")
    bob.memories.forget(person.memory.id, purge=True, confirm=True, acting_agent="bob")
    bob.memories.forget(cli.memory.id, purge=True, confirm=True)  # no identity: the person at the keyboard

    for gone in (own, person, cli):
        with pytest.raises(NotFoundError):
            alice.memories.get(gone.memory.id)


# ---------------------------------------------------------------------------- plans
def test_an_agent_cannot_check_or_validate_another_agents_private_plan(two: tuple[Store, Store]) -> None:
    alice, bob = two
    plan = alice.plans.create("Ship login", ["fix", "test"], agent_id="alice")
    assert (plan.agent_id, plan.shared) == ("alice", False)

    with pytest.raises(NotOwnerError, match=r"belongs to alice and is not shared"):
        bob.plans.check(1, plan_id=plan.id, agent="bob")
    with pytest.raises(NotOwnerError, match=r"belongs to alice"):
        bob.plans.check(1, plan_id=plan.id, uncheck=True, agent="bob")
    with pytest.raises(NotOwnerError, match=r"belongs to alice"):
        bob.plans.validate(plan_id=plan.id, agent="bob")

    after = alice.plans.get(plan.id)
    assert after is not None
    assert (after.status, after.done, after.archived) == ("active", 0, False)


def test_a_default_target_skips_plans_the_agent_may_not_change(two: tuple[Store, Store]) -> None:
    alice, bob = two
    alice.plans.create("alice's", ["a"], agent_id="alice")

    # Not "no plans": the active plan is alice's, and the answer says so and what bob may do.
    with pytest.raises(NotOwnerError, match=r"No active plan of yours to check: .*alice's.* by alice, not shared"):
        bob.plans.check(1, agent="bob")
    own = bob.plans.create("bob's", ["b"], agent_id="bob")
    alice.plans.create("alice's newer", ["c"], agent_id="alice")

    assert bob.plans.check(1, agent="bob").plan.id == own.id


def test_another_agent_may_add_a_blocker_and_work_on_a_shared_plan(two: tuple[Store, Store]) -> None:
    alice, bob = two
    private = alice.plans.create("private", ["one"], agent_id="alice")
    shared = alice.plans.create("together", ["one", "two"], agent_id="alice", shared=True)
    anonymous = alice.plans.create("nobody's", ["one"])

    bob.plans.add_blocker(1, "waiting on the API key", plan_id=private.id, agent="bob")
    bob.plans.check(1, plan_id=shared.id, agent="bob")
    bob.plans.check(2, plan_id=shared.id, agent="bob")
    bob.plans.validate(plan_id=shared.id, agent="bob")
    bob.plans.check(1, plan_id=anonymous.id, agent="bob")

    blocked = alice.plans.get(private.id)
    validated = alice.plans.get(shared.id)
    assert blocked is not None and blocked.items[0].blockers == ("waiting on the API key",)
    assert validated is not None and validated.status == "validated"
    assert anonymous.shared


# ---------------------------------------------------------------------------- handoffs
def test_a_handoff_addressed_to_someone_is_claimed_only_by_them(two: tuple[Store, Store]) -> None:
    alice, bob = two
    for_carol = alice.coord.handoffs.write("alice", "review the PR", to_agent="carol")
    for_anyone = alice.coord.handoffs.write("alice", "rotate the logs")

    with pytest.raises(NotOwnerError, match="addressed to carol"):
        bob.coord.handoffs.claim(for_carol.id, "bob")
    assert [h.id for h in alice.coord.handoffs.inbox("carol")] == [for_anyone.id, for_carol.id]

    assert bob.coord.handoffs.claim(for_anyone.id, "bob").claimed_by == "bob"
    assert alice.coord.handoffs.claim(for_carol.id, "carol").claimed_by == "carol"


# ---------------------------------------------------------------------------- workspace
def test_no_agent_writes_to_a_workspace_another_agent_holds(two: tuple[Store, Store]) -> None:
    alice, bob = two
    alice.working.workspace.claim("alice's refactor", agent_id="alice")
    alice.working.workspace.log("moved the cache", agent="alice")
    before = alice.paths.current_md.read_bytes()

    with pytest.raises(NotOwnerError, match="held by alice"):
        bob.working.workspace.log("bob was here", agent="bob")
    with pytest.raises(NotOwnerError, match="held by alice"):
        bob.working.current.update_section("Next Steps", "bob's plan", agent="bob")
    with pytest.raises(NotOwnerError, match="held by alice"):
        bob.working.current.regenerate(agent="bob")
    with pytest.raises(NotOwnerError, match="held by alice"):
        bob.working.workspace.dump("taking over", keep_active=False, acting_agent="bob")
    # A side line (a question bob asks) is recorded, but not written into alice's log.
    bob.working.questions.add("which cache?", agent_id="bob")

    assert alice.paths.current_md.read_bytes() == before
    assert alice.working.workspace.status().locked_by == "alice"
    assert [q.question for q in alice.working.questions.list()] == ["which cache?"]


def test_the_holder_and_an_anonymous_caller_still_write(two: tuple[Store, Store]) -> None:
    alice, bob = two
    alice.working.workspace.claim("alice's refactor", agent_id="alice")

    alice.working.workspace.log("by alice", agent="alice")
    alice.working.workspace.log("by alice's own process, no identity passed")
    bob.working.workspace.log("by a person's stdio server with no DOKORO_AGENT_ID")

    text = alice.paths.current_md.read_text(encoding="utf-8")
    assert "by alice" in text and "no identity passed" in text and "no DOKORO_AGENT_ID" in text


def test_force_does_not_take_a_named_agents_live_workspace(two: tuple[Store, Store], clock: FrozenClock) -> None:
    alice, bob = two
    alice.working.workspace.claim("alice's refactor", agent_id="alice")

    with pytest.raises(WorkspaceLockedError, match="locked by alice"):
        bob.working.workspace.claim("bob's hotfix", agent_id="bob")
    with pytest.raises(NotOwnerError, match=r"force=true takes over only a stale lock"):
        bob.working.workspace.claim("bob's hotfix", agent_id="bob", force=True)
    assert alice.working.workspace.status().locked_by == "alice"

    clock.advance(timedelta(minutes=31))  # past the lock's expiry: stale
    taken = bob.working.workspace.claim("bob's hotfix", agent_id="bob")
    assert taken.took_over == "alice"
    bob.working.workspace.log("now mine", agent="bob")


def test_force_still_takes_an_anonymous_live_workspace_as_in_the_reference(two: tuple[Store, Store]) -> None:
    alice, bob = two
    first = alice.working.workspace.claim("a session nobody named")

    taken = bob.working.workspace.claim("restarted after a crash", force=True)

    assert taken.took_over == first.agent_id


def test_a_named_agent_reclaiming_its_own_workspace_renews_it(two: tuple[Store, Store]) -> None:
    alice, again = two
    alice.working.workspace.claim("alice's refactor", agent_id="alice")

    renewed = again.working.workspace.claim("alice, second process", agent_id="alice")

    assert (renewed.agent_id, renewed.took_over) == ("alice", None)
