"""The long-lived heap of a process kept out of Python's cyclic garbage collector.

A full (generation 2) collection walks every object the process holds. A server with its store
open holds ~170k of them (SQLAlchemy, the models, pydantic, the embedder), ~275k once LanceDB
and pyarrow are imported by the first vector copy; on the development machine (2 shared cores)
such a collection took 100-290 ms, and it runs, on whatever thread allocates at that moment,
every time the long-lived objects have grown by a quarter: about one call in three hundred of a
sequential write load stalled that long (``docs/benchmarks-history.md``, "Writes at 150/s").

:func:`settle` moves every object alive at that moment into the collector's permanent
generation (:func:`gc.freeze`), so the later collections walk only what was made since. It is
called at the points where the heap has just grown by modules and handles that live as long as
the process: once the store is open (the kit's opener) and after each background step's first run
(which imports that step's lazy modules: ``store.background.after_each_run``).

Freezing changes the whole process, so only an entry point turns it on: :func:`install` (a
server's ``serve``); until then :func:`settle` does nothing, and a library user of the store or
the kit (a test run, a script) keeps Python's collector as it was.

Each point freezes once per process, so a process that opens many stores (a test run) pins at most a
few handfuls of garbage cycles. Objects frozen are still freed as usual when their last reference
goes; only a reference cycle among them would outlive its use, which is why nothing is frozen again
later: a process that closed its first store and went on would keep that store's reference cycles in
memory, once (no server does: a stdio server keeps its store to the end, the shared HTTP server is
handed one open store).
"""

from __future__ import annotations

import gc
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dokoro_store import Store

__all__ = ["install", "settle", "settled", "store_opened"]

_lock = threading.Lock()
_done: set[str] = set()
_installed = False


def install() -> None:
    """Turn freezing on for this process (an entry point's call, before its store opens): then
    :func:`store_opened` freezes the heap, and each background step of the store its first run's."""
    global _installed
    with _lock:
        _installed = True


def store_opened(store: Store) -> None:
    """``store`` is open (the kit's opener, or an entry point that opened it): freeze the heap and
    settle each of its background steps' first run from now on; nothing unless :func:`install` ran."""
    with _lock:
        if not _installed:
            return
    store.background.after_each_run(settle)
    settle("store-open")


def settle(stage: str) -> bool:
    """Freeze the heap as it is now, once per ``stage`` per process, if :func:`install` turned
    freezing on; True when this call froze it."""
    with _lock:
        if not _installed or stage in _done:
            return False
        _done.add(stage)
    gc.freeze()
    return True


def settled(stage: str) -> bool:
    """Whether ``stage`` has frozen the heap in this process."""
    with _lock:
        return stage in _done
