"""What the documents board answers (``dokoro list/get/update/tags/tag/time/session``).

A document is a row of the store's document index (imported markdown, session dumps, indexed
content). A person tracks work on it the way the reference CLI does: status, priority, PRD stage,
a parallel slot, an estimate, tags and time entries.
"""

from __future__ import annotations

from pydantic import Field

from dokoro_store.results.base import IsoTime, Result

__all__ = ["DocCard", "DocDetail", "TagCount", "TimeEntry", "WorkSession", "WorkSessionStatus"]


class TimeEntry(Result):
    """Time spent on one document: running (``active``) or ``completed`` with its minutes."""

    doc_id: str
    title: str
    started_at: IsoTime
    ended_at: IsoTime | None = None
    duration_min: int | None = None
    status: str = Field(description="active | completed")
    slot: int | None = None
    notes: str | None = None


class DocCard(Result):
    """One document as a line of a listing."""

    id: str
    title: str
    filepath: str
    doc_type: str
    status: str
    priority: str
    tags: list[str] = Field(default_factory=list)
    prd_stage: str | None = None
    slot: int | None = Field(default=None, description="the parallel slot (terminal) working on it")
    estimate_min: int | None = None
    actual_min: int | None = Field(default=None, description="minutes of completed time entries")
    created_at: IsoTime
    updated_at: IsoTime
    completed_at: IsoTime | None = None


class DocDetail(DocCard):
    """One document in full: its card, its text and its time entries."""

    content: str | None = None
    time_entries: list[TimeEntry] = Field(default_factory=list)


class TagCount(Result):
    name: str
    count: int


class WorkSession(Result):
    """A work session a person started from the command line (``dokoro session start``)."""

    id: str
    status: str = Field(description="active | completed")
    started_at: IsoTime
    ended_at: IsoTime | None = None
    duration_min: int | None = None
    focus: str | None = Field(default=None, description="the document the session is about")
    summary: str | None = None


class WorkSessionStatus(Result):
    active: list[WorkSession] = Field(default_factory=list)
    last_ended: WorkSession | None = None
