"""Hybrid search tools: search, reindex, index content, status (reference §2.13).

Every search tool first brings the index in step (hand-edited workspace markdown, documents
written by other tools); that never fails the call, it only adds notes.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from dokoro_server import ToolSpec, card, result, state
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import BaseModel, Field

__all__ = ["TOOLS", "SearchHitOut", "hits_out", "render_hits"]


class SearchHitOut(BaseModel):
    rank: int
    doc_id: str
    title: str
    filepath: str
    doc_type: str
    status: str
    tags: list[str]
    updated_at: str
    score: float
    source: Literal["hybrid", "keyword", "semantic"]
    why: str
    matched_terms: list[str]
    fts_score: float | None
    fts_rank: int | None
    vector_score: float | None
    vector_rank: int | None
    chunk_index: int | None
    start_line: int | None
    end_line: int | None
    header: str | None
    excerpt: str


class SearchOut(BaseModel):
    query: str
    mode: str
    embedder: str | None
    vector_engine: str
    notes: list[str]
    results: list[SearchHitOut]


class ReindexOut(BaseModel):
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


class IndexContentOut(BaseModel):
    doc_id: str
    chunks: int
    tokens: int
    vectors: int
    embedder: str | None
    notes: list[str]


class StatusOut(BaseModel):
    embedder_choice: str
    embedder_kind: str
    embedder: str | None
    embedder_label: str
    embedder_available: bool
    embedder_detail: str
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


def hits_out(hits: list[Any]) -> list[SearchHitOut]:
    from dokoro_store.clock import iso

    return [
        SearchHitOut(
            rank=h.rank,
            doc_id=h.doc_id,
            title=h.title,
            filepath=h.filepath,
            doc_type=h.doc_type,
            status=h.status,
            tags=h.tags,
            updated_at=iso(h.updated_at),
            score=round(h.score, 6),
            source=h.source,
            why=h.why,
            matched_terms=h.matched_terms,
            fts_score=round(h.fts_score, 4) if h.fts_score is not None else None,
            fts_rank=h.fts_rank,
            vector_score=round(h.vector_score, 4) if h.vector_score is not None else None,
            vector_rank=h.vector_rank,
            chunk_index=h.chunk_index,
            start_line=h.start_line,
            end_line=h.end_line,
            header=h.header,
            excerpt=h.excerpt,
        )
        for h in hits
    ]


def render_hits(hits: list[SearchHitOut]) -> str:
    blocks = []
    for h in hits:
        scores = []
        if h.fts_score is not None:
            scores.append(f"FTS: {h.fts_score:.3f} (#{(h.fts_rank or 0) + 1})")
        if h.vector_score is not None:
            scores.append(f"Vector: {h.vector_score:.3f} (#{(h.vector_rank or 0) + 1})")
        lines = [
            f"**{h.rank}. {h.title}|{h.doc_id}**",
            f"Source: {h.source} | Score: {h.score:.4f}",
            " | ".join(scores),
            f"Why: {h.why}",
            f"File: {h.filepath}" + (f" (lines {h.start_line}-{h.end_line})" if h.start_line else ""),
        ]
        if h.tags:
            lines.append("Tags: " + ", ".join(h.tags))
        lines.append(f"> {h.excerpt}")
        blocks.append("\n".join(line for line in lines if line))
    return "\n\n".join(blocks)


def search_universal(
    ctx: Context,
    query: Annotated[str, Field(min_length=1, description="What to look for, in plain words (a question works).")],
    limit: Annotated[int, Field(ge=1, le=100, description="How many documents to return.")] = 10,
    mode: Annotated[
        Literal["hybrid", "keyword", "semantic"],
        Field(description="hybrid (full text + vectors, fused), keyword (full text only) or semantic (vectors only)."),
    ] = "hybrid",
    graph: Annotated[
        bool,
        Field(description="In hybrid mode, lift documents the entity graph links to entities named in the query."),
    ] = True,
) -> Annotated[CallToolResult, SearchOut]:
    """Search every document of the memory (session dumps, decisions, research, indexed content, workspace
    markdown) by meaning and by words at once. Each result says why it surfaced (matched terms, semantic
    neighbour, or both) and carries its scores. Quotes keep a phrase; any text is safe to pass."""
    store = state(ctx).store
    refresh = store.search.refresh()
    found = store.search.universal(query, limit=limit, mode=mode, graph=graph)
    notes = refresh.notes + found.notes
    out = SearchOut(
        query=query,
        mode=found.mode,
        embedder=found.embedder,
        vector_engine=found.vector_engine,
        notes=notes,
        results=hits_out(found.hits),
    )
    if not out.results:
        text = (
            f"No results for {query!r}. If documents should match, run search_reindex "
            "(or search_status to see what is indexed)."
        )
    else:
        text = f"🔎 {len(out.results)} result(s) for {query!r} ({found.mode}):\n\n" + render_hits(out.results)
    if notes:
        text += "\n\n" + "\n".join(f"⚠️ {note}" for note in notes)
    return result(text, out)


def search_reindex(
    ctx: Context,
    full: Annotated[
        bool,
        Field(description="Drop every chunk and vector and rebuild them all with the current embedder."),
    ] = False,
) -> Annotated[CallToolResult, ReindexOut]:
    """Bring the search index up to date: re-read changed workspace markdown and index every document whose
    content changed (only those are re-embedded). full=true rebuilds everything (also after changing the
    embedder)."""
    store = state(ctx).store
    reconcile = store.markdown.reconcile()
    report = store.docs.reindex(full=full)
    stats = store.docs.stats()
    out = ReindexOut(
        full=full,
        files_added=reconcile.added,
        files_updated=reconcile.updated,
        files_removed=reconcile.removed,
        considered=report.considered,
        indexed=report.indexed,
        unchanged=report.unchanged,
        chunks=report.chunks,
        tokens=report.tokens,
        vectors=report.vectors,
        embedder=report.embedder,
        notes=reconcile.errors + report.notes,
        total_docs=stats.total_docs,
        indexed_docs=stats.indexed_docs,
        total_chunks=stats.chunks,
    )
    details = {
        "Workspace files": f"{reconcile.added} added, {reconcile.updated} updated, {reconcile.removed} removed",
        "Documents": f"{report.indexed} indexed, {report.unchanged} unchanged (of {report.considered})",
        "This run": f"{report.chunks} chunks, {report.tokens} tokens, {report.vectors} vectors",
        "Embedder": report.embedder or "none (full text only)",
        "Index": f"{stats.indexed_docs}/{stats.total_docs} documents, {stats.chunks} chunks",
    }
    text = card("Search Index Updated" if not full else "Search Index Rebuilt", "", details)
    if out.notes:
        text += "\n\n" + "\n".join(f"⚠️ {note}" for note in out.notes)
    return result(text, out)


def search_index_content(
    ctx: Context,
    doc_id: Annotated[str, Field(min_length=1, description="Stable id of the document (created when new).")],
    content: Annotated[str, Field(min_length=1, description="The text to index (markdown welcome).")],
    title: Annotated[str, Field(description="A title for the document.")] = "Untitled",
) -> Annotated[CallToolResult, IndexContentOut]:
    """Index a piece of content under a document id so search_universal finds it (research notes, pasted
    docs, findings). A new id creates the document; an existing one is replaced and re-indexed."""
    report = state(ctx).store.docs.index_content(doc_id, content, title)
    out = IndexContentOut(
        doc_id=doc_id.strip(),
        chunks=report.chunks,
        tokens=report.tokens,
        vectors=report.vectors,
        embedder=report.embedder,
        notes=report.notes,
    )
    details = {
        "Document": out.doc_id,
        "Chunks": out.chunks,
        "Tokens": out.tokens,
        "Vectors": f"{out.vectors} ({out.embedder})" if out.embedder else "none (full text only)",
    }
    text = card("Content Indexed", "", details)
    if out.notes:
        text += "\n\n" + "\n".join(f"⚠️ {note}" for note in out.notes)
    return result(text, out)


def search_status(ctx: Context) -> Annotated[CallToolResult, StatusOut]:
    """Show what the search index holds and which engines it uses: embedder, vector engine (LanceDB,
    pgvector or exact scan), full-text engine, documents indexed and waiting."""
    status = state(ctx).store.search.status()
    stats = status.stats
    out = StatusOut(
        embedder_choice=status.embedder.choice,
        embedder_kind=status.embedder.kind,
        embedder=status.embedder.id,
        embedder_label=status.embedder.label,
        embedder_available=status.embedder.available,
        embedder_detail=status.embedder.detail,
        vector_engine=status.vector_engine,
        vector_engine_label=status.vector_engine_label,
        full_text=status.full_text,
        total_docs=stats.total_docs,
        indexed_docs=stats.indexed_docs,
        pending_docs=stats.pending_docs,
        chunks=stats.chunks,
        vectors=stats.vectors,
        engine_vectors=status.engine_vectors,
        tokens=stats.tokens,
        index_stamp=stats.stamp,
        stamp_mismatch=status.stamp_message,
    )
    available = "available" if out.embedder_available else f"unavailable: {out.embedder_detail}"
    details = {
        "Embedder": f"{out.embedder_label} [{available}]",
        "Vector engine": out.vector_engine_label,
        "Full text": out.full_text,
        "Documents": f"{out.indexed_docs}/{out.total_docs} indexed",
        "Chunks": f"{out.chunks} ({out.vectors} with vectors, {out.engine_vectors} in the engine)",
        "Tokens": out.tokens,
        "Index stamp": out.index_stamp or "none yet",
    }
    waiting = (
        f"{out.pending_docs} documents need indexing (search_reindex, or any search)."
        if out.pending_docs
        else "All documents are indexed."
    )
    text = card("Search Status", waiting, details, status="warning" if out.stamp_mismatch else "info")
    if out.stamp_mismatch:
        text += f"\n\n⚠️ {out.stamp_mismatch}"
    return result(text, out)


TOOLS = [
    ToolSpec(search_universal, "Search memory (hybrid)", read_only=False, idempotent=True),
    ToolSpec(search_reindex, "Update the search index", idempotent=True),
    ToolSpec(search_index_content, "Index content for search", idempotent=True),
    ToolSpec(search_status, "Search index status", read_only=True, idempotent=True),
]
