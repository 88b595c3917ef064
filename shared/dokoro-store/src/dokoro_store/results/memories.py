"""Results of the typed memories (semantic layer) and of the session briefing.

A :class:`Memory` is the public face of one memory row; every other result here is built from
it. Recall scores are full precision in Python and rounded to four decimals on the wire.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from dokoro_store.results.base import IsoTime, Result
from dokoro_store.results.rounding import rounded

__all__ = [
    "BriefingSummary",
    "CloseMemory",
    "FileChange",
    "FileProblem",
    "FilesCheck",
    "FilesSync",
    "Forgotten",
    "Memory",
    "MemoryStatus",
    "MemoryVerdict",
    "Recall",
    "RecallHit",
    "Remembered",
    "TypeUsage",
]


class Memory(Result):
    """One memory and where it stands in its lifecycle (active → archived → deprecated)."""

    id: str
    type: str
    title: str
    body: str
    entities: list[str]
    trust: str
    state: str
    agent_id: str | None
    session_id: str | None
    source: str | None
    created_at: IsoTime
    updated_at: IsoTime
    review_after: IsoTime | None
    valid_until: IsoTime | None
    supersedes: str | None
    superseded_by: str | None
    state_reason: str | None
    state_changed_by: str | None = None  # the agent whose call last changed the state
    recall_count: int


class CloseMemory(Result):
    """A close neighbour of a new memory, with what an agent needs to judge the pair.

    ``similarity`` is the cosine of the two memories' vectors (``semantic``) when both have one,
    else the overlap of their words (``lexical``, Jaccard, always given).
    """

    memory: Memory
    shared_entities: list[str]
    similarity: float
    semantic: float | None = None
    lexical: float = 0.0
    gap_days: float
    latest_wins_eligible: bool
    why_not_latest_wins: str | None


class FileChange(Result):
    """One change a person made to the memory files (``memories/<type>/<id>-<slug>.md``), and what
    the store did with it.

    ``action`` is one of ``new_version`` (an edit: a new memory supersedes the edited one),
    ``state_changed`` (the front matter's state was changed: the memory is now ``state``),
    ``deprecated`` (the file was deleted), ``created`` (a new file became a memory),
    ``restored`` (a file whose memory the database lacks brought it back), ``kept_both`` (the
    file and the database both changed: the file's version is a new memory, both are kept),
    ``revived`` (an edit of an archived or deprecated memory's file: that same memory, active again
    with the file's text), ``restored_fields`` (only fields the database owns were edited: the
    file was rewritten), ``removed`` (an older copy of a purged memory: removed, the purge
    stands) or ``not_applied`` (see ``message``: a file carries content, not authority).
    """

    path: str
    memory_id: str
    action: str
    new_id: str | None = None
    state: str | None = None
    fields: list[str] = []  # noqa: RUF012 - a pydantic field: each instance gets a copy
    message: str
    conflicts: list[CloseMemory] = []  # noqa: RUF012 - a pydantic field: each instance gets a copy


class FileProblem(Result):
    """A file under ``memories/`` that holds no memory, and why (fix it and it is read again)."""

    path: str
    reason: str


class FilesSync(Result):
    """What one reconcile of the memory files did."""

    changes: list[FileChange] = []  # noqa: RUF012 - a pydantic field: each instance gets a copy
    problems: list[FileProblem] = []  # noqa: RUF012 - a pydantic field: each instance gets a copy
    rendered: int = 0
    removed: int = 0
    note: str | None = Field(
        default=None,
        description="When the reconcile was cut short: another process was reconciling the folder, or more "
        "files changed than one call reads (the next calls read them).",
    )

    @property
    def quiet(self) -> bool:
        """Nothing a person or an agent needs to hear about (files written for rows are routine)."""
        return not self.changes and not self.problems and self.note is None

    def lines(self) -> list[str]:
        """One line per change and per unreadable file, for a tool's or a command's text."""
        out = [f"- {c.path}: {c.message}" for c in self.changes]
        out += [f"- {p.path}: not read ({p.reason})" for p in self.problems]
        out += [f"- {self.note}"] if self.note else []
        return out


class Remembered(Result):
    """A stored memory, the close memories the conflict gate surfaced, and what it superseded."""

    memory: Memory
    conflicts: list[CloseMemory]
    superseded: Memory | None
    redacted: list[str]
    indexed: bool
    retried: bool = Field(
        default=False,
        description="True when this call repeated an identical remember moments ago: the memory it stored "
        "is returned and nothing new was stored.",
    )
    notes: list[str] = Field(default_factory=list, description="What could not be done after storing, and why.")
    # What the reconcile of the memory files picked up before this call (a person's edits).
    files: FilesSync | None = None
    depends_on: list[str] = Field(
        default_factory=list, description="The memories it depends on: retiring one of them makes it stale."
    )


class MemoryVerdict(Result):
    """A pair of close memories after the agent's verdict."""

    new: Memory
    old: Memory
    verdict: str
    dependents_flagged: list[str] = Field(
        default_factory=list, description="Memories depending on the one retired: now stale until renewed."
    )


class RecallHit(Result):
    memory: Memory
    score: Annotated[float, rounded(4)] = Field(
        description="How likely the memory is what was asked for, on one scale for every query (calibrated; "
        "0-1; the same value as relevance): below 0.15 it is not a close match. A client comparing hits or "
        "queries reads this, never rank_score."
    )
    relevance: Annotated[float, rounded(4)] = Field(
        description="How likely the memory is relevant, on one scale for every query (calibrated; 0-1); below "
        "0.15 it is not a close match. The same value as score."
    )
    rank_score: Annotated[float, rounded(4)] = Field(
        default=0.0,
        description="What orders this recall's hits and nothing more: the match relative to the best one of "
        "this recall, weighted by trust, state, freshness and use. Not comparable across recalls.",
    )
    reason: str
    retired: str | None = Field(
        default=None,
        description="Set when the memory no longer holds (superseded, archived, deprecated): which, in "
        "words. Such memories rank below every current and every stale one.",
    )
    stale: str | None = Field(
        default=None,
        description="Set when the memory is in force but stale (past valid_until or review_after, or depending on "
        "a retired memory): why, in words starting with 'stale'. Ranked below current memories, above retired.",
    )


class Recall(Result):
    hits: list[RecallHit]
    files: FilesSync | None = None
    hidden_types: list[str] = Field(
        default_factory=list,
        description="Memory types switched off in this store (`dokoro memory types TYPE --off`): never recalled.",
    )


class Forgotten(Result):
    """What forgetting did: ``deprecated`` (kept, with its reason) or ``purged`` (gone)."""

    id: str
    action: str
    state: str
    dependents_flagged: list[str] = Field(
        default_factory=list, description="Memories depending on it: now stale until their owners renew them."
    )


class FilesCheck(Result):
    """The memory files against the rows, from the folder's manifest and counts (never every file)."""

    files: int = Field(description="Memory files of the folder that hold a memory (as last seen).")
    deleted: int = Field(description="Files a person deleted (their memories are deprecated, kept).")
    rows: int = Field(description="Memories in the database.")
    unrendered: int = Field(description="Memories changed since the folder's last render (written on the next calls).")
    unknown_files: bool = Field(
        description="Memory files sit in memories/ that the folder has never read (a fresh clone, a lost manifest)."
    )
    in_step: bool
    message: str
    unread: int = Field(
        default=0,
        description="Files created, edited or deleted since the folder last read them: not in a read-only answer "
        "(the next memory call that may write takes them in).",
    )
    unread_files: list[FileProblem] = Field(
        default_factory=list, description="The first of them, each with what it is."
    )
    not_read: int = Field(
        default=0,
        description="Files that hold no memory until a person fixes or removes them (broken, refused, copies, links).",
    )
    not_read_files: list[FileProblem] = Field(default_factory=list, description="The first of them, each with why.")


class TypeUsage(Result):
    """How one memory type is used: written, recalled, and written but never recalled."""

    type: str
    written: int = Field(description="Memories of this type (every state).")
    read: int = Field(description="Recalls of them (each returned hit counts one).")
    never_read: int = Field(description="Memories of this type in force that no recall ever returned.")


class MemoryStatus(Result):
    """The health of the memories, by id (the text report adds titles)."""

    total: int
    by_state: dict[str, int]
    by_type: dict[str, int]
    index_pending: int
    stale: list[str]
    expired: list[str]
    unresolved_conflicts: list[dict[str, str]]
    never_recalled: int
    compaction_candidates: dict[str, list[str]]
    files: FilesSync | None = None
    files_check: FilesCheck | None = None
    health: str | None = Field(
        default=None, description="One actionable line when something waits for a decision; null when all is well."
    )
    stale_total: int = Field(default=0, description="Memories stale now (past a date, or a dependency retired).")
    usage: list[TypeUsage] = Field(default_factory=list, description="Per memory type: written, read, never read.")
    hidden_types: dict[str, int] = Field(
        default_factory=dict,
        description="Memory types switched off in this store (hidden from recall, search and the briefing; "
        "refused on write) and how many of their memories in force that hides.",
    )


class BriefingSummary(Result):
    """What the session briefing used of its budget and which rules it showed."""

    budget: int
    used: int
    rules_shown: list[str]
    rules_total: int
    rules_overflow: int
    omitted: dict[str, int]
