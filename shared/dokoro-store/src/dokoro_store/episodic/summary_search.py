"""The full-text leg of session recall: summaries matching any term of a query, best first.

SQLite: the FTS5 index ``summaries_fts`` ranked by bm25; PostgreSQL: ``to_tsvector('english',
summary)`` (GIN expression index) ranked by ``ts_rank``. Both from migration 0020. Terms are OR'ed
(:mod:`.planner`, as ``search_universal`` does), so "session refresh race" finds "Fixed race in
session refresh", and the session, since and until filters are conditions of the query.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import bindparam, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql.elements import BindParameter

from dokoro_store.db.engine import Database
from dokoro_store.db.types import UtcDateTime
from dokoro_store.index.fulltext.planner import plan_query

__all__ = ["SummaryFilter", "summary_conditions", "summary_full_text"]

log = logging.getLogger("dokoro.store")


@dataclass(frozen=True)
class SummaryFilter:
    """The session, since and until conditions of a recall (on ``conversation_summaries s`` in SQL)."""

    session_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None


def summary_conditions(where: SummaryFilter) -> tuple[str, list[BindParameter[object]]]:
    parts: list[str] = []
    binds: list[BindParameter[object]] = []
    if where.session_id:
        parts.append("s.session_id = :f_session")
        binds.append(bindparam("f_session", where.session_id))
    if where.since is not None:
        parts.append("s.started_at >= :f_since")
        binds.append(bindparam("f_since", where.since, type_=UtcDateTime()))
    if where.until is not None:
        parts.append("s.started_at <= :f_until")
        binds.append(bindparam("f_until", where.until, type_=UtcDateTime()))
    return "".join(f" AND {p}" for p in parts), binds


def summary_full_text(db: Database, query: str, where: SummaryFilter, k: int) -> list[tuple[int, float]]:
    """``(summary id, score)``, best first; the score is relative to the best match (1.0)."""
    planned = plan_query(query)
    conditions, binds = summary_conditions(where)
    if db.dialect == "postgresql":
        match = planned.websearch()
        sql = (
            "SELECT s.id, ts_rank(to_tsvector('english', s.summary), q) AS rank "
            "FROM conversation_summaries s, websearch_to_tsquery('english', :q) q "
            f"WHERE to_tsvector('english', s.summary) @@ q{conditions} ORDER BY rank DESC, s.id DESC LIMIT :k"
        )
    else:
        match = planned.fts5()
        sql = (
            "SELECT s.id, bm25(summaries_fts) AS rank FROM summaries_fts "
            "JOIN conversation_summaries s ON s.id = summaries_fts.rowid "
            f"WHERE summaries_fts MATCH :q{conditions} ORDER BY rank, s.id DESC LIMIT :k"
        )
    if not match:
        return []
    try:
        with db.read() as session:
            rows = session.execute(text(sql).bindparams(*binds), {"q": match, "k": k}).all()
    except DBAPIError as exc:
        log.warning("dokoro: summary full-text query failed (%s); that leg returns nothing", exc.orig)
        return []
    top = max((abs(float(r[1])) for r in rows), default=0.0) or 1.0
    return [(int(r[0]), abs(float(r[1])) / top) for r in rows]
