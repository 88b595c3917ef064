"""The store's ``.gitignore``: what git keeps of a dokoro folder, and what stays on this machine.

A store is meant to live in the project's repository: the markdown people and agents write
(``current.md``, ``daily/``, ``memories/``, ``tracking/``, the plans under ``.mcp/plans/``,
``decisions/``, ...) is history worth keeping. The database, its locks and caches, the workspace
lock and the session's timing are this machine's: committed, they would conflict on every pull
(and a team's rows live in its own database anyway).

Every path that creates a store writes the file (the first start of a server, ``dokoro init``,
``dokoro demo``, a move-in, ``dokoro store migrate`` into a folder). A ``.gitignore`` a person
wrote is never touched; the one an earlier dokoro (or the original) wrote, word for word, is
brought up to date, since it kept the plans out.
"""

from __future__ import annotations

from pathlib import Path

from dokoro_store.walls.files import atomic_write_text, read_text_or_none

__all__ = ["GITIGNORE", "write_gitignore"]

GITIGNORE = """\
# Written by dokoro. Git keeps the markdown of this store (current.md, daily/, memories/,
# tracking/, the plans under .mcp/plans/, decisions/, ...); the rest is this machine's own.
# The database, its locks, caches and backups:
.dokoro/
# The workspace lock, file locks, the session's timing, the archive sweep's state:
.mcp/*
!.mcp/plans/
.config/
context-inspect/
tracking/backups/
tracking/conflicts/
*.tmp
*.swp
private/
personal/
"""

# What `dokoro init` wrote before (the original's template): it kept .mcp/plans/ out too.
_EARLIER = """.mcp/
.config/
.dokoro/
*.tmp
*.swp
private/
personal/
"""


def write_gitignore(root: Path) -> bool:
    """Write ``root/.gitignore`` unless a person's own is there; True when it was written."""
    path = root / ".gitignore"
    try:
        if path.is_symlink():
            return False  # a person's arrangement: never followed, never replaced
        # Only the earlier template, word for word, is replaced (its size tells most apart unread).
        if path.exists() and (path.stat().st_size != len(_EARLIER) or read_text_or_none(path, within=root) != _EARLIER):
            return False
        atomic_write_text(path, GITIGNORE, within=root)
    except OSError:
        return False  # a read-only folder: the store still works, git just sees everything
    return True
