"""The review queue on both backends: agents' inferences wait as proposed until a person decides."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from dokoro_store import ConflictError, FrozenClock, NotFoundError, Store


@pytest.fixture
def reviewed(root: Path, clock: FrozenClock, database_url: str | None) -> Iterator[Store]:
    with Store.open(root, database_url=database_url, clock=clock, memory_review=True) as opened:
        yield opened


def test_an_agents_inference_waits_as_proposed_and_recall_shows_it_only_when_asked(reviewed: Store) -> None:
    inferred = reviewed.memories.remember(type="fact", title="CI", body="The CI runs on every push to main.").memory
    stated = reviewed.memories.remember(
        type="fact", title="CI owner", body="Ana owns the CI pipeline on main.", trust="user-stated"
    ).memory

    # An agent's claim of user-stated waits too; a person's approval makes it count.
    assert (inferred.state, stated.state) == ("proposed", "proposed")
    stated = reviewed.memories.approve(stated.id, by="ana").memory
    assert [h.memory.id for h in reviewed.memories.recall("CI main")] == [stated.id]
    shown = reviewed.memories.recall("CI main", states=("active", "proposed"))
    assert {h.memory.id for h in shown} == {inferred.id, stated.id}
    assert [m.id for m in reviewed.memories.pending_review()] == [inferred.id]
    assert reviewed.memories.status().by_state == {"active": 1, "proposed": 1}


def test_approving_makes_it_active_and_only_then_supersedes(reviewed: Store, root: Path) -> None:
    from dokoro_store.semantic.memories.service import MemoryDraft

    # What a person brought in (an import) is active at once; an agent's new version waits.
    (imported,) = reviewed.memories.remember_many(
        [MemoryDraft(type="fact", title="Port", body="The api listens on 8080.")]
    )
    old = SimpleNamespace(memory=imported)
    proposal = reviewed.memories.remember(
        type="fact", title="Port now", body="The api listens on 9090.", supersedes=old.memory.id
    ).memory
    assert (proposal.state, reviewed.memories.get(old.memory.id).state) == ("proposed", "active")
    assert "state: proposed" in next((root / "memories" / "fact").glob(f"{proposal.id}-*.md")).read_text()

    done = reviewed.memories.approve(proposal.id, by="ana")

    assert (done.decision, done.memory.state, done.memory.state_reason) == ("approved", "active", "approved by ana")
    assert done.superseded is not None and done.superseded.id == old.memory.id
    assert reviewed.memories.get(old.memory.id).superseded_by == proposal.id
    assert [h.memory.id for h in reviewed.memories.recall("api listens")] == [proposal.id]
    with pytest.raises(ConflictError, match="only proposed memories wait for review"):
        reviewed.memories.approve(proposal.id)


def test_rejecting_deprecates_it_with_the_reason_and_keeps_it(reviewed: Store) -> None:
    proposal = reviewed.memories.remember(type="lesson", title="Tabs", body="Use tabs everywhere.").memory

    done = reviewed.memories.reject(proposal.id, reason="we use spaces", by="ana")

    assert (done.decision, done.memory.state) == ("rejected", "deprecated")
    assert done.memory.state_reason == "rejected in review by ana: we use spaces"
    assert reviewed.memories.pending_review() == []
    with pytest.raises(NotFoundError):
        reviewed.memories.reject("mem_nope")


def test_setting_state_active_in_a_proposed_memorys_file_does_not_approve_it(reviewed: Store, root: Path) -> None:
    proposal = reviewed.memories.remember(type="fact", title="Linter", body="ruff checks every file.").memory
    path = next((root / "memories" / "fact").glob(f"{proposal.id}-*.md"))
    path.write_text(path.read_text().replace("state: proposed", "state: active"), encoding="utf-8")

    [change] = reviewed.memories.sync_files().changes

    # A file carries content, not authority: anyone who can write the folder could approve otherwise.
    assert (change.action, change.state) == ("not_applied", "proposed")
    assert f"dokoro memory approve {proposal.id}" in change.message
    assert reviewed.memories.get(proposal.id).state == "proposed"
    assert "state: proposed" in path.read_text()  # the file was written again from the row
    assert reviewed.memories.approve(proposal.id, by="ana").memory.state == "active"


def test_without_the_setting_nothing_waits(store: Store) -> None:
    assert store.memories.remember(type="fact", title="x", body="An inference.").memory.state == "active"
