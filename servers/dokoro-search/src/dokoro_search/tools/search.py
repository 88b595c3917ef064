"""Hybrid search tools: search, reindex, index content, status (reference §2.13).

Every search tool first brings the index in step (hand-edited workspace markdown, documents
written by other tools); that never fails the call, it only adds notes. The results are the
store's own models (``dokoro_store.results.search``), returned unchanged.
"""

from __future__ import annotations

from typing import Annotated, Literal

from dokoro_server import AppState, ToolSpec, card, require_operator, result, state
from dokoro_server.bounds import IsoDate, Key, Keys, Query, Text, Title
from dokoro_store.results.search import (
    IndexContentResult,
    ReindexResult,
    SearchHit,
    SearchResults,
    SearchStatusResult,
)
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field

__all__ = ["TOOLS", "render_hits"]


def render_hits(hits: list[SearchHit]) -> str:
    blocks = []
    for h in hits:
        scores = []
        if h.fts_score is not None:
            scores.append(f"FTS: {h.fts_score:.3f} (#{(h.fts_rank or 0) + 1})")
        if h.vector_score is not None:
            scores.append(f"Vector: {h.vector_score:.3f} (#{(h.vector_rank or 0) + 1})")
        lines = [
            f"**{h.rank}. {h.title}**"
            + (f" — ⚠️ RETIRED: {h.retired}" if h.retired else "")
            + (f" — ⏳ {h.stale}" if h.stale else ""),
            f"ID: {h.doc_id} | Source: {h.source} | Relevance: {h.relevance:.2f} | Score: {h.score:.4f}",
            " | ".join(scores),
            f"Why: {h.why}",
            f"File: {h.filepath}" + (f" (lines {h.start_line}-{h.end_line})" if h.start_line else ""),
        ]
        if h.tags:
            lines.append("Tags: " + ", ".join(h.tags))
        lines.append(f"> {h.excerpt}")
        blocks.append("\n".join(line for line in lines if line))
    return "\n\n".join(blocks)


def _notes(text: str, notes: list[str]) -> str:
    return text + ("\n\n" + "\n".join(f"⚠️ {note}" for note in notes) if notes else "")


def search_universal(
    ctx: Context[AppState],
    query: Annotated[Query, Field(min_length=1, description="What to look for, in plain words (a question works).")],
    limit: Annotated[int, Field(ge=1, le=100, description="How many documents to return.")] = 10,
    mode: Annotated[
        Literal["hybrid", "keyword", "semantic"],
        Field(description="hybrid (full text + vectors, fused), keyword (full text only) or semantic (vectors only)."),
    ] = "hybrid",
    graph: Annotated[
        bool,
        Field(description="In hybrid mode, lift documents the entity graph links to entities named in the query."),
    ] = True,
    doc_types: Annotated[
        Keys | None,
        Field(
            description="Only documents of these types (e.g. memory, research, plan, note, session): a condition of "
            "the search itself, so they are found however many other documents outrank them."
        ),
    ] = None,
) -> Annotated[CallToolResult, SearchResults]:
    """Search every document of the memory (session dumps, decisions, research, indexed content, workspace
    markdown) by meaning and by words at once. Each result says why it surfaced (matched terms, semantic
    neighbour, the entry beside it that matched) and carries its scores. Quotes keep a phrase; any text is
    safe to pass."""
    from dokoro_store import DocScope

    wanted = tuple(t.strip().lower() for t in doc_types or () if t.strip())
    store = state(ctx).store
    refresh = store.search.refresh()
    scope = DocScope(doc_types=wanted) if wanted else None
    found = store.search.universal(query, limit=limit, mode=mode, graph=graph, scope=scope)
    out = found.model_copy(update={"notes": refresh.notes + found.notes})
    if not out.results:
        text = (
            f"No results for {found.query!r}. If documents should match, run search_reindex "
            "(or search_status to see what is indexed)."
        )
    elif not out.close_match:
        text = (
            f"🔎 No close match for {found.query!r} (no hit reaches relevance 0.15); the nearest "
            f"{len(out.results)} ({found.mode}):\n\n" + render_hits(out.results)
        )
    else:
        text = f"🔎 {len(out.results)} result(s) for {found.query!r} ({found.mode}):\n\n" + render_hits(out.results)
    return result(_notes(text, out.notes), out)


def search_reindex(
    ctx: Context[AppState],
    full: Annotated[
        bool,
        Field(description="Drop every chunk and vector and rebuild them all with the current embedder."),
    ] = False,
) -> Annotated[CallToolResult, ReindexResult]:
    """Bring the search index up to date: re-read changed workspace markdown and index every document whose
    content changed (only those are re-embedded). full=true rebuilds everything (also after changing the
    embedder). On the shared HTTP server full=true is the operator's (an operator token)."""
    if full:
        require_operator("a full reindex (full=true)", "`dokoro reindex --full`")
    out = state(ctx).store.search.reindex(full=full)
    details = {
        "Workspace files": f"{out.files_added} added, {out.files_updated} updated, {out.files_removed} removed",
        "Documents": f"{out.indexed} indexed, {out.unchanged} unchanged (of {out.considered})",
        "This run": f"{out.chunks} chunks, {out.tokens} tokens, {out.vectors} vectors",
        "Embedder": out.embedder or "none (full text only)",
        "Index": f"{out.indexed_docs}/{out.total_docs} documents, {out.total_chunks} chunks",
    }
    text = card("Search Index Updated" if not full else "Search Index Rebuilt", "", details)
    return result(_notes(text, out.notes), out)


def search_index_content(
    ctx: Context[AppState],
    doc_id: Annotated[Key, Field(min_length=1, description="Stable id of the document (created when new).")],
    content: Annotated[Text, Field(min_length=1, description="The text to index (markdown welcome).")],
    title: Annotated[Title, Field(description="A title for the document.")] = "Untitled",
    thread: Annotated[
        Key | None,
        Field(
            description="The conversation or session the text belongs to: texts of one thread are neighbours in "
            "the order written, and a search that matches one also lifts the texts beside it."
        ),
    ] = None,
    at: Annotated[
        IsoDate | None,
        Field(description="When the text was written (ISO-8601), ordering it in its thread; default now."),
    ] = None,
) -> Annotated[CallToolResult, IndexContentResult]:
    """Index a piece of content under a document id so search_universal finds it (research notes, pasted
    docs, findings, the turns of a conversation). A new id creates the document; an existing one is replaced
    and re-indexed. Pass thread (and at) for texts of one conversation or session: search then finds the
    answer that sits beside the text naming its topic."""
    out = state(ctx).store.search.index_content(doc_id, content, title, thread=thread, at=at)
    details: dict[str, object] = {
        "Document": out.doc_id,
        "Chunks": out.chunks,
        "Tokens": out.tokens,
        "Vectors": f"{out.vectors} ({out.embedder})" if out.embedder else "none (full text only)",
    }
    if out.vectors_behind:  # full text finds it now; a search embeds it first if it runs sooner
        details["Vectors"] = f"embedded just behind this write ({out.embedder}), within a second"
    if out.thread is not None:
        details["Thread"] = f"{out.thread}, place {(out.thread_pos or 0) + 1}"
    return result(_notes(card("Content Indexed", "", details), out.notes), out)


def search_status(ctx: Context[AppState]) -> Annotated[CallToolResult, SearchStatusResult]:
    """Show what the search index holds and which engines it uses: embedder (and its model file), re-ranker,
    vector engine (LanceDB, pgvector or exact scan), full-text engine, documents indexed and waiting."""
    out = state(ctx).store.search.status()
    available = "available" if out.embedder_available else f"unavailable: {out.embedder_detail}"
    details = {
        "Embedder": f"{out.embedder_label} [{available}]",
        "Model file": out.embedder_model_file or "-",
        "Re-ranker": out.reranker,
        "Vector engine": out.vector_engine_label,
        "Full text": out.full_text,
        "Documents": f"{out.indexed_docs}/{out.total_docs} indexed",
        "Chunks": f"{out.chunks} ({out.vectors} with vectors, {out.engine_vectors} in the engine)",
        "Tokens": out.tokens,
        "Index stamp": out.index_stamp or "none yet",
    }
    if out.pending_docs:
        waiting = f"{out.pending_docs} documents need indexing (search_reindex, or any search)."
    elif out.vectors_missing:
        waiting = "Every document's text is indexed, but vectors are missing from the vector engine."
    else:
        waiting = "All documents are indexed."
    warned = out.stamp_mismatch or out.vectors_missing
    text = card("Search Status", waiting, details, status="warning" if warned else "info")
    for problem in (out.stamp_mismatch, out.vectors_missing):
        if problem:
            text += f"\n\n⚠️ {problem}"
    return result(text, out)


TOOLS = [
    # Not read-only: indexes hand-edited workspace markdown first.
    ToolSpec(search_universal, "Search memory (hybrid)", idempotent=True),
    ToolSpec(search_reindex, "Update the search index", idempotent=True),
    ToolSpec(search_index_content, "Index content for search", destructive=True, idempotent=True),  # replaces doc_id
    ToolSpec(search_status, "Search index status", read_only=True, idempotent=True),
]
