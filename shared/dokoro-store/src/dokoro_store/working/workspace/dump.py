"""The session dump: the workspace saved as ``daily/<slug>-session-<topic>.md`` and as a document.

Rendering (front matter, the workspace content, the session analytics), daily file names that
are free both on disk and in a team's shared database, and the document write, which goes
through the documents service (:class:`DumpDocuments`) like every other document, then indexes it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from sqlalchemy.exc import SQLAlchemyError

from dokoro_store.clock import format_duration, iso
from dokoro_store.db.engine import Database
from dokoro_store.errors import DokoroError, StoreUnavailableError
from dokoro_store.models import Doc
from dokoro_store.paths import StorePaths
from dokoro_store.walls import frontmatter

__all__ = ["DumpDocuments", "DumpWriter", "render_dump", "topic"]

log = logging.getLogger("dokoro.store")


class DumpDocuments(Protocol):
    """What the dump needs of the documents service (``store.docs``)."""

    def save(
        self,
        doc_id: str,
        content: str,
        *,
        title: str | None = None,
        filepath: str | None = None,
        doc_type: str | None = None,
        status: str | None = None,
    ) -> bool: ...

    def index_docs(self, doc_ids: Sequence[str] | None = None) -> object: ...


def topic(task: str, limit: int = 30) -> str:
    """The task as a file-name slug: lower-case words joined by dashes, cut to ``limit``."""
    text = re.sub(r"[^a-z0-9]+", "-", task.lower()).strip("-")
    return text[:limit].strip("-") or "session"


class DumpWriter:
    """Names, writes the document of, and indexes the daily files of one store folder."""

    def __init__(self, paths: StorePaths, db: Database, documents: DumpDocuments) -> None:
        self._paths = paths
        self._db = db
        self._documents = documents

    def unique_daily_path(self, stem: str) -> Path:
        """A daily file name free both here and in the database: on a team database another
        developer's dump of the same task in the same minute has the same name (and doc id)."""
        self._paths.inside(self._paths.daily_dir, what="daily folder")
        self._paths.daily_dir.mkdir(parents=True, exist_ok=True)
        self._paths.inside(self._paths.daily_dir, what="daily folder")
        candidate = self._paths.daily_dir / f"{stem}.md"
        counter = 2
        while candidate.is_symlink() or candidate.exists() or self._taken_in_database(candidate.stem):
            candidate = self._paths.daily_dir / f"{stem}-{counter}.md"
            counter += 1
        return candidate

    def _taken_in_database(self, doc_id: str) -> bool:
        # Best effort, like the dump's indexing: an unreachable database must not stop the
        # daily file from being written.
        try:
            with self._db.read() as session:
                return session.get(Doc, doc_id) is not None
        except SQLAlchemyError:
            return False

    def save_document(self, doc_id: str, relative: str, title: str, content: str, doc_type: str, status: str) -> bool:
        """Save the dump as a document and index it; False when the database could not take it.

        Best effort, as in the reference: the daily file is already written (and the lock maybe
        released), so a database failure here must not turn a done dump into an error.
        """
        try:
            self._documents.save(doc_id, content, title=title, filepath=relative, doc_type=doc_type, status=status)
        except (SQLAlchemyError, StoreUnavailableError):
            log.warning("dokoro: could not index the dump %s as a document", relative, exc_info=True)
            return False
        try:
            self._documents.index_docs([doc_id])
        except (SQLAlchemyError, DokoroError, OSError):
            log.warning("dokoro: could not add the dump %s to the search index", relative, exc_info=True)
        return True


def render_dump(
    now: datetime,
    task: str,
    agent_id: str,
    reason: str,
    status: str,
    doc_type: str,
    data: dict[str, Any],
    current_text: str,
    meta: dict[str, Any] | None,
    duration: int,
) -> str:
    """The daily file of a dump: front matter, the workspace as it was, and the session analytics."""
    breakdown: dict[str, int] = (meta or {}).get("activity_breakdown", {})
    scope = [kind for kind, count in breakdown.items() if int(count) > 0] or ["general"]
    front: dict[str, Any] = {
        "title": f"Session: {task}",
        "date": iso(now),
        "agent_id": agent_id,
        "dump_reason": reason,
    }
    if meta is not None:
        front["session_start"] = data.get("session_start")
        front["session_end"] = iso(now)
        front["duration_minutes"] = duration
        front["duration_hours"] = round(duration / 60, 1)
    front["status"] = status
    front["docType"] = doc_type
    front["tags"] = {
        "type": doc_type,
        "scope": scope,
        "status": status,
        "focus": topic(task),
        "duration": format_duration(duration),
    }
    lines = [
        frontmatter.render(front),
        f"# Session: {task}",
        "",
        f"**Date:** {now:%Y-%m-%d} ({now:%A})",
        f"**Time:** {now:%H:%M} UTC",
        f"**Agent:** {agent_id}",
        f"**Reason:** {reason}",
        "",
        "## Workspace Content at Time of Dump",
        "",
        frontmatter.split(current_text)[1].strip(),
        "",
    ]
    if meta is not None:
        lines.extend(_analytics_block(meta, duration))
    return "\n".join(lines) + "\n"


def _analytics_block(meta: dict[str, Any], duration: int) -> list[str]:
    timing = meta.get("timing", {})
    usage: dict[str, int] = meta.get("tool_usage", {})
    top = sorted(usage.items(), key=lambda item: (-int(item[1]), item[0]))[:5]
    lines = [
        "## 📊 Session Analytics",
        "",
        f"- **Duration:** {format_duration(duration)} (active {format_duration(int(timing.get('active_minutes', 0)))})",
        f"- **Pauses:** {len(timing.get('pauses', []))}",
        f"- **Tool calls:** {sum(int(v) for v in usage.values())}",
    ]
    if top:
        lines.append("- **Top tools:** " + ", ".join(f"{name} ({count})" for name, count in top))
    breakdown: dict[str, int] = meta.get("activity_breakdown", {})
    busy = [(kind, int(count)) for kind, count in breakdown.items() if int(count) > 0]
    if busy:
        lines.append("- **Activity:** " + ", ".join(f"{kind} {count} calls" for kind, count in busy))
    lines.append("")
    return lines
