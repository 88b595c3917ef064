"""Reading an original dokoro database: the connection, what it holds once read, and the
conversions of its values (times, JSON, string lists, objects, rows of a table)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dokoro_store.clock import parse_iso


def _connect(path: Path, *, immutable: bool = False) -> sqlite3.Connection:
    mode = "ro&immutable=1" if immutable else "ro"
    connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode={mode}", uri=True)
    connection.row_factory = sqlite3.Row
    return connection


@dataclass
class OriginalContents:
    """What an original store holds, as rows of this dokoro's tables (python values)."""

    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # How many of each kind the original held: "sessions", "plans", ... (what the counts verify).
    counts: dict[str, int] = field(default_factory=dict)
    # What was left behind and why (a bad file, a table this dokoro rebuilds itself).
    notes: list[str] = field(default_factory=list)

    def add(self, table: str, row: dict[str, Any]) -> None:
        self.tables.setdefault(table, []).append(row)


def _when(value: Any, fallback: datetime | None = None) -> datetime | None:
    """A timestamp of the original (ISO with or without ms or ``Z``, ``YYYY-MM-DD HH:MM:SS``,
    unix seconds or ms) as an aware UTC datetime; ``fallback`` when absent or unreadable."""
    if value is None or value == "":
        return fallback
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = value / 1000 if value > 10**11 else value
        try:
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            return fallback
    try:
        return parse_iso(str(value))
    except ValueError:
        return fallback


def _json(value: Any) -> Any:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return None


def _strings(value: Any) -> list[str] | None:
    parsed = _json(value)
    if not isinstance(parsed, list):
        return None
    out: list[str] = []
    for item in parsed:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            # key_decisions_json: [{decision, reasoning, outcome}]
            parts = [str(item.get(k)) for k in ("decision", "reasoning", "outcome") if item.get(k)]
            if parts:
                out.append(" — ".join(parts))
        elif item is not None:
            out.append(str(item))
    return out or None


def _object(value: Any) -> dict[str, Any] | None:
    parsed = _json(value)
    return parsed if isinstance(parsed, dict) else None


def _rows(connection: sqlite3.Connection, table: str, tables: set[str]) -> Iterator[sqlite3.Row]:
    if table not in tables:
        return iter(())
    return iter(connection.execute(f'SELECT * FROM "{table}"'))
