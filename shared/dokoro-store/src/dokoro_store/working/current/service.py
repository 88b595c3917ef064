"""current.md as a document: regenerate it from daily files, edit one section, read the focus."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from dokoro_store.clock import Clock, iso
from dokoro_store.errors import InvalidArgumentError, NoWorkspaceError
from dokoro_store.paths import StorePaths
from dokoro_store.results.working import CurrentFocus, CurrentRegenerated, SectionUpdate
from dokoro_store.walls import frontmatter
from dokoro_store.walls.containment import scan
from dokoro_store.walls.files import atomic_write_text, file_lock, read_text_or_none
from dokoro_store.walls.secrets import redact
from dokoro_store.working.current.file import CURRENT_LOCK, CurrentFile

__all__ = ["CurrentService"]

_TODO = re.compile(r"^\s*[-*] \[ \] (.+)$", re.MULTILINE)
_DONE = re.compile(r"^\s*[-*] \[[xX]\] (.+)$", re.MULTILINE)
_FOCUS_SECTIONS = ("Current Focus", "In Progress", "Next Steps")


@dataclass(frozen=True)
class _Item:
    text: str
    file: str
    day: date


def _file_date(name: str, front: dict[str, Any]) -> date | None:
    raw = front.get("date")
    if isinstance(raw, datetime):
        return raw.date()
    if isinstance(raw, date):
        return raw
    for candidate in (str(raw)[:10] if raw else "", name[:10]):
        try:
            return date.fromisoformat(candidate)
        except ValueError:
            continue
    return None


def _tags_of(front: dict[str, Any]) -> list[str]:
    tags = front.get("tags")
    if isinstance(tags, list):
        return [str(t) for t in tags]
    if isinstance(tags, dict):
        return [f"{k}:{v}" for k, v in tags.items() if not isinstance(v, dict | list)]
    if tags:
        return [str(tags)]
    return []


def _relative_day(day: date, today: date) -> str:
    delta = (today - day).days
    if delta <= 0:
        return "today"
    if delta == 1:
        return "yesterday"
    return f"{delta} days ago"


def _section_span(body: str, section: str) -> tuple[int, int] | None:
    """Span of the body of the first ``## …section…`` heading (case-insensitive).

    A ``##`` section runs to the next ``#`` or ``##`` heading (its ``###`` subsections belong
    to it). The fallback, a ``#`` heading, runs to the next heading of any level, so matching
    the document title never swallows the sections under it.
    """
    heading = re.compile(rf"^##[^#\n]*{re.escape(section)}[^\n]*$", re.IGNORECASE | re.MULTILINE)
    match = heading.search(body)
    if match is None:
        heading = re.compile(rf"^#[^#\n]*{re.escape(section)}[^\n]*$", re.IGNORECASE | re.MULTILINE)
        match = heading.search(body)
        if match is None:
            return None
        end = re.compile(r"^#", re.MULTILINE).search(body, match.end())
    else:
        end = re.compile(r"^##?(?!#)", re.MULTILINE).search(body, match.end())
    return match.end(), end.start() if end else len(body)


class CurrentService:
    """current.md as a document: rebuilt from daily files, edited by section, read for its focus."""

    def __init__(self, paths: StorePaths, clock: Clock, current: CurrentFile) -> None:
        self._paths = paths
        self._clock = clock
        self._current = current

    def regenerate(
        self, include_days: int = 7, preserve_sections: list[str] | None = None, *, agent: str | None = None
    ) -> CurrentRegenerated:
        """Rebuild current.md from recent daily files; ``agent`` (who calls) may not overwrite a
        workspace another agent holds."""
        if include_days < 0:
            raise InvalidArgumentError("includeDays must be 0 or more")
        self._current.require_writable(agent, "regenerate its current.md")
        preserve = [s.strip().lstrip("#").strip() for s in preserve_sections or [] if s.strip()]
        now = self._clock.now()
        today = now.date()
        cutoff = today - timedelta(days=include_days)
        in_progress: list[_Item] = []
        completed: list[_Item] = []
        tags: dict[str, None] = {}
        files = sorted(scan(self._paths.root, self._paths.daily_dir))
        scanned = 0
        for path in files:
            text = read_text_or_none(path, within=self._paths.root) or ""
            daily_front, body = frontmatter.parse(text)
            day = _file_date(path.name, daily_front)
            if day is None or day < cutoff:
                continue
            scanned += 1
            rel = self._paths.relative(path)
            in_progress.extend(_Item(m.group(1).strip(), rel, day) for m in _TODO.finditer(body))
            completed.extend(_Item(m.group(1).strip(), rel, day) for m in _DONE.finditer(body))
            for tag in _tags_of(daily_front):
                tags.setdefault(tag, None)
        completed.sort(key=lambda item: item.day, reverse=True)

        with file_lock(self._paths.locks_dir, CURRENT_LOCK, within=self._paths.root):
            old = read_text_or_none(self._paths.current_md, within=self._paths.root) or ""
            old_front, old_body = frontmatter.parse(old)
            front: dict[str, Any] = {
                "title": "Current Workspace",
                "lastUpdated": iso(now),
                "autoGenerated": True,
                "activeTags": list(tags),
            }
            for key, value in old_front.items():
                plain = isinstance(value, str | int | float | bool | list | dict)
                front.setdefault(key, value if plain else str(value))
            parts = ["# Current Workspace", "", "## 🎯 Current Focus", ""]
            parts += [f"- [ ] {item.text}" for item in in_progress[:3]] or ["_Nothing in progress._"]
            parts += ["", "## 🚧 In Progress", ""]
            parts += [f"- [ ] {item.text} ({item.file})" for item in in_progress] or ["_Nothing in progress._"]
            parts += ["", "## ✅ Recently Completed", ""]
            parts += [f"- [x] {item.text} ({_relative_day(item.day, today)})" for item in completed[:10]] or [
                "_Nothing completed in this window._"
            ]
            parts += ["", "## 📅 Next Steps", ""]
            kept_next = None
            if any(p.lower() == "next steps" for p in preserve):
                span = _section_span(old_body, "Next Steps")
                kept_next = old_body[span[0] : span[1]].strip() if span else None
            parts.append(kept_next or "- [ ] _Add next steps here._")
            for name in preserve:
                if name.lower() == "next steps":
                    continue
                span = _section_span(old_body, name)
                if span is None:
                    continue
                heading_start = old_body.rfind("\n", 0, span[0] - 1) + 1
                parts += ["", old_body[heading_start : span[0]].strip(), "", old_body[span[0] : span[1]].strip()]
            parts += [
                "",
                "## 📊 Activity Summary",
                "",
                f"- Files scanned: {scanned} (last {include_days} days)",
                f"- In progress: {len(in_progress)}",
                f"- Completed: {len(completed)}",
                f"- Active tags: {', '.join(tags) if tags else 'none'}",
                "",
            ]
            atomic_write_text(
                self._paths.current_md, frontmatter.render(front) + "\n".join(parts), within=self._paths.root
            )
        return CurrentRegenerated(
            in_progress=len(in_progress),
            completed=len(completed),
            upcoming=0,  # the reference's field; nothing is scheduled ahead
            active_tags=list(tags),
            path="current.md",
            files_scanned=scanned,
        )

    def update_section(
        self, section: str, content: str, *, append: bool = False, agent: str | None = None
    ) -> SectionUpdate:
        """Replace or append to one section; ``agent`` (who calls) may not edit a workspace another
        agent holds."""
        content = redact(content).text
        name = section.strip().lstrip("#").strip()
        if not name:
            raise InvalidArgumentError("section must name a heading, e.g. 'Next Steps'")
        self._current.require_writable(agent, "edit its current.md")
        with file_lock(self._paths.locks_dir, CURRENT_LOCK, within=self._paths.root):
            text = read_text_or_none(self._paths.current_md, within=self._paths.root)
            if text is None:
                raise NoWorkspaceError(
                    "current.md does not exist. Claim a workspace (dokoro_workspace_claim) or run "
                    "dokoro_regenerate_current first."
                )
            span = _section_span(text, name)
            if span is None:
                updated = text.rstrip("\n") + f"\n\n## {name}\n\n{content.strip()}\n"
                action = "added"
            else:
                start, end = span
                old = text[start:end].strip()
                new_body = f"{old}\n{content.strip()}" if append and old else content.strip()
                updated = text[:start] + f"\n\n{new_body}\n\n" + text[end:].lstrip("\n")
                action = "appended" if append else "replaced"
            atomic_write_text(self._paths.current_md, updated, within=self._paths.root)
        return SectionUpdate(section=name, action=action)

    def text(self) -> str | None:
        """current.md as it is on disk; None when no workspace has been claimed yet."""
        return read_text_or_none(self._paths.current_md, within=self._paths.root)

    def focus(self) -> CurrentFocus:
        """current.md's lastUpdated and the bodies of Current Focus, In Progress and Next Steps (one
        read of the file: no database and no lock, the writers replace it atomically)."""
        text = read_text_or_none(self._paths.current_md, within=self._paths.root)
        if text is None:
            raise NoWorkspaceError("current.md does not exist. Claim a workspace with dokoro_workspace_claim first.")
        front, body = frontmatter.parse(text)
        sections: dict[str, str] = {}
        for name in _FOCUS_SECTIONS:
            span = _section_span(body, name)
            if span is not None and body[span[0] : span[1]].strip():
                sections[name] = body[span[0] : span[1]].strip()
        updated = front.get("lastUpdated") or front.get("last_active")
        if isinstance(updated, datetime):
            updated = iso(updated if updated.tzinfo else updated.replace(tzinfo=UTC))
        return CurrentFocus(last_updated=str(updated) if updated else None, sections=sections)
