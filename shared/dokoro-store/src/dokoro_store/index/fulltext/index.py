"""Full-text search over ``docs``, one implementation per backend behind :class:`FullTextIndex`.

Both answer a :class:`~dokoro_store.index.fulltext.planner.PlannedQuery` in two sub-legs:

- *words*: SQLite FTS5 ``porter unicode61`` ranked by bm25 (title weighted 5:1), or PostgreSQL's
  generated ``tsvector`` ranked by ``ts_rank``;
- *substrings*: CJK terms (and, when the words found fewer hits than asked, the words again as
  substrings) through the FTS5 trigram index, or ``ILIKE`` (sped up by ``pg_trgm`` when present).
  Terms shorter than three characters use an escaped ``LIKE``.

The word sub-leg is bounded on a large store: ranking costs a bm25 (or ts_rank) per matching
document, so a common word (in ten thousand memories of a store of a hundred thousand) made every
query rank tens of thousands of rows. The planner's terms are counted first (one statement; a
count walks the term's postings without ranking them) and, rarest first, a term joins the ranked
query while the matches ranked stay within :data:`RANK_BUDGET` — the rarest term always, and any
term in fewer than :data:`COMMON_DOCS` documents, so a store smaller than that (every LoCoMo
conversation) ranks exactly as before. A term left out still counts in the re-ranker's coverage
features (it reads the whole query), and bm25 weighs such a term little anyway (its idf is low).

The sub-legs are fused by reciprocal rank. The indexes themselves are kept in step with ``docs``
by the database (triggers, a generated column): any writer of a document is searchable at once.
A query the engine still rejects is logged and gives an empty leg, never an error.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql.elements import BindParameter
from sqlmodel import Session

from dokoro_store.index.fulltext.planner import PlannedQuery
from dokoro_store.index.scope import DocScope

__all__ = ["FullTextIndex", "PostgresFullText", "SqliteFullText", "TextHit", "escape_like", "full_text_for"]

log = logging.getLogger("dokoro.store")

SUBSTRING_CAP = 200  # documents fetched per substring term
# Matches the word sub-leg ranks at most (unless its rarest term alone has more): the commonest terms leave the
# ranked query past it. Measured at 100k memories (docs/benchmarks.md, "Recall at 100k"): ranking
# costs ~1.5 µs of CPU per match in FTS5, counting a term's matches ~0.07 µs.
RANK_BUDGET = 5_000
# A term in fewer documents than this always stays in the ranked query (a small store is never bounded).
COMMON_DOCS = 1_000
_RRF_K = 60


def escape_like(value: str, escape: str = "\\") -> str:
    return value.replace(escape, escape * 2).replace("%", escape + "%").replace("_", escape + "_")


@dataclass(frozen=True)
class TextHit:
    doc_id: str
    score: float  # relative to the best hit of this search: 1.0 for the top
    via: str  # "words" | "substrings" | "both"


class FullTextIndex(Protocol):
    engine: str

    def search(
        self, session: Session, planned: PlannedQuery, limit: int, scope: DocScope | None = None
    ) -> list[TextHit]:
        """The best ``limit`` documents for ``planned``, among those ``scope`` allows (a condition of the query)."""
        ...

    def rebuild(self, session: Session) -> None:
        """Rebuild the index from the documents (for ``dokoro reindex --full``)."""
        ...

    def describe(self, session: Session) -> str: ...


def _fuse(words: list[tuple[str, float]], substrings: list[tuple[str, float]], limit: int) -> list[TextHit]:
    """Words first when substrings only backfill; reciprocal-rank fusion when both carry terms."""
    if not substrings:
        return _normalised(words, "words")[:limit]
    if not words:
        return _normalised(substrings, "substrings")[:limit]
    scores: dict[str, float] = {}
    via: dict[str, set[str]] = {}
    for leg, name in ((words, "words"), (substrings, "substrings")):
        for rank, (doc_id, _raw) in enumerate(leg):
            scores[doc_id] = scores.get(doc_id, 0.0) + 1.0 / (_RRF_K + rank)
            via.setdefault(doc_id, set()).add(name)
    ordered = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:limit]
    top = ordered[0][1] if ordered else 1.0
    return [
        TextHit(doc_id, score / top, "both" if len(via[doc_id]) == 2 else next(iter(via[doc_id])))
        for doc_id, score in ordered
    ]


def _normalised(hits: list[tuple[str, float]], via: str) -> list[TextHit]:
    top = max((abs(raw) for _doc, raw in hits), default=1.0) or 1.0
    return [TextHit(doc_id, abs(raw) / top, via) for doc_id, raw in hits]


def _score_substrings(matches: dict[str, list[str]]) -> list[tuple[str, float]]:
    """Documents ranked by how much of the query they contain (longer terms weigh more)."""
    scored = [(doc_id, float(sum(len(term) for term in terms))) for doc_id, terms in matches.items()]
    return sorted(scored, key=lambda item: (-item[1], item[0]))


def _run(
    session: Session, sql: str, params: dict[str, Any], what: str, binds: Sequence[BindParameter[Any]] = ()
) -> Sequence[Any]:
    statement = text(sql).bindparams(*binds)
    try:
        if session.get_bind().dialect.name != "postgresql":
            # A failed statement leaves an SQLite transaction usable: no savepoint (a SAVEPOINT and
            # its RELEASE per query were most of a recall's "commits").
            return session.execute(statement, params).all()
        # On PostgreSQL a failed statement aborts the transaction: a savepoint keeps it usable.
        with session.begin_nested():
            return session.execute(statement, params).all()
    except DBAPIError as exc:
        log.warning("dokoro: %s query failed (%s); that leg returns nothing", what, exc.orig)
        return []


def _quote_term(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def bounded(planned: PlannedQuery, counts: Sequence[int]) -> PlannedQuery:
    """``planned`` less the commonest word terms whose matches would take the ranking past
    :data:`RANK_BUDGET` (``counts``: documents matching each of ``planned.words``, capped at
    ``RANK_BUDGET + 1``). The rarest term, the phrases and every term under :data:`COMMON_DOCS`
    stay; when every term is past the budget the query stays whole (nothing rarer to rank by)."""
    words = planned.words
    if len(words) < 2 or len(counts) != len(words):
        return planned
    order = sorted(range(len(words)), key=lambda i: (counts[i], i))
    if counts[order[0]] > RANK_BUDGET:
        return planned
    kept: set[str] = set()
    ranked = 0
    for place, i in enumerate(order):
        word = words[i]
        if place == 0 or word in planned.phrases or counts[i] < COMMON_DOCS or ranked + counts[i] <= RANK_BUDGET:
            kept.add(word)
            ranked += counts[i]
    dropped = tuple(t for t in planned.terms if t not in kept)
    return planned.without(dropped) if dropped else planned


def _counts(session: Session, planned: PlannedQuery, sql: str, quote: Callable[[str], str]) -> list[int]:
    """Documents matching each word term and phrase of ``planned`` (capped past the budget), one statement."""
    words = planned.words
    if len(words) < 2:
        return []
    params: dict[str, Any] = {"cap": RANK_BUDGET + 1}
    parts = []
    for i, word in enumerate(words):
        params[f"t{i}"] = quote(word)
        parts.append(f"({sql.replace(':q', f':t{i}')})")
    rows = _run(session, "SELECT " + ", ".join(parts), params, "term counts")
    return [int(v) for v in rows[0]] if rows else []


def _scoped(scope: DocScope | None, dialect: str) -> tuple[str, list[BindParameter[Any]]]:
    if scope is None:
        return "", []
    condition, binds = scope.sql("d", dialect)
    return f" AND {condition}", list(binds)


def _merged(words: list[tuple[str, float]], matches: dict[str, list[str]], cjk: bool, limit: int) -> list[TextHit]:
    """The leg's hits from its word hits and the substring terms each document matched. Without CJK
    the substrings only backfill (the word hits keep their order, what substrings found beyond
    them follows); with CJK, where word tokens fail, both are fused."""
    substrings = _score_substrings(matches)
    if not cjk:
        seen = {doc for doc, _ in words}
        extra = [doc for doc, _ in substrings if doc not in seen]
        return (_normalised(words, "words") + [TextHit(doc, 0.0, "substrings") for doc in extra])[:limit]
    return _fuse(words, substrings, limit)


_SCOPED_WIDEST = 20_000  # past this many ranked matches, the scope joins the ranking query instead


def _sqlite_scoped_words(session: Session, match: str, limit: int, scope: DocScope) -> list[tuple[str, float]] | None:
    """The best ``limit`` word hits among the documents ``scope`` allows, in the order of the scoped
    query (bm25, then id), or None when the ranked list would have to grow past :data:`_SCOPED_WIDEST`.

    Ranking with the scope in the query checks the scope (a join to ``docs`` and ``memories``) for
    every matching document: on a store of 100k memories a common word matches tens of thousands.
    Instead FTS5 ranks its matches alone (top ``n``), the scope is checked on those ``n`` rows by
    rowid, and ``n`` grows ×4 until ``limit`` allowed hits rank strictly better than the last
    fetched one — every match that ranks better is then among the fetched, so the answer is exact.
    """
    condition, binds = scope.sql("d", "sqlite", by_id=True)
    wanted = max(limit * 4, 40)
    while wanted <= _SCOPED_WIDEST:
        ranked = _run(
            session,
            "SELECT rowid, bm25(docs_fts, 5.0, 1.0) AS score FROM docs_fts WHERE docs_fts MATCH :q "
            "ORDER BY score LIMIT :n",
            {"q": match, "n": wanted},
            "full-text",
        )
        if not ranked:
            return []
        score_of = {int(row[0]): float(row[1]) for row in ranked}
        allowed = _allowed_rowids(session, list(score_of), condition, binds)
        hits = sorted(((doc_id, score_of[rowid]) for rowid, doc_id in allowed.items()), key=lambda h: (h[1], h[0]))
        if len(ranked) < wanted:  # every match was fetched
            return hits[:limit]
        cut = float(ranked[-1][1])
        better = [hit for hit in hits if hit[1] < cut]
        if len(better) >= limit:
            return better[:limit]
        wanted *= 4
    return None


def _allowed_rowids(
    session: Session, rowids: list[int], condition: str, binds: Sequence[BindParameter[Any]]
) -> dict[int, str]:
    """Which of ``rowids`` the scope's ``condition`` (written ``by_id``) allows: rowid → document id.
    The rowids travel as one JSON array (an expanding ``IN`` list was compiled anew on every query)."""
    if not rowids:
        return {}
    rows = _run(
        session,
        "SELECT d.rowid, d.id FROM docs d WHERE d.rowid IN (SELECT value FROM json_each(:scope_rowids)) "
        f"AND {condition}",
        {"scope_rowids": json.dumps(rowids)},
        "full-text scope",
        list(binds),
    )
    return {int(row[0]): str(row[1]) for row in rows}


def _sqlite_scoped_trigram(session: Session, term: str, scope: DocScope, cap: int) -> list[str]:
    """Up to ``cap`` documents ``scope`` allows holding ``term`` (the trigram index).

    The scope is checked on the index's matches by rowid, never joined to the ``MATCH``: SQLite then
    walks the scope's index (every memory, for a recall) and probes the trigram index per row —
    seconds on a store of 100k memories. The matches fetched grow ×4 until enough are allowed."""
    condition, binds = scope.sql("d", "sqlite", by_id=True)
    wanted = cap
    while True:
        rows = _run(
            session,
            "SELECT rowid FROM docs_trgm WHERE docs_trgm MATCH :q LIMIT :n",
            {"q": _quote_term(term), "n": wanted},
            "trigram",
        )
        rowids = [int(row[0]) for row in rows]
        allowed = _allowed_rowids(session, rowids, condition, binds)
        found = [allowed[r] for r in rowids if r in allowed]
        if len(found) >= cap or len(rowids) < wanted or wanted >= _SCOPED_WIDEST:
            return found[:cap]
        wanted *= 4


_SQLITE_COUNT = "SELECT count(*) FROM (SELECT 1 FROM docs_fts WHERE docs_fts MATCH :q LIMIT :cap)"
_PG_COUNT = "SELECT count(*) FROM (SELECT 1 FROM docs d WHERE d.fts @@ {q} LIMIT :cap) x"


class SqliteFullText:
    engine = "sqlite-fts5"

    def search(
        self, session: Session, planned: PlannedQuery, limit: int, scope: DocScope | None = None
    ) -> list[TextHit]:
        words: list[tuple[str, float]] = []
        where, binds = _scoped(scope, "sqlite")
        ranked = bounded(planned, _counts(session, planned, _SQLITE_COUNT, _quote_term))
        match = ranked.fts5()
        if match:
            scoped = None if scope is None else _sqlite_scoped_words(session, match, limit, scope)
            if scoped is not None:
                words = scoped
            else:
                rows = _run(
                    session,
                    "SELECT d.id, bm25(docs_fts, 5.0, 1.0) AS rank FROM docs_fts "
                    "JOIN docs d ON d.rowid = docs_fts.rowid "
                    f"WHERE docs_fts MATCH :q{where} ORDER BY rank, d.id LIMIT :k",
                    {"q": match, "k": limit},
                    "full-text",
                    binds,
                )
                words = [(str(row[0]), float(row[1])) for row in rows]
        # The backfill looks for the ranked words only: a common term left out would add documents
        # that merely contain it, in no order.
        terms = ranked.substrings(include_words=len(words) < limit)
        # A word's substrings only fill the page after the word hits, unscored: a scoped search
        # fetches as many as the page lacks (CJK terms, which rank, keep the full cap).
        short = max(1, limit - len(words))
        matches: dict[str, list[str]] = {}
        for term in terms:
            if len(term) >= 3 and scope is not None:
                cap = SUBSTRING_CAP if term in planned.cjk else min(SUBSTRING_CAP, short)
                for doc_id in _sqlite_scoped_trigram(session, term, scope, cap):
                    matches.setdefault(doc_id, []).append(term)
                continue
            if len(term) >= 3:
                rows = _run(
                    session,
                    "SELECT d.id FROM docs_trgm JOIN docs d ON d.rowid = docs_trgm.rowid "
                    f"WHERE docs_trgm MATCH :q{where} LIMIT :k",
                    {"q": '"' + term.replace('"', '""') + '"', "k": SUBSTRING_CAP},
                    "trigram",
                    binds,
                )
            else:
                pattern = f"%{escape_like(term)}%"
                rows = _run(
                    session,
                    "SELECT d.id FROM docs d WHERE (d.title LIKE :p ESCAPE '\\' OR d.content LIKE :p ESCAPE '\\')"
                    f"{where} LIMIT :k",
                    {"p": pattern, "k": SUBSTRING_CAP},
                    "substring",
                    binds,
                )
            for row in rows:
                matches.setdefault(str(row[0]), []).append(term)
        return _merged(words, matches, bool(planned.cjk), limit)

    def rebuild(self, session: Session) -> None:
        session.execute(text("INSERT INTO docs_fts(docs_fts) VALUES ('rebuild')"))
        session.execute(text("INSERT INTO docs_trgm(docs_trgm) VALUES ('rebuild')"))

    def describe(self, session: Session) -> str:
        return "SQLite FTS5 (porter unicode61) + trigram index for CJK and substrings"


# One term or phrase as websearch_to_tsquery reads it in the ranked query (a phrase in quotes).
_PG_TERM = "websearch_to_tsquery('english', :q)"


def _pg_term(word: str) -> str:
    return f'"{word}"' if " " in word else word


_PG_DOC_TEXT = "(coalesce(d.title, '') || ' ' || coalesce(d.content, ''))"


class PostgresFullText:
    engine = "postgresql-tsvector"

    def __init__(self) -> None:
        self._has_trgm: bool | None = None

    def has_trgm(self, session: Session) -> bool:
        if self._has_trgm is None:
            found = session.execute(text("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'")).first()
            self._has_trgm = found is not None
        return self._has_trgm

    def search(
        self, session: Session, planned: PlannedQuery, limit: int, scope: DocScope | None = None
    ) -> list[TextHit]:
        words: list[tuple[str, float]] = []
        where, binds = _scoped(scope, "postgresql")
        ranked = bounded(planned, _counts(session, planned, _PG_COUNT.format(q=_PG_TERM), _pg_term))
        query = ranked.websearch()
        if query:
            rows = _run(
                session,
                "SELECT d.id, ts_rank(d.fts, q, 1) AS rank FROM docs d, websearch_to_tsquery('english', :q) q "
                f"WHERE d.fts @@ q{where} ORDER BY rank DESC, d.id LIMIT :k",
                {"q": query, "k": limit},
                "full-text",
                binds,
            )
            words = [(str(row[0]), float(row[1])) for row in rows]
        terms = ranked.substrings(include_words=len(words) < limit)
        matches: dict[str, list[str]] = {}
        for term in terms:
            rows = _run(
                session,
                f"SELECT d.id FROM docs d WHERE {_PG_DOC_TEXT} ILIKE :p ESCAPE '\\'{where} LIMIT :k",
                {"p": f"%{escape_like(term)}%", "k": SUBSTRING_CAP},
                "substring",
                binds,
            )
            for row in rows:
                matches.setdefault(str(row[0]), []).append(term)
        return _merged(words, matches, bool(planned.cjk), limit)

    def rebuild(self, session: Session) -> None:
        # The tsvector is a generated column: always current. Nothing to rebuild.
        return None

    def describe(self, session: Session) -> str:
        trigram = (
            "pg_trgm index for substrings and CJK"
            if self.has_trgm(session)
            else ("no pg_trgm (substring and CJK search scan with ILIKE)")
        )
        return f"PostgreSQL tsvector (english) + {trigram}"


def full_text_for(dialect: str) -> FullTextIndex:
    return PostgresFullText() if dialect == "postgresql" else SqliteFullText()
