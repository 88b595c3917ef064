"""``dokoro memory review|renew|types`` through Typer's runner: a person's upkeep of the memories."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from dokoro.cli import app
from dokoro_store import Store
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.semantic.memories import repository
from typer.testing import CliRunner

runner = CliRunner(env={"COLUMNS": "200"})


def invoke(root: Path, *args: str):
    return runner.invoke(app, [*args, "--path", str(root)])


def test_review_lists_a_stale_memory_and_renew_clears_it(tmp_path):
    root = tmp_path / "dokoro"
    with Store.open(root) as store:
        now = store.clock.now()
        memory = store.memories.remember(
            type="fact",
            title="Staging host",
            body="Staging runs on db-old.internal.",
            agent_id="claude",
        ).memory
        # Its review date passed a day ago (the CLI runs on the real clock: the date is set through the repository).
        with store.db.write() as session:
            row = session.get(MemoryRow, memory.id)
            repository.rewrite(session, row, {"review_after": now - timedelta(days=1)})

    review = invoke(root, "memory", "review")
    listed = json.loads(invoke(root, "memory", "review", "--json").stdout)
    past = invoke(root, "memory", "renew", memory.id, "--review-after", "2001-01-01")
    stray = invoke(root, "memory", "renew", memory.id, "--reason", "old")
    renewed = invoke(root, "memory", "renew", memory.id, "--review-after", "2999-01-01")
    after = invoke(root, "memory", "review")

    assert review.exit_code == 0, review.output
    assert "memory health: 1 stale memory: run `dokoro memory review`" in review.stdout
    assert memory.id in review.stdout and "stale: due for review since" in review.stdout
    assert [e["memory"]["id"] for e in listed["stale"]] == [memory.id]
    assert past.exit_code != 0 and "--review-after must be later than now" in past.output
    assert stray.exit_code != 0 and "--reason goes with --retire" in stray.output
    assert renewed.exit_code == 0, renewed.output
    assert f"Renewed {memory.id}" in renewed.stdout
    assert "nothing waits for review" in after.stdout


def test_renew_retire_names_the_dependents_it_flags(tmp_path):
    root = tmp_path / "dokoro"
    with Store.open(root) as store:
        base = store.memories.remember(type="decision", title="Jenkins", body="Deploys run on Jenkins.").memory
        dependent = store.memories.remember(
            type="fact", title="Keys", body="Deploy keys are Jenkins credentials.", depends_on=[base.id]
        ).memory

    retired = invoke(root, "memory", "renew", base.id, "--retire", "--reason", "moved to GitHub Actions")

    assert retired.exit_code == 0, retired.output
    assert f"Retired {base.id}" in retired.stdout
    assert f"Now stale until renewed (they depend on it): {dependent.id}." in retired.stdout


def test_types_shows_and_sets_the_switches(tmp_path):
    root = tmp_path / "dokoro"
    Store.open(root).close()

    shown = invoke(root, "memory", "types")
    changed = invoke(root, "memory", "types", "preference", "episode", "--agents-write", "off", "--by", "ana")
    listed = json.loads(invoke(root, "memory", "types", "--json").stdout)
    unknown = invoke(root, "memory", "types", "opinion", "--agents-write", "off")
    vague = invoke(root, "memory", "types", "fact")
    bad = invoke(root, "memory", "types", "fact", "--needs-review", "maybe")

    assert shown.exit_code == 0 and "preference" in shown.stdout and "OFF" not in shown.stdout
    assert changed.exit_code == 0, changed.output
    assert listed["preference"] == {"enabled": True, "agents_write": False, "needs_review": False}
    assert listed["episode"]["agents_write"] is False and listed["fact"]["agents_write"] is True
    assert unknown.exit_code != 0 and "'opinion' is not a memory type" in unknown.output
    assert vague.exit_code != 0 and "say what to change" in vague.output
    assert bad.exit_code != 0 and "--needs-review must be on or off" in bad.output


def test_types_off_hides_a_type_and_on_brings_it_back(tmp_path):
    root = tmp_path / "dokoro"
    Store.open(root).close()

    off = invoke(root, "memory", "types", "episode", "--off", "--by", "ana")
    listed = json.loads(invoke(root, "memory", "types", "--json").stdout)
    on = invoke(root, "memory", "types", "episode", "--on")

    assert off.exit_code == 0, off.output
    assert "OFF (hidden)" in off.stdout
    assert listed["episode"] == {"enabled": False, "agents_write": True, "needs_review": False}
    assert on.exit_code == 0 and "OFF (hidden)" not in on.stdout
