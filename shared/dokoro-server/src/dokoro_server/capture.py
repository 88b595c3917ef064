"""Automatic feedback capture: every tool call's outcome and latency, for the affective layer.

The :class:`FeedbackRecorder` is a tool observer (see ``capture_middleware``). It only queues the
outcome, in memory, and a background thread writes the queue in batches, so a call never waits
on the database, and a database that is busy or gone costs dropped feedback rows, never a failed
or slowed tool (reference §4.12: "DB errors swallowed"). Feedback tools flush the queue first,
so an agent reading its record sees its latest calls.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from typing import TYPE_CHECKING, Any

from dokoro_server import toolkit

if TYPE_CHECKING:
    from dokoro_server.toolkit import AppState

__all__ = ["FeedbackRecorder", "flush_feedback"]

log = logging.getLogger("dokoro")

# How long the writer lets outcomes gather before writing them in one transaction.
FLUSH_EVERY_S = 0.25
# Bound on memory while the database is unavailable: the oldest outcomes are dropped first.
MAX_PENDING = 10_000
MAX_BATCH = 1_000


class FeedbackRecorder:
    """Observer that records ``success``/``failure`` and latency of every tool call.

    The agent is the authenticated one (shared HTTP server), else the server's
    ``DOKORO_AGENT_ID`` (``unknown`` by default).
    """

    def __init__(self, store: Any, agent_id: str) -> None:
        self._store = store
        self._agent_id = agent_id or "unknown"
        self._pending: collections.deque[tuple[str, str, str, int, float]] = collections.deque()
        self._lock = threading.Lock()  # guards _pending and the thread's start
        self._flushing = threading.Lock()  # one batch written at a time, in call order
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.written = 0
        self.dropped = 0

    # ------------------------------------------------------------------ observer
    def __call__(self, app: AppState, tool_name: str, ok: bool, latency_ms: float) -> None:
        agent = toolkit.authenticated_agent() or self._agent_id
        item = (agent, tool_name, "success" if ok else "failure", max(0, round(latency_ms)), time.perf_counter())
        with self._lock:
            if self._stop.is_set():
                return
            self._pending.append(item)
            if len(self._pending) > MAX_PENDING:
                self._pending.popleft()
                self.dropped += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="dokoro-feedback", daemon=True)
                self._thread.start()
        self._wake.set()

    # ------------------------------------------------------------------ writer
    def _run(self) -> None:
        while True:
            self._wake.wait()
            if self._stop.wait(FLUSH_EVERY_S):
                return  # close() writes what is left
            self._wake.clear()
            self.flush()

    def flush(self) -> int:
        """Write every queued outcome now; returns how many were written. Never raises."""
        from dokoro_store.services.feedback import Outcome

        written = 0
        with self._flushing:
            while True:
                with self._lock:
                    batch = [self._pending.popleft() for _ in range(min(MAX_BATCH, len(self._pending)))]
                if not batch:
                    return written
                now = time.perf_counter()
                outcomes = [
                    Outcome(agent, tool, outcome, latency_ms=latency, confidence=1.0, age_seconds=now - at)
                    for agent, tool, outcome, latency, at in batch
                ]
                try:
                    written += self._store.feedback.record_many(outcomes)
                except Exception:  # capture must never break or stall the server it watches
                    self.dropped += len(batch)
                    log.warning(
                        "dokoro: dropped %d tool outcome(s): could not write feedback", len(batch), exc_info=True
                    )
                else:
                    self.written += len(batch)

    def close(self) -> None:
        """Stop the writer and write what is left."""
        with self._lock:
            self._stop.set()
            thread = self._thread
        self._wake.set()
        if thread is not None:
            thread.join(timeout=10)
        self.flush()


def flush_feedback(app: AppState) -> None:
    """Write the outcomes queued by this server's recorder (before reading feedback)."""
    for observer in app.observers:
        if isinstance(observer, FeedbackRecorder):
            observer.flush()
