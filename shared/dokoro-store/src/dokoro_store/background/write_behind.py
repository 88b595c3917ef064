"""Write-behind: work a write leaves to a moment after it answers, done in batches by a background step.

The one protocol behind a server's writes (``RetrievalConfig.embed_behind``): a session summary
(``store.episodic``) and an indexed text (``store.docs``) are committed with their row and full
text, and their vectors follow. It goes:

1. *mark*: the write leaves a durable mark in its own transaction (a summary row without its
   vector, a document's index state without an embedder) and, once committed, hands its key to
   :meth:`WriteBehind.add`;
2. *step*: :data:`EMBED_DELAY` later a background step of the store (:mod:`.steps`) takes the
   keys this process wrote, :data:`BATCH` at a time, and does each batch (embeds it, writes the
   vectors, clears the marks); before each batch it gives way to the foreground (a write or read
   under way, :meth:`~.steps.DelayedStep.pause`), so a sustained stream of writes is not slowed
   by the embedding behind it, and the work catches up when the stream pauses (at the latest
   :data:`~.steps.LONGEST_WAIT_S` per batch);
3. *resume*: a process killed before its step leaves the marks; the next one to open the store
   sweeps them (:meth:`WriteBehind.resume`), read from the database a batch at a time;
4. *finish*: closing the store does what waits (:meth:`WriteBehind.close`), or, for a server whose
   client has gone, leaves it marked for the next process.

A reader never waits for the step, and never pays for a whole backlog: a search or recall right
after a write embeds at most the :data:`BATCH` keys written last itself (:meth:`WriteBehind.newest`)
and leaves the rest to the step (:meth:`WriteBehind.later`): full text finds them at once, their
vectors follow within seconds.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from itertools import islice
from typing import Generic, TypeVar

from dokoro_store.background.steps import Background

__all__ = ["BATCH", "EMBED_DELAY", "WriteBehind"]

log = logging.getLogger("dokoro.store")

EMBED_DELAY = 0.05  # seconds from a write to the step that does its work (and that of the writes after it)
BATCH = 16  # keys per batch: a few tens of milliseconds of embedding, the longest a write can wait on it

K = TypeVar("K", int, str)


class WriteBehind(Generic[K]):
    """The keys this process wrote and left marked, and the step of ``background`` that does them.

    ``work(keys)``: does one batch as the keys now stand (a key whose mark is gone or changed
    meanwhile is skipped or done as it is now) and returns how many it did. ``marked(after, n)``:
    up to ``n`` keys marked in the database, in key order, after ``after`` (None: from the first)
    — the sweep of :meth:`resume`, which stops after ``sweep_limit`` keys (None: when no mark is
    left; the rest is left to readers and reindexing).
    """

    def __init__(
        self,
        background: Background,
        work: Callable[[Sequence[K]], int],
        marked: Callable[[K | None, int], Sequence[K]],
        *,
        name: str,
        failure: str,
        sweep_limit: int | None = None,
    ) -> None:
        self._work: Callable[[Sequence[K]], int] = work
        self._sweep_limit = sweep_limit
        self._marked: Callable[[K | None, int], Sequence[K]] = marked
        self._name = name
        self._waiting: dict[K, None] = {}  # in the order written (a key written again moves last)
        self._lock = threading.Lock()
        self._sweep_lock = threading.Lock()
        self._sweeping = False  # resume() found marks: read them after _swept, a batch at a time
        self._swept: K | None = None
        self._swept_count = 0
        self._step = background.step(self.run, name=name, failure=failure)

    def add(self, key: K) -> None:
        """A write committed ``key`` with its mark: done by the step, :data:`EMBED_DELAY` from now."""
        with self._lock:
            self._waiting.pop(key, None)
            self._waiting[key] = None
        self._step.schedule(EMBED_DELAY)

    @property
    def waiting(self) -> int:
        """Keys this process wrote that wait for the step (the sweep's not counted)."""
        with self._lock:
            return len(self._waiting)

    def newest(self, count: int) -> list[K]:
        """The ``count`` keys written last that still wait: what a reader does itself (at most one
        batch), so that a search right after a write finds it by meaning too."""
        with self._lock:
            keys = list(self._waiting)
        return keys[-count:] if count > 0 else []

    def later(self, keep: int = BATCH) -> set[K]:
        """The keys waiting for the step but the ``keep`` written last: what a reader leaves to the
        step (full text finds them at once, their vectors follow within seconds) rather than embed
        a whole backlog before it answers."""
        with self._lock:
            keys = list(self._waiting)
        return set(keys[: max(len(keys) - keep, 0)])

    def resume(self) -> None:
        """Schedule a sweep of the marks a killed process left (one read of the partial index of
        marked rows; nothing when there is none)."""
        if not self._marked(None, 1):
            return
        with self._lock:
            self._sweeping, self._swept, self._swept_count = True, None, 0
        self._step.schedule(EMBED_DELAY)

    def run(self) -> int:
        """Do what waits, a batch at a time, giving way to the foreground before each batch when on
        the step's thread; returns how many keys were done. A batch that raises goes back to wait
        (still marked in the database) and the error is raised. Several passes at once (the step,
        a reader finishing what this process wrote) take distinct batches."""
        done = 0
        while True:
            with self._lock:
                if not self._waiting and not self._sweeping:
                    return done
            if not self._step.pause():  # closed while it waited: the rest stays marked
                return done
            batch = self._next_batch()
            if not batch:
                return done
            try:
                done += self._work(batch)
            except BaseException:
                self._put_back(batch)
                raise

    def _next_batch(self) -> list[K]:
        with self._lock:
            if self._waiting:
                batch = list(islice(self._waiting, BATCH))  # the oldest first
                for key in batch:
                    del self._waiting[key]
                return batch
            if not self._sweeping:
                return []
        with self._sweep_lock:  # two passes never read the same batch of marks
            with self._lock:
                if not self._sweeping:
                    return []
                after, left = self._swept, BATCH
                if self._sweep_limit is not None:
                    left = min(left, self._sweep_limit - self._swept_count)
            swept = list(self._marked(after, left)) if left > 0 else []
            with self._lock:
                if swept:
                    self._swept = swept[-1]
                    self._swept_count += len(swept)
                else:
                    self._sweeping = False
        return swept

    def _put_back(self, batch: Sequence[K]) -> None:
        with self._lock:
            for key in batch:
                self._waiting.setdefault(key, None)

    def close(self, *, finish: bool = True) -> None:
        """Stop the step and (``finish``) do what waits now; unfinished, it stays marked for the
        next process, search or recall."""
        self._step.close(wait=finish)
        if finish:
            try:
                self.run()
            except Exception:  # closing: the marks stay in the database
                log.warning(
                    "dokoro: %s at close failed; the marks stay for the next process", self._name, exc_info=True
                )
