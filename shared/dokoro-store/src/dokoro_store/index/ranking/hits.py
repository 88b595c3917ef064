"""Turning fused candidates into search hits: excerpts, matched terms and why each surfaced."""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import select

from dokoro_store.db.engine import Database
from dokoro_store.index.fulltext.planner import PlannedQuery, is_cjk
from dokoro_store.index.ranking.fusion import Fused
from dokoro_store.index.vectors.index import VectorHit
from dokoro_store.models import Doc
from dokoro_store.models.index import chunks, docs_table
from dokoro_store.results.search import SearchHit, SearchSource
from dokoro_store.walls import frontmatter

__all__ = ["EXCERPT_CHARS", "build_hits", "matched_terms"]

EXCERPT_CHARS = 200


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


def build_hits(
    db: Database,
    fused: list[Fused],
    planned: PlannedQuery,
    text_by_doc: dict[str, Any],
    vector_by_doc: dict[str, VectorHit],
    graph_by_doc: dict[str, Any] | None = None,
    lifted: dict[str, str] | None = None,
    retired: dict[str, str] | None = None,
    relevance: dict[str, float] | None = None,
    stale: dict[str, str] | None = None,
) -> list[SearchHit]:
    ids = [f.key for f in fused]
    if not ids:
        return []
    chunk_ids = [vector_by_doc[i].chunk_id for i in ids if i in vector_by_doc]
    with db.read() as session:
        docs = {d.id: d for d in session.execute(select(Doc).where(docs_table.c.id.in_(ids))).scalars()}
        chunk_rows = {
            str(r.chunk_id): r for r in session.execute(select(chunks).where(chunks.c.chunk_id.in_(chunk_ids))).all()
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
        beside = (lifted or {}).get(doc.id)
        source: SearchSource
        if text_hit and vector_hit:
            source = "hybrid"
        elif text_hit or vector_hit:
            source = "keyword" if text_hit else "semantic"
        else:
            source = "neighbour" if beside else "semantic"
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
        if beside:
            reasons.append(f"beside {beside}, which matches, in {doc.thread}")
        state = (retired or {}).get(doc.id)
        if state:
            reasons.append(f"retired ({state}): ranked below every current match")
        stale_why = (stale or {}).get(doc.id)
        if stale_why:
            reasons.append(f"{stale_why}: ranked below every current match")
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
                score=round(fused_hit.score, 6),
                relevance=round((relevance or {}).get(doc.id, 0.0), 4),
                source=source,
                fts_score=round(text_hit.score, 4) if text_hit else None,
                fts_rank=fts_rank,
                vector_score=round(vector_hit.score, 4) if vector_hit else None,
                vector_rank=vector_rank,
                matched_terms=terms,
                chunk_index=int(chunk.chunk_index) if chunk is not None else None,
                start_line=int(chunk.start_line) if chunk is not None else None,
                end_line=int(chunk.end_line) if chunk is not None else None,
                header=chunk.header_context if chunk is not None else None,
                excerpt=excerpt,
                why="; ".join(reasons),
                retired=state,
                stale=stale_why,
                graph_rank=graph_rank if graph_hit else None,
                graph_entities=tuple(graph_hit.entities) if graph_hit else (),
            )
        )
    return hits
