"""Recall with weathering: memories for a question, ranked by relevance first.

**The rule: recency and use break near-ties; they never bury a clearly more relevant memory.**

    score = relevance × trust × state  +  NEAR_TIE × (freshness + heat) / 2

``relevance`` is the hybrid search score relative to the best memory found (1.0); ``trust`` and
``state`` weigh what the memory *is* (user-stated over inferred, active over archived). Freshness
(halving every 90 days since the last update) and heat (recalls, fading with a 30-day half-life)
are each in [0, 1], so together they add at most :data:`NEAR_TIE`: a memory overtakes another only
when the other's ``relevance × trust × state`` is less than ``NEAR_TIE`` above its own. Among
equally relevant memories the fresh, used one comes first; an old, never-recalled memory that
answers the question better still comes first.

Why additive and bounded: heat that multiplied relevance fed back on itself — whatever was
recalled once ranked higher, was recalled again and buried better answers (measured on LoCoMo:
``bench/locomo_memories.py``, row ``+use``). Nothing is deleted; old memories nobody recalls only
lose ties.

**What counts as a use** (``recall_count``, ``last_recalled_at``: what the upkeep reads to propose
pruning a memory never used, and what heat is made of): a hit the agent was shown that is a close
match — its calibrated relevance at least
:data:`~dokoro_store.index.ranking.calibration.CLOSE_MATCH` (0.15). The nearest hits of a recall
that found nothing close (an unrelated memory at relevance 0.04) are shown as such and count for
nothing: one weak recall no longer keeps a 400-day-old memory from ever being proposed for pruning.

**Types switched off** (:mod:`.switches`) are left out of the search's own conditions, so they are
never recalled, whatever the question.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from sqlmodel import col, select

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.errors import EmbedderMismatchError, InvalidArgumentError
from dokoro_store.index.ranking.calibration import CLOSE_MATCH
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.results.memories import RecallHit
from dokoro_store.semantic.memories import repository
from dokoro_store.semantic.memories.lifecycle import broken_dependencies, describe, stale_words
from dokoro_store.semantic.memories.rows import (
    DOC_PREFIX,
    DOC_TYPE,
    MEMORY_TYPES,
    STATES,
    canonical_entities,
    days,
    memory_result,
    parse_time,
)
from dokoro_store.semantic.memories.switches import TypeSwitches

if TYPE_CHECKING:
    from dokoro_store.semantic.search.service import SearchHit, SearchService

__all__ = [
    "CHECKED_DEPTH",
    "FRESHNESS_HALF_LIFE_DAYS",
    "HEAT_HALF_LIFE_DAYS",
    "NEAR_TIE",
    "MemoryRecall",
    "memory_mismatch_message",
    "recall_depth",
    "retired_state",
    "stale_state",
    "weather",
]

_TRUST_WEIGHT = {"user-stated": 1.0, "agent-inferred": 0.8, "imported": 0.7}
_STATE_WEIGHT = {"active": 1.0, "proposed": 0.8, "archived": 0.35, "deprecated": 0.1}
# Freshness halves every 90 days; heat (use) fades with a 30-day half-life since the last recall.
FRESHNESS_HALF_LIFE_DAYS = 90.0
HEAT_HALF_LIFE_DAYS = 30.0
# Freshness and heat together move a memory by at most this much of relevance × trust × state.
NEAR_TIE = 0.05
# Search depth when a filter is checked on recall's answer rather than in the search's legs.
CHECKED_DEPTH = 100


class MemoryRecall:
    """Hybrid search over the memories' documents, weathered and filtered."""

    def __init__(
        self,
        db: Database,
        clock: Clock,
        search: SearchService,
        entities: Callable[[Sequence[str] | None], list[str]] = canonical_entities,
        expand: Callable[[str], str] = str,
        aliases: Callable[[str], list[str]] = lambda _name: [],
    ) -> None:
        """``entities`` names entities as stored and ``expand`` adds the names of the synonyms a
        query uses (the dictionary of synonyms, when there is one)."""
        self._db = db
        self._clock = clock
        self._search = search
        self._entities = entities
        self._expand = expand
        self._aliases = aliases
        self._switches = TypeSwitches(db, clock)

    def recall(
        self,
        query: str,
        *,
        limit: int = 10,
        types: Sequence[str] | None = None,
        entity: str | None = None,
        since: str | None = None,
        until: str | None = None,
        states: Sequence[str] = ("active",),
        count_use: bool = True,
        hidden: Sequence[str] | None = None,
    ) -> list[RecallHit]:
        """Memories for ``query``, weathered, filtered (types switched off left out); each returned
        hit that is a close match counts as a use (see the module). ``hidden``: the types switched
        off, when the caller has just read them (:meth:`hidden_types`)."""
        _check_arguments(query, limit, types, states)
        if hidden is None:
            hidden = self.hidden_types()
        if hidden:
            # The types in use (of those asked for): a condition of the search's legs, as any filter.
            types = [kind for kind in (types or MEMORY_TYPES) if kind not in hidden]
            if not types:
                return []
        start = parse_time(since, "since")
        end = parse_time(until, "until")
        named = self._entities([entity]) if entity and entity.strip() else []
        wanted_entity = named[0] if named else None
        from dokoro_store.index.scope import DocScope, MemoryScope

        # An entity with synonyms is checked on the answer (below), so the search looks deeper.
        checked_entity = bool(wanted_entity and self._aliases(wanted_entity))

        # The filters are conditions of the search's legs, not of its answer: a memory is found
        # however many other documents (workspace pages, indexed content) outrank it.
        scope = DocScope(
            doc_types=(DOC_TYPE,),
            memory=MemoryScope(
                types=tuple(types or ()),
                states=tuple(states),
                # A name with synonyms in the dictionary: memories stored under a synonym before it
                # was listed match too, so the entity is checked on the answer (below) instead.
                entity=wanted_entity if wanted_entity and not checked_entity else None,
                since=start,
                until=end,
            ),
        )
        try:
            search = self._search.ranked(self._expand(query), limit=recall_depth(limit, checked_entity), scope=scope)
        except EmbedderMismatchError as exc:
            raise EmbedderMismatchError(memory_mismatch_message(str(exc))) from None
        ranked = [(d[len(DOC_PREFIX) :], score) for d, score in search.scores if d.startswith(DOC_PREFIX)]
        if not ranked:
            return []
        with self._db.read() as session:
            rows = {
                m.id: m for m in session.exec(select(MemoryRow).where(col(MemoryRow.id).in_([r[0] for r in ranked])))
            }
            broken = broken_dependencies(session.connection(), list(rows))
        now = self._clock.now()
        top = max(score for _id, score in ranked)
        kept: list[tuple[float, float, MemoryRow, dict[str, float]]] = []
        for memory_id, fused in ranked:
            memory = rows.get(memory_id)
            if memory is None or memory.state not in states:
                continue
            if types and memory.type not in types:
                continue
            if wanted_entity and wanted_entity not in self._entities(memory.entities):
                continue
            if start and memory.created_at < start:
                continue
            if end and memory.created_at > end:
                continue
            relevance = fused / top if top else 0.0
            score, parts = weather(memory, relevance, now)
            kept.append((score, relevance, memory, parts))
        # Stale memories (past a date, or a dependency retired) below every current one, retired
        # memories (superseded, archived, deprecated) below every stale one.
        retired = {m.id: words for _s, _r, m, _p in kept if (words := retired_state(m, now)) is not None}
        stale = {
            m.id: words
            for _s, _r, m, _p in kept
            if (words := stale_state(m, now, broken.get(m.id, ()))) is not None and m.id not in retired
        }
        kept.sort(key=lambda k: (2 if k[2].id in retired else 1 if k[2].id in stale else 0, -k[0], k[2].id))
        kept = kept[:limit]
        found = {h.doc_id: h for h in search.hits([f"{DOC_PREFIX}{memory.id}" for _s, _r, memory, _p in kept])}
        hits = [
            RecallHit(
                memory=memory_result(memory),
                # The calibrated relevance is the score a client reads; what ordered the hits is named so.
                score=search.relevance.get(f"{DOC_PREFIX}{memory.id}", 0.0),
                relevance=search.relevance.get(f"{DOC_PREFIX}{memory.id}", 0.0),
                rank_score=score,
                reason=_reason(
                    found.get(f"{DOC_PREFIX}{memory.id}"), memory, parts, retired.get(memory.id), stale.get(memory.id)
                ),
                retired=retired.get(memory.id),
                stale=stale.get(memory.id),
            )
            for score, relevance, memory, parts in kept
        ]
        used = [hit.memory.id for hit in hits if hit.relevance >= CLOSE_MATCH]
        if count_use and used:
            # One statement: the count is incremented in SQL (no read, no lost update between processes).
            with self._db.write() as session:
                repository.count_uses(session, used, now=now)
        return hits

    def hidden_types(self) -> list[str]:
        """The memory types switched off in this store (never recalled)."""
        with self._db.read() as session:
            return self._switches.hidden(session)


def _check_arguments(query: str, limit: int, types: Sequence[str] | None, states: Sequence[str]) -> None:
    """Refuse a recall's bad arguments, each with how to fix it."""
    if not query.strip():
        raise InvalidArgumentError("query must not be empty: say what you want to remember")
    if not 1 <= limit <= 50:
        raise InvalidArgumentError(f"limit must be between 1 and 50; got {limit}")
    for kind in types or ():
        if kind not in MEMORY_TYPES:
            raise InvalidArgumentError(f"types: {kind!r} is not one of {', '.join(MEMORY_TYPES)}")
    for state in states:
        if state not in STATES:
            raise InvalidArgumentError(f"states: {state!r} is not one of {', '.join(STATES)}")


def recall_depth(limit: int, checked_on_answer: bool = False) -> int:
    """How many of the search's best a recall weathers: the page, and at least the re-ranker's block.

    The re-ranker re-orders the search's best :data:`~dokoro_store.index.ranking.rerank.RERANK_DEPTH`
    and lifts them above the rest, and every filter of recall but an entity with synonyms is a
    condition of the search's legs, so a deeper list only adds candidates scored below that block.
    Asking for a hundred made each leg look a hundred deep (a LanceDB query for 400 neighbours, an
    FTS5 ranking of every match) for candidates that almost never made the page (measured:
    ``docs/benchmarks.md``, "Recall depth"). A filter checked on the answer (``checked_on_answer``)
    keeps :data:`CHECKED_DEPTH` so enough candidates survive it.
    """
    from dokoro_store.index.ranking.rerank import RERANK_DEPTH

    return max(limit, CHECKED_DEPTH if checked_on_answer else RERANK_DEPTH)


def weather(memory: MemoryRow, relevance: float, now: datetime) -> tuple[float, dict[str, float]]:
    """The recall score of ``memory`` at ``relevance`` (the module's rule) and its parts."""
    age = max(0.0, days(now - memory.updated_at))
    freshness = 0.5 ** (age / FRESHNESS_HALF_LIFE_DAYS)
    heat = 0.0
    if memory.recall_count and memory.last_recalled_at is not None:
        since_use = max(0.0, days(now - memory.last_recalled_at))
        heat = min(1.0, math.log1p(memory.recall_count) / math.log(11)) * 0.5 ** (since_use / HEAT_HALF_LIFE_DAYS)
    trust = _TRUST_WEIGHT.get(memory.trust, 0.7)
    state = _STATE_WEIGHT.get(memory.state, 0.1)
    score = relevance * trust * state + NEAR_TIE * (freshness + heat) / 2
    return score, {"age": age, "freshness": freshness, "heat": heat}


def retired_state(memory: MemoryRow, now: datetime) -> str | None:
    """What retired ``memory``, in words (superseded, archived, deprecated), or None."""
    return describe(memory.state, memory.superseded_by, memory.state_reason, memory.valid_until, now)


def stale_state(memory: MemoryRow, now: datetime, broken: Sequence[str] = ()) -> str | None:
    """Why ``memory`` (in force) is stale, in words starting with "stale", or None
    (:func:`~dokoro_store.semantic.memories.lifecycle.stale_words`)."""
    return stale_words(memory.state, memory.review_after, memory.valid_until, now, broken)


def memory_mismatch_message(search_message: str) -> str:
    """The embedder mismatch as recall meets it: the fix on the memory side (search's keyword mode
    does not apply to memories)."""
    head = search_message.split("; search_universal with mode='keyword' still works", 1)[0].rstrip(". ")
    return (
        f"{head}. Until then dokoro_recall cannot rank memories by meaning: run `dokoro reembed` (it re-embeds "
        "the memories with the documents), or start the server with the embedder the index was built with."
    )


def _reason(
    hit: SearchHit | None,
    memory: MemoryRow,
    parts: dict[str, float],
    retired: str | None = None,
    stale: str | None = None,
) -> str:
    # The search's own words on the memory's standing are replaced by recall's (the same, by memory).
    why = hit.why if hit is not None else ""
    bits = [
        h
        for h in why.split("; ")
        if h and not h.startswith(("retired (", "stale:", "past ", "due for ", "depends on "))
    ]
    bits.append(memory.trust)
    if retired is not None:
        bits.append(f"{retired}: ranked below every current memory")
    elif stale is not None:
        bits.append(f"{stale}: ranked below every current memory")
    elif memory.state != "active":
        bits.append(memory.state + (f" ({memory.state_reason})" if memory.state_reason else ""))
    age = parts["age"]
    bits.append("today" if age < 1 else f"{int(age)}d old")
    if memory.recall_count:
        bits.append(f"recalled {memory.recall_count}×")
    else:
        bits.append("never recalled")
    return "; ".join(bits)
