"""A project's findings drafted as typed memories, one per topic, each naming the files it comes from.

- ``about`` (``context``): what the project is (the README's first paragraph, else a manifest's
  description);
- ``stack`` (``context``): languages and versions, package manager, main dependencies;
- ``commands`` (``reference``): how to install, build, run, test, lint, format and type-check it;
- ``conventions`` (``best-practice``): the settings of its linters, formatters and type checkers;
- ``guardrails`` (``guardrail``): what CI runs on every change, pre-commit hooks, the *must* /
  *never* lines of its contributor and agent instructions.

``context`` and ``best-practice`` are recalled when relevant; a ``guardrail`` is briefed every
session (so it is short: what must pass, what must not be done). Every text is redacted here
(:func:`~dokoro_store.walls.secrets.redact`), before any answer, prompt or row holds it: a token in
a CI file or a script never reaches the agent.
"""

from __future__ import annotations

from dataclasses import dataclass

from dokoro_store.semantic.memories.onboarding.findings import PURPOSES, Findings
from dokoro_store.walls.secrets import redact

__all__ = ["TOPICS", "Draft", "draft_memories"]

TOPICS = {
    "about": "context",
    "stack": "context",
    "commands": "reference",
    "conventions": "best-practice",
    "guardrails": "guardrail",
}


@dataclass(frozen=True)
class Draft:
    """One memory onboarding proposes: its topic, type, text, entities and the files behind it."""

    topic: str
    type: str
    title: str
    body: str
    entities: tuple[str, ...]
    sources: tuple[str, ...]


def _sources(*groups: dict[str, str] | list[str]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for group in groups:
        for source in group.values() if isinstance(group, dict) else group:
            seen.setdefault(source, None)
    return tuple(seen)


def _clean(text: str) -> str:
    return redact(text).text


def _listing(items: dict[str, str]) -> str:
    return "\n".join(f"- {item} ({source})" for item, source in items.items())


def draft_memories(found: Findings) -> list[Draft]:
    """The drafts ``found`` supports (a topic with nothing found is left out), redacted."""
    name = found.name
    entity = name.lower()
    drafts: list[Draft] = []

    def add(topic: str, title: str, body: str, sources: tuple[str, ...]) -> None:
        drafts.append(Draft(topic, TOPICS[topic], _clean(title)[:300], _clean(body), (entity, topic), sources))

    if found.about:
        add("about", f"About {name}", f"{found.about}\n\n(From {found.about_from}.)", (found.about_from or "",))
    if found.stack:
        headline = ", ".join(list(found.stack)[:3])
        add("stack", f"Stack of {name}: {headline}", _listing(found.stack), _sources(found.stack))
    if found.commands:
        lines: list[str] = []
        for purpose in PURPOSES:
            for command, source in found.commands.get(purpose, {}).items():
                lines.append(f"- {purpose}: `{command}` ({source})")
        purposes = [p for p in PURPOSES if p in found.commands]
        add(
            "commands",
            f"Commands of {name}: {', '.join(purposes)}",
            "\n".join(lines),
            _sources(*found.commands.values()),
        )
    if found.conventions:
        headline = "; ".join(list(found.conventions)[:2])
        add(
            "conventions",
            f"Conventions of {name}: {headline}",
            _listing(found.conventions),
            _sources(found.conventions),
        )
    if found.ci or found.guardrails:
        parts: list[str] = []
        if found.ci:
            workflows = ", ".join(_sources(found.ci))
            parts.append(
                f"CI ({workflows}) runs these checks; run them before pushing a change:\n"
                + "\n".join(f"- `{command}`" for command in found.ci)
            )
        if found.guardrails:
            parts.append("From the project's instructions:\n" + _listing(found.guardrails))
        title = (
            f"Checks {name}'s CI runs: " + ", ".join(f"`{c}`" for c in list(found.ci)[:3])
            if found.ci
            else f"Rules of {name}'s contributor instructions"
        )
        add("guardrails", title, "\n\n".join(parts), _sources(found.ci, found.guardrails))
    return drafts
