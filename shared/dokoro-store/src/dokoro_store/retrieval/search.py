"""Hybrid search over the documents: full text and vectors fused by reciprocal rank (§4.4).

:meth:`SearchService.universal` plans the query (:mod:`~dokoro_store.retrieval.planner`), runs the
full-text leg and the vector leg (chunks deduplicated to their best chunk per document), fuses
them with RRF (k = 60) and explains every hit: the terms it matched, its cosine as a semantic
neighbour, or both, with the scores and ranks behind them.

:meth:`SearchService.refresh` is what search tools run on entry: the reconcile of hand-edited
workspace markdown, then indexing of every document whose content changed since it was indexed
(session dumps, imports, rows written by other layers). It never fails the tool: problems become
notes.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError

from dokoro_store import frontmatter
from dokoro_store.db.engine import Database
from dokoro_store.errors import DokoroError, EmbedderMismatchError, EmbedderUnavailableError, InvalidArgumentError
from dokoro_store.models import Doc
from dokoro_store.retrieval.documents import DocumentService, IndexReport, IndexStats
from dokoro_store.retrieval.embedders import EmbedderHandle, EmbedderStatus
from dokoro_store.retrieval.fulltext import FullTextIndex, full_text_for
from dokoro_store.retrieval.fusion import RRF_K, best_per_document, reciprocal_rank_fusion
from dokoro_store.retrieval.planner import PlannedQuery, is_cjk, plan_query
from dokoro_store.retrieval.tables import chunks, docs_table
from dokoro_store.retrieval.vectors import VectorHit, VectorIndex
from dokoro_store.retrieval.workspace_index import ReconcileReport, WorkspaceIndex

if TYPE_CHECKING:
    from dokoro_store.retrieval.embedders import Embedder

__all__ = ["SEARCH_MODES", "RefreshReport", "SearchHit", "SearchMode", "SearchResult", "SearchService", "SearchStatus"]

log = logging.getLogger("dokoro.store")

SearchMode = Literal["hybrid", "keyword", "semantic"]
# The graph signal: (query, depth) → documents linked to entities named in the query, best first,
# each with ``doc_id`` and ``entities`` (names) — GraphService.search_signal.
GraphSignal = Callable[[str, int], Sequence[Any]]
SEARCH_MODES: tuple[SearchMode, ...] = ("hybrid", "keyword", "semantic")
MAX_LIMIT = 100
EXCERPT_CHARS = 200


@dataclass(frozen=True)
class SearchHit:
    rank: int
    doc_id: str
    title: str
    filepath: str
    doc_type: str
    status: str
    tags: list[str]
    updated_at: datetime
    score: float  # the fused RRF score
    source: str  # hybrid | keyword | semantic
    fts_score: float | None  # relative to the best full-text hit (1.0)
    fts_rank: int | None  # 0-based
    vector_score: float | None  # cosine similarity of the best chunk
    vector_rank: int | None  # 0-based, among documents
    matched_terms: list[str]
    chunk_index: int | None
    start_line: int | None
    end_line: int | None
    header: str | None
    excerpt: str
    why: str
    graph_rank: int | None = None  # 0-based, among documents linked to entities named in the query
    graph_entities: tuple[str, ...] = ()


@dataclass(frozen=True)
class SearchResult:
    query: str
    mode: str
    hits: list[SearchHit]
    notes: list[str]
    embedder: str | None
    vector_engine: str
    planned: PlannedQuery


@dataclass
class RefreshReport:
    reconcile: ReconcileReport | None = None
    index: IndexReport | None = None
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SearchStatus:
    embedder: EmbedderStatus
    vector_engine: str
    vector_engine_label: str
    full_text: str
    stats: IndexStats
    engine_vectors: int
    stamp_message: str | None


def _term_present(term: str, text: str) -> bool:
    if is_cjk(term) or " " in term:
        return term in text
    stem = term[: max(3, len(term) - 2)] if len(term) > 4 else term
    return re.search(r"(?<!\w)" + re.escape(stem), text) is not None


def matched_terms(planned: PlannedQuery, text: str) -> list[str]:
    lowered = text.lower()
    return [t for t in (*planned.words, *planned.cjk) if _term_present(t, lowered)]


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _excerpt(body: str, start: int = 0, end: int | None = None) -> str:
    piece = _clean(body[start:end] if end is not None else body[start:])
    return piece if len(piece) <= EXCERPT_CHARS else piece[:EXCERPT_CHARS] + "..."


def _keyword_excerpt(body: str, terms: list[str]) -> str:
    lowered = body.lower()
    positions = [p for p in (lowered.find(t.lower()[: max(3, len(t) - 2)]) for t in terms) if p >= 0]
    start = max(0, min(positions) - 60) if positions else 0
    text = _excerpt(body, start, start + EXCERPT_CHARS + 100)
    return ("..." + text) if start > 0 else text


def _body(content: str) -> tuple[str, int]:
    """The content without its front matter, and how many characters that removed."""
    raw, body = frontmatter.split(content)
    return body, (len(content) - len(body)) if raw is not None else 0


class SearchService:
    def __init__(
        self,
        db: Database,
        embedder: EmbedderHandle,
        docs: DocumentService,
        workspace: WorkspaceIndex,
        vectors: Callable[[], VectorIndex],
    ) -> None:
        self._db = db
        self._embedder = embedder
        self._docs = docs
        self._workspace = workspace
        self._vectors = vectors
        self._full_text: FullTextIndex = full_text_for(db.dialect)
        # Set by the store: lifts documents linked to entities named in the query (hybrid mode).
        self.graph_signal: GraphSignal | None = None

    # ------------------------------------------------------------------ keeping in step
    def refresh(self) -> RefreshReport:
        """Reconcile workspace markdown and index changed documents (never raises for index problems)."""
        report = RefreshReport()
        try:
            report.reconcile = self._workspace.reconcile()
            report.notes += report.reconcile.errors
        except (OSError, SQLAlchemyError, DokoroError) as exc:
            log.warning("dokoro: workspace reconcile failed", exc_info=True)
            report.notes.append(f"workspace reconcile failed: {exc}")
        try:
            pending = self._docs.pending()
            if pending:
                report.index = self._docs.index_docs(pending)
                report.notes += report.index.notes
        except EmbedderMismatchError as exc:
            report.notes.append(str(exc))
        except (SQLAlchemyError, DokoroError) as exc:
            log.warning("dokoro: indexing changed documents failed", exc_info=True)
            report.notes.append(f"indexing failed: {exc}")
        return report

    # ------------------------------------------------------------------ search
    def universal(
        self, query: str, limit: int = 10, mode: SearchMode = "hybrid", depth: int | None = None, graph: bool = True
    ) -> SearchResult:
        """Search every document; ``mode`` = hybrid (default), keyword (full text) or semantic (vectors).

        In hybrid mode, the documents found that the entity graph links to entities named in the query
        form a third fused list (the graph signal), which lifts them, unless ``graph`` is False.
        """
        if not query.strip():
            raise InvalidArgumentError("query must not be empty: say what you are looking for")
        if not 1 <= limit <= MAX_LIMIT:
            raise InvalidArgumentError(f"limit must be between 1 and {MAX_LIMIT}; got {limit}")
        if mode not in SEARCH_MODES:
            raise InvalidArgumentError(f"mode must be one of {', '.join(SEARCH_MODES)}; got {mode!r}")
        # Candidates per leg: enough for fusion to find agreement, few enough that a weak leg's tail
        # cannot outvote the other's top hits (measured on LoCoMo: see docs/benchmarks.md).
        depth = depth or max(limit * 3 // 2, 10)
        planned = plan_query(query)
        notes: list[str] = []
        engine = self._vectors()

        text_hits = self._keyword(planned, depth) if mode != "semantic" else []
        vector_hits: list[VectorHit] = []
        embedder_id: str | None = None
        if mode != "keyword":
            embedder = self._embedder.get()
            if embedder is None:
                reason = self._embedder.reason
                if mode == "semantic":
                    raise EmbedderUnavailableError(f"semantic search needs an embedder: {reason}")
                notes.append(f"vectors skipped ({reason}); results are full-text only")
            else:
                embedder_id = embedder.id
                vector_hits = self._semantic(embedder, engine, query, depth, notes, mode)

        graph_hits = self._graph(query, depth, notes) if graph and mode == "hybrid" else []
        # The graph lifts documents the other legs found; it does not bring in new ones.
        found = {h.doc_id for h in text_hits} | {h.doc_id for h in vector_hits}
        graph_hits = [g for g in graph_hits if g.doc_id in found]
        legs = [[h.doc_id for h in text_hits], [h.doc_id for h in vector_hits], [g.doc_id for g in graph_hits]]
        fused = reciprocal_rank_fusion(legs, RRF_K)
        top = fused[:limit]
        text_by_doc = {h.doc_id: h for h in text_hits}
        vector_by_doc = {h.doc_id: h for h in vector_hits}
        graph_by_doc = {g.doc_id: g for g in graph_hits}
        hits = self._enrich(top, planned, text_by_doc, vector_by_doc, graph_by_doc)
        return SearchResult(query, mode, hits, notes, embedder_id, engine.engine, planned)

    def _graph(self, query: str, depth: int, notes: list[str]) -> list[Any]:
        if self.graph_signal is None:
            return []
        try:
            return list(self.graph_signal(query, depth))
        except (SQLAlchemyError, DokoroError) as exc:
            log.warning("dokoro: the graph signal of search failed", exc_info=True)
            notes.append(f"graph signal skipped: {exc}")
            return []

    def _keyword(self, planned: PlannedQuery, depth: int) -> list[Any]:
        if planned.empty:
            return []
        with self._db.read() as session:
            return self._full_text.search(session, planned, depth)

    def _semantic(
        self, embedder: Embedder, engine: VectorIndex, query: str, depth: int, notes: list[str], mode: str
    ) -> list[VectorHit]:
        self._docs.check_search_stamp(embedder)  # raises EmbedderMismatchError, naming `dokoro reembed`
        try:
            vector = embedder.embed([query], query=True)[0]
        except EmbedderUnavailableError as exc:
            if mode == "semantic":
                raise
            notes.append(f"vectors skipped ({exc}); results are full-text only")
            return []
        # Several chunks of one document may come back: fetch more, keep each document's best chunk.
        raw = engine.search(vector, embedder.id, depth * 3)
        return best_per_document(raw, lambda h: h.doc_id)[:depth]

    def _enrich(
        self,
        fused: list[Any],
        planned: PlannedQuery,
        text_by_doc: dict[str, Any],
        vector_by_doc: dict[str, VectorHit],
        graph_by_doc: dict[str, Any] | None = None,
    ) -> list[SearchHit]:
        ids = [f.key for f in fused]
        if not ids:
            return []
        chunk_ids = [vector_by_doc[i].chunk_id for i in ids if i in vector_by_doc]
        with self._db.read() as session:
            docs = {d.id: d for d in session.execute(select(Doc).where(docs_table.c.id.in_(ids))).scalars()}
            chunk_rows = {
                str(r.chunk_id): r
                for r in session.execute(select(chunks).where(chunks.c.chunk_id.in_(chunk_ids))).all()
            }
        hits: list[SearchHit] = []
        for fused_hit in fused:
            doc = docs.get(fused_hit.key)
            if doc is None:
                continue  # deleted between the search and now
            text_hit = text_by_doc.get(doc.id)
            vector_hit = vector_by_doc.get(doc.id)
            graph_hit = (graph_by_doc or {}).get(doc.id)
            fts_rank, vector_rank, graph_rank = (*fused_hit.ranks, None)[:3]
            source = "hybrid" if text_hit and vector_hit else ("keyword" if text_hit else "semantic")
            content = doc.content or ""
            body, cut = _body(content)
            terms = matched_terms(planned, f"{doc.title}\n{content}") if text_hit else []
            chunk = chunk_rows.get(vector_hit.chunk_id) if vector_hit else None
            if chunk is not None:
                start = max(0, int(chunk.start_char) - cut)
                excerpt = _excerpt(body, start, max(start, int(chunk.end_char) - cut))
            else:
                excerpt = _keyword_excerpt(body, terms)
            reasons = []
            if text_hit:
                reasons.append(f"matched terms: {', '.join(terms)}" if terms else "full-text match")
            if vector_hit:
                header = chunk.header_context if chunk is not None else None
                where = f" in '{header}'" if header and header != doc.title else ""
                reasons.append(f"semantic neighbour (cosine {vector_hit.score:.3f}{where})")
            if graph_hit:
                reasons.append(f"linked in the knowledge graph to {', '.join(graph_hit.entities)}")
            tags = (doc.metadata_json or {}).get("tags") or []
            hits.append(
                SearchHit(
                    rank=len(hits) + 1,
                    doc_id=doc.id,
                    title=doc.title,
                    filepath=doc.filepath,
                    doc_type=doc.doc_type,
                    status=doc.status,
                    tags=[str(t) for t in tags] if isinstance(tags, list) else [],
                    updated_at=doc.updated_at,
                    score=fused_hit.score,
                    source=source,
                    fts_score=text_hit.score if text_hit else None,
                    fts_rank=fts_rank,
                    vector_score=vector_hit.score if vector_hit else None,
                    vector_rank=vector_rank,
                    matched_terms=terms,
                    chunk_index=int(chunk.chunk_index) if chunk is not None else None,
                    start_line=int(chunk.start_line) if chunk is not None else None,
                    end_line=int(chunk.end_line) if chunk is not None else None,
                    header=chunk.header_context if chunk is not None else None,
                    excerpt=excerpt,
                    why="; ".join(reasons),
                    graph_rank=graph_rank if graph_hit else None,
                    graph_entities=tuple(graph_hit.entities) if graph_hit else (),
                )
            )
        return hits

    # ------------------------------------------------------------------ status
    def status(self) -> SearchStatus:
        """What indexes and embedder this store uses, and how much is indexed (loads no model)."""
        embedder = self._embedder.status()
        engine = self._vectors()
        stats = self._docs.stats()
        with self._db.read() as session:
            full_text = self._full_text.describe(session)
        message = None
        if stats.stamp and embedder.id and stats.stamp != embedder.id and stats.vectors:
            from dokoro_store.retrieval.documents import mismatch_message

            message = mismatch_message(stats.stamp, embedder.id)
        return SearchStatus(
            embedder=embedder,
            vector_engine=engine.engine,
            vector_engine_label=engine.describe(),
            full_text=full_text,
            stats=stats,
            engine_vectors=engine.count(),
            stamp_message=message,
        )
