"""Ambient context from git: what the project is doing now, as a search query (reference §2.12).

Keywords come from the branch name (split on ``/ _ -``), the subjects of the last five commits
(letters only, the ten most frequent words) and the files changed over them (base names split on
``. _ -``, plus folder names; at most fifteen). All lower-cased, longer than two letters, minus
stop-words. The query is the first twelve unique keywords, branch first (counted twice).
"""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Protocol

from dokoro_store.errors import InvalidArgumentError, NotFoundError
from dokoro_store.results.search import AmbientResult, SearchHit, SearchResults
from dokoro_store.semantic.search.types import RefreshReport
from dokoro_store.walls.containment import inside, is_inside

__all__ = ["STOP_WORDS", "AmbientContext", "ambient_context", "ambient_search", "keywords_from"]

_STOP_WORD_TEXT = (
    "feat fix chore docs refactor test style perf ci build revert merge add update remove delete the and for with "
    "from into this that src index main master dev develop tests spec"
)
STOP_WORDS = frozenset(_STOP_WORD_TEXT.split())
_GIT_TIMEOUT_S = 10


@dataclass(frozen=True)
class AmbientContext:
    project_path: str
    branch: str
    commits: list[str]
    files: list[str]
    branch_keywords: list[str]
    commit_keywords: list[str]
    file_keywords: list[str]
    query: str


def _keep(word: str) -> bool:
    return len(word) > 2 and word not in STOP_WORDS


def _unique(words: list[str]) -> list[str]:
    return list(dict.fromkeys(words))


def keywords_from(branch: str, commits: list[str], files: list[str]) -> tuple[list[str], list[str], list[str], str]:
    """``(branch, commit, file keywords, query)`` from git facts (pure: tested without git)."""
    branch_words = _unique([w for w in re.split(r"[/_\-]+", branch.lower()) if _keep(w)])
    counts = Counter(w for subject in commits for w in re.findall(r"[a-z]+", subject.lower()) if _keep(w))
    commit_words = [w for w, _n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:10]]
    file_words: list[str] = []
    for name in files:
        path = PurePosixPath(name)
        file_words += [w for w in re.split(r"[._\-]+", path.name.lower()) if _keep(w)]
        file_words += [w for part in path.parent.parts for w in [part.lower()] if _keep(w)]
    file_words = _unique(file_words)[:15]
    query = " ".join(_unique(branch_words * 2 + commit_words + file_words)[:12])
    return branch_words, commit_words, file_words, query


def _git(path: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(path), *args], capture_output=True, text=True, timeout=_GIT_TIMEOUT_S, check=False
        )
    except FileNotFoundError:
        raise NotFoundError("git is not installed, so there is no ambient context to read") from None
    except subprocess.TimeoutExpired:
        return None
    return done.stdout if done.returncode == 0 else None


def ambient_context(project_path: Path, *, project_root: Path) -> AmbientContext:
    """Read the branch, recent commits and changed files of the git repository at ``project_path``.

    Only inside ``project_root`` (the project the server was started for): ``project_path`` must
    resolve under it, and so must the repository git finds there (git looks up through parent
    folders, which could reach a repository around the project).
    """
    project_path = inside(project_root, project_path, what="projectPath")
    if not project_path.is_dir():
        raise InvalidArgumentError(f"projectPath {project_path} is not a folder; pass the project's root")
    top = _git(project_path, "rev-parse", "--show-toplevel")
    if top is None:
        raise NotFoundError(
            f"{project_path} is not a git repository: pass projectPath of a git checkout to get ambient context"
        )
    if not is_inside(project_root, Path(top.strip())):
        raise NotFoundError(
            f"{project_path} is not in a git repository of its own (the enclosing repository {top.strip()} is outside "
            f"the project {project_root}); ambient context reads only the project the server was started for"
        )
    branch = (_git(project_path, "rev-parse", "--abbrev-ref", "HEAD") or "").strip()
    commits = [line.strip() for line in (_git(project_path, "log", "-5", "--format=%s") or "").splitlines()]
    changed = _git(project_path, "diff", "--name-only", "HEAD~5..HEAD")
    if changed is None:
        changed = _git(project_path, "diff", "--name-only") or ""
    files = [line.strip() for line in changed.splitlines() if line.strip()]
    branch_words, commit_words, file_words, query = keywords_from(branch, [c for c in commits if c], files)
    return AmbientContext(
        project_path=str(project_path),
        branch=branch,
        commits=[c for c in commits if c],
        files=files,
        branch_keywords=branch_words,
        commit_keywords=commit_words,
        file_keywords=file_words,
        query=query,
    )


class Searching(Protocol):
    """What the ambient search needs of the search service (which calls it: no import back)."""

    def refresh(self) -> RefreshReport: ...

    def universal(self, query: str, limit: int = 10) -> SearchResults: ...


def ambient_search(search: Searching, project: Path, limit: int, *, project_root: Path) -> AmbientResult:
    """:meth:`SearchService.ambient`: the git context of ``project`` and the documents matching it."""
    context = ambient_context(project, project_root=project_root)
    notes: list[str] = []
    hits: list[SearchHit] = []
    if context.query:
        notes += search.refresh().notes
        found = search.universal(context.query, limit=limit)
        notes += found.notes
        hits = found.results
    return AmbientResult(
        project_path=context.project_path,
        branch=context.branch,
        commits=context.commits,
        files=context.files,
        branch_keywords=context.branch_keywords,
        commit_keywords=context.commit_keywords,
        file_keywords=context.file_keywords,
        query=context.query,
        notes=notes,
        results=hits,
    )
