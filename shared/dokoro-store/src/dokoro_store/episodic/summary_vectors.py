"""Embeddings of episodic summaries (``conversation_summaries.embedding`` + ``.embedder``).

A summary is embedded when it is added (a compacted row from its first 8,000 characters). Recall
re-ranks by cosine similarity with the query; a candidate without a vector of the current
embedder (added while no embedder was available, copied from another store, or made by another
embedder) is embedded on the spot and the vector kept, so ranking heals itself.

:meth:`SummaryVectors.nearest` is recall's vector leg: a kNN over the summaries' vectors, kept
in memory as one matrix per process and embedder. Before each search one aggregate query (count
and highest id of the vectors) says whether it is current: new summaries are appended (only their
rows are read), anything else (compaction deleting rows, vectors filled in) reloads it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import bindparam, func, select, update
from sqlalchemy.exc import SQLAlchemyError

from dokoro_store.db.engine import Database
from dokoro_store.errors import DokoroError
from dokoro_store.index.embedders.handle import from_bytes, to_bytes
from dokoro_store.models.index import summary_vectors

if TYPE_CHECKING:
    from dokoro_store.episodic.summary_search import SummaryFilter
    from dokoro_store.index.embedders.handle import Embedder

__all__ = ["COMPACTED_EMBED_CHARS", "SummaryVectors"]

log = logging.getLogger("dokoro.store")

COMPACTED_EMBED_CHARS = 8_000
_BATCH = 256


@dataclass
class _Matrix:
    """The vectors of one embedder's summaries, with what the filters read."""

    embedder: str
    count: int
    max_id: int
    ids: Any  # int64[n]
    vectors: Any  # float32[n, d]
    started: Any  # float64[n]: started_at as a POSIX timestamp
    sessions: list[str | None]


class SummaryVectors:
    def __init__(self, db: Database) -> None:
        self._db = db
        self._lock = threading.Lock()
        self._matrix: _Matrix | None = None

    def nearest(self, embedder_id: str, query: Any, k: int, where: SummaryFilter) -> list[tuple[int, float]]:
        """``(summary id, cosine)`` of the ``k`` summaries nearest ``query`` that pass ``where``."""
        import numpy as np

        matrix = self._current(embedder_id)
        if matrix.count == 0 or k <= 0 or matrix.vectors.shape[1] != len(query):
            return []
        scores = matrix.vectors @ np.asarray(query, dtype=np.float32)
        mask = np.ones(matrix.count, dtype=bool)
        if where.session_id:
            mask &= np.array([s == where.session_id for s in matrix.sessions], dtype=bool)
        if where.since is not None:
            mask &= matrix.started >= where.since.timestamp()
        if where.until is not None:
            mask &= matrix.started <= where.until.timestamp()
        rows = np.flatnonzero(mask)
        if rows.size == 0:
            return []
        picked = rows[np.argsort(-scores[rows], kind="stable")[:k]]
        return [(int(matrix.ids[i]), float(scores[i])) for i in picked]

    def _current(self, embedder_id: str) -> _Matrix:
        import numpy as np

        filled = (summary_vectors.c.embedder == embedder_id) & summary_vectors.c.embedding.is_not(None)
        with self._db.read() as session:
            count, max_id = session.execute(
                select(func.count(), func.coalesce(func.max(summary_vectors.c.id), 0)).where(filled)
            ).one()
            count, max_id = int(count), int(max_id)
            with self._lock:
                cached = self._matrix
            if (
                cached is not None
                and cached.embedder == embedder_id
                and (cached.count, cached.max_id) == (count, max_id)
            ):
                return cached
            appending = cached is not None and cached.embedder == embedder_id and max_id > cached.max_id
            after = cached.max_id if appending and cached is not None else 0
            rows = session.execute(
                select(
                    summary_vectors.c.id,
                    summary_vectors.c.embedding,
                    summary_vectors.c.started_at,
                    summary_vectors.c.session_id,
                )
                .where(filled, summary_vectors.c.id > after)
                .order_by(summary_vectors.c.id)
            ).all()
        ids = np.array([int(r[0]) for r in rows], dtype=np.int64)
        vectors = (
            np.stack([from_bytes(r[1]) for r in rows]).astype(np.float32)
            if rows
            else np.zeros((0, 1), dtype=np.float32)
        )
        started = np.array([r[2].timestamp() for r in rows], dtype=np.float64)
        sessions = [r[3] for r in rows]
        if (
            appending
            and cached is not None
            and cached.count + len(rows) == count
            and (not rows or cached.count == 0 or cached.vectors.shape[1] == vectors.shape[1])
        ):
            if cached.count:
                ids = np.concatenate([cached.ids, ids])
                vectors = np.concatenate([cached.vectors, vectors]) if rows else cached.vectors
                started = np.concatenate([cached.started, started])
                sessions = cached.sessions + sessions
        elif appending:
            self._matrix = None
            return self._current(embedder_id)  # rows changed below the highest id too: read them all
        fresh = _Matrix(embedder_id, count, max_id, ids, vectors, started, sessions)
        with self._lock:
            self._matrix = fresh
        return fresh

    def store(self, embedder: Embedder, rows: Sequence[tuple[int, str]]) -> dict[int, Any]:
        """Embed ``(id, text)`` pairs and keep the vectors; returns them by id."""
        if not rows:
            return {}
        texts = [text[:COMPACTED_EMBED_CHARS] for _id, text in rows]
        vectors: dict[int, Any] = {}
        for start in range(0, len(texts), _BATCH):
            matrix = embedder.embed(texts[start : start + _BATCH])
            for offset, vector in enumerate(matrix):
                vectors[rows[start + offset][0]] = vector
        try:
            with self._db.write() as session:
                session.execute(
                    update(summary_vectors)
                    .where(summary_vectors.c.id == bindparam("row_id"))
                    .values(embedding=bindparam("vec"), embedder=bindparam("by")),
                    [{"row_id": row_id, "vec": to_bytes(v), "by": embedder.id} for row_id, v in vectors.items()],
                )
        except (SQLAlchemyError, DokoroError):
            # Keeping the vectors is a cache: ranking already has them for this call.
            log.warning("dokoro: could not keep summary embeddings", exc_info=True)
        return vectors

    def store_quietly(self, embedder: Embedder | None, rows: Sequence[tuple[int, str]]) -> None:
        """Best effort (used when a summary is written): a failure leaves the vector for later."""
        if embedder is None or not rows:
            return
        try:
            self.store(embedder, rows)
        except DokoroError:
            log.warning("dokoro: could not embed a session summary now; recall will embed it later", exc_info=True)

    def unembedded(self, after: int | None, limit: int) -> list[int]:
        """Up to ``limit`` ids of summaries without a vector, in id order, after ``after``."""
        with self._db.read() as session:
            return [
                int(row_id)
                for row_id in session.execute(
                    select(summary_vectors.c.id)
                    .where(summary_vectors.c.embedding.is_(None), summary_vectors.c.id > (after or 0))
                    .order_by(summary_vectors.c.id)
                    .limit(limit)
                ).scalars()
            ]

    def embed_ids(self, embedder: Embedder, ids: Sequence[int]) -> int:
        """Embed these summaries, those still without a vector (the others, and rows gone, are
        skipped); returns how many were embedded."""
        with self._db.read() as session:
            rows = [
                (int(r[0]), str(r[1]))
                for r in session.execute(
                    select(summary_vectors.c.id, summary_vectors.c.summary)
                    .where(summary_vectors.c.id.in_(list(ids)), summary_vectors.c.embedding.is_(None))
                    .order_by(summary_vectors.c.id)
                ).all()
            ]
        self.store(embedder, rows)
        return len(rows)

    def any_missing(self) -> bool:
        """Whether some summary has no vector (one look at the partial index)."""
        with self._db.read() as session:
            found = session.execute(
                select(summary_vectors.c.id).where(summary_vectors.c.embedding.is_(None)).limit(1)
            ).first()
        return found is not None

    def vectors_for(self, embedder: Embedder, ids: Sequence[int]) -> dict[int, Any]:
        """Vectors of these summaries made by ``embedder``; the missing ones are embedded and kept."""
        found: dict[int, Any] = {}
        missing: list[tuple[int, str]] = []
        with self._db.read() as session:
            for start in range(0, len(ids), 500):
                batch = list(ids[start : start + 500])
                rows = session.execute(
                    select(
                        summary_vectors.c.id,
                        summary_vectors.c.summary,
                        summary_vectors.c.embedding,
                        summary_vectors.c.embedder,
                    ).where(summary_vectors.c.id.in_(batch))
                ).all()
                for row_id, summary, embedding, by in rows:
                    if embedding is not None and by == embedder.id:
                        found[int(row_id)] = from_bytes(embedding)
                    else:
                        missing.append((int(row_id), str(summary)))
        if missing:
            found.update(self.store(embedder, missing))
        return found

    def reembed_all(self, embedder: Embedder) -> int:
        """Embed every summary again with ``embedder``; returns how many."""
        with self._db.read() as session:
            rows = [
                (int(r[0]), str(r[1]))
                for r in session.execute(select(summary_vectors.c.id, summary_vectors.c.summary)).all()
            ]
        for start in range(0, len(rows), _BATCH):
            self.store(embedder, rows[start : start + _BATCH])
        return len(rows)

    def count(self, embedder_id: str | None = None) -> int:
        statement = select(func.count()).select_from(summary_vectors).where(summary_vectors.c.embedding.is_not(None))
        if embedder_id is not None:
            statement = statement.where(summary_vectors.c.embedder == embedder_id)
        with self._db.read() as session:
            return int(session.execute(statement).scalar() or 0)
