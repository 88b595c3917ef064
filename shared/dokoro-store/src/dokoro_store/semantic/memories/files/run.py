"""One reconcile of the memory files (:mod:`.files`): its report, and the small helpers its parts share."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from dokoro_store.results.memories import FileChange, FileProblem, FilesSync
from dokoro_store.semantic.memories.files.authority import A_PERSON, Caller
from dokoro_store.semantic.memories.files.manifest import Manifest
from dokoro_store.walls.secrets import redact

__all__ = ["RELIST", "RERENDER", "Gone", "Run", "is_memory_file", "lstat"]

# A manifest ``rev`` no row has: the file is rendered again on this sync.
RERENDER = -1
# A folder time no folder has: the folder is listed again on the next sync.
RELIST = -1


def lstat(path: Path | str) -> os.stat_result | None:
    """The stat of the path itself, a symlink's own (never its target's)."""
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def is_memory_file(name: str) -> bool:
    return name.endswith(".md") and not name.startswith(".")


class Gone(Exception):
    """The file was deleted (by a person) while this call was reading it: seen as deleted next time."""


@dataclass
class Run:
    """One sync: the open manifest, the report being built, and the ids it must render."""

    manifest: Manifest
    changes: list[FileChange] = field(default_factory=list)
    problems: list[FileProblem] = field(default_factory=list)
    render: set[str] = field(default_factory=set)
    blocked: set[str] = field(default_factory=set)
    rendered: int = 0
    removed: int = 0
    # Files this call may still read and act on (None: no bound, an explicit sync).
    budget: int | None = None
    deferred: int = 0
    # Who the changes a file makes are made by (:mod:`.authority`).
    caller: Caller = A_PERSON

    def problem(self, path: str, reason: str) -> str:
        """Report a file (once per call), its reason redacted of secrets; the reason as reported."""
        reason = redact(reason).text
        if not any(p.path == path and p.reason == reason for p in self.problems):
            self.problems.append(FileProblem(path=path, reason=reason))
        return reason

    def spend(self) -> bool:
        """Take one file of the call's budget; False when it is spent (the file waits)."""
        if self.budget is None:
            return True
        if self.budget <= 0:
            self.deferred += 1
            return False
        self.budget -= 1
        return True

    def result(self) -> FilesSync:
        note = (
            f"{self.deferred} more changed file(s) than a call reads; the next calls read them"
            if self.deferred
            else None
        )
        return FilesSync(
            changes=self.changes, problems=self.problems, rendered=self.rendered, removed=self.removed, note=note
        )
