"""Lay out a new dokoro folder with its conventional folders and files (reference §2.11)."""

from __future__ import annotations

from pathlib import Path

from dokoro_store.clock import Clock, iso
from dokoro_store.housekeeping.gitignore import write_gitignore
from dokoro_store.results.working import FolderInit
from dokoro_store.walls import frontmatter
from dokoro_store.walls.files import atomic_write_text

__all__ = ["FOLDERS", "init_folder"]

FOLDERS = (
    "daily",
    "features",
    "decisions",
    "insights",
    "research",
    "retrospective",
    "retrospective/weekly",
    "retrospective/monthly",
    "archive",
    ".mcp",
    ".config",
    ".tags",
)

_README = """# dokoro

This folder is the memory of this project's coding agents, kept by the dokoro MCP server.

- `current.md` — the live working file of the claimed workspace (overwritten on claim).
- `daily/` — session dumps, named `<YYYY-MM-DD-HHhMM-weekday>-session-<topic>.md` (UTC).
- `decisions/`, `insights/`, `research/`, `features/` — durable notes, indexed for search.
- `retrospective/` — weekly and monthly consolidations.
- `archive/` — swept daily files and finished plans.
- `assets/` — images and files saved by agents.
- `.dokoro/db/` — the database (do not edit by hand); `.mcp/` — locks and runtime state
  (`.mcp/plans/` holds the plans' renderings). `.gitignore` keeps the database, locks and caches
  out of git, and the markdown in.

Markdown here is safe to edit by hand; dokoro picks up the changes.
"""


def _template_current(now: str) -> str:
    front = frontmatter.render({"agent_id": "agent-initial", "last_active": now, "task": "Getting started"})
    return (
        front
        + """# Current Workspace

## 🎯 Today's Focus
- [ ] _What are you working on?_

## 🚧 In Progress

## 📝 Quick Notes

## ⏭️ Next Session

## 📥 Inbox
"""
    )


def init_folder(root: Path, clock: Clock, *, skip_if_exists: bool = True) -> FolderInit:
    """Create the folder layout; an existing initialised folder is left alone when asked."""
    already = (root / "README.md").exists() and (root / "daily").is_dir()
    if already and skip_if_exists:
        write_gitignore(root)  # a store made before dokoro wrote one (or with the earlier one) gets it
        return FolderInit(path=str(root), created=False, folders=[])
    for folder in FOLDERS:
        (root / folder).mkdir(parents=True, exist_ok=True)
    if not (root / "README.md").exists():
        atomic_write_text(root / "README.md", _README, within=root)
    write_gitignore(root)
    if not (root / "current.md").exists():
        atomic_write_text(root / "current.md", _template_current(iso(clock.now())), within=root)
    atomic_write_text(root / ".config" / "search-mode", "auto\n", within=root)
    return FolderInit(path=str(root), created=True, folders=list(FOLDERS))
