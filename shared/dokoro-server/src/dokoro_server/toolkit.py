"""What every dokoro server shares: the application state, tool registration and results.

Servers register plain typed functions through :func:`add_tools`; the wrapper turns the
store's :class:`~dokoro_store.DokoroError` into an MCP error result whose message tells the
agent how to fix the call, and lets anything unexpected surface as a logged crash.
"""

from __future__ import annotations

import functools
import logging
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel

from dokoro_server.settings import DokoroSettings

if TYPE_CHECKING:
    from dokoro_store import Clock

__all__ = [
    "AppState",
    "ToolSpec",
    "acting_agent",
    "add_tools",
    "app_lifespan",
    "authenticated_agent",
    "capture_middleware",
    "card",
    "open_store",
    "open_store_or_exit",
    "result",
    "secret_notice",
    "state",
]

log = logging.getLogger("dokoro")

ToolObserver = Callable[["AppState", str, bool, float], None]


@dataclass
class AppState:
    """Everything a tool can reach: the open store, the settings, the caller's cwd."""

    store: Any  # dokoro_store.Store, typed loosely so the server module imports fast
    settings: DokoroSettings
    cwd: Path
    observers: list[ToolObserver] = field(default_factory=list)


def state(ctx: Context) -> AppState:
    """The :class:`AppState` of the running server, from a tool's context."""
    app = ctx.request_context.lifespan_context
    if not isinstance(app, AppState):  # pragma: no cover - a wiring bug, not a user error
        raise RuntimeError("dokoro tools need the dokoro lifespan (build the server with dokoro_server.build_server)")
    return app


def authenticated_agent() -> str | None:
    """The agent id of the bearer token of this request (shared HTTP server), if any."""
    from mcp.server.auth.middleware.auth_context import get_access_token

    token = get_access_token()
    return token.client_id if token is not None else None


def acting_agent(ctx: Context, claimed: str | None = None) -> str:
    """Who this call acts for: the authenticated agent, which may not claim to be another.

    Without authentication (stdio, loopback HTTP) it is ``claimed`` or ``DOKORO_AGENT_ID``.
    """
    authenticated = authenticated_agent()
    if authenticated is not None:
        if claimed and claimed != authenticated:
            raise ToolError(
                f"you are authenticated as {authenticated!r} and cannot act as {claimed!r}; "
                "omit agent_id or pass your own"
            )
        return authenticated
    return claimed or state(ctx).settings.agent_id


def store_root(settings: DokoroSettings, cwd: Path) -> Path:
    from dokoro_store import resolve_dokoro_path

    return resolve_dokoro_path(str(settings.path) if settings.path else None, cwd)


def app_lifespan(
    settings: DokoroSettings,
    cwd: Path | None = None,
    clock: Clock | None = None,
    store: Any = None,
) -> Callable[[MCPServer[AppState]], Any]:
    """A lifespan that gives every tool the store.

    With ``store`` (already open, owned by the caller) every session shares it; otherwise the
    lifespan opens one from the settings and closes it at the end. ``clock`` replaces the real
    UTC clock (tests freeze and move time with it).
    """

    @asynccontextmanager
    async def lifespan(_server: MCPServer[AppState]) -> AsyncIterator[AppState]:
        here = cwd or Path.cwd()
        opened = store
        if opened is None:
            opened = await anyio.to_thread.run_sync(open_store, settings, here, clock)
        app = AppState(store=opened, settings=settings, cwd=here)
        app.observers.append(_track_session_time)
        recorder = None
        if settings.auto_feedback:
            from dokoro_server.capture import FeedbackRecorder

            recorder = FeedbackRecorder(opened, settings.agent_id)
            app.observers.append(recorder)
        try:
            yield app
        finally:
            if recorder is not None:
                with anyio.CancelScope(shield=True):
                    await anyio.to_thread.run_sync(recorder.close)
            if store is None:
                opened.close()

    return lifespan


def open_store(settings: DokoroSettings, cwd: Path, clock: Clock | None = None) -> Any:
    """Open the store the settings name (folder, or ``DOKORO_DATABASE_URL``)."""
    from dokoro_store import Store
    from dokoro_store.retrieval import RetrievalConfig

    retrieval = RetrievalConfig(
        embedder=settings.embedder,
        ollama_url=settings.ollama_url,
        ollama_timeout_s=settings.ollama_timeout_ms / 1000,
    )
    opened = Store.open(
        store_root(settings, cwd),
        database_url=settings.database_url,
        clock=clock,
        functional_relation_types=settings.functional_relation_type_set,
        retrieval=retrieval,
        memory_review=settings.memory_review,
    )
    if opened.recovered:
        log.warning("dokoro: finished %d interrupted compaction(s)", len(opened.recovered))
    return opened


def open_store_or_exit(settings: DokoroSettings, cwd: Path) -> Any:
    """Open the store for an entry point; a store that cannot be opened ends the process clearly.

    An unreachable team database is an error at start, never a silent local fall-back.
    """
    from dokoro_store import DokoroError

    try:
        return open_store(settings, cwd)
    except DokoroError as exc:
        print(f"dokoro: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


def _track_session_time(app: AppState, tool_name: str, _ok: bool, _latency_ms: float) -> None:
    app.store.working.workspace.record_tool_use(tool_name)


def capture_middleware() -> Callable[[ServerRequestContext[Any, Any], CallNext], Awaitable[HandlerResult]]:
    """Middleware that times every tool call and hands its outcome to the state's observers.

    An error result (``isError``) or an exception counts as a failure. Observers never fail
    the call they watch: their errors are logged and dropped.
    """

    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method != "tools/call":
            return await call_next(ctx)
        name = str((ctx.params or {}).get("name", "?"))
        started = time.perf_counter()
        ok = False
        try:
            outcome = await call_next(ctx)
            is_error = outcome.get("isError") if isinstance(outcome, dict) else getattr(outcome, "is_error", False)
            ok = not is_error
            return outcome
        finally:
            latency_ms = (time.perf_counter() - started) * 1000
            app = ctx.lifespan_context
            if isinstance(app, AppState) and app.observers:
                with anyio.CancelScope(shield=True):
                    await anyio.to_thread.run_sync(_notify, app, name, ok, latency_ms)

    return middleware


def _notify(app: AppState, name: str, ok: bool, latency_ms: float) -> None:
    for observer in app.observers:
        try:
            observer(app, name, ok, latency_ms)
        except Exception:  # an observer must never break the tool it watches
            log.exception("dokoro: tool observer %s failed", getattr(observer, "__name__", observer))


@dataclass(frozen=True)
class ToolSpec:
    """A tool function and how it behaves, for :func:`add_tools`."""

    fn: Callable[..., Any]
    title: str | None = None
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False


def _guarded(fn: Callable[..., Any]) -> Callable[..., Any]:
    from dokoro_store import DokoroError

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except DokoroError as exc:
            raise ToolError(str(exc)) from exc
        except OSError as exc:
            # The disk said no (permissions, space, a busy lock file): tell the agent what and
            # where, rather than a bare "Error executing tool".
            log.warning("dokoro: %s failed on the file system: %s", fn.__name__, exc)
            where = f" ({exc.filename})" if exc.filename else ""
            reason = exc.strerror or str(exc) or type(exc).__name__
            raise ToolError(f"file system error{where}: {reason}; check the path and permissions, then retry") from exc

    return wrapper


def add_tools(mcp: MCPServer[Any], specs: Sequence[ToolSpec]) -> None:
    """Register every spec on ``mcp`` (name = function name, description = docstring)."""
    for spec in specs:
        mcp.add_tool(
            _guarded(spec.fn),
            name=spec.fn.__name__,
            title=spec.title,
            annotations=ToolAnnotations(
                title=spec.title,
                read_only_hint=spec.read_only,
                destructive_hint=spec.destructive,
                idempotent_hint=spec.idempotent,
                open_world_hint=False,
            ),
        )


def result(text: str, data: BaseModel | None = None) -> CallToolResult:
    """A tool result: text the agent reads, plus the same facts as structured content."""
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=data.model_dump(mode="json") if data is not None else None,
    )


def secret_notice(kinds: Sequence[str]) -> str:
    """The sentence a tool adds when secrets were redacted from what it stored ('' when none)."""
    if not kinds:
        return ""
    from dokoro_store.secrets import Redaction

    return Redaction("", tuple(kinds)).notice()


def card(title: str, message: str = "", details: dict[str, Any] | None = None, status: str = "success") -> str:
    """Plain-markdown rendering of the reference's status cards."""
    icon = {"success": "✅", "error": "❌", "warning": "⚠️", "info": "ℹ️"}.get(status, "•")
    lines = [f"### {icon} {title}"]
    if message:
        lines += ["", message]
    if details:
        lines.append("")
        lines += [f"- **{key}:** {value}" for key, value in details.items() if value is not None]
    return "\n".join(lines)
