"""What ``dokoro browse`` lists: items, categories and their summaries, and the small formatting
they share (ages, stamps, files); the loaders of each category are in ``data``."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dokoro_store import Store


log = logging.getLogger("dokoro.browse")


@dataclass(frozen=True)
class Item:
    """One line of a category. ``ref`` is what actions need (a plan id, a claim key, a memory id);
    ``path`` the file behind a file item."""

    id: str
    label: str
    sublabel: str = ""
    # file | plan | claim | agent | question | feedback | entity | sweep | memory | proposal | tracking | session
    # | error
    kind: str = "file"
    archived: bool = False
    path: Path | None = None
    ref: str | None = None
    status: str | None = None
    dim: bool = False
    detail: str | None = None  # preview text known at load time (rows); files are read when opened
    flag: str = ""  # a short warning shown after the label (a stale memory's "⚠ stale: ...")

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "label": self.label,
            "sublabel": self.sublabel,
            "kind": self.kind,
            "archived": self.archived,
        }


@dataclass(frozen=True)
class Category:
    id: str
    label: str
    load: Callable[[Store], list[Item]]
    dirs: Callable[[Path], list[Path]] | None = None  # None: database rows (polled)
    badge: Callable[[list[Item]], int] = field(default=len)
    hint: str = ""  # where the items come from, shown beside the label


@dataclass(frozen=True)
class CategorySummary:
    id: str
    label: str
    count: int
    hint: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "label": self.label, "count": self.count}


# ---------------------------------------------------------------------- helpers
def _ago(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    if seconds < 86400:
        return f"{seconds // 3600}h"
    return f"{seconds // 86400}d"


def _minutes_left(seconds: int) -> str:
    if seconds <= 0:
        return "expired"
    return f"{math.ceil(seconds / 60)}m"


def _stamp(moment: datetime | None) -> str:
    return "-" if moment is None else moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M")


def _mtime(path: Path) -> datetime:
    return datetime.fromtimestamp(path.stat().st_mtime, UTC)


def _md_files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted((p for p in folder.glob("*.md") if p.is_file()), key=lambda p: p.name, reverse=True)


def _file_item(store: Store, path: Path, sublabel: str, *, archived: bool = False) -> Item:
    relative = store.paths.relative(path)
    return Item(id=relative, label=path.name, sublabel=sublabel, kind="file", archived=archived, path=path)


def _unavailable(exc: Exception) -> list[Item]:
    log.warning("dokoro browse: a category failed to load", exc_info=True)
    reason = f"{type(exc).__name__}: {exc}"[:200]
    return [Item(id="error", label="(failed to load)", sublabel=reason, kind="error")]
