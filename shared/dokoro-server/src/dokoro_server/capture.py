"""What every tool call leaves behind, kept off the request path: its outcome and latency for the
affective layer (:class:`FeedbackRecorder`) and the claimed session's time tracking
(:class:`SessionTimeTracker`).

:func:`capture_middleware` times each call and hands it to the state's observers. An observer only
queues in memory; a background thread per writer writes the queue in batches, so a call never
waits on the database or the disk, and a database that is busy or gone costs dropped feedback
rows, never a failed or slowed tool (reference §4.12: "DB errors swallowed"). Readers flush
first: the feedback tools flush the recorder, and the workspace service writes its queued tool
uses before it reads ``session.json``.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext

from dokoro_server import identity
from dokoro_server.app import AppState
from dokoro_server.outcome import rejected, watching

__all__ = [
    "DeferredWriter",
    "FeedbackRecorder",
    "SessionTimeTracker",
    "capture_middleware",
    "flush_feedback",
]

log = logging.getLogger("dokoro")

# How long a writer lets work gather before writing it in one go.
FLUSH_EVERY_S = 0.25
# Bound on memory while the database is unavailable: the oldest outcomes are dropped first.
MAX_PENDING = 10_000
MAX_BATCH = 1_000


def capture_middleware() -> ServerMiddleware[Any]:
    """Middleware that hands every tool call's outcome (``isError`` or an exception = failure) and
    latency to the state's observers. Observers never fail the call they watch: their errors are
    logged and dropped."""

    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        app = ctx.lifespan_context
        if ctx.method != "tools/call" or not isinstance(app, AppState):
            return await call_next(ctx)
        started = time.perf_counter()
        ok = False
        with watching():
            try:
                outcome = await call_next(ctx)
                is_error = outcome.get("isError") if isinstance(outcome, dict) else getattr(outcome, "is_error", False)
                ok = not is_error
                return outcome
            finally:
                if app.observers and app.opener.ready:  # observers ask rejected() inside this call
                    _notify(app, str((ctx.params or {}).get("name", "?")), ok, (time.perf_counter() - started) * 1000)

    return middleware


def _notify(app: AppState, name: str, ok: bool, latency_ms: float) -> None:
    for observer in app.observers:
        try:
            observer(app, name, ok, latency_ms)
        except Exception:  # an observer must never break the tool it watches
            log.exception("dokoro: tool observer %s failed", getattr(observer, "__name__", observer))


class DeferredWriter:
    """A tool observer whose writes happen in a background thread, in batches.

    Subclasses queue in :meth:`__call__` (cheap, in memory) then call :meth:`wake`, and write
    the queue in :meth:`flush`. :meth:`close` stops the thread and flushes what is left.
    """

    thread_name = "dokoro-writer"

    def __init__(self) -> None:
        self._lock = threading.Lock()  # guards the thread's start and stop
        self._flushing = threading.Lock()  # one batch written at a time, in call order
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __call__(self, app: AppState, tool_name: str, ok: bool, latency_ms: float) -> None:
        raise NotImplementedError

    def flush(self) -> int:
        """Write everything queued now; returns how much was written. Never raises."""
        raise NotImplementedError

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def wake(self) -> None:
        """Ask the background thread to write soon (starting it on first use)."""
        if self._thread is None:
            with self._lock:
                if self._thread is None and not self._stop.is_set():
                    self._thread = threading.Thread(target=self._run, name=self.thread_name, daemon=True)
                    self._thread.start()
        self._wake.set()

    def _run(self) -> None:
        # The first batch is written at once: its statement is prepared then, off the request path,
        # rather than by the exit's flush of a short session (the client waits for the exit).
        gather = 0.0
        while True:
            self._wake.wait()
            if self._stop.wait(gather):
                return  # close() writes what is left
            self._wake.clear()
            self.flush()
            gather = FLUSH_EVERY_S

    def close(self) -> None:
        """Stop the writer and write what is left."""
        with self._lock:
            self._stop.set()
            thread = self._thread
        self._wake.set()
        if thread is not None:
            thread.join(timeout=10)
        self.flush()


class FeedbackRecorder(DeferredWriter):
    """Records ``success``/``failure`` and latency of every tool call (affective layer); a call
    refused for its arguments (the caller's mistake, see :mod:`dokoro_server.outcome`) is
    recorded as ``rejected``, apart from the tool's failures.

    The agent is the authenticated one (shared HTTP server), else the server's
    ``DOKORO_AGENT_ID`` (``unknown`` by default).
    """

    thread_name = "dokoro-feedback"

    def __init__(self, app: AppState, agent_id: str) -> None:
        super().__init__()
        self._app = app
        self._agent_id = agent_id or "unknown"
        self._pending: collections.deque[tuple[str, str, str, int, float]] = collections.deque()
        self._pending_lock = threading.Lock()
        self.written = 0
        self.dropped = 0

    def __call__(self, app: AppState, tool_name: str, ok: bool, latency_ms: float) -> None:
        if self.stopped:
            return
        agent = identity.authenticated_agent() or self._agent_id
        # A call refused for its arguments is the caller's mistake: counted apart from the tool's failures.
        result = "success" if ok else "rejected" if rejected() else "failure"
        item = (agent, tool_name, result, max(0, round(latency_ms)), time.perf_counter())
        with self._pending_lock:
            self._pending.append(item)
            if len(self._pending) > MAX_PENDING:
                self._pending.popleft()
                self.dropped += 1
        self.wake()

    def flush(self) -> int:
        """Write every queued outcome now; returns how many were written. Never raises."""
        written = 0
        with self._flushing:
            while True:
                with self._pending_lock:
                    batch = [self._pending.popleft() for _ in range(min(MAX_BATCH, len(self._pending)))]
                if not batch:
                    return written
                try:
                    from dokoro_store import Outcome

                    now = time.perf_counter()
                    outcomes = [
                        Outcome(agent, tool, outcome, latency_ms=latency, confidence=1.0, age_seconds=now - at)
                        for agent, tool, outcome, latency, at in batch
                    ]
                    written += self._app.store.feedback.record_many(outcomes)
                except Exception:  # capture must never break or stall the server it watches
                    self.dropped += len(batch)
                    log.warning(
                        "dokoro: dropped %d tool outcome(s): could not write feedback", len(batch), exc_info=True
                    )
                else:
                    self.written += len(batch)


class SessionTimeTracker(DeferredWriter):
    """Counts every tool call toward the claimed session's time tracking (``.mcp/session.json``).

    The workspace service queues the call in memory; this writer writes the queue a moment
    later (the reference flushes every 5 s), and the service itself writes it before it reads
    the session's timing (status, dump, a new claim).
    """

    thread_name = "dokoro-session-time"

    def __init__(self, app: AppState) -> None:
        super().__init__()
        self._app = app

    def __call__(self, app: AppState, tool_name: str, ok: bool, latency_ms: float) -> None:
        if app.store.working.workspace.record_tool_use(tool_name):
            self.wake()

    def flush(self) -> int:
        if not self._app.opener.ready:
            return 0
        with self._flushing:
            try:
                return self._app.store.working.workspace.flush_tool_uses()
            except Exception:  # time tracking must never break the server it watches
                log.warning("dokoro: could not write the session's time tracking", exc_info=True)
                return 0


def flush_feedback(app: AppState) -> None:
    """Write the outcomes queued by this server's recorder (before reading feedback)."""
    for observer in app.observers:
        if isinstance(observer, FeedbackRecorder):
            observer.flush()
