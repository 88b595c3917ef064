"""Summaries worth keeping (issue 46, item 3), on both backends: a summarise proposal carries a
draft the approver may replace with a distilled text; it writes a ``context`` memory that names its
sources; open gate pairs among the episodes never hold it back."""

from __future__ import annotations

from datetime import timedelta

import pytest
from dokoro_store import FrozenClock, Store
from dokoro_store.errors import InvalidArgumentError
from dokoro_store.semantic.memories.status import AGING

DEPLOY = [
    ("Deploy failed", "The deploy of the api failed: the migration step timed out on the staging database."),
    ("Deploy failed again", "The deploy of the api failed again: the migration step timed out on staging."),
    ("Deploy failed once more", "Deploy of the api failed once more, the migration timed out on the staging db."),
    ("Deploy fixed", "The api deploy works now: the migration step runs before the rollout with a longer timeout."),
]


def _open(store: Store, kind: str) -> list:
    return store.proposals.listing(kind=kind, limit=50).proposals


def _episodes(store: Store) -> list[str]:
    return [
        store.memories.remember(type="episode", title=title, body=body, entities=["deploys"]).memory.id
        for title, body in DEPLOY
    ]


def test_a_summary_takes_the_approvers_distilled_text_and_names_its_sources(
    any_store: Store, clock: FrozenClock
) -> None:
    ids = _episodes(any_store)
    clock.advance(AGING + timedelta(days=1))
    [proposal] = _open(any_store, "summarise")
    draft = proposal.evidence["draft"]
    assert draft["title"].startswith("Summary: 4 episodes about deploys")
    assert all(f"({i})" in draft["body"] for i in ids)  # the draft is the episodes themselves
    assert any("draft: Summary: 4 episodes" in line for line in proposal.lines())

    distilled = "Deploys of the api time out in the migration step: run migrations before the rollout."
    done = any_store.proposals.approve(proposal.id, by="ana", text=distilled, title="Api deploys: migrate first")

    [summary] = done.created
    assert (summary.type, summary.title, summary.body) == ("context", "Api deploys: migrate first", distilled)
    assert summary.source == f"proposal {proposal.id}: distilled from 4 episodes ({', '.join(sorted(ids))})"
    assert "distilled text" in (done.proposal.outcome or "")
    assert {any_store.memories.get(i).superseded_by for i in ids} == {summary.id}
    assert any_store.memories.recall("why do api deploys time out")[0].memory.id == summary.id


def test_open_gate_pairs_among_the_episodes_do_not_hold_a_summary_back(any_store: Store, clock: FrozenClock) -> None:
    ids = _episodes(any_store)
    # Young episodes that restate each other: the gate paired them, the pass proposes merges.
    assert any_store.memories.status().unresolved, "the episodes should be close enough for the gate"
    merges = _open(any_store, "merge")
    assert merges and all(set(m.memory_ids) <= set(ids) for m in merges)

    clock.advance(AGING + timedelta(days=1))
    summaries = _open(any_store, "summarise")

    # One summary of the whole run; the pairwise merges among its episodes are withdrawn, not refiled.
    assert [sorted(p.memory_ids) for p in summaries] == [sorted(ids)]
    assert _open(any_store, "merge") == []
    withdrawn = any_store.proposals.listing("rejected", kind="merge", limit=50).proposals
    assert {m.id for m in withdrawn} == {m.id for m in merges}
    assert all(f"summarised together in proposal {summaries[0].id}" in (m.outcome or "") for m in withdrawn)
    assert any_store.proposals.scan() == []  # nothing new: no merge of the next pair

    done = any_store.proposals.approve(summaries[0].id)
    assert len(done.changed) == 4 and any_store.memories.status().unresolved == []
    assert any_store.proposals.scan() == []


def test_text_is_refused_on_a_proposal_without_a_draft(any_store: Store) -> None:
    any_store.memories.remember(
        type="fact",
        title="Staging database",
        body="The staging database runs PostgreSQL 16 on port 5433",
        entities=["postgres"],
    )
    any_store.memories.remember(
        type="fact",
        title="Staging database port",
        body="The staging database runs PostgreSQL 15 on port 5432",
        entities=["postgres"],
    )
    [merge] = _open(any_store, "merge")

    with pytest.raises(InvalidArgumentError, match="replace the draft of a summarise or onboard proposal only"):
        any_store.proposals.approve(merge.id, text="something else")
    assert any_store.proposals.get(merge.id).status == "proposed"
