"""One memory as a markdown file a person can read, edit and keep in git.

``memories/<type>/<id>-<slug>.md``: a front-matter block (id, type, state, trust, entities,
dates, the supersede chain, where it came from) and the memory below it, its title as the
first heading::

    ---
    id: mem_20261130_2a5a02ab91c4
    type: fact
    state: active
    trust: agent-inferred
    entities: [auth/session.ts, postgres]
    created: 2026-11-30T16:00:00Z
    updated: 2026-11-30T16:00:00Z
    agent: alice
    ---
    # Login sessions use JWT

    auth/session.ts keeps login sessions as stateless JWT tokens.

Fields that are empty are left out. Reading a file back gives the same :class:`MemoryFields`
as the row it was rendered from (timestamps to the second), so "did this file change" and "did
this row change" are both a comparison of :func:`fields_digest`.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field, replace
from datetime import date, datetime
from typing import Any

from dokoro_store.clock import iso, parse_iso
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.semantic.memories.rows import MEMORY_TYPES, STATES, TRUST_LEVELS
from dokoro_store.walls import frontmatter

__all__ = [
    "CONTENT_FIELDS",
    "MEMORIES_DIR",
    "MemoryFields",
    "UnparseableFile",
    "fields_digest",
    "fields_of_row",
    "memory_path",
    "parse_memory_file",
    "render_memory",
    "slugify",
]

MEMORIES_DIR = "memories"
# A change to any of these makes a person's edit a new version; ``state`` alone is a lifecycle
# change of the same memory; the rest (id, dates, chain, agent) are the database's to say.
CONTENT_FIELDS = ("type", "title", "body", "entities", "trust", "source", "review_after", "valid_until")
_SLUG_CHARS = re.compile(r"[^\w]+", re.UNICODE)
_HEADING = re.compile(r"^#\s+(.*\S)\s*$")
_MAX_SLUG = 60


class UnparseableFile(ValueError):
    """A memory file whose front matter or body cannot be read; the message says what to fix."""


@dataclass(frozen=True)
class MemoryFields:
    """What a memory's file shows, as text (timestamps in the API's ISO format)."""

    id: str | None
    type: str
    title: str
    body: str
    entities: tuple[str, ...] = ()
    trust: str = "user-stated"
    state: str = "active"
    created: str | None = None
    updated: str | None = None
    agent: str | None = None
    session: str | None = None
    source: str | None = None
    review_after: str | None = None
    valid_until: str | None = None
    supersedes: str | None = None
    superseded_by: str | None = None
    state_reason: str | None = None
    # Front-matter keys the file left out (a known file keeps the database's value for them).
    missing: frozenset[str] = field(default=frozenset(), compare=False)

    def content_differs(self, other: MemoryFields) -> list[str]:
        """The content fields (:data:`CONTENT_FIELDS`) in which ``other`` differs from this one."""
        return [name for name in CONTENT_FIELDS if getattr(self, name) != getattr(other, name)]

    def over(self, base: MemoryFields) -> MemoryFields:
        """These fields, with the ones the file left out taken from ``base``."""
        return replace(self, **{name: getattr(base, name) for name in self.missing}, missing=frozenset())


def _when(value: datetime | None) -> str | None:
    return iso(value) if value is not None else None


def fields_of_row(row: MemoryRow) -> MemoryFields:
    """What the file of ``row`` shows."""
    return MemoryFields(
        id=row.id,
        type=row.type,
        title=row.title,
        body=row.body.strip(),
        entities=tuple(row.entities or ()),
        trust=row.trust,
        state=row.state,
        created=_when(row.created_at),
        updated=_when(row.updated_at),
        agent=row.agent_id,
        session=row.session_id,
        source=row.source,
        review_after=_when(row.review_after),
        valid_until=_when(row.valid_until),
        supersedes=row.supersedes,
        superseded_by=row.superseded_by,
        state_reason=row.state_reason,
    )


def fields_digest(fields: MemoryFields) -> str:
    """A digest of everything the file shows: equal digests, equal files (whatever the layout)."""
    data = asdict(fields)
    data.pop("missing")
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


def slugify(title: str) -> str:
    """A file-name slug of a title (letters of any script kept, at most 60 characters)."""
    slug = _SLUG_CHARS.sub("-", title.lower()).strip("-_")
    return slug[:_MAX_SLUG].rstrip("-_") or "memory"


def memory_path(memory_id: str, type: str, title: str) -> str:
    """The path of a memory's file, relative to the workspace folder."""
    return f"{MEMORIES_DIR}/{type}/{memory_id}-{slugify(title)}.md"


_FRONT_KEYS = (
    "id",
    "type",
    "state",
    "trust",
    "entities",
    "created",
    "updated",
    "agent",
    "session",
    "source",
    "review_after",
    "valid_until",
    "supersedes",
    "superseded_by",
    "state_reason",
)


def render_memory(fields: MemoryFields) -> str:
    """The file text of a memory (the front matter in :func:`frontmatter.render`'s plain layout)."""
    front = frontmatter.render({key: getattr(fields, key) for key in _FRONT_KEYS}, plain=True)
    return front + f"# {fields.title}\n\n{fields.body}\n"


def _text(value: Any, key: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime | date):
        # YAML reads an unquoted date as a date; a person may well write one.
        return iso(value if isinstance(value, datetime) else datetime(value.year, value.month, value.day))
    if isinstance(value, dict | list):
        raise UnparseableFile(f"{key}: expected one value, got a {type(value).__name__}")
    text = str(value).strip()
    return text or None


def _time(value: Any, key: str) -> str | None:
    text = _text(value, key)
    if text is None:
        return None
    try:
        return iso(parse_iso(text))
    except ValueError as exc:
        raise UnparseableFile(f"{key}: {exc}") from None


def _entities(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        items: list[Any] = [part for part in value.split(",")]
    elif isinstance(value, list):
        items = value
    else:
        raise UnparseableFile("entities: expected a list, e.g. [auth-service, postgres]")
    return tuple(str(item).strip() for item in items if item is not None and str(item).strip())


def _choice(value: Any, key: str, allowed: tuple[str, ...]) -> str | None:
    text = _text(value, key)
    if text is not None and text not in allowed:
        raise UnparseableFile(f"{key}: {text!r} is not one of {', '.join(allowed)}")
    return text


def parse_memory_file(text: str, *, folder_type: str | None = None) -> MemoryFields:
    """Read a memory file; keys it leaves out are listed in ``missing``.

    ``folder_type`` (the ``<type>`` folder the file is in) is the type when the front matter
    names none. Raises :class:`UnparseableFile` when the front matter is not a YAML map, a value
    is not one the store accepts, or there is no title or no body.
    """
    text = text.lstrip("\ufeff")
    raw, rest = frontmatter.split(text)
    if raw is None and frontmatter.opens(text):
        raise UnparseableFile(
            "the front matter opened by '---' on the first line never closes: end it with a line '---'"
        )
    data: dict[str, Any] = {}
    if raw is not None:
        try:
            loaded = frontmatter.load(raw)
        except frontmatter.FrontMatterError as exc:
            raise UnparseableFile(str(exc)) from None
        if loaded is not None and not isinstance(loaded, dict):
            raise UnparseableFile("the front matter must be a map of keys (id: …, type: …)")
        data = {str(k): v for k, v in (loaded or {}).items()}
    title, body = _title_and_body(rest, _text(data.get("title"), "title"))
    missing = {key for key in _FRONT_KEYS if key not in data}
    memory_type = _choice(data.get("type"), "type", MEMORY_TYPES)
    if memory_type is None and folder_type in MEMORY_TYPES:
        memory_type = folder_type
        missing.discard("type")
    return MemoryFields(
        id=_text(data.get("id"), "id"),
        type=memory_type or "fact",
        title=title,
        body=body,
        entities=_entities(data.get("entities")),
        trust=_choice(data.get("trust"), "trust", TRUST_LEVELS) or "user-stated",
        state=_choice(data.get("state"), "state", STATES) or "active",
        created=_time(data.get("created"), "created"),
        updated=_time(data.get("updated"), "updated"),
        agent=_text(data.get("agent"), "agent"),
        session=_text(data.get("session"), "session"),
        source=_text(data.get("source"), "source"),
        review_after=_time(data.get("review_after"), "review_after"),
        valid_until=_time(data.get("valid_until"), "valid_until"),
        supersedes=_text(data.get("supersedes"), "supersedes"),
        superseded_by=_text(data.get("superseded_by"), "superseded_by"),
        state_reason=_text(data.get("state_reason"), "state_reason"),
        missing=frozenset(missing),
    )


def _title_and_body(text: str, front_title: str | None) -> tuple[str, str]:
    lines = text.strip().splitlines()
    if lines and (heading := _HEADING.match(lines[0])):
        title, body = heading.group(1).strip(), "\n".join(lines[1:]).strip()
    elif front_title:
        title, body = front_title, "\n".join(lines).strip()
    elif lines:
        title, body = lines[0].lstrip("#").strip(), "\n".join(lines[1:]).strip() or lines[0].strip()
    else:
        title, body = "", ""
    if not title:
        raise UnparseableFile("no title: start the memory with a heading line, e.g. '# What this memory says'")
    if len(title) > 300:
        raise UnparseableFile("the title (the first heading) must be at most 300 characters; put the rest below it")
    if not body:
        raise UnparseableFile("no body: write the memory below its heading")
    return title, body
