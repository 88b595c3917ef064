"""The database side of LanceDB's copy of the vectors: the marks of vectors not yet copied, the
reads that copy or rebuild the copy, and the counts that check it (see :mod:`.lance`).

Each index write commits its vectors to the database marked ``chunks.unmirrored`` with the token
of its write (migration 0022); the partial index on that column holds only the marked rows.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam, func, select, text, update

from dokoro_store.db.engine import Database
from dokoro_store.index.vectors.index import ChunkVector, VectorHit
from dokoro_store.models.index import chunks, stamped_with

__all__ = [
    "clear_marks",
    "copied_count",
    "existing",
    "fewer_than",
    "marked",
    "mirrored",
    "tail",
    "vectors_of",
    "waiting",
]


def waiting(db: Database) -> int:
    """Vectors marked as not yet copied (every embedder)."""
    with db.read() as session:
        value = session.execute(
            select(func.count()).select_from(chunks).where(chunks.c.unmirrored.is_not(None))
        ).scalar()
    return int(value or 0)


def marked(db: Database) -> list[Any]:
    """Every marked chunk: id, document, index, embedder, vector bytes and its write's token."""
    with db.read() as session:
        return list(
            session.execute(
                select(
                    chunks.c.chunk_id,
                    chunks.c.doc_id,
                    chunks.c.chunk_index,
                    chunks.c.embedder,
                    chunks.c.embedding,
                    chunks.c.unmirrored,
                ).where(chunks.c.unmirrored.is_not(None))
            ).all()
        )


def vectors_of(rows: list[Any]) -> list[ChunkVector]:
    """The vectors of :func:`marked` rows (those with an embedder and a vector)."""
    from dokoro_store.index.embedders.handle import from_bytes

    return [
        ChunkVector(str(r[0]), str(r[1]), int(r[2]), str(r[3]), from_bytes(r[4]))
        for r in rows
        if r[3] is not None and r[4] is not None
    ]


def clear_marks(db: Database, rows: list[Any]) -> None:
    """Clear the marks of exactly the writes copied: a document re-indexed meanwhile keeps its new mark."""
    with db.write() as session:
        # One statement run for every copied chunk (executemany): each write has its own token.
        session.connection().execute(
            update(chunks)
            .where(chunks.c.chunk_id == bindparam("copied_chunk"), chunks.c.unmirrored == bindparam("copied_token"))
            .values(unmirrored=None),
            [{"copied_chunk": str(r[0]), "copied_token": int(r[5])} for r in rows],
        )


def tail(db: Database, embedder: str) -> tuple[list[str], list[str], Any]:
    """The vectors of ``embedder`` not yet copied: chunk ids, document ids and their matrix."""
    import numpy as np

    with db.read() as session:
        rows = session.execute(
            select(chunks.c.chunk_id, chunks.c.doc_id, chunks.c.embedding).where(
                chunks.c.unmirrored.is_not(None), stamped_with(embedder), chunks.c.embedding.is_not(None)
            )
        ).all()
    if not rows:
        return [], [], None
    matrix = np.frombuffer(b"".join(bytes(r[2]) for r in rows), dtype="<f4").reshape(len(rows), -1)
    return [str(r[0]) for r in rows], [str(r[1]) for r in rows], matrix


def copied_count(db: Database, embedder: str) -> int:
    """Vectors of ``embedder`` the copy should hold: the stamped chunks less the marked ones."""
    # A chunk is stamped with an embedder only when it has a vector: counting the stamp alone
    # reads the index on ``chunks.embedder``, not the rows and their vectors; the marked ones
    # are counted on their partial index.
    with db.read() as session:
        stamped = session.execute(
            select(func.count()).select_from(chunks).where(chunks.c.embedder == embedder)
        ).scalar()
        marks = session.execute(
            select(func.count()).select_from(chunks).where(chunks.c.unmirrored.is_not(None), stamped_with(embedder))
        ).scalar()
    return int(stamped or 0) - int(marks or 0)


def mirrored(db: Database, embedder: str) -> list[ChunkVector]:
    """The vectors of ``embedder`` the copy should hold (a rebuild's rows)."""
    from dokoro_store.index.embedders.handle import from_bytes

    with db.read() as session:
        rows = session.execute(
            select(chunks.c.chunk_id, chunks.c.doc_id, chunks.c.chunk_index, chunks.c.embedding).where(
                chunks.c.embedder == embedder,
                chunks.c.embedding.is_not(None),
                chunks.c.unmirrored.is_(None),  # the marked ones are the mirror step's
            )
        ).all()
    return [ChunkVector(str(r[0]), str(r[1]), int(r[2]), embedder, from_bytes(r[3])) for r in rows]


def fewer_than(db: Database, limit: int, embedder: str) -> bool:
    """Whether the database holds fewer than ``limit`` vectors of ``embedder`` (copied or not):
    a count that stops at the limit, so a large store pays the same as a small one."""
    with db.read() as session:
        few = select(chunks.c.chunk_id).where(chunks.c.embedder == embedder).limit(limit).subquery()
        found = session.execute(select(func.count()).select_from(few)).scalar()
    return int(found or 0) < limit


def existing(db: Database, hits: list[VectorHit], embedder: str) -> list[VectorHit]:
    """``hits`` less those whose chunk the database no longer holds (a stale row of the copy)."""
    if not hits:
        return hits
    from dokoro_store.index.scope import among

    member, value = among("chunk_id", [h.chunk_id for h in hits], db.dialect, "ids")
    with db.read() as session:
        # ``coalesce`` keeps the database off the index on ``embedder`` (see ``stamped_with``).
        live = set(
            session.execute(
                text(f"SELECT chunk_id FROM chunks WHERE {member} AND coalesce(embedder, '') = :embedder"),
                {"ids": value, "embedder": embedder},
            ).scalars()
        )
    return [h for h in hits if h.chunk_id in live]
