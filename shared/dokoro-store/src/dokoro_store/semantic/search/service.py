"""Hybrid search over the documents: full text and vectors, fused by score (§4.4, measured better).

:meth:`SearchService.universal` plans the query (:mod:`~dokoro_store.index.fulltext.planner`), runs the
full-text leg and the vector leg (chunks deduplicated to their best chunk per document; a recall's on a
large store from the memories' chunk vectors held in memory, else the vector engine), fuses their scores
with the thread neighbours and the graph signal (:mod:`.hybrid`), re-ranks the best candidates
(:mod:`.rerank`) and explains every hit (:mod:`.hits`): the terms it matched, its cosine as a semantic
neighbour, the entry beside it that matched, with the scores behind them. One leg keeps its order.

Search has one path. What a bench needs to turn a part off it builds from the public pieces:
:meth:`SearchService.legs`, :meth:`SearchService.vector_leg`, :meth:`SearchService.texts`,
:func:`~dokoro_store.index.ranking.hybrid.fuse_scores`, :func:`~dokoro_store.index.ranking.rerank.features`,
:func:`~dokoro_store.index.ranking.hybrid.keep_agreement` (``bench/ablation.py``; its row ``pieces`` and
``tests/test_bench_pieces.py`` check that these pieces put together give this ranking).

:meth:`SearchService.refresh` is what search tools run on entry: the reconcile of hand-edited
workspace markdown, then indexing of every document whose content changed since it was indexed
(session dumps, imports, rows written by other layers). It never fails the tool: problems become
notes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy.exc import SQLAlchemyError

from dokoro_store.clock import Clock
from dokoro_store.db.driver_sql import rows_by_ids
from dokoro_store.db.engine import Database
from dokoro_store.errors import DokoroError, EmbedderMismatchError, EmbedderUnavailableError, InvalidArgumentError
from dokoro_store.index.embedders.handle import EmbedderHandle
from dokoro_store.index.fulltext.index import FullTextIndex, TextHit, full_text_for
from dokoro_store.index.fulltext.planner import PlannedQuery, plan_query
from dokoro_store.index.ranking.calibration import RelevanceInputs, family_of, relevance
from dokoro_store.index.ranking.calibration import features as relevance_features
from dokoro_store.index.ranking.fusion import (
    DEFAULT_FUSION,
    RRF_K,
    Fused,
    best_per_document,
    reciprocal_rank_fusion,
)
from dokoro_store.index.ranking.hybrid import Scored, fuse_scores, keep_agreement, unlike_only
from dokoro_store.index.ranking.neighbours import StoredVectors
from dokoro_store.index.ranking.rerank import RERANK_DEPTH, coverage, rerank
from dokoro_store.index.ranking.speakers import SPEAKER_HITS, blend, without_speaker
from dokoro_store.index.scope import DocScope
from dokoro_store.index.vectors.index import VectorHit, VectorIndex
from dokoro_store.results.search import (
    AmbientResult,
    IndexContentResult,
    ReindexResult,
    SearchHit,
    SearchResults,
    SearchStatusResult,
)
from dokoro_store.semantic.documents.service import DocumentService, validate_doc_id
from dokoro_store.semantic.documents.workspace import WorkspaceIndex
from dokoro_store.semantic.memories.lifecycle import Standing, demote_retired
from dokoro_store.semantic.memories.vectors.index import MemoryIndex
from dokoro_store.semantic.search.status import search_status
from dokoro_store.semantic.search.types import (
    MAX_LIMIT,
    SEARCH_MODES,
    GraphHit,
    GraphSignal,
    Legs,
    Ranked,
    RefreshReport,
    ScopedVectors,
    SearchMode,
    _utc_now,
)
from dokoro_store.walls.secrets import redact

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from dokoro_store.index.embedders.handle import Embedder

    Vector = npt.NDArray[np.float32]

__all__ = ["SEARCH_MODES", "RefreshReport", "SearchHit", "SearchMode", "SearchResults", "SearchService"]

log = logging.getLogger("dokoro.store")


class SearchService:
    def __init__(
        self,
        db: Database,
        embedder: EmbedderHandle,
        docs: DocumentService,
        workspace: WorkspaceIndex,
        vectors: Callable[[], VectorIndex],
        clock: Clock | None = None,
    ) -> None:
        self._db = db
        self._clock = clock  # for the expiry of memories (``valid_until``); None: the system's UTC clock
        self._embedder = embedder
        self._docs = docs
        self._workspace = workspace
        self._vectors = vectors
        self._full_text: FullTextIndex = full_text_for(db.dialect)
        # Set by the store: lifts documents linked to entities named in the query (hybrid mode).
        self.graph_signal: GraphSignal | None = None
        # The memories' chunk vectors in memory: the conflict gate's nearest neighbours, and the
        # vector leg of a search over the memories (recall) instead of the engine when it can.
        self.memory_index = MemoryIndex(db)
        self.scoped_vectors: ScopedVectors | None = self.memory_index

    def vector_notice(self) -> str | None:
        """Why this process answers by word matching only on this store, as the notice every search
        and recall answer carries; None when it compares vectors (or vectors are off by choice with
        nothing stored)."""
        embedder = self._embedder.get()
        stored, _dim = self._docs.stamp()
        if embedder is None:
            reason = self._embedder.reason
            return f"word matching only: {reason}" if reason and stored else None
        if stored is not None and stored != embedder.id:
            from dokoro_store.semantic.documents.service import mismatch_message

            message = mismatch_message(stored, embedder.id).split("; search_universal with mode=", 1)[0]
            return f"word matching only: {message}"
        return None

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
            pending = self._docs.pending_changed()  # not every document on every call
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
        self,
        query: str,
        limit: int = 10,
        mode: SearchMode = "hybrid",
        graph: bool = True,
        scope: DocScope | None = None,
    ) -> SearchResults:
        """Search every document; ``mode`` = hybrid (default), keyword (full text) or semantic (vectors).

        Hybrid mode fuses the legs' scores (:mod:`.hybrid`): full text, vectors, the neighbours of
        thread entries and, unless ``graph`` is False, the documents the entity graph links to
        entities named in the query; then re-ranks the best (:mod:`.rerank`). ``scope`` restricts
        the documents: a condition of every leg (:mod:`.scope`), so a match is found however many
        other documents outrank it.
        """
        ranked = self.ranked(query, limit, mode, graph, scope)
        hits = ranked.hits()
        return SearchResults(
            query=redact(query).text,  # echoed back redacted: a secret searched for is never printed
            mode=mode,
            embedder=ranked.legs.embedder_id,
            vector_engine=ranked.legs.engine,
            notes=ranked.legs.notes,
            results=hits,
            close_match=ranked.close_match,
        )

    def ranked(
        self,
        query: str,
        limit: int = 10,
        mode: SearchMode = "hybrid",
        graph: bool = True,
        scope: DocScope | None = None,
    ) -> Ranked:
        """The ranking of :meth:`universal` before its hits are built: the best ``limit`` documents and
        their scores, with :meth:`Ranked.hits` building the hits of those the caller keeps (a recall
        weathers the re-ranked fifty and shows ten)."""
        if not 1 <= limit <= MAX_LIMIT:
            raise InvalidArgumentError(f"limit must be between 1 and {MAX_LIMIT}; got {limit}")
        legs = self.legs(query, mode, graph, limit=limit, scope=scope)
        graph_by_doc = {g.doc_id: g for g in legs.graph_hits}
        text_by_doc = {h.doc_id: h for h in legs.text_hits}
        lifted: dict[str, str] | None = None
        seen = dict(legs.texts)  # the candidates' texts, read once (the legs', the re-ranker's, relevance's)

        def texts(doc_ids: Sequence[str]) -> dict[str, str]:
            missing = [d for d in doc_ids if d not in seen]
            if missing:
                seen.update(self.texts(missing))
            return {d: seen[d] for d in doc_ids if d in seen}

        inputs: list[RelevanceInputs] = []
        if legs.scored:
            fused_docs = self._fuse(legs, scope)
            fused_docs = rerank(legs.planned, query, fused_docs, texts, limit, vectors=legs.embedder_id is not None)
            fused_docs = [s for s in keep_agreement(fused_docs) if not unlike_only(s)]
            standing = self._standing([s.doc_id for s in fused_docs[: max(limit, RERANK_DEPTH)]])
            fused_docs = [s for s in fused_docs if s.doc_id not in standing.hidden]  # a memory type switched off
            fused_docs = demote_retired(fused_docs, lambda s: s.doc_id, standing.retired, standing.stale)
            top = [
                Fused(s.doc_id, s.score, (s.text_rank, s.vector_rank, None if not s.graph else 0))
                for s in fused_docs[:limit]
            ]
            vector_by_doc = {
                s.doc_id: VectorHit(s.chunk_id, s.doc_id, s.cosine)
                for s in fused_docs[:limit]
                if s.cosine is not None and s.chunk_id is not None and (s.vector > 0 or s.vector_rank is not None)
            }
            lifted = {s.doc_id: s.lifted_by for s in fused_docs[:limit] if s.lifted_by and s.lift > 0}
            bodies = texts([f.key for f in top])
            inputs = [
                RelevanceInputs(
                    s.cosine,
                    coverage(legs.planned, bodies.get(s.doc_id, "")),
                    s.text,
                    s.text_rank,
                    s.vector_rank,
                    s.lift > 0,
                    place,
                )
                for place, s in enumerate(fused_docs[:limit])
            ]
        else:
            ranked = [
                [h.doc_id for h in legs.text_hits],
                [h.doc_id for h in legs.vector_hits],
                [g.doc_id for g in legs.graph_hits],
            ]
            unlike = {h.doc_id for h in legs.vector_hits if h.score <= 0} - set(ranked[0]) - set(ranked[2])
            fused = [f for f in reciprocal_rank_fusion(ranked, RRF_K) if f.key not in unlike]
            standing = self._standing([f.key for f in fused[: max(limit, RERANK_DEPTH)]])
            fused = [f for f in fused if f.key not in standing.hidden]  # a memory type switched off
            top = demote_retired(fused, lambda f: f.key, standing.retired, standing.stale)[:limit]
            vector_by_doc = {h.doc_id: h for h in legs.vector_hits}
            bodies = texts([f.key for f in top])
            inputs = [
                RelevanceInputs(
                    vector_by_doc[f.key].score if f.key in vector_by_doc else None,
                    coverage(legs.planned, bodies.get(f.key, "")),
                    text_by_doc[f.key].score if f.key in text_by_doc else 0.0,
                    f.ranks[0],
                    f.ranks[1] if len(f.ranks) > 1 else None,
                    False,
                    place,
                )
                for place, f in enumerate(top)
            ]
        family = family_of(legs.embedder_id)
        rows = {f.key: relevance_features(i) for f, i in zip(top, inputs, strict=True)}
        calibrated = {key: relevance(row, family) for key, row in rows.items()}
        return Ranked(
            self._db,
            legs,
            top,
            text_by_doc,
            vector_by_doc,
            graph_by_doc,
            lifted,
            standing.retired,
            calibrated,
            rows,
            stale=standing.stale,
        )

    def _standing(self, doc_ids: Sequence[str]) -> Standing:
        """The retired and the stale memories among ``doc_ids`` (:mod:`.lifecycle`), in words."""
        from dokoro_store.semantic.memories.lifecycle import standing

        return standing(self._db, doc_ids, self._clock.now() if self._clock is not None else _utc_now())

    def candidates(self, query: str) -> tuple[PlannedQuery, list[Scored]]:
        """The fused hybrid candidates before the second stage, best first (fitting the re-ranker)."""
        legs = self.legs(query)
        return legs.planned, self._fuse(legs)

    def texts(self, doc_ids: Sequence[str]) -> dict[str, str]:
        """``"<title>\\n<content>"`` of each of ``doc_ids`` that exists (what the re-ranker reads)."""
        # Handed to the driver as it is (SQLAlchemy's expansion of the IN list cost more than the query).
        ids = list(dict.fromkeys(doc_ids))
        with self._db.read() as session:
            rows = rows_by_ids(session.connection(), "SELECT id, title, content FROM docs", ids)
        return {str(r[0]): f"{r[1] or ''}\n{r[2] or ''}" for r in rows}

    def _fuse(self, legs: Legs, scope: DocScope | None = None) -> list[Scored]:
        fused = fuse_scores(
            self._db,
            DEFAULT_FUSION,
            legs.text_hits,
            legs.vector_hits,
            [g.doc_id for g in legs.graph_hits],
            embedder=legs.embedder_id,
            query_vector=legs.query_vector,
            stored=legs.stored,
        )
        if scope is None:
            return fused
        # Every leg's hits are in the scope already (it is a condition of each leg); only the thread
        # neighbours joined the candidates after the legs ran: keep those the scope allows.
        from_legs = {h.doc_id for h in legs.text_hits} | {h.doc_id for h in legs.vector_hits}
        joined = [s.doc_id for s in fused if s.doc_id not in from_legs]
        if not joined:
            return fused
        allowed = from_legs | scope.keep(self._db, joined)
        return [s for s in fused if s.doc_id in allowed]

    def legs(
        self,
        query: str,
        mode: SearchMode = "hybrid",
        graph: bool = True,
        *,
        limit: int = 10,
        depth: int | None = None,
        scope: DocScope | None = None,
    ) -> Legs:
        """What each leg of a search for ``query`` finds before any fusion: the planned full-text
        query and its hits, the query's vector and its nearest documents, the graph's links (hybrid
        mode). ``depth``: candidates per leg (default: the fusion's, at least ``limit``, in hybrid
        mode; a single leg's ``limit`` × 1.5)."""
        if not query.strip():
            raise InvalidArgumentError("query must not be empty: say what you are looking for")
        if mode not in SEARCH_MODES:
            raise InvalidArgumentError(f"mode must be one of {', '.join(SEARCH_MODES)}; got {mode!r}")
        scored = mode == "hybrid"
        # Candidates per leg: score fusion weighs by score, so it can look deep; a single leg's order
        # is its answer.
        depth = depth or (max(DEFAULT_FUSION.depth, limit) if scored else max(limit * 3 // 2, 10))
        legs = Legs(planned=plan_query(query), scored=scored, engine=self._vectors().engine)
        legs.text_hits = self._keyword(legs.planned, depth, scope) if mode != "semantic" else []
        if mode != "keyword":
            embedder = self._embedder.get()
            if embedder is None:
                reason = self._embedder.reason
                if mode == "semantic":
                    raise EmbedderUnavailableError(f"semantic search needs an embedder: {reason}")
                legs.notes.append(f"vectors skipped ({reason}); results are full-text only")
            else:
                try:
                    embedder = self._docs.check_search_stamp(embedder)  # raises, naming `dokoro reembed`
                except EmbedderMismatchError as exc:
                    if mode == "semantic":
                        raise
                    # Word matching still answers, and every answer says why there is no more.
                    legs.notes.append(f"vectors skipped ({exc}); results are full-text only")
                    embedder = None
            if embedder is not None:
                legs.query_vector = self._embed_query(embedder, query, legs.notes, mode)
                if legs.query_vector is not None:
                    legs.embedder_id = embedder.id
                    if scored:
                        legs.query_vector = self._about_speaker(embedder, query, legs)
                    legs.vector_hits, legs.stored = self.vector_leg(legs.query_vector, embedder.id, depth, scope)
        graph_hits = self._graph(query, depth, legs.notes) if graph and mode == "hybrid" else []
        # The graph lifts documents the other legs found; it does not bring in new ones.
        found = {h.doc_id for h in legs.text_hits} | {h.doc_id for h in legs.vector_hits}
        legs.graph_hits = [g for g in graph_hits if g.doc_id in found]
        return legs

    def vector_leg(
        self, vector: Vector, embedder_id: str, depth: int, scope: DocScope | None = None
    ) -> tuple[list[VectorHit], StoredVectors | None]:
        """The ``depth`` documents nearest ``vector`` (each by its best chunk), best first, and what
        holds their vectors in memory (None: the fusion reads them from the database)."""
        raw = None
        stored: StoredVectors | None = None
        if scope is not None and self.scoped_vectors is not None:
            raw = self.scoped_vectors.search(vector, embedder_id, depth * 2, scope)
            if raw is not None:
                stored = self.scoped_vectors.stored_vectors
        if raw is None:
            raw = self._vectors().search(vector, embedder_id, depth * 2, scope)
            # The engine's vectors in memory (an exact scan's matrix), when it keeps them.
            stored = getattr(self._vectors(), "stored_vectors", None)
        # Several chunks of one document may come back: keep each document's best chunk.
        return best_per_document(raw, lambda h: h.doc_id)[:depth], stored

    def _about_speaker(self, embedder: Embedder, query: str, legs: Legs) -> Vector:
        """The query's vector, blended with the vector of the query less the one speaker it names
        among the full-text leg's best hits (:mod:`~dokoro_store.index.ranking.speakers`)."""
        assert legs.query_vector is not None
        legs.texts.update(self.texts([h.doc_id for h in legs.text_hits[:SPEAKER_HITS]]))
        rest = without_speaker(query, legs.texts.values())
        if rest is None:
            return legs.query_vector
        try:
            other: Vector = embedder.embed([rest], query=True)[0]
        except EmbedderUnavailableError:
            return legs.query_vector
        return blend(legs.query_vector, other)

    def _embed_query(self, embedder: Embedder, query: str, notes: list[str], mode: str) -> Vector | None:
        try:
            vector: Vector = embedder.embed([query], query=True)[0]
        except EmbedderUnavailableError as exc:
            if mode == "semantic":
                raise
            notes.append(f"vectors skipped ({exc}); results are full-text only")
            return None
        return vector

    def _graph(self, query: str, depth: int, notes: list[str]) -> list[GraphHit]:
        if self.graph_signal is None:
            return []
        try:
            return list(self.graph_signal(query, depth))
        except (SQLAlchemyError, DokoroError) as exc:
            log.warning("dokoro: the graph signal of search failed", exc_info=True)
            notes.append(f"graph signal skipped: {exc}")
            return []

    def _keyword(self, planned: PlannedQuery, depth: int, scope: DocScope | None = None) -> list[TextHit]:
        if planned.empty:
            return []
        with self._db.read() as session:
            return self._full_text.search(session, planned, depth, scope)

    # ------------------------------------------------------------------ the tools' operations
    def reindex(self, *, full: bool = False) -> ReindexResult:
        """Re-read workspace markdown and index what changed (``full``: rebuild every chunk and vector)."""
        reconcile = self._workspace.reconcile()
        report = self._docs.reindex(full=full)
        stats = self._docs.stats()
        return ReindexResult(
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

    def index_content(
        self,
        doc_id: str,
        content: str,
        title: str = "Untitled",
        *,
        thread: str | None = None,
        at: str | None = None,
    ) -> IndexContentResult:
        """Save ``content`` under ``doc_id`` and index it now; ``thread`` and ``at`` (ISO time it was
        written) place it among its conversation's or session's texts, whose neighbours search lifts."""
        from dokoro_store.clock import parse_iso

        try:
            written = parse_iso(at) if at is not None and at.strip() else None
        except ValueError as exc:
            raise InvalidArgumentError(f"at: {exc}") from None
        report = self._docs.index_content(doc_id, content, title, thread=thread, at=written)
        place = report.thread_place
        return IndexContentResult(
            doc_id=validate_doc_id(doc_id),
            thread=place[0] if place else None,
            thread_pos=place[1] if place else None,
            chunks=report.chunks,
            tokens=report.tokens,
            vectors=report.vectors,
            embedder=report.embedder,
            notes=report.notes,
            vectors_behind=report.vectors_behind > 0,
        )

    def ambient(self, project: Path, limit: int = 10, *, project_root: Path) -> AmbientResult:
        """What git says the project at ``project`` is doing, and the documents matching it.

        ``project`` must lie inside ``project_root``, the project the server was started for."""
        from dokoro_store.semantic.search.ambient import ambient_search

        return ambient_search(self, project, limit, project_root=project_root)

    # ------------------------------------------------------------------ status
    def status(self) -> SearchStatusResult:
        """What indexes, embedder and re-ranker this store uses, and how much is indexed (loads no model)."""
        return search_status(self._db, self._embedder, self._vectors(), self._docs, self._full_text)
