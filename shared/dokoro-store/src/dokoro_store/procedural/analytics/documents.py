"""The store's markdown documents as analytics read them: what was written when, and what they
still mark as pending (reference §2.17: the original read the markdown an agent wrote).

The documents are the rows of the workspace's markdown (``daily/``, ``decisions/``,
``insights/``, ``research/``, ``features/``, ``planning/``, ``retrospective/``, ``current.md``:
session dumps, notes written by hand or by the planning helpers), brought in step with the files
by the workspace reconcile before the tools read them (:meth:`AnalyticsService.pending` and the
others). ``archive/`` is left out: what the sweep moved there is done with.

- :func:`written`: the documents written or changed in a period, from their rows' times (when the
  store first saw the text, and when it last saw it change), never from file modification times;
  two dailies written in the same minute are two documents;
- :func:`pending_marks`: documents whose text still says *todo*, *in progress* or *pending*, or
  carries 🚧 or 📋, with the lines that say so.

Both are bounded: the folders are ranges of the unique index on ``filepath`` (never the memories'
or indexed content's documents), the period a range of ``updated_at``, and at most :data:`LIMIT`
documents are read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import and_, or_
from sqlalchemy.sql.elements import ColumnElement
from sqlmodel import col, select

from dokoro_store.db.engine import Database
from dokoro_store.models import Doc
from dokoro_store.procedural.analytics.activity import Activity

__all__ = ["LIMIT", "MARKDOWN_DIRS", "PendingDoc", "pending_marks", "written"]

MARKDOWN_DIRS = ("daily", "decisions", "insights", "research", "features", "planning", "retrospective")
MARKDOWN_FILES = ("current.md",)
# Documents one answer reads at most (the newest first).
LIMIT = 500
# Lines quoted per pending document at most.
_LINES = 3
# A marker, as the original looked for it: the words as words ("todo" in "mastodon" is none).
_MARKER = re.compile(r"\b(todo|to-do|in progress|pending)\b|🚧|📋", re.IGNORECASE)
_LIKE = ("%todo%", "%to-do%", "%in progress%", "%pending%", "%🚧%", "%📋%")
_DONE = re.compile(r"✅|\[x\]", re.IGNORECASE)


def _markdown(dirs: tuple[str, ...] = MARKDOWN_DIRS) -> ColumnElement[bool]:
    """The workspace's markdown documents: ``filepath`` ranges (``'daily/' <= filepath < 'daily0'``:
    '0' follows '/'), which the unique index on ``filepath`` answers."""
    path = col(Doc.filepath)
    return or_(*(and_(path >= f"{d}/", path < f"{d}0") for d in dirs), path.in_(MARKDOWN_FILES))


def written(db: Database, start: datetime | None, end: datetime) -> list[Activity]:
    """The markdown documents written (first seen) or changed in [start, end), oldest first:
    ``document`` activities, ``written`` or ``updated``, referring to their file."""
    clauses = [_markdown(), col(Doc.updated_at) < end]
    if start is not None:
        clauses.append(col(Doc.updated_at) >= start)
    with db.read() as session:
        rows = session.exec(
            select(Doc.filepath, Doc.title, Doc.created_at, Doc.updated_at)
            .where(*clauses)
            .order_by(col(Doc.updated_at).desc(), col(Doc.id))
            .limit(LIMIT)
        ).all()
    found: list[Activity] = []
    for filepath, title, created, updated in rows:
        new = start is None or created >= start
        found.append(
            Activity(created if new else updated, "document", "written" if new else "updated", title, filepath)
        )
    return found


@dataclass(frozen=True)
class PendingDoc:
    """A markdown document that still marks something pending, and the lines that do."""

    filepath: str
    title: str
    updated_at: datetime
    lines: list[str]
    open_marks: int


def pending_marks(db: Database, before: datetime) -> list[PendingDoc]:
    """Markdown documents last changed before ``before`` whose text marks something pending
    (newest first, at most :data:`LIMIT`); a line also marked done (✅, ``[x]``) is not pending."""
    text = col(Doc.content)
    with db.read() as session:
        rows = session.exec(
            select(Doc.filepath, Doc.title, Doc.updated_at, Doc.content)
            .where(
                _markdown(tuple(d for d in MARKDOWN_DIRS if d != "retrospective")),
                col(Doc.updated_at) <= before,
                or_(*(text.ilike(pattern) for pattern in _LIKE)),
            )
            .order_by(col(Doc.updated_at).desc(), col(Doc.id))
            .limit(LIMIT)
        ).all()
    found: list[PendingDoc] = []
    for filepath, title, updated, content in rows:
        marked = [
            " ".join(line.split())
            for line in (content or "").splitlines()
            if _MARKER.search(line) and not _DONE.search(line)
        ]
        if marked:
            quoted = [line if len(line) <= 160 else line[:159] + "…" for line in marked[:_LINES]]
            found.append(PendingDoc(filepath, title, updated, quoted, len(marked)))
    return found
