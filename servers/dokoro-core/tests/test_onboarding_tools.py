"""Onboarding over MCP (issue 46, item 5): the ``onboard-project`` prompt shows what the project's
files say without filing anything; ``dokoro_onboard`` files the drafts as proposals the agent
approves (with its own distilled text) through ``dokoro_memory_proposals``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("store_url", ["sqlite", "postgresql"], indirect=True)]


def _project(cwd: Path) -> None:
    """The server's project (its cwd): a README, a package.json and a CI workflow."""
    (cwd / ".github" / "workflows").mkdir(parents=True, exist_ok=True)
    (cwd / "README.md").write_text("# Harbour\n\nHarbour shows tide readings on a map.\n", encoding="utf-8")
    (cwd / "package.json").write_text(
        json.dumps({"name": "harbour", "scripts": {"test": "vitest run", "lint": "eslint ."}}), encoding="utf-8"
    )
    (cwd / ".github" / "workflows" / "ci.yml").write_text("steps:\n  - run: npm test\n", encoding="utf-8")


async def test_the_prompt_shows_the_drafts_and_files_nothing(client, cwd, store):
    _project(cwd)

    prompt = await client.get_prompt("onboard-project", {"focus": "testing"})

    text = prompt.messages[0].content.text
    assert "Pay most attention to: testing." in text
    assert "### context: About harbour" in text and "Harbour shows tide readings on a map." in text
    assert "npm test (runs `vitest run`)" in text and "dokoro_onboard" in text
    assert "Which commands must pass before a change lands" in text
    assert store.proposals.listing(kind="onboard", scan=False).proposals == []


async def test_the_tool_files_proposals_the_agent_approves_with_its_own_text(call, cwd, store):
    _project(cwd)

    preview = await call("dokoro_onboard", dry_run=True)
    filed = await call("dokoro_onboard")
    again = await call("dokoro_onboard")

    assert preview.content[0].text.startswith("Preview: nothing filed.")
    assert filed.structured_content["filed"] == 4 and again.structured_content["filed"] == 0
    assert str(cwd) not in filed.content[0].text  # the project is named, never its path
    drafts = {d["topic"]: d for d in filed.structured_content["drafts"]}
    listed = await call("dokoro_memory_proposals", kind="onboard")
    assert {p["id"] for p in listed.structured_content["listing"]["proposals"]} == {
        d["proposal"] for d in drafts.values()
    }

    approved = await call(
        "dokoro_memory_proposals",
        action="approve",
        id=drafts["commands"]["proposal"],
        text="Tests: `npm test` (vitest). Lint: `npm run lint`.",
    )

    [memory] = approved.structured_content["decision"]["created"]
    assert memory["type"] == "reference" and memory["body"] == "Tests: `npm test` (vitest). Lint: `npm run lint`."
    assert (
        store.memories.get(memory["id"]).source == "dokoro onboard (commands): .github/workflows/ci.yml, package.json"
    )
