"""Episodic memory: session summaries, recall, and automatic compaction (reference §2.1, §4.2, §4.3).

Compaction folds a session's summaries into one retained entry once they pass
:data:`COMPACTION_THRESHOLD_TOKENS`. It runs in two committed steps (:mod:`.compaction`):

1. *pre-flush*: the session is marked ``compactionPending``;
2. *fold*: in one transaction the merged text is written to the session, the source rows are
   deleted, one ``compacted`` row is inserted and the mark is cleared.

A crash after step 1 leaves the mark; :meth:`EpisodicService.recover` (run whenever a store
is opened) redoes step 2 from the rows as they are. Step 2 is atomic, so nothing is ever lost
or counted twice.

Recall ranking (unlike the reference's §4.2, which re-ranked only the rows containing the whole
query): with a query, candidates come from full text (terms OR'ed), the summaries nearest the
query by meaning and the substring match, each leg filtered in SQL or in its kNN; they are ranked
by cosine similarity plus their full-text and substring signals (:meth:`EpisodicService.recall_ranked`),
so "refresh race" and a paraphrase both find "Fixed race in session refresh", and an old but
relevant session beats recent noise. No leg reads every row: full text is an index, the kNN a
matrix kept in memory. Summaries are embedded when written (a compacted row from its first 8,000
characters), or, in a server (``embed_behind``), a moment after the write answers, by the store's
write-behind (:mod:`dokoro_store.background.write_behind`: the row without a vector is its durable
mark, found through a partial index; a killed process's are swept by the next one's open); a
candidate without a vector of the current embedder is embedded during recall.
Without an embedder, recall ranks by full text and says so.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import bindparam, func, insert, or_
from sqlmodel import col, select

from dokoro_store.background.write_behind import BATCH, WriteBehind
from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.db.model_tables import table_of
from dokoro_store.episodic.compaction import (
    fold,
    mark_pending,
    mark_pending_plain,
    pending_sessions,
    uncompacted_tokens,
)
from dokoro_store.episodic.ranking import _bound, _filtered, _hit, _ranking, _Similar
from dokoro_store.episodic.results import (
    _NEWEST,
    COMPACTION_THRESHOLD_TOKENS,
    LEG_DEPTH,
    RECALL_DEFAULT_LIMIT,
    RECALL_MAX_LIMIT,
    SUBSTRING_WEIGHT,
    TEXT_WEIGHT,
    VECTOR_FLOOR,
    CompactionResult,
    Recall,
    RecallHit,
    SummaryOutcome,
    escape_like,
    estimate_tokens,
)
from dokoro_store.errors import InvalidArgumentError
from dokoro_store.limits import MAX_COUNT, MAX_TOKEN_COUNT
from dokoro_store.models import ConversationSummary, EpisodeSession
from dokoro_store.walls.secrets import redact_all

if TYPE_CHECKING:
    from dokoro_store.episodic.summary_search import SummaryFilter
    from dokoro_store.episodic.summary_vectors import SummaryVectors
    from dokoro_store.index.embedders.handle import EmbedderHandle

log = logging.getLogger("dokoro.store")

__all__ = [
    "COMPACTION_THRESHOLD_TOKENS",
    "CompactionResult",
    "EpisodicService",
    "Recall",
    "RecallHit",
    "SummaryOutcome",
    "escape_like",
    "estimate_tokens",
]


@dataclass(frozen=True)
class _Statements:
    session: Any  # the session row, kept when it exists (the dialect's INSERT ... ON CONFLICT DO NOTHING)
    summary: Any  # INSERT ... RETURNING id
    uncompacted: Any  # the session's uncompacted token total


class EpisodicService:
    def __init__(
        self,
        db: Database,
        clock: Clock,
        embedder: EmbedderHandle | None = None,
        summaries: SummaryVectors | None = None,
        *,
        embed_behind: bool = False,
    ) -> None:
        self._db = db
        self._clock = clock
        self._embedder = embedder
        self._cached: _Statements | None = None
        self._newest: dict[tuple[bool, bool, bool], Any] = {}
        if summaries is None:
            from dokoro_store.episodic.summary_vectors import SummaryVectors

            summaries = SummaryVectors(db)
        self._vectors = summaries
        # Write-behind (module docstring): a written summary is embedded a moment after the write
        # answers, in batches, by a step of the store's background work.
        self._embed_behind = embed_behind and embedder is not None
        self._behind: WriteBehind[int] | None = (
            WriteBehind(
                db.background,
                self._embed_ids,
                summaries.unembedded,
                name="dokoro-summary-embed",
                failure="dokoro: embedding session summaries failed; they are embedded by the next write or recall",
            )
            if self._embed_behind
            else None
        )

    def _embed_rows(self, rows: list[tuple[int, str]]) -> None:
        """Embed freshly written summaries (best effort: recall embeds what is missing later), or
        with write-behind leave them to the step (the row without a vector is the durable mark)."""
        if self._embedder is None or not rows:
            return
        if self._behind is not None:
            for row_id, _text in rows:
                self._behind.add(row_id)
            return
        self._vectors.store_quietly(self._embedder.get(), rows)

    def _embed_ids(self, ids: Sequence[int]) -> int:
        embedder = self._embedder.get() if self._embedder is not None else None
        return self._vectors.embed_ids(embedder, ids) if embedder is not None else 0

    def embed_summaries(self, ids: Sequence[int]) -> int:
        """Embed these summaries now (a writer of its own rows that may not live to see the step:
        a hook's process); returns how many were embedded."""
        return self._embed_ids(ids)

    def embed_written(self) -> int:
        """Embed the summaries this process wrote without their vectors (write-behind) now, in
        batches; returns how many were embedded."""
        return self._behind.run() if self._behind is not None else 0

    def resume_behind(self) -> None:
        """Schedule the write-behind step if a summary waits for its vector (a process killed after
        writing it): one look at the partial index of unembedded rows."""
        if self._behind is not None:
            self._behind.resume()

    def close(self, *, finish: bool = True) -> None:
        """Stop the write-behind step and (``finish``) embed what waits; unfinished, the rows stay
        without vectors for the next process or recall."""
        if self._behind is not None:
            self._behind.close(finish=finish)

    # ------------------------------------------------------------------ write
    def add_summary(
        self,
        session_id: str,
        ai_model: str,
        summary: str,
        *,
        key_decisions: list[str] | None = None,
        key_topics: list[str] | None = None,
        message_count: int | None = None,
        token_count: int | None = None,
    ) -> SummaryOutcome:
        session_id, ai_model, summary = session_id.strip(), ai_model.strip(), summary.strip()
        if not session_id:
            raise InvalidArgumentError("session_id must not be empty: pass the id of the session summarised")
        if not ai_model:
            raise InvalidArgumentError("ai_model must not be empty: name the model that ran the session")
        if not summary:
            raise InvalidArgumentError("summary must not be empty: write what the session did")
        if message_count is not None and not 0 <= message_count <= MAX_COUNT:
            raise InvalidArgumentError(f"message_count must be between 0 and {MAX_COUNT}")
        if token_count is not None and not 0 <= token_count <= MAX_TOKEN_COUNT:
            # Summed by the database: a bound far below 2^63 keeps every later sum in range.
            raise InvalidArgumentError(f"token_count must be between 0 and {MAX_TOKEN_COUNT}")
        now = self._clock.now()
        # Secrets never reach episodic memory (it is recalled, compacted, exported and shared).
        (cleaned_summary, *cleaned_lists), kinds = redact_all([summary, *(key_decisions or []), *(key_topics or [])])
        summary = str(cleaned_summary)
        if key_decisions:
            key_decisions = [str(v) for v in cleaned_lists[: len(key_decisions)]]
        if key_topics:
            key_topics = [str(v) for v in cleaned_lists[len(key_decisions or []) :]]
        # A summary given without a token count still counts toward compaction (reference bug §7.20).
        tokens = token_count if token_count is not None else estimate_tokens(summary)
        statements = self._statements()
        with self._db.writing() as connection:
            # Cached Core statements in one short transaction: the session row (kept if it exists),
            # the summary (INSERT ... RETURNING; the statement hook still redacts what it sends) and
            # the session's uncompacted total. No ORM object is built or flushed.
            connection.execute(statements.session, {"id": session_id, "started_at": now})
            row_id = int(
                connection.execute(
                    statements.summary,
                    {
                        "session_id": session_id,
                        "ai_model": ai_model,
                        "summary": summary,
                        "key_decisions": list(key_decisions) if key_decisions else None,
                        "key_topics": list(key_topics) if key_topics else None,
                        "message_count": message_count,
                        "token_count": tokens,
                        "started_at": now,
                        "created_at": now,
                    },
                ).scalar_one()
            )
            total = int(connection.execute(statements.uncompacted, {"session_id": session_id}).scalar_one() or 0)
            pending = total > COMPACTION_THRESHOLD_TOKENS
            if pending:
                # Pre-flush in the same commit as the row that crossed the threshold: if the process
                # dies before folding, the next open finds the mark and folds.
                mark_pending_plain(connection, session_id, now)
        compaction = self._fold_safely(session_id) if pending else None
        if compaction is not None and compaction.row_id is not None:
            self._embed_rows([(compaction.row_id, self._summary_text(compaction.row_id))])
        elif compaction is None:
            self._embed_rows([(row_id, summary)])
        return SummaryOutcome(row_id, session_id, compaction, kinds)

    def _summary_text(self, row_id: int) -> str:
        with self._db.read() as session:
            row = session.get(ConversationSummary, row_id)
            return row.summary if row is not None else ""

    def _statements(self) -> _Statements:
        """The write path's Core statements, built once per service (statements are immutable)."""
        if self._cached is None:
            sessions, summaries = table_of(EpisodeSession), table_of(ConversationSummary)
            session_row = self._db.ops.upsert(
                sessions,
                {"id": bindparam("id"), "started_at": bindparam("started_at"), "status": "completed"},
                ["id"],
                None,
            )
            uncompacted = select(func.coalesce(func.sum(summaries.c.token_count), 0)).where(
                summaries.c.session_id == bindparam("session_id"), summaries.c.compacted.is_(False)
            )
            self._cached = _Statements(session_row, insert(summaries).returning(summaries.c.id), uncompacted)
        return self._cached

    # ------------------------------------------------------------------ compaction
    def needs_compaction(self, session_id: str) -> bool:
        with self._db.read() as session:
            return uncompacted_tokens(session, session_id) > COMPACTION_THRESHOLD_TOKENS

    def compact(self, session_id: str) -> CompactionResult | None:
        """Compact a session now (both steps), whatever its size."""
        with self._db.write() as session:
            if session.get(EpisodeSession, session_id) is None:
                return None
            mark_pending(session, session_id, self._clock.now())
        result = self._fold(session_id)
        if result is not None and result.row_id is not None:
            self._embed_rows([(result.row_id, self._summary_text(result.row_id))])
        return result

    def _fold(self, session_id: str) -> CompactionResult | None:
        """Step 2: fold every summary of a marked session into one row, atomically."""
        return fold(self._db, self._clock.now(), session_id)

    def pending_sessions(self) -> list[str]:
        return pending_sessions(self._db)

    def _fold_safely(self, session_id: str) -> CompactionResult | None:
        """Fold, but never fail the caller: the summary is already committed and the pending mark
        stays, so the next open finishes the fold (an agent retrying would store it twice)."""
        try:
            return self._fold(session_id)
        except Exception:
            log.exception("dokoro: compaction of session %s failed; it will be redone on the next open", session_id)
            return None

    def recover(self) -> list[CompactionResult]:
        """Finish every compaction that a crash interrupted; failures stay isolated per session."""
        done: list[CompactionResult] = []
        for session_id in self.pending_sessions():
            result = self._fold_safely(session_id)
            if result is not None:
                done.append(result)
        return done

    # ------------------------------------------------------------------ read
    def recall(
        self,
        *,
        query: str | None = None,
        session_id: str | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int = RECALL_DEFAULT_LIMIT,
    ) -> list[RecallHit]:
        """Summaries matching every given filter: by relevance to ``query`` when there is one, else
        newest first (see :meth:`recall_ranked` for how they were ranked)."""
        return self.recall_ranked(query=query, session_id=session_id, since=since, until=until, limit=limit).hits

    def recall_ranked(
        self,
        *,
        query: str | None = None,
        session_id: str | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int = RECALL_DEFAULT_LIMIT,
    ) -> Recall:
        """Recall and say how the hits were ranked.

        Without a query: newest first. With one, candidates come from three legs, each taking the
        filters as conditions: full text (terms OR'ed, :mod:`~dokoro_store.episodic.summary_search`),
        the summaries nearest the query's embedding with a cosine of at least :data:`VECTOR_FLOOR`
        (:meth:`~dokoro_store.episodic.summary_vectors.SummaryVectors.nearest`), and the reference's
        substring match of the whole query (summary or session id). Each candidate scores its
        cosine with the query + :data:`TEXT_WEIGHT` × its full-text score (1.0 for the best) +
        :data:`SUBSTRING_WEIGHT` when it contains the query; ties go to the newest.
        """
        from dokoro_store.episodic.summary_search import SummaryFilter, summary_full_text

        if not 1 <= limit <= RECALL_MAX_LIMIT:
            raise InvalidArgumentError(f"limit must be between 1 and {RECALL_MAX_LIMIT}; got {limit}")
        where = SummaryFilter(session_id or None, _bound(since, "since"), _bound(until, "until"))
        text = (query or "").strip()
        if not text:
            statement, params = self._newest_statement(where)
            with self._db.reading() as connection:
                newest = connection.execute(statement, {**params, "limit": limit}).all()
            return Recall([_hit(row) for row in newest], "recency")
        depth = max(limit * 3, LEG_DEPTH)
        full_text = dict(summary_full_text(self._db, text, where, depth))
        pattern = f"%{escape_like(text.lower())}%"
        contains = or_(
            func.lower(ConversationSummary.summary).like(pattern, escape="\\"),
            func.lower(func.coalesce(ConversationSummary.session_id, "")).like(pattern, escape="\\"),
        )
        with self._db.read() as session:
            substring = set(
                session.exec(
                    _filtered(select(ConversationSummary.id), where).where(contains).order_by(*_NEWEST).limit(depth)
                )
            )
        substring.discard(None)
        similar = self._similarities(text, where, depth, set(full_text) | substring)
        cosines, nearest = similar.cosines, similar.nearest
        candidates = set(full_text) | substring | set(nearest)
        if not candidates:
            return self._nearest_instead(similar, where, limit)
        with self._db.read() as session:
            rows = list(session.exec(select(ConversationSummary).where(col(ConversationSummary.id).in_(candidates))))
        scored: list[tuple[float, RecallHit]] = []
        for row in rows:
            row_id = int(row.id or 0)
            cosine = cosines.get(row_id)
            score = (cosine or 0.0) + TEXT_WEIGHT * full_text.get(row_id, 0.0)
            score += SUBSTRING_WEIGHT if row_id in substring else 0.0
            scored.append((score, _hit(row).model_copy(update={"similarity": cosine})))
        scored.sort(key=lambda item: (-item[0], -item[1].started_at.timestamp(), -item[1].id))
        ranking = _ranking(len(full_text), len(substring), similar, len(candidates))
        return Recall([hit for _score, hit in scored[:limit]], ranking)

    def _newest_statement(self, where: SummaryFilter) -> tuple[Any, dict[str, Any]]:
        """The newest summaries passing ``where``: a Core statement built once per combination of
        filters (and cached), and its parameters."""
        shape = (where.session_id is not None, where.since is not None, where.until is not None)
        statement = self._newest.get(shape)
        if statement is None:
            summaries = table_of(ConversationSummary)
            statement = select(summaries)
            if shape[0]:
                statement = statement.where(summaries.c.session_id == bindparam("session_id"))
            if shape[1]:
                statement = statement.where(summaries.c.started_at >= bindparam("since"))
            if shape[2]:
                statement = statement.where(summaries.c.started_at <= bindparam("until"))
            statement = statement.order_by(summaries.c.started_at.desc(), summaries.c.id.desc()).limit(
                bindparam("limit")
            )
            self._newest[shape] = statement
        params = {"session_id": where.session_id, "since": where.since, "until": where.until}
        return statement, {key: value for key, value in params.items() if value is not None}

    def _nearest_instead(self, similar: _Similar, where: SummaryFilter, limit: int) -> Recall:
        """No summary shares the query's words or comes within :data:`VECTOR_FLOOR` of its meaning:
        the nearest by meaning with their similarity (without an embedder, the most recent), said
        to be no close match, so a paraphrase still finds its session. Empty only when no session
        passes the filters at all."""
        if similar.below_floor:
            ids = [row_id for row_id, _cosine in similar.below_floor[:limit]]
            with self._db.read() as session:
                rows = {
                    int(r.id or 0): r
                    for r in session.exec(select(ConversationSummary).where(col(ConversationSummary.id).in_(ids)))
                }
            hits = [
                _hit(rows[row_id]).model_copy(update={"similarity": cosine})
                for row_id, cosine in similar.below_floor[:limit]
                if row_id in rows
            ]
            ranking = (
                f"no close match: no summary shares the query's words or reaches similarity {VECTOR_FLOOR}; "
                f"the nearest by meaning ({similar.embedder}) are listed with their similarity"
            )
            return Recall(hits, ranking, close_match=False)
        with self._db.read() as session:
            latest = list(session.exec(_filtered(select(ConversationSummary), where).order_by(*_NEWEST).limit(limit)))
        if not latest:
            return Recall([], "no past sessions", close_match=False)
        why = similar.why_not or "no similarity"
        ranking = f"no close match: no summary shares the query's words ({why}); the most recent are listed"
        return Recall([_hit(row) for row in latest], ranking, close_match=False)

    def _similarities(self, query: str, where: SummaryFilter, depth: int, matched: set[int]) -> _Similar:
        """The vector leg: the nearest summaries above the floor and the cosines of every candidate."""
        from dokoro_store.errors import DokoroError

        # Written a moment ago, not yet embedded: this process's last few (the write-behind step does
        # the rest within seconds; full text finds them meanwhile), or what another process left.
        newest = self._behind.newest(BATCH) if self._behind is not None else []
        waiting = bool(newest) or (self._embed_behind and self._vectors.any_missing())
        if not matched and not waiting and self._vectors.count() == 0:
            # Nothing to compare with (a new store): no need to load an embedder at all.
            return _Similar(why_not="no summary has a vector yet")
        embedder = self._embedder.get() if self._embedder is not None else None
        if embedder is None:
            reason = self._embedder.reason if self._embedder is not None else "none configured"
            return _Similar(why_not=f"no embedder: {reason}")
        try:
            import numpy as np

            # Embedded now, as the write-behind step would a moment later: this process's newest, or
            # one batch of what another process left; never a whole backlog (the step sweeps it).
            batch = newest or (self._vectors.unembedded(None, BATCH) if waiting else [])
            if batch:
                self._vectors.embed_ids(embedder, batch)
            query_vector = embedder.embed([query], query=True)[0]
            closest = self._vectors.nearest(embedder.id, query_vector, depth, where)
            nearest = {row_id: cosine for row_id, cosine in closest if cosine >= VECTOR_FLOOR}
            vectors = self._vectors.vectors_for(embedder, sorted(matched - set(nearest)))
        except DokoroError as exc:
            return _Similar(why_not=f"embedding failed: {exc}")
        cosines = dict(nearest)
        for row_id, vector in vectors.items():
            cosines[row_id] = float(np.dot(vector, query_vector))
        below = [(row_id, cosine) for row_id, cosine in closest if cosine < VECTOR_FLOOR]
        return _Similar(cosines, nearest, embedder.id, below_floor=below)

    def count(self, session_id: str | None = None) -> int:
        statement = select(func.count()).select_from(ConversationSummary)
        if session_id:
            statement = statement.where(ConversationSummary.session_id == session_id)
        with self._db.read() as session:
            return int(session.exec(statement).one())
