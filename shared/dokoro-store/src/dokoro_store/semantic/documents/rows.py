"""The ``docs`` rows as the document service writes them: one through the ORM, many in bulk, and
the one-statement row of ``index_content``.

Content is stored redacted (secrets never reach the index, or a team's shared database) with its
content hash; a new document without a file behind it gets ``index://<doc_id>`` as its path.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy.sql.dml import Insert
from sqlmodel import Session

from dokoro_store.db.engine import Database
from dokoro_store.models import Doc
from dokoro_store.models.index import docs_table
from dokoro_store.semantic.documents.markdown import content_hash
from dokoro_store.semantic.documents.records import CONTENT_PREFIX, NewDocument, validate_doc_id
from dokoro_store.walls.secrets import redact

__all__ = ["bulk_rows", "bulk_upsert", "content_row", "content_upsert", "save_row"]


def save_row(
    session: Session,
    now: datetime,
    doc_id: str,
    content: str,
    *,
    title: str | None,
    filepath: str | None,
    doc_type: str | None,
    status: str | None,
    priority: str | None,
    metadata: dict[str, Any] | None,
    thread: str | None,
    thread_pos: int | None,
) -> bool:
    """Create or update one document row in the caller's write transaction; True when it was created.
    Fields left None keep their stored value (``metadata`` is merged into the stored one)."""
    doc_id = validate_doc_id(doc_id)
    content = redact(content).text  # secrets never reach the index (or a team's shared database)
    row = session.get(Doc, doc_id, with_for_update=True)
    created = row is None
    if row is None:
        row = Doc(
            id=doc_id,
            filepath=filepath or f"{CONTENT_PREFIX}{doc_id}",
            title=title or "Untitled",
            created_at=now,
            updated_at=now,
        )
    elif filepath:
        row.filepath = filepath
    row.content = content
    row.content_hash = content_hash(content)
    row.updated_at = now
    if title:
        row.title = title
    if doc_type:
        row.doc_type = doc_type
    if status:
        row.status = status
    if priority:
        row.priority = priority
    if metadata is not None:
        row.metadata_json = {**(row.metadata_json or {}), **metadata}
    if thread is not None:
        row.thread = thread
        row.thread_pos = thread_pos
    session.add(row)
    return created


def bulk_rows(docs: Sequence[NewDocument], now: datetime) -> list[dict[str, Any]]:
    """The rows of a bulk save (:func:`bulk_upsert`), content redacted."""
    contents = [redact(doc.content).text for doc in docs]
    return [
        {
            "id": validate_doc_id(doc.id),
            "filepath": doc.filepath or f"{CONTENT_PREFIX}{doc.id.strip()}",
            "title": doc.title or "Untitled",
            "content": content,
            "content_hash": content_hash(content),
            "doc_type": doc.doc_type,
            "status": doc.status,
            "priority": "medium",
            "metadata_json": doc.metadata,
            "thread": doc.thread,
            "thread_pos": doc.thread_pos,
            "created_at": doc.created_at or now,
            "updated_at": now,
        }
        for doc, content in zip(docs, contents, strict=True)
    ]


def bulk_upsert(db: Database) -> Insert:
    """A bulk save: existing documents get the new title, content and thread; their path, type and
    status stay."""
    return db.ops.upsert_each(
        docs_table, ["id"], ["title", "content", "content_hash", "updated_at", "thread", "thread_pos"]
    )


def content_row(
    doc_id: str, title: str, text: str, digest: str | None, now: datetime, at: datetime | None
) -> dict[str, Any]:
    """``index_content``'s row (``text`` already redacted, ``digest`` its hash); ``at``: when it was
    written, its creation time."""
    return {
        "id": doc_id,
        "filepath": f"{CONTENT_PREFIX}{doc_id}",  # a new document's; an existing one keeps its own
        "title": title,
        "content": text,
        "content_hash": digest,
        "created_at": at or now,
        "updated_at": now,
    }


def content_upsert(db: Database, *, thread: bool, at: bool) -> Insert:
    """The row as ``save`` writes it (title, text, hash, time; path, type and status kept), in one
    statement rather than through the ORM; its thread and place when it has one (``thread``), and
    its creation time when given (``at``)."""
    columns = ["title", "content", "content_hash", "updated_at"]
    if thread:
        columns += ["thread", "thread_pos"] + (["created_at"] if at else [])
    return db.ops.upsert_each(docs_table, ["id"], columns)
