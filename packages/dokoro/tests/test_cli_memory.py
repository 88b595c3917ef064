"""``dokoro memory list|show|edit|forget|approve|reject|reindex`` and ``dokoro rules`` through Typer's runner."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from dokoro.cli import app
from dokoro_store import Store
from typer.testing import CliRunner

runner = CliRunner(env={"COLUMNS": "200"})


@pytest.fixture
def folder(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root = tmp_path / "dokoro"
    with Store.open(root) as store:
        ids = {
            "rule": store.memories.remember(
                type="rule", title="Run tests first", body="pytest before commit"
            ).memory.id,
            "guard": store.memories.remember(type="guardrail", title="Never push to main", body="use PRs").memory.id,
            "fact": store.memories.remember(type="fact", title="The API uses JWT", body="RS256 tokens").memory.id,
        }
    return root, ids


def invoke(root: Path, *args: str, **kwargs):
    return runner.invoke(app, [*args, "--path", str(root)], **kwargs)


def test_memory_list_filters_by_type_and_state(folder):
    root, ids = folder
    listed = invoke(root, "memory", "list")
    facts = json.loads(invoke(root, "memory", "list", "--type", "fact", "--json").stdout)

    assert listed.exit_code == 0 and "Run tests first" in listed.output
    assert [m["id"] for m in facts] == [ids["fact"]]
    assert facts[0]["created_at"].endswith("Z")
    assert invoke(root, "memory", "list", "--state", "gone").exit_code == 2
    assert invoke(root, "memory", "list", "--type", "gossip").exit_code == 2


def test_memory_show_prints_one_and_an_unknown_id_exits_1(folder):
    root, ids = folder
    shown = invoke(root, "memory", "show", ids["fact"])
    as_json = json.loads(invoke(root, "memory", "show", ids["fact"], "--json").stdout)

    assert shown.exit_code == 0 and "RS256 tokens" in shown.output and "fact" in shown.output
    assert as_json["title"] == "The API uses JWT"
    assert invoke(root, "memory", "show", "mem-nope").exit_code == 1


def test_forget_deprecates_with_a_reason_and_purge_asks_first(folder, monkeypatch):
    root, ids = folder
    no_reason = invoke(root, "memory", "forget", ids["fact"])
    forgotten = invoke(root, "memory", "forget", ids["fact"], "--reason", "we moved to sessions")
    unasked = invoke(root, "memory", "forget", ids["rule"], "--purge")  # no terminal to ask on
    monkeypatch.setattr("dokoro.commands.memory.stdin_is_terminal", lambda: True)
    kept = invoke(root, "memory", "forget", ids["rule"], "--purge", input="n\n")
    purged = invoke(root, "memory", "forget", ids["rule"], "--purge", "--yes")

    assert no_reason.exit_code == 2 and "say why it no longer holds" in no_reason.output
    assert forgotten.exit_code == 0 and "Deprecated memory" in forgotten.output
    assert unasked.exit_code == 1 and "nothing deleted" in unasked.output
    states = {
        m["id"]: m["state"] for m in json.loads(invoke(root, "memory", "list", "--state", "all", "--json").stdout)
    }
    assert states[ids["fact"]] == "deprecated"
    assert "Nothing deleted" in kept.output
    assert purged.exit_code == 0 and "for good" in purged.output
    assert invoke(root, "memory", "show", ids["rule"]).exit_code == 1
    assert invoke(root, "memory", "forget", "mem-nope", "--reason", "x").exit_code == 1


def test_a_person_at_the_cli_may_forget_any_agents_memory(tmp_path):
    root = tmp_path / "dokoro"
    with Store.open(root) as store:
        alices = store.memories.remember(type="fact", title="TTL", body="five minutes", agent_id="alice").memory.id
        bobs = store.memories.remember(type="rule", title="Lint", body="ruff first", agent_id="bob").memory.id

    forgotten = invoke(root, "memory", "forget", alices, "--reason", "TTL changed")
    purged = invoke(root, "memory", "forget", bobs, "--purge", "--yes")

    assert forgotten.exit_code == 0 and "deprecated" in forgotten.output.lower(), forgotten.output
    assert purged.exit_code == 0 and "for good" in purged.output, purged.output
    with Store.open(root) as store:
        assert store.memories.get(alices).state == "deprecated"


def test_rules_lists_guardrails_first(folder):
    root, ids = folder
    text = invoke(root, "rules")
    as_json = json.loads(invoke(root, "rules", "--json").stdout)

    assert text.exit_code == 0
    assert text.output.index("Never push to main") < text.output.index("Run tests first")
    assert [m["id"] for m in as_json] == [ids["guard"], ids["rule"]]


def test_rules_on_an_empty_store_says_where_they_come_from(tmp_path):
    Store.open(tmp_path / "empty").close()
    result = runner.invoke(app, ["rules", "--path", str(tmp_path / "empty")])

    assert result.exit_code == 0 and "dokoro_remember" in result.output


# ---------------------------------------------------------------------- memory files
EDITOR_SCRIPT = """
import sys
from pathlib import Path
path = Path(sys.argv[-1])
path.write_text(path.read_text(encoding="utf-8").replace(sys.argv[1], sys.argv[2]), encoding="utf-8")
"""


def editor(tmp_path: Path, old: str, new: str) -> str:
    """An editor command line that replaces ``old`` with ``new`` in the file it is given."""
    script = tmp_path / "fake_editor.py"
    script.write_text(EDITOR_SCRIPT, encoding="utf-8")
    return " ".join(shlex.quote(part) for part in (sys.executable, str(script), old, new))


def test_edit_opens_the_editor_on_the_memorys_file_and_reconciles_the_edit(folder, tmp_path):
    root, ids = folder
    command = editor(tmp_path, "RS256 tokens", "RS512 tokens, rotated weekly")

    environment = {"VISUAL": None, "EDITOR": command}
    edited = runner.invoke(app, ["memory", "edit", ids["fact"], "--path", str(root)], env=environment)

    assert edited.exit_code == 0, edited.output
    assert "new version" in edited.output and ids["fact"] in edited.output
    memories = {m["id"]: m for m in json.loads(invoke(root, "memory", "list", "--state", "all", "--json").stdout)}
    [new] = [m for m in memories.values() if m["supersedes"] == ids["fact"]]
    assert (new["trust"], new["state"], new["body"]) == ("user-stated", "active", "RS512 tokens, rotated weekly")
    assert memories[ids["fact"]]["state"] == "archived"

    unchanged = invoke(root, "memory", "edit", new["id"], "--editor", "true", "--json")
    assert unchanged.exit_code == 0
    report = json.loads(unchanged.stdout)
    assert report["file"].endswith(".md") and report["sync"]["changes"] == []
    assert new["id"] in Path(report["file"]).name


def test_edit_says_what_is_wrong_with_a_bad_id_a_missing_or_failing_editor(folder):
    root, ids = folder
    unknown = invoke(root, "memory", "edit", "mem-nope", "--editor", "true")
    missing = invoke(root, "memory", "edit", ids["fact"], "--editor", "no-such-editor-here")
    failing = invoke(root, "memory", "edit", ids["fact"], "--editor", "false")

    assert unknown.exit_code == 1 and "no memory 'mem-nope'" in unknown.output
    assert missing.exit_code == 2 and "editor 'no-such-editor-here' not found" in missing.output
    assert failing.exit_code == 1 and "the editor exited with 1" in failing.output


@pytest.fixture
def proposals(folder) -> tuple[Path, dict[str, str]]:
    """Two memories an agent proposed on a store with the review queue on."""
    root, ids = folder
    with Store.open(root, memory_review=True) as store:
        ids["ci"] = store.memories.remember(type="fact", title="CI runs on push", body="on every push").memory.id
        ids["deploy"] = store.memories.remember(type="fact", title="Deploys on Friday", body="any day").memory.id
    return root, ids


def test_approve_and_reject_decide_what_waits_for_review(proposals):
    root, ids = proposals
    waiting = json.loads(invoke(root, "memory", "list", "--state", "proposed", "--json").stdout)
    assert {m["id"] for m in waiting} == {ids["ci"], ids["deploy"]}

    approved = invoke(root, "memory", "approve", ids["ci"], "--by", "ana")
    rejected = json.loads(
        invoke(root, "memory", "reject", ids["deploy"], "--reason", "we never deploy on Fridays", "--json").stdout
    )

    assert approved.exit_code == 0 and "Approved" in approved.output and "now active" in approved.output
    assert rejected["decision"] == "rejected" and rejected["memory"]["state"] == "deprecated"
    assert "we never deploy on Fridays" in rejected["memory"]["state_reason"]
    shown = json.loads(invoke(root, "memory", "show", ids["ci"], "--json").stdout)
    assert (shown["state"], shown["state_reason"]) == ("active", "approved by ana")
    assert json.loads(invoke(root, "memory", "list", "--state", "proposed", "--json").stdout) == []


def test_approve_and_reject_refuse_bad_ids_and_memories_that_do_not_wait(proposals):
    root, ids = proposals
    unknown = invoke(root, "memory", "approve", "mem-nope")
    not_waiting = invoke(root, "memory", "approve", ids["fact"])
    reject_unknown = invoke(root, "memory", "reject", "mem-nope")

    assert unknown.exit_code == 1 and "no memory 'mem-nope'" in unknown.output
    assert not_waiting.exit_code == 2 and "not proposed" in not_waiting.output
    assert reject_unknown.exit_code == 1


def test_reindex_rebuilds_the_memories_from_their_files(folder):
    root, _ids = folder
    note = root / "memories" / "decision" / "use-uv.md"
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text("# We use uv\n\nEvery package is managed with uv.\n", encoding="utf-8")
    (root / "memories" / "fact" / "broken.md").write_text("---\ntype: [broken\n---\n# x\n", encoding="utf-8")

    text = invoke(root, "memory", "reindex")
    again = json.loads(invoke(root, "memory", "reindex", "--json").stdout)

    assert text.exit_code == 0, text.output
    assert "1 new" in text.output and "broken.md: skipped" in text.output
    assert "memory reindex" in text.stderr  # the progress bar
    assert (again["files"], again["created"], again["unchanged"]) == (5, 0, 4)
    titles = [m["title"] for m in json.loads(invoke(root, "memory", "list", "--type", "decision", "--json").stdout)]
    assert titles == ["We use uv"]
