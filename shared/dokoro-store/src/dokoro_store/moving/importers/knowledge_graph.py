"""The knowledge graph of the MCP reference memory server (``@modelcontextprotocol/server-memory``).

Its file (``memory.jsonl``, or ``MEMORY_FILE_PATH``) holds one JSON object per line::

    {"type": "entity", "name": "John_Smith", "entityType": "person", "observations": ["Speaks Spanish"]}
    {"type": "relation", "from": "John_Smith", "to": "Anthropic", "relationType": "works_at"}

Each entity becomes a document (its observations, and its relations as lines) about one graph
entity; each relation a bi-temporal relation. A person-editable file: read behind the walls (no
symlink followed, bounded size), streamed line by line, every line checked and bounded
(:mod:`.items`). A bad line — not JSON, nested too deep to parse, too long, text no database holds,
a record missing its fields — is skipped and reported with its line number; the rest is read.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from dokoro_store.errors import InvalidArgumentError
from dokoro_store.moving.importers.items import (
    MAX_LINE_BYTES,
    MAX_LINKS,
    MAX_NAME_CHARS,
    MAX_OBSERVATIONS,
    ImportedNote,
    ImportSet,
    bad_text,
    entity_type_of,
    relation_type_of,
    shown_name,
)
from dokoro_store.moving.importers.names import slug_of

__all__ = ["MAX_GRAPH_BYTES", "read_knowledge_graph"]

MAX_GRAPH_BYTES = 512 * 1024 * 1024
# An older export is one JSON object, parsed whole: it is read within this bound.
MAX_EXPORT_BYTES = 64 * 1024 * 1024


def _open(path: Path) -> BinaryIO:
    """The file at ``path``, opened without following a link (``O_NOFOLLOW``) or blocking on a
    FIFO, once it is known to be a regular file within :data:`MAX_GRAPH_BYTES`."""
    if path.is_symlink():
        raise InvalidArgumentError(f"{path} is a symlink; pass the knowledge graph file itself")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise InvalidArgumentError(f"no knowledge graph file at {path}; pass the server's memory.jsonl") from None
    except OSError as exc:
        raise InvalidArgumentError(f"{path} cannot be read ({exc.strerror or exc})") from None
    handle = os.fdopen(fd, "rb")
    info = os.fstat(handle.fileno())
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_GRAPH_BYTES:
        handle.close()
        if not stat.S_ISREG(info.st_mode):
            raise InvalidArgumentError(f"{path} is not a regular file; pass the server's memory.jsonl")
        raise InvalidArgumentError(f"{path} is larger than {MAX_GRAPH_BYTES // 2**20} MB; split it first")
    return handle


def _lines(handle: BinaryIO) -> Iterator[tuple[int, bytes]]:
    """The numbered lines of ``handle``; a line longer than :data:`MAX_LINE_BYTES` comes back empty
    (its caller skips it), its rest read past."""
    number = 0
    while line := handle.readline(MAX_LINE_BYTES + 1):
        number += 1
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            while (rest := handle.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                pass  # the rest of an over-long line: skipped with it
            yield number, b""
            continue
        yield number, line


def _parse(number: int, raw: bytes, items: ImportSet) -> dict[str, Any] | None:
    """The record of one line, or None (skipped, with why, or blank)."""
    if not raw:
        items.skip(f"line {number}: longer than {MAX_LINE_BYTES // 1024} KB")
        return None
    if not raw.strip():
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        items.skip(f"line {number}: not UTF-8 text")
        return None
    try:
        record = json.loads(text)
    except RecursionError:
        items.skip(f"line {number}: JSON nested too deep to read")
        return None
    except ValueError as exc:
        items.skip(f"line {number}: not JSON ({getattr(exc, 'msg', 'malformed')})")
        return None
    if not isinstance(record, dict):
        items.skip(f"line {number}: not an object")
        return None
    return record


def _name(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _check_texts(number: int, texts: list[str], items: ImportSet) -> bool:
    for text in texts:
        if (why := bad_text(text)) is not None:
            items.skip(f"line {number}: text with {why}")
            return False
    return True


def _records(path: Path, items: ImportSet) -> Iterator[tuple[int, dict[str, Any]]]:
    """The records of the file: one per line, or those of an older export (one JSON object with
    ``entities`` and ``relations`` lists, on one line or pretty-printed over many)."""
    with _open(path) as handle:
        if (whole := _older_export(path, handle, items)) is not None:
            yield from whole
            return
        for number, raw in _lines(handle):
            items.lines = number
            if (record := _parse(number, raw, items)) is not None:
                yield number, record


def _older_export(path: Path, handle: BinaryIO, items: ImportSet) -> list[tuple[int, dict[str, Any]]] | None:
    """The records of an older export (the whole file one object), or None for a JSONL file."""
    head = handle.read(4096).lstrip()
    handle.seek(0)
    if not head.startswith(b"{") or b'"entities"' not in head or b'"type"' in head.split(b'"entities"', 1)[0]:
        return None
    size = os.fstat(handle.fileno()).st_size
    if size > MAX_EXPORT_BYTES:
        raise InvalidArgumentError(
            f"{path} is one JSON object larger than {MAX_EXPORT_BYTES // 2**20} MB; export it as JSONL "
            "(one entity or relation per line) first"
        )
    raw = handle.read()
    items.lines = raw.count(b"\n") + 1
    record = _parse(1, raw, items)
    if record is None:
        return []
    if not isinstance(record.get("entities"), list):
        handle.seek(0)
        return None
    found = [(1, {**e, "type": "entity"}) for e in record["entities"] if isinstance(e, dict)]
    found += [(1, {**r, "type": "relation"}) for r in record.get("relations") or [] if isinstance(r, dict)]
    return found


class _Graph:
    """The entities and relations read so far (names in the file's order)."""

    def __init__(self, path: Path, items: ImportSet) -> None:
        self.path = path
        self.items = items
        self.entities: dict[str, ImportedNote] = {}
        self.observations: dict[str, list[str]] = {}
        self.relations: list[tuple[int, str, str, str]] = []

    def entity(self, number: int, record: dict[str, Any]) -> None:
        name = _name(record.get("name"))
        if name is None:
            self.items.skip(f"line {number}: an entity without a name")
            return
        raw_type = record.get("entityType") if isinstance(record.get("entityType"), str) else "concept"
        observations = [o.strip() for o in record.get("observations") or [] if isinstance(o, str) and o.strip()]
        if not _check_texts(number, [name, str(raw_type), *observations], self.items):
            return
        if len(name) > MAX_NAME_CHARS:
            self.items.skip(f"line {number}: an entity name longer than {MAX_NAME_CHARS} characters")
            return
        note = self.entities.get(name)
        if note is None:
            note = ImportedNote(
                key=name,
                slug=slug_of(name),
                title=name,
                content="",
                filepath=f"kg://{self.path.name}/{name}",
                entity_type=entity_type_of(str(raw_type)),
                entity_name=name,
                kind=str(raw_type)[:100],
            )
            self.entities[name] = note
            self.observations[name] = []
        kept = self.observations[name]
        room = MAX_OBSERVATIONS - len(kept)
        if len(observations) > room:
            self.items.skip(
                f"line {number}: entity {shown_name(name)} has more than {MAX_OBSERVATIONS:,} observations; "
                f"{len(observations) - max(room, 0):,} not kept"
            )
        kept.extend(observations[: max(room, 0)])

    def relation(self, number: int, record: dict[str, Any]) -> None:
        source, target, relation = _name(record.get("from")), _name(record.get("to")), record.get("relationType")
        cleaned = relation_type_of(relation) if isinstance(relation, str) else None
        if source is None or target is None or cleaned is None:
            missing = [f for f, v in (("from", source), ("to", target), ("relationType", cleaned)) if v is None]
            self.items.skip(f"line {number}: a relation without {'/'.join(missing)}")
            return
        if not _check_texts(number, [source, target], self.items):
            return
        if max(len(source), len(target)) > MAX_NAME_CHARS:
            self.items.skip(f"line {number}: a relation naming an entity longer than {MAX_NAME_CHARS} characters")
            return
        self.relations.append((number, source, cleaned, target))

    def finish(self) -> None:
        """The relations attached to their sources (bounded per entity), the documents rendered."""
        cut: dict[str, int] = {}
        seen: set[tuple[str, str, str]] = set()
        for number, source, relation, target in self.relations:
            note = self.entities.get(source)
            if note is None:
                self.items.skip(
                    f"line {number}: relation from {shown_name(source)}: no entity of that name in the file"
                )
                continue
            if (source, relation, target) in seen:
                continue
            seen.add((source, relation, target))
            if len(note.links) >= MAX_LINKS:
                cut[source] = cut.get(source, 0) + 1
                continue
            target_note = self.entities.get(target)
            target_type = target_note.entity_type if target_note is not None else "concept"
            note.links.append((relation, target_type, target))
        for source, count in cut.items():
            self.items.skip(
                f"entity {shown_name(source)}: more than {MAX_LINKS:,} relations; {count:,} left out of the graph"
            )
        self.relations = []
        for name, note in self.entities.items():
            lines = [f"# {note.title}", "", f"Type: {note.kind}", ""]
            lines += [f"- {observation}" for observation in self.observations.pop(name)]
            if note.links:
                lines += ["", "## Relations", ""] + [f"- {r} [[{t}]]" for r, _type, t in note.links]
            note.content = "\n".join(lines).strip() + "\n"
            self.items.notes.append(note)


def read_knowledge_graph(path: Path) -> ImportSet:
    """The entities and relations of the file at ``path`` (nothing written)."""
    path = path.expanduser()
    items = ImportSet(source=str(path), format="mcp-memory", prefix="kg-")
    graph = _Graph(path, items)
    for number, record in _records(path, items):
        kind = record.get("type")
        if kind == "entity":
            graph.entity(number, record)
        elif kind == "relation":
            graph.relation(number, record)
        else:
            items.skip(f"line {number}: a record of unknown type {shown_name(str(kind))}")
    graph.finish()
    return items
