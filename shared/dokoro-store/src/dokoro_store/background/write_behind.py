"""A step written behind the writes: run once on a background thread a moment after the first write
that needs it, and no more once its owner closes.

The work it does is marked durably in the database by the writes themselves (LanceDB's copy of new
vectors, the entity graph of new documents), so a step that fails or never runs (the process was
killed) loses nothing: the next step, a reader or the next process completes the marks.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

__all__ = ["DelayedStep", "on_first_run"]

log = logging.getLogger(__name__)

# Called with a step's name after each of its runs (an entry point's hook: the kit's heap freeze).
_after_run: list[Callable[[str], object]] = []


def on_first_run(listener: Callable[[str], object]) -> None:
    """Call ``listener(name)`` after a step's runs, the first one included: a run's first imports
    the step's lazy modules, which live as long as the process (the server's entry point freezes
    them out of the cyclic collector, ``dokoro_server.heap``). The listener dedups by name."""
    if listener not in _after_run:
        _after_run.append(listener)


class DelayedStep:
    """``step`` run on a daemon thread named ``name``, once per :meth:`schedule` burst; thread-safe.

    One thread per step, started by the first :meth:`schedule` and waiting between bursts: starting
    a thread per burst (a ``threading.Timer``) cost the writing call 40-50 ms on a loaded machine,
    the time the new thread took to be scheduled, a third of an index write's time.
    """

    def __init__(self, step: Callable[[], object], *, name: str, failure: str) -> None:
        """``failure``: the warning logged when a background run raises (the marks stay)."""
        self._step = step
        self._name = name
        self._failure = failure
        self._wakeup = threading.Condition()
        self._due: float | None = None  # when the next run is due (monotonic); None: none is
        self._thread: threading.Thread | None = None
        self._closed = False
        self._running = False  # a run is under way (close waits for it)

    @property
    def due(self) -> bool:
        """Whether a run is scheduled (and not yet started)."""
        with self._wakeup:
            return self._due is not None

    def schedule(self, delay: float) -> None:
        """Run the step in ``delay`` seconds, unless a run is already due or the owner closed."""
        with self._wakeup:
            if self._due is not None or self._closed:
                return
            self._due = time.monotonic() + delay
            thread = self._thread
            if thread is None:
                thread = self._thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
            else:
                self._wakeup.notify()
                return
        thread.start()

    def close(self, *, wait: bool = True) -> None:
        """No more background runs; a due one is cancelled (the owner completes the marks itself).
        ``wait``: a run under way is waited for, so the owner's own completion follows it (without,
        the owner is going away: the run's marks stay for the next process)."""
        with self._wakeup:
            self._closed = True
            self._due = None
            self._wakeup.notify_all()
            if wait and threading.current_thread() is not self._thread:
                while self._running:
                    self._wakeup.wait()

    def _loop(self) -> None:
        while True:
            with self._wakeup:
                while not self._closed:
                    due = self._due
                    if due is not None and due <= time.monotonic():
                        break
                    self._wakeup.wait(None if due is None else due - time.monotonic())
                if self._closed:
                    return
                self._due = None
                self._running = True
            try:
                self._run()
            finally:
                with self._wakeup:
                    self._running = False
                    self._wakeup.notify_all()

    def _run(self) -> None:
        try:
            self._step()
        except Exception:  # a background step: the work stays marked, the next step completes it
            log.warning(self._failure, exc_info=True)
        # Its first run imported the step's lazy modules (LanceDB and pyarrow: ~80k objects that
        # live as long as the process): the entry point's listener may settle them.
        for listener in list(_after_run):
            listener(self._name)
