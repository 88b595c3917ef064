"""The lifespan of a dokoro server: one :class:`AppState` per session, its observers, and the
store, opened in the background unless the caller hands one over."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from dokoro_server.app import AppState, StoreOpener
from dokoro_server.capture import DeferredWriter, FeedbackRecorder, SessionTimeTracker
from dokoro_server.settings import DokoroSettings

if TYPE_CHECKING:
    from dokoro_store import Clock, Store
    from mcp.server.mcpserver import MCPServer

__all__ = ["app_lifespan"]


def app_lifespan(
    settings: DokoroSettings,
    cwd: Path | None = None,
    clock: Clock | None = None,
    store: Store | StoreOpener | None = None,
) -> Callable[[MCPServer[AppState]], AbstractAsyncContextManager[AppState]]:
    """A lifespan that gives every tool the store.

    ``store`` is an open store (owned by the caller; every session shares it) or a
    :class:`StoreOpener` (owned by the caller, who closes it); otherwise each session opens
    the store the settings name, in the background, and closes it at the end. ``clock``
    replaces the real UTC clock (tests freeze and move time with it).
    """

    @asynccontextmanager
    async def lifespan(_server: MCPServer[AppState]) -> AsyncIterator[AppState]:
        here = cwd or Path.cwd()
        opened = store if store is not None else StoreOpener.for_settings(settings, here, clock)
        app = AppState(store=opened, settings=settings, cwd=here)
        owned = app.opener if store is None else None
        writers: list[DeferredWriter] = [SessionTimeTracker(app)]
        if settings.auto_feedback:
            writers.append(FeedbackRecorder(app, settings.agent_id))
        app.observers.extend(writers)
        try:
            yield app
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(_close, writers, owned)

    return lifespan


def _close(writers: list[DeferredWriter], owned: StoreOpener | None) -> None:
    for writer in writers:
        writer.close()
    if owned is not None:
        owned.close()
