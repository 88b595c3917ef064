"""What a markdown file says about itself, as a document row (reference §4.13).

Used by the markdown import (``dokoro migrate``) and by the reconcile of the workspace folders:
id from the file name, title, type, status, priority and tags from the front matter, the first
heading, the file name and the folders it sits in.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from dokoro_store.walls import frontmatter

__all__ = ["IGNORED_DIRS", "MarkdownDoc", "content_hash", "describe_markdown", "doc_id_for", "path_doc_id"]

IGNORED_DIRS = frozenset(
    {".mcp", ".obsidian", ".private", ".tags", ".git", "node_modules", ".dokoro", ".dokoro-backup"}
)

_TYPE_WORDS = {
    "issue": "issue", "bug": "issue", "task": "issue", "plan": "plan", "prd": "prd", "spec": "prd",
    "requirement": "prd", "research": "research", "analysis": "research", "investigation": "research",
    "decision": "decision", "adr": "decision", "note": "note", "meeting": "note", "retrospective": "note",
    "session": "session",
}  # fmt: skip
_FOLDER_TYPES = {
    "decisions": "decision", "decision": "decision", "research": "research", "insights": "note", "notes": "note",
    "retrospective": "note", "daily": "session", "plans": "plan", "planning": "plan", "features": "prd",
    "issues": "issue", "bugs": "issue", "adr": "decision",
}  # fmt: skip
_STATUS_WORDS = {
    "done": "done", "completed": "done", "complete": "done", "finished": "done", "active": "active",
    "in-progress": "active", "in_progress": "active", "wip": "active", "backlog": "backlog", "todo": "backlog",
    "planned": "backlog", "inbox": "inbox", "new": "inbox", "archived": "archived", "archive": "archived",
    "pending": "pending", "paused": "paused", "blocked": "blocked",
}  # fmt: skip
_PRIORITY_WORDS = {
    "urgent": "urgent", "critical": "urgent", "p0": "urgent", "high": "high", "important": "high", "p1": "high",
    "medium": "medium", "normal": "medium", "p2": "medium", "low": "low", "minor": "low", "p3": "low",
}  # fmt: skip
_H1 = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)
_DATE_PREFIX = re.compile(r"^\d{4}-\d{2}-\d{2}(-\d{2}h\d{2})?(-[a-z]+day)?-?")
_HASHTAG = re.compile(r"(?<![\w#&/])#([A-Za-z][\w-]{1,40})")
_NOT_ID = re.compile(r"[^a-z0-9-]")
_SKIP_FOLDERS = re.compile(r"^(daily|archive|\d{2}|\d{4}|\d{4}-w\d{2}|\d{4}-\d{2})$")


def content_hash(content: str) -> str:
    """sha256 of the text (the reference's import used MD5; one hash everywhere is simpler)."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def doc_id_for(relative: str) -> str:
    """The file name stem, lower-cased, anything but ``[a-z0-9-]`` turned into ``-``."""
    return _NOT_ID.sub("-", PurePosixPath(relative).stem.lower()) or "doc"


def path_doc_id(relative: str) -> str:
    """An id from the whole relative path, for a stem another file already uses."""
    path = PurePosixPath(relative)
    return _NOT_ID.sub("-", str(path.with_suffix("")).lower().replace("/", "--")) or "doc"


@dataclass(frozen=True)
class MarkdownDoc:
    id: str
    filepath: str
    title: str
    content: str
    content_hash: str
    doc_type: str
    status: str
    priority: str
    tags: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)


def _words(value: Any) -> list[str]:
    return [w for w in re.split(r"[^a-z0-9]+", str(value).lower()) if w]


def _first_mapped(candidates: list[Any], table: dict[str, str]) -> str | None:
    for candidate in candidates:
        if candidate is None:
            continue
        key = str(candidate).strip().lower()
        if key in table:
            return table[key]
    return None


def _tags(front: dict[str, Any], body: str, folders: list[str]) -> list[str]:
    tags: list[str] = []
    raw = front.get("tags")
    if isinstance(raw, str):
        tags += [t.strip() for t in raw.split(",")]
    elif isinstance(raw, list):
        tags += [str(t).strip() for t in raw]
    elif isinstance(raw, dict):
        for value in raw.values():
            tags += [str(v).strip() for v in value] if isinstance(value, list) else [str(value).strip()]
    in_fence = False
    for line in body.splitlines():
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        if in_fence or line.lstrip().startswith("#"):
            continue  # headings are not hashtags
        tags += _HASHTAG.findall(line)
    tags += [f for f in folders if not _SKIP_FOLDERS.match(f.lower())]
    seen: dict[str, None] = {}
    for tag in tags:
        if tag:
            seen.setdefault(tag.lower(), None)
    return list(seen)


def _minutes(value: Any) -> int | None:
    if value is None:
        return None
    text = str(value).strip().lower()
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(h|m|min|mins|minutes|hours?)?", text)
    if not match:
        return None
    number = float(match.group(1))
    return round(number * 60) if (match.group(2) or "").startswith("h") else round(number)


def describe_markdown(relative: str, content: str, doc_id: str | None = None) -> MarkdownDoc:
    """The document row of a markdown file at ``relative`` (POSIX, under the workspace) with ``content``."""
    front, body = frontmatter.parse(content)
    path = PurePosixPath(relative)
    folders = list(path.parent.parts)
    stem_words = _words(path.stem)
    title = front.get("title")
    if not title:
        h1 = _H1.search(body)
        title = h1.group(1) if h1 else None
    if not title:
        bare = _DATE_PREFIX.sub("", path.stem.lower()) or path.stem
        title = " ".join(w.capitalize() for w in re.split(r"[-_\s]+", bare) if w) or path.stem
    doc_type = (
        _first_mapped([front.get("docType"), front.get("type")], _TYPE_WORDS)
        or _first_mapped(stem_words, _TYPE_WORDS)
        or _first_mapped([f.lower() for f in reversed(folders)], _FOLDER_TYPES)
        or ("note" if relative == "current.md" else "issue")
    )
    status = (
        _first_mapped([front.get("status")], _STATUS_WORDS)
        or _first_mapped([f.lower() for f in reversed(folders)], _STATUS_WORDS)
        or ("active" if relative == "current.md" else "inbox")
    )
    priority = _first_mapped([front.get("priority")], _PRIORITY_WORDS) or _first_mapped(stem_words, _PRIORITY_WORDS)
    metadata: dict[str, Any] = {"source": "markdown"}
    tags = _tags(front, body, folders)
    if tags:
        metadata["tags"] = tags
    stage = front.get("prd_stage") or front.get("stage")
    if stage:
        metadata["prd_stage"] = str(stage)
    estimate = _minutes(front.get("time_est") or front.get("estimate") or front.get("time_estimated"))
    if estimate is not None:
        metadata["time_estimated_min"] = estimate
    for key in ("gh_issue", "gh_pr", "gh_repo"):
        if front.get(key) is not None:
            metadata[key] = front[key]
    return MarkdownDoc(
        id=doc_id or doc_id_for(relative),
        filepath=relative,
        title=str(title).strip()[:500],
        content=content,
        content_hash=content_hash(content),
        doc_type=doc_type,
        status=status,
        priority=priority or "medium",
        tags=tags,
        metadata=metadata,
    )
