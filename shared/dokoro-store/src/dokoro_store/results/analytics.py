"""Results of the analytics layer: status, pending work, velocity, timeline, checklists, weekly compression.

Every figure says what it counts (``counts``), because the same word — "completed", "sessions" —
means different things in different layers.
"""

from __future__ import annotations

from pydantic import Field

from dokoro_store.results.base import IsoTime, Result

__all__ = [
    "ChecklistItem",
    "CompressWeek",
    "DailyFileDigest",
    "DayCount",
    "DocEvidence",
    "FeatureMatch",
    "FeatureStatus",
    "Figure",
    "MovedFile",
    "Pending",
    "PendingItem",
    "PlanMatch",
    "TestChecklist",
    "Timeline",
    "TimelineEntry",
    "Velocity",
]


class Figure(Result):
    name: str
    value: float
    counts: str = Field(description="what exactly this figure counts, and where it comes from")


class FeatureMatch(Result):
    id: str
    kind: str
    title: str
    status: str
    similarity: float = Field(description="share of the query's words in the title (1.0 = all)")
    updated_at: IsoTime
    plan_path: str | None


class DocEvidence(Result):
    doc_id: str
    title: str
    filepath: str
    why: str
    markers: list[str] = Field(description="lines of the document with ✅, 🚧 or 📋 markers")


class PlanMatch(Result):
    id: str
    title: str
    status: str
    completion: int


class FeatureStatus(Result):
    feature: str
    status: str = Field(description="completed, in_progress, planned or unknown")
    basis: str = Field(description="where the status comes from")
    matches: list[FeatureMatch]
    documents: list[DocEvidence]
    plans: list[PlanMatch]
    notes: list[str] = Field(default_factory=list)


class PendingItem(Result):
    source: str = Field(description="issue, feature, weekly, task, plan or document (a markdown file: id = its path)")
    id: str
    title: str
    status: str
    updated_at: IsoTime
    age_days: float = Field(description="days since the item last changed")
    agent_id: str | None
    detail: str | None


class Pending(Result):
    staleness: str
    min_age_days: int
    at: IsoTime
    items: list[PendingItem]
    counts: dict[str, int] = Field(description="items listed per source")
    counted: str = Field(description="what is counted as pending")


class DayCount(Result):
    date: str
    completed: int
    by_kind: dict[str, int]


class Velocity(Result):
    period: str
    days: int
    start: IsoTime
    end: IsoTime
    figures: list[Figure]
    completed: int = Field(
        description="issues resolved + features completed + weekly items done + tasks completed + plan items checked"
    )
    average_per_day: float
    by_day: list[DayCount]
    most_productive_day: str | None


class TimelineEntry(Result):
    at: IsoTime
    date: str
    source: str = Field(
        description="issue, feature, weekly, task, plan, session or document (a markdown file: ref = its path)"
    )
    action: str
    title: str
    ref: str | None
    agent_id: str | None


class Timeline(Result):
    range: str
    start: IsoTime | None
    end: IsoTime
    entries: list[TimelineEntry]
    counts: dict[str, int] = Field(description="entries per source")


class ChecklistItem(Result):
    text: str
    kind: str = Field(description="standard, regression (from a resolved bug or a stored note), or plan")
    source: str | None = Field(description="the issue id, document path or plan the check comes from")
    why: str | None


class TestChecklist(Result):
    feature: str
    format: str
    items: list[ChecklistItem]
    notes: list[str] = Field(default_factory=list)


class DailyFileDigest(Result):
    path: str = Field(description="where the daily file was read (relative to the store folder)")
    date: str
    accomplishments: list[str]
    decisions: list[str]
    insights: list[str]
    summary: str | None
    scope: list[str]


class MovedFile(Result):
    source: str
    target: str
    outcome: str = Field(
        description="moved, already_archived (a rerun found it there) or renamed (a different file had the name)"
    )


class CompressWeek(Result):
    week: str = Field(description="ISO week-year and week, YYYY-Www")
    year: int
    week_number: int
    start: str
    end: str
    dry_run: bool
    summary_path: str | None
    doc_id: str | None
    indexed: bool
    dailies: list[DailyFileDigest]
    session_summaries: int
    moved: list[MovedFile]
    figures: list[Figure]
    preview: str | None = Field(description="the first 500 characters of the summary (dry runs)")
    notes: list[str] = Field(default_factory=list)
