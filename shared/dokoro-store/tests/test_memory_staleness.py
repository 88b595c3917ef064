"""Staleness (issue 32): computed at read, said in every answer, ranked between current and retired;
``depends_on`` links flag dependents when what they depend on is retired; renewal; the health line."""

from __future__ import annotations

from datetime import timedelta

import pytest
from dokoro_store.briefing import build_briefing
from dokoro_store.clock import iso
from dokoro_store.errors import ConflictError, InvalidArgumentError, NotOwnerError
from dokoro_store.semantic.memories import repository
from dokoro_store.semantic.memories.health import health_line


def _link(store, memory_id: str, depends_on: str) -> None:
    with store.db.write() as session:
        repository.link(session, memory_id, [depends_on], now=store.clock.now())


def _deploys(store, clock, **dates):
    """A memory that will be past its date, a current one and a retired one, all about deploys."""
    dated = store.memories.remember(
        type="fact",
        title="Deploys go through Jenkins",
        body="Deploys go through the Jenkins pipeline on build-01.",
        **{k: iso(clock.now() + v) for k, v in dates.items()},
    ).memory
    current = store.memories.remember(
        type="fact", title="Deploy pipeline", body="Deploys go through GitHub Actions now."
    ).memory
    retired = store.memories.remember(
        type="fact", title="Deploys through Jenkins pipeline", body="Deploys go through the Jenkins pipeline nightly."
    ).memory
    store.memories.forget(retired.id, reason="no nightly deploys")
    clock.advance(timedelta(days=3))
    return dated, current, retired


def test_a_memory_past_review_after_ranks_below_current_and_above_retired_and_says_stale(any_store, clock):
    dated, current, retired = _deploys(any_store, clock, review_after=timedelta(days=1))

    hits = any_store.memories.recall(
        "deploys go through the Jenkins pipeline", states=("active", "deprecated"), count_use=False
    )
    found = any_store.search.universal("deploys go through the Jenkins pipeline", limit=5).hits
    context = any_store.bridge.get_context("deploys go through the Jenkins pipeline", limit=3)

    assert [h.memory.id for h in hits] == [current.id, dated.id, retired.id]
    assert hits[0].stale is None and hits[2].stale is None and hits[2].retired is not None
    assert hits[1].stale == f"stale: due for review since {iso(clock.now() - timedelta(days=2))}"
    assert "stale: due for review since" in hits[1].reason and hits[1].retired is None
    memory_hits = [h for h in found if h.doc_id.startswith("memory:")]
    assert [h.doc_id for h in memory_hits] == [f"memory:{i}" for i in (current.id, dated.id, retired.id)]
    assert memory_hits[1].stale is not None and memory_hits[1].stale.startswith("stale:")
    entries = {e.doc_id: e for e in context.entries}
    assert entries[f"memory:{dated.id}"].stale.startswith("stale: due for review")


def test_a_memory_past_valid_until_is_stale_in_recall_and_in_the_review_list(any_store, clock):
    dated, current, _retired = _deploys(any_store, clock, valid_until=timedelta(days=1))

    hits = any_store.memories.recall("deploys go through the Jenkins pipeline", count_use=False)
    review = any_store.upkeep.review()

    assert [h.memory.id for h in hits] == [current.id, dated.id]
    assert hits[1].stale == f"stale: past valid_until {iso(clock.now() - timedelta(days=2))}"
    assert [(e.memory.id, e.stale) for e in review.stale] == [(dated.id, hits[1].stale)]
    assert review.stale_total == 1


def test_retiring_a_memory_flags_its_dependents_until_they_are_renewed(any_store, clock):
    base = any_store.memories.remember(
        type="decision", title="We deploy with Jenkins", body="Jenkins runs every deploy from build-01."
    ).memory
    dependent = any_store.memories.remember(
        type="fact", title="Deploy credentials live in Jenkins", body="The deploy keys are Jenkins credentials."
    ).memory
    other = any_store.memories.remember(type="fact", title="Builds run on Linux", body="Every build is Linux.").memory
    _link(any_store, dependent.id, base.id)
    assert any_store.upkeep.review().stale == []

    retired = any_store.upkeep.renew(base.id, retire=True, reason="moved to GitHub Actions")

    assert retired.action == "retired" and retired.memory.state == "deprecated"
    assert retired.dependents_flagged == [dependent.id]
    review = any_store.upkeep.review()
    assert [e.memory.id for e in review.stale] == [dependent.id]
    assert review.stale[0].stale == f"stale: depends on {base.id}, which is deprecated"
    hits = any_store.memories.recall("deploy keys Jenkins credentials", count_use=False)
    assert next(h for h in hits if h.memory.id == dependent.id).stale == review.stale[0].stale
    assert other.id not in {e.memory.id for e in review.stale}

    renewed = any_store.upkeep.renew(dependent.id)

    assert renewed.action == "renewed" and renewed.stale is None
    assert any_store.upkeep.review().stale == []


def test_a_supersede_and_a_purge_flag_dependents_too(any_store):
    old = any_store.memories.remember(type="decision", title="Use JWT", body="Auth uses JWT access tokens.").memory
    new = any_store.memories.remember(
        type="decision", title="Use opaque tokens", body="Auth uses opaque session tokens.", supersedes=old.id
    ).memory
    # Linked before the supersede: the supersede flags it.
    first = any_store.memories.remember(type="fact", title="Token lifetime", body="Tokens live 15 minutes.").memory
    gone = any_store.memories.remember(type="fact", title="Token signing", body="Tokens are signed with RS256.").memory
    second = any_store.memories.remember(type="fact", title="Key rotation", body="Signing keys rotate weekly.").memory
    _link(any_store, second.id, gone.id)
    with any_store.db.write() as session:
        repository.link(session, first.id, [new.id], now=any_store.clock.now())
    third = any_store.memories.remember(type="decision", title="Use sessions", body="Sessions hold the user.").memory
    any_store.memories.remember(
        type="decision", title="Use cookies", body="Cookies carry the session id.", supersedes=new.id
    )

    any_store.memories.forget(gone.id, purge=True, confirm=True)

    stale = {e.memory.id: e.stale for e in any_store.upkeep.review().stale}
    assert stale[second.id] == f"stale: depends on {gone.id}, which was purged"
    assert stale[first.id].startswith(f"stale: depends on {new.id}, superseded by ")
    assert third.id not in stale


def test_renew_pushes_dates_forward_and_refuses_what_it_cannot_do(any_store, clock):
    dated, _current, retired = _deploys(any_store, clock, review_after=timedelta(days=1))
    later = iso(clock.now() + timedelta(days=30))

    with pytest.raises(InvalidArgumentError, match="review_after must be later than now"):
        any_store.upkeep.renew(dated.id, review_after=iso(clock.now() - timedelta(days=1)))
    with pytest.raises(InvalidArgumentError, match="past its review_after"):
        any_store.upkeep.renew(dated.id)
    with pytest.raises(InvalidArgumentError, match="reason is required"):
        any_store.upkeep.renew(dated.id, retire=True)
    with pytest.raises(InvalidArgumentError, match="retire=true takes no new dates"):
        any_store.upkeep.renew(dated.id, retire=True, reason="x", review_after=later)
    with pytest.raises(InvalidArgumentError, match="review_after"):
        any_store.upkeep.renew(dated.id, review_after="next tuesday")
    with pytest.raises(ConflictError, match="is deprecated"):
        any_store.upkeep.renew(retired.id, review_after=later)

    done = any_store.upkeep.renew(dated.id, review_after=later)

    assert done.stale is None and iso(done.memory.review_after) == later
    hits = any_store.memories.recall("deploys go through the Jenkins pipeline", count_use=False)
    assert hits[0].memory.id == dated.id or hits[1].memory.id == dated.id
    assert all(h.stale is None for h in hits)


def test_an_agent_renews_only_its_own_memories(any_store, clock):
    mine = any_store.memories.remember(
        type="fact",
        title="Cache TTL",
        body="The cache TTL is 60 s.",
        agent_id="ana",
        review_after=iso(clock.now() + timedelta(days=1)),
    ).memory
    clock.advance(timedelta(days=2))
    later = iso(clock.now() + timedelta(days=30))

    with pytest.raises(NotOwnerError, match="is ana's memory; you \\(ben\\) may not"):
        any_store.upkeep.renew(mine.id, review_after=later, acting_agent="ben")
    assert any_store.upkeep.review().stale_total == 1

    assert any_store.upkeep.renew(mine.id, review_after=later, acting_agent="ana").stale is None


def test_the_health_line_appears_and_disappears(any_store, clock):
    memory = any_store.memories.remember(
        type="rule",
        title="Run the linter before a commit",
        body="Always run ruff before committing.",
        review_after=iso(clock.now() + timedelta(days=1)),
    ).memory
    assert health_line(any_store.db, any_store.clock) is None
    assert any_store.memories.status().health is None
    assert not build_briefing(any_store).render().startswith("⚠️")

    clock.advance(timedelta(days=2))

    line = "memory health: 1 stale memory: run `dokoro memory review` (agents: dokoro_memory_review)"
    assert health_line(any_store.db, any_store.clock) == line
    assert any_store.memories.status().health == line
    briefing = build_briefing(any_store).render()
    assert briefing.splitlines()[0] == f"⚠️ {line}"
    assert "⏳ stale: due for review since" in briefing

    any_store.upkeep.renew(memory.id, review_after=iso(clock.now() + timedelta(days=30)))

    assert health_line(any_store.db, any_store.clock) is None
    assert any_store.memories.status().health is None
    assert not build_briefing(any_store).render().startswith("⚠️")


def test_status_counts_reads_and_writes_per_type(any_store):
    used = any_store.memories.remember(type="fact", title="Port", body="The API listens on 8080.").memory
    any_store.memories.remember(type="fact", title="Region", body="We deploy to eu-west-1.")
    any_store.memories.remember(type="preference", title="Tabs", body="Ana prefers spaces over tabs.")
    any_store.memories.recall("which port does the API listen on", limit=1)
    any_store.memories.recall("API port 8080", limit=1)

    usage = {u.type: u for u in any_store.memories.status().usage}

    assert set(usage) == {"fact", "preference"}
    assert (usage["fact"].written, usage["fact"].read, usage["fact"].never_read) == (2, 2, 1)
    assert (usage["preference"].written, usage["preference"].read, usage["preference"].never_read) == (1, 0, 1)
    assert any_store.memories.get(used.id).recall_count == 2


def test_switches_are_kept_in_the_database_and_refuse_unknown_types(any_store):
    switches = any_store.upkeep.switches

    assert all(s.agents_write and not s.needs_review for s in switches.all())
    after = switches.set(["preference"], agents_write=False, by="ana")
    after = switches.set(["episode", "lesson"], needs_review=True)

    by_type = {s.type: s for s in after}
    assert (by_type["preference"].agents_write, by_type["preference"].changed_by) == (False, "ana")
    assert by_type["episode"].needs_review and by_type["lesson"].needs_review
    assert by_type["fact"].agents_write and not by_type["fact"].needs_review
    with pytest.raises(InvalidArgumentError, match="'opinion' is not a memory type"):
        switches.set(["opinion"], agents_write=False)
    with pytest.raises(InvalidArgumentError, match="say what to change"):
        switches.set(["fact"])


def test_remember_refuses_a_switched_off_type_and_keeps_nothing(any_store):
    any_store.upkeep.switches.set(["preference"], agents_write=False)

    with pytest.raises(InvalidArgumentError, match="memory type 'preference' is switched off for agents") as refused:
        any_store.memories.remember(type="preference", title="Tabs", body="Ana prefers tabs.")

    assert "`dokoro memory types preference --agents-write on`" in str(refused.value)
    assert any_store.memories.status().total == 0
    any_store.upkeep.switches.set(["preference"], agents_write=True)
    assert any_store.memories.remember(type="preference", title="Tabs", body="Ana prefers tabs.").memory.state == (
        "active"
    )


def test_remember_depends_on_and_a_supersede_names_the_dependents_it_flags(any_store):
    old = any_store.memories.remember(type="decision", title="Use JWT", body="Auth uses JWT access tokens.").memory
    dependent = any_store.memories.remember(
        type="fact", title="Token lifetime", body="JWT tokens live 15 minutes.", depends_on=[old.id, old.id]
    )
    assert dependent.depends_on == [old.id]

    new = any_store.memories.remember(
        type="decision", title="Use opaque tokens", body="Auth uses opaque session tokens.", supersedes=old.id
    )

    assert f"depending on {old.id} are now stale until renewed: {dependent.memory.id}" in " ".join(new.notes)
    with pytest.raises(ConflictError, match="is archived: a memory depends only on memories in force"):
        any_store.memories.remember(type="fact", title="T", body="B.", depends_on=[old.id])
    with pytest.raises(InvalidArgumentError, match="at most 20"):
        any_store.memories.remember(type="fact", title="T", body="B.", depends_on=[f"mem_{i}" for i in range(21)])
