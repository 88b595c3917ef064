"""Opening the store for a command, the same way the servers do."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # typing only: the commands import the store and the kit when they run
    from dokoro_server import DokoroSettings
    from dokoro_store import Store

__all__ = ["open_for_command", "settings_for"]


def settings_for(path: Path | None, database_url: str | None = None, embedder: str | None = None) -> DokoroSettings:
    from dokoro_server import DokoroSettings

    overrides: dict[str, Any] = {}
    if embedder is not None:
        overrides["embedder"] = embedder
    if path is not None:
        overrides["path"] = path
    if database_url is not None:
        overrides["database_url"] = database_url
    return DokoroSettings(**overrides)


def open_for_command(path: Path | None, database_url: str | None = None, embedder: str | None = None) -> Store:
    """The store named by ``--path``/``DOKORO_PATH`` and ``DOKORO_DATABASE_URL``; exits 2 with the
    reason when it cannot be opened. ``embedder`` overrides ``DOKORO_EMBEDDER`` (``dokoro reembed``)."""
    from dokoro_server import open_store_or_exit

    store: Store = open_store_or_exit(settings_for(path, database_url, embedder), Path.cwd())
    return store
