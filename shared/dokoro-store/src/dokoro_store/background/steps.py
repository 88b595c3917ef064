"""The background work of one store: its steps and thread pools, in one registry a reader can list.

A :class:`Background` belongs to one store (its database handle makes it, ``store.background``
shows it): every step written behind the writes (:class:`DelayedStep`: embedding, LanceDB's copy,
entity extraction, the WAL checkpoint) and every thread pool of the store is made through it, so
:meth:`Background.listing` names them all, and two stores of one process share none of them.

Background work gives way to the foreground. Python runs one thread at a time (the GIL): a
background thread busy in Python code makes every statement of a tool call wait up to the
interpreter's switch interval (5 ms) each time it gets the GIL back after SQLite or the network, so
an embedding step that ran beside a stream of writes made each write 2-4× slower
(``bench/write_behind.py``, ``docs/benchmarks.md``). So the registry watches the foreground: the
store's database connections (checked out = work under way) and, in a server, each tool call from
its start to its answer (:meth:`Background.foreground`, the kit's middleware); a step runs, and goes
on to its next batch, only once the foreground has been quiet for :data:`QUIET_S` — or after
:data:`LONGEST_WAIT_S`, so work behind a stream that never pauses is still done within seconds.

The work a step does is marked durably in the database by the writes themselves (LanceDB's copy
of new vectors, the entity graph of new documents, a summary without its vector), so a step that
fails or never runs (the process was killed) loses nothing: the next step, a reader or the next
process completes the marks.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal

__all__ = ["LONGEST_WAIT_S", "QUIET_S", "Background", "BackgroundWork", "DelayedStep"]

log = logging.getLogger(__name__)

QUIET_S = 0.1  # foreground silence a background run (or its next batch) waits for
LONGEST_WAIT_S = 1.0  # ... but never longer: a stream of writes that never pauses still gets its work done
_STUCK_S = 10.0  # a connection out this long without any other: not taken as foreground work any more
_FOREGROUND = "dokoro_foreground"  # the mark of a connection checked out by the foreground (its record's info)


@dataclass(frozen=True)
class BackgroundWork:
    """One item of :meth:`Background.listing`: a step or a thread pool of the store, by name."""

    name: str
    kind: Literal["step", "pool"]
    state: str  # a step: idle, due, running or closed; a pool: its threads, or closed


class Background:
    """The steps and thread pools of one store, and the foreground they give way to (module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._steps: list[DelayedStep] = []
        self._pools: dict[str, ThreadPoolExecutor] = {}
        self._after_run: list[Callable[[str], object]] = []
        self._threads: set[int] = set()  # idents of the threads doing this store's background work
        self._closed = False
        # The foreground: connections checked out by other threads, and when one last came or went.
        self._activity = threading.Lock()
        self._out = 0
        self._last = 0.0

    # ------------------------------------------------------------------ the work
    def step(self, run: Callable[[], object], *, name: str, failure: str) -> DelayedStep:
        """A new step of this store running ``run`` on its own thread (see :class:`DelayedStep`)."""
        made = DelayedStep(self, run, name=name, failure=failure)
        with self._lock:
            self._steps.append(made)
        return made

    def pool(self, name: str, *, workers: int = 1) -> ThreadPoolExecutor:
        """The thread pool ``name`` of this store (made on first use; shut down when the store closes)."""
        with self._lock:
            pool = self._pools.get(name)
            if pool is None:
                if self._closed:
                    raise RuntimeError(f"the store is closed: no pool {name} any more")
                pool = self._pools[name] = ThreadPoolExecutor(
                    max_workers=workers, thread_name_prefix=name, initializer=self.enter_thread
                )
            return pool

    def listing(self) -> list[BackgroundWork]:
        """Every step and pool of this store, in the order made."""
        with self._lock:
            steps, pools = list(self._steps), dict(self._pools)
        listed = [BackgroundWork(step.name, "step", step.state) for step in steps]
        for name, pool in pools.items():
            threads = len(pool._threads)  # the executor's own count; no public accessor
            listed.append(BackgroundWork(name, "pool", "closed" if self._closed else f"{threads} threads"))
        return listed

    def after_each_run(self, listener: Callable[[str], object]) -> None:
        """Call ``listener(name)`` after each run of this store's steps, the first one included: a
        run's first imports its lazy modules, which live as long as the process (the server's
        entry point freezes them out of the cyclic collector, ``dokoro_server.heap``)."""
        with self._lock:
            if listener not in self._after_run:
                self._after_run.append(listener)

    def ran(self, name: str) -> None:
        with self._lock:
            listeners = list(self._after_run)
        for listener in listeners:
            listener(name)

    def enter_thread(self) -> None:
        """The calling thread does this store's background work: its connections are not foreground."""
        with self._activity:
            self._threads.add(threading.get_ident())

    def leave_thread(self) -> None:
        """The calling thread's background work is over (its ident may be another thread's next)."""
        with self._activity:
            self._threads.discard(threading.get_ident())

    def close(self) -> None:
        """No more background work: every step stops (a run under way is not waited for: its owner
        closed it first when it wanted to) and every pool is shut down."""
        with self._lock:
            self._closed = True
            steps, pools = list(self._steps), list(self._pools.values())
        for step in steps:
            step.close(wait=False)
        for pool in pools:
            pool.shutdown(wait=False, cancel_futures=True)

    # ------------------------------------------------------------------ the foreground
    @contextlib.contextmanager
    def foreground(self) -> Iterator[None]:
        """Foreground work under way (a server's tool call, from its start to its answer): the
        background waits for it as for a connection, gaps between its statements included."""
        with self._activity:
            self._out += 1
            self._last = time.monotonic()
        try:
            yield
        finally:
            with self._activity:
                self._out -= 1
                self._last = time.monotonic()

    def checked_out(self, info: dict[str, object]) -> None:
        """A connection of the store was checked out (the engine's pool event; ``info``: its
        record's own dictionary, which marks it foreground until it goes back)."""
        ident = threading.get_ident()
        with self._activity:
            if ident not in self._threads:
                info[_FOREGROUND] = True
                self._out += 1
                self._last = time.monotonic()

    def checked_in(self, info: dict[str, object]) -> None:
        """A connection of the store went back (the engine's pool event), from whichever thread."""
        with self._activity:
            if info.pop(_FOREGROUND, False):
                self._out -= 1
                self._last = time.monotonic()

    def quiet_in(self) -> float:
        """Seconds until the foreground will have been quiet for :data:`QUIET_S` (0: it has)."""
        with self._activity:
            out, last = self._out, self._last
        now = time.monotonic()
        if out > 0 and now - last < _STUCK_S:
            return QUIET_S
        return max(0.0, last + QUIET_S - now)


class DelayedStep:
    """``run`` on a daemon thread named ``name``, once per :meth:`schedule` burst; thread-safe.
    Made by :meth:`Background.step`.

    One thread per step, started by the first :meth:`schedule` and waiting between bursts: starting
    a thread per burst (a ``threading.Timer``) cost the writing call 40-50 ms on a loaded machine,
    the time the new thread took to be scheduled, a third of an index write's time. A due run waits
    for the foreground to be quiet first (module docstring), and a run in batches waits again
    before each of its batches (:meth:`pause`).
    """

    def __init__(self, background: Background, run: Callable[[], object], *, name: str, failure: str) -> None:
        """``failure``: the warning logged when a background run raises (the marks stay)."""
        self._background = background
        self._step = run
        self.name = name
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

    @property
    def state(self) -> str:
        """closed, running, due or idle."""
        with self._wakeup:
            if self._closed:
                return "closed"
            return "running" if self._running else "due" if self._due is not None else "idle"

    def schedule(self, delay: float) -> None:
        """Run the step in ``delay`` seconds, unless a run is already due or the owner closed."""
        with self._wakeup:
            if self._due is not None or self._closed:
                return
            self._due = time.monotonic() + delay
            thread = self._thread
            if thread is None:
                thread = self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
            else:
                self._wakeup.notify()
                return
        thread.start()

    def pause(self) -> bool:
        """Between two batches of a run: on the step's own thread, wait until the foreground has
        been quiet for :data:`QUIET_S` (at most :data:`LONGEST_WAIT_S`); False when the owner closed
        meanwhile (stop there: what is left stays marked). On any other thread (an owner finishing
        the work itself) True at once."""
        if threading.current_thread() is not self._thread:
            return True
        with self._wakeup:
            return self._wait_quiet()

    def close(self, *, wait: bool = True) -> None:
        """No more background runs; a due one is cancelled (the owner completes the marks itself).
        ``wait``: a run under way is waited for (it stops at its next :meth:`pause`), so the
        owner's own completion follows it (without, the owner is going away: the run's marks stay
        for the next process)."""
        with self._wakeup:
            self._closed = True
            self._due = None
            self._wakeup.notify_all()
            if wait and threading.current_thread() is not self._thread:
                while self._running:
                    self._wakeup.wait()

    def _wait_quiet(self) -> bool:
        """(Under the condition.) Wait for a quiet foreground, bounded; False when closed."""
        deadline = time.monotonic() + LONGEST_WAIT_S
        while not self._closed:
            hold = min(self._background.quiet_in(), deadline - time.monotonic())
            if hold <= 0:
                return True
            self._wakeup.wait(hold)
        return False

    def _loop(self) -> None:
        self._background.enter_thread()
        try:
            self._serve()
        finally:
            self._background.leave_thread()

    def _serve(self) -> None:
        while True:
            with self._wakeup:
                while not self._closed:
                    due = self._due
                    if due is not None and due <= time.monotonic():
                        break
                    self._wakeup.wait(None if due is None else due - time.monotonic())
                if self._closed or not self._wait_quiet():
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
        self._background.ran(self.name)
