"""``dokoro_compress_week``: one retrospective for a week, then its daily files archived (§4.14).

Order makes it crash-safe: the summary is written (atomically) and indexed as a document FIRST;
only then do the daily files move to ``archive/daily/<year>-W<ww>/``. A crash in between leaves
the dailies where they were; a rerun reads them (and any already archived) again, writes the very
same summary (it depends only on the week's sources, never on "now") and finishes the move. A
file found already at its archive path with the same bytes was moved by the interrupted run.

The week is the ISO week with its ISO week-year everywhere (§7.24: the original named the summary
with the calendar year, so the last days of December landed in the wrong year).
"""

from __future__ import annotations

import logging
import re
import shutil
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy.exc import SQLAlchemyError
from sqlmodel import col, select

from dokoro_store.clock import Clock, format_duration
from dokoro_store.db.engine import Database
from dokoro_store.errors import DokoroError
from dokoro_store.models import ConversationSummary, TaskTimer
from dokoro_store.paths import StorePaths
from dokoro_store.procedural.tracking.rules import iso_week, week_bounds
from dokoro_store.results.analytics import CompressWeek, DailyFileDigest, Figure, MovedFile
from dokoro_store.walls import containment as walls
from dokoro_store.walls import frontmatter
from dokoro_store.walls.files import atomic_write_text, file_lock, read_text_or_none
from dokoro_store.walls.secrets import redact

if TYPE_CHECKING:
    from dokoro_store.semantic.documents.service import DocumentService
    from dokoro_store.semantic.search.service import SearchService

__all__ = ["HOURS_PER_SESSION", "WeekCompressor", "digest_daily"]

log = logging.getLogger("dokoro.store")

HOURS_PER_SESSION = 2.5  # the reference's estimate, shown as such
_DATED = re.compile(r"^(\d{4}-\d{2}-\d{2})")
_DONE = re.compile(r"^\s*[-*]\s+\[[xX]\]\s+(?P<text>.+?)\s*$")
_DECISION = re.compile(r"\b(decision|decided|chose)\s*:", re.IGNORECASE)
_INSIGHT = re.compile(r"\b(insight|learned|discovered)\s*:", re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*]\s+(?:\[[ xX]\]\s+)?)?")
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _said(line: str, pattern: re.Pattern[str]) -> str:
    """The statement of a ``decision: …`` line, without its bullet and label."""
    text = _BULLET.sub("", line).strip()
    match = pattern.search(text)
    if match is not None and match.start() <= 2:
        text = text[match.end() :].strip()
    return text.strip("*_ ").strip()


def digest_daily(relative: str, text: str) -> DailyFileDigest:
    """Completed items, decisions, insights, the ``## Summary`` body and the scope of one daily file."""
    data, body = frontmatter.parse(text)
    tags = data.get("tags") if isinstance(data.get("tags"), dict) else {}
    assert isinstance(tags, dict)
    scope_value = tags.get("scope")
    scope = (
        [str(s) for s in scope_value] if isinstance(scope_value, list) else [str(scope_value)] if scope_value else []
    )
    done: list[str] = []
    decisions: list[str] = []
    insights: list[str] = []
    summary_lines: list[str] = []
    in_summary = False
    for line in body.splitlines():
        if line.startswith("## "):
            in_summary = line[3:].strip().lower() == "summary"
            continue
        if in_summary and not line.startswith("#"):
            summary_lines.append(line)
        match = _DONE.match(line)
        if match:
            done.append(match.group("text"))
        if _DECISION.search(line):
            decisions.append(_said(line, _DECISION))
        elif _INSIGHT.search(line):
            insights.append(_said(line, _INSIGHT))
    summary = "\n".join(summary_lines).strip() or None
    dated = _DATED.match(Path(relative).name)
    return DailyFileDigest(
        path=relative,
        date=dated.group(1) if dated else "",
        accomplishments=done,
        decisions=[d for d in decisions if d],
        insights=[i for i in insights if i],
        summary=summary,
        scope=scope,
    )


@dataclass
class _Week:
    year: int
    number: int
    monday: date
    sunday: date
    label: str
    dailies: list[tuple[Path, DailyFileDigest]] = field(default_factory=list)
    summaries: list[ConversationSummary] = field(default_factory=list)
    tracked_seconds: float = 0.0
    tasks_completed: int = 0


class WeekCompressor:
    def __init__(
        self,
        paths: StorePaths,
        db: Database,
        clock: Clock,
        docs: DocumentService,
        search: SearchService | None,
    ) -> None:
        self._paths = paths
        self._db = db
        self._clock = clock
        self._docs = docs
        self._search = search

    @property
    def daily_archive(self) -> Path:
        return self._paths.root / "archive" / "daily"

    def resolve_week(self, week_number: int | None, year: int | None) -> tuple[int, int]:
        """The week asked for; by default the ISO week of seven days ago (last week)."""
        last_year, last_week = iso_week((self._clock.now() - timedelta(days=7)).date())
        if week_number is None:
            return (year or last_year), last_week
        return (year or iso_week(self._clock.now().date())[0]), week_number

    def _gather(self, year: int, number: int) -> _Week:
        monday, sunday = week_bounds(year, number)
        label = f"{year}-W{number:02d}"
        week = _Week(year, number, monday, sunday, label)
        found: dict[str, Path] = {}
        # Top-level plain files only: symlinks are skipped with a warning, never followed (walls).
        if self._paths.daily_dir.is_dir():
            for path in walls.scan(self._paths.root, self._paths.daily_dir, skip_dir=lambda _name: True):
                dated = _DATED.match(path.name)
                if dated:
                    try:
                        day = date.fromisoformat(dated.group(1))
                    except ValueError:
                        continue
                    if monday <= day <= sunday:
                        found[path.name] = path
        archived = self.daily_archive / label
        if archived.is_dir():
            for path in walls.scan(self._paths.root, archived, skip_dir=lambda _name: True):
                found.setdefault(path.name, path)  # archived by an earlier (interrupted) run or the sweep
        for name in sorted(found):
            path = found[name]
            text = read_text_or_none(path, within=self._paths.root, errors="replace") or ""
            week.dailies.append((path, digest_daily(self._paths.relative(path), text)))
        start = datetime.combine(monday, time(), UTC)
        end = start + timedelta(days=7)
        with self._db.read() as session:
            week.summaries = list(
                session.exec(
                    select(ConversationSummary)
                    .where(col(ConversationSummary.started_at) >= start, col(ConversationSummary.started_at) < end)
                    .order_by(col(ConversationSummary.started_at), col(ConversationSummary.id))
                )
            )
            tasks = list(
                session.exec(
                    select(TaskTimer).where(
                        col(TaskTimer.status) == "completed",
                        col(TaskTimer.ended_at) >= start,
                        col(TaskTimer.ended_at) < end,
                    )
                )
            )
        week.tracked_seconds = sum(t.active_seconds for t in tasks)
        week.tasks_completed = len(tasks)
        return week

    def compress(self, week_number: int | None = None, year: int | None = None, dry_run: bool = False) -> CompressWeek:
        year, number = self.resolve_week(week_number, year)
        monday, _ = week_bounds(year, number)  # refuses a week the year does not have, before anything else
        label = f"{year}-W{number:02d}"
        with file_lock(self._paths.locks_dir, f"compress-{label}", within=self._paths.root):
            week = self._gather(year, number)
            text, figures = render_summary(week)
            cleaned = redact(text)  # what the dailies said is summarised, their secrets are not
            text = cleaned.text
            relative = f"retrospective/weekly/{label}-consolidated.md"
            result: dict[str, Any] = {
                "week": label,
                "year": year,
                "week_number": number,
                "start": week.monday.isoformat(),
                "end": week.sunday.isoformat(),
                "dry_run": dry_run,
                "dailies": [digest for _, digest in week.dailies],
                "session_summaries": len(week.summaries),
                "figures": figures,
            }
            if not week.dailies and not week.summaries:
                return CompressWeek(
                    **result,
                    summary_path=None,
                    doc_id=None,
                    indexed=False,
                    moved=[],
                    preview=None,
                    notes=[f"No daily files and no session summaries found for {label} ({monday} – {week.sunday})"],
                )
            if dry_run:
                return CompressWeek(
                    **result, summary_path=relative, doc_id=None, indexed=False, moved=[], preview=text[:500], notes=[]
                )
            notes: list[str] = [cleaned.notice()] if cleaned.kinds else []
            atomic_write_text(self._paths.root / relative, text, within=self._paths.root)
            doc_id, indexed = self._index(relative, text, label, notes)
            pending = [path for path, _ in week.dailies if path.parent == self._paths.daily_dir]
            moved = self._move_dailies(pending, self.daily_archive / label)
            if moved:
                self._refresh(notes)
        return CompressWeek(
            **result, summary_path=relative, doc_id=doc_id, indexed=indexed, moved=moved, preview=None, notes=notes
        )

    def _index(self, relative: str, text: str, label: str, notes: list[str]) -> tuple[str, bool]:
        """Save the summary as a document (full text at once) and index it (chunks, vectors)."""
        doc_id = re.sub(r"[^a-z0-9-]", "-", Path(relative).stem.lower())
        self._docs.save(
            doc_id,
            text,
            title=f"Week {label} consolidated",
            filepath=relative,
            doc_type="retrospective",
            status="consolidated",
            metadata={"week": label},
        )
        try:
            report = self._docs.index_docs([doc_id])
            notes += list(report.notes)
        except (DokoroError, SQLAlchemyError) as exc:
            log.warning("dokoro: indexing the weekly summary failed", exc_info=True)
            notes.append(f"the summary is saved and found by full text, but its vectors failed: {exc}")
        return doc_id, True

    def _move_dailies(self, files: list[Path], target_dir: Path) -> list[MovedFile]:
        """Move each daily file into the week's archive folder (never over a different file)."""
        moved: list[MovedFile] = []
        self._paths.inside(target_dir, what="archive folder")
        target_dir.mkdir(parents=True, exist_ok=True)
        self._paths.inside(target_dir, what="archive folder")
        for source in files:
            self._paths.inside(source, what="daily file")
            target = target_dir / source.name
            outcome = "moved"
            counter = 2
            while target.is_symlink() or target.exists():
                if not target.is_symlink() and target.read_bytes() == source.read_bytes():
                    source.unlink()
                    outcome = "already_archived"
                    break
                target = target_dir / f"{source.stem}-{counter}{source.suffix}"
                outcome = "renamed"
                counter += 1
            else:
                shutil.move(source, target)
            moved.append(MovedFile(source=self._rel(source), target=self._paths.relative(target), outcome=outcome))
        return moved

    def _rel(self, path: Path) -> str:
        return path.relative_to(self._paths.root).as_posix()

    def _refresh(self, notes: list[str]) -> None:
        """Documents of moved daily files follow them (the search index's reconcile keeps their ids)."""
        if self._search is None:
            return
        try:
            report = self._search.refresh()
            notes += [n for n in report.notes if n]
        except (DokoroError, SQLAlchemyError, OSError) as exc:
            log.warning("dokoro: refreshing the index after compress_week failed", exc_info=True)
            notes.append(f"the daily files moved, but their documents were not repointed yet: {exc}")


def _top(values: list[str], limit: int) -> list[str]:
    return list(dict.fromkeys(v for v in values if v))[:limit]


def render_summary(week: _Week) -> tuple[str, list[Figure]]:
    """The consolidated markdown of a week (deterministic: no clock in it) and its figures."""
    digests = [digest for _, digest in week.dailies]
    done = [d for g in digests for d in g.accomplishments]
    decisions = [d for g in digests for d in g.decisions]
    insights = [i for g in digests for i in g.insights]
    for summary in week.summaries:
        decisions += [str(d) for d in summary.key_decisions or []]
        for line in summary.summary.splitlines():
            match = _DONE.match(line)
            if match:
                done.append(match.group("text"))
            elif _DECISION.search(line):
                decisions.append(_said(line, _DECISION))
            elif _INSIGHT.search(line):
                insights.append(_said(line, _INSIGHT))
    session_ids = {s.session_id or f"summary-{s.id}" for s in week.summaries}
    sessions = len(digests) + len(session_ids)
    scopes = _top([s for g in digests for s in g.scope], 10)
    figures = [
        Figure(name="sessions", value=sessions, counts="daily files of the week + distinct sessions with summaries"),
        Figure(name="daily files", value=len(digests), counts="daily/*.md dated in the week (archived ones included)"),
        Figure(name="session summaries", value=len(week.summaries), counts="episodic summaries started in the week"),
        Figure(name="accomplishments", value=len(done), counts="`- [x]` items in dailies and summaries"),
        Figure(
            name="decisions",
            value=len(decisions),
            counts="decision:/decided:/chose: lines and summaries' key decisions",
        ),
        Figure(name="insights", value=len(insights), counts="insight:/learned:/discovered: lines"),
        Figure(
            name="estimated hours",
            value=sessions * HOURS_PER_SESSION,
            counts=f"sessions × {HOURS_PER_SESSION} h (the reference's estimate, not a measurement)",
        ),
        Figure(
            name="tracked hours",
            value=round(week.tracked_seconds / 3600, 2),
            counts=f"active time of the {week.tasks_completed} task timer(s) completed in the week (database clock)",
        ),
    ]
    front = {
        "title": f"Week {week.label} consolidated",
        "date": week.sunday.isoformat(),
        "week": week.number,
        "year": week.year,
        "sessions": sessions,
        "tags": {"type": "weekly-summary", "scope": scopes, "status": "consolidated", "index_priority": "high"},
    }
    lines = [f"# 📅 Week {week.label} ({week.monday} – {week.sunday})", "", "## Overview", ""]
    lines += [
        f"- **Sessions:** {sessions} ({len(digests)} daily file(s), {len(week.summaries)} session summary(ies))",
        f"- **Estimated hours:** {sessions * HOURS_PER_SESSION:g} (sessions × {HOURS_PER_SESSION})",
        f"- **Tracked task time:** {format_duration(round(week.tracked_seconds / 60))} "
        f"({week.tasks_completed} completed task timer(s))",
        f"- **Accomplishments:** {len(done)} · **Decisions:** {len(decisions)} · **Insights:** {len(insights)}",
        f"- **Focus areas:** {', '.join(scopes) if scopes else '—'}",
        "",
        "## ✅ Top Accomplishments",
        "",
    ]
    lines += [f"{n}. {text}" for n, text in enumerate(_top(done, 10), start=1)] or ["_None recorded._"]
    lines += ["", "## 🧭 Decisions", ""]
    lines += [f"- {text}" for text in _top(decisions, 5)] or ["_None recorded._"]
    lines += ["", "## 💡 Insights", ""]
    lines += [f"- {text}" for text in _top(insights, 5)] or ["_None recorded._"]
    lines += ["", "## 📆 Daily Breakdown", ""]
    per_day: dict[str, list[DailyFileDigest]] = {}
    for digest in digests:
        per_day.setdefault(digest.date, []).append(digest)
    for day in sorted(per_day):
        weekday = _WEEKDAYS[date.fromisoformat(day).weekday()] if day else "Undated"
        lines += [f"### {weekday} {day}", ""]
        for digest in per_day[day]:
            name = Path(digest.path).name
            lines.append(
                f"- `{name}`: {len(digest.accomplishments)} done, {len(digest.decisions)} decision(s), "
                f"{len(digest.insights)} insight(s)"
            )
            if digest.summary:
                lines.append(f"  > {' '.join(digest.summary.split())[:300]}")
        lines.append("")
    if week.summaries:
        lines += ["### Session summaries", ""]
        lines += [
            f"- `{s.session_id or s.id}` ({s.started_at:%Y-%m-%d}): {' '.join(s.summary.split())[:200]}"
            for s in week.summaries
        ]
        lines.append("")
    best = max(per_day.items(), key=lambda kv: (sum(len(g.accomplishments) for g in kv[1]), kv[0]), default=None)
    average = len(done) / sessions if sessions else 0.0
    lines += ["## 📊 Stats", "", f"- **Average completed tasks per session:** {average:.1f}"]
    if best is not None and best[0]:
        count = sum(len(g.accomplishments) for g in best[1])
        lines.append(
            f"- **Most productive day:** {_WEEKDAYS[date.fromisoformat(best[0]).weekday()]} {best[0]} ({count} done)"
        )
    lines.append("")
    return frontmatter.render(front) + "\n".join(lines), figures
