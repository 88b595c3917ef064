"""What every module of the memory service shares: the kinds, trust levels and states of a
memory, the document that indexes it, and the conversion of a row to its public result."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from dokoro_store.clock import parse_iso
from dokoro_store.errors import InvalidArgumentError
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.results.memories import Memory
from dokoro_store.semantic.documents.markdown import content_hash
from dokoro_store.walls.ownership import known_agent
from dokoro_store.walls.secrets import redact

__all__ = [
    "DOC_END",
    "DOC_PREFIX",
    "DOC_TYPE",
    "MEMORY_TYPES",
    "STATES",
    "TRUST_LEVELS",
    "archive",
    "canonical_entities",
    "days",
    "doc_fields",
    "doc_hash",
    "doc_text",
    "memory_result",
    "parse_time",
]

# ``best-practice`` (recommended patterns) and ``context`` (domain facts, the project's stack and
# commands, a distilled summary) are mokata's kinds: recalled when relevant, never always-on (only
# rules and guardrails are briefed every session).
MEMORY_TYPES = (
    "fact",
    "preference",
    "decision",
    "lesson",
    "rule",
    "guardrail",
    "reference",
    "episode",
    "best-practice",
    "context",
)
TRUST_LEVELS = ("user-stated", "agent-inferred", "imported")
STATES = ("active", "archived", "deprecated", "proposed")
# A memory is indexed as the document ``memory:<id>`` of type ``memory``.
DOC_PREFIX = "memory:"
# The upper bound of the memory documents' ids: "memory:" < id < "memory;" (';' follows ':').
DOC_END = DOC_PREFIX[:-1] + chr(ord(DOC_PREFIX[-1]) + 1)
DOC_TYPE = "memory"


def memory_result(row: MemoryRow) -> Memory:
    """The public result of a memory row."""
    return Memory.model_validate(row, from_attributes=True)


def doc_text(memory: MemoryRow | Any) -> str:
    """The text of a memory's document (before the redaction its saving applies)."""
    text = f"{memory.title}\n\n{memory.body}"
    if memory.entities:
        text += "\n\nEntities: " + ", ".join(memory.entities)
    return text


def doc_fields(memory: MemoryRow) -> dict[str, Any]:
    """The fields of a memory's document beside its text (its status follows the memory's state)."""
    return {
        "title": memory.title,
        "filepath": f"memory://{memory.id}",
        "doc_type": DOC_TYPE,
        "status": memory.state,
        "metadata": {"memory_type": memory.type, "trust": memory.trust},
    }


def doc_hash(memory: Any) -> str:
    """The content hash of the memory's document once it is indexed from the text the row gives
    (redacted, as saving it redacts): vectors stamped with another hash are an older text's.
    ``memory``: a row, or any object with its ``title``, ``body`` and ``entities``."""
    return content_hash(redact(doc_text(memory)).text)


def canonical_entities(entities: Sequence[str] | None) -> list[str]:
    """Entities lower-cased, whitespace-collapsed, de-duplicated in order (at most 200 characters each)."""
    seen: dict[str, None] = {}
    for entity in entities or []:
        cleaned = " ".join(str(entity).split()).strip().lower()
        if cleaned:
            seen.setdefault(cleaned[:200], None)
    return list(seen)


def days(delta: timedelta) -> float:
    return delta.total_seconds() / 86400


def parse_time(value: str | None, name: str) -> datetime | None:
    """An optional ISO date argument; a malformed one is refused with the expected format."""
    if value is None or not value.strip():
        return None
    try:
        return parse_iso(value)
    except ValueError as exc:
        raise InvalidArgumentError(f"{name}: {exc}") from None


def archive(row: MemoryRow, *, by: str, now: datetime, agent: str | None, reason: str | None = None) -> None:
    """Archive ``row`` as superseded by the memory ``by`` (one rule for every way a memory is
    superseded: remember's ``supersedes``, a verdict, a person's edit of its file, an approval):
    state, who changed it (``agent``, when it names somebody), the chain, why and when."""
    row.state = "archived"
    row.state_changed_by = known_agent(agent)
    row.superseded_by = by
    row.state_reason = reason or f"superseded by {by}"
    row.state_changed_at = now
    row.updated_at = now
