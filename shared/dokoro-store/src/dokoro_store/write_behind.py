"""A step written behind the writes: run once on a background thread a moment after the first write
that needs it, and no more once its owner closes.

The work it does is marked durably in the database by the writes themselves (LanceDB's copy of new
vectors, the entity graph of new documents), so a step that fails or never runs (the process was
killed) loses nothing: the next step, a reader or the next process completes the marks.
"""

from __future__ import annotations

import logging
import threading
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
    """``step`` run on a daemon thread named ``name``, once per :meth:`schedule` burst; thread-safe."""

    def __init__(self, step: Callable[[], object], *, name: str, failure: str) -> None:
        """``failure``: the warning logged when a background run raises (the marks stay)."""
        self._step = step
        self._name = name
        self._failure = failure
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._closed = False

    def schedule(self, delay: float) -> None:
        """Run the step in ``delay`` seconds, unless a run is already due or the owner closed."""
        with self._lock:
            if self._timer is not None or self._closed:
                return
            timer = threading.Timer(delay, self._run)
            timer.daemon = True
            timer.name = self._name
            self._timer = timer
        timer.start()

    def close(self) -> None:
        """No more background runs; a due one is cancelled (the owner completes the marks itself)."""
        with self._lock:
            self._closed = True
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()

    def _run(self) -> None:
        with self._lock:
            self._timer = None
            if self._closed:
                return
        try:
            self._step()
        except Exception:  # a background step: the work stays marked, the next step completes it
            log.warning(self._failure, exc_info=True)
        # Its first run imported the step's lazy modules (LanceDB and pyarrow: ~80k objects that
        # live as long as the process): the entry point's listener may settle them.
        for listener in list(_after_run):
            listener(self._name)
