"""Typed memories with a lifecycle: remember, the conflict gate, recall with weathering, forget.

A memory is a row of ``memories`` and, for retrieval, a document ``memory:<id>`` of the store's
document index (full text, vectors and entity graph come with it). Its lifecycle:

    active ──superseded──▶ archived ──forget(reason)──▶ deprecated
       └──────────────forget(reason)───────────────────▲     forget(purge, confirm) removes it

**Conflict gate** (:mod:`.memory_gate`). A new memory with close neighbours (a shared entity
and similar text, or very similar text) is stored, but nothing is overwritten: the answer
carries each neighbour with the material to judge it (shared entities, similarity, time gap,
whether "latest wins" is safe) and the agent gives a verdict with :meth:`MemoryService.verdict`.
Each pair is shown once.

**Weathering** (:mod:`.memory_recall`). Recall ranks by relevance × trust × state; freshness and
use (every recall counts as one) break near-ties only, never burying a clearly more relevant
memory. Nothing is deleted.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy.exc import SQLAlchemyError
from sqlmodel import Session, col, select

from dokoro_store.clock import Clock, iso
from dokoro_store.db.engine import Database
from dokoro_store.errors import (
    ConflictError,
    DokoroError,
    EmbedderMismatchError,
    InvalidArgumentError,
    NotFoundError,
    NotOwnerError,
)
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.models.memories import MemoryConflict
from dokoro_store.ownership import known_agent, owned_by_another
from dokoro_store.results.memories import Forgotten, Memory, MemoryVerdict, RecallHit, Remembered
from dokoro_store.secrets import redact_all
from dokoro_store.services.memory_gate import ConflictGate, pair_hash, sync_entities, text_similarity
from dokoro_store.services.memory_recall import MemoryRecall
from dokoro_store.services.memory_rows import (
    DOC_PREFIX,
    DOC_TYPE,
    MEMORY_TYPES,
    STATES,
    TRUST_LEVELS,
    canonical_entities,
    memory_result,
    parse_time,
)
from dokoro_store.services.memory_status import StatusReport, UnresolvedPair, memory_status

if TYPE_CHECKING:
    from dokoro_store.retrieval.documents import DocumentService
    from dokoro_store.retrieval.search import SearchService

__all__ = [
    "MEMORY_TYPES",
    "STATES",
    "TRUST_LEVELS",
    "MemoryDraft",
    "MemoryService",
    "StatusReport",
    "UnresolvedPair",
    "text_similarity",
]

log = logging.getLogger("dokoro.store")

VERDICTS = ("supersede", "keep_both", "discard_new")


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


class MemoryService:
    """The memories of one store: their lifecycle, the conflict gate and recall."""

    def __init__(self, db: Database, clock: Clock, docs: DocumentService, search: SearchService) -> None:
        self._db = db
        self._clock = clock
        self._docs = docs
        self._gate = ConflictGate(db, clock, docs, search)
        self._recall = MemoryRecall(db, clock, search)

    # ------------------------------------------------------------------ helpers
    def get(self, memory_id: str) -> Memory:
        with self._db.read() as session:
            row = session.get(MemoryRow, memory_id.strip())
        if row is None:
            raise NotFoundError(f"no memory {memory_id!r}; find ids with dokoro_recall or dokoro_memory_status")
        return memory_result(row)

    def _save_doc(self, session: Session, memory: MemoryRow) -> None:
        """Write the memory's document in the transaction that writes the memory."""
        self._docs.save_in(session, f"{DOC_PREFIX}{memory.id}", _doc_text(memory), **_doc_fields(memory))

    def _index(self, memory: MemoryRow) -> bool:
        """Save the memory's document and index it (full text, vectors, graph); best effort."""
        self._docs.save(f"{DOC_PREFIX}{memory.id}", _doc_text(memory), **_doc_fields(memory))
        report = self._docs.index_docs([f"{DOC_PREFIX}{memory.id}"])
        return report.indexed + report.unchanged > 0

    def _index_committed(self, memories: Sequence[MemoryRow], notes: list[str]) -> bool:
        """Index documents already committed with their memories. A failure here is never the
        caller's failure: the memory is stored and found by full text at once (the database keeps
        the text index in step), and its vectors are made by the next search refresh or reindex."""
        try:
            report = self._docs.index_docs([f"{DOC_PREFIX}{m.id}" for m in memories])
        except (DokoroError, SQLAlchemyError) as exc:
            log.warning("dokoro: indexing a stored memory failed; the next reindex completes it", exc_info=True)
            notes.append(f"stored; its vectors are not made yet ({exc}); the next search_reindex completes them")
            return False
        notes.extend(report.notes)
        return report.indexed + report.unchanged >= len(memories)

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
        review_at = parse_time(review_after, "review_after")
        valid_to = parse_time(valid_until, "valid_until")
        (title_clean, body_clean, source_clean), kinds = redact_all([title, body, source])
        try:
            # Before writing: a memory whose vectors could not join the index is not stored at all.
            self._docs.check_write_stamp()
        except EmbedderMismatchError as exc:
            raise EmbedderMismatchError(f"{exc} Nothing was stored.") from None
        now = self._clock.now()
        memory = MemoryRow(
            id=f"mem_{now:%Y%m%d}_{secrets.token_hex(4)}",
            type=type,
            title=str(title_clean),
            body=str(body_clean),
            entities=canonical_entities(entities),
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
        superseded: MemoryRow | None = None
        with self._db.write() as session:
            # A retry of this very call (same agent, type, title and body, moments ago) gets the
            # memory the first call stored, not a duplicate; the lock orders concurrent retries.
            self._db.ops.lock_keys(session, "remember", [_retry_key(memory)])
            twin = _recent_twin(session, memory, now - RETRY_WINDOW)
            if twin is not None:
                return Remembered(
                    memory=memory_result(twin),
                    conflicts=[],
                    superseded=None,
                    redacted=list(kinds),
                    indexed=self._docs.is_indexed(f"{DOC_PREFIX}{twin.id}"),
                    retried=True,
                )
            if supersedes:
                old = session.get(MemoryRow, supersedes.strip(), with_for_update=True)
                if old is None:
                    raise NotFoundError(f"supersedes: no memory {supersedes!r}; nothing was stored")
                if old.state != "active":
                    raise ConflictError(
                        f"supersedes: memory {old.id} is already {old.state}"
                        + (f" (superseded by {old.superseded_by})" if old.superseded_by else "")
                        + "; supersede the current one instead. Nothing was stored."
                    )
                memory.supersedes = old.id
                self._archive(old, by=memory.id, now=now, agent=memory.agent_id)
                session.add(old)
                self._save_doc(session, old)
                superseded = old
            session.add(memory)
            session.flush()  # the memory row exists before its entity rows point at it
            sync_entities(session, [memory])
            self._save_doc(session, memory)
        # Committed: from here on nothing fails the call (the agent would retry and store it twice).
        notes: list[str] = []
        indexed = self._index_committed([memory] + ([superseded] if superseded is not None else []), notes)
        conflicts = []
        if superseded is None:
            try:
                conflicts = self._gate.check(memory)
            except (DokoroError, SQLAlchemyError) as exc:
                log.warning("dokoro: the conflict gate failed on a stored memory", exc_info=True)
                notes.append(f"stored; the conflict check could not run ({exc})")
        return Remembered(
            memory=memory_result(memory),
            conflicts=conflicts,
            superseded=memory_result(superseded) if superseded is not None else None,
            redacted=list(kinds),
            indexed=indexed,
            notes=notes,
        )

    def remember_many(self, drafts: Sequence[MemoryDraft], *, progress: Any = None) -> list[Memory]:
        """Bulk import (a backup, another memory system, a benchmark): one transaction, one index pass.

        No conflict gate runs: imported memories are trusted as given (``trust`` defaults to
        ``imported``); secrets are still redacted.
        """
        now = self._clock.now()
        rows: list[MemoryRow] = []
        for draft in drafts:
            if draft.type not in MEMORY_TYPES:
                raise InvalidArgumentError(f"type must be one of {', '.join(MEMORY_TYPES)}; got {draft.type!r}")
            (title, body), _kinds = redact_all([draft.title.strip(), draft.body.strip()])
            if not title or not body:
                raise InvalidArgumentError("every memory needs a title and a body")
            rows.append(
                MemoryRow(
                    id=f"mem_{now:%Y%m%d}_{secrets.token_hex(5)}",
                    type=draft.type,
                    title=str(title)[:300],
                    body=str(body),
                    entities=canonical_entities(draft.entities),
                    trust=draft.trust,
                    agent_id=draft.agent_id,
                    source=draft.source,
                    created_at=draft.created_at or now,
                    updated_at=draft.created_at or now,
                )
            )
        with self._db.write() as session:
            session.add_all(rows)
            session.flush()
            sync_entities(session, rows)
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
        return [memory_result(m) for m in rows]

    @staticmethod
    def _archive(old: MemoryRow, *, by: str, now: datetime, agent: str | None) -> None:
        old.state = "archived"
        old.state_changed_by = known_agent(agent)
        old.superseded_by = by
        old.state_reason = f"superseded by {by}"
        old.state_changed_at = now
        old.updated_at = now

    def verdict(self, new_id: str, old_id: str, verdict: str, agent_id: str | None = None) -> MemoryVerdict:
        """Record the agent's verdict on a pair the gate showed; ``supersede`` archives the old one,
        ``discard_new`` deprecates the new one, ``keep_both`` keeps both active."""
        if verdict not in VERDICTS:
            raise InvalidArgumentError(f"verdict must be one of {', '.join(VERDICTS)}; got {verdict!r}")
        now = self._clock.now()
        with self._db.write() as session:
            new = session.get(MemoryRow, new_id.strip(), with_for_update=True)
            old = session.get(MemoryRow, old_id.strip(), with_for_update=True)
            if new is None or old is None:
                missing = new_id if new is None else old_id
                raise NotFoundError(f"no memory {missing!r}; the ids are in dokoro_remember's answer")
            pair = session.get(MemoryConflict, pair_hash(new.id, old.id), with_for_update=True)
            if pair is None:
                pair = MemoryConflict(pair_hash=pair_hash(new.id, old.id), new_id=new.id, old_id=old.id, shown_at=now)
            if pair.verdict is not None:
                raise ConflictError(
                    f"this pair already has the verdict {pair.verdict!r} ({iso(pair.decided_at or now)}); "
                    "nothing changed"
                )
            if verdict == "supersede":
                if old.state != "active":
                    raise ConflictError(f"memory {old.id} is already {old.state}; nothing changed")
                self._archive(old, by=new.id, now=now, agent=agent_id)
                new.supersedes = old.id
                new.updated_at = now
            elif verdict == "discard_new":
                new.state = "deprecated"
                new.state_reason = f"duplicate of {old.id} (conflict gate verdict)"
                new.state_changed_at = now
                new.state_changed_by = known_agent(agent_id)
                new.updated_at = now
            pair.verdict = verdict
            pair.decided_at = now
            pair.decided_by = agent_id
            session.add_all([new, old, pair])
        self._index(new)
        self._index(old)
        return MemoryVerdict(new=memory_result(new), old=memory_result(old), verdict=verdict)

    # ------------------------------------------------------------------ forget
    def forget(
        self,
        memory_id: str,
        *,
        reason: str | None = None,
        purge: bool = False,
        confirm: bool = False,
        acting_agent: str | None = None,
    ) -> tuple[Memory, Forgotten]:
        """Deprecate a memory (a reason is required), or purge it (explicit confirmation).

        ``acting_agent`` is who calls: a known agent may purge only the memories it wrote (or that
        record no author); any agent may deprecate one, with a reason, which keeps its history
        and records who did it (:mod:`dokoro_store.ownership`). Returns the memory as it now
        stands (as it was, when purged) and what was done.
        """
        now = self._clock.now()
        if purge:
            if not confirm:
                raise InvalidArgumentError(
                    "purge deletes the memory for good; call again with confirm=true, or deprecate it "
                    "instead with a reason (history kept)"
                )
            with self._db.write() as session:
                row = session.get(MemoryRow, memory_id.strip(), with_for_update=True)
                if row is None:
                    raise NotFoundError(f"no memory {memory_id!r}")
                if owned_by_another(row.agent_id, acting_agent):
                    raise NotOwnerError(
                        f"memory {row.id} was written by {row.agent_id}; you ({acting_agent}) may not purge it. "
                        "Deprecate it instead (dokoro_forget with a reason, purge=false: history kept), "
                        f"or ask {row.agent_id} to purge it"
                    )
                for pair in session.exec(
                    select(MemoryConflict).where(
                        (col(MemoryConflict.new_id) == row.id) | (col(MemoryConflict.old_id) == row.id)
                    )
                ):
                    session.delete(pair)
                session.delete(row)
            self._docs.delete(f"{DOC_PREFIX}{row.id}")
            return memory_result(row), Forgotten(id=row.id, action="purged", state="purged")
        if not reason or not reason.strip():
            raise InvalidArgumentError(
                "reason is required to deprecate a memory (why it no longer holds); "
                "to delete it for good use purge=true with confirm=true"
            )
        with self._db.write() as session:
            row = session.get(MemoryRow, memory_id.strip(), with_for_update=True)
            if row is None:
                raise NotFoundError(f"no memory {memory_id!r}")
            if row.state == "deprecated":
                raise ConflictError(f"memory {row.id} is already deprecated: {row.state_reason}")
            row.state = "deprecated"
            row.state_reason = reason.strip()
            row.state_changed_at = now
            row.state_changed_by = known_agent(acting_agent)
            row.updated_at = now
            session.add(row)
        self._index(row)
        return memory_result(row), Forgotten(id=row.id, action="deprecated", state=row.state)

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
        """Memories for ``query``, weathered, filtered; every returned hit counts as a use
        (see :class:`~dokoro_store.services.memory_recall.MemoryRecall`)."""
        return self._recall.recall(
            query,
            limit=limit,
            types=types,
            entity=entity,
            since=since,
            until=until,
            states=states,
            count_use=count_use,
        )

    # ------------------------------------------------------------------ listing
    def of_types(
        self, types: Sequence[str], states: Sequence[str] = ("active",), *, limit: int | None = None
    ) -> list[Memory]:
        """Memories of these types and states, most recently updated first (at most ``limit``)."""
        with self._db.read() as session:
            query = (
                select(MemoryRow)
                .where(col(MemoryRow.type).in_(list(types)), col(MemoryRow.state).in_(list(states)))
                .order_by(col(MemoryRow.updated_at).desc(), col(MemoryRow.id))
            )
            if limit is not None:
                query = query.limit(limit)
            return [memory_result(row) for row in session.exec(query)]

    # ------------------------------------------------------------------ status
    def status(self) -> StatusReport:
        """An honest health report: index freshness, stale and expired memories, unresolved
        conflicts, never-recalled ones and compaction candidates."""
        return memory_status(self._db, self._clock, self._docs)


# A second identical remember by the same agent within this window is a retry, not a new memory.
RETRY_WINDOW = timedelta(minutes=10)


def _doc_text(memory: MemoryRow) -> str:
    text = f"{memory.title}\n\n{memory.body}"
    if memory.entities:
        text += "\n\nEntities: " + ", ".join(memory.entities)
    return text


def _doc_fields(memory: MemoryRow) -> dict[str, Any]:
    return {
        "title": memory.title,
        "filepath": f"memory://{memory.id}",
        "doc_type": DOC_TYPE,
        "status": memory.state,
        "metadata": {"memory_type": memory.type, "trust": memory.trust},
    }


def _retry_key(memory: MemoryRow) -> str:
    parts = [memory.agent_id or "", memory.type, memory.title, memory.body]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def _recent_twin(session: Session, memory: MemoryRow, cutoff: datetime) -> MemoryRow | None:
    """The memory an identical remember by the same agent stored since ``cutoff``, if any."""
    agent = col(MemoryRow.agent_id)
    statement = (
        select(MemoryRow)
        .where(
            col(MemoryRow.updated_at) >= cutoff,  # ix_memories_updated: only recent rows are read
            col(MemoryRow.created_at) >= cutoff,
            MemoryRow.type == memory.type,
            MemoryRow.title == memory.title,
            MemoryRow.body == memory.body,
            agent.is_(None) if memory.agent_id is None else agent == memory.agent_id,
        )
        .order_by(col(MemoryRow.created_at).desc())
        .limit(1)
    )
    return session.exec(statement).first()
