"""The records of the document index: what is saved, what indexing reports, and their helpers."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from dokoro_store.errors import InvalidArgumentError
from dokoro_store.index.chunking import Chunk

__all__ = [
    "CONTENT_PREFIX",
    "IndexReport",
    "IndexStats",
    "IndexedDocument",
    "NewDocument",
    "OnIndexed",
    "OnIndexedBatch",
    "Progress",
    "embedding_text",
    "mismatch_message",
    "validate_doc_id",
]

CONTENT_PREFIX = "index://"  # filepath of a document indexed from content, with no file behind it
_MAX_DOC_ID = 256

Progress = Callable[[int, int, str], None]  # (done, total, what)


def mismatch_message(stored: str, current: str) -> str:
    return (
        f"the vector index was built with {stored}, but this process embeds with {current}: vectors of two "
        f"embedders cannot be compared. Run `dokoro reembed` to rebuild the vectors with {current} "
        "(or set DOKORO_EMBEDDER back so it matches the index); search_universal with mode='keyword' still works."
    )


@dataclass(frozen=True)
class IndexedDocument:
    """A document that was just (re)indexed, as indexing listeners receive it."""

    doc_id: str
    title: str
    content: str
    filepath: str
    doc_type: str
    content_hash: str
    reason: str  # "new" | "changed" | "full"


OnIndexed = Callable[[IndexedDocument], None]
OnIndexedBatch = Callable[[Sequence[IndexedDocument]], None]


@dataclass(frozen=True)
class NewDocument:
    """A document to save in bulk (:meth:`DocumentService.save_many`)."""

    id: str
    content: str
    title: str = "Untitled"
    filepath: str | None = None
    doc_type: str = "note"
    status: str = "active"
    metadata: dict[str, Any] | None = None
    thread: str | None = None  # the conversation or log it is one entry of (search lifts neighbours)
    thread_pos: int | None = None  # its place in that thread
    created_at: datetime | None = None  # when the text was written (a transcript's line); default: now


@dataclass
class IndexReport:
    considered: int = 0
    indexed: int = 0
    unchanged: int = 0
    chunks: int = 0
    tokens: int = 0
    vectors: int = 0
    embedder: str | None = None
    notes: list[str] = field(default_factory=list)
    thread_place: tuple[str, int] | None = None  # index_content's: its thread and place in it
    vectors_behind: int = 0  # documents whose vectors are embedded behind the write (write-behind)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


@dataclass(frozen=True)
class IndexStats:
    total_docs: int
    indexed_docs: int
    pending_docs: int
    chunks: int
    vectors: int
    tokens: int
    stamp: str | None
    stamp_dimension: int | None


@dataclass(frozen=True)
class DocRow:
    id: str
    title: str
    content: str
    filepath: str
    doc_type: str
    stored_hash: str | None


def validate_doc_id(doc_id: str) -> str:
    value = doc_id.strip()
    if not value:
        raise InvalidArgumentError("doc_id must not be empty: pass a stable id such as 'adr-012-auth'")
    if len(value) > _MAX_DOC_ID:
        raise InvalidArgumentError(f"doc_id is too long ({len(value)} characters; at most {_MAX_DOC_ID})")
    if any(ch in value for ch in "\n\r\t\x00"):
        raise InvalidArgumentError("doc_id must be one line without control characters")
    return value


def embedding_text(title: str, chunk: Chunk) -> str:
    """What gets embedded for a chunk: its heading (or the document title) as context, then the text."""
    context = (chunk.header_context or title or "").strip()
    first_line = chunk.text.lstrip().split("\n", 1)[0].lstrip("#").strip().lower()
    if context:
        # Whether the first line already starts with the context as whole words (no pattern
        # compiled per title: this runs on every chunk of every write).
        lowered = context.lower()
        rest = first_line[len(lowered) :]
        if not (first_line.startswith(lowered) and (not rest or _NON_WORD.match(rest) is not None)):
            return f"{context}\n{chunk.text}"
    return chunk.text


_NON_WORD = re.compile(r"\W")
