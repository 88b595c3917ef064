"""Results of the search layer: hybrid search, the index, workspace markdown and ambient context.

The retrieval services build these and the dokoro-search tools return them unchanged (their
output schema). Pure pydantic: nothing here imports the database or numpy.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from dokoro_store.results.base import IsoTime, Result

__all__ = [
    "AmbientResult",
    "IndexContentResult",
    "MarkdownHit",
    "MarkdownResults",
    "ReindexResult",
    "SearchHit",
    "SearchResults",
    "SearchSource",
    "SearchStatusResult",
]

# hybrid: both legs found it; keyword / semantic: one leg; neighbour: lifted by the thread entry beside it.
SearchSource = Literal["hybrid", "keyword", "semantic", "neighbour"]


class SearchHit(Result):
    """One document found, with the scores behind its place and why it surfaced."""

    rank: int
    doc_id: str
    title: str
    filepath: str
    doc_type: str
    status: str
    tags: list[str]
    updated_at: IsoTime
    score: float = Field(description="The fused score that orders this search's hits (not comparable across searches).")
    relevance: float = Field(
        default=0.0,
        description="How likely the hit is relevant, on one scale for every query (calibrated; 0-1). Below 0.15 "
        "it is not a close match.",
    )
    source: SearchSource
    why: str
    matched_terms: list[str]
    fts_score: float | None = Field(description="Full-text score relative to the best full-text hit (1.0).")
    fts_rank: int | None = Field(description="0-based rank in the full-text leg.")
    vector_score: float | None = Field(description="Cosine similarity of the document's best chunk.")
    vector_rank: int | None = Field(description="0-based rank in the vector leg.")
    chunk_index: int | None
    start_line: int | None
    end_line: int | None
    header: str | None
    excerpt: str
    retired: str | None = Field(
        default=None,
        description="Set for a memory that no longer holds (superseded, archived, deprecated): which, in "
        "words. Such hits rank below every current and every stale match.",
    )
    stale: str | None = Field(
        default=None,
        description="Set for a memory still in force but stale (past valid_until or review_after, or depending "
        "on a retired memory): why, in words starting with 'stale'. Ranked below current matches, above retired.",
    )
    # Read by services (planning, memories), not part of the tool's output.
    graph_rank: int | None = Field(default=None, exclude=True)
    graph_entities: tuple[str, ...] = Field(default=(), exclude=True)


class SearchResults(Result):
    """What a search found, and notes on anything that limited it (e.g. no embedder)."""

    query: str
    mode: str
    embedder: str | None
    vector_engine: str
    notes: list[str]
    results: list[SearchHit]
    close_match: bool = Field(
        default=True, description="False when no hit is a close match (relevance under 0.15): only the nearest."
    )

    @property
    def hits(self) -> list[SearchHit]:
        return self.results


class ReindexResult(Result):
    full: bool
    files_added: int
    files_updated: int
    files_removed: int
    considered: int
    indexed: int
    unchanged: int
    chunks: int
    tokens: int
    vectors: int
    embedder: str | None
    notes: list[str]
    total_docs: int
    indexed_docs: int
    total_chunks: int


class IndexContentResult(Result):
    doc_id: str
    thread: str | None = Field(default=None, description="The conversation or session the text belongs to.")
    thread_pos: int | None = Field(default=None, description="Its 0-based place in that thread, in the order written.")
    chunks: int
    tokens: int
    vectors: int
    embedder: str | None
    notes: list[str]
    vectors_behind: bool = Field(
        default=False,
        description="The vectors are embedded just behind this write (within a second or two); full text finds it now.",
    )


class SearchStatusResult(Result):
    """The engines a store searches with and how much is indexed (found without loading a model)."""

    embedder_choice: str
    embedder_kind: str
    embedder: str | None
    embedder_label: str
    embedder_available: bool
    embedder_detail: str
    embedder_model_file: str | None = Field(description="The weights the embedder loads (file, or Ollama model).")
    reranker: str = Field(description="The second stage of hybrid search, or how fusion ranks without one.")
    vector_engine: str
    vector_engine_label: str
    full_text: str
    total_docs: int
    indexed_docs: int
    pending_docs: int
    chunks: int
    vectors: int
    engine_vectors: int
    tokens: int
    index_stamp: str | None
    stamp_mismatch: str | None
    vectors_missing: str | None = Field(
        default=None, description="Set when the vector engine holds fewer vectors than are stored: how to rebuild."
    )


class MarkdownHit(Result):
    file: str = Field(description="Relative to the workspace folder.")
    title: str
    excerpt: str
    tags: dict[str, Any] | list[Any] | str | None = Field(
        description="The file's front-matter tags as written: a map (key: value), a list or a string; null without."
    )
    last_modified: IsoTime


class MarkdownResults(Result):
    results: list[MarkdownHit]


class AmbientResult(Result):
    """What git says the project is doing, the query made of it, and the memory that matches."""

    project_path: str
    branch: str
    commits: list[str]
    files: list[str]
    branch_keywords: list[str]
    commit_keywords: list[str]
    file_keywords: list[str]
    query: str
    notes: list[str]
    results: list[SearchHit]
