"""The hooks' journal: when each hook last ran and what it did, in the store's ``.dokoro/hooks.log``.

A hook never speaks to the person (its output goes to the agent, or nowhere), so what it did and
why it said nothing — no store, capture off, a time-out, an error — is written here, one JSON line
per run, and ``dokoro hooks status`` reads it back. The file is bounded: past 1 MiB it is moved to
``hooks.log.1`` (the one before is dropped). Lines are redacted like every file the store writes.
"""

from __future__ import annotations

import contextlib
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dokoro_store.paths import StorePaths

__all__ = ["JOURNAL_NAME", "journal_path", "last_runs", "record_run"]

JOURNAL_NAME = "hooks.log"
_MAX_BYTES = 1024 * 1024
_TAIL_BYTES = 256 * 1024


def journal_path(paths: StorePaths) -> Path:
    return paths.data_dir / JOURNAL_NAME


def record_run(paths: StorePaths, event: str, outcome: str, detail: str = "", **extra: Any) -> None:
    """Append one run; never raises (a journal that cannot be written must not fail the hook)."""
    from dokoro_store.walls.files import append_text

    entry = {"at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), "event": event, "outcome": outcome}
    if detail:
        entry["detail"] = detail[:1000]
    entry.update({k: v for k, v in extra.items() if v is not None})
    path = journal_path(paths)
    with contextlib.suppress(OSError):
        if not paths.root.is_dir():
            return  # no store folder here: nothing to write into
        paths.data_dir.mkdir(exist_ok=True)  # a team store (its rows in PostgreSQL) may not have it yet
        if path.exists() and path.stat().st_size > _MAX_BYTES:
            path.replace(path.with_name(JOURNAL_NAME + ".1"))
        append_text(path, json.dumps(entry, ensure_ascii=False) + "\n", within=paths.root)


def last_runs(paths: StorePaths) -> dict[str, dict[str, Any]]:
    """The last run of each event (by event name), from the journal's tail."""
    path = journal_path(paths)
    try:
        with path.open("rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - _TAIL_BYTES))
            tail = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return {}
    runs: dict[str, dict[str, Any]] = {}
    for line in tail.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("event"), str):
            runs[entry["event"]] = entry
    return runs
