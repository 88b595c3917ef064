"""Retired memories rank below every current match, and say what they are (search, bridge context)."""

from __future__ import annotations

from datetime import timedelta

from dokoro_store.clock import iso


def _auth_memories(store):
    """JWT superseded by opaque session tokens, a pnpm memory forgotten: issue 28's scenario."""
    old = store.memories.remember(
        type="decision", title="Auth uses JWT access tokens", body="We use JWT access tokens for auth in the API."
    ).memory
    new = store.memories.remember(
        type="decision",
        title="Auth uses opaque session tokens",
        body="Auth in the API moved to opaque session tokens stored server side; no more access tokens in JWT.",
        supersedes=old.id,
    ).memory
    gone = store.memories.remember(
        type="fact", title="JWT auth token lifetime", body="JWT access tokens for auth live 15 minutes."
    ).memory
    store.memories.forget(gone.id, reason="tokens are opaque now")
    return old, new, gone


def test_after_a_supersede_and_a_forget_search_ranks_the_current_memory_first_and_says_the_states(any_store):
    old, new, gone = _auth_memories(any_store)

    hits = any_store.search.universal("JWT access tokens for auth", limit=5).hits

    ids = [h.doc_id for h in hits]
    assert ids[0] == f"memory:{new.id}"
    assert set(ids[1:3]) == {f"memory:{old.id}", f"memory:{gone.id}"}
    by_id = {h.doc_id: h for h in hits}
    assert by_id[f"memory:{new.id}"].retired is None
    assert by_id[f"memory:{old.id}"].retired == f"superseded by {new.id}"
    assert by_id[f"memory:{gone.id}"].retired == "deprecated: tokens are opaque now"
    assert "retired (superseded by" in by_id[f"memory:{old.id}"].why


def test_every_current_match_ranks_above_a_retired_memory_however_well_it_matches(any_store):
    _old, _new, _gone = _auth_memories(any_store)
    note = "Notes from the API review: auth tokens and their rotation."
    any_store.search.index_content("review", note, "API review")

    hits = any_store.search.universal("JWT access tokens auth", limit=10).hits

    retired = [i for i, h in enumerate(hits) if h.retired]
    current = [i for i, h in enumerate(hits) if not h.retired]
    assert retired and current and max(current) < min(retired)


def test_an_expired_memory_ranks_below_current_ones_and_says_it_is_stale(any_store, clock):
    expired = any_store.memories.remember(
        type="fact",
        title="Staging database host",
        body="The staging database runs on db-old.internal.",
        valid_until=iso(clock.now() + timedelta(days=1)),
    ).memory
    current = any_store.memories.remember(
        type="fact", title="Staging database host moved", body="Staging database now on db-new.internal."
    ).memory
    clock.advance(timedelta(days=2))

    hits = any_store.search.universal("staging database runs on db-old", limit=5).hits

    assert [h.doc_id for h in hits][:2] == [f"memory:{current.id}", f"memory:{expired.id}"]
    assert hits[1].retired is None
    assert hits[1].stale == f"stale: past valid_until {iso(clock.now() - timedelta(days=1))}"
    assert "stale: past valid_until" in hits[1].why


def test_bridge_context_puts_retired_memories_last_and_marks_them(any_store):
    _old, new, _gone = _auth_memories(any_store)

    context = any_store.bridge.get_context("JWT access tokens for auth", limit=3)

    assert context.entries[0].doc_id == f"memory:{new.id}" and context.entries[0].retired is None
    assert all(e.retired for e in context.entries[1:])


def test_recall_with_include_archived_ranks_the_superseded_jwt_memory_below_the_current_one(any_store):
    old = any_store.memories.remember(
        type="decision", title="Use JWT", body="Use JWT for the API's auth tokens."
    ).memory
    new = any_store.memories.remember(
        type="decision",
        title="Use opaque session tokens",
        body="The API's auth moved to opaque session tokens kept server side.",
        supersedes=old.id,
    ).memory

    hits = any_store.memories.recall(
        "use JWT for auth tokens", states=("active", "archived", "deprecated"), count_use=False
    )

    assert [h.memory.id for h in hits] == [new.id, old.id]
    assert hits[0].retired is None
    assert hits[1].retired == f"superseded by {new.id}"
    assert f"superseded by {new.id}: ranked below every current memory" in hits[1].reason


def test_recall_ranks_an_expired_memory_below_current_ones_and_says_it_is_stale(any_store, clock):
    expired = any_store.memories.remember(
        type="fact",
        title="Deploys go through Jenkins",
        body="Deploys go through the Jenkins pipeline.",
        valid_until=iso(clock.now() + timedelta(days=1)),
    ).memory
    current = any_store.memories.remember(
        type="fact", title="Deploy pipeline", body="Deploys run from GitHub Actions."
    ).memory
    clock.advance(timedelta(days=3))

    hits = any_store.memories.recall("deploys through the Jenkins pipeline", count_use=False)

    assert [h.memory.id for h in hits] == [current.id, expired.id]
    assert hits[1].retired is None and hits[1].stale is not None
    assert hits[1].stale.startswith("stale: past valid_until")
    assert "stale: past valid_until" in hits[1].reason


def test_memories_remembered_in_one_session_are_a_thread_in_the_order_remembered(any_store):
    from dokoro_store.index.scope import MEMORY_DOC_PREFIX

    bodies = [
        "Ben asked where the pottery workshop takes place.",
        "Ana said: Lisbon, the first week of June!",
        "Ben said the food there is wonderful.",
    ]
    made = [
        any_store.memories.remember(type="episode", title=f"Turn {i}", body=b, session_id="chat-7").memory
        for i, b in enumerate(bodies)
    ]
    other = any_store.memories.remember(type="episode", title="Elsewhere", body="A note.", session_id="chat-8")

    docs = [any_store.docs.get(f"{MEMORY_DOC_PREFIX}{m.id}") for m in made]
    assert [(d.thread, d.thread_pos) for d in docs] == [("chat-7", 0), ("chat-7", 1), ("chat-7", 2)]
    assert any_store.docs.get(f"{MEMORY_DOC_PREFIX}{other.memory.id}").thread_pos == 0
    hits = any_store.memories.recall("where is the pottery workshop", count_use=False)
    lifted = next(h for h in hits if h.memory.id == made[1].id)
    assert f"beside {MEMORY_DOC_PREFIX}{made[0].id}" in lifted.reason
