"""What a project's files say, gathered before it is drafted: the stack, the commands by purpose,
the conventions and the guardrails, each with the files it comes from.

Commands are sorted by purpose (install, build, run, test, lint, format, typecheck) from their name
(a ``test`` script, a ``lint`` target) or, failing that, from what they run (``pytest``, ``eslint``);
what fits no purpose is left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["PURPOSES", "Findings", "purpose_of"]

PURPOSES = ("install", "build", "run", "test", "lint", "format", "typecheck")
# Commands kept per purpose at most, facts per list at most, characters of one command at most.
PER_PURPOSE = 3
MAX_ITEMS = 12
MAX_COMMAND = 160

_BY_NAME = {
    "install": ("install", "setup", "bootstrap", "deps", "sync"),
    "build": ("build", "compile", "dist", "package"),
    "run": ("run", "dev", "start", "serve", "watch"),
    "test": ("test", "tests", "unit", "e2e", "coverage", "cov"),
    "lint": ("lint", "check", "lint-fix"),
    "format": ("fmt", "format", "prettier"),
    "typecheck": ("typecheck", "types", "type-check", "mypy", "tsc"),
}
_BY_TEXT = (
    ("typecheck", re.compile(r"\b(mypy|pyright|tsc\b|--noEmit|vue-tsc)")),
    ("format", re.compile(r"\b(ruff format|black|prettier|cargo fmt|gofmt|rustfmt|biome format)\b")),
    (
        "lint",
        re.compile(r"\b(ruff( check)?|eslint|flake8|pylint|clippy|golangci-lint|biome (lint|check)|lint-imports)\b"),
    ),
    ("test", re.compile(r"\b(pytest|jest|vitest|mocha|cargo test|go test|tox|nox|playwright|cypress|npm test)\b")),
    (
        "install",
        re.compile(r"\b(uv sync|pip install|npm (ci|install)|pnpm install|yarn install|poetry install|go mod)"),
    ),
    ("build", re.compile(r"\b(build|cargo build|go build|tsc -b|hatch build|uv build)\b")),
)


def purpose_of(name: str | None, command: str) -> str | None:
    """The purpose of a command named ``name`` (a script or target) running ``command``, or None."""
    if name:
        lowered = name.lower()
        head = re.split(r"[:_]", lowered)[0]
        for purpose, names in _BY_NAME.items():
            if lowered in names or head in names:
                return purpose
    for purpose, pattern in _BY_TEXT:
        if pattern.search(command):
            return purpose
    return None


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class Findings:
    """Everything onboarding learned of one project, each fact with its sources (relative paths)."""

    name: str
    about: str | None = None
    about_from: str | None = None
    named_by_manifest: bool = False
    stack: dict[str, str] = field(default_factory=dict)  # fact → source (insertion order kept)
    commands: dict[str, dict[str, str]] = field(default_factory=dict)  # purpose → command → source
    conventions: dict[str, str] = field(default_factory=dict)
    guardrails: dict[str, str] = field(default_factory=dict)
    ci: dict[str, str] = field(default_factory=dict)  # command CI runs → workflow

    def set_name(self, name: str, *, manifest: bool) -> None:
        """The project's name: the first manifest's, else the README's title, else its folder's."""
        name = " ".join(name.split())[:80]
        if name and not self.named_by_manifest:
            self.name, self.named_by_manifest = name, manifest

    def set_about(self, text: str, source: str) -> None:
        """What the project is: the README's first paragraph, else a manifest's description."""
        if text.strip() and self.about is None:
            self.about, self.about_from = text.strip(), source

    def add_stack(self, fact: str, source: str) -> None:
        if fact and len(self.stack) < MAX_ITEMS:
            self.stack.setdefault(_short(fact, 200), source)

    def add_command(self, name: str | None, command: str, source: str, *, shown: str | None = None) -> None:
        """A command the project runs: kept under its purpose (``shown`` is how to run it, when it
        differs from what it runs, e.g. ``npm run test`` for ``vitest run``)."""
        command = _short(command, MAX_COMMAND)
        purpose = purpose_of(name, command)
        if purpose is None or not command:
            return
        line = f"{_short(shown, MAX_COMMAND)} (runs `{command}`)" if shown and shown != command else command
        kept = self.commands.setdefault(purpose, {})
        if len(kept) < PER_PURPOSE and not any(command in known for known in kept):
            kept.setdefault(line, source)

    def add_convention(self, text: str, source: str) -> None:
        if text and len(self.conventions) < MAX_ITEMS:
            self.conventions.setdefault(_short(text, 240), source)

    def add_guardrail(self, text: str, source: str) -> None:
        if text and len(self.guardrails) < MAX_ITEMS:
            self.guardrails.setdefault(_short(text, 240), source)

    def add_ci(self, command: str, source: str) -> None:
        command = _short(command, MAX_COMMAND)
        if (
            command
            and len(self.ci) < MAX_ITEMS
            and purpose_of(None, command) in ("test", "lint", "format", "typecheck")
        ):
            self.ci.setdefault(command, source)
