"""Advisory file claims (reference §4.9a) on SQLite and PostgreSQL.

Leases run on the database clock; tests move a claim or a heartbeat into the past by editing
its row (no sleeping).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from dokoro_store import InvalidArgumentError, Store
from dokoro_store.coordination.claims.service import normalise_claim_paths
from dokoro_store.models import AgentPresence, FileClaim
from sqlalchemy import update

ROOT = Path("/work/project")


def _age_claims(store: Store, seconds: int) -> None:
    with store.db.write() as session:
        session.execute(
            update(FileClaim).values(
                expires_at=FileClaim.expires_at - seconds,
                claimed_at=FileClaim.claimed_at - seconds,
            )
        )


def _age_presence(store: Store, agent: str, seconds: int) -> None:
    with store.db.write() as session:
        session.execute(
            update(AgentPresence)
            .where(AgentPresence.agent_id == agent)
            .values(last_heartbeat=AgentPresence.last_heartbeat - seconds)
        )


def _statuses(outcome) -> dict[str, str]:
    return {item.path: item.status for item in outcome.report}


# ---------------------------------------------------------------------------------------------- paths


def test_paths_are_normalised_relative_to_the_root_with_case_insensitive_keys():
    targets = normalise_claim_paths(
        ["src/App.py", "./src/../src/app.py", "/work/project/docs/Guide.md", "lib\\util.py", "Café.md"], ROOT
    )

    assert [(t.path, t.key) for t in targets] == [
        ("src/App.py", "src/app.py"),
        ("docs/Guide.md", "docs/guide.md"),
        ("lib/util.py", "lib/util.py"),
        ("Café.md", "café.md"),
    ]


def test_a_decomposed_unicode_spelling_is_the_same_path():
    (composed,) = normalise_claim_paths(["Cafe\u0301.md"], ROOT)
    assert composed.key == "café.md"


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ("../elsewhere.py", "outside the root"),
        ("/etc/passwd", "outside the root"),
        ("/work/projectile/x.py", "outside the root"),  # a sibling sharing the prefix is not inside
        (".", "is the root itself"),
        ("/work/project", "is the root itself"),
        ("", "empty path"),
        ("   ", "empty path"),
    ],
)
def test_a_path_outside_the_root_rejects_the_whole_call(bad, reason):
    with pytest.raises(InvalidArgumentError) as caught:
        normalise_claim_paths(["src/ok.py", bad], ROOT)

    message = str(caught.value)
    assert message.startswith("file_claim rejected — NOTHING was claimed. Invalid path(s): ")
    assert reason in message
    assert "src/ok.py" not in message


def test_too_many_or_no_paths_are_refused():
    with pytest.raises(InvalidArgumentError, match="at most 50 paths"):
        normalise_claim_paths([f"f{i}" for i in range(51)], ROOT)
    with pytest.raises(InvalidArgumentError, match="at least one path"):
        normalise_claim_paths([], ROOT)


# ---------------------------------------------------------------------------------------------- claim


def test_a_free_path_is_claimed_for_the_ttl_on_the_database_clock(any_store: Store):
    outcome = any_store.coord.claims.claim(["src/a.py", "SRC/A.py"], "alice", root=ROOT, ttl_seconds=120)

    assert outcome.claimed and outcome.expires_in_seconds == 120
    assert _statuses(outcome) == {"src/a.py": "claimed"}  # two spellings, one file
    (view,) = any_store.coord.claims.list()
    (event,) = any_store.coord.claims.history("src/a.py", root=ROOT)
    assert (view.path, view.agent_id, view.expires_at - event.at, view.heartbeat_seq) == ("src/a.py", "alice", 120, 0)
    assert 0 < view.expires_in_seconds <= 120  # the seconds left when listed, however slow the machine


def test_claiming_your_own_path_again_renews_it_and_counts_the_heartbeat(any_store: Store):
    claims = any_store.coord.claims
    claims.claim(["a.py"], "alice", root=ROOT, intent="refactor", session_id="s1")
    _age_claims(any_store, 100)

    renewed = claims.claim(["a.py"], "alice", root=ROOT, ttl_seconds=600)
    again = claims.claim(["a.py"], "alice", root=ROOT, ttl_seconds=600, intent="tests")

    assert _statuses(renewed) == {"a.py": "renewed"} == _statuses(again)
    (view,) = claims.list()
    assert view.heartbeat_seq == 2
    assert view.intent == "tests"  # replaced only when given
    assert view.session_id == "s1"
    assert view.expires_in_seconds > 500


def test_a_live_claim_of_another_agent_is_a_conflict_and_nothing_is_claimed(any_store: Store):
    claims = any_store.coord.claims
    claims.claim(["shared.py"], "alice", root=ROOT, intent="rename")
    any_store.coord.presence.ping("alice")

    outcome = claims.claim(["mine.py", "shared.py"], "bob", root=ROOT)

    assert outcome.claimed is False
    mine, shared = outcome.report
    assert (mine.path, mine.status) == ("mine.py", "would_acquire")
    assert (shared.path, shared.status) == ("shared.py", "conflict")
    assert shared.holder is not None
    assert (shared.holder.agent_id, shared.holder.intent, shared.holder.presence) == ("alice", "rename", "live")
    assert 0 < shared.holder.expires_in_seconds <= 300
    # All-or-nothing: the free path was not claimed either.
    assert [(v.path, v.agent_id) for v in claims.list()] == [("shared.py", "alice")]


def test_a_holder_that_never_pinged_counts_as_live(any_store: Store):
    any_store.coord.claims.claim(["a.py"], "alice", root=ROOT)

    outcome = any_store.coord.claims.claim(["a.py"], "bob", root=ROOT)

    assert outcome.claimed is False
    assert outcome.report[0].holder.presence == "unknown"


def test_an_expired_claim_is_taken_over(any_store: Store):
    claims = any_store.coord.claims
    claims.claim(["a.py"], "alice", root=ROOT, ttl_seconds=60)
    _age_claims(any_store, 61)

    outcome = claims.claim(["a.py"], "bob", root=ROOT)

    assert outcome.claimed
    assert [(i.status, i.previous_holder) for i in outcome.report] == [("taken_over", "alice")]
    assert [(v.agent_id, v.heartbeat_seq) for v in claims.list()] == [("bob", 0)]


def test_an_unexpired_claim_of_an_agent_whose_presence_is_stale_is_taken_over(any_store: Store):
    claims = any_store.coord.claims
    claims.claim(["a.py"], "alice", root=ROOT, ttl_seconds=3600)
    any_store.coord.presence.ping("alice")
    _age_presence(any_store, "alice", 901)

    listed = claims.list()
    outcome = claims.claim(["a.py"], "bob", root=ROOT)

    assert listed[0].presence == "stale"
    assert [(i.status, i.previous_holder) for i in outcome.report] == [("taken_over", "alice")]


def test_force_takes_a_live_claim_and_the_history_says_so(any_store: Store):
    claims = any_store.coord.claims
    claims.claim(["a.py"], "alice", root=ROOT)

    outcome = claims.claim(["a.py"], "bob", root=ROOT, force=True)

    assert [(i.status, i.previous_holder) for i in outcome.report] == [("taken_over_forced", "alice")]
    history = [(e.agent_id, e.action, e.previous_agent) for e in claims.history("a.py", root=ROOT)]
    assert history == [("alice", "claimed", None), ("bob", "taken_over_forced", "alice")]


def test_a_released_row_is_reused_by_the_next_claim(any_store: Store):
    claims = any_store.coord.claims
    claims.claim(["a.py"], "alice", root=ROOT)
    claims.release("alice", root=ROOT, paths=["a.py"])

    outcome = claims.claim(["A.py"], "bob", root=ROOT)

    assert _statuses(outcome) == {"A.py": "claimed"}
    assert [(v.path, v.agent_id) for v in claims.list()] == [("A.py", "bob")]


def test_bad_claim_arguments_are_refused_before_anything_is_written(any_store: Store):
    claims = any_store.coord.claims
    with pytest.raises(InvalidArgumentError, match="ttl_seconds must be between 1 and 3600"):
        claims.claim(["a.py"], "alice", root=ROOT, ttl_seconds=3601)
    with pytest.raises(InvalidArgumentError, match="agent_id must not be empty"):
        claims.claim(["a.py"], " ", root=ROOT)
    with pytest.raises(InvalidArgumentError, match="outside the root"):
        claims.claim(["a.py", "../b.py"], "alice", root=ROOT)
    assert claims.list(include_expired=True) == []
    assert claims.history() == []


# ---------------------------------------------------------------------------------------------- release


def test_only_the_owner_releases_and_releasing_is_idempotent(any_store: Store):
    claims = any_store.coord.claims
    claims.claim(["a.py", "b.py"], "alice", root=ROOT)

    by_bob = claims.release("bob", root=ROOT, paths=["a.py", "nothing.py"])
    by_alice = claims.release("alice", root=ROOT, paths=["a.py"])
    twice = claims.release("alice", root=ROOT, paths=["a.py"])

    assert [(i.path, i.status) for i in by_bob.report] == [("a.py", "not_held_by_you"), ("nothing.py", "not_found")]
    assert [(i.path, i.status) for i in by_alice.report] == [("a.py", "released")]
    assert [(i.path, i.status) for i in twice.report] == [("a.py", "not_found")]
    assert [v.path for v in claims.list()] == ["b.py"]


def test_release_all_frees_every_claim_of_the_agent_only(any_store: Store):
    claims = any_store.coord.claims
    claims.claim(["a.py", "b.py"], "alice", root=ROOT)
    claims.claim(["c.py"], "bob", root=ROOT)

    released = claims.release("alice", root=ROOT, all=True)
    nothing = claims.release("alice", root=ROOT, all=True)

    assert released.released == ["a.py", "b.py"]
    assert nothing.report == []
    assert [v.agent_id for v in claims.list()] == ["bob"]


def test_release_needs_exactly_one_of_paths_or_all(any_store: Store):
    with pytest.raises(InvalidArgumentError, match="exactly one of: paths"):
        any_store.coord.claims.release("alice", root=ROOT)
    with pytest.raises(InvalidArgumentError, match="exactly one of: paths"):
        any_store.coord.claims.release("alice", root=ROOT, paths=["a.py"], all=True)


def test_ending_a_session_releases_the_claims_tagged_with_it(any_store: Store):
    claims = any_store.coord.claims
    claims.claim(["a.py"], "alice", root=ROOT, session_id="s1")
    claims.claim(["b.py"], "alice", root=ROOT, session_id="s2")

    assert claims.release_session("s1") == 1
    assert claims.release_session("s1") == 0
    assert [v.path for v in claims.list()] == ["b.py"]


# ---------------------------------------------------------------------------------------------- list, prune


def test_the_list_hides_expired_claims_unless_asked_and_sorts_by_expiry(any_store: Store):
    claims = any_store.coord.claims
    claims.claim(["late.py"], "alice", root=ROOT, ttl_seconds=900)
    claims.claim(["soon.py"], "bob", root=ROOT, ttl_seconds=60)
    claims.claim(["gone.py"], "carol", root=ROOT, ttl_seconds=1)
    with any_store.db.write() as session:
        session.execute(update(FileClaim).where(FileClaim.claim_key == "gone.py").values(expires_at=0))

    assert [v.path for v in claims.list()] == ["soon.py", "late.py"]
    assert [v.path for v in claims.list(include_expired=True)] == ["gone.py", "soon.py", "late.py"]
    assert [v.path for v in claims.list("bob")] == ["soon.py"]
    assert claims.is_claimed(ROOT / "late.py", ROOT)
    assert not claims.is_claimed(ROOT / "gone.py", ROOT)
    assert not claims.is_claimed(Path("/elsewhere/late.py"), ROOT)


def test_rows_released_or_expired_over_a_day_ago_are_pruned_by_the_next_claim(any_store: Store):
    claims = any_store.coord.claims
    claims.claim(["old-open.py", "old-released.py", "recent.py"], "alice", root=ROOT, ttl_seconds=60)
    claims.release("alice", root=ROOT, paths=["old-released.py"])
    with any_store.db.write() as session:
        session.execute(
            update(FileClaim)
            .where(FileClaim.claim_key != "recent.py")
            .values(expires_at=FileClaim.expires_at - 90_000, released_at=FileClaim.released_at - 90_000)
        )

    claims.claim(["other.py"], "bob", root=ROOT)

    assert [v.path for v in claims.list(include_expired=True)] == ["recent.py", "other.py"]
