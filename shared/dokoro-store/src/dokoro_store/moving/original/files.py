"""The original's ``.mcp`` files: its plans (``.mcp/plans/*.json``) and questions (``.mcp/questions.json``).

Files a person can edit, so read behind the store's walls (inside the folder, no symlink, bounded
size) and every value checked for its type: a bad file or entry is noted and skipped, never a crash
and never a guess. ``questions.json`` is read entry by entry, each bounded: a padded or pasted entry
is skipped and the real questions around it are kept.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from dokoro_store.moving.original.values import OriginalContents, _when
from dokoro_store.walls.containment import plain_file

__all__ = ["MAX_ENTRY_CHARS", "MAX_FILE_BYTES", "MAX_LIST_BYTES", "read_plans", "read_questions"]

# A plan file larger than this is not a file the original wrote: refused, not read.
MAX_FILE_BYTES = 20 * 1024 * 1024
# ``questions.json`` is read entry by entry: a file up to this size, an entry up to this many characters.
MAX_LIST_BYTES = 256 * 1024 * 1024
MAX_ENTRY_CHARS = 1024 * 1024


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


def read_plans(root: Path, out: OriginalContents, now: datetime) -> None:
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


def _entries(root: Path, path: Path, out: OriginalContents) -> Iterator[Any]:
    """The entries of a JSON list file of the original's folder, one at a time and each bounded:
    an entry larger than :data:`MAX_ENTRY_CHARS` (padding, a pasted log) is skipped with a note and
    the real entries around it are kept; a file past :data:`MAX_LIST_BYTES` is not read."""
    name = path.relative_to(root)
    if not path.exists() and not path.is_symlink():
        return
    if not plain_file(root, path):
        out.notes.append(f"{name}: skipped (a symlink or not a regular file of the store)")
        return
    if path.stat().st_size > MAX_LIST_BYTES:
        out.notes.append(f"{name}: skipped (larger than {MAX_LIST_BYTES // 2**20} MB)")
        return
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        out.notes.append(f"{name}: skipped (not UTF-8 text: {exc.reason})")
        return
    decoder = json.JSONDecoder()
    at = _blank(text, 0)
    if not text.startswith("[", at):
        out.notes.append(f"{name}: skipped (not a JSON list)")
        return
    at = _blank(text, at + 1)
    number = 0
    while at < len(text) and text[at] != "]":
        number += 1
        try:
            entry, end = decoder.raw_decode(text, at)
        except (ValueError, RecursionError):
            out.notes.append(f"{name}: entry {number} and after skipped (not valid JSON)")
            return
        if end - at > MAX_ENTRY_CHARS:
            out.notes.append(f"{name}: entry {number} skipped (larger than {MAX_ENTRY_CHARS // 2**20} MB)")
        else:
            yield entry
        at = _blank(text, end)
        if text.startswith(",", at):
            at = _blank(text, at + 1)


def _blank(text: str, at: int) -> int:
    """The first position at or after ``at`` that is not JSON whitespace."""
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


def read_questions(root: Path, out: OriginalContents, now: datetime) -> None:
    count = 0
    for item in _entries(root, root / ".mcp" / "questions.json", out):
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
