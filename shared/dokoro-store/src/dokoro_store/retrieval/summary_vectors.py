"""Embeddings of episodic summaries (``conversation_summaries.embedding`` + ``.embedder``).

A summary is embedded when it is added (a compacted row from its first 8,000 characters). Recall
re-ranks by cosine similarity with the query; a candidate without a vector of the current
embedder (added while no embedder was available, copied from another store, or made by another
embedder) is embedded on the spot and the vector kept, so ranking heals itself.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import bindparam, func, select, update
from sqlalchemy.exc import SQLAlchemyError

from dokoro_store.db.engine import Database
from dokoro_store.errors import DokoroError
from dokoro_store.retrieval.embedders import from_bytes, to_bytes
from dokoro_store.retrieval.tables import summary_vectors

if TYPE_CHECKING:
    from dokoro_store.retrieval.embedders import Embedder

__all__ = ["COMPACTED_EMBED_CHARS", "SummaryVectors"]

log = logging.getLogger("dokoro.store")

COMPACTED_EMBED_CHARS = 8_000
_BATCH = 256


class SummaryVectors:
    def __init__(self, db: Database) -> None:
        self._db = db

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
