"""Issue and feature renderings: the markdown written from a row, and what a hand edit says.

A rendering is a pure function of the row and its history, so the same row always gives the same
bytes. Reading one back (:func:`parse_item`) gives the fields a person can edit — front matter and
the Details list (title, status, priority, category/complexity, estimate), the Description,
Solution and Notes sections — plus the generated sections as text. Comparing what was written
with what the file says now (:func:`hand_edits`) tells exactly which fields the person changed;
anything else they added (new sections, prose, edits of generated sections) is kept as notes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from dokoro_store.clock import format_duration, iso
from dokoro_store.models import TrackingEvent, TrackingItem
from dokoro_store.procedural.tracking.rules import PRIORITY_ICON, title_slug
from dokoro_store.walls import frontmatter

__all__ = ["EDITABLE", "ParsedItem", "hand_edits", "item_path", "parse_item", "render_item"]

ISSUE_ROOT = "tracking/issues"
FEATURE_ROOT = "tracking/features"
EDITABLE = ("title", "status", "priority", "category", "complexity", "estimate", "description", "solution", "notes")
_GENERATED = ("time tracking", "progress log")
_KNOWN = ("details", "description", "solution", "notes", *_GENERATED)
_NO_DESCRIPTION = "_No description._"
_NOT_RESOLVED = "_Not resolved yet._"
_ICON = {"issue": "🐛", "feature": "🚀"}
_DETAIL = re.compile(r"^\s*[-*]\s+\*\*(?P<key>[^*:]+):?\*\*:?\s*(?P<value>.*?)\s*$")
_PRIORITY_WORD = re.compile(r"(critical|high|medium|low)", re.IGNORECASE)


def root_of(kind: str) -> str:
    return ISSUE_ROOT if kind == "issue" else FEATURE_ROOT


def item_path(item: TrackingItem) -> str:
    """``tracking/<issues|features>/<status>/<id>-<first five title words>.md``."""
    words = title_slug(item.title)
    name = f"{item.id}-{words}.md" if words else f"{item.id}.md"
    return f"{root_of(item.kind)}/{item.status}/{name}"


def _when(moment: datetime | None) -> str:
    return iso(moment) if moment is not None else "—"


def _event_line(event: TrackingEvent) -> str:
    move = ""
    if event.to_status and event.from_status and event.to_status != event.from_status:
        move = f" ({event.from_status} → {event.to_status})"
    elif event.to_status and not event.from_status:
        move = f" ({event.to_status})"
    who = f" by {event.agent_id}" if event.agent_id else ""
    note = f": {event.note}" if event.note else ""
    return f"- {iso(event.at)} — {event.action}{move}{who}{note}"


def render_item(item: TrackingItem, events: Sequence[TrackingEvent]) -> str:
    """The markdown rendering of an issue or feature (deterministic)."""
    issue = item.kind == "issue"
    tags: dict[str, object] = {"type": item.kind}
    if issue:
        tags["category"] = item.category or "bug"
    else:
        tags["complexity"] = item.complexity or "moderate"
    tags.update(priority=item.priority, status=item.status, effort=item.estimate)
    front: dict[str, object] = {"title": item.title, "date": f"{item.created_at:%Y-%m-%d}", "tags": tags}
    front["issue_id" if issue else "feature_id"] = item.id
    front["created_date"] = iso(item.created_at)
    front["updated_date"] = iso(item.updated_at)
    if item.session_id:
        front["session_id"] = item.session_id
    front["version"] = item.version

    details = [
        f"- **ID:** `{item.id}`",
        f"- **Status:** {item.status}",
        f"- **Priority:** {PRIORITY_ICON.get(item.priority, '')} {item.priority}".replace("  ", " "),
        f"- **Category:** {item.category or 'bug'}" if issue else f"- **Complexity:** {item.complexity or 'moderate'}",
        f"- **Estimate:** {item.estimate}",
    ]
    if item.plan_path:
        details.append(f"- **Plan:** {item.plan_path}")
    lines = [f"# {_ICON[item.kind]} {item.title}", "", "## Details", "", *details, ""]
    lines += ["## Description", "", item.description or _NO_DESCRIPTION, ""]
    if issue:
        lines += ["## Solution", "", item.solution or _NOT_RESOLVED, ""]
    done = "Resolved" if issue else "Completed"
    timing = [
        f"- **Created:** {_when(item.created_at)}",
        f"- **Started:** {_when(item.started_at)}",
        f"- **{done}:** {_when(item.completed_at)}",
    ]
    if item.completed_at is not None:
        minutes = int((item.completed_at - item.created_at).total_seconds() // 60)
        timing.append(f"- **Time to {'resolve' if issue else 'complete'}:** {format_duration(minutes)}")
    lines += ["## Time Tracking", "", *timing, ""]
    lines += ["## Progress Log", "", *(_event_line(e) for e in events), ""]
    if item.notes:
        lines += ["## Notes", "", item.notes.strip(), ""]
    return frontmatter.render(front) + "\n".join(lines)


@dataclass
class ParsedItem:
    """What a rendering (or a hand-edited one) says; None = not stated."""

    fields: dict[str, str | None] = field(default_factory=dict)
    front: dict[str, str | None] = field(default_factory=dict)
    details: dict[str, str | None] = field(default_factory=dict)
    generated: dict[str, str] = field(default_factory=dict)
    item_id: str | None = None
    version: int | None = None
    front_ok: bool = True


def _sections(body: str) -> tuple[str | None, str, list[tuple[str, str]]]:
    """(H1 title, text between the title and the first ``##``, [(heading, text)])."""
    title: str | None = None
    preamble: list[str] = []
    sections: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        if line.startswith("## "):
            sections.append((line[3:].strip(), []))
        elif sections:
            sections[-1][1].append(line)
        elif title is None and line.startswith("# "):
            title = line[2:].strip()
        else:
            preamble.append(line)
    return title, "\n".join(preamble).strip(), [(h, "\n".join(t).strip()) for h, t in sections]


def _strip_icon(title: str) -> str:
    for icon in _ICON.values():
        if title.startswith(icon):
            return title[len(icon) :].strip()
    return title


def _front_str(value: object) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def parse_item(text: str) -> ParsedItem:
    """Read a rendering back (leniently: a person may have changed anything)."""
    raw, _ = frontmatter.split(text)
    data, body = frontmatter.parse(text)
    parsed = ParsedItem(front_ok=raw is None or bool(data))
    tags = data.get("tags") if isinstance(data.get("tags"), dict) else {}
    assert isinstance(tags, dict)
    parsed.item_id = _front_str(data.get("issue_id") or data.get("feature_id"))
    version = data.get("version")
    parsed.version = version if isinstance(version, int) else None
    parsed.front = {
        "title": _front_str(data.get("title")),
        "status": _front_str(tags.get("status")),
        "priority": _front_str(tags.get("priority")),
        "category": _front_str(tags.get("category")),
        "complexity": _front_str(tags.get("complexity")),
        "estimate": _front_str(tags.get("effort")),
    }
    heading, preamble, sections = _sections(body)
    notes: list[str] = [preamble] if preamble else []
    fields: dict[str, str | None] = {"title": _strip_icon(heading) if heading else None}
    for name, content in sections:
        key = name.lower()
        if key == "details":
            for line in content.splitlines():
                match = _DETAIL.match(line)
                if match:
                    parsed.details[match.group("key").strip().lower()] = match.group("value").strip() or None
        elif key == "description":
            fields["description"] = None if content in ("", _NO_DESCRIPTION) else content
        elif key == "solution":
            fields["solution"] = None if content in ("", _NOT_RESOLVED) else content
        elif key == "notes":
            if content:
                notes.append(content)
        elif key in _GENERATED:
            parsed.generated[key] = content
        else:
            notes.append(f"## {name}\n\n{content}".strip())
    fields["notes"] = "\n\n".join(notes).strip() or None
    priority = parsed.details.get("priority")
    if priority:
        word = _PRIORITY_WORD.search(priority)
        parsed.details["priority"] = word.group(1).lower() if word else priority
    parsed.fields = fields
    return parsed


def hand_edits(written: str, now: str) -> tuple[dict[str, str | None], list[str]]:
    """What a person changed between the rendering dokoro wrote and the file as it is now.

    Returns the changed fields (front matter first, then the Details list, then the sections) and
    the generated sections they edited (their text is kept in the notes, never dropped).
    """
    before, after = parse_item(written), parse_item(now)
    changes: dict[str, str | None] = {}
    for name in ("title", "status", "priority", "category", "complexity", "estimate"):
        if after.front.get(name) != before.front.get(name) and after.front.get(name) is not None:
            changes[name] = after.front[name]
            continue
        if after.details.get(name) != before.details.get(name) and after.details.get(name) is not None:
            changes[name] = after.details[name]
    for name in ("title", "description", "solution", "notes"):
        if name in changes:
            continue
        if after.fields.get(name) != before.fields.get(name):
            if name == "title" and after.fields.get(name) is None:
                continue  # a deleted heading is not a new title
            changes[name] = after.fields.get(name)
    edited: list[str] = []
    for name in _GENERATED:
        if after.generated.get(name) is not None and after.generated.get(name) != before.generated.get(name):
            edited.append(f"### {name.title()} (edited by hand)\n\n{after.generated[name]}")
    if edited:
        base = changes.get("notes", after.fields.get("notes"))
        changes["notes"] = "\n\n".join(part for part in [base, *edited] if part)
    return changes, edited


def plan_slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:50].strip("-") or "feature"
