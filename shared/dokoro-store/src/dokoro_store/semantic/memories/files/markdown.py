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
as the row it was rendered from (timestamps to the second; a title on one line, its whitespace
collapsed; a body's line breaks as ``\n``, blank lines around it dropped: :func:`fields_of_row`
shows a row as its file reads back, whatever its text holds), so "did this file change" and "did
this row change" are both a comparison of :func:`fields_digest`.

Two more lines carry what a rebuild from the files needs and no edit changes: ``revision`` (the
memory's own revision: a file older than its row is behind the database) and ``depends_on`` (the
memories it depends on). They are left out of the digest: they are the database's to say.

A file is hostile input: every value is checked as it is read (:class:`UnparseableFile` says what is
wrong): an id, a chain or a dependency that is not a plain name (``id: ../../../etc/passwd``), a
trust, state or type that is none of the store's, an agent that is no plain name, a revision that
is no number.
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
from dokoro_store.semantic.memories.repository import is_safe_id
from dokoro_store.semantic.memories.rows import MEMORY_TYPES, STATES, TRUST_LEVELS
from dokoro_store.walls import frontmatter

__all__ = [
    "CONTENT_FIELDS",
    "MEMORIES_DIR",
    "MemoryFields",
    "UnparseableFile",
    "clean_body",
    "clean_title",
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
# The most dependencies a file may name (remember takes at most 20), and the longest agent name.
_MAX_DEPENDS = 100
_MAX_AGENT = 200
_MAX_REVISION = 2**62
# Fields a file shows that no edit changes and its digest leaves out (the database's to say).
_NOT_DIGESTED = ("missing", "revision", "depends_on")


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
    # The memory's own revision (None: a file that shows none, written before revisions or by hand).
    revision: int | None = None
    # The memories it depends on (its ``depends_on`` links), for a rebuild.
    depends_on: tuple[str, ...] = ()
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


def clean_title(text: str) -> str:
    """A title as its file shows it: one line, its whitespace (line breaks, tabs) collapsed."""
    return " ".join(text.split())


def clean_body(text: str) -> str:
    """A body as its file reads back: line breaks of every kind (CRLF, CR, U+2028, ...) as ``\n``,
    no blank lines or spaces around it."""
    return "\n".join(text.strip().splitlines()).strip()


def _clean(text: str | None) -> str | None:
    """A one-value field as its file reads back (trimmed; empty is none)."""
    return (text.strip() or None) if text is not None else None


def fields_of_row(row: MemoryRow, depends_on: tuple[str, ...] = ()) -> MemoryFields:
    """What the file of ``row`` shows (as it reads back: :func:`clean_title`, :func:`clean_body`);
    ``depends_on``: its dependencies (links), for the line a rebuild reads."""
    return MemoryFields(
        id=row.id,
        type=row.type,
        title=clean_title(row.title),
        body=clean_body(row.body),
        entities=tuple(e.strip() for e in row.entities or () if e.strip()),
        trust=row.trust,
        state=row.state,
        created=_when(row.created_at),
        updated=_when(row.updated_at),
        agent=_clean(row.agent_id),
        session=_clean(row.session_id),
        source=_clean(row.source),
        review_after=_when(row.review_after),
        valid_until=_when(row.valid_until),
        supersedes=_clean(row.supersedes),
        superseded_by=_clean(row.superseded_by),
        state_reason=_clean(row.state_reason),
        revision=row.revision,
        depends_on=tuple(sorted(depends_on)),
    )


def fields_digest(fields: MemoryFields) -> str:
    """A digest of everything the file shows that an edit may change or the database says (its
    revision and dependencies aside): equal digests, equal files (whatever the layout)."""
    data = asdict(fields)
    for name in _NOT_DIGESTED:
        data.pop(name)
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
    "revision",
    "depends_on",
)


def render_memory(fields: MemoryFields) -> str:
    """The file text of a memory (the front matter in :func:`frontmatter.render`'s plain layout)."""
    values = {key: getattr(fields, key) for key in _FRONT_KEYS}
    values["depends_on"] = list(fields.depends_on) or None
    front = frontmatter.render(values, plain=True)
    return front + f"# {clean_title(fields.title)}\n\n{clean_body(fields.body)}\n"


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


def _name(value: Any, key: str) -> str | None:
    """An id (``id``, ``supersedes``, ...): a plain name, never a path."""
    text = _text(value, key)
    if text is not None and not is_safe_id(text):
        shown = text if len(text) <= 80 else text[:77] + "..."
        raise UnparseableFile(
            f"{key}: {shown!r} is not a memory id (mem_YYYYMMDD_hex: letters, digits, '_', '-', no path); "
            "fix it, or remove the line"
        )
    return text


def _agent(value: Any) -> str | None:
    text = _text(value, "agent")
    if text is not None and (len(text) > _MAX_AGENT or not text.isprintable()):
        raise UnparseableFile(f"agent: expected a name of at most {_MAX_AGENT} printable characters")
    return text


def _revision(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise UnparseableFile("revision: expected a whole number")
    try:
        number = int(str(value).strip())
    except ValueError:
        raise UnparseableFile("revision: expected a whole number") from None
    if not 0 <= number <= _MAX_REVISION:
        raise UnparseableFile("revision: out of range")
    return number


def _depends_on(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    items = value if isinstance(value, list) else [value] if isinstance(value, str) else None
    if items is None:
        raise UnparseableFile("depends_on: expected a list of memory ids, e.g. [mem_20261130_1a2b3c4d5e6f]")
    if len(items) > _MAX_DEPENDS:
        raise UnparseableFile(f"depends_on: at most {_MAX_DEPENDS} memories")
    names = [_name(item, "depends_on") for item in items]
    return tuple(sorted({n for n in names if n is not None}))


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
        id=_name(data.get("id"), "id"),
        type=memory_type or "fact",
        title=title,
        body=body,
        entities=_entities(data.get("entities")),
        trust=_choice(data.get("trust"), "trust", TRUST_LEVELS) or "user-stated",
        state=_choice(data.get("state"), "state", STATES) or "active",
        created=_time(data.get("created"), "created"),
        updated=_time(data.get("updated"), "updated"),
        agent=_agent(data.get("agent")),
        session=_text(data.get("session"), "session"),
        source=_text(data.get("source"), "source"),
        review_after=_time(data.get("review_after"), "review_after"),
        valid_until=_time(data.get("valid_until"), "valid_until"),
        supersedes=_name(data.get("supersedes"), "supersedes"),
        superseded_by=_name(data.get("superseded_by"), "superseded_by"),
        state_reason=_text(data.get("state_reason"), "state_reason"),
        revision=_revision(data.get("revision")),
        depends_on=_depends_on(data.get("depends_on")),
        missing=frozenset(missing),
    )


def _title_and_body(text: str, front_title: str | None) -> tuple[str, str]:
    lines = text.strip().splitlines()
    if lines and (heading := _HEADING.match(lines[0])):
        title, body = heading.group(1), "\n".join(lines[1:])
    elif front_title:
        title, body = front_title, "\n".join(lines)
    elif lines:
        title, body = lines[0].lstrip("#"), "\n".join(lines[1:]).strip() or lines[0]
    else:
        title, body = "", ""
    title, body = clean_title(title), clean_body(body)
    if not title:
        raise UnparseableFile("no title: start the memory with a heading line, e.g. '# What this memory says'")
    if len(title) > 300:
        raise UnparseableFile("the title (the first heading) must be at most 300 characters; put the rest below it")
    if not body:
        raise UnparseableFile("no body: write the memory below its heading")
    return title, body
