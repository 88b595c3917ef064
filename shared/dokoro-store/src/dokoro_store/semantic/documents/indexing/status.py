"""What the document index holds: its embedder stamp, the documents left to index, its counts.

:class:`IndexStatus` answers for :class:`~dokoro_store.semantic.documents.service.DocumentService`
(``store.docs.stamp()``, ``pending()``, ``stats()``, the stamp checks before a write or a search);
it only reads, except that the stamp checks may adopt the store's bundled embedder (``auto``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Literal

from sqlalchemy import func, or_, select

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.errors import EmbedderMismatchError
from dokoro_store.index.embedders.handle import EmbedderHandle
from dokoro_store.models.index import chunks, doc_vectors, docs_table, index_state
from dokoro_store.semantic.documents.records import IndexStats, mismatch_message

if TYPE_CHECKING:
    from dokoro_store.index.embedders.handle import Embedder

__all__ = ["CHANGE_MARGIN", "FULL_SCAN_EVERY", "IndexStatus"]

FULL_SCAN_EVERY = 300.0  # seconds between the full scans of pending_changed
CHANGE_MARGIN = timedelta(minutes=2)  # pending_changed looks this far before its last scan


class IndexStatus:
    """The stamp, the pending documents and the counts of one store's document index."""

    def __init__(self, db: Database, clock: Clock, embedder: EmbedderHandle) -> None:
        self._db = db
        self._clock = clock
        self._embedder = embedder
        # pending_changed: (monotonic time of the last full scan, clock time of the last scan, the
        # embedder it wanted) and the documents it left pending.
        self._pending_scan: tuple[float, datetime, str | None] | None = None
        self._pending_left: set[str] = set()

    # ------------------------------------------------------------------ stamp
    def stamp(self) -> tuple[str | None, int | None]:
        """The embedder the stored vectors are stamped with, and their dimension."""
        with self._db.read() as session:
            row = session.execute(select(index_state.c.embedder, index_state.c.dimension)).first()
        return (row[0], row[1]) if row else (None, None)

    def is_indexed(self, doc_id: str) -> bool:
        """Whether the document's current content has been indexed."""
        with self._db.read() as session:
            found = session.execute(
                select(doc_vectors.c.doc_id)
                .join(docs_table, docs_table.c.id == doc_vectors.c.doc_id)
                .where(doc_vectors.c.doc_id == doc_id, doc_vectors.c.content_hash == docs_table.c.content_hash)
            ).first()
        return found is not None

    def check_search_stamp(self, embedder: Embedder, stored: str | Literal[False] | None = False) -> Embedder:
        """The embedder to compare with the stored vectors: ``embedder``, or under ``auto`` the bundled
        embedder the index is stamped with (another process claimed the store first). Refuses to
        compare a query vector with vectors of another embedder. ``stored``: the stamp, when the
        caller read it already."""
        if stored is False:
            stored, _dim = self.stamp()
        if stored is not None and stored != embedder.id and self.vector_count() > 0:
            adopted = self._embedder.adopt(stored)
            if adopted is not None:
                return adopted
            raise EmbedderMismatchError(mismatch_message(stored, embedder.id))
        return embedder

    def keeps_the_stamp(self) -> None:
        """Before a full reindex: refuse unless this process embeds with the embedder the store's
        vectors are stamped with. Clearing the vectors would otherwise move the whole store to this
        process's embedder, and every other process on it would stop matching; only
        :meth:`DocumentService.reembed` (``dokoro reembed``) changes a store's embedder."""
        stored, _dim = self.stamp()
        if stored is None or self.vector_count() == 0:
            return
        embedder = self._embedder.get()
        if embedder is not None and embedder.id != stored:
            embedder = self._embedder.adopt(stored) or embedder
        if embedder is not None and embedder.id == stored:
            return
        here = f"embeds with {embedder.id}" if embedder is not None else f"cannot run it ({self._embedder.reason})"
        raise EmbedderMismatchError(
            f"a full reindex rebuilds the vectors with the store's embedder {stored}, but this process {here}; "
            "nothing was changed. Run it where that embedder runs (or with DOKORO_EMBEDDER=auto), or move the "
            "whole store to another embedder with `dokoro reembed`"
        )

    def wanted_embedder(self) -> str | None:
        """The embedder this process indexes with (None: no vectors, or a mismatch with the stamp)."""
        status = self._embedder.status()
        if not status.available or status.id is None:
            return None
        stored, _dim = self.stamp()
        if stored is not None and stored != status.id:
            return None  # a mismatch is reported, not retried on every call
        return status.id

    def vector_count(self, other_than: str | None = None) -> int:
        statement = select(func.count()).select_from(chunks).where(chunks.c.embedding.is_not(None))
        if other_than is not None:
            statement = statement.where(chunks.c.embedder != other_than)
        with self._db.read() as session:
            return int(session.execute(statement).scalar() or 0)

    # ------------------------------------------------------------------ pending documents
    def pending_changed(self) -> list[str]:
        """:meth:`pending` for a refresh on every call, without reading every document each time.

        The first call in a process, and one every :data:`FULL_SCAN_EVERY` seconds, scans every
        document. In between, only the documents saved since the last scan began (less
        :data:`CHANGE_MARGIN`, for clocks and transactions that commit late) are looked at — an
        index range on ``docs.updated_at`` — plus those the last refresh left pending (an indexing
        that failed is tried again on the next call, as before). A change of the embedder wanted
        starts a full scan.
        """
        started = time.monotonic()
        now = self._clock.now()
        want = self.wanted_embedder()
        last = self._pending_scan
        if last is None or last[2] != want or started - last[0] >= FULL_SCAN_EVERY:
            found = self.pending(want=want)
            self._pending_scan = (started, now, want)
        else:
            found = self.pending(since=last[1] - CHANGE_MARGIN, want=want)
            if self._pending_left:
                found = sorted(set(found) | set(self.pending(only=sorted(self._pending_left), want=want)))
            self._pending_scan = (last[0], now, want)
        self._pending_left = set(found)
        return found

    def pending(
        self,
        *,
        since: datetime | None = None,
        only: Sequence[str] | None = None,
        want: str | Literal[False] | None = False,
    ) -> list[str]:
        """Documents whose index is missing or stale (content changed, or vectors missing); ``since``:
        among those saved at or after it; ``only``: among these ids."""
        want = self.wanted_embedder() if want is False else want
        stale = [
            doc_vectors.c.doc_id.is_(None),
            docs_table.c.content_hash.is_(None),
            doc_vectors.c.content_hash != docs_table.c.content_hash,
        ]
        if want is not None:
            stale += [doc_vectors.c.embedder.is_(None), doc_vectors.c.embedder != want]
        statement = (
            select(docs_table.c.id)
            .select_from(docs_table.outerjoin(doc_vectors, doc_vectors.c.doc_id == docs_table.c.id))
            .where(docs_table.c.content.is_not(None), docs_table.c.content != "", or_(*stale))
            .order_by(docs_table.c.id)
        )
        if since is not None:
            statement = statement.where(docs_table.c.updated_at >= since)
        if only is not None:
            found: list[str] = []
            with self._db.read() as session:
                for start in range(0, len(only), 500):
                    batch = statement.where(docs_table.c.id.in_(list(only[start : start + 500])))
                    found += [str(x) for x in session.execute(batch).scalars()]
            return sorted(found)
        with self._db.read() as session:
            return [str(x) for x in session.execute(statement).scalars()]

    # ------------------------------------------------------------------ counts
    def unembedded(self, after: str | None, limit: int) -> list[str]:
        """Up to ``limit`` documents indexed without their vectors (the write-behind's mark), in id
        order, after ``after``: through the partial index of unembedded documents."""
        statement = select(doc_vectors.c.doc_id).where(doc_vectors.c.embedder.is_(None))
        if after is not None:
            statement = statement.where(doc_vectors.c.doc_id > after)
        with self._db.read() as session:
            return [str(x) for x in session.execute(statement.order_by(doc_vectors.c.doc_id).limit(limit)).scalars()]

    def stats(self) -> IndexStats:
        with self._db.read() as session:
            total = session.execute(
                select(func.count())
                .select_from(docs_table)
                .where(docs_table.c.content.is_not(None), docs_table.c.content != "")
            ).scalar()
            indexed = session.execute(
                select(func.count())
                .select_from(docs_table.join(doc_vectors, doc_vectors.c.doc_id == docs_table.c.id))
                .where(doc_vectors.c.content_hash == docs_table.c.content_hash)
            ).scalar()
            # A chunk is stamped with an embedder only when it has a vector: counted on the stamp's
            # index, not by reading every chunk's vector.
            chunk_count, vector_count = session.execute(
                select(func.count(), func.count(chunks.c.embedder)).select_from(chunks)
            ).one()
            tokens = session.execute(select(func.coalesce(func.sum(doc_vectors.c.token_count), 0))).scalar()
            stamp = session.execute(select(index_state.c.embedder, index_state.c.dimension)).first()
        return IndexStats(
            total_docs=int(total or 0),
            indexed_docs=int(indexed or 0),
            pending_docs=len(self.pending()),
            chunks=int(chunk_count or 0),
            vectors=int(vector_count or 0),
            tokens=int(tokens or 0),
            stamp=stamp[0] if stamp else None,
            stamp_dimension=stamp[1] if stamp else None,
        )
