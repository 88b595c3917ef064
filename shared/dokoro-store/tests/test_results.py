"""The typed results: pure pydantic modules, serialised in the API's one timestamp format."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone

import dokoro_store.results
from dokoro_store.results.working import WorkspaceStatus

_HEAVY = ("sqlalchemy", "sqlmodel", "numpy", "lancedb", "pyarrow")


def test_importing_every_results_module_loads_no_database_or_numeric_library() -> None:
    modules = [f"dokoro_store.results.{m.name}" for m in pkgutil.iter_modules(dokoro_store.results.__path__)]
    assert {"dokoro_store.results.working", "dokoro_store.results.plans"} <= set(modules)
    probe = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        f"print(json.dumps(sorted(m for m in {_HEAVY!r} if m in sys.modules)))\n"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert json.loads(loaded) == []


def test_timestamps_serialise_as_utc_iso_seconds_and_read_back() -> None:
    paris = timezone(timedelta(hours=2))
    status = WorkspaceStatus(active=True, session_start=datetime(2026, 6, 11, 0, 23, 15, 999, tzinfo=paris))

    data = status.model_dump(mode="json")

    assert data["session_start"] == "2026-06-10T22:23:15Z"
    assert data["lock_expires_at"] is None
    assert WorkspaceStatus.model_validate(data).session_start == datetime(2026, 6, 10, 22, 23, 15, tzinfo=UTC)
