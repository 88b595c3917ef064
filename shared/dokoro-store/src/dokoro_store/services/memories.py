"""Typed memories with a lifecycle: remember, the conflict gate, recall with weathering, forget.

A memory is a row of ``memories`` and, for retrieval, a document ``memory:<id>`` of the store's
document index (full text, vectors and entity graph come with it). Its lifecycle:

    active ──superseded──▶ archived ──forget(reason)──▶ deprecated
       └──────────────forget(reason)───────────────────▲     forget(purge, confirm) removes it

**Conflict gate.** A new memory with close neighbours (a shared entity and similar text, or very
similar text) is stored, but nothing is overwritten: the answer carries each neighbour with the
material to judge it (shared entities, similarity, time gap, whether "latest wins" is safe) and
the agent gives a verdict with :meth:`MemoryService.verdict`. Each pair is shown once.

**Weathering.** Recall ranks by relevance × trust × state × (1 + freshness + heat): old memories
nobody recalls sink below fresh, used ones; nothing is deleted. Every recall counts as use.
"""

from __future__ import annotations

import hashlib
import math
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

from sqlmodel import col, select

from dokoro_store.clock import Clock, iso, parse_iso
from dokoro_store.db.engine import Database
from dokoro_store.errors import ConflictError, InvalidArgumentError, NotFoundError
from dokoro_store.models.memories import Memory, MemoryConflict
from dokoro_store.secrets import redact_all

if TYPE_CHECKING:
    from dokoro_store.retrieval.documents import DocumentService
    from dokoro_store.retrieval.search import SearchService

__all__ = [
    "MEMORY_TYPES",
    "TRUST_LEVELS",
    "ConflictMaterial",
    "MemoryDraft",
    "MemoryService",
    "RecallHit",
    "Remembered",
]

MEMORY_TYPES = ("fact", "preference", "decision", "lesson", "rule", "guardrail", "reference", "episode")
TRUST_LEVELS = ("user-stated", "agent-inferred", "imported")
STATES = ("active", "archived", "deprecated")
VERDICTS = ("supersede", "keep_both", "discard_new")
DOC_PREFIX = "memory:"
DOC_TYPE = "memory"

_TRUST_WEIGHT = {"user-stated": 1.0, "agent-inferred": 0.8, "imported": 0.7}
_TRUST_RANK = {"imported": 0, "agent-inferred": 1, "user-stated": 2}
_STATE_WEIGHT = {"active": 1.0, "archived": 0.35, "deprecated": 0.1}
# Freshness halves every 90 days; heat (use) fades with a 30-day half-life since the last recall.
FRESHNESS_HALF_LIFE_DAYS = 90.0
HEAT_HALF_LIFE_DAYS = 30.0
# "Latest wins" is only offered for kinds of memory that describe the current state of things.
_LATEST_WINS_TYPES = frozenset({"fact", "preference", "decision", "reference"})
_WORD = re.compile(r"[\w-]+", re.UNICODE)
# Neighbours: similar text with a shared entity, or very similar text alone.
SIMILAR_WITH_ENTITY = 0.25
SIMILAR_ALONE = 0.6
_CANDIDATES = 30


def _tokens(text: str) -> set[str]:
    return {w for w in (m.group(0).lower() for m in _WORD.finditer(text)) if len(w) > 2}


def text_similarity(a: str, b: str) -> float:
    """Jaccard overlap of the words (3+ letters) of two texts, 0..1."""
    left, right = _tokens(a), _tokens(b)
    if not left or not right:
        return 0.0
    return len(left & right) / len(left | right)


def _canonical_entities(entities: Sequence[str] | None) -> list[str]:
    seen: dict[str, None] = {}
    for entity in entities or []:
        cleaned = " ".join(str(entity).split()).strip().lower()
        if cleaned:
            seen.setdefault(cleaned[:200], None)
    return list(seen)


def _pair_hash(a: str, b: str) -> str:
    first, second = sorted((a, b))
    return hashlib.sha256(f"{first}|{second}".encode()).hexdigest()


def _days(delta: timedelta) -> float:
    return delta.total_seconds() / 86400


@dataclass(frozen=True)
class ConflictMaterial:
    """One close neighbour of a new memory, with what an agent needs to judge the pair."""

    memory: Memory
    shared_entities: list[str]
    similarity: float
    gap_days: float
    latest_wins_eligible: bool
    why_not_latest_wins: str | None


@dataclass(frozen=True)
class MemoryDraft:
    """One memory of a bulk import."""

    type: str
    title: str
    body: str
    entities: Sequence[str] = ()
    trust: str = "imported"
    agent_id: str | None = None
    source: str | None = None
    created_at: datetime | None = None
    # A conversation or log the memory is one entry of, and its place in it: recall lifts the
    # neighbours of a match (the search engine's thread neighbours).
    thread: str | None = None
    thread_pos: int | None = None


@dataclass(frozen=True)
class Remembered:
    memory: Memory
    conflicts: list[ConflictMaterial]
    superseded: Memory | None
    redacted: tuple[str, ...]
    indexed: bool


@dataclass(frozen=True)
class RecallHit:
    memory: Memory
    score: float
    relevance: float
    reason: str


@dataclass
class StatusReport:
    total: int
    by_state: dict[str, int]
    by_type: dict[str, int]
    index_pending: int
    stale: list[Memory] = field(default_factory=list)
    unresolved: list[MemoryConflict] = field(default_factory=list)
    never_recalled: int = 0
    compaction_candidates: list[tuple[str, list[Memory]]] = field(default_factory=list)
    expired: list[Memory] = field(default_factory=list)


class MemoryService:
    def __init__(self, db: Database, clock: Clock, docs: DocumentService, search: SearchService) -> None:
        self._db = db
        self._clock = clock
        self._docs = docs
        self._search = search

    # ------------------------------------------------------------------ helpers
    def get(self, memory_id: str) -> Memory:
        with self._db.read() as session:
            row = session.get(Memory, memory_id.strip())
        if row is None:
            raise NotFoundError(f"no memory {memory_id!r}; find ids with dokoro_recall or dokoro_memory_status")
        return row

    def _index(self, memory: Memory) -> bool:
        """Save the memory's document and index it (full text, vectors, graph); best effort."""
        text = f"{memory.title}\n\n{memory.body}"
        if memory.entities:
            text += "\n\nEntities: " + ", ".join(memory.entities)
        self._docs.save(
            f"{DOC_PREFIX}{memory.id}",
            text,
            title=memory.title,
            filepath=f"memory://{memory.id}",
            doc_type=DOC_TYPE,
            status=memory.state,
            metadata={"memory_type": memory.type, "trust": memory.trust},
        )
        report = self._docs.index_docs([f"{DOC_PREFIX}{memory.id}"])
        return report.indexed + report.unchanged > 0

    @staticmethod
    def _parse_time(value: str | None, name: str) -> datetime | None:
        if value is None or not value.strip():
            return None
        try:
            return parse_iso(value)
        except ValueError as exc:
            raise InvalidArgumentError(f"{name}: {exc}") from None

    # ------------------------------------------------------------------ remember
    def remember(
        self,
        *,
        type: str,
        title: str,
        body: str,
        entities: Sequence[str] | None = None,
        trust: str = "agent-inferred",
        agent_id: str | None = None,
        session_id: str | None = None,
        source: str | None = None,
        review_after: str | None = None,
        valid_until: str | None = None,
        supersedes: str | None = None,
    ) -> Remembered:
        if type not in MEMORY_TYPES:
            raise InvalidArgumentError(f"type must be one of {', '.join(MEMORY_TYPES)}; got {type!r}")
        if trust not in TRUST_LEVELS:
            raise InvalidArgumentError(f"trust must be one of {', '.join(TRUST_LEVELS)}; got {trust!r}")
        title, body = title.strip(), body.strip()
        if not title:
            raise InvalidArgumentError("title must not be empty: one line that names the memory")
        if not body:
            raise InvalidArgumentError("body must not be empty: the memory itself (its first paragraph is the excerpt)")
        if len(title) > 300:
            raise InvalidArgumentError("title must be one line of at most 300 characters; put the rest in body")
        review_at = self._parse_time(review_after, "review_after")
        valid_to = self._parse_time(valid_until, "valid_until")
        (title_clean, body_clean, source_clean), kinds = redact_all([title, body, source])
        now = self._clock.now()
        memory = Memory(
            id=f"mem_{now:%Y%m%d}_{secrets.token_hex(4)}",
            type=type,
            title=str(title_clean),
            body=str(body_clean),
            entities=_canonical_entities(entities),
            trust=trust,
            state="active",
            agent_id=agent_id,
            session_id=session_id,
            source=source_clean,
            created_at=now,
            updated_at=now,
            review_after=review_at,
            valid_until=valid_to,
        )
        superseded: Memory | None = None
        with self._db.write() as session:
            if supersedes:
                old = session.get(Memory, supersedes.strip(), with_for_update=True)
                if old is None:
                    raise NotFoundError(f"supersedes: no memory {supersedes!r}; nothing was stored")
                if old.state != "active":
                    raise ConflictError(
                        f"supersedes: memory {old.id} is already {old.state}"
                        + (f" (superseded by {old.superseded_by})" if old.superseded_by else "")
                        + "; supersede the current one instead. Nothing was stored."
                    )
                memory.supersedes = old.id
                self._archive(old, by=memory.id, now=now)
                session.add(old)
                superseded = old
            session.add(memory)
        indexed = self._index(memory)
        if superseded is not None:
            self._index(superseded)
        conflicts = [] if superseded is not None else self._gate(memory)
        return Remembered(memory, conflicts, superseded, kinds, indexed)

    def remember_many(self, drafts: Sequence[MemoryDraft], *, progress: Any = None) -> list[Memory]:
        """Bulk import (a backup, another memory system, a benchmark): one transaction, one index pass.

        No conflict gate runs: imported memories are trusted as given (``trust`` defaults to
        ``imported``); secrets are still redacted.
        """
        now = self._clock.now()
        rows: list[Memory] = []
        for draft in drafts:
            if draft.type not in MEMORY_TYPES:
                raise InvalidArgumentError(f"type must be one of {', '.join(MEMORY_TYPES)}; got {draft.type!r}")
            (title, body), _kinds = redact_all([draft.title.strip(), draft.body.strip()])
            if not title or not body:
                raise InvalidArgumentError("every memory needs a title and a body")
            rows.append(
                Memory(
                    id=f"mem_{now:%Y%m%d}_{secrets.token_hex(5)}",
                    type=draft.type,
                    title=str(title)[:300],
                    body=str(body),
                    entities=_canonical_entities(draft.entities),
                    trust=draft.trust,
                    agent_id=draft.agent_id,
                    source=draft.source,
                    created_at=draft.created_at or now,
                    updated_at=draft.created_at or now,
                )
            )
        with self._db.write() as session:
            session.add_all(rows)
        from dokoro_store.retrieval.documents import NewDocument

        self._docs.save_many(
            [
                NewDocument(
                    thread=draft.thread,
                    thread_pos=draft.thread_pos,
                    id=f"{DOC_PREFIX}{m.id}",
                    content=f"{m.title}\n\n{m.body}" + (f"\n\nEntities: {', '.join(m.entities)}" if m.entities else ""),
                    title=m.title,
                    filepath=f"memory://{m.id}",
                    doc_type=DOC_TYPE,
                    status="active",
                    metadata={"memory_type": m.type, "trust": m.trust},
                )
                for m, draft in zip(rows, drafts, strict=True)
            ]
        )
        self._docs.index_docs([f"{DOC_PREFIX}{m.id}" for m in rows], progress=progress)
        return rows

    @staticmethod
    def _archive(old: Memory, *, by: str, now: datetime) -> None:
        old.state = "archived"
        old.superseded_by = by
        old.state_reason = f"superseded by {by}"
        old.state_changed_at = now
        old.updated_at = now

    def _neighbours(self, memory: Memory) -> list[tuple[Memory, list[str], float]]:
        candidates: dict[str, Memory] = {}
        with self._db.read() as session:
            actives = session.exec(select(Memory).where(Memory.state == "active", Memory.id != memory.id)).all()
        mine = set(memory.entities)
        for other in actives:
            if mine & set(other.entities):
                candidates[other.id] = other
        try:
            result = self._search.universal(f"{memory.title} {memory.body}"[:2000], limit=_CANDIDATES)
        except Exception:  # the gate must never fail a remember; shared entities still work
            result = None
        if result is not None:
            by_id = {m.id: m for m in actives}
            for hit in result.hits:
                if hit.doc_id.startswith(DOC_PREFIX):
                    other_id = hit.doc_id[len(DOC_PREFIX) :]
                    if other_id in by_id:
                        candidates.setdefault(other_id, by_id[other_id])
        mine_text = f"{memory.title} {memory.body}"
        found: list[tuple[Memory, list[str], float]] = []
        for other in candidates.values():
            shared = sorted(mine & set(other.entities))
            similarity = text_similarity(mine_text, f"{other.title} {other.body}")
            if (shared and similarity >= SIMILAR_WITH_ENTITY) or similarity >= SIMILAR_ALONE:
                found.append((other, shared, similarity))
        found.sort(key=lambda item: (-item[2], item[0].id))
        return found

    def _gate(self, memory: Memory) -> list[ConflictMaterial]:
        materials: list[ConflictMaterial] = []
        now = self._clock.now()
        for other, shared, similarity in self._neighbours(memory):
            pair = _pair_hash(memory.id, other.id)
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
                ConflictMaterial(
                    other,
                    shared,
                    round(similarity, 3),
                    round(_days(memory.created_at - other.created_at), 2),
                    eligible,
                    why_not,
                )
            )
        return materials

    def verdict(self, new_id: str, old_id: str, verdict: str, agent_id: str | None = None) -> tuple[Memory, Memory]:
        """Record the agent's verdict on a pair the gate showed; ``supersede`` archives the old one,
        ``discard_new`` deprecates the new one, ``keep_both`` keeps both active."""
        if verdict not in VERDICTS:
            raise InvalidArgumentError(f"verdict must be one of {', '.join(VERDICTS)}; got {verdict!r}")
        now = self._clock.now()
        with self._db.write() as session:
            new = session.get(Memory, new_id.strip(), with_for_update=True)
            old = session.get(Memory, old_id.strip(), with_for_update=True)
            if new is None or old is None:
                missing = new_id if new is None else old_id
                raise NotFoundError(f"no memory {missing!r}; the ids are in dokoro_remember's answer")
            pair = session.get(MemoryConflict, _pair_hash(new.id, old.id), with_for_update=True)
            if pair is None:
                pair = MemoryConflict(pair_hash=_pair_hash(new.id, old.id), new_id=new.id, old_id=old.id, shown_at=now)
            if pair.verdict is not None:
                raise ConflictError(
                    f"this pair already has the verdict {pair.verdict!r} ({iso(pair.decided_at or now)}); "
                    "nothing changed"
                )
            if verdict == "supersede":
                if old.state != "active":
                    raise ConflictError(f"memory {old.id} is already {old.state}; nothing changed")
                self._archive(old, by=new.id, now=now)
                new.supersedes = old.id
                new.updated_at = now
            elif verdict == "discard_new":
                new.state = "deprecated"
                new.state_reason = f"duplicate of {old.id} (conflict gate verdict)"
                new.state_changed_at = now
                new.updated_at = now
            pair.verdict = verdict
            pair.decided_at = now
            pair.decided_by = agent_id
            session.add_all([new, old, pair])
        self._index(new)
        self._index(old)
        return new, old

    # ------------------------------------------------------------------ forget
    def forget(
        self, memory_id: str, *, reason: str | None = None, purge: bool = False, confirm: bool = False
    ) -> tuple[Memory, str]:
        """Deprecate a memory (a reason is required), or purge it (explicit confirmation)."""
        now = self._clock.now()
        if purge:
            if not confirm:
                raise InvalidArgumentError(
                    "purge deletes the memory for good; call again with confirm=true, or deprecate it "
                    "instead with a reason (history kept)"
                )
            with self._db.write() as session:
                row = session.get(Memory, memory_id.strip(), with_for_update=True)
                if row is None:
                    raise NotFoundError(f"no memory {memory_id!r}")
                for pair in session.exec(
                    select(MemoryConflict).where(
                        (col(MemoryConflict.new_id) == row.id) | (col(MemoryConflict.old_id) == row.id)
                    )
                ):
                    session.delete(pair)
                session.delete(row)
            self._docs.delete(f"{DOC_PREFIX}{row.id}")
            return row, "purged"
        if not reason or not reason.strip():
            raise InvalidArgumentError(
                "reason is required to deprecate a memory (why it no longer holds); "
                "to delete it for good use purge=true with confirm=true"
            )
        with self._db.write() as session:
            row = session.get(Memory, memory_id.strip(), with_for_update=True)
            if row is None:
                raise NotFoundError(f"no memory {memory_id!r}")
            if row.state == "deprecated":
                raise ConflictError(f"memory {row.id} is already deprecated: {row.state_reason}")
            row.state = "deprecated"
            row.state_reason = reason.strip()
            row.state_changed_at = now
            row.updated_at = now
            session.add(row)
        self._index(row)
        return row, "deprecated"

    # ------------------------------------------------------------------ recall
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
    ) -> list[RecallHit]:
        """Memories for ``query``, weathered, filtered; every returned hit counts as a use."""
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
        start = self._parse_time(since, "since")
        end = self._parse_time(until, "until")
        wanted_entity = _canonical_entities([entity])[0] if entity and entity.strip() else None
        result = self._search.universal(query, limit=100)
        ranked: list[tuple[str, float, Any]] = []
        for hit in result.hits:
            if hit.doc_type == DOC_TYPE and hit.doc_id.startswith(DOC_PREFIX):
                ranked.append((hit.doc_id[len(DOC_PREFIX) :], hit.score, hit))
        if not ranked:
            return []
        with self._db.read() as session:
            rows = {m.id: m for m in session.exec(select(Memory).where(col(Memory.id).in_([r[0] for r in ranked])))}
        now = self._clock.now()
        top = max(score for _id, score, _hit in ranked)
        hits: list[RecallHit] = []
        for memory_id, fused, hit in ranked:
            memory = rows.get(memory_id)
            if memory is None or memory.state not in states:
                continue
            if types and memory.type not in types:
                continue
            if wanted_entity and wanted_entity not in memory.entities:
                continue
            if start and memory.created_at < start:
                continue
            if end and memory.created_at > end:
                continue
            relevance = fused / top if top else 0.0
            score, parts = self._weather(memory, relevance, now)
            hits.append(RecallHit(memory, score, relevance, _reason(hit, memory, parts)))
        hits.sort(key=lambda h: (-h.score, h.memory.id))
        hits = hits[:limit]
        if count_use and hits:
            with self._db.write() as session:
                for recalled in hits:
                    row = session.get(Memory, recalled.memory.id, with_for_update=True)
                    if row is not None:
                        row.recall_count += 1
                        row.last_recalled_at = now
                        session.add(row)
        return hits

    @staticmethod
    def _weather(memory: Memory, relevance: float, now: datetime) -> tuple[float, dict[str, float]]:
        age = max(0.0, _days(now - memory.updated_at))
        freshness = 0.5 ** (age / FRESHNESS_HALF_LIFE_DAYS)
        heat = 0.0
        if memory.recall_count and memory.last_recalled_at is not None:
            since_use = max(0.0, _days(now - memory.last_recalled_at))
            heat = min(1.0, math.log1p(memory.recall_count) / math.log(11)) * 0.5 ** (since_use / HEAT_HALF_LIFE_DAYS)
        trust = _TRUST_WEIGHT.get(memory.trust, 0.7)
        state = _STATE_WEIGHT.get(memory.state, 0.1)
        score = relevance * trust * state * (1 + freshness + heat)
        return score, {"age": age, "freshness": freshness, "heat": heat}

    # ------------------------------------------------------------------ listing
    def of_types(self, types: Sequence[str], states: Sequence[str] = ("active",)) -> list[Memory]:
        with self._db.read() as session:
            return list(
                session.exec(
                    select(Memory)
                    .where(col(Memory.type).in_(list(types)), col(Memory.state).in_(list(states)))
                    .order_by(col(Memory.updated_at).desc(), col(Memory.id))
                )
            )

    # ------------------------------------------------------------------ status
    def status(self) -> StatusReport:
        now = self._clock.now()
        with self._db.read() as session:
            rows = list(session.exec(select(Memory)))
            pairs = list(session.exec(select(MemoryConflict).where(col(MemoryConflict.verdict).is_(None))))
        by_state: dict[str, int] = {}
        by_type: dict[str, int] = {}
        for row in rows:
            by_state[row.state] = by_state.get(row.state, 0) + 1
            by_type[row.type] = by_type.get(row.type, 0) + 1
        active = {row.id: row for row in rows if row.state == "active"}
        report = StatusReport(
            total=len(rows),
            by_state=by_state,
            by_type=by_type,
            index_pending=sum(1 for doc_id in self._docs.pending() if doc_id.startswith(DOC_PREFIX)),
        )
        report.stale = sorted(
            (m for m in active.values() if m.review_after is not None and m.review_after <= now),
            key=lambda m: m.review_after or now,
        )
        report.expired = [m for m in active.values() if m.valid_until is not None and m.valid_until <= now]
        report.unresolved = [p for p in pairs if p.new_id in active and p.old_id in active]
        report.never_recalled = sum(1 for m in active.values() if m.recall_count == 0)
        # Compaction candidates: aging, unused episodes that share an entity could become one memory.
        aging = [
            m
            for m in active.values()
            if m.type == "episode"
            and _days(now - m.created_at) >= 30
            and (m.last_recalled_at is None or _days(now - m.last_recalled_at) >= 30)
        ]
        groups: dict[str, list[Memory]] = {}
        for memory in aging:
            for entity in memory.entities or ["(no entity)"]:
                groups.setdefault(entity, []).append(memory)
        report.compaction_candidates = sorted(
            ((entity, items) for entity, items in groups.items() if len(items) >= 2),
            key=lambda item: (-len(item[1]), item[0]),
        )
        return report


def _latest_wins(new: Memory, old: Memory) -> tuple[bool, str | None]:
    if new.type != old.type:
        return False, f"different kinds ({old.type} vs {new.type}): both may hold"
    if new.type not in _LATEST_WINS_TYPES:
        return False, f"a {new.type} is not replaced by recency; decide explicitly"
    if _TRUST_RANK[new.trust] < _TRUST_RANK[old.trust]:
        return False, f"the new memory is {new.trust}, the old one {old.trust}"
    return True, None


def _reason(hit: Any, memory: Memory, parts: dict[str, float]) -> str:
    bits = [hit.why] if getattr(hit, "why", "") else []
    bits.append(memory.trust)
    if memory.state != "active":
        bits.append(memory.state + (f" ({memory.state_reason})" if memory.state_reason else ""))
    age = parts["age"]
    bits.append("today" if age < 1 else f"{int(age)}d old")
    if memory.recall_count:
        bits.append(f"recalled {memory.recall_count}×")
    else:
        bits.append("never recalled")
    return "; ".join(bits)


Verdict = Literal["supersede", "keep_both", "discard_new"]
