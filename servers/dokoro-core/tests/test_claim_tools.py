"""dokoro_file_claim, dokoro_file_release and dokoro_claim_list through an MCP client (reference §4.9a).

Every result carries two text blocks (a summary, then the same report as JSON) and structured
content. Leases run on the database clock, not the server's (frozen) clock: tests move a lease or
a heartbeat into the past by editing its row.
"""

from __future__ import annotations

import json
import time

import pytest
from dokoro_store.models import AgentPresence, FileClaim
from sqlalchemy import update

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.parametrize("store_url", ["sqlite", "postgresql"], indirect=True),
]


@pytest.fixture
def agent(make_client):
    """Factory: a client of another server process's worth of state, acting for ``agent_id``."""

    def connect(agent_id: str):
        return make_client(agent_id=agent_id, auto_feedback=False)

    return connect


def _blocks(outcome) -> tuple[str, dict]:
    assert len(outcome.content) == 2, outcome.content
    return outcome.content[0].text, json.loads(outcome.content[1].text)


def _age_claims(store, seconds: int) -> None:
    with store.db.write() as session:
        session.execute(update(FileClaim).values(expires_at=FileClaim.expires_at - seconds))


def _age_presence(store, agent_id: str, seconds: int) -> None:
    with store.db.write() as session:
        session.execute(
            update(AgentPresence)
            .where(AgentPresence.agent_id == agent_id)
            .values(last_heartbeat=AgentPresence.last_heartbeat - seconds)
        )


# ---------------------------------------------------------------------------------------------- claim


async def test_a_claim_returns_a_summary_a_json_block_and_structured_content(call):
    outcome = await call("dokoro_file_claim", paths=["src/app.py", "docs/Guide.md"], agent_id="alice")

    human, payload = _blocks(outcome)
    assert human.startswith("claimed 2 path(s) for alice for 300s (until ")
    assert "  - src/app.py — claimed" in human
    assert payload["claimed"] is True
    assert payload["expires_in_seconds"] == 300
    assert payload["report"] == [
        {"path": "src/app.py", "status": "claimed"},
        {"path": "docs/Guide.md", "status": "claimed"},
    ]
    assert outcome.structured_content["claimed"] is True
    assert outcome.structured_content["expires_at"] == payload["expires_at"]
    assert [r["status"] for r in outcome.structured_content["report"]] == ["claimed", "claimed"]


async def test_lease_times_come_from_the_database_clock_not_the_servers(call, clock):
    outcome = await call("dokoro_file_claim", paths=["a.py"], agent_id="alice", ttl_seconds=120)

    expires_at = _blocks(outcome)[1]["expires_at"]
    # The server's clock is frozen in June 2026; the lease follows the database's real clock.
    assert abs(expires_at - (time.time() + 120)) < 60
    assert abs(expires_at - clock.now().timestamp()) > 3600


@pytest.mark.parametrize("ttl", [0, 3601])
async def test_a_ttl_outside_1_to_3600_seconds_is_refused(fail, ttl):
    assert "ttl_seconds" in await fail("dokoro_file_claim", paths=["a.py"], agent_id="alice", ttl_seconds=ttl)


async def test_claiming_again_renews_the_lease_and_counts_heartbeats(call):
    await call("dokoro_file_claim", paths=["a.py"], agent_id="alice", intent="first")
    renewed = await call("dokoro_file_claim", paths=["a.py"], agent_id="alice", ttl_seconds=3600)
    await call("dokoro_file_claim", paths=["A.PY"], agent_id="alice", ttl_seconds=3600)

    assert _blocks(renewed)[1]["report"] == [{"path": "a.py", "status": "renewed"}]
    (claim,) = _blocks(await call("dokoro_claim_list"))[1]["claims"]
    assert (claim["heartbeat_seq"], claim["intent"]) == (2, "first")
    assert claim["expires_in_seconds"] > 3500


async def test_a_conflict_claims_nothing_and_is_not_an_error(call, agent):
    async with agent("alice") as alice:
        await alice.call_tool("dokoro_presence_ping", {})
        await alice.call_tool("dokoro_file_claim", {"paths": ["shared.py"], "intent": "rename | move"})

    outcome = await call("dokoro_file_claim", paths=["mine.py", "shared.py"], agent_id="bob")

    human, payload = _blocks(outcome)
    assert human.startswith("CONFLICT — NOTHING was claimed (all-or-nothing):")
    assert "shared.py — held by alice (expires in " in human
    assert "mine.py — free (would acquire)" in human
    assert payload["claimed"] is False
    mine, shared = payload["report"]
    assert mine == {"path": "mine.py", "status": "would_acquire"}
    assert shared["status"] == "conflict"
    assert (shared["holder"]["agent_id"], shared["holder"]["intent"], shared["holder"]["presence"]) == (
        "alice",
        "rename | move",
        "live",
    )
    assert 0 < shared["holder"]["expires_in_seconds"] <= 300
    assert outcome.structured_content["claimed"] is False
    listed = _blocks(await call("dokoro_claim_list"))[1]["claims"]
    assert [(c["path"], c["agent_id"]) for c in listed] == [("shared.py", "alice")]


async def test_an_expired_claim_is_taken_over(call, store):
    await call("dokoro_file_claim", paths=["a.py"], agent_id="alice", ttl_seconds=30)
    _age_claims(store, 31)

    outcome = await call("dokoro_file_claim", paths=["a.py"], agent_id="bob")

    human, payload = _blocks(outcome)
    assert payload["report"] == [{"path": "a.py", "status": "taken_over", "previous_holder": "alice"}]
    assert "taken over from alice (its lease expired or its presence is stale)" in human


async def test_a_live_lease_of_an_agent_whose_presence_went_stale_is_taken_over(call, store):
    await call("dokoro_presence_ping", agent_id="alice")
    await call("dokoro_file_claim", paths=["a.py"], agent_id="alice", ttl_seconds=3600)
    _age_presence(store, "alice", 901)

    (listed,) = _blocks(await call("dokoro_claim_list"))[1]["claims"]
    outcome = await call("dokoro_file_claim", paths=["a.py"], agent_id="bob")

    assert listed["presence"] == "stale"
    assert _blocks(outcome)[1]["report"][0]["status"] == "taken_over"


async def test_force_takes_a_live_claim_and_is_recorded_as_forced(call, store):
    await call("dokoro_presence_ping", agent_id="alice")
    await call("dokoro_file_claim", paths=["a.py"], agent_id="alice")

    outcome = await call("dokoro_file_claim", paths=["a.py"], agent_id="bob", force=True)

    human, payload = _blocks(outcome)
    assert payload["report"] == [{"path": "a.py", "status": "taken_over_forced", "previous_holder": "alice"}]
    assert "taken over from alice (FORCED)" in human
    events = [(e.agent_id, e.action, e.previous_agent) for e in store.coord.claims.history("a.py")]
    assert events == [("alice", "claimed", None), ("bob", "taken_over_forced", "alice")]


async def test_a_path_outside_the_root_rejects_the_call_and_claims_nothing(fail, call, cwd):
    message = await fail("dokoro_file_claim", paths=["ok.py", "../escape.py", str(cwd.parent / "x.py")], agent_id="a")

    assert "file_claim rejected — NOTHING was claimed. Invalid path(s):" in message
    assert "'../escape.py' (is outside the root" in message
    assert _blocks(await call("dokoro_claim_list"))[0] == "(no open claims)"


async def test_paths_resolve_against_the_given_root_or_the_servers_cwd(call, cwd):
    await call("dokoro_file_claim", paths=[str(cwd / "pkg" / "Mod.py")], agent_id="a")
    nested = await call("dokoro_file_claim", paths=["mod.py"], agent_id="b", root="pkg")

    # pkg/Mod.py from the cwd and mod.py from root=pkg are different keys: keys are root-relative.
    assert _blocks(nested)[1]["report"] == [{"path": "mod.py", "status": "claimed"}]
    listed = _blocks(await call("dokoro_claim_list"))[1]["claims"]
    assert sorted(c["path"] for c in listed) == ["mod.py", "pkg/Mod.py"]


# ---------------------------------------------------------------------------------------------- release


async def test_only_the_owner_releases_a_claim(call):
    await call("dokoro_file_claim", paths=["a.py", "b.py"], agent_id="alice")

    by_bob = await call("dokoro_file_release", agent_id="bob", paths=["a.py", "gone.py"])
    by_alice = await call("dokoro_file_release", agent_id="alice", paths=["a.py"])

    human, payload = _blocks(by_bob)
    assert payload == {
        "report": [{"path": "a.py", "status": "not_held_by_you"}, {"path": "gone.py", "status": "not_found"}]
    }
    assert "a.py — not held by you" in human
    assert _blocks(by_alice)[1] == {"report": [{"path": "a.py", "status": "released"}]}
    assert [c["path"] for c in _blocks(await call("dokoro_claim_list"))[1]["claims"]] == ["b.py"]


async def test_release_all_frees_every_claim_you_hold(call):
    await call("dokoro_file_claim", paths=["a.py", "b.py"], agent_id="alice")

    released = await call("dokoro_file_release", agent_id="alice", all=True)
    again = await call("dokoro_file_release", agent_id="alice", all=True)

    human, payload = _blocks(released)
    assert human.splitlines()[0] == "released 2 claim(s) held by alice:"
    assert payload == {"report": [{"path": "a.py", "status": "released"}, {"path": "b.py", "status": "released"}]}
    assert _blocks(again) == ("no open claims held by alice", {"report": []})


@pytest.mark.parametrize("arguments", [{}, {"paths": ["a.py"], "all": True}])
async def test_release_needs_exactly_one_of_paths_or_all(fail, arguments):
    assert "exactly one of: paths" in await fail("dokoro_file_release", agent_id="alice", **arguments)


# ---------------------------------------------------------------------------------------------- list


async def test_the_list_is_a_markdown_table_plus_json_soonest_expiry_first(call, store):
    await call("dokoro_file_claim", paths=["late.py"], agent_id="alice", intent="big | refactor", ttl_seconds=900)
    await call("dokoro_file_claim", paths=["soon.py"], agent_id="bob", ttl_seconds=60)
    await call("dokoro_file_claim", paths=["old.py"], agent_id="carol", ttl_seconds=60)
    with store.db.write() as session:
        session.execute(update(FileClaim).where(FileClaim.claim_key == "old.py").values(expires_at=0))

    human, payload = _blocks(await call("dokoro_claim_list"))
    with_expired = _blocks(await call("dokoro_claim_list", include_expired=True))[1]["claims"]
    bobs = _blocks(await call("dokoro_claim_list", agent_id="bob"))[1]["claims"]

    lines = human.splitlines()
    assert lines[0] == "| path | agent | intent | expires_in_s | presence |"
    assert lines[2].startswith("| soon.py | bob |  | ")
    assert lines[3].startswith("| late.py | alice | big \\| refactor | ")
    assert lines[3].endswith(" | unknown |")
    assert [c["path"] for c in payload["claims"]] == ["soon.py", "late.py"]
    assert set(payload["claims"][0]) == {
        "path",
        "agent_id",
        "intent",
        "expires_in_seconds",
        "heartbeat_seq",
        "presence",
    }
    assert [c["path"] for c in with_expired] == ["old.py", "soon.py", "late.py"]
    assert [c["path"] for c in bobs] == ["soon.py"]


# ---------------------------------------------------------------------------------------------- who acts


async def test_an_authenticated_agent_cannot_claim_or_release_as_another(call, fail, monkeypatch):
    from dokoro_server import identity

    await call("dokoro_file_claim", paths=["a.py"], agent_id="alice")
    monkeypatch.setattr(identity, "authenticated_agent", lambda: "bob")

    claim = await fail("dokoro_file_claim", paths=["b.py"], agent_id="alice")
    release = await fail("dokoro_file_release", agent_id="alice", paths=["a.py"])
    own = await call("dokoro_file_claim", paths=["b.py"])

    assert "authenticated as 'bob' and cannot act as 'alice'" in claim
    assert "cannot act as 'alice'" in release
    assert _blocks(own)[1]["report"] == [{"path": "b.py", "status": "claimed"}]
    listed = _blocks(await call("dokoro_claim_list"))[1]["claims"]
    assert sorted((c["path"], c["agent_id"]) for c in listed) == [("a.py", "alice"), ("b.py", "bob")]


# ---------------------------------------------------------------------------------------------- workspace end


async def test_dumping_the_workspace_without_keeping_it_releases_its_sessions_claims(call, store):
    claimed = await call("dokoro_workspace_claim", task="edit the parser")
    session_id = claimed.structured_content["session_id"]
    await call("dokoro_file_claim", paths=["parser.py"], agent_id="alice")  # tagged with the workspace session
    await call("dokoro_file_claim", paths=["other.py"], agent_id="alice", session_id="another-session")

    await call("dokoro_workspace_dump", reason="checkpoint")  # keepActive=true keeps the claims
    kept = [c.path for c in store.coord.claims.list()]
    ended = await call("dokoro_workspace_dump", reason="done for today", keepActive=False)

    assert ended.structured_content["claims_released"] == 1
    assert "File claims released:** 1" in ended.content[0].text
    assert sorted(kept) == ["other.py", "parser.py"]
    assert [(c.path, c.session_id) for c in store.coord.claims.list()] == [("other.py", "another-session")]
    released = [e for e in store.coord.claims.history("parser.py") if e.action == "released"]
    assert [(e.agent_id, e.session_id) for e in released] == [("alice", session_id)]


async def test_a_claim_release_failure_never_fails_the_dump(call, store, monkeypatch):
    from dokoro_store import StoreUnavailableError
    from dokoro_store.coordination.claims.service import ClaimService

    def unavailable(self, *args, **kwargs):
        raise StoreUnavailableError("database went away")

    await call("dokoro_workspace_claim", task="edit the parser")
    await call("dokoro_file_claim", paths=["parser.py"], agent_id="alice")
    monkeypatch.setattr(ClaimService, "_release_keys", unavailable)

    ended = await call("dokoro_workspace_dump", reason="done", keepActive=False)

    assert ended.structured_content["released"] is True
    assert ended.structured_content["claims_released"] == 0
    assert [c.path for c in store.coord.claims.list()] == ["parser.py"]  # the lease will expire on its own
