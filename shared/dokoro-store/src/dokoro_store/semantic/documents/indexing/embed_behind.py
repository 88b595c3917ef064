"""Write-behind of ``index_content``'s vectors: the documents written and not yet embedded.

With ``RetrievalConfig.embed_behind`` (the servers), ``DocumentService.index_content`` writes a
document, its chunks and full text at once and leaves its vectors to a step on a background thread,
:data:`EMBED_DELAY` seconds later (the write leaves the document's index state without an embedder:
the durable mark any search or reindex completes). :class:`EmbedBehind` holds the documents this
process wrote and that step; a process killed before it ran leaves the marks, and the next one to
open the store schedules them (:meth:`EmbedBehind.resume`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

from sqlalchemy import select

from dokoro_store.background.write_behind import DelayedStep
from dokoro_store.db.engine import Database
from dokoro_store.models.index import doc_vectors

__all__ = ["EMBED_DELAY", "RESUME_BATCH", "EmbedBehind"]

log = logging.getLogger("dokoro.store")
EMBED_DELAY = 0.05  # seconds from an index_content write to the step that embeds it (and those after it)
RESUME_BATCH = 1_000  # documents left unembedded by another process, embedded by a new one's step


class EmbedBehind:
    """The documents this process wrote without their vectors, and the step that embeds them.

    ``index``: indexes these documents as they now stand (a document changed meanwhile is left to
    its own writer) and returns how many it (re)indexed."""

    def __init__(self, db: Database, index: Callable[[Sequence[str]], int]) -> None:
        self._db = db
        self._index = index
        self._waiting: set[str] = set()
        self._lock = threading.Lock()
        self._step = DelayedStep(
            self.embed_written,
            name="dokoro-embed-behind",
            failure="dokoro: embedding written documents failed; their vectors wait for the next search or reindex",
        )

    def add(self, doc_id: str) -> None:
        """A document written without its vectors: embedded by the step, :data:`EMBED_DELAY` from now."""
        with self._lock:
            self._waiting.add(doc_id)
        self._step.schedule(EMBED_DELAY)

    def embed_written(self) -> int:
        """Embed the documents this process wrote without vectors, in batches; returns how many were
        (re)indexed. A document changed meanwhile is indexed as it now stands."""
        with self._lock:
            ids, self._waiting = sorted(self._waiting), set()
        if not ids:
            return 0
        try:
            return self._index(ids)
        except BaseException:
            with self._lock:  # still marked in the database; tried again by the next write's step
                self._waiting.update(ids)
            raise

    def resume(self) -> None:
        """Schedule the step for documents indexed without vectors (a process killed before
        embedding what it wrote): one read of the partial index of unembedded documents."""
        with self._db.read() as session:
            ids = [
                str(x)
                for x in session.execute(
                    select(doc_vectors.c.doc_id).where(doc_vectors.c.embedder.is_(None)).limit(RESUME_BATCH)
                ).scalars()
            ]
        if ids:
            with self._lock:
                self._waiting.update(ids)
            self._step.schedule(EMBED_DELAY)

    def close(self, *, finish: bool = True) -> None:
        """Stop the step and (``finish``) embed what waits; unfinished, the documents stay marked
        (index state without an embedder) and the next search or reindex embeds them."""
        self._step.close(wait=finish)
        if finish:
            try:
                self.embed_written()
            except Exception:  # closing: the marks stay in the database
                log.warning("dokoro: embedding written documents at close failed; the next search does", exc_info=True)
