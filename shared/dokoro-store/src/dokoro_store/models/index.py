"""Tables of the search index: chunk bookkeeping, vectors and the index stamp.

They are *derived* data (rebuilt by ``dokoro reindex``/``reembed`` from the documents and
summaries), so they live on their own :data:`INDEX_METADATA` rather than ``SQLModel.metadata``:
store copies and JSON backups carry the memory, not its indexes. The schema is created by
migration ``0005``; foreign keys to ``docs`` exist in the database (``ON DELETE CASCADE``) but are
not declared here, so these tables compile without the document models.

``summary_vectors`` is a partial view of ``conversation_summaries``: the two columns the episodic
recall ranking adds to it (``embedding``, ``embedder``).
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    ColumnElement,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    func,
    text,
)

from dokoro_store.db.model_tables import table_of
from dokoro_store.db.types import UtcDateTime
from dokoro_store.models import Doc

__all__ = [
    "INDEX_METADATA",
    "chunks",
    "doc_vectors",
    "docs_table",
    "index_drops",
    "index_state",
    "stamped_with",
    "summary_vectors",
]

# The documents table (owned by the models), as a typed Core table for the index's queries.
docs_table = table_of(Doc)

INDEX_METADATA = MetaData()

# One row per indexed document: which content (sha256) its chunks and vectors were made from.
doc_vectors = Table(
    "doc_vectors",
    INDEX_METADATA,
    Column("doc_id", String, primary_key=True),
    Column("content_hash", String, nullable=False),
    Column("token_count", Integer, nullable=False),
    Column("chunk_count", Integer, nullable=False),
    Column("embedder", String, nullable=True),  # None: indexed for full text only
    Column("last_indexed", UtcDateTime, nullable=False),
    # The documents indexed without vectors (0026): written behind by index_content, or while no
    # embedder was available; what the write-behind step and the next process's open look for.
    Index(
        "ix_doc_vectors_unembedded",
        "doc_id",
        sqlite_where=text("embedder IS NULL"),
        postgresql_where=text("embedder IS NULL"),
    ),
)

# The chunks of every indexed document (reference §4.5), with their vector when there is one.
chunks = Table(
    "chunks",
    INDEX_METADATA,
    Column("chunk_id", String, primary_key=True),
    Column("doc_id", String, nullable=False, index=True),
    Column("chunk_index", Integer, nullable=False),
    Column("start_line", Integer, nullable=False),
    Column("end_line", Integer, nullable=False),
    Column("start_char", Integer, nullable=False),
    Column("end_char", Integer, nullable=False),
    Column("header_context", Text, nullable=True),
    Column("token_count", Integer, nullable=False),
    Column("embedder", String, nullable=True, index=True),  # ix_chunks_embedder (0005): vectors of one embedder
    Column("embedding", LargeBinary, nullable=True),  # little-endian float32, unit length
    # The token of the write whose vector is not yet copied to LanceDB (NULL: copied, or no copy
    # kept); the partial index holds only those rows (0022, see index/vectors/lance/engine.py).
    Column("unmirrored", BigInteger, nullable=True),
    Index(
        "ix_chunks_unmirrored",
        "unmirrored",
        sqlite_where=text("unmirrored IS NOT NULL"),
        postgresql_where=text("unmirrored IS NOT NULL"),
    ),
    # The index generation of the write that wrote the row (0030; 0: written before): a vector
    # cache reads the rows above the generation it last saw (see ExactScanIndex in vectors.py).
    Column("rev", BigInteger, nullable=False, server_default="0"),
    Index("ix_chunks_rev", "rev"),
)

# The documents whose chunks an index write dropped without writing new ones (deleted, or indexed
# again into no chunk), by the generation of that write (0030): with ``chunks.rev``, what a vector
# cache reads to catch up. Complete above ``index_state.drops_from`` only (a clear of the index
# restarts it; older entries are pruned).
index_drops = Table(
    "index_drops",
    INDEX_METADATA,
    Column("rev", BigInteger, primary_key=True, autoincrement=False),
    Column("doc_id", String, primary_key=True),
)

# A single row (id = 1): the embedder the document vectors are stamped with, a generation counter
# bumped by every index write (caches of the vectors compare it to stay fresh; ``chunks.rev`` and
# ``index_drops.rev`` carry it), and ``drops_from`` (0030): the generation above which
# ``index_drops`` is complete (a cache that last looked below it reads everything again).
index_state = Table(
    "index_state",
    INDEX_METADATA,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("generation", BigInteger, nullable=False),
    Column("embedder", String, nullable=True),
    Column("dimension", Integer, nullable=True),
    Column("updated_at", UtcDateTime, nullable=True),
    Column("drops_from", BigInteger, nullable=False, server_default="0"),
)

summary_vectors = Table(
    "conversation_summaries",
    INDEX_METADATA,
    Column("id", Integer, primary_key=True),
    Column("summary", Text),
    Column("session_id", String, nullable=True),  # read by recall's vector leg (its filters)
    Column("started_at", UtcDateTime, nullable=False),
    Column("embedding", LargeBinary, nullable=True),
    Column("embedder", String, nullable=True),
)


def stamped_with(embedder: str) -> ColumnElement[bool]:
    """``chunks.embedder = embedder`` for a query that already names its chunks (by id or document).

    Written so the database cannot use the index on ``chunks.embedder`` for it: every chunk of a
    store shares one embedder, so that index would walk (and read the vectors of) every chunk
    instead of the few the ids select. Measured: 70–100 ms per query at 20k chunks.
    """
    return func.coalesce(chunks.c.embedder, "") == embedder
