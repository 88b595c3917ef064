"""Results of the tracking layer: issues, features, the week's items, task timers, upkeep."""

from __future__ import annotations

from pydantic import Field

from dokoro_store.results.base import IsoTime, Result

__all__ = [
    "BackupInfo",
    "BackupVerify",
    "HealthProblem",
    "HealthReport",
    "ItemChanged",
    "ItemList",
    "PauseView",
    "ReconcileNote",
    "RestoreItem",
    "RestoreReport",
    "TaskList",
    "TaskTracked",
    "TaskView",
    "TrackingEventView",
    "TrackingItemView",
    "WeekCandidate",
    "WeekOutside",
    "WeekTime",
    "WeeklyAdded",
    "WeeklyItemView",
    "WeeklyStatus",
    "WeeklySync",
]


class ReconcileNote(Result):
    """Something the reconcile of hand-edited renderings did (or could not do) before the call."""

    path: str
    action: str = Field(
        description="applied (a hand edit was read back into the row), moved (a hand move changed the status), "
        "refused (a hand edit broke a rule; the row kept its value), kept (an edit that could not be read "
        "back was saved under tracking/conflicts/), rerendered (a missing or stale rendering was rewritten)"
    )
    detail: str


class TrackingEventView(Result):
    seq: int
    action: str
    from_status: str | None
    to_status: str | None
    agent_id: str | None
    note: str | None
    at: IsoTime


class TrackingItemView(Result):
    id: str
    kind: str = Field(description="issue or feature")
    title: str
    status: str
    priority: str
    category: str | None = Field(description="issues: bug, enhancement, research or question")
    complexity: str | None = Field(description="features: trivial, simple, moderate, complex or epic")
    estimate: str
    description: str | None
    solution: str | None
    plan_path: str | None
    plan_approach: str | None
    session_id: str | None
    agent_id: str | None
    created_at: IsoTime
    updated_at: IsoTime
    started_at: IsoTime | None
    completed_at: IsoTime | None
    version: int
    path: str = Field(description="its rendering, relative to the store folder")
    history: list[TrackingEventView] = Field(default_factory=list)


class ItemChanged(Result):
    """An issue or feature added, or moved along its lifecycle."""

    action: str = Field(
        description="added, started, reopened, resolved, planned, replanned, or already planned (moments ago: "
        "its plan is the answer, none written)"
    )
    previous_status: str | None
    item: TrackingItemView
    path: str
    plan_path: str | None = None
    redacted: list[str] = Field(default_factory=list, description="kinds of secret removed before storing")
    reconciled: list[ReconcileNote] = Field(default_factory=list)


class ItemList(Result):
    kind: str
    status: str
    priority: str
    limit: int
    matching: int = Field(description="items matching the filters (before the limit)")
    counts: dict[str, int] = Field(description="items of this kind per status, whatever the filters")
    items: list[TrackingItemView]
    reconciled: list[ReconcileNote] = Field(default_factory=list)


class WeeklyItemView(Result):
    id: str
    week: str = Field(description="ISO week-year and week, YYYY-Www")
    position: int
    type: str = Field(description="issue, feature or task")
    title: str
    priority: str
    effort: str | None
    ref_id: str | None
    status: str = Field(description="open, done or dropped")
    source: str = Field(description="tool, sync (from current.md) or hand (added to currentWeek.md by hand)")
    agent_id: str | None
    created_at: IsoTime
    updated_at: IsoTime
    done_at: IsoTime | None


class WeeklyAdded(Result):
    created: bool = Field(description="False when the week already listed an item with this title")
    item: WeeklyItemView
    path: str
    redacted: list[str] = Field(default_factory=list)
    reconciled: list[ReconcileNote] = Field(default_factory=list)


class WeekCandidate(Result):
    type: str
    title: str
    priority: str
    section: str = Field(description="the current.md section it came from")


class WeeklySync(Result):
    dry_run: bool
    week: str
    found: list[WeekCandidate] = Field(description="unchecked items of current.md's Progress / Active Task sections")
    added: list[WeeklyItemView]
    already_listed: list[str] = Field(description="titles the week already had")
    notes: list[str] = Field(default_factory=list)
    reconciled: list[ReconcileNote] = Field(default_factory=list)


class WeekOutside(Result):
    """What currentWeek.md holds outside dokoro's tracking section (a person's own notes)."""

    title: str | None
    checkboxes: int
    checked: int
    headed_items: list[str] = Field(description="`### N. **X**` items, with their **Status** when given")


class WeekTime(Result):
    """Task time tracked this week (dokoro_task_track), on the database clock."""

    total_seconds: float
    per_agent_seconds: dict[str, float]
    tasks_completed: int


class WeeklyStatus(Result):
    week: str
    start: str = Field(description="Monday of the week, YYYY-MM-DD")
    end: str = Field(description="Sunday of the week, YYYY-MM-DD")
    items: list[WeeklyItemView] = Field(description="this week's items, in list order")
    carried_over: list[WeeklyItemView] = Field(description="open items of earlier weeks")
    counts: dict[str, int] = Field(description="this week's items per status")
    by_type: dict[str, int] = Field(description="this week's items per type")
    outside: WeekOutside | None
    time: WeekTime | None
    summary: str | None
    reconciled: list[ReconcileNote] = Field(default_factory=list)


class BackupInfo(Result):
    path: str
    created_at: IsoTime
    rows: dict[str, int] = Field(description="rows per tracking table in the backup")
    age_seconds: float


class BackupVerify(Result):
    rows: dict[str, int] = Field(description="rows per tracking table now")
    items: dict[str, dict[str, int]] = Field(description="issues and features per status")
    renderings_checked: int
    rerendered: list[str] = Field(description="renderings that were missing or stale and were written again")
    changed_last_24h: list[str] = Field(description="ids of items changed in the last 24 hours")
    created: BackupInfo | None = Field(description="the backup written by this call (create_backup=true)")
    latest: BackupInfo | None = Field(description="the newest backup under tracking/backups/")
    reconciled: list[ReconcileNote] = Field(default_factory=list)


class RestoreItem(Result):
    table: str
    key: str
    title: str | None
    reason: str = Field(description="missing (no such row now) or older (the row now is older than the backup's)")
    applied: bool


class RestoreReport(Result):
    dry_run: bool
    source: str | None = Field(description="the backup file used (relative to the store folder)")
    kind: str
    items: list[RestoreItem]
    identical: int = Field(description="backup rows equal to the rows now")
    newer_here: int = Field(description="rows changed since the backup (kept)")
    rerendered: list[str]
    notes: list[str] = Field(default_factory=list)


class HealthProblem(Result):
    kind: str = Field(
        description="missing_dir, missing_rendering, stale_rendering, unknown_file, duplicate_file, "
        "unreadable_file, week_section_missing or conflict_copy"
    )
    path: str
    detail: str
    fixed: bool


class HealthReport(Result):
    healthy: bool = Field(description="True when no problem is left unfixed")
    fix_issues: bool
    dirs_checked: int
    renderings_checked: int
    rows: dict[str, int]
    problems: list[HealthProblem]
    reconciled: list[ReconcileNote] = Field(default_factory=list)


class PauseView(Result):
    start: IsoTime
    end: IsoTime | None
    reason: str
    seconds: float | None = Field(description="length of a closed pause")


class TaskView(Result):
    id: str
    agent_id: str
    title: str
    status: str = Field(description="active, paused, completed or abandoned")
    iterations: int
    started_at: IsoTime
    ended_at: IsoTime | None
    active_seconds: float = Field(description="time spent active so far (open span included), database clock")
    pause_seconds: float = Field(description="time spent paused so far (open pause included)")
    duration_minutes: int = Field(description="active time, rounded to minutes")
    pauses: list[PauseView]


class TaskTracked(Result):
    action: str
    agent_id: str
    task: TaskView
    auto_paused: TaskView | None = Field(description="your task that start paused to begin this one")
    at: IsoTime = Field(description="the database clock when the change was made")
    logged: bool = Field(description="a line was added to current.md's session log")
    redacted: list[str] = Field(default_factory=list)


class TaskList(Result):
    agent_id: str
    at: IsoTime
    active: list[TaskView]
    paused: list[TaskView]
    completed: list[TaskView]
    abandoned: list[TaskView]
    total_active_seconds: float = Field(description="active time of every task listed")
