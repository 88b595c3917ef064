"""``dokoro memory proposals [list|show|approve|reject]`` through Typer's runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dokoro.cli import app
from dokoro_store import Store
from typer.testing import CliRunner

runner = CliRunner(env={"COLUMNS": "200"})


def _pair(store: Store, topic: str, first: str, second: str) -> tuple[str, str]:
    old = store.memories.remember(type="fact", title=topic, body=first, entities=[topic]).memory
    new = store.memories.remember(type="fact", title=f"{topic} now", body=second, entities=[topic])
    assert [c.memory.id for c in new.conflicts] == [old.id]
    return old.id, new.memory.id


@pytest.fixture
def folder(tmp_path: Path) -> tuple[Path, dict[str, tuple[str, str]]]:
    root = tmp_path / "dokoro"
    with Store.open(root) as store:
        pairs = {
            "db": _pair(
                store,
                "staging",
                "The staging database runs PostgreSQL 16 on port 5433",
                "The staging database runs PostgreSQL 15 on port 5432",
            ),
            "rate": _pair(
                store,
                "ratelimit",
                "The API rate limit is 100 requests per minute per user",
                "The API rate limit is 1000 requests per minute per user",
            ),
        }
    return root, pairs


def invoke(root: Path, *args: str):
    return runner.invoke(app, [*args, "--path", str(root)])


def _proposal_of(root: Path, memory_id: str) -> str:
    listed = json.loads(invoke(root, "memory", "proposals", "list", "--json").stdout)
    return next(p["id"] for p in listed["proposals"] if memory_id in p["memory_ids"])


def test_the_bare_command_files_and_lists_the_open_proposals(folder):
    root, _pairs = folder
    first = invoke(root, "memory", "proposals")
    again = json.loads(invoke(root, "memory", "proposals", "list", "--json").stdout)

    assert first.exit_code == 0, first.output
    assert "2 new proposal(s) filed by this pass." in first.output and "2 proposal(s)" in first.output
    assert "dokoro memory proposals approve ID" in first.output
    assert again["filed"] == 0 and [p["kind"] for p in again["proposals"]] == ["merge", "merge"]
    assert all(p["status"] == "proposed" and "similarity" in p["evidence"] for p in again["proposals"])


def test_approve_and_reject_leave_the_ledger_and_the_memories_right(folder):
    root, pairs = folder
    (db_old, db_new), (rate_old, rate_new) = pairs["db"], pairs["rate"]
    merge, keep = _proposal_of(root, db_old), _proposal_of(root, rate_old)
    shown = invoke(root, "memory", "proposals", "show", merge)
    assert shown.exit_code == 0 and f"supersede {db_old}" in shown.output and f"keep      {db_new}" in shown.output

    approved = invoke(root, "memory", "proposals", "approve", merge, "--by", "ana")
    rejected = invoke(root, "memory", "proposals", "reject", keep, "--reason", "both hold", "--by", "ana")

    assert approved.exit_code == 0, approved.output
    assert f"Approved {merge} (merge): {db_old} superseded by {db_new}." in approved.output
    assert f"{db_old} is now archived" in approved.output
    assert rejected.exit_code == 0 and f"Rejected {keep} (merge): rejected by ana: both hold." in rejected.output
    with Store.open(root) as store:
        assert store.memories.get(db_old).state == "archived"
        assert {store.memories.get(i).state for i in (db_new, rate_old, rate_new)} == {"active"}
    decided = json.loads(invoke(root, "memory", "proposals", "list", "--status", "all", "--json").stdout)
    assert {p["id"]: (p["status"], p["decided_by"]) for p in decided["proposals"]} == {
        merge: ("approved", "ana"),
        keep: ("rejected", "ana"),
    }
    assert decided["filed"] == 0  # neither is filed again


def test_a_decided_or_unknown_proposal_is_refused_with_the_way_on(folder):
    root, pairs = folder
    merge = _proposal_of(root, pairs["db"][0])
    invoke(root, "memory", "proposals", "approve", merge)

    twice = invoke(root, "memory", "proposals", "reject", merge)
    unknown = invoke(root, "memory", "proposals", "approve", "prop_nope")
    bad = invoke(root, "memory", "proposals", "list", "--status", "maybe")

    assert twice.exit_code == 2 and f"proposal {merge} was approved" in twice.output
    assert unknown.exit_code == 1 and "dokoro memory proposals list" in unknown.output
    assert bad.exit_code == 2 and "status must be one of proposed, approved, rejected or all" in bad.output


def _aging_run(tmp_path: Path) -> tuple[Path, list[str]]:
    """A store with three login episodes written 40 days ago (a run the pass proposes to summarise)."""
    from datetime import UTC, datetime, timedelta

    from dokoro_store import FrozenClock

    root = tmp_path / "dokoro"
    with Store.open(root, clock=FrozenClock(datetime.now(UTC) - timedelta(days=40))) as store:
        ids = [
            store.memories.remember(type="episode", title=title, body=body, entities=["login"]).memory.id
            for title, body in [
                ("Race found", "Found the race in token refresh while two tabs log in."),
                ("Regression test", "Wrote a regression test that opens concurrent sessions."),
                ("Patch shipped", "Released the patch to staging and watched the error rate drop."),
            ]
        ]
    return root, ids


def _summary_proposal(root: Path) -> str:
    listed = json.loads(invoke(root, "memory", "proposals", "list", "--kind", "summarise", "--json").stdout)
    [proposal] = listed["proposals"]
    return str(proposal["id"])


def test_approve_writes_the_distilled_text_given(tmp_path):
    root, _ids = _aging_run(tmp_path)
    proposal = _summary_proposal(root)

    done = invoke(root, "memory", "proposals", "approve", proposal, "--text", "Lock the token refresh.", "--json")

    assert done.exit_code == 0, done.output
    [summary] = json.loads(done.stdout)["created"]
    assert (summary["type"], summary["body"]) == ("context", "Lock the token refresh.")
    assert summary["title"].startswith("Summary: 3 episodes about login")


def test_approve_at_a_terminal_shows_the_draft_and_asks_for_a_distilled_text(tmp_path, monkeypatch):
    import dokoro.commands.proposals as command

    root, ids = _aging_run(tmp_path)
    proposal = _summary_proposal(root)
    monkeypatch.setattr(command, "stdin_is_terminal", lambda: True)

    done = runner.invoke(
        app, ["memory", "proposals", "approve", proposal, "--path", str(root)], input="Refresh raced: lock it.\n"
    )

    assert done.exit_code == 0, done.output
    assert "Draft: Summary: 3 episodes about login" in done.output and all(f"({i})" in done.output for i in ids)
    assert "Write a distilled text instead?" in done.output
    assert "distilled text" in done.output  # the outcome says which text was written
    with Store.open(root) as store:
        [summary] = store.memories.of_types(["context"])
    assert summary.body == "Refresh raced: lock it."


def test_approve_at_a_terminal_keeps_the_draft_on_enter(tmp_path, monkeypatch):
    import dokoro.commands.proposals as command

    root, ids = _aging_run(tmp_path)
    proposal = _summary_proposal(root)
    monkeypatch.setattr(command, "stdin_is_terminal", lambda: True)

    done = runner.invoke(app, ["memory", "proposals", "approve", proposal, "--path", str(root)], input="\n")

    assert done.exit_code == 0, done.output
    with Store.open(root) as store:
        [summary] = store.memories.of_types(["context"])
    assert all(f"({i})" in summary.body for i in ids)
