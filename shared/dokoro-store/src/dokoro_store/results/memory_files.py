"""Results of the rebuild of the memories from their markdown files, and of the review queue.

What the reconcile of the files did on a call (:class:`~dokoro_store.results.memories.FilesSync`)
lives with the memory results, which carry it.
"""

from __future__ import annotations

from pydantic import Field

from dokoro_store.results.base import Result
from dokoro_store.results.memories import FileChange, FileProblem, Memory

__all__ = ["MemoryReindex", "MemoryRepair", "RepairedMemory", "Reviewed"]


class MemoryReindex(Result):
    """The rebuild of the memories' rows and index from their files (``dokoro memory reindex``): it moves
    forward, never back (a file older than its row is brought up to date from it), and a file's change
    is made with the caller's rights only (docs/memory-files.md)."""

    files: int
    restored: int = Field(description="Memories the database lacked, brought back from their files.")
    updated: int = Field(description="Files whose edits were taken in (a new version, a state, kept both).")
    unchanged: int
    created: int = Field(description="Files without an id, remembered as new memories.")
    behind: int = Field(
        default=0,
        description="Files older than their memory (its revision): written again from the database, never the "
        "database from them.",
    )
    removed: int = Field(default=0, description="Older copies of purged memories, removed: the purge stands.")
    skipped: int = Field(default=0, description="Files not read or refused (problems lists each, and why).")
    problems: list[FileProblem]
    duplicates: list[FileProblem]
    changes: list[FileChange] = Field(
        default_factory=list, description="What the files did (at most 100 listed; the counts count all)."
    )
    rows_without_file: int
    indexed: int
    links: int = Field(default=0, description="depends_on links brought back from the files.")
    verdicts: int = Field(default=0, description="Verdicts brought back from memories/ledger/verdicts.jsonl.")
    uses: int = Field(default=0, description="Use counters brought back (raised) from memories/ledger/uses/.")
    purges: int = Field(default=0, description="Purges recorded from memories/ledger/purged.jsonl.")


class Reviewed(Result):
    """A proposed memory after a person's review: approved (now active) or rejected (deprecated)."""

    memory: Memory
    decision: str
    superseded: Memory | None = None


class RepairedMemory(Result):
    """A memory row an earlier version let in that no file could hold, and what it is now."""

    old_id: str
    new_id: str
    why: str


class MemoryRepair(Result):
    """What ``dokoro doctor --fix`` repaired among the memory rows."""

    repaired: list[RepairedMemory] = Field(default_factory=list)
