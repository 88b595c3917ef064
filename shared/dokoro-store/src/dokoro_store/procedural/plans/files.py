"""The plan mirrors of a workspace folder: ``.mcp/plans/<id>.json``, the index, the archive.

The rows are the truth; these files are renderings for people and the reference's tools,
written atomically. ``index.json`` maps id → title (or ``{title, archived, archive_path}``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlmodel import col, select

from dokoro_store.db.engine import Database
from dokoro_store.errors import InvalidArgumentError
from dokoro_store.models import Plan as PlanRow
from dokoro_store.paths import StorePaths
from dokoro_store.walls.containment import is_inside, plain_file
from dokoro_store.walls.files import atomic_write_text

__all__ = ["MIRROR_LOCK", "PlanFiles", "dump_json", "is_plan_id", "plan_files", "safe_id"]

# Every writer of the mirrors (and the archive move) holds this folder lock.
MIRROR_LOCK = "plans"
_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def is_plan_id(plan_id: str) -> bool:
    return _SAFE_ID.match(plan_id) is not None


def safe_id(plan_id: str) -> str:
    """``plan_id``, checked: ids become file names, so one must never walk out of the plans folder."""
    if not is_plan_id(plan_id):
        raise InvalidArgumentError(f"{plan_id!r} is not a plan id; ids look like plan-2026-06-10-22h23-wednesday-x")
    return plan_id


def dump_json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class PlanFiles:
    """Where the plan mirrors of one workspace folder live."""

    root: Path
    store_root: Path  # the workspace folder every mirror stays in

    @property
    def index(self) -> Path:
        return self.root / "index.json"

    @property
    def archive(self) -> Path:
        return self.root / "archive"

    def live(self, plan_id: str) -> Path:
        return self.root / f"{safe_id(plan_id)}.json"

    def archived(self, relative: str) -> Path:
        return self.root / relative

    def find_archived(self, plan_id: str) -> str | None:
        """The ``archive/YYYY-MM/<id>.json`` partition holding a copy of the plan, newest first."""
        name = f"{safe_id(plan_id)}.json"
        if not self.archive.is_dir() or not is_inside(self.store_root, self.archive):
            return None
        months = (p for p in self.archive.iterdir() if p.is_dir() and not p.is_symlink())
        for month in sorted(months, reverse=True):
            if plain_file(self.store_root, month / name):
                return f"archive/{month.name}/{name}"
        return None

    def write_index(self, db: Database) -> None:
        """Rewrite ``index.json`` from the committed rows (the caller holds :data:`MIRROR_LOCK`)."""
        with db.read() as session:
            rows = list(session.exec(select(PlanRow).order_by(col(PlanRow.created_at), col(PlanRow.id))))
        index: dict[str, Any] = {}
        for row in rows:
            if row.archive_path:
                index[row.id] = {"title": row.title, "archived": True, "archive_path": row.archive_path}
            else:
                index[row.id] = row.title
        atomic_write_text(self.index, dump_json(index), within=self.store_root)


def plan_files(paths: StorePaths) -> PlanFiles:
    return PlanFiles(paths.mcp_dir / "plans", paths.root)
