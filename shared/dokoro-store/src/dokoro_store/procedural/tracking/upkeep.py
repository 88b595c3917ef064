"""Backups, restores and health of the tracking rows and their renderings (reference §2.16).

A backup is the store's own JSON export format (``dokoro export``), holding the tracking tables
only, written to ``tracking/backups/backup-YYYYMMDD-HHMMSS.json``; ``dokoro import`` reads it too.
A restore puts back rows that are missing or older than the backup's, and is a dry run unless
told otherwise; renderings are rows' consequences, so restoring rows re-renders them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Table

from dokoro_store.clock import Clock, iso, parse_iso
from dokoro_store.db.engine import Database
from dokoro_store.db.migrate import HEADS, schema_label
from dokoro_store.errors import InvalidArgumentError, NotFoundError
from dokoro_store.models import TaskTimer, TrackingEvent, TrackingItem, WeeklyItem
from dokoro_store.moving.backup import BACKUP_FORMAT, BACKUP_VERSION
from dokoro_store.moving.transfer import canonical_row, decode_row, read_rows
from dokoro_store.paths import StorePaths
from dokoro_store.results.tracking import BackupInfo, RestoreItem
from dokoro_store.walls import containment as walls
from dokoro_store.walls.files import atomic_write_text
from dokoro_store.walls.secrets import redact

__all__ = ["BACKUP_DIR", "TRACKING_TABLES", "Restore", "TrackingBackups"]

BACKUP_DIR = "tracking/backups"
_NAME = re.compile(r"^backup-\d{8}-\d{6}(?:-\d+)?\.json$")
# Text columns a restore writes: cleaned like every other write path of the store.
_TEXT_COLUMNS = ("title", "description", "solution", "notes", "plan_markdown", "note")


def _table(model: Any) -> Table:
    table: Table = model.__table__
    return table


def _tables() -> dict[str, Table]:
    return {_table(m).name: _table(m) for m in (TrackingItem, TrackingEvent, WeeklyItem, TaskTimer)}


TRACKING_TABLES = ("tracking_items", "tracking_events", "tracking_weekly_items", "tracking_tasks")


@dataclass
class Restore:
    """What a restore would do (or did): rows to write per table, and the tallies."""

    source: Path | None
    items: list[RestoreItem]
    rows: dict[str, list[dict[str, Any]]]
    identical: int = 0
    newer_here: int = 0


class TrackingBackups:
    def __init__(self, paths: StorePaths, db: Database, clock: Clock) -> None:
        self._paths = paths
        self._db = db
        self._clock = clock

    @property
    def folder(self) -> Path:
        return self._paths.root / BACKUP_DIR

    def relative(self, path: Path) -> str:
        return self._paths.relative(path)

    def counts(self) -> dict[str, int]:
        from sqlalchemy import func, select

        tables = _tables()
        with self._db.read() as session:
            return {
                name: int(session.execute(select(func.count()).select_from(tables[name])).scalar_one())
                for name in TRACKING_TABLES
            }

    # ------------------------------------------------------------------ backup
    def create(self) -> BackupInfo:
        now = self._clock.now()
        tables = _tables()
        document = {
            "format": BACKUP_FORMAT,
            "version": BACKUP_VERSION,
            "schema_revision": schema_label(HEADS),
            "exported_at": iso(now),
            "backend": self._db.dialect,
            "scope": "tracking",
            "tables": {name: read_rows(self._db, tables[name]) for name in TRACKING_TABLES},
        }
        path = self.folder / f"backup-{now:%Y%m%d-%H%M%S}.json"
        counter = 2
        while path.exists():
            path = self.folder / f"backup-{now:%Y%m%d-%H%M%S}-{counter}.json"
            counter += 1
        atomic_write_text(path, json.dumps(document, indent=2, ensure_ascii=False) + "\n", within=self._paths.root)
        rows = {name: len(document["tables"][name]) for name in TRACKING_TABLES}  # type: ignore[index]
        return BackupInfo(path=self._paths.relative(path), created_at=now, rows=rows, age_seconds=0.0)

    def latest(self) -> tuple[Path, dict[str, Any]] | None:
        """The newest readable backup and its document (unreadable ones are skipped)."""
        if not self.folder.is_dir():
            return None
        files = walls.scan(self._paths.root, self.folder, suffix=".json", skip_dir=lambda _name: True)
        for path in sorted((p for p in files if _NAME.match(p.name)), reverse=True):
            try:
                document = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(document, dict) and document.get("format") == BACKUP_FORMAT:
                return path, document
        return None

    def info(self, path: Path, document: dict[str, Any]) -> BackupInfo:
        created = parse_iso(str(document.get("exported_at")))
        tables = document.get("tables") or {}
        return BackupInfo(
            path=self._paths.relative(path),
            created_at=created,
            rows={name: len(tables.get(name) or []) for name in TRACKING_TABLES},
            age_seconds=round((self._clock.now() - created).total_seconds(), 1),
        )

    def changed_since(self, hours: int = 24) -> list[str]:
        from sqlmodel import col, select

        cutoff = self._clock.now() - timedelta(hours=hours)
        with self._db.read() as session:
            return list(
                session.exec(
                    select(TrackingItem.id)
                    .where(col(TrackingItem.updated_at) >= cutoff)
                    .order_by(col(TrackingItem.updated_at).desc())
                )
            )

    # ------------------------------------------------------------------ restore
    def plan_restore(self, kind: str, source: str) -> Restore:
        """Compare the latest backup with the rows: what is missing or older here."""
        found = self.latest()
        if found is None:
            if source == "backup":
                raise NotFoundError(
                    f"No backup under {BACKUP_DIR}/; write one with dokoro_backup_verify create_backup=true"
                )
            return Restore(None, [], {})
        path, document = found
        if int(document.get("version", 0)) > BACKUP_VERSION:
            raise InvalidArgumentError(
                f"{path.name} was written by a newer dokoro (backup version {document['version']})"
            )
        incoming: dict[str, list[dict[str, Any]]] = document.get("tables") or {}
        tables = _tables()
        wanted = {"issues": ("issue",), "features": ("feature",), "all": ("issue", "feature")}[kind]
        plan = Restore(path, [], {name: [] for name in TRACKING_TABLES})
        restored_items: set[str] = set()
        scope = ["tracking_items"] + (["tracking_weekly_items", "tracking_tasks"] if kind == "all" else [])
        for name in scope:
            table = tables[name]
            here = {row["id"]: row for row in read_rows(self._db, table)}
            for raw in incoming.get(name) or []:
                theirs = canonical_row(table, decode_row(table, raw))
                if name == "tracking_items" and theirs.get("kind") not in wanted:
                    continue
                ours = here.get(theirs["id"])
                if ours == theirs:
                    plan.identical += 1
                    continue
                if ours is not None and str(ours.get("updated_at")) >= str(theirs.get("updated_at")):
                    plan.newer_here += 1
                    continue
                reason = "missing" if ours is None else "older"
                title = theirs.get("title")
                plan.items.append(
                    RestoreItem(table=name, key=str(theirs["id"]), title=title, reason=reason, applied=False)
                )
                plan.rows[name].append(theirs)
                if name == "tracking_items":
                    restored_items.add(str(theirs["id"]))
        events = tables["tracking_events"]
        have = {(r["item_id"], r["seq"]) for r in read_rows(self._db, events)}
        for raw in incoming.get("tracking_events") or []:
            row = canonical_row(events, decode_row(events, raw))
            if row["item_id"] in restored_items and (row["item_id"], row["seq"]) not in have:
                plan.rows["tracking_events"].append(row)
        return plan

    def apply(self, plan: Restore) -> list[RestoreItem]:
        """Write the plan's rows (items and events through their own rules: whole rows replaced)."""
        tables = _tables()
        models: dict[str, Any] = {
            "tracking_items": TrackingItem,
            "tracking_weekly_items": WeeklyItem,
            "tracking_tasks": TaskTimer,
        }
        with self._db.write() as session:
            for name in ("tracking_items", "tracking_weekly_items", "tracking_tasks"):
                model = models[name]
                for row in plan.rows.get(name) or []:
                    values = _cleaned(decode_row(tables[name], row))
                    existing = session.get(model, values["id"], with_for_update=True)
                    if existing is None:
                        session.add(model(**values))
                    else:
                        for column, value in values.items():
                            setattr(existing, column, value)
                        session.add(existing)
            session.flush()
            for row in plan.rows.get("tracking_events") or []:
                values = _cleaned(decode_row(tables["tracking_events"], row))
                if session.get(TrackingEvent, (values["item_id"], values["seq"])) is None:
                    session.add(TrackingEvent(**values))
        return [item.model_copy(update={"applied": True}) for item in plan.items]


def _cleaned(values: dict[str, Any]) -> dict[str, Any]:
    for column in _TEXT_COLUMNS:
        if isinstance(values.get(column), str):
            values[column] = redact(values[column]).text
    return values


def when(moment: datetime | None) -> str:
    return iso(moment) if moment else "—"
