"""Results of the rebuild of the memories from their markdown files, and of the review queue.

What the reconcile of the files did on a call (:class:`~dokoro_store.results.memories.FilesSync`)
lives with the memory results, which carry it.
"""

from __future__ import annotations

from dokoro_store.results.base import Result
from dokoro_store.results.memories import FileProblem, Memory

__all__ = ["MemoryReindex", "Reviewed"]


class MemoryReindex(Result):
    """The rebuild of the memories' rows and index from their files (``dokoro memory reindex``)."""

    files: int
    restored: int
    updated: int
    unchanged: int
    created: int
    problems: list[FileProblem]
    duplicates: list[FileProblem]
    rows_without_file: int
    indexed: int


class Reviewed(Result):
    """A proposed memory after a person's review: approved (now active) or rejected (deprecated)."""

    memory: Memory
    decision: str
    superseded: Memory | None = None
