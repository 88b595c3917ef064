"""The conflict gate: the close neighbours of a new memory, each shown once with what an agent
needs to judge the pair.

Candidates, in O(k) whatever the size of the store:

- the nearest active memories by vector: an exact scan of the memory vector index
  (:mod:`dokoro_store.semantic.memories.vectors.index`, one per process, kept in step by the memories'
  change numbers; recall's vector leg reads the same one),
  seeded with the new memory's own stored vector: only memories are compared (the vector
  engine holds every document), and the scan hands back every candidate's cosine; on a store of
  few active memories, simply all of them;
- the memories sharing an entity with it: a join on ``memory_entities`` (indexed by entity), the
  most recent ones first, a bounded number per entity.

A candidate whose cosine cannot reach the thresholds even with a perfect word overlap is dropped
before its text is read. Each candidate is judged on two signals: the cosine of the two memories' vectors (meaning: a
restatement scores high in other words) and the overlap of their words (the lexical signal: it
also catches a contradiction that changes one value in the same sentence, and it is all there is
without an embedder). A neighbour shares an entity and is similar, or is very similar alone.
The cosine thresholds depend on the embedder (a transformer's cosines sit higher than a static
model's, the hashing floor's cosine is a word overlap); they are calibrated on the pairs written
down in ``tests/test_memory_gate.py`` (same fact restated, contradicting facts, unrelated facts).

Nothing is overwritten: each pair is written to the ``memory_conflicts`` ledger (so it is shown
once) and the agent gives a verdict with :meth:`MemoryService.verdict`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, literal, union_all
from sqlalchemy import select as core_select
from sqlalchemy.exc import SQLAlchemyError
from sqlmodel import Session, col, select

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.errors import DokoroError
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.models.memories import MemoryConflict, MemoryEntity
from dokoro_store.results.memories import CloseMemory
from dokoro_store.semantic.memories import repository
from dokoro_store.semantic.memories.repository import pair_hash
from dokoro_store.semantic.memories.rows import DOC_PREFIX, days, memory_result

if TYPE_CHECKING:
    from dokoro_store.semantic.documents.service import DocumentService
    from dokoro_store.semantic.search.service import SearchService

__all__ = [
    "LEXICAL_ALONE",
    "LEXICAL_WEIGHT",
    "LEXICAL_WITH_ENTITY",
    "MAX_SHOWN",
    "THRESHOLDS",
    "ConflictGate",
    "GateThresholds",
    "is_close",
    "pair_hash",
    "text_similarity",
    "thresholds_for",
]

log = logging.getLogger("dokoro.store")

# The lexical signal (Jaccard of the words): similar text with a shared entity, or very similar alone.
LEXICAL_WITH_ENTITY = 0.25
LEXICAL_ALONE = 0.6


# With vectors, a pair is judged on one score: the cosine plus this share of the word overlap (a
# contradiction that changes one value keeps most words; a restatement keeps the meaning).
LEXICAL_WEIGHT = 0.5


@dataclass(frozen=True)
class GateThresholds:
    """Thresholds of ``cosine + LEXICAL_WEIGHT × lexical`` for one kind of embedder: with a shared
    entity, and alone."""

    with_entity: float
    alone: float


# Calibrated on the pairs of tests/test_memory_gate.py: every restatement and contradiction above,
# every unrelated pair below, for each embedder (the hashing floor's cosine is a word overlap too,
# so its margins are the narrowest).
THRESHOLDS: dict[str, GateThresholds] = {
    "onnx": GateThresholds(with_entity=0.8, alone=0.85),
    "static": GateThresholds(with_entity=0.92, alone=0.9),
    "hashing": GateThresholds(with_entity=0.66, alone=0.6),
    "ollama": GateThresholds(with_entity=0.8, alone=0.85),
}

MAX_SHOWN = 5  # close memories one answer shows (the closest); the others stay unshown, not lost
_KNN = 16  # nearest active memories taken from the matrix
_ALL_BELOW = 200  # with this many active memories or fewer, compare with every one
_PER_ENTITY = 20  # most recent memories sharing one entity
_MAX_ENTITIES = 8
# "Latest wins" is only offered for kinds of memory that describe the current state of things.
_LATEST_WINS_TYPES = frozenset({"fact", "preference", "decision", "reference"})
_TRUST_RANK = {"imported": 0, "agent-inferred": 1, "user-stated": 2}
_WORD = re.compile(r"[\w-]+", re.UNICODE)


def _tokens(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2}


def _jaccard(left: set[str], right: set[str]) -> float:
    if not left or not right:
        return 0.0
    return len(left & right) / len(left | right)


def text_similarity(a: str, b: str) -> float:
    """Jaccard overlap of the words (3+ letters) of two texts, 0..1."""
    return _jaccard(_tokens(a), _tokens(b))


def _strength(signals: tuple[list[str], float, float | None]) -> float:
    _shared, lexical, cosine = signals
    return lexical if cosine is None else cosine + LEXICAL_WEIGHT * lexical


def thresholds_for(embedder_id: str | None) -> GateThresholds | None:
    """The cosine thresholds for vectors stamped ``embedder_id`` (None: no vectors)."""
    if not embedder_id:
        return None
    return THRESHOLDS.get(embedder_id.split(":", 1)[0], THRESHOLDS["ollama"])


def is_close(shared: bool, lexical: float, cosine: float | None, thresholds: GateThresholds | None) -> bool:
    """The gate's rule: similar with a shared entity, or very similar alone.

    With vectors: ``cosine + LEXICAL_WEIGHT × lexical`` against the embedder's thresholds. Without
    (no embedder, or the memory could not be embedded): the word overlap alone.
    """
    if cosine is None or thresholds is None:
        return (shared and lexical >= LEXICAL_WITH_ENTITY) or lexical >= LEXICAL_ALONE
    score = cosine + LEXICAL_WEIGHT * lexical
    return (shared and score >= thresholds.with_entity) or score >= thresholds.alone


@dataclass
class _Candidate:
    row: MemoryRow
    shared: list[str]
    lexical: float
    cosine: float | None


class ConflictGate:
    """Finds a new memory's close neighbours and records each pair in the ledger once."""

    def __init__(self, db: Database, clock: Clock, docs: DocumentService, search: SearchService) -> None:
        self._db = db
        self._clock = clock
        self._docs = docs
        self._search = search
        self._large = False  # more than twice _ALL_BELOW active memories seen: always the kNN

    def check(self, memory: MemoryRow) -> list[CloseMemory]:
        """The neighbours of ``memory`` (its vector read from its indexed chunks) not shown before,
        each now written to the ledger."""
        found = self._neighbours(memory)
        if not found:
            return []
        with self._db.write() as session:
            hashes = [pair_hash(memory.id, c.row.id) for c in found]
            shown = set(
                session.execute(
                    select(MemoryConflict.pair_hash).where(col(MemoryConflict.pair_hash).in_(hashes))
                ).scalars()
            )
            return self._record(session, memory, found, shown)

    def check_new(self, session: Session, memory: MemoryRow, own: tuple[str | None, Any]) -> list[CloseMemory]:
        """:meth:`check` for a memory being written in ``session`` (remember's one transaction): the
        candidates are read from what is committed (the write lock held: nothing commits meanwhile),
        the pairs written to the ledger in ``session``. A new memory has no pair shown yet."""
        # PostgreSQL: one gate at a time, so two similar memories written at once see each other
        # (SQLite's write transaction already holds the database's one write lock).
        self._db.ops.lock_keys(session, "gate", ["memories"])
        found = self._neighbours(memory, own)
        return self._record(session, memory, found, set()) if found else []

    def _record(
        self, session: Session, memory: MemoryRow, found: Sequence[_Candidate], shown: set[str]
    ) -> list[CloseMemory]:
        """Write the pairs not ``shown`` yet to the ledger; the material the answer shows for each."""
        now = self._clock.now()
        materials: list[CloseMemory] = []
        for candidate in found:
            pair = pair_hash(memory.id, candidate.row.id)
            if pair in shown:
                continue  # shown once already
            similarity = candidate.cosine if candidate.cosine is not None else candidate.lexical
            repository.record_pair(
                session,
                pair_hash=pair,
                new_id=memory.id,
                old_id=candidate.row.id,
                shared=candidate.shared,
                similarity=round(similarity, 4),
                shown_at=now,
            )
            eligible, why_not = _latest_wins(memory, candidate.row)
            materials.append(
                CloseMemory(
                    memory=memory_result(candidate.row),
                    shared_entities=candidate.shared,
                    similarity=round(similarity, 3),
                    semantic=None if candidate.cosine is None else round(candidate.cosine, 3),
                    lexical=round(candidate.lexical, 3),
                    gap_days=round(days(memory.created_at - candidate.row.created_at), 2),
                    latest_wins_eligible=eligible,
                    why_not_latest_wins=why_not,
                )
            )
        return materials

    # ------------------------------------------------------------------ candidates
    def _neighbours(self, memory: MemoryRow, own: tuple[str | None, Any] | None = None) -> list[_Candidate]:
        embedder, query = own if own is not None else self._own_vector(memory)
        shared_by_id = self._sharing_entities(memory)
        ids = set(shared_by_id)
        cosines: dict[str, float] = {}
        if query is not None and embedder is not None:
            near = self._nearest(memory, embedder, query)
            ids |= set(near)
            cosines.update({i: c for i, c in near.items() if c is not None})
            if self._large and shared_by_id:
                cosines.update(self._search.memory_index.cosines(shared_by_id, query))
        else:
            ids |= self._keyword(memory)
        ids.discard(memory.id)
        if not ids:
            return []
        thresholds = thresholds_for(embedder)
        # The word overlap adds at most LEXICAL_WEIGHT: a cosine too low to reach the threshold
        # with it is not worth reading or tokenising the candidate for.
        floor = None if thresholds is None else min(thresholds.with_entity, thresholds.alone) - LEXICAL_WEIGHT
        if query is not None and embedder is not None:
            missing = [i for i in ids if i not in cosines]
            if missing:
                from dokoro_store.index.ranking.neighbours import load_doc_vectors

                vectors = load_doc_vectors(self._db, [f"{DOC_PREFIX}{i}" for i in missing], embedder, query)
                cosines.update({doc[len(DOC_PREFIX) :]: float(v @ query) for doc, v in vectors.mean.items()})
            if floor is not None:
                ids = {i for i in ids if i not in cosines or cosines[i] >= floor}
                if not ids:
                    return []
        # Score on the few columns the signals need; load whole rows only for the close ones.
        table = MemoryRow.__table__  # type: ignore[attr-defined]
        with self._db.read() as session:
            # The state is checked here, not in SQL: a condition on it would let the database
            # walk its index on state (every active memory) instead of the ids.
            light = [
                (r[0], r[1], r[2], r[3])
                for r in session.execute(
                    core_select(table.c.id, table.c.title, table.c.body, table.c.entities, table.c.state).where(
                        table.c.id.in_(sorted(ids))
                    )
                ).all()
                if r[4] == "active"
            ]
        gone = ids - {str(r[0]) for r in light}  # purged, or retired since
        if gone and query is not None:
            self._search.memory_index.read_again(gone)
        mine_words = _tokens(f"{memory.title} {memory.body}")
        mine = set(memory.entities)
        close: dict[str, tuple[list[str], float, float | None]] = {}
        for other_id, title, body, entities in light:
            cosine = cosines.get(str(other_id))
            if floor is not None and cosine is not None and cosine < floor:
                continue
            shared = sorted(mine & set(entities or []))
            lexical = _jaccard(mine_words, _tokens(f"{title} {body}"))
            if is_close(bool(shared), lexical, cosine, thresholds):
                close[str(other_id)] = (shared, lexical, cosine)
        close = dict(sorted(close.items(), key=lambda item: -_strength(item[1]))[:MAX_SHOWN])
        if not close:
            return []
        with self._db.read() as session:
            rows = session.exec(select(MemoryRow).where(col(MemoryRow.id).in_(list(close)))).all()
        found = [_Candidate(row, *close[row.id]) for row in rows]
        found.sort(key=lambda c: (-_strength((c.shared, c.lexical, c.cosine)), c.row.id))
        return found

    def _own_vector(self, memory: MemoryRow) -> tuple[str | None, Any]:
        """The embedder and the (mean, unit) vector the index stored for the new memory, if any."""
        from dokoro_store.models.index import chunks

        with self._db.read() as session:
            rows = session.execute(
                select(chunks.c.embedder, chunks.c.embedding).where(
                    chunks.c.doc_id == f"{DOC_PREFIX}{memory.id}", chunks.c.embedding.is_not(None)
                )
            ).all()
        if not rows:
            return None, None
        from dokoro_store.index.embedders.handle import from_bytes, unit_mean

        embedder = str(rows[0][0])
        return embedder, unit_mean([from_bytes(r[1]) for r in rows if r[0] == embedder])

    def _sharing_entities(self, memory: MemoryRow) -> dict[str, None]:
        """Active memories sharing an entity with ``memory``: the most recent few per entity, by
        index, in one statement (a ``UNION ALL`` of one bounded walk per entity)."""
        entities = list(dict.fromkeys(memory.entities))[:_MAX_ENTITIES]
        if not entities:
            return {}
        links = MemoryEntity.__table__  # type: ignore[attr-defined]
        rows = MemoryRow.__table__  # type: ignore[attr-defined]
        # The state is a per-row lookup (a correlated subquery, never a join): both engines walk
        # the entity's index newest first and stop at the limit. As a join, PostgreSQL merged it
        # with a scan of every memory (a sequential scan at 10k, 18 ms; O(N)).
        state = core_select(rows.c.state).where(rows.c.id == links.c.memory_id).correlate(links).scalar_subquery()
        walks = []
        for position, entity in enumerate(entities):
            walk = (
                core_select(links.c.memory_id, literal(position).label("position"))
                .where(
                    links.c.entity == entity,
                    state == "active",
                    links.c.memory_id != memory.id,
                )
                .order_by(links.c.memory_id.desc())
                .limit(_PER_ENTITY)
                .subquery()
            )
            walks.append(core_select(walk.c.memory_id, walk.c.position))
        statement = walks[0] if len(walks) == 1 else union_all(*walks)
        with self._db.read() as session:
            found = list(session.execute(statement).all())
        # Entity by entity as named, the most recent first within each.
        found.sort(key=lambda r: str(r[0]), reverse=True)
        found.sort(key=lambda r: int(r[1]))  # stable: each entity's memories stay newest first
        return dict.fromkeys(str(r[0]) for r in found)

    def _nearest(self, memory: MemoryRow, embedder: str, query: Any) -> dict[str, float | None]:
        """The active memories nearest ``query`` with their cosines when known: all of them on a
        small store (cosines read later), else the ``_KNN`` nearest by an exact scan of the active
        memories' mean vectors (the memory vector index)."""
        if not self._large:
            with self._db.read() as session:
                # How many active memories, up to one past twice the limit (a count of them all
                # reads them all). Past it, the store is taken as large for the life of the process:
                # the matrix serves a store that shrinks back as well.
                few = select(MemoryRow.id).where(col(MemoryRow.state) == "active").limit(2 * _ALL_BELOW + 1).subquery()
                active = int(session.execute(select(func.count()).select_from(few)).scalar() or 0)
                self._large = active > 2 * _ALL_BELOW
                if active <= _ALL_BELOW:
                    everyone = [
                        str(x)
                        for x in session.execute(
                            select(MemoryRow.id).where(col(MemoryRow.state) == "active", col(MemoryRow.id) != memory.id)
                        ).scalars()
                    ]
            if active <= _ALL_BELOW:
                # Every one, with the cosines the memory vector index holds (one product over its
                # matrix, not their vectors read from the database on every remember); a memory whose
                # vectors are not there yet (written behind) keeps None and is read as before.
                known = self._search.memory_index.nearest(query, embedder, active + 1, exclude=memory.id)
                return {x: known.get(x) for x in everyone}
        return dict(self._search.memory_index.nearest(query, embedder, _KNN, exclude=memory.id))

    def _keyword(self, memory: MemoryRow) -> set[str]:
        """Without vectors: the memories the full-text index finds for the new one's words."""
        try:
            result = self._search.universal(f"{memory.title} {memory.body}"[:2000], limit=30, mode="keyword")
        except (SQLAlchemyError, DokoroError):  # never fail a remember for it; shared entities still work
            log.warning("dokoro: the conflict gate's full-text search failed", exc_info=True)
            return set()
        return {h.doc_id[len(DOC_PREFIX) :] for h in result.hits if h.doc_id.startswith(DOC_PREFIX)}


def _latest_wins(new: MemoryRow, old: MemoryRow) -> tuple[bool, str | None]:
    if new.type != old.type:
        return False, f"different kinds ({old.type} vs {new.type}): both may hold"
    if new.type not in _LATEST_WINS_TYPES:
        return False, f"a {new.type} is not replaced by recency; decide explicitly"
    if _TRUST_RANK[new.trust] < _TRUST_RANK[old.trust]:
        return False, f"the new memory is {new.trust}, the old one {old.trust}"
    return True, None
