"""Reading a store the original TypeScript dokoro wrote (reference §3.1, §3.3), as rows of ours.

The original's SQLite file is read through :mod:`sqlite3`, read-only; its ``.mcp/plans/*.json``
and ``.mcp/questions.json`` are files a person can edit, so they are read behind the store's walls
(inside the folder, no symlink, bounded size) and every value is checked for its type: a bad file
or field is reported and skipped, never a crash and never a guess.

:func:`read_original` returns, per table of this dokoro, the rows the original's history becomes,
and how many things of each kind the original held, so the conversion can verify its counts.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from datetime import datetime
from pathlib import Path
from typing import Any

from dokoro_store.moving.original.values import OriginalContents, _connect, _object, _rows, _strings, _when
from dokoro_store.semantic.documents.markdown import content_hash
from dokoro_store.walls.containment import plain_file

__all__ = ["MAX_FILE_BYTES", "OriginalContents", "is_original_database", "may_be_original_database", "read_original"]

log = logging.getLogger("dokoro.store")

# A plan or question file larger than this is not a file the original wrote: refused, not read.
MAX_FILE_BYTES = 20 * 1024 * 1024


def is_original_database(path: Path) -> bool:
    """Whether ``path`` is a SQLite file the original dokoro made (its ``schema_version`` table,
    no Alembic revision of ours)."""
    if not path.is_file() or path.is_symlink():
        return False
    try:
        with _connect(path) as connection:
            names = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError:
        return False
    return "schema_version" in names and "alembic_version" not in names


def may_be_original_database(path: Path) -> bool:
    """A first look that takes no lock on the file (SQLite's ``immutable``): False when ``path``
    is surely not the original's (no file, or this dokoro's revision table is there); True when
    :func:`is_original_database` must decide (under the conversion lock). A real check here would
    hold a reader on the original's database just when another process converts it."""
    if not path.is_file() or path.is_symlink():
        return False
    try:
        with _connect(path, immutable=True) as connection:
            names = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError:
        return True
    return "alembic_version" not in names


def read_original(database: Path, root: Path, *, now: datetime) -> OriginalContents:
    """Everything the original store at ``root`` holds: its database ``database`` (read-only; a
    backup copy) and its ``.mcp`` files. ``now`` stands in for a time the original left empty."""
    contents = OriginalContents()
    with _connect(database) as connection:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        _read_episodic(connection, tables, contents, now)
        _read_feedback(connection, tables, contents, now)
        _read_coordination(connection, tables, contents, now)
        _read_docs(connection, tables, contents, now)
        _read_graph(connection, tables, contents, now)
    _read_plans(root, contents, now)
    _read_questions(root, contents, now)
    return contents


def _read_episodic(connection: sqlite3.Connection, tables: set[str], out: OriginalContents, now: datetime) -> None:
    sessions = 0
    for row in _rows(connection, "sessions", tables):
        meta = _object(row["metadata_json"]) or {}
        columns = row.keys()  # `k in row` would look among the values of a sqlite3.Row
        extra = {k: row[k] for k in ("goals_json", "notes", "focus_doc_id") if k in columns and row[k]}
        if extra:
            meta = {**meta, "original": extra}
        out.add(
            "sessions",
            {
                "id": str(row["id"]),
                "started_at": _when(row["started_at"], now),
                "ended_at": _when(row["ended_at"]),
                "status": row["status"] or "active",
                "summary": row["summary"],
                "metadata_json": meta or None,
            },
        )
        sessions += 1
    out.counts["sessions"] = sessions
    known = {row["id"] for row in out.tables.get("sessions", [])}
    summaries = 0
    for row in _rows(connection, "conversation_summaries", tables):
        started = _when(row["started_at"], now)
        session_id = row["session_id"]
        if session_id is not None and session_id not in known:
            # ON DELETE SET NULL in the original never ran on a hand-deleted session: give it its row.
            out.add("sessions", {"id": session_id, "started_at": started, "status": "completed"})
            known.add(session_id)
        keys = row.keys()
        out.add(
            "conversation_summaries",
            {
                "id": int(row["id"]),
                "session_id": session_id,
                "ai_model": row["ai_model"] or "unknown",
                "summary": row["summary"] or "",
                "key_decisions": _strings(row["key_decisions_json"]),
                "key_topics": _strings(row["key_topics_json"]),
                "message_count": row["message_count"],
                "token_count": row["token_count"],
                "started_at": started,
                "created_at": _when(row["created_at"], started),
                "compacted": bool(row["compacted"]) if "compacted" in keys else False,
            },
        )
        summaries += 1
    out.counts["conversation_summaries"] = summaries


def _read_feedback(connection: sqlite3.Connection, tables: set[str], out: OriginalContents, now: datetime) -> None:
    count = 0
    for row in _rows(connection, "agent_feedback", tables):
        out.add(
            "agent_feedback",
            {
                "id": int(row["id"]),
                "agent_id": row["agent_id"],
                "tool_name": row["tool_name"],
                "outcome": row["outcome"],
                "confidence": row["confidence"],
                "latency_ms": row["latency_ms"],
                "error_message": row["error_message"],
                "doc_id": row["doc_id"],
                "session_id": row["session_id"],
                "metadata_json": _object(row["metadata_json"]),
                "recorded_at": _when(row["recorded_at"], now),
            },
        )
        count += 1
    out.counts["agent_feedback"] = count


def _read_coordination(connection: sqlite3.Connection, tables: set[str], out: OriginalContents, now: datetime) -> None:
    simple = {
        "agent_presence": (
            "agent_id",
            "session_id",
            "status",
            "current_focus",
            "last_heartbeat",
            "heartbeat_seq",
        ),
        "file_claims": (
            "claim_key",
            "file_path",
            "agent_id",
            "session_id",
            "intent",
            "claimed_at",
            "expires_at",
            "heartbeat_seq",
            "released_at",
        ),
    }
    for table, columns in simple.items():
        copied = [{c: found[c] for c in columns} for found in _rows(connection, table, tables)]
        for values in copied:
            out.add(table, values)
        out.counts[table] = len(copied)
    notes = 0
    for row in _rows(connection, "shared_notes", tables):
        out.add(
            "shared_notes",
            {
                "id": int(row["id"]),
                "agent_id": row["agent_id"],
                "content": row["content"],
                "note_type": row["note_type"] or "scratch",
                "metadata_json": _object(row["metadata_json"]),
                "created_at": _when(row["created_at"], now),
            },
        )
        notes += 1
    out.counts["shared_notes"] = notes
    blocks = 0
    for row in _rows(connection, "shared_blocks", tables):
        created = _when(row["created_at"], now)
        out.add(
            "shared_blocks",
            {
                "block_key": row["block_key"],
                "content": row["content"],
                "version": int(row["version"] or 1),
                "updated_by": row["updated_by"],
                "created_at": created,
                "updated_at": _when(row["updated_at"], created),
            },
        )
        blocks += 1
    out.counts["shared_blocks"] = blocks
    handoffs = 0
    for row in _rows(connection, "handoffs", tables):
        out.add(
            "handoffs",
            {
                "id": int(row["id"]),
                "from_agent": row["from_agent"],
                "to_agent": row["to_agent"],
                "session_id": row["session_id"],
                "summary": row["summary"],
                "open_items": _strings(row["open_items_json"]),
                "status": row["status"] or "open",
                "claimed_by": row["claimed_by"],
                "created_at": _when(row["created_at"], now),
                "claimed_at": _when(row["claimed_at"]),
            },
        )
        handoffs += 1
    out.counts["handoffs"] = handoffs


# Columns of the original's docs this dokoro has no column for: kept in the row's metadata.
_DOC_EXTRAS = (
    "prd_stage",
    "time_estimated_min",
    "time_actual_min",
    "parallel_slot",
    "due_at",
    "gh_issue",
    "gh_pr",
    "gh_repo",
)


def _read_docs(connection: sqlite3.Connection, tables: set[str], out: OriginalContents, now: datetime) -> None:
    tags: dict[str, list[str]] = {}
    if {"tags", "doc_tags"} <= tables:
        query = "SELECT dt.doc_id, t.name FROM doc_tags dt JOIN tags t ON t.id = dt.tag_id ORDER BY t.name"
        for doc_id, name in connection.execute(query):
            tags.setdefault(doc_id, []).append(name)
    count = 0
    for row in _rows(connection, "docs", tables):
        keys = row.keys()
        meta = _object(row["metadata_json"]) or {}
        meta.update({k: row[k] for k in _DOC_EXTRAS if k in keys and row[k] is not None})
        if tags.get(row["id"]):
            meta["tags"] = tags[row["id"]]
        created = _when(row["created_at"], now)
        content = row["content"]
        out.add(
            "docs",
            {
                "id": row["id"],
                "filepath": row["filepath"],
                "title": row["title"] or row["id"],
                "content": content,
                "doc_type": row["doc_type"] or "issue",
                "status": row["status"] or "inbox",
                "priority": row["priority"] or "medium",
                "created_at": created,
                "updated_at": _when(row["updated_at"], created),
                "completed_at": _when(row["completed_at"]),
                "metadata_json": meta or None,
                # This dokoro's hash of the text (the original's was MD5 of the file): the index
                # compares it with what it indexed, and indexes the document on the next search.
                "content_hash": content_hash(content) if content else None,
            },
        )
        count += 1
    out.counts["docs"] = count
    if "chunks" in tables:
        out.notes.append("the original's chunks and vectors are not carried: this dokoro indexes the documents again")


def _read_graph(connection: sqlite3.Connection, tables: set[str], out: OriginalContents, now: datetime) -> None:
    entities = 0
    seen: set[tuple[str, str]] = set()
    ids: set[int] = set()
    for row in _rows(connection, "entities", tables):
        canonical = row["canonical_name"] or str(row["name"]).lower()
        if (row["type"], canonical) in seen:
            continue
        seen.add((row["type"], canonical))
        ids.add(int(row["id"]))
        created = _when(row["created_at"], now)
        out.add(
            "entities",
            {
                "id": int(row["id"]),
                "type": row["type"],
                "name": row["name"],
                "canonical_name": canonical,
                "description": row["description"],
                "metadata_json": _object(row["metadata_json"]),
                "created_at": created,
                "updated_at": _when(row["updated_at"], created),
            },
        )
        entities += 1
    out.counts["entities"] = entities
    links = 0
    for row in _rows(connection, "doc_entities", tables):
        if int(row["entity_id"]) not in ids:
            continue
        out.add(
            "doc_entities",
            {
                "doc_id": row["doc_id"],
                "entity_id": int(row["entity_id"]),
                "relation_type": row["relation_type"],
                "context": row["context"],
                "confidence": float(row["confidence"] if row["confidence"] is not None else 1.0),
                "created_at": _when(row["created_at"], now),
            },
        )
        links += 1
    out.counts["doc_entities"] = links
    relations = 0
    for row in _rows(connection, "entity_relations", tables):
        keys = row.keys()
        if "id" not in keys or int(row["source_id"]) not in ids or int(row["target_id"]) not in ids:
            continue
        start = _when(row["valid_from"], now)
        ended = _when(row["valid_to"])
        learned = _when(row["created_at"], start)
        out.add(
            "entity_relations",
            {
                "id": int(row["id"]),
                "source_id": int(row["source_id"]),
                "target_id": int(row["target_id"]),
                "relation_type": row["relation_type"],
                "weight": float(row["weight"] if row["weight"] is not None else 1.0),
                "metadata_json": _object(row["metadata_json"]),
                "valid_from": start,
                "valid_to": ended,
                "recorded_at": learned,
                "closed_at": ended,
            },
        )
        relations += 1
    out.counts["entity_relations"] = relations


def _load_json_file(root: Path, path: Path, out: OriginalContents) -> Any:
    """A JSON file of the original's folder, behind the walls; None (and a note) when refused."""
    if not path.exists() and not path.is_symlink():
        return None
    if not plain_file(root, path):
        out.notes.append(f"{path.relative_to(root)}: skipped (a symlink or not a regular file of the store)")
        return None
    if path.stat().st_size > MAX_FILE_BYTES:
        out.notes.append(f"{path.relative_to(root)}: skipped (larger than {MAX_FILE_BYTES // 2**20} MB)")
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        out.notes.append(f"{path.relative_to(root)}: skipped (not valid JSON: {exc})")
        return None


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


_PLAN_STATUSES = ("draft", "active", "completed", "validated", "failed")


def _read_plans(root: Path, out: OriginalContents, now: datetime) -> None:
    plans_dir = root / ".mcp" / "plans"
    index = _load_json_file(root, plans_dir / "index.json", out)
    index = index if isinstance(index, dict) else {}
    files: dict[str, tuple[Path, str | None]] = {}
    if plans_dir.is_dir() and not plans_dir.is_symlink():
        for path in sorted(plans_dir.glob("*.json")):
            if path.name != "index.json":
                files[path.stem] = (path, None)
    for plan_id, entry in index.items():
        if isinstance(entry, dict) and entry.get("archived") and isinstance(entry.get("archive_path"), str):
            relative = entry["archive_path"]
            if ".." not in Path(relative).parts:
                files[plan_id] = (plans_dir / relative, relative)
    count = 0
    for plan_id, (path, archive_path) in sorted(files.items()):
        data = _load_json_file(root, path, out)
        if not isinstance(data, dict) or not isinstance(data.get("items"), list):
            if data is not None:
                out.notes.append(f"{path.relative_to(root)}: skipped (not a plan: no items list)")
            continue
        title = _text(data.get("title")) or plan_id
        created = _when(data.get("created_at"), now)
        status = data.get("status") if data.get("status") in _PLAN_STATUSES else "active"
        out.add(
            "plans",
            {
                "id": _text(data.get("id")) or plan_id,
                "title": title,
                "description": _text(data.get("description")),
                "status": status,
                "created_at": created,
                "updated_at": _when(data.get("updated_at"), created),
                "validated_at": _when(data.get("validated_at")),
                "validation_notes": _text(data.get("validation_notes")),
                "archived_at": _when(data.get("archived_at"), created) if archive_path else None,
                "archive_path": archive_path,
                # Written before plans had owners: every agent of the store may continue it.
                "agent_id": None,
                "shared": True,
            },
        )
        for position, item in enumerate(i for i in data["items"] if isinstance(i, dict) and _text(i.get("text"))):
            blockers = item.get("blockers")
            out.add(
                "plan_items",
                {
                    "plan_id": _text(data.get("id")) or plan_id,
                    "position": position,
                    "text": _text(item.get("text")),
                    "completed": item.get("completed") is True,
                    "created_at": _when(item.get("created_at"), created),
                    "completed_at": _when(item.get("completed_at")),
                    "notes": _text(item.get("notes")),
                    "blockers": [b for b in blockers if isinstance(b, str)] if isinstance(blockers, list) else [],
                },
            )
        count += 1
    out.counts["plans"] = count


_PRIORITIES = ("low", "medium", "high", "blocker")


def _read_questions(root: Path, out: OriginalContents, now: datetime) -> None:
    data = _load_json_file(root, root / ".mcp" / "questions.json", out)
    count = 0
    for item in data if isinstance(data, list) else []:
        if not isinstance(item, dict) or not _text(item.get("id")) or not _text(item.get("question")):
            out.notes.append(".mcp/questions.json: skipped an entry without an id or question")
            continue
        answered = item.get("status") == "answered"
        out.add(
            "questions",
            {
                "id": _text(item.get("id")),
                "question": _text(item.get("question")),
                "context": _text(item.get("context")),
                "priority": item.get("priority") if item.get("priority") in _PRIORITIES else "medium",
                "status": "answered" if answered else "open",
                "answer": _text(item.get("answer")),
                "created_at": _when(item.get("created_at"), now),
                "answered_at": _when(item.get("answered_at")) if answered else None,
                "agent_id": None,
            },
        )
        count += 1
    out.counts["questions"] = count
