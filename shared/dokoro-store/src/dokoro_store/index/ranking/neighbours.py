"""What search needs beyond the legs' lists: thread neighbours and the stored vectors of candidates.

A document may be one entry of a thread (``docs.thread``, ``docs.thread_pos``: the turns of a
conversation, the entries of a session log). The answer to a question often sits beside the entry
that names its topic, so hybrid search loads the neighbours (up to two places away) of its
candidates and lets a match lift them (:mod:`.fusion`).

The vector leg returns cosines for its own top candidates only. To score every candidate on both
signals, the vectors of all candidates and neighbours are read back from ``chunks`` (the source of
truth for every vector engine) and compared with the query here: a few hundred rows per query.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from dokoro_store.db.driver_sql import driver_mark, rows_by_ids
from dokoro_store.db.engine import Database
from dokoro_store.models.index import chunks, stamped_with

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["NEIGHBOUR_SPAN", "DocVectors", "StoredVectors", "ThreadMap", "load_doc_vectors", "load_threads"]

NEIGHBOUR_SPAN = 2  # neighbours up to this many places away on each side
# A vector engine's copy of the stored vectors held in memory: (documents, embedder) → their chunks'
# (chunk id, document id, vector), or None when it holds none (the database is read instead).
StoredVectors = Callable[[Sequence[str], str], "list[tuple[str, str, Any]] | None"]


@dataclass
class ThreadMap:
    """Where candidate documents sit in their threads, and who sits beside them."""

    place: dict[str, tuple[str, int]] = field(default_factory=dict)  # doc_id → (thread, position)
    at: dict[tuple[str, int], str] = field(default_factory=dict)  # (thread, position) → doc_id

    def neighbours(self, doc_id: str, distance: int) -> list[str]:
        """The documents exactly ``distance`` places before and after ``doc_id`` in its thread."""
        where = self.place.get(doc_id)
        if where is None:
            return []
        thread, position = where
        found = (self.at.get((thread, position - distance)), self.at.get((thread, position + distance)))
        return [doc for doc in found if doc is not None]

    def previous(self, doc_id: str) -> str | None:
        """The document just before ``doc_id`` in its thread (None: first, not in a thread, or not loaded)."""
        where = self.place.get(doc_id)
        return None if where is None else self.at.get((where[0], where[1] - 1))


def load_threads(db: Database, doc_ids: Iterable[str], span: int = NEIGHBOUR_SPAN) -> ThreadMap:
    """The thread places of ``doc_ids`` and of their neighbours up to ``span`` places away.

    Two indexed queries handed to the driver as they are: building them as expressions, or having
    SQLAlchemy expand and cache a statement whose text changes with every query, cost more than
    running them (measured: 5.0 → 1.6 ms of CPU for 150 candidates).
    """
    ids = list(dict.fromkeys(doc_ids))
    result = ThreadMap()
    if not ids:
        return result
    ranges: dict[str, list[tuple[int, int]]] = {}
    with db.read() as session:
        connection = session.connection()
        rows = rows_by_ids(connection, "SELECT id, thread, thread_pos FROM docs", ids, "AND thread IS NOT NULL")
        for doc_id, name, pos in rows:
            if pos is None:
                continue
            result.place[str(doc_id)] = (str(name), int(pos))
            result.at[(str(name), int(pos))] = str(doc_id)
            ranges.setdefault(str(name), []).append((int(pos) - span, int(pos) + span))
        spans = [(name, low, high) for name, found in ranges.items() for low, high in _merge(found)]
        mark = driver_mark(connection)
        for start in range(0, len(spans), 100):
            chunk = spans[start : start + 100]
            where = " OR ".join([f"(thread = {mark} AND thread_pos BETWEEN {mark} AND {mark})"] * len(chunk))
            params = tuple(value for item in chunk for value in item)
            for doc_id, name, pos in connection.exec_driver_sql(
                f"SELECT id, thread, thread_pos FROM docs WHERE {where}", params
            ).all():
                result.place[str(doc_id)] = (str(name), int(pos))
                result.at[(str(name), int(pos))] = str(doc_id)
    return result


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for low, high in sorted(spans):
        if merged and low <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return merged


@dataclass
class DocVectors:
    """Per document: the cosine of its best chunk with the query, and its mean chunk vector."""

    best: dict[str, float] = field(default_factory=dict)
    best_chunk: dict[str, str] = field(default_factory=dict)
    mean: dict[str, npt.NDArray[np.float32]] = field(default_factory=dict)
    chunks: dict[str, npt.NDArray[np.float32]] = field(default_factory=dict)  # chunk id → vector
    chunk_doc: dict[str, str] = field(default_factory=dict)

    def rescored(self, query: npt.NDArray[np.float32]) -> DocVectors:
        """The same vectors compared with another query vector."""
        out = DocVectors(mean=self.mean, chunks=self.chunks, chunk_doc=self.chunk_doc)
        for chunk_id, vector in self.chunks.items():
            doc_id = self.chunk_doc[chunk_id]
            score = float(vector @ query)
            if doc_id not in out.best or score > out.best[doc_id]:
                out.best[doc_id], out.best_chunk[doc_id] = score, chunk_id
        return out


def load_doc_vectors(
    db: Database,
    doc_ids: Iterable[str],
    embedder: str,
    query: npt.NDArray[np.float32],
    stored: StoredVectors | None = None,
) -> DocVectors:
    """Cosines with ``query`` of the stored vectors (stamped ``embedder``) of ``doc_ids``.

    ``stored``: the vector engine's copy of them in memory, when it has one (else None: read).
    """
    import numpy as np

    ids = list(dict.fromkeys(doc_ids))
    out = DocVectors()
    if not ids:
        return out
    held = stored(ids, embedder) if stored is not None else None
    if held is not None:
        rows: list[tuple[str, str, Any]] = held
        if not rows:
            return out
        matrix = np.stack([r[2] for r in rows])
    else:
        rows = []
        with db.read() as session:
            for start in range(0, len(ids), 500):
                rows += [
                    (str(r[0]), str(r[1]), bytes(r[2]))
                    for r in session.execute(
                        select(chunks.c.chunk_id, chunks.c.doc_id, chunks.c.embedding).where(
                            chunks.c.doc_id.in_(ids[start : start + 500]),
                            stamped_with(embedder),
                            chunks.c.embedding.is_not(None),
                        )
                    ).all()
                ]
        if not rows:
            return out
        matrix = np.frombuffer(b"".join(r[2] for r in rows), dtype="<f4").reshape(len(rows), -1)
    if matrix.shape[1] != query.shape[0]:
        return out
    scores = matrix @ query
    sums: dict[str, npt.NDArray[np.float32]] = {}
    for index, (chunk_id, doc_id, _blob) in enumerate(rows):
        score = float(scores[index])
        if doc_id not in out.best or score > out.best[doc_id]:
            out.best[doc_id] = score
            out.best_chunk[doc_id] = chunk_id
        sums[doc_id] = sums[doc_id] + matrix[index] if doc_id in sums else matrix[index].copy()
        out.chunks[chunk_id] = matrix[index]
        out.chunk_doc[chunk_id] = doc_id
    for doc_id, total in sums.items():
        norm = float(np.linalg.norm(total))
        out.mean[doc_id] = total / norm if norm else total
    return out
