"""Upkeep on real use (issue 46, item 4): only a close match a recall showed counts as a use; a
memory type switched off is hidden from recall, search and the briefing, and the status says so;
the health line counts open contradictions and memories unused for 90 days. Both databases."""

from __future__ import annotations

from datetime import timedelta

import pytest
from dokoro_store import CLOSE_MATCH, FrozenClock, InvalidArgumentError, Store
from dokoro_store.briefing import build_briefing
from dokoro_store.semantic.memories.health import UNUSED_AFTER, health_line
from dokoro_store.semantic.memories.proposals.proposers import PRUNE_AGE


def _prunes(store: Store) -> list[str]:
    return [p.memory_ids[0] for p in store.proposals.listing(kind="prune", limit=50).proposals]


def test_a_weak_recall_is_not_a_use_and_the_memory_is_still_proposed_for_pruning(
    any_store: Store, clock: FrozenClock
) -> None:
    host = any_store.memories.remember(
        type="fact", title="Staging host", body="The staging database runs on db-new.internal."
    ).memory
    manager = any_store.memories.remember(type="fact", title="Package manager", body="We use pnpm for the web app.")
    clock.advance(timedelta(days=1))

    weak = any_store.memories.recall("kubernetes ingress annotations for the blue cluster")
    strong = any_store.memories.recall("staging database host")

    # The weak recall shows its nearest memories (as such) and counts none of them as a use.
    assert weak and all(h.relevance < CLOSE_MATCH for h in weak), [(h.memory.title, h.relevance) for h in weak]
    assert strong[0].memory.id == host.id and strong[0].relevance >= CLOSE_MATCH
    assert any_store.memories.get(manager.memory.id).recall_count == 0
    assert any_store.memories.get(host.id).recall_count == 1

    clock.advance(PRUNE_AGE)
    # A year of weak recalls later the never-used memory is still proposed for pruning; the used one is not.
    any_store.memories.recall("kubernetes ingress annotations for the blue cluster")
    assert _prunes(any_store) == [manager.memory.id]


def test_the_structured_score_is_the_relevance_and_the_rank_score_is_named_so(any_store: Store) -> None:
    any_store.memories.remember(type="fact", title="Staging host", body="The staging database runs on db-new.internal.")
    any_store.memories.remember(type="fact", title="Package manager", body="We use pnpm for the web app.")

    hits = any_store.memories.recall("staging database host")

    assert hits[0].memory.title == "Staging host"
    for hit in hits:
        assert hit.score == hit.relevance
        wire = hit.model_dump(mode="json")
        assert wire["score"] == wire["relevance"] and "rank_score" in wire
    # A client ordering by score puts the match first, the unrelated memory below it.
    assert hits[0].score > max(h.score for h in hits[1:])


def test_a_type_switched_off_is_hidden_from_recall_search_and_briefing_and_status_says_so(
    any_store: Store,
) -> None:
    episode = any_store.memories.remember(
        type="episode", title="Debugged the flaky login test", body="The login test raced the session refresh."
    ).memory
    rule = any_store.memories.remember(type="rule", title="Tests first", body="Run the login tests before landing.")
    fact = any_store.memories.remember(type="fact", title="Login", body="Login sessions use opaque tokens.").memory

    any_store.upkeep.switches.set(["episode", "rule"], enabled=False, by="ana")

    recalled = [h.memory.id for h in any_store.memories.recall("flaky login test session refresh")]
    asked = any_store.memories.recall_answer("flaky login test", types=["episode"])
    found = [h.doc_id for h in any_store.search.universal("flaky login test session refresh").results]
    briefing = build_briefing(any_store)
    status = any_store.memories.status()

    assert episode.id not in recalled and fact.id in recalled
    assert asked.hits == [] and asked.hidden_types == ["rule", "episode"]
    assert f"memory:{episode.id}" not in found and f"memory:{fact.id}" in found
    assert rule.memory.id not in [m.id for m in briefing.rules_shown]
    assert "rule memories are switched off in this store" in briefing.render()
    assert status.hidden == {"rule": 1, "episode": 1} and status.result().hidden_types == {"rule": 1, "episode": 1}
    with pytest.raises(InvalidArgumentError, match="'episode' is switched off in this store: nothing was stored"):
        any_store.memories.remember(type="episode", title="Another", body="Not stored.", agent_id="claude")

    # Nothing was deleted: switched on again, the memories are back.
    any_store.upkeep.switches.set(["episode", "rule"], enabled=True)
    assert episode.id in [h.memory.id for h in any_store.memories.recall("flaky login test session refresh")]
    assert rule.memory.id in [m.id for m in build_briefing(any_store).rules_shown]
    assert any_store.memories.status().hidden == {}


def test_the_health_line_counts_open_contradictions_and_unused_memories(any_store: Store, clock: FrozenClock) -> None:
    assert health_line(any_store.db, any_store.clock) is None
    first = any_store.memories.remember(
        type="fact", title="Deploy day", body="We deploy the api on Fridays.", entities=["deploys"]
    )
    second = any_store.memories.remember(
        type="fact", title="Deploy day", body="We deploy the api on Thursdays.", entities=["deploys"]
    )
    any_store.memories.remember(type="rule", title="Review", body="Every change is reviewed.")
    assert [c.memory.id for c in second.conflicts] == [first.memory.id]

    line = health_line(any_store.db, any_store.clock)
    assert line is not None and "1 open contradiction" in line and "unused" not in line

    clock.advance(UNUSED_AFTER)
    line = health_line(any_store.db, any_store.clock)
    # Two facts never used in 90 days (the rule is briefed without a recall: not counted).
    assert line is not None and "1 open contradiction, 2 unused for 90+ days" in line
    assert any_store.memories.status().health == line
    assert any_store.upkeep.review().health == line

    any_store.memories.verdict(second.memory.id, first.memory.id, "supersede")
    line = health_line(any_store.db, any_store.clock)
    assert line is not None and "contradiction" not in line and "1 unused for 90+ days" in line


def test_the_health_line_counts_up_to_a_cap_so_its_cost_never_grows_with_the_store() -> None:
    from dokoro_store.semantic.memories.health import COUNT_CAP, Health

    line = Health(contradictions=COUNT_CAP + 1, unused=COUNT_CAP).line()

    assert line is not None and f"{COUNT_CAP}+ open contradictions, {COUNT_CAP} unused for 90+ days" in line
