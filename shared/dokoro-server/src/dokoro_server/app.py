"""The application state every tool reaches, and the store behind it, opened in the background.

A server answers ``initialize`` and ``tools/list`` without waiting for its store:
:class:`StoreOpener` opens it in a thread, made by a stdio server's entry point
(``dokoro_server.entry.prepare``) and started once the SDK is imported, before the handshake (so the
first tool call finds it open), or else once the client has listed the tools; a tool that needs it
while it is opening waits for it.
"""

from __future__ import annotations

import functools
import logging
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from dokoro_server.settings import DokoroSettings

if TYPE_CHECKING:
    from dokoro_store import Clock, Store
    from mcp.server.mcpserver import Context

__all__ = ["AppState", "StoreOpener", "ToolObserver", "open_store", "open_store_or_exit", "state", "store_root"]

log = logging.getLogger("dokoro")

# Called after every tool call with its name, whether it succeeded and its latency (ms).
ToolObserver = Callable[["AppState", str, bool, float], None]


class StoreOpener:
    """The store of one server, opened at most once, in a background thread.

    :meth:`start` begins opening (idempotent); :meth:`store` waits for the store and returns it.
    A store that cannot be opened is reported on stderr as soon as it fails, and every
    :meth:`store` after that raises :class:`~dokoro_store.errors.StoreUnavailableError` with the
    reason and the fix, which the tools turn into an error result.
    """

    def __init__(self, open_store: Callable[[], Store], *, owned: bool = True) -> None:
        self._open = open_store
        self._owned = owned  # close() closes the store it opened, never one it was given
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._store: Store | None = None
        self._error: BaseException | None = None
        self._abandoned = False  # close() did not wait: the opening thread closes what it opens

    @classmethod
    def for_settings(cls, settings: DokoroSettings, cwd: Path, clock: Clock | None = None) -> StoreOpener:
        """An opener of the store the settings name (folder, or ``DOKORO_DATABASE_URL``)."""
        return cls(functools.partial(open_store, settings, cwd, clock))

    @classmethod
    def opened(cls, store: Store) -> StoreOpener:
        """An opener of a store already open and owned by the caller (who closes it)."""
        opener = cls(lambda: store, owned=False)
        opener._store = store
        opener._done.set()
        return opener

    @property
    def started(self) -> bool:
        return self._thread is not None or self._done.is_set()

    @property
    def ready(self) -> bool:
        """True once the store is open (never blocks)."""
        return self._store is not None

    @property
    def failed(self) -> bool:
        """True once opening has failed (never blocks)."""
        return self._done.is_set() and self._error is not None

    def start(self) -> None:
        """Begin opening the store in a background thread, unless that has begun already."""
        if self._thread is not None or self._done.is_set():
            return
        with self._lock:
            if self._thread is None and not self._done.is_set():
                self._thread = threading.Thread(target=self._run, name="dokoro-open-store", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        from dokoro_store import DokoroError

        from dokoro_server.heap import store_opened

        try:
            opened = self._open()
            with self._lock:
                abandoned = self._abandoned
                if not abandoned:
                    self._store = opened
            if abandoned:
                if self._owned:
                    opened.close(finish=False)
                return
            # The process's long-lived heap (store, models, embedder) out of the cyclic collector's
            # full walks, each of which stalled a call by 100-290 ms (dokoro_server/heap.py; only
            # once the entry point installed it).
            store_opened(opened)
        except DokoroError as exc:
            self._error = exc
            print(f"dokoro: {exc}", file=sys.stderr, flush=True)
        except BaseException as exc:  # reported once here; every tool call then says so
            self._error = exc
            log.exception("dokoro: could not open the store")
        finally:
            self._done.set()

    def wait(self) -> None:
        """Start opening the store if needed and wait until it is open or has failed."""
        self.start()
        self._done.wait()

    def store(self) -> Store:
        """The open store; starts opening it and waits when needed."""
        store = self._store
        if store is not None:
            return store
        self.wait()
        if self._store is None:
            raise self._unavailable()
        return self._store

    def reason(self) -> str:
        """Why the store could not be opened, and what to do (once :attr:`failed`)."""
        from dokoro_store import DokoroError

        error = self._error
        if isinstance(error, DokoroError):
            return str(error)
        return (
            f"dokoro could not open its store ({type(error).__name__}: {error}); the server's log (stderr) has "
            "the details. Fix the cause, then restart the server."
        )

    def _unavailable(self) -> Exception:
        from dokoro_store import StoreUnavailableError

        return StoreUnavailableError(self.reason())

    def close(self, *, finish: bool = True, wait: bool = True) -> bool:
        """Close the store if this opener opened it; returns False when an opening was abandoned.

        ``finish``: complete the work the writes left behind them first (see
        :meth:`~dokoro_store.Store.close`); a server whose client has gone leaves it marked for the
        next process. ``wait``: wait for an opening under way; without it the opening is abandoned
        (no tool has used the store yet, so nothing of this process's is in it) and the store, if
        it ever opens, is closed by the opening thread itself.
        """
        thread = self._thread
        if thread is not None and thread.is_alive() and not wait:
            with self._lock:  # _run sets the store under this lock: either it is set, or it never will be here
                self._abandoned = self._store is None
            if self._abandoned:
                return False
        if thread is not None:
            thread.join()
        if self._owned and self._store is not None:
            store, self._store = self._store, None
            store.close(finish=finish)
        return True


class AppState:
    """Everything a tool can reach: the store, the settings, the caller's cwd, the tool observers."""

    def __init__(self, store: Store | StoreOpener, settings: DokoroSettings, cwd: Path) -> None:
        self.opener = store if isinstance(store, StoreOpener) else StoreOpener.opened(store)
        self.settings = settings
        self.cwd = cwd
        self.observers: list[ToolObserver] = []

    @functools.cached_property
    def rewrite(self) -> Callable[[str], str] | None:
        """How this server's answers name its files (:mod:`dokoro_server.shown_paths`), worked out
        once: the store folder resolved, the project and the installation (None: no store folder)."""
        from dokoro_store import DokoroError

        from dokoro_server.shown_paths import rewriter

        try:
            return rewriter(str(store_root(self.settings, self.cwd)), str(self.cwd))
        except (ValueError, OSError, DokoroError):  # a store path no store opens
            return None

    @property
    def store(self) -> Store:
        """The open store (waits while it is being opened; raises if it cannot be)."""
        return self.opener.store()


def state(ctx: Context[AppState]) -> AppState:
    """The :class:`AppState` of the running server, from a tool's context."""
    app = ctx.request_context.lifespan_context
    if not isinstance(app, AppState):  # pragma: no cover - a wiring bug, not a user error
        raise RuntimeError("dokoro tools need the dokoro lifespan (build the server with dokoro_server.build_server)")
    return app


def store_root(settings: DokoroSettings, cwd: Path) -> Path:
    """The workspace folder the settings name (``DOKORO_PATH``, default ``./dokoro``)."""
    from dokoro_store import resolve_dokoro_path

    return resolve_dokoro_path(str(settings.path) if settings.path else None, cwd)


def open_store(settings: DokoroSettings, cwd: Path, clock: Clock | None = None, *, create: bool = True) -> Store:
    """Open the store the settings name (folder, or ``DOKORO_DATABASE_URL``); ``create=False``: a
    team database without a dokoro schema is :class:`~dokoro_store.NoStoreError`, left untouched."""
    from dokoro_store import RetrievalConfig, Store

    retrieval = RetrievalConfig(
        embedder=settings.embedder,
        ollama_url=settings.ollama_url,
        ollama_timeout_s=settings.ollama_timeout_ms / 1000,
        embed_behind=True,  # a server's writes answer before their vectors (write-behind)
    )
    opened = Store.open(
        store_root(settings, cwd),
        database_url=settings.database_url,
        clock=clock,
        functional_relation_types=settings.functional_relation_type_set,
        retrieval=retrieval,
        memory_review=settings.memory_review,
        create=create,
        agent_id=settings.agent_id,
    )
    if opened.recovered:
        log.warning("dokoro: finished %d interrupted compaction(s)", len(opened.recovered))
    return opened


def open_store_or_exit(settings: DokoroSettings, cwd: Path, *, create: bool = True) -> Store:
    """Open the store for a command; a store that cannot be opened ends the process clearly.

    An unreachable team database is an error (exit 2), never a silent local fall-back; a reachable
    one without a store, for a command that may not create one, exits 1 like a missing folder.
    """
    from dokoro_store import DokoroError, NoStoreError

    try:
        return open_store(settings, cwd, create=create)
    except NoStoreError as exc:
        print(f"dokoro: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
    except DokoroError as exc:
        print(f"dokoro: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
