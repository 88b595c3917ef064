"""Results of the working-memory layer: the workspace, current.md, questions and assets."""

from __future__ import annotations

from dokoro_store.results.base import IsoTime, Result

__all__ = [
    "ONE_WORKSPACE",
    "AssetListing",
    "BlockerCheck",
    "CurrentFocus",
    "CurrentRegenerated",
    "FolderInit",
    "LogEntry",
    "Question",
    "QuestionAdded",
    "QuestionAnswered",
    "QuestionCounts",
    "QuestionList",
    "SavedAsset",
    "SectionUpdate",
    "SessionDump",
    "WorkspaceClaim",
    "WorkspaceStatus",
]

# Said in every claim, status and refusal: the lock is the store's, not a session's or a person's.
ONE_WORKSPACE = (
    "A store has one workspace and one lock for every agent that uses it (on a shared server, the whole "
    "team): while the holder's lock is live, other agents can read it but not claim it or write its log; "
    "they reach the holder with dokoro_handoff_write, dokoro_question_add or file claims."
)


# ---------------------------------------------------------------------- the workspace
class FolderInit(Result):
    """A dokoro folder laid out (or found already set up: then created is false)."""

    path: str
    created: bool
    folders: list[str]


class WorkspaceClaim(Result):
    """The workspace claimed: who holds it, under which session, until when."""

    agent_id: str
    session_id: str
    task: str
    lock_expires_at: IsoTime
    took_over_from: str | None = None  # the agent whose stale (or forced) lock was taken over
    sweep: str | None = None  # what the opportunistic archive sweep did, when worth saying


class WorkspaceStatus(Result):
    """Is a task in flight, who holds the lock, and how long the session has run."""

    active: bool
    task: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    session_start: IsoTime | None = None
    locked: bool = False  # a live (not stale) lock is held
    locked_by: str | None = None  # the holder of the lock file, stale or not
    lock_expires_at: IsoTime | None = None
    lock_stale: bool = False
    session_minutes: int = 0
    active_minutes: int = 0
    entries: int = 0
    tool_calls: int = 0


class LogEntry(Result):
    """A line appended to the session log."""

    type: str
    time: IsoTime
    redacted: tuple[str, ...] = ()  # kinds of secret removed before the line was written


class SessionDump(Result):
    """The workspace saved to a daily file (and a document row)."""

    path: str
    relative: str
    doc_id: str
    status: str
    doc_type: str
    reason: str
    duration_minutes: int
    released: bool  # the workspace lock was released (keepActive=false)
    doc_indexed: bool = True  # false when the database could not take the document
    claims_released: int = 0


# ---------------------------------------------------------------------- current.md
class CurrentRegenerated(Result):
    """current.md rebuilt from the checklists of recent daily files."""

    in_progress: int
    completed: int
    upcoming: int
    active_tags: list[str]
    path: str
    files_scanned: int


class SectionUpdate(Result):
    """One section of current.md edited."""

    section: str
    action: str  # "replaced" | "appended" | "added"


class CurrentFocus(Result):
    """The Current Focus, In Progress and Next Steps sections of current.md."""

    last_updated: str | None
    sections: dict[str, str]


# ---------------------------------------------------------------------- questions
class Question(Result):
    """An open (or answered) question shared by every agent of the store."""

    id: str
    question: str
    context: str | None
    priority: str
    status: str
    answer: str | None
    created_at: IsoTime
    answered_at: IsoTime | None


class QuestionCounts(Result):
    """Open questions, in all and by priority."""

    open: int
    blockers: int
    by_priority: dict[str, int]


class QuestionAdded(Result):
    question: Question
    counts: QuestionCounts


class QuestionAnswered(Result):
    question: Question
    open_for_seconds: float
    counts: QuestionCounts  # what is still open after this answer


class QuestionList(Result):
    questions: list[Question]


class BlockerCheck(Result):
    """Are we blocked: the open blocker questions, and the open counts."""

    blocked: bool
    blockers: list[Question]
    counts: QuestionCounts


# ---------------------------------------------------------------------- assets
class SavedAsset(Result):
    """An image or file copied under assets/, with a markdown reference to it."""

    path: str
    relative: str
    markdown: str
    source: str


class AssetListing(Result):
    assets: dict[str, list[str]]  # category -> workspace-relative paths
