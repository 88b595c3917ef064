"""Ownership on every memory action, on both backends, with two workspace folders on one database
(two developers' machines on the team database): forget (deprecate, purge), remember with
``supersedes``, verdicts, renew and retire, and the decisions on upkeep proposals refuse a known
agent's change to another agent's or a person's memory, say whose it is and what to do instead,
and change nothing; the owner and a person (no identity: the CLI, the TUI) may act."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from dokoro_store import FrozenClock, Store
from dokoro_store.errors import NotOwnerError
from dokoro_store.results.memories import Memory

STAGING = dict(type="fact", title="Staging database", body="The staging database runs PostgreSQL 16 on port 5433")
CLOSE = dict(type="fact", title="Staging database port", body="The staging database runs PostgreSQL 15 on port 5432")
PERSON_WORDS = "a person's memory"


@pytest.fixture
def team(tmp_path: Path, clock: FrozenClock, database_url: str | None) -> Iterator[tuple[Store, Store]]:
    """alice's and bob's stores: two workspace folders, one team database."""
    url = database_url or f"sqlite:///{tmp_path / 'team.sqlite'}"
    with (
        Store.open(tmp_path / "alice", database_url=url, clock=clock) as alice,
        Store.open(tmp_path / "bob", database_url=url, clock=clock) as bob,
    ):
        yield alice, bob


@pytest.fixture
def reviewed(tmp_path: Path, clock: FrozenClock, database_url: str | None) -> Iterator[tuple[Store, Store]]:
    url = database_url or f"sqlite:///{tmp_path / 'team.sqlite'}"
    with (
        Store.open(tmp_path / "alice", database_url=url, clock=clock, memory_review=True) as alice,
        Store.open(tmp_path / "bob", database_url=url, clock=clock, memory_review=True) as bob,
    ):
        yield alice, bob


def _alices(store: Store, **fields: object) -> Memory:
    return store.memories.remember(**{**STAGING, "entities": ["postgres"], **fields}, agent_id="alice").memory  # type: ignore[arg-type]


def _persons(store: Store, **fields: object) -> Memory:
    """A fact a person stated (no agent wrote it): as `dokoro memory edit` or a memory file leaves one."""
    return store.memories.remember(**{**STAGING, "entities": ["postgres"], **fields}, trust="user-stated").memory  # type: ignore[arg-type]


def _unchanged(store: Store, memory: Memory) -> None:
    now = store.memories.get(memory.id)
    assert (now.state, now.superseded_by, now.state_changed_by, now.title) == (
        memory.state,
        memory.superseded_by,
        memory.state_changed_by,
        memory.title,
    )


def test_forget_refuses_another_agents_and_a_persons_memory_in_either_folder(team: tuple[Store, Store]) -> None:
    alice, bob = team
    alices = _alices(alice)
    persons = _persons(alice, title="Staging database host")

    for victim, owner in ((alices, "alice's memory"), (persons, PERSON_WORDS)):
        with pytest.raises(NotOwnerError, match=f"is {owner}") as deprecating:
            bob.memories.forget(victim.id, reason="out of date", acting_agent="bob")
        assert "may not deprecate it. Nothing changed" in str(deprecating.value)
        assert f"dokoro memory forget {victim.id}" in str(deprecating.value)  # what to do instead
        with pytest.raises(NotOwnerError, match=f"is {owner}.*may not purge it"):
            bob.memories.forget(victim.id, purge=True, confirm=True, acting_agent="bob")
        _unchanged(alice, victim)
        _unchanged(bob, victim)

    # The owner may; a person (no identity, the CLI) may forget anyone's.
    assert alice.memories.forget(alices.id, reason="moved", acting_agent="alice")[1].action == "deprecated"
    assert bob.memories.forget(persons.id, reason="moved")[1].action == "deprecated"


def test_forget_refuses_a_proposal_under_review_that_another_agent_wrote(
    reviewed: tuple[Store, Store],
) -> None:
    alice, bob = reviewed
    proposal = _alices(alice)
    assert proposal.state == "proposed"

    with pytest.raises(NotOwnerError, match="alice's memory; you \\(bob\\) may not deprecate it"):
        bob.memories.forget(proposal.id, reason="I disagree", acting_agent="bob")

    _unchanged(alice, proposal)
    assert [m.id for m in alice.memories.pending_review()] == [proposal.id]


def test_a_memory_nobody_owns_is_anyones_to_forget(team: tuple[Store, Store]) -> None:
    alice, bob = team
    inferred = alice.memories.remember(**STAGING).memory  # an agent without a name inferred it
    imported = alice.memories.remember(**CLOSE, trust="imported").memory

    assert bob.memories.forget(inferred.id, reason="stale", acting_agent="bob")[0].state_changed_by == "bob"
    assert bob.memories.forget(imported.id, purge=True, confirm=True, acting_agent="bob")[1].action == "purged"


def test_remember_with_supersedes_refuses_another_agents_and_a_persons_memory(team: tuple[Store, Store]) -> None:
    alice, bob = team
    alices = _alices(alice)
    persons = _persons(alice, title="Staging database host")
    before = bob.memories.status().total

    for victim, owner in ((alices, "alice's memory"), (persons, PERSON_WORDS)):
        with pytest.raises(NotOwnerError, match=f"is {owner}") as refused:
            bob.memories.remember(**CLOSE, agent_id="bob", supersedes=victim.id)
        assert "you (bob) may not supersede it. Nothing was stored" in str(refused.value)
        assert "without supersedes" in str(refused.value)
        _unchanged(alice, victim)
    assert bob.memories.status().total == before  # all or nothing: bob's memory was not stored

    # Without supersedes bob's memory is kept beside alice's; the owner may supersede her own.
    assert bob.memories.remember(**CLOSE, agent_id="bob").memory.state == "active"
    newer = alice.memories.remember(**{**CLOSE, "title": "Staging port"}, agent_id="alice", supersedes=alices.id)
    assert newer.superseded is not None and newer.superseded.id == alices.id


def test_under_review_a_supersede_of_another_agents_memory_waits_for_a_person(reviewed: tuple[Store, Store]) -> None:
    alice, bob = reviewed
    decision = _alices(alice)
    alice.memories.approve(decision.id, by="ana")

    bobs = bob.memories.remember(**CLOSE, agent_id="bob", supersedes=decision.id).memory

    assert (bobs.state, bobs.supersedes) == ("proposed", decision.id)
    assert alice.memories.get(decision.id).state == "active"  # until a person approves bob's
    alice.memories.approve(bobs.id, by="ana")
    assert alice.memories.get(decision.id).superseded_by == bobs.id


def test_a_verdict_never_archives_another_agents_or_a_persons_memory_even_on_a_pair_shown(
    team: tuple[Store, Store],
) -> None:
    alice, bob = team
    for n, victim in enumerate((_alices(alice), _persons(alice, title="Staging database host"))):
        shown = bob.memories.remember(**{**CLOSE, "title": f"Staging port {n}"}, entities=["postgres"], agent_id="bob")
        assert victim.id in [c.memory.id for c in shown.conflicts]  # the gate put the pair before bob

        with pytest.raises(NotOwnerError, match="may not archive \\(supersede\\) it") as refused:
            bob.memories.verdict(shown.memory.id, victim.id, "supersede", agent_id="bob")
        assert "keep_both" in str(refused.value) and "merge proposal" in str(refused.value)
        _unchanged(alice, victim)
        # keep_both changes no memory: bob's to give on the pair the gate showed him.
        assert bob.memories.verdict(shown.memory.id, victim.id, "keep_both", agent_id="bob").old.state == "active"
        bob.memories.forget(shown.memory.id, reason="test done", acting_agent="bob")


def test_renew_and_retire_refuse_a_persons_memory(team: tuple[Store, Store]) -> None:
    alice, bob = team
    persons = _persons(alice)

    with pytest.raises(NotOwnerError, match=f"is {PERSON_WORDS}.*; you \\(bob\\) may not retire it"):
        bob.upkeep.renew(persons.id, retire=True, reason="old", acting_agent="bob")
    with pytest.raises(NotOwnerError, match="may not renew it"):
        bob.upkeep.renew(persons.id, review_after="2999-01-01", acting_agent="bob")

    _unchanged(alice, persons)
    assert bob.upkeep.renew(persons.id, retire=True, reason="old").action == "retired"  # a person may


def test_an_agent_may_not_approve_a_merge_that_archives_a_persons_fact_for_its_own_text(
    team: tuple[Store, Store],
) -> None:
    alice, bob = team
    persons = _persons(alice)
    bobs = bob.memories.remember(**CLOSE, entities=["postgres"], agent_id="bob").memory
    [merge] = alice.proposals.listing(kind="merge").proposals  # a person sees it
    assert (merge.evidence["keep"], merge.evidence["supersede"]) == (bobs.id, [persons.id])

    assert bob.proposals.listing(kind="merge", acting_agent="bob").proposals == []  # not bob's to decide
    for decide in (bob.proposals.approve, bob.proposals.reject):
        with pytest.raises(NotOwnerError, match=f"changes {PERSON_WORDS}.*Nothing changed"):
            decide(merge.id, acting_agent="bob")
    _unchanged(alice, persons)
    assert alice.proposals.get(merge.id).status == "proposed"

    done = alice.proposals.approve(merge.id, by="ana")  # a person decides
    assert [m.id for m in done.changed] == [persons.id] and done.changed[0].state == "archived"


def test_an_agent_may_not_decide_a_merge_that_archives_another_agents_memory(team: tuple[Store, Store]) -> None:
    alice, bob = team
    alices = _alices(alice)
    bobs = bob.memories.remember(**CLOSE, entities=["postgres"], agent_id="bob").memory
    [merge] = bob.proposals.listing(kind="merge").proposals
    assert merge.memory_ids == [bobs.id, alices.id]

    with pytest.raises(NotOwnerError, match=r"changes (alice|bob)'s memory"):
        bob.proposals.approve(merge.id, acting_agent="bob")
    with pytest.raises(NotOwnerError, match=r"changes (alice|bob)'s memory"):
        alice.proposals.approve(merge.id, acting_agent="alice")
    _unchanged(alice, alices)
