"""dokoro storage library: every table, file and domain rule of the memory layers.

Servers open one :class:`Store` per process and call its services; nothing else touches
the database or the workspace files.

Names are resolved on first use (PEP 562), so ``import dokoro_store.results.x`` (the typed
results tools return, pure pydantic) never drags in SQLAlchemy at server start.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dokoro_store.clock import Clock, FrozenClock
    from dokoro_store.errors import (
        ConflictError,
        DokoroError,
        InvalidArgumentError,
        NoStoreError,
        NotFoundError,
        NoWorkspaceError,
        StoreUnavailableError,
        WorkspaceLockedError,
    )
    from dokoro_store.paths import StorePaths, resolve_dokoro_path
    from dokoro_store.store import Store, WorkingMemory

__all__ = [
    "Clock",
    "ConflictError",
    "DokoroError",
    "FrozenClock",
    "InvalidArgumentError",
    "NoStoreError",
    "NoWorkspaceError",
    "NotFoundError",
    "Store",
    "StorePaths",
    "StoreUnavailableError",
    "WorkingMemory",
    "WorkspaceLockedError",
    "resolve_dokoro_path",
]

_HOMES = {
    "Clock": "dokoro_store.clock",
    "FrozenClock": "dokoro_store.clock",
    "ConflictError": "dokoro_store.errors",
    "DokoroError": "dokoro_store.errors",
    "InvalidArgumentError": "dokoro_store.errors",
    "NoWorkspaceError": "dokoro_store.errors",
    "NotFoundError": "dokoro_store.errors",
    "NoStoreError": "dokoro_store.errors",
    "StoreUnavailableError": "dokoro_store.errors",
    "WorkspaceLockedError": "dokoro_store.errors",
    "StorePaths": "dokoro_store.paths",
    "resolve_dokoro_path": "dokoro_store.paths",
    "Store": "dokoro_store.store",
    "WorkingMemory": "dokoro_store.store",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'dokoro_store' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
