"""The conflict gate: the close neighbours of a new memory, each shown once with what an agent
needs to judge the pair.

A neighbour shares an entity and has similar text, or has very similar text alone. Nothing is
overwritten: each pair is written to the ``memory_conflicts`` ledger (so it is shown once) and
the agent gives a verdict with :meth:`MemoryService.verdict`.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING

from sqlalchemy import bindparam, text
from sqlmodel import col, select

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.models.memories import MemoryConflict
from dokoro_store.results.memories import CloseMemory
from dokoro_store.services.memory_rows import DOC_PREFIX, days, memory_result

if TYPE_CHECKING:
    from dokoro_store.retrieval.search import SearchService

__all__ = ["SIMILAR_ALONE", "SIMILAR_WITH_ENTITY", "ConflictGate", "pair_hash", "text_similarity"]

# Neighbours: similar text with a shared entity, or very similar text alone.
SIMILAR_WITH_ENTITY = 0.25
SIMILAR_ALONE = 0.6
_CANDIDATES = 30
# Memories sharing an entity compared at most (the most recently updated ones).
_SHARING_LIMIT = 500
# "Latest wins" is only offered for kinds of memory that describe the current state of things.
_LATEST_WINS_TYPES = frozenset({"fact", "preference", "decision", "reference"})
_TRUST_RANK = {"imported": 0, "agent-inferred": 1, "user-stated": 2}
_WORD = re.compile(r"[\w-]+", re.UNICODE)


def _tokens(text: str) -> set[str]:
    return {w for w in (m.group(0).lower() for m in _WORD.finditer(text)) if len(w) > 2}


def text_similarity(a: str, b: str) -> float:
    """Jaccard overlap of the words (3+ letters) of two texts, 0..1."""
    left, right = _tokens(a), _tokens(b)
    if not left or not right:
        return 0.0
    return len(left & right) / len(left | right)


def pair_hash(a: str, b: str) -> str:
    """The ledger key of a pair of memories, whichever order they come in."""
    first, second = sorted((a, b))
    return hashlib.sha256(f"{first}|{second}".encode()).hexdigest()


class ConflictGate:
    """Finds a new memory's close neighbours and records each pair in the ledger once."""

    def __init__(self, db: Database, clock: Clock, search: SearchService) -> None:
        self._db = db
        self._clock = clock
        self._search = search

    def check(self, memory: MemoryRow) -> list[CloseMemory]:
        """The neighbours of ``memory`` not shown before, each now written to the ledger."""
        materials: list[CloseMemory] = []
        now = self._clock.now()
        for other, shared, similarity in self._neighbours(memory):
            pair = pair_hash(memory.id, other.id)
            with self._db.write() as session:
                if session.get(MemoryConflict, pair) is not None:
                    continue  # shown once already
                session.add(
                    MemoryConflict(
                        pair_hash=pair,
                        new_id=memory.id,
                        old_id=other.id,
                        shared_entities=shared,
                        similarity=round(similarity, 4),
                        shown_at=now,
                    )
                )
            eligible, why_not = _latest_wins(memory, other)
            materials.append(
                CloseMemory(
                    memory=memory_result(other),
                    shared_entities=shared,
                    similarity=round(similarity, 3),
                    gap_days=round(days(memory.created_at - other.created_at), 2),
                    latest_wins_eligible=eligible,
                    why_not_latest_wins=why_not,
                )
            )
        return materials

    def _sharing(self, memory: MemoryRow) -> list[MemoryRow]:
        """Active memories that share an entity with ``memory``, found by the database (never every
        row read): the most recently updated ``_SHARING_LIMIT`` of them."""
        names = sorted(set(memory.entities))
        if not names:
            return []
        if self._db.dialect == "postgresql":
            element = "SELECT 1 FROM json_array_elements_text(memories.entities) AS e(v) WHERE e.v IN :names"
        else:
            element = "SELECT 1 FROM json_each(memories.entities) WHERE json_each.value IN :names"
        shares = text(f"EXISTS ({element})").bindparams(bindparam("names", value=names, expanding=True))
        with self._db.read() as session:
            return list(
                session.exec(
                    select(MemoryRow)
                    .where(MemoryRow.state == "active", MemoryRow.id != memory.id, shares)
                    .order_by(col(MemoryRow.updated_at).desc(), col(MemoryRow.id))
                    .limit(_SHARING_LIMIT)
                )
            )

    def _neighbours(self, memory: MemoryRow) -> list[tuple[MemoryRow, list[str], float]]:
        candidates: dict[str, MemoryRow] = {other.id: other for other in self._sharing(memory)}
        mine = set(memory.entities)
        try:
            result = self._search.universal(f"{memory.title} {memory.body}"[:2000], limit=_CANDIDATES)
        except Exception:  # the gate must never fail a remember; shared entities still work
            result = None
        if result is not None:
            hit_ids = [
                hit.doc_id[len(DOC_PREFIX) :]
                for hit in result.hits
                if hit.doc_id.startswith(DOC_PREFIX) and hit.doc_id[len(DOC_PREFIX) :] not in candidates
            ]
            if hit_ids:
                with self._db.read() as session:
                    for other in session.exec(
                        select(MemoryRow).where(
                            MemoryRow.state == "active", MemoryRow.id != memory.id, col(MemoryRow.id).in_(hit_ids)
                        )
                    ):
                        candidates.setdefault(other.id, other)
        mine_text = f"{memory.title} {memory.body}"
        found: list[tuple[MemoryRow, list[str], float]] = []
        for other in candidates.values():
            shared = sorted(mine & set(other.entities))
            similarity = text_similarity(mine_text, f"{other.title} {other.body}")
            if (shared and similarity >= SIMILAR_WITH_ENTITY) or similarity >= SIMILAR_ALONE:
                found.append((other, shared, similarity))
        found.sort(key=lambda item: (-item[2], item[0].id))
        return found


def _latest_wins(new: MemoryRow, old: MemoryRow) -> tuple[bool, str | None]:
    if new.type != old.type:
        return False, f"different kinds ({old.type} vs {new.type}): both may hold"
    if new.type not in _LATEST_WINS_TYPES:
        return False, f"a {new.type} is not replaced by recency; decide explicitly"
    if _TRUST_RANK[new.trust] < _TRUST_RANK[old.trust]:
        return False, f"the new memory is {new.trust}, the old one {old.trust}"
    return True, None
