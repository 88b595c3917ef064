"""The lifespan of a dokoro server: one :class:`AppState` per session, its observers, and the
store, opened in the background unless the caller hands one over.

:func:`store_middleware` starts opening the store once the client's handshake is done (right
after the first ``tools/list`` answer, as a rule) when nothing has started it yet: a stdio server
starts it once the MCP SDK is loaded, before the handshake (``dokoro_server.entry``); a server built
in a test or for HTTP opens it here. A tool call waits for the store while it is
opening, and a store that cannot be opened answers every tool call with the reason and the fix.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp_types import CallToolResult, TextContent

from dokoro_server.app import AppState, StoreOpener
from dokoro_server.capture import DeferredWriter, FeedbackRecorder, SessionTimeTracker
from dokoro_server.resources import serving
from dokoro_server.settings import DokoroSettings

if TYPE_CHECKING:
    from dokoro_store import Clock, Store
    from mcp.server.mcpserver import MCPServer

__all__ = ["app_lifespan", "store_middleware"]

log = logging.getLogger("dokoro")

# The handshake: every other request (tools/list first of all) starts opening the store, once answered.
_HANDSHAKE = frozenset({"initialize", "server/discover", "ping", "logging/setLevel", "subscriptions/listen"})


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


def store_middleware() -> ServerMiddleware[Any]:
    """Middleware that opens the session's store after the handshake and holds tool calls until
    it is open (or answers them with why it cannot be)."""

    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        app = ctx.lifespan_context
        if not isinstance(app, AppState):
            return await call_next(ctx)
        with serving(app):  # fixed-URI resources get no context from the SDK: they find the state here
            return await _handle(app, ctx, call_next)

    return middleware


async def _handle(app: AppState, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Resources and prompts wait for the store as they read it (``app.store``); tool calls wait here."""
    if ctx.method != "tools/call":
        answer = await call_next(ctx)
        if ctx.request_id is not None and ctx.method not in _HANDSHAKE:
            _start_opening(app, ctx.method)
        return answer
    _start_opening(app, ctx.method)
    if not app.opener.ready:  # the first call(s): wait for the store, off the event loop
        await anyio.to_thread.run_sync(app.opener.wait, abandon_on_cancel=True)
        if app.opener.failed:  # every call says why and how to fix it, whatever the tool
            from dokoro_server.shown_paths import rewrite_for  # the reason names no folder of the server's disk

            reason = rewrite_for(app)(app.opener.reason())
            return CallToolResult(content=[TextContent(type="text", text=reason)], is_error=True)
    with app.store.background.foreground():  # the store's background steps give way while a call runs
        return await call_next(ctx)


def _start_opening(app: AppState, after: str) -> None:
    if not app.opener.started:
        # tests/test_architecture.py reads this line: what was imported before it is what the
        # server needed to answer tools/list.
        log.debug("dokoro: opening the store in the background (on %s)", after)
        app.opener.start()
