"""What ``dokoro cleanup`` found and did: duplicate files, old files, and where they went."""

from __future__ import annotations

from pydantic import Field

from dokoro_store.results.base import IsoTime, Result

__all__ = ["CleanupMove", "CleanupReport", "DuplicateGroup", "OldFile"]


class DuplicateGroup(Result):
    """Markdown files with the same bytes: the oldest is kept, the others go to the archive."""

    keep: str
    duplicates: list[str]


class OldFile(Result):
    path: str
    modified_at: IsoTime
    age_days: int


class CleanupMove(Result):
    source: str
    target: str
    reason: str = Field(description="duplicate | old")


class CleanupReport(Result):
    dry_run: bool
    older_than_days: int
    duplicates: list[DuplicateGroup] = Field(default_factory=list)
    old_files: list[OldFile] = Field(default_factory=list)
    moves: list[CleanupMove] = Field(default_factory=list, description="done, or planned in a dry run")
    backup: str | None = Field(default=None, description="the JSON backup written before anything moved")
    manifest: str | None = Field(default=None, description="the record of the moves, for --rollback")
    errors: list[str] = Field(default_factory=list)
