"""The project's own files, read as hostile input: what onboarding may look at, and how.

Onboarding reads a fixed set of well-known files of the project (its README, package manifests,
CI configuration, Makefile, lint configuration, contributor and agent instructions) and nothing
else: no walk of the tree, no file named by an argument. Each is read by
:func:`~dokoro_store.walls.containment.read_within`: opened folder by folder from the project's
folder without following any link (a symlink anywhere on the way is skipped, never followed, as is
a FIFO, socket or device), at most :data:`MAX_BYTES` bytes, and a file with a NUL byte is taken
for binary and skipped. At most :data:`MAX_FILES` files and :data:`MAX_WORKFLOWS` CI workflows are
read. Every skip is reported with its reason. What the files say is redacted where it is drafted
(:mod:`.drafts`), before any answer or row holds it.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from dokoro_store.walls.containment import UnsafeFile, read_within

__all__ = ["KNOWN_FILES", "MAX_BYTES", "MAX_FILES", "MAX_WORKFLOWS", "ProjectFile", "ProjectFiles", "read_project"]

# Bytes read of one file at most: a manifest or a config over it is skipped, not half-parsed.
MAX_BYTES = 256 * 1024
MAX_FILES = 40
MAX_WORKFLOWS = 10

# (relative path, kind): the files onboarding reads when they exist, in this order.
KNOWN_FILES: tuple[tuple[str, str], ...] = (
    ("README.md", "readme"),
    ("README.rst", "readme"),
    ("README.txt", "readme"),
    ("README", "readme"),
    ("CONTRIBUTING.md", "contributing"),
    ("AGENTS.md", "contributing"),
    ("CLAUDE.md", "contributing"),
    ("pyproject.toml", "pyproject"),
    ("package.json", "package"),
    ("Cargo.toml", "cargo"),
    ("go.mod", "gomod"),
    ("Makefile", "make"),
    ("GNUmakefile", "make"),
    ("makefile", "make"),
    ("justfile", "just"),
    ("Justfile", "just"),
    (".gitlab-ci.yml", "ci"),
    (".circleci/config.yml", "ci"),
    ("ruff.toml", "ruff"),
    (".ruff.toml", "ruff"),
    (".editorconfig", "editorconfig"),
    (".pre-commit-config.yaml", "precommit"),
    ("setup.cfg", "ini"),
    ("tox.ini", "ini"),
    (".flake8", "ini"),
    ("mypy.ini", "ini"),
    ("tsconfig.json", "tsconfig"),
    (".prettierrc", "prettier"),
    (".prettierrc.json", "prettier"),
    ("biome.json", "biome"),
    ("eslint.config.js", "eslint"),
    ("eslint.config.mjs", "eslint"),
    (".eslintrc.json", "eslint"),
    (".eslintrc.js", "eslint"),
    (".eslintrc.cjs", "eslint"),
    (".eslintrc.yml", "eslint"),
    ("rustfmt.toml", "rustfmt"),
    (".golangci.yml", "golangci"),
    (".nvmrc", "nvmrc"),
    (".python-version", "pyversion"),
)
# Lock files: only whether they exist is looked at (which package manager the project uses).
LOCK_FILES = ("uv.lock", "poetry.lock", "pnpm-lock.yaml", "yarn.lock", "bun.lockb", "package-lock.json", "Cargo.lock")
_WORKFLOWS = ".github/workflows"


@dataclass(frozen=True)
class ProjectFile:
    """One file read: its path relative to the project (POSIX), its kind and its text."""

    path: str
    kind: str
    text: str


@dataclass
class ProjectFiles:
    """What onboarding read of a project, what it skipped (path → why) and the lock files present."""

    name: str
    files: list[ProjectFile] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    locks: set[str] = field(default_factory=set)

    def of(self, *kinds: str) -> list[ProjectFile]:
        return [f for f in self.files if f.kind in kinds]


def _present(project: Path, relative: str) -> bool:
    """Whether ``relative`` names something in the project, without following a link to look."""
    try:
        os.lstat(project / relative)
    except OSError:
        return False
    return True


def _workflows(project: Path, out: ProjectFiles) -> list[str]:
    """The CI workflows of GitHub Actions (``.github/workflows/*.yml``), listed without following links."""
    found: list[str] = []
    current = project
    for part in _WORKFLOWS.split("/"):
        current = current / part
        try:
            info = os.lstat(current)
        except OSError:
            return []
        if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
            out.skipped[_WORKFLOWS] = "a symlink or not a folder: never followed"
            return []
    try:
        with os.scandir(current) as entries:
            names = sorted(e.name for e in entries if e.name.endswith((".yml", ".yaml")))
    except OSError as exc:
        out.skipped[_WORKFLOWS] = f"not readable ({exc.strerror or exc})"
        return []
    for name in names[MAX_WORKFLOWS:]:
        out.skipped[f"{_WORKFLOWS}/{name}"] = f"more than {MAX_WORKFLOWS} workflows: the first are read"
    found += [f"{_WORKFLOWS}/{name}" for name in names[:MAX_WORKFLOWS]]
    return found


def read_project(project: Path) -> ProjectFiles:
    """Read the project's well-known files (see the module): never raises for a file, says why it skipped one."""
    out = ProjectFiles(name=project.name)
    wanted = [(path, kind) for path, kind in KNOWN_FILES if _present(project, path)]
    wanted += [(path, "ci") for path in _workflows(project, out)]
    for relative, kind in wanted:
        if len(out.files) >= MAX_FILES:
            out.skipped[relative] = f"more than {MAX_FILES} files: the first are read"
            continue
        try:
            data = read_within(project, relative, limit=MAX_BYTES)
        except UnsafeFile as exc:
            out.skipped[relative] = _reason(str(exc))
            continue
        except FileNotFoundError:
            continue  # gone meanwhile
        except OSError as exc:
            out.skipped[relative] = f"not readable ({exc.strerror or exc})"
            continue
        if b"\0" in data:
            out.skipped[relative] = "binary (a NUL byte): not read as text"
            continue
        out.files.append(ProjectFile(relative, kind, data.decode("utf-8", errors="replace")))
    out.locks = {name for name in LOCK_FILES if _present(project, name)}
    return out


def _reason(message: str) -> str:
    """The wall's refusal in onboarding's words (the project is not the store)."""
    if "symlink" in message:
        return "a symlink (or one on its path): never followed"
    if "bytes" in message:
        return f"over {MAX_BYTES // 1024} KB: not read"
    return message.split(":", 1)[0]
