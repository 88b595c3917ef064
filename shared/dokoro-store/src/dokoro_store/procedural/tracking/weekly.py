"""The week's items: rows per ISO week, rendered into ``currentWeek.md`` (reference §2.16, weekly).

The week is always the ISO week with its ISO week-year (``2026-W01`` may start in December), the
one naming rule of the whole store (§7.24). Adding a title the week already lists returns that
item rather than a duplicate, so ``dokoro_weekly_sync`` can run again and again. Items of earlier
weeks that are still open are carried over into the current week's section.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from sqlalchemy import func
from sqlalchemy.exc import IntegrityError
from sqlmodel import col, select

from dokoro_store.clock import Clock, iso_week_dir
from dokoro_store.db.engine import Database
from dokoro_store.db.ids import take_id
from dokoro_store.models import WeeklyItem
from dokoro_store.paths import StorePaths
from dokoro_store.procedural.tracking.renderings import Pass, RenderKeeper
from dokoro_store.procedural.tracking.rules import PRIORITIES, clean_text, clean_texts, title_key, week_bounds
from dokoro_store.procedural.tracking.week_file import (
    outside_text,
    render_section,
    replace_section,
    section_edits,
    split_section,
)
from dokoro_store.results.tracking import WeekCandidate, WeeklyItemView
from dokoro_store.walls.files import read_text_or_none

__all__ = ["WEEK_FILE", "Added", "WeeklyService", "classify", "weekly_view"]

WEEK_FILE = "currentWeek.md"
_KEY = "week"
_LOCK = "tracking_week"
_SYNC_SECTIONS = re.compile(r"^##[^#\n]*(progress|active task)[^\n]*$", re.IGNORECASE | re.MULTILINE)
_UNCHECKED = re.compile(r"^\s*[-*]\s+\[ \]\s+(?P<text>.+?)\s*$", re.MULTILINE)
_ISSUE_WORDS = re.compile(r"\b(bug|fix|fixes|fixed|error|errors|crash|broken|regression|fail\w*)\b", re.IGNORECASE)
_FEATURE_WORDS = re.compile(r"\b(feature|implement\w*|add|adds|build|support|introduce)\b", re.IGNORECASE)
_PRIORITY_WORDS = (
    ("critical", re.compile(r"\b(critical|urgent|blocker|blocking|asap|p0)\b", re.IGNORECASE)),
    ("high", re.compile(r"\b(important|high|p1|soon)\b", re.IGNORECASE)),
    ("low", re.compile(r"\b(minor|low|later|nice[- ]to[- ]have|someday|p3)\b", re.IGNORECASE)),
)


def classify(text: str) -> tuple[str, str]:
    """(type, priority) of a line by its words: bug/fix/error → issue; feature/implement/add → feature."""
    kind = "issue" if _ISSUE_WORDS.search(text) else "feature" if _FEATURE_WORDS.search(text) else "task"
    priority = next((name for name, words in _PRIORITY_WORDS if words.search(text)), "medium")
    return kind, priority


def weekly_view(row: WeeklyItem) -> WeeklyItemView:
    return WeeklyItemView(
        id=row.id,
        week=row.week,
        position=row.position,
        type=row.type,
        title=row.title,
        priority=row.priority,
        effort=row.effort,
        ref_id=row.ref_id,
        status=row.status,
        source=row.source,
        agent_id=row.agent_id,
        created_at=row.created_at,
        updated_at=row.updated_at,
        done_at=row.done_at,
    )


@dataclass(frozen=True)
class Added:
    item: WeeklyItem
    created: bool
    redacted: tuple[str, ...] = ()


class WeeklyService:
    def __init__(self, paths: StorePaths, db: Database, clock: Clock, keeper: RenderKeeper) -> None:
        self._paths = paths
        self._db = db
        self._clock = clock
        self._keeper = keeper

    def this_week(self) -> str:
        return iso_week_dir(self._clock.now().date())

    # ------------------------------------------------------------------ rows
    def add(
        self,
        kind: str,
        title: str,
        priority: str = "medium",
        effort: str | None = None,
        ref_id: str | None = None,
        *,
        agent_id: str | None = None,
        source: str = "tool",
        week: str | None = None,
    ) -> Added:
        """Put an item on the week's list; a title already listed returns that item (revived if dropped)."""
        clean_title = clean_text(title, "title", required=True, limit=300)
        if priority not in PRIORITIES:
            priority = "medium"
        (safe_title, safe_effort, safe_ref), kinds = clean_texts(
            clean_title, clean_text(effort, "effort", limit=40), clean_text(ref_id, "id", limit=200)
        )
        assert safe_title is not None
        week = week or self.this_week()
        key = title_key(safe_title)
        now = self._clock.now()
        with self._db.write() as session:
            self._db.ops.lock_keys(session, _LOCK, [week])
            existing = session.exec(
                select(WeeklyItem).where(col(WeeklyItem.week) == week, col(WeeklyItem.title_key) == key)
            ).first()
            if existing is not None:
                if existing.status == "dropped":
                    existing.status, existing.updated_at = "open", now
                    existing.version += 1
                    session.add(existing)
                return Added(existing, False, kinds)
            last = session.exec(select(func.max(WeeklyItem.position)).where(col(WeeklyItem.week) == week)).one()
            new = take_id(session, self._db.ops, col(WeeklyItem.id), week, first=int(last or 0) + 1)
            row = WeeklyItem(
                id=new.id,
                week=week,
                position=new.number,
                type=kind,
                title=safe_title,
                title_key=key,
                priority=priority,
                effort=safe_effort,
                ref_id=safe_ref,
                source=source,
                agent_id=agent_id,
                created_at=now,
                updated_at=now,
            )
            session.add(row)
        return Added(row, True, kinds)

    def items(self, week: str) -> list[WeeklyItem]:
        with self._db.read() as session:
            return list(
                session.exec(select(WeeklyItem).where(col(WeeklyItem.week) == week).order_by(col(WeeklyItem.position)))
            )

    def carried(self, week: str) -> list[WeeklyItem]:
        """Open items of weeks before ``week``."""
        with self._db.read() as session:
            return list(
                session.exec(
                    select(WeeklyItem)
                    .where(col(WeeklyItem.week) < week, col(WeeklyItem.status) == "open")
                    .order_by(col(WeeklyItem.week), col(WeeklyItem.position))
                )
            )

    def get(self, item_id: str) -> WeeklyItem | None:
        with self._db.read() as session:
            return session.get(WeeklyItem, item_id)

    def all(self) -> list[WeeklyItem]:
        with self._db.read() as session:
            return list(session.exec(select(WeeklyItem).order_by(col(WeeklyItem.week), col(WeeklyItem.position))))

    def _update(self, item_id: str, **values: object) -> WeeklyItem | None:
        now = self._clock.now()
        with self._db.write() as session:
            row = session.get(WeeklyItem, item_id, with_for_update=True)
            if row is None:
                return None
            changed = False
            for name, value in values.items():
                if getattr(row, name) != value:
                    setattr(row, name, value)
                    changed = True
            if changed:
                if "status" in values:
                    row.done_at = now if row.status == "done" else None
                if "title" in values:
                    row.title_key = title_key(row.title)
                row.updated_at = now
                row.version += 1
                session.add(row)
        return row

    # ------------------------------------------------------------------ currentWeek.md
    def reconcile(self, current: Pass, agent_id: str | None) -> None:
        """Read a hand edit of the tracking section of currentWeek.md back into the rows."""
        rel = next((r for r, e in current.cache.items() if e.key == _KEY), None)
        if rel is None:
            return
        text = self._keeper.changed_text(current, rel)
        if text is None:
            return
        if text == "":
            current.cache[rel].version = -3
            return
        written = split_section(current.cache[rel].text)
        edited = split_section(text)
        if edited is None:
            current.note(rel, "refused", "the tracking section was removed by hand; it is written again from the rows")
            self._keeper.record(current, rel, _KEY, -1, text)
            return
        base = written[1] if written is not None else ""
        applied: list[str] = []
        for edit in section_edits(base, edited[1]):
            if edit.new is not None:
                line = edit.new
                kind = line.section if line.section in ("issue", "feature") else classify(line.title)[0]
                added = self.add(kind, line.title, line.priority or "medium", agent_id=agent_id, source="hand")
                if line.done:
                    self._update(added.item.id, status="done")
                applied.append(f"added “{line.title}”")
                continue
            assert edit.item_id is not None
            if edit.removed:
                self._update(edit.item_id, status="dropped")
                applied.append(f"dropped {edit.item_id}")
                continue
            values: dict[str, object] = {}
            if edit.done is not None:
                values["status"] = "done" if edit.done else "open"
            if edit.title is not None:
                (values["title"],), _ = clean_texts(edit.title)
            if edit.priority is not None:
                values["priority"] = edit.priority
            try:
                updated = self._update(edit.item_id, **values) if values else None
            except IntegrityError:
                current.note(rel, "refused", f"{edit.item_id}: another item of its week already has that title")
                continue
            if updated is not None:
                applied.append(f"{edit.item_id}: {', '.join(sorted(values))}")
        if applied:
            current.note(rel, "applied", "read back from your edit: " + "; ".join(applied))
        self._keeper.record(current, rel, _KEY, -1, text)

    def render(self, current: Pass) -> bool:
        """Write the tracking section of currentWeek.md when it differs from the rows; True if written."""
        week = self.this_week()
        items, carried = self.items(week), self.carried(week)
        if not items and not carried and not self._keeper.abs(WEEK_FILE).exists():
            return False
        section = render_section(week, items, carried)
        text = read_text_or_none(self._keeper.abs(WEEK_FILE), within=self._paths.root)
        parts = split_section(text) if text is not None else None
        if parts is not None and parts[1] == section:
            if current.cache.get(WEEK_FILE) is None or current.cache[WEEK_FILE].text != text:
                self._keeper.record(current, WEEK_FILE, _KEY, 0, text or "")
            return False
        monday, sunday = week_bounds(*_split_week(week))
        heading = f"# 📅 Week {week} ({monday:%Y-%m-%d} – {sunday:%Y-%m-%d})"
        self._keeper.write(current, WEEK_FILE, _KEY, 0, replace_section(text, section, heading))
        return True

    # ------------------------------------------------------------------ sync and status
    def candidates(self) -> list[WeekCandidate]:
        """Unchecked ``- [ ]`` items of current.md's Progress / Active Task sections."""
        text = read_text_or_none(self._paths.current_md, within=self._paths.root) or ""
        found: list[WeekCandidate] = []
        headings = list(re.finditer(r"^##?(?!#)[^\n]*$", text, re.MULTILINE))
        for match in _SYNC_SECTIONS.finditer(text):
            end = next((h.start() for h in headings if h.start() > match.start()), len(text))
            for line in _UNCHECKED.finditer(text, match.end(), end):
                kind, priority = classify(line.group("text"))
                found.append(
                    WeekCandidate(
                        type=kind, title=line.group("text"), priority=priority, section=match.group(0)[2:].strip()
                    )
                )
        return found

    def outside(self) -> str | None:
        text = read_text_or_none(self._keeper.abs(WEEK_FILE), within=self._paths.root)
        return outside_text(text) if text is not None else None


def _split_week(week: str) -> tuple[int, int]:
    year, number = week.split("-W")
    return int(year), int(number)


def week_days(week: str) -> tuple[date, date]:
    return week_bounds(*_split_week(week))


def counts(rows: Sequence[WeeklyItem], attribute: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for row in rows:
        value = str(getattr(row, attribute))
        out[value] = out.get(value, 0) + 1
    return out
