"""``currentWeek.md``: dokoro's tracking section in a file that is otherwise the person's.

The section between the markers is written from the week's rows; everything outside it is left
exactly as the person wrote it. Each line of the section carries its item id in an HTML comment,
so a hand edit (a box ticked, a title reworded, a line deleted, a new ``- [ ]`` line) is read back
item by item (:func:`section_edits`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from dokoro_store.models import WeeklyItem
from dokoro_store.procedural.tracking.rules import PRIORITY_ICON

__all__ = [
    "END",
    "START",
    "LineEdit",
    "ParsedLine",
    "outside_text",
    "parse_outside",
    "parse_section",
    "render_section",
    "replace_section",
    "section_edits",
    "split_section",
]

START = (
    "<!-- dokoro:tracking:start (written from the database: tick boxes, reword titles, add `- [ ]` lines "
    "or delete lines; dokoro reads them back) -->"
)
END = "<!-- dokoro:tracking:end -->"
_START_RE = re.compile(r"^<!-- dokoro:tracking:start.*?-->[ \t]*\n?", re.MULTILINE)
_END_RE = re.compile(r"^<!-- dokoro:tracking:end -->[ \t]*\n?", re.MULTILINE)
_TYPE_ICON = {"issue": "⏳", "feature": "💡", "task": "📌"}
_HEADINGS = (("issue", "### 🐛 Active Issues"), ("feature", "### 🚀 Feature Pipeline"), ("task", "### 📌 Tasks"))
_CARRIED = "### ↪️ Carried Over"
_LINE = re.compile(r"^\s*[-*]\s+\[(?P<box>[ xX])\]\s*(?P<body>.*?)\s*$")
_ID = re.compile(r"<!--\s*wk:(?P<id>[^\s>]+)\s*-->")
_BOLD = re.compile(r"\*\*(?P<title>.+?)\*\*")
_REF = re.compile(r"\[(?P<ref>[^\]]+)\]\s*$")
_HEADED = re.compile(r"^###\s+\d+\.\s+\*\*(?P<title>.+?)\*\*", re.MULTILINE)
_STATUS = re.compile(r"\*\*Status\*\*:\s*(?P<status>.+)")


def _line(item: WeeklyItem, carried: bool = False) -> str:
    box = "x" if item.status == "done" else " "
    icon = "✅" if item.status == "done" else _TYPE_ICON.get(item.type, "📌")
    parts = [f"- [{box}] {icon} **{item.title}** {PRIORITY_ICON.get(item.priority, '')}".rstrip()]
    if item.effort:
        parts.append(f"(Est: {item.effort})")
    if carried:
        parts.append(f"(from {item.week})")
    if item.ref_id:
        parts.append(f"[{item.ref_id}]")
    parts.append(f"<!-- wk:{item.id} -->")
    return " ".join(parts)


def render_section(week: str, items: Sequence[WeeklyItem], carried: Sequence[WeeklyItem]) -> str:
    """The tracking section, markers included (deterministic)."""
    lines = [START, f"## 🐛 Issues & 🚀 Features This Week ({week})", ""]
    for kind, heading in _HEADINGS:
        picked = [i for i in items if i.type == kind and i.status != "dropped"]
        lines += [heading, *(_line(i) for i in picked)] if picked else [heading, "_None yet._"]
        lines.append("")
    if carried:
        lines += [_CARRIED, *(_line(i, carried=True) for i in carried), ""]
    lines.append(END)
    return "\n".join(lines) + "\n"


def split_section(text: str) -> tuple[str, str, str] | None:
    """(before, section with markers, after), or None when the markers are gone."""
    start = _START_RE.search(text)
    if start is None:
        return None
    end = _END_RE.search(text, start.end())
    if end is None:
        return None
    return text[: start.start()], text[start.start() : end.end()], text[end.end() :]


def replace_section(text: str | None, section: str, heading: str) -> str:
    """``text`` with its tracking section replaced (or appended; a new file gets ``heading``)."""
    if text is None or not text.strip():
        return f"{heading}\n\n{section}"
    parts = split_section(text)
    if parts is None:
        return text.rstrip("\n") + "\n\n" + section
    before, _, after = parts
    return before + section + after


def outside_text(text: str) -> str:
    parts = split_section(text)
    if parts is None:
        return text
    return parts[0] + parts[2]


@dataclass(frozen=True)
class ParsedLine:
    item_id: str | None
    done: bool
    title: str
    priority: str | None
    section: str  # issue | feature | task | carried


def parse_section(section: str) -> list[ParsedLine]:
    found: list[ParsedLine] = []
    current = "task"
    for raw in section.splitlines():
        if raw.startswith("###"):
            stripped = raw.strip()
            if stripped == _CARRIED:
                current = "carried"
            else:
                current = next((kind for kind, heading in _HEADINGS if stripped == heading), "task")
            continue
        match = _LINE.match(raw)
        if match is None:
            continue
        body = match.group("body")
        ident = _ID.search(body)
        body_wo_id = _ID.sub("", body).strip()
        bold = _BOLD.search(body_wo_id)
        if bold is not None:
            title = bold.group("title").strip()
        else:
            title = _REF.sub("", body_wo_id).strip()
            title = re.sub(r"^[^\w\[(*]+\s*", "", title)  # a leading icon
        priority = next((name for name, icon in PRIORITY_ICON.items() if icon in body_wo_id), None)
        if not title:
            continue
        found.append(
            ParsedLine(ident.group("id") if ident else None, match.group("box") in "xX", title, priority, current)
        )
    return found


@dataclass(frozen=True)
class LineEdit:
    """One change a person made in the section: done/open, title, priority, new, or removed."""

    item_id: str | None
    done: bool | None = None
    title: str | None = None
    priority: str | None = None
    new: ParsedLine | None = None
    removed: bool = False


def section_edits(written: str, now: str) -> list[LineEdit]:
    before = {line.item_id: line for line in parse_section(written) if line.item_id}
    after = parse_section(now)
    edits: list[LineEdit] = []
    seen: set[str] = set()
    for line in after:
        if line.item_id is None or line.item_id not in before:
            if line.item_id is None or line.item_id not in seen:
                edits.append(LineEdit(line.item_id, new=line))
            continue
        seen.add(line.item_id)
        old = before[line.item_id]
        edit = LineEdit(
            line.item_id,
            done=line.done if line.done != old.done else None,
            title=line.title if line.title != old.title else None,
            priority=line.priority if line.priority != old.priority and line.priority else None,
        )
        if edit.done is not None or edit.title is not None or edit.priority is not None:
            edits.append(edit)
    edits += [LineEdit(item_id, removed=True) for item_id in before if item_id not in seen]
    return edits


def parse_outside(text: str) -> tuple[str | None, int, int, list[str]]:
    """(first ``#`` title, checkboxes, checked, ``### N. **X**`` items with their status)."""
    title = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), None)
    boxes = [m for m in (_LINE.match(line) for line in text.splitlines()) if m]
    checked = sum(1 for m in boxes if m.group("box") in "xX")
    headed: list[str] = []
    for match in _HEADED.finditer(text):
        following = text.find("\n###", match.end())
        status = _STATUS.search(text, match.end(), following if following >= 0 else len(text))
        headed.append(f"{match.group('title')} — {status.group('status').strip()}" if status else match.group("title"))
    return title, len(boxes), checked, headed
