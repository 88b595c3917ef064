"""``dokoro memory list|show|forget`` and ``dokoro rules`` through Typer's runner."""

from __future__ import annotations

import json
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


def test_forget_deprecates_with_a_reason_and_purge_asks_first(folder):
    root, ids = folder
    no_reason = invoke(root, "memory", "forget", ids["fact"])
    forgotten = invoke(root, "memory", "forget", ids["fact"], "--reason", "we moved to sessions")
    kept = invoke(root, "memory", "forget", ids["rule"], "--purge", input="n\n")
    purged = invoke(root, "memory", "forget", ids["rule"], "--purge", "--yes")

    assert no_reason.exit_code == 2 and "reason is required" in no_reason.output
    assert forgotten.exit_code == 0 and "deprecated" in forgotten.output
    states = {
        m["id"]: m["state"] for m in json.loads(invoke(root, "memory", "list", "--state", "all", "--json").stdout)
    }
    assert states[ids["fact"]] == "deprecated"
    assert "Nothing deleted" in kept.output
    assert purged.exit_code == 0 and "purged" in purged.output
    assert invoke(root, "memory", "show", ids["rule"]).exit_code == 1
    assert invoke(root, "memory", "forget", "mem-nope", "--reason", "x").exit_code == 1


def test_rules_lists_guardrails_first(folder):
    root, ids = folder
    text = invoke(root, "rules")
    as_json = json.loads(invoke(root, "rules", "--json").stdout)

    assert text.exit_code == 0
    assert text.output.index("Never push to main") < text.output.index("Run tests first")
    assert [m["id"] for m in as_json] == [ids["guard"], ids["rule"]]


def test_rules_on_an_empty_store_says_where_they_come_from(tmp_path):
    result = runner.invoke(app, ["rules", "--path", str(tmp_path / "empty")])

    assert result.exit_code == 0 and "dokoro_remember" in result.output
