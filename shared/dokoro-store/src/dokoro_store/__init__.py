"""dokoro storage library: every table, file and domain rule of the memory layers.

Servers open one :class:`Store` per process and call its services; nothing else touches
the database or the workspace files.
"""

from dokoro_store.clock import Clock, FrozenClock
from dokoro_store.errors import (
    ConflictError,
    DokoroError,
    InvalidArgumentError,
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
    "NoWorkspaceError",
    "NotFoundError",
    "Store",
    "StorePaths",
    "StoreUnavailableError",
    "WorkingMemory",
    "WorkspaceLockedError",
    "resolve_dokoro_path",
]
