"""Onboarding (issue 46, item 5): a project's own files read as hostile input and proposed as typed
memories (context, reference, best-practice, guardrail) that a person or an agent approves.
The proposals and memories are checked on both databases."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from dokoro_store import FrozenClock, InvalidArgumentError, Store
from dokoro_store.models.proposals import MemoryProposal
from dokoro_store.semantic.memories.onboarding.findings import purpose_of
from dokoro_store.semantic.memories.onboarding.reading import MAX_BYTES
from sqlmodel import select

TOKEN = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
OUTSIDE_SECRET = "the-outside-secret-never-read"

README = """# Tidepool

[![CI](https://example.invalid/badge.svg)](https://example.invalid)

Tidepool ingests sensor readings from tide gauges and serves them to the harbour dashboard.

## Development

```bash
uv sync
uv run pytest  # the fast suite
```
"""

PYPROJECT = """
[project]
name = "tidepool"
description = "Tide gauge ingestion"
requires-python = ">=3.12"
dependencies = ["fastapi>=0.110", "sqlmodel", "httpx[http2]>=0.27"]

[project.scripts]
tidepool = "tidepool.cli:main"

[tool.uv]
dev-dependencies = ["pytest"]

[tool.ruff]
line-length = 100
target-version = "py312"

[tool.mypy]
strict = true

[tool.pytest.ini_options]
filterwarnings = ["error"]
"""

PACKAGE = {
    "name": "tidepool-dashboard",
    "scripts": {"test": "vitest run", "lint": "eslint .", "build": "vite build", "deploy": f"curl -H 'token {TOKEN}'"},
    "devDependencies": {"typescript": "^5", "vitest": "^1", "eslint": "^9", "vite": "^5"},
    "dependencies": {"react": "^18"},
}

MAKEFILE = """.PHONY: test lint
test:
\tuv run pytest -q
lint:
\tuv run ruff check .
"""

WORKFLOW = f"""name: ci
on: [push, pull_request]
jobs:
  checks:
    runs-on: ubuntu-latest
    env:
      GITHUB_TOKEN: {TOKEN}
    steps:
      - uses: actions/checkout@v4
      - run: uv run ruff check .
      - run: |
          uv run mypy
          uv run pytest -q
"""

CONTRIBUTING = f"""# Contributing

- Every change must come with a test.
- Never commit the .env file.
- Never paste a token such as {TOKEN} into an issue.
- Use short branch names.
"""


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "tidepool"
    (project / ".github" / "workflows").mkdir(parents=True)
    (project / "README.md").write_text(README, encoding="utf-8")
    (project / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (project / "uv.lock").write_text("version = 1\n", encoding="utf-8")
    (project / "package.json").write_text(json.dumps(PACKAGE), encoding="utf-8")
    (project / "Makefile").write_text(MAKEFILE, encoding="utf-8")
    (project / ".github" / "workflows" / "ci.yml").write_text(WORKFLOW, encoding="utf-8")
    (project / "CONTRIBUTING.md").write_text(CONTRIBUTING, encoding="utf-8")
    (project / ".editorconfig").write_text("root = true\n[*]\nindent_style = space\nindent_size = 4\n", "utf-8")
    return project


def _onboard_rows(store: Store) -> list[MemoryProposal]:
    with store.db.read() as session:
        return list(session.exec(select(MemoryProposal).where(MemoryProposal.kind == "onboard")))


def test_the_project_files_are_drafted_as_typed_memories_and_a_preview_writes_nothing(
    any_store: Store, tmp_path: Path
) -> None:
    report = any_store.onboarding.preview(_project(tmp_path))

    drafts = {d.topic: d for d in report.drafts}
    assert report.project == "tidepool" and report.name == "tidepool" and report.preview
    assert {t: d.type for t, d in drafts.items()} == {
        "about": "context",
        "stack": "context",
        "commands": "reference",
        "conventions": "best-practice",
        "guardrails": "guardrail",
    }
    assert "ingests sensor readings from tide gauges" in drafts["about"].body
    stack = drafts["stack"].body
    assert "Python >=3.12" in stack and "uv" in stack and "fastapi, sqlmodel, httpx" in stack
    assert "TypeScript on Node.js" in stack and "react, vite, vitest, eslint" in stack
    commands = drafts["commands"].body
    assert "- install: `uv sync`" in commands and "make test (runs `uv run pytest -q`)" in commands
    assert "npm test (runs `vitest run`)" in commands and "npm run build (runs `vite build`)" in commands
    conventions = drafts["conventions"].body
    assert "ruff (line length 100; target py312)" in conventions and "mypy in strict mode" in conventions
    assert "warnings fail the tests" in conventions and "indent with space (4)" in conventions
    guardrails = drafts["guardrails"].body
    assert "`uv run ruff check .`" in guardrails and "`uv run mypy`" in guardrails
    assert "Every change must come with a test." in guardrails and "Never commit the .env file." in guardrails
    assert "Never paste a token such as [REDACTED:github-token] into an issue." in guardrails
    assert TOKEN not in report.model_dump_json()  # nor the package.json script that holds one
    assert "Use short branch names" not in guardrails
    assert drafts["guardrails"].sources == [".github/workflows/ci.yml", "CONTRIBUTING.md"]
    assert all(d.proposal is None and d.status is None for d in report.drafts)
    assert _onboard_rows(any_store) == []  # a preview files nothing


def test_proposals_are_filed_once_and_approving_writes_the_memory_with_its_sources(
    any_store: Store, tmp_path: Path
) -> None:
    project = _project(tmp_path)

    first = any_store.onboarding.propose(project)
    again = any_store.onboarding.propose(project)

    assert first.filed == 5 and again.filed == 0 and len(_onboard_rows(any_store)) == 5
    drafts = {d.topic: d for d in again.drafts}
    assert {d.status for d in again.drafts} == {"proposed"}
    listed = any_store.proposals.listing(kind="onboard").proposals
    assert {p.id for p in listed} == {d.proposal for d in again.drafts}
    assert any("read in the project's files" in line for line in listed[0].lines())

    stack = any_store.proposals.approve(drafts["stack"].proposal or "", by="ana")
    commands = any_store.proposals.approve(
        drafts["commands"].proposal or "", by="ana", text="Run `make test` before pushing; `uv sync` installs."
    )
    any_store.proposals.reject(drafts["conventions"].proposal or "", reason="we are changing them", by="ana")

    [context] = stack.created
    assert (context.type, context.trust, context.title) == ("context", "user-stated", drafts["stack"].title)
    assert context.source == "dokoro onboard (stack): pyproject.toml, package.json"
    [reference] = commands.created
    assert reference.type == "reference" and reference.body == "Run `make test` before pushing; `uv sync` installs."
    found = any_store.memories.recall("how do I run the tests of tidepool")
    assert reference.id in [h.memory.id for h in found]
    # Decided drafts are not filed again; their status shows.
    after = {d.topic: d.status for d in any_store.onboarding.propose(project).drafts}
    assert after == {
        "about": "proposed",
        "stack": "approved",
        "commands": "approved",
        "conventions": "rejected",
        "guardrails": "proposed",
    }


def test_a_newer_reading_withdraws_the_stale_proposal_and_supersedes_the_earlier_memory(
    any_store: Store, tmp_path: Path, clock: FrozenClock
) -> None:
    project = _project(tmp_path)
    first = {d.topic: d for d in any_store.onboarding.propose(project).drafts}
    [old_stack] = any_store.proposals.approve(first["stack"].proposal or "").created

    (project / "pyproject.toml").write_text(PYPROJECT.replace(">=3.12", ">=3.13"), encoding="utf-8")
    (project / "Makefile").write_text(MAKEFILE.replace("pytest -q", "pytest -q -x"), encoding="utf-8")
    second = any_store.onboarding.propose(project)
    drafts = {d.topic: d for d in second.drafts}

    assert second.filed == 2 and second.withdrawn == 1  # stack and commands are new; the open commands withdrawn
    withdrawn = any_store.proposals.get(first["commands"].proposal or "")
    assert withdrawn.status == "rejected" and "newer reading of the project's files" in (withdrawn.outcome or "")
    done = any_store.proposals.approve(drafts["stack"].proposal or "")
    [new_stack] = done.created
    assert "Python >=3.13" in new_stack.body and new_stack.supersedes == old_stack.id
    assert (any_store.memories.get(old_stack.id).state, any_store.memories.get(old_stack.id).superseded_by) == (
        "archived",
        new_stack.id,
    )


@pytest.mark.parametrize("first_by", ["alice", None])
def test_a_newer_reading_approved_by_an_agent_keeps_anothers_earlier_memory_beside_it(
    any_store: Store, tmp_path: Path, first_by: str | None
) -> None:
    # The ownership rule of every supersede: bob's approval writes bob's memory and leaves alice's
    # (or a person's) earlier reading active beside it, saying whose it is.
    project = _project(tmp_path)
    first = {d.topic: d for d in any_store.onboarding.propose(project).drafts}
    [old_stack] = any_store.proposals.approve(first["stack"].proposal or "", acting_agent=first_by).created
    (project / "pyproject.toml").write_text(PYPROJECT.replace(">=3.12", ">=3.13"), encoding="utf-8")
    drafts = {d.topic: d for d in any_store.onboarding.propose(project).drafts}

    done = any_store.proposals.approve(drafts["stack"].proposal or "", acting_agent="bob")

    [new_stack] = done.created
    assert done.changed == [] and new_stack.supersedes is None
    assert any_store.memories.get(old_stack.id).state == "active"
    owner = "alice's memory" if first_by else "a person's memory"
    assert f"{old_stack.id} kept beside it ({owner}" in (done.proposal.outcome or "")


def test_the_project_files_are_hostile_input(any_store: Store, tmp_path: Path) -> None:
    project = _project(tmp_path)
    outside = tmp_path / "outside"
    (outside / "workflows").mkdir(parents=True)
    (outside / "notes.md").write_text(f"# Secret\n\n{OUTSIDE_SECRET}\n", encoding="utf-8")
    (outside / "workflows" / "leak.yml").write_text(f"steps:\n  - run: pytest {OUTSIDE_SECRET}\n", "utf-8")
    (project / "README.md").unlink()
    (project / "README.md").symlink_to(outside / "notes.md")
    (project / ".github" / "workflows" / "ci.yml").unlink()
    (project / ".github" / "workflows").rmdir()
    (project / ".github" / "workflows").symlink_to(outside / "workflows")
    (project / "Cargo.toml").write_text("[package]\nname = 'x'\n" + "#" * (MAX_BYTES + 10), encoding="utf-8")
    (project / "go.mod").write_bytes(b"module x\x00\x01binary")
    (project / "tsconfig.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    (project / "ruff.toml").write_text("line-length = [unclosed", encoding="utf-8")
    os.mkfifo(project / "justfile")

    report = any_store.onboarding.propose(project)

    assert report.skipped["README.md"] == "a symlink (or one on its path): never followed"
    assert report.skipped[".github/workflows"] == "a symlink or not a folder: never followed"
    assert report.skipped["Cargo.toml"] == f"over {MAX_BYTES // 1024} KB: not read"
    assert report.skipped["go.mod"] == "binary (a NUL byte): not read as text"
    assert report.skipped["ruff.toml"].startswith("does not parse")
    assert "justfile" in report.skipped  # a FIFO: never opened for reading
    assert "tsconfig.json" in report.files  # nested too deep to parse: only says TypeScript is used
    everything = report.model_dump_json() + "".join(
        p.model_dump_json() for p in any_store.proposals.listing("all").proposals
    )
    assert OUTSIDE_SECRET not in everything
    assert TOKEN not in everything and "[REDACTED:github-token]" in everything
    assert all(not path.startswith("/") for path in [*report.files, *report.skipped])


def test_a_folder_that_is_no_project_is_refused_and_an_empty_one_proposes_nothing(
    any_store: Store, tmp_path: Path
) -> None:
    with pytest.raises(InvalidArgumentError, match="is not a folder"):
        any_store.onboarding.propose(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    report = any_store.onboarding.propose(tmp_path / "empty")
    assert report.drafts == [] and report.filed == 0 and report.files == []


@pytest.mark.parametrize(
    ("name", "command", "purpose"),
    [
        ("test", "vitest run", "test"),
        ("test:unit", "jest", "test"),
        (None, "uv run pytest -q", "test"),
        (None, "uv run ruff check .", "lint"),
        (None, "npx prettier --write .", "format"),
        (None, "uv run mypy", "typecheck"),
        ("dev", "vite", "run"),
        (None, "cd docs", None),
    ],
)
def test_commands_are_sorted_by_purpose(name: str | None, command: str, purpose: str | None) -> None:
    assert purpose_of(name, command) == purpose
