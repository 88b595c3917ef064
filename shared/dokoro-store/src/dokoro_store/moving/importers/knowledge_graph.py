"""The knowledge graph of the MCP reference memory server (``@modelcontextprotocol/server-memory``).

Its file (``memory.jsonl``, or ``MEMORY_FILE_PATH``) holds one JSON object per line::

    {"type": "entity", "name": "John_Smith", "entityType": "person", "observations": ["Speaks Spanish"]}
    {"type": "relation", "from": "John_Smith", "to": "Anthropic", "relationType": "works_at"}

Each entity becomes a document (its observations, and its relations as lines) about one graph
entity; each relation a bi-temporal relation. A person-editable file: read behind the walls
(no symlink, bounded size), every line checked; a bad line is reported and skipped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dokoro_store.errors import InvalidArgumentError
from dokoro_store.moving.importers.items import ImportedNote, ImportSet, entity_type_of, relation_type_of, slug_of

__all__ = ["MAX_GRAPH_BYTES", "read_knowledge_graph"]

MAX_GRAPH_BYTES = 50 * 1024 * 1024


def _read(path: Path) -> str:
    if path.is_symlink():
        raise InvalidArgumentError(f"{path} is a symlink; pass the knowledge graph file itself")
    if not path.is_file():
        raise InvalidArgumentError(f"no knowledge graph file at {path}; pass the server's memory.jsonl")
    if path.stat().st_size > MAX_GRAPH_BYTES:
        raise InvalidArgumentError(f"{path} is larger than {MAX_GRAPH_BYTES // 2**20} MB; split it first")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidArgumentError(f"{path} is not UTF-8 text ({exc}); pass the server's memory.jsonl") from None


def _records(text: str, skipped: list[str]) -> list[dict[str, Any]]:
    stripped = text.strip()
    if stripped.startswith("{") and '"entities"' in stripped[:200] and "\n{" not in stripped:
        # An older export: one JSON object {"entities": [...], "relations": [...]}.
        try:
            whole = json.loads(stripped)
        except json.JSONDecodeError:
            whole = None
        if isinstance(whole, dict):
            entities = [{"type": "entity", **e} for e in whole.get("entities", []) if isinstance(e, dict)]
            relations = [{"type": "relation", **r} for r in whole.get("relations", []) if isinstance(r, dict)]
            return entities + relations
    records: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            skipped.append(f"line {number}: not JSON ({exc.msg})")
            continue
        if not isinstance(record, dict):
            skipped.append(f"line {number}: not an object")
            continue
        records.append(record)
    return records


def read_knowledge_graph(path: Path) -> ImportSet:
    """The entities and relations of the file at ``path`` (nothing written)."""
    path = path.expanduser()
    items = ImportSet(source=str(path), format="mcp-memory")
    entities: dict[str, ImportedNote] = {}
    relations: list[tuple[str, str, str]] = []
    for record in _records(_read(path), items.skipped):
        kind = record.get("type")
        if kind == "entity":
            name = record.get("name")
            if not isinstance(name, str) or not name.strip():
                items.skipped.append("an entity without a name")
                continue
            raw_type = record.get("entityType") if isinstance(record.get("entityType"), str) else "concept"
            observations = [o for o in record.get("observations") or [] if isinstance(o, str) and o.strip()]
            note = entities.get(name.strip())
            if note is None:
                note = ImportedNote(
                    doc_id=f"kg-{slug_of(name)}",
                    title=name.strip(),
                    content="",
                    filepath=f"kg://{path.name}/{name.strip()}",
                    entity_type=entity_type_of(raw_type),
                    entity_name=name.strip(),
                    kind=str(raw_type),
                )
                entities[note.entity_name] = note
            note.tags.extend(observations)  # observations, kept in order (rendered below)
        elif kind == "relation":
            source, target, relation = record.get("from"), record.get("to"), record.get("relationType")
            cleaned = relation_type_of(relation) if isinstance(relation, str) else None
            if not isinstance(source, str) or not isinstance(target, str) or cleaned is None:
                items.skipped.append(f"a relation without from/to/relationType: {json.dumps(record)[:120]}")
                continue
            relations.append((source.strip(), cleaned, target.strip()))
        else:
            items.skipped.append(f"a record of unknown type {kind!r}")
    for source, relation, target in relations:
        if source not in entities:
            items.skipped.append(f"relation {source} -{relation}-> {target}: no entity {source!r} in the file")
            continue
        target_note = entities.get(target)
        target_type = target_note.entity_type if target_note is not None else "concept"
        entities[source].links.append((relation, target_type, target))
    for note in entities.values():
        observations, note.tags = note.tags, []
        lines = [f"# {note.title}", "", f"Type: {note.kind}", ""]
        lines += [f"- {observation}" for observation in observations]
        if note.links:
            lines += ["", "## Relations", ""] + [f"- {r} [[{t}]]" for r, _type, t in note.links]
        note.content = "\n".join(lines).strip() + "\n"
        items.notes.append(note)
    return items
