"""Reading a store the original TypeScript dokoro wrote (reference §3.1, §3.3), as rows of ours.

The original's SQLite file is read through :mod:`sqlite3`, read-only; its ``.mcp/plans/*.json``
and ``.mcp/questions.json`` are files a person can edit, so they are read behind the store's walls
(inside the folder, no symlink, bounded size) and every value is checked for its type: a bad file
or field is reported and skipped, never a crash and never a guess.

:func:`read_original` returns, per table of this dokoro, the rows the original's history becomes,
and how many things of each kind the original held, so the conversion can verify its counts.
"""

from __future__ import annotations

import logging
import sqlite3
from datetime import datetime
from pathlib import Path

from dokoro_store.errors import StoreUnavailableError
from dokoro_store.moving.original.files import MAX_FILE_BYTES, read_plans, read_questions
from dokoro_store.moving.original.values import OriginalContents, _connect, _object, _rows, _strings, _when
from dokoro_store.semantic.documents.markdown import content_hash

__all__ = ["MAX_FILE_BYTES", "OriginalContents", "is_original_database", "may_be_original_database", "read_original"]

log = logging.getLogger("dokoro.store")


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


def read_original(database: Path, root: Path, *, now: datetime, shown: Path | None = None) -> OriginalContents:
    """Everything the original store at ``root`` holds: its database ``database`` (read-only; a
    backup copy) and its ``.mcp`` files. ``now`` stands in for a time the original left empty.

    A database whose tables are not the ones the original wrote (a column missing, a table that
    cannot be read) raises :class:`StoreUnavailableError` in one line naming the part and what to
    do, ``shown`` naming the database (default ``database``); nothing is half read."""
    contents = OriginalContents()
    readers = (
        ("sessions and summaries", _read_episodic),
        ("tool feedback", _read_feedback),
        ("coordination (notes, blocks, handoffs, presence, claims)", _read_coordination),
        ("documents", _read_docs),
        ("entity graph", _read_graph),
    )
    with _connect(database) as connection:
        try:
            tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            version = _schema_version(connection)
        except sqlite3.DatabaseError as exc:
            raise _unreadable(shown or database, "its list of tables", exc) from None
        for part, reader in readers:
            try:
                reader(connection, tables, contents, now)
            except (IndexError, KeyError, sqlite3.DatabaseError) as exc:
                raise _unreadable(shown or database, f"its {part}", exc, version) from None
    read_plans(root, contents, now)
    read_questions(root, contents, now)
    return contents


def _schema_version(connection: sqlite3.Connection) -> str:
    try:
        row = connection.execute("SELECT MAX(version) FROM schema_version").fetchone()
    except sqlite3.DatabaseError:
        return "unknown"
    return str(row[0]) if row and row[0] is not None else "unknown"


def _unreadable(database: Path, part: str, exc: BaseException, version: str = "unknown") -> StoreUnavailableError:
    why = "a column the original writes is missing" if isinstance(exc, IndexError | KeyError) else str(exc)
    return StoreUnavailableError(
        f"the original dokoro's database {database} does not have the schema the original wrote "
        f"(schema_version {version}; {part}: {why}): nothing was converted and it was left as it was. "
        "Open it with the original dokoro to repair it, or move it aside to start a new store"
    )


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
