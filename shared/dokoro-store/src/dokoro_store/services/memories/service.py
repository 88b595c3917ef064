"""Typed memories with a lifecycle: remember, the conflict gate, recall with weathering, forget.

A memory is a row of ``memories`` and, for retrieval, a document ``memory:<id>`` of the store's
document index (full text, vectors and entity graph come with it). Its lifecycle:

    active ──superseded──▶ archived ──forget(reason)──▶ deprecated
       └──────────────forget(reason)───────────────────▲     forget(purge, confirm) removes it

**Conflict gate** (:mod:`.gate`). A new memory with close neighbours (a shared entity
and similar text, or very similar text) is stored, but nothing is overwritten: the answer
carries each neighbour with the material to judge it (shared entities, similarity, time gap,
whether "latest wins" is safe) and the agent gives a verdict with :meth:`MemoryService.verdict`.
Each pair is shown once.

**Weathering** (:mod:`.recall`). Recall ranks by relevance × trust × state; freshness and
use (every recall counts as one) break near-ties only, never burying a clearly more relevant
memory. Nothing is deleted.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import bindparam, insert
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm.attributes import set_committed_value
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
    OutsideStoreError,
)
from dokoro_store.models.docs import Doc
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.models.memories import MemoryConflict
from dokoro_store.ownership import owned_by_another
from dokoro_store.results.memories import (
    CloseMemory,
    FileProblem,
    FilesSync,
    Forgotten,
    Memory,
    MemoryVerdict,
    Recall,
    RecallHit,
    Remembered,
)
from dokoro_store.results.memory_files import MemoryReindex, Reviewed
from dokoro_store.retrieval.threads import clean_thread, place_in_thread
from dokoro_store.secrets import redact, redact_all
from dokoro_store.services.memories import repository
from dokoro_store.services.memories.files import DEFAULT_RENDER_BATCH, DEFAULT_SWEEP, LOCK_WAIT, MemoryFiles
from dokoro_store.services.memories.gate import ConflictGate, pair_hash, text_similarity
from dokoro_store.services.memories.recall import MemoryRecall
from dokoro_store.services.memories.review import PROPOSED, MemoryReview, initial_state
from dokoro_store.services.memories.rows import (
    DOC_PREFIX,
    DOC_TYPE,
    MEMORY_TYPES,
    STATES,
    TRUST_LEVELS,
    canonical_entities,
    doc_text,
    memory_result,
    parse_time,
)
from dokoro_store.services.memories.status import StatusReport, UnresolvedPair, memory_status

if TYPE_CHECKING:
    from pathlib import Path

    from sqlmodel.sql.expression import SelectOfScalar

    from dokoro_store.paths import StorePaths
    from dokoro_store.retrieval.documents import DocumentService, PreparedIndex, Progress
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

    def __init__(
        self,
        db: Database,
        clock: Clock,
        docs: DocumentService,
        search: SearchService,
        *,
        paths: StorePaths | None = None,
        review: bool = False,
        sweep: int = DEFAULT_SWEEP,
        render_batch: int = DEFAULT_RENDER_BATCH,
    ) -> None:
        """``paths``: the workspace folder, whose ``memories/`` holds the memories as markdown files
        (:mod:`.files`; none without it). ``review``: agents' inferences wait for a person
        (:mod:`.review`). ``sweep``: files stat-ed per call for in-place edits;
        ``render_batch``: rows changed elsewhere rendered per call at most."""
        self._db = db
        self._clock = clock
        self._docs = docs
        self._review = review
        self._gate = ConflictGate(db, clock, docs, search)
        self._files = (
            MemoryFiles(paths, db, clock, gate=self._gate, index=self._index, sweep=sweep, render_batch=render_batch)
            if paths
            else None
        )
        self._recall = MemoryRecall(
            db,
            clock,
            search,
            entities=self._entities,
            expand=self._files.dictionary.expand if self._files else str,
            aliases=self._files.dictionary.synonyms_of if self._files else lambda _name: [],
        )
        self.review = MemoryReview(db, clock, self._index)

    # ------------------------------------------------------------------ files (hooks)
    def _sync(self) -> FilesSync | None:
        """Pick up what a person changed in the memory files (and render rows changed elsewhere):
        a bounded share of the work, waiting at most a second for another process's reconcile. The
        files are a person's: what goes wrong with them is reported, never the call's failure."""
        if self._files is None:
            return None
        try:
            return self._files.sync(sweep=False, wait=LOCK_WAIT)
        except (OSError, OutsideStoreError) as exc:
            log.warning("dokoro: the memory files could not be reconciled", exc_info=True)
            return FilesSync(note=f"the memory files could not be reconciled now ({redact(str(exc)).text})")

    def _rendered(self, *memory_ids: str | None) -> None:
        """Render the memories a write just changed (left to a later call when the folder is busy)."""
        if self._files is not None:
            try:
                self._files.sync(render=[i for i in memory_ids if i], scan=False, wait=LOCK_WAIT)
            except (OSError, OutsideStoreError):
                log.warning("dokoro: a memory's file could not be written now", exc_info=True)

    def _entities(self, entities: Sequence[str] | None) -> list[str]:
        """Entities as stored: cleaned, each under its name in ``memories/dictionary.md``."""
        return self._files.dictionary.canonical(entities) if self._files is not None else canonical_entities(entities)

    # ------------------------------------------------------------------ helpers
    def get(self, memory_id: str) -> Memory:
        self._sync()
        with self._db.read() as session:
            row = session.get(MemoryRow, memory_id.strip())
        if row is None:
            raise NotFoundError(f"no memory {memory_id!r}; find ids with dokoro_recall or dokoro_memory_status")
        return memory_result(row)

    def _save_doc(self, session: Session, memory: MemoryRow) -> None:
        """Write the memory's document in the transaction that writes the memory."""
        self._docs.save_in(session, f"{DOC_PREFIX}{memory.id}", doc_text(memory), **_doc_fields(memory))

    def _index(self, memory: MemoryRow) -> bool:
        """Save the memory's document and index it (full text, vectors, graph); best effort."""
        self._docs.save(f"{DOC_PREFIX}{memory.id}", doc_text(memory), **_doc_fields(memory))
        report = self._docs.index_docs([f"{DOC_PREFIX}{memory.id}"])
        return report.indexed + report.unchanged > 0

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
        files = self._sync()
        (title_clean, body_clean, source_clean), kinds = redact_all([title, body, source])
        now = self._clock.now()
        memory = MemoryRow(
            id=repository.new_id(now),
            type=type,
            title=str(title_clean),
            body=str(body_clean),
            entities=self._entities(entities),
            trust=trust,
            state=initial_state(review=self._review),
            agent_id=agent_id,
            session_id=session_id,
            source=source_clean,
            created_at=now,
            updated_at=now,
            review_after=review_at,
            valid_until=valid_to,
        )
        try:
            # Before writing: a memory whose vectors could not join the index is not stored at all.
            # Its document is chunked and embedded here, outside the write lock, and written with
            # the memory in one transaction: stored and indexed, or nothing stored.
            prepared = self._docs.prepare_new(
                f"{DOC_PREFIX}{memory.id}",
                doc_text(memory),
                title=memory.title,
                filepath=f"memory://{memory.id}",
                doc_type=DOC_TYPE,
            )
        except EmbedderMismatchError as exc:
            raise EmbedderMismatchError(f"{exc} Nothing was stored.") from None
        superseded: MemoryRow | None = None
        try:
            with self._db.write() as session:
                twin, superseded, committed = self._write_new(session, memory, prepared, supersedes, now)
                # The gate in the same transaction: its pairs are written to the ledger with the
                # memory, and it runs before the answer, as always.
                conflicts, gate_failed = (
                    self._gate_new(session, memory, prepared)
                    if twin is None and memory.supersedes is None
                    else ([], None)
                )
        except EmbedderMismatchError as exc:  # another process stamped the index meanwhile
            raise EmbedderMismatchError(f"{exc} Nothing was stored.") from None
        if twin is not None:
            return Remembered(
                memory=memory_result(twin),
                conflicts=[],
                superseded=None,
                redacted=list(kinds),
                indexed=self._docs.is_indexed(f"{DOC_PREFIX}{twin.id}"),
                retried=True,
            )
        # Committed: from here on nothing fails the call (the agent would retry and store it twice).
        notes: list[str] = list(prepared.report.notes)
        if memory.state == PROPOSED and trust != "agent-inferred":
            notes.append(
                f"trust {trust!r} does not skip the review queue: a person approves it "
                "(`dokoro memory approve`, `dokoro browse`)"
            )
        if gate_failed is not None:
            notes.append(f"stored; the conflict check could not run ({gate_failed})")
        try:
            committed()
        except (DokoroError, SQLAlchemyError, OSError):
            log.warning("dokoro: a stored memory's vector engine copy or listeners failed", exc_info=True)
        indexed = prepared.report.indexed > 0
        try:
            if self._files is not None:
                self._files.render_written([memory] + ([superseded] if superseded is not None else []))
        except (OSError, OutsideStoreError) as exc:
            log.warning("dokoro: a stored memory's file could not be written", exc_info=True)
            notes.append(f"stored; its file could not be written now ({exc}); the next call retries")
        return Remembered(
            memory=memory_result(memory),
            conflicts=conflicts,
            superseded=memory_result(superseded) if superseded is not None else None,
            redacted=list(kinds),
            indexed=indexed,
            files=files if files is not None and not files.quiet else None,
            notes=notes,
        )

    def _gate_new(
        self, session: Session, memory: MemoryRow, prepared: PreparedIndex
    ) -> tuple[list[CloseMemory], str | None]:
        """The conflict gate on a memory being written in ``session``; a failure of its reads is
        noted, never the caller's failure."""
        try:
            return self._gate.check_new(session, memory, prepared.mean_vector()), None
        except (DokoroError, SQLAlchemyError) as exc:
            log.warning("dokoro: the conflict gate failed on a memory being stored", exc_info=True)
            return [], str(exc)

    def _write_new(
        self, session: Session, memory: MemoryRow, prepared: PreparedIndex, supersedes: str | None, now: datetime
    ) -> tuple[MemoryRow | None, MemoryRow | None, Callable[[], None]]:
        """Inside remember's write transaction: the retry's twin if any (nothing written), else the
        memory, its entities, its document with its chunks, vectors and index state, and the memory
        it supersedes archived. Returns (twin, superseded, the step to run once committed)."""
        # A retry of this very call (same agent, type, title and body, moments ago) gets the
        # memory the first call stored, not a duplicate; the lock orders concurrent retries.
        self._db.ops.lock_keys(session, "remember", [_retry_key(memory)])
        twin = _recent_twin(session, memory, now - RETRY_WINDOW)
        if twin is not None:
            return twin, None, _nothing
        superseded: MemoryRow | None = None
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
            if memory.state != PROPOSED:  # a proposal supersedes only once approved
                repository.supersede(session, old, by=memory.id, now=now, agent=memory.agent_id)
                # Its text is unchanged: only its document's state moves (its index stays current).
                self._save_doc(session, old)
                superseded = old
        session.flush()  # the superseded row's change is written before the new row's
        # The new rows in plain inserts (no ORM unit of work): the memory and its entities, its document.
        repository.create(session, memory)
        # The memories of one session are a thread, in the order remembered: search lifts the
        # memory beside a match, as it does for a conversation's turns (retrieval.threads).
        thread = clean_thread(memory.session_id)
        place = place_in_thread(session, self._db.ops, f"{DOC_PREFIX}{memory.id}", thread, None) if thread else None
        doc = Doc(
            id=f"{DOC_PREFIX}{memory.id}",
            content=prepared.text,
            content_hash=prepared.digest,
            title=memory.title,
            filepath=f"memory://{memory.id}",
            doc_type=DOC_TYPE,
            status=memory.state,
            metadata_json={"memory_type": memory.type, "trust": memory.trust},
            created_at=now,
            updated_at=now,
            thread=thread,
            thread_pos=place,
        )
        session.execute(insert(_DOCS), [repository.column_values(_DOCS, doc)])
        # The change numbers the triggers gave these rows: their files are rendered only if no
        # other write moved them since (MemoryFiles.render_written).
        written = [memory] + ([superseded] if superseded is not None else [])
        revs = dict(
            session.execute(
                select(_MEMORIES.c.id, _MEMORIES.c.rev).where(_MEMORIES.c.id.in_([r.id for r in written]))
            ).all()
        )
        for row in written:
            set_committed_value(row, "rev", int(revs[row.id]))  # no change for the session to write
        return None, superseded, self._docs.write_prepared_in(session, prepared)

    def remember_many(self, drafts: Sequence[MemoryDraft], *, progress: Any = None) -> list[Memory]:
        """Bulk import (a backup, another memory system, a benchmark): one transaction, one index pass.

        No conflict gate runs: imported memories are trusted as given (``trust`` defaults to
        ``imported``); secrets are still redacted.
        """
        self._sync()
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
                    id=repository.new_id(now),
                    type=draft.type,
                    title=str(title)[:300],
                    body=str(body),
                    entities=self._entities(draft.entities),
                    trust=draft.trust,
                    agent_id=draft.agent_id,
                    source=draft.source,
                    created_at=draft.created_at or now,
                    updated_at=draft.created_at or now,
                )
            )
        with self._db.write() as session:
            repository.create_many(session, rows)
        self._index_many(rows, threads=[(d.thread, d.thread_pos) for d in drafts], progress=progress)
        if len(rows) >= _BULK_STATISTICS:
            self._db.refresh_statistics("memories", "memory_entities")
        # Their files come with this and the next calls (at most a batch per call), not all at once.
        self._rendered()
        return [memory_result(m) for m in rows]

    def _index_many(
        self,
        rows: Sequence[MemoryRow],
        *,
        threads: Sequence[tuple[str | None, int | None]] | None = None,
        force: bool = False,
        progress: Progress | None = None,
    ) -> int:
        """Save the memories' documents in one go and index them (one pass); the number indexed.

        ``threads``: each row's conversation and place in it (a bulk import); without it, a
        document keeps the thread it has. Each document's status follows its memory's state.
        """
        from sqlalchemy import update

        from dokoro_store.models.docs import Doc
        from dokoro_store.retrieval.documents import NewDocument

        doc_ids = [f"{DOC_PREFIX}{m.id}" for m in rows]
        if threads is None:
            kept: dict[str, tuple[str | None, int | None]] = {}
            with self._db.read() as session:
                for start in range(0, len(doc_ids), 500):
                    batch = doc_ids[start : start + 500]
                    for doc_id, thread, pos in session.exec(
                        select(Doc.id, Doc.thread, Doc.thread_pos).where(col(Doc.id).in_(batch))
                    ):
                        kept[doc_id] = (thread, pos)
            threads = [kept.get(doc_id, (None, None)) for doc_id in doc_ids]
        self._docs.save_many(
            [
                NewDocument(
                    thread=thread,
                    thread_pos=thread_pos,
                    id=doc_id,
                    content=f"{m.title}\n\n{m.body}" + (f"\n\nEntities: {', '.join(m.entities)}" if m.entities else ""),
                    title=m.title,
                    filepath=f"memory://{m.id}",
                    doc_type=DOC_TYPE,
                    status=m.state,
                    metadata={"memory_type": m.type, "trust": m.trust},
                )
                for m, doc_id, (thread, thread_pos) in zip(rows, doc_ids, threads, strict=True)
            ]
        )
        # save_many leaves an existing document's status as it was: a reindex may have changed states.
        by_state: dict[str, list[str]] = {}
        for m, doc_id in zip(rows, doc_ids, strict=True):
            by_state.setdefault(m.state, []).append(doc_id)
        with self._db.write() as session:
            for state, ids in by_state.items():
                for start in range(0, len(ids), 500):
                    session.execute(
                        update(Doc)
                        .where(col(Doc.id).in_(ids[start : start + 500]), col(Doc.status) != state)
                        .values(status=state)
                    )
        report = self._docs.index_docs(doc_ids, force=force, progress=progress)
        return report.indexed

    def verdict(self, new_id: str, old_id: str, verdict: str, agent_id: str | None = None) -> MemoryVerdict:
        """Record the agent's verdict on a pair the gate showed; ``supersede`` archives the old one
        (once approved, when the new one is a proposal under review), ``discard_new`` deprecates
        the new one, ``keep_both`` keeps both active.

        Accepted from ``agent_id`` for a pair the gate proposed to it (it remembered the new one),
        or for memories it may change (its own, or ones that record no author): one agent's
        verdict never archives another's memory the gate did not put before it."""
        if verdict not in VERDICTS:
            raise InvalidArgumentError(f"verdict must be one of {', '.join(VERDICTS)}; got {verdict!r}")
        self._sync()
        now = self._clock.now()
        with self._db.write() as session:
            new = session.get(MemoryRow, new_id.strip(), with_for_update=True)
            old = session.get(MemoryRow, old_id.strip(), with_for_update=True)
            if new is None or old is None:
                missing = new_id if new is None else old_id
                raise NotFoundError(f"no memory {missing!r}; the ids are in dokoro_remember's answer")
            pair = session.get(MemoryConflict, pair_hash(new.id, old.id), with_for_update=True)
            _check_verdict_allowed(new, old, verdict, shown=pair is not None, agent=agent_id)
            if pair is not None and pair.verdict is not None:
                raise ConflictError(
                    f"this pair already has the verdict {pair.verdict!r} ({iso(pair.decided_at or now)}); "
                    "nothing changed"
                )
            if verdict == "supersede":
                if old.state != "active":
                    raise ConflictError(f"memory {old.id} is already {old.state}; nothing changed")
                if new.state != PROPOSED:  # a proposal supersedes only once a person approves it
                    repository.supersede(session, old, by=new.id, now=now, agent=agent_id)
                repository.rewrite(session, new, {"supersedes": old.id, "updated_at": now})
            elif verdict == "discard_new":
                reason = f"duplicate of {old.id} (conflict gate verdict)"
                repository.set_state(session, new, "deprecated", reason=reason, now=now, agent=agent_id)
            repository.record_verdict(session, pair, verdict, new_id=new.id, old_id=old.id, now=now, by=agent_id)
        self._index(new)
        self._index(old)
        self._rendered(new.id, old.id)
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
        self._sync()
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
                repository.purge(session, row)
            self._docs.delete(f"{DOC_PREFIX}{row.id}")
            if self._files is not None:
                self._files.remove(row.id)
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
            repository.set_state(session, row, "deprecated", reason=reason.strip(), now=now, agent=acting_agent)
        self._index(row)
        self._rendered(row.id)
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
        (see :class:`~dokoro_store.services.memories.recall.MemoryRecall`)."""
        return self.recall_answer(
            query, limit=limit, types=types, entity=entity, since=since, until=until, states=states, count_use=count_use
        ).hits

    def recall_answer(
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
    ) -> Recall:
        """:meth:`recall` in one pass, with what the reconcile of the memory files before it
        picked up (a person's edits), as ``dokoro_recall`` answers."""
        files = self._sync()
        hits = self._recall.recall(
            query,
            limit=limit,
            types=types,
            entity=entity,
            since=since,
            until=until,
            states=states,
            count_use=count_use,
        )
        return Recall(hits=hits, files=None if files is None or files.quiet else files)

    # ------------------------------------------------------------------ listing
    def of_types(
        self,
        types: Sequence[str],
        states: Sequence[str] = ("active",),
        *,
        limit: int | None = None,
        reconcile: bool = True,
    ) -> list[Memory]:
        """Memories of these types and states, most recently updated first (at most ``limit``).
        ``reconcile=False``: as the rows stand, the memory files not looked at (a read-only call)."""
        if reconcile:
            self._sync()
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
    def status(self, *, reconcile: bool = True) -> StatusReport:
        """An honest health report: index freshness, stale and expired memories, unresolved
        conflicts, never-recalled ones and compaction candidates. ``reconcile=False``: the caller
        has just reconciled the memory files (:meth:`sync_files`)."""
        if reconcile:
            self._sync()
        report = memory_status(self._db, self._clock, self._docs)
        if self._files is not None:
            report.files_check = self._files.check(report.total)
        return report

    # ------------------------------------------------------------------ review queue
    def pending_review(self) -> list[Memory]:
        """Proposed memories waiting for a person (see :mod:`.review`)."""
        self._sync()
        return self.review.pending()

    def approve(self, memory_id: str, *, by: str | None = None) -> Reviewed:
        """A person approves a proposed memory: it becomes active (and supersedes what it names)."""
        self._sync()
        done = self.review.approve(memory_id, by=by)
        self._rendered(done.memory.id, done.superseded.id if done.superseded else None)
        return done

    def reject(self, memory_id: str, *, reason: str | None = None, by: str | None = None) -> Reviewed:
        """A person rejects a proposed memory: it is deprecated, with the reason."""
        self._sync()
        done = self.review.reject(memory_id, reason=reason, by=by)
        self._rendered(done.memory.id)
        return done

    # ------------------------------------------------------------------ files
    def sync_files(self, *, sweep: bool = True) -> FilesSync:
        """Reconcile the memory files now and say what a person changed (every memory call does it).
        ``sweep=False``: as every memory call's own reconcile (the rolling sweep's share of its rate,
        a bounded number of files, a second's wait for another process at most), not a whole window."""
        if not sweep:
            return self._sync() or FilesSync()
        return self._files.sync(sweep=sweep) if self._files is not None else FilesSync()

    def close(self) -> None:
        """Let go of the memory files' manifest (the store is closing)."""
        if self._files is not None:
            self._files.close()

    def file_problems(self) -> list[FileProblem]:
        """Files under ``memories/`` that hold no memory right now (unreadable, or copies), and why."""
        return self._files.problems() if self._files is not None else []

    def file_of(self, memory_id: str) -> Path:
        """The markdown file of a memory (written when missing), e.g. to open it in an editor."""
        if self._files is None:
            raise InvalidArgumentError("this store has no workspace folder, so its memories have no files")
        return self._files.file_of(memory_id.strip())

    def reindex_from_files(self, *, full: bool = False, progress: Progress | None = None) -> MemoryReindex:
        """Rebuild the memories' rows and index from their files (``dokoro memory reindex``): each
        file's row says what the file says; ``full`` re-embeds every memory, not only changed ones."""
        if self._files is None:
            raise InvalidArgumentError("this store has no workspace folder, so its memories have no files")
        report, ids = self._files.reindex(progress=progress)
        rows: list[MemoryRow] = []
        with self._db.read() as session:
            for start in range(0, len(ids), 500):
                rows += session.exec(select(MemoryRow).where(col(MemoryRow.id).in_(ids[start : start + 500])))
        indexed = self._index_many(rows, force=full, progress=progress) if rows else 0
        return report.model_copy(update={"indexed": indexed})


# A second identical remember by the same agent within this window is a retry, not a new memory.
RETRY_WINDOW = timedelta(minutes=10)
# A bulk import of at least this many memories refreshes the planner's statistics (PostgreSQL).
_BULK_STATISTICS = 1_000


def _nothing() -> None:
    return None


def _check_verdict_allowed(new: MemoryRow, old: MemoryRow, verdict: str, *, shown: bool, agent: str | None) -> None:
    """Refuse (:class:`NotOwnerError`, nothing changed) a verdict ``agent`` may not give: the pair
    was not proposed to it by the gate (it did not remember the new one, or the gate never paired
    them) and the verdict changes a memory another agent wrote."""
    if shown and not owned_by_another(new.agent_id, agent):
        return  # the gate put this pair before the agent that remembered the new one
    touched = [new] if verdict == "discard_new" else [new, old]
    foreign = next((m for m in touched if owned_by_another(m.agent_id, agent)), None)
    if foreign is None:
        return
    why = "the conflict gate did not propose this pair to you" if not shown else f"{new.id} is {new.agent_id}'s memory"
    raise NotOwnerError(
        f"verdict refused ({why}): memory {foreign.id} was written by {foreign.agent_id}, and you ({agent}) may "
        "give a verdict only on a pair the gate showed you in your own dokoro_remember answer, or on memories "
        f"you wrote. Nothing changed. To retire {foreign.id}, deprecate it with dokoro_forget and a reason "
        f"(history kept), or ask {foreign.agent_id}"
    )


_MEMORIES = MemoryRow.__table__  # type: ignore[attr-defined]
_DOCS = Doc.__table__  # type: ignore[attr-defined]


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


def _twin_query(by_agent: bool) -> SelectOfScalar[MemoryRow]:
    """Remember's retry check, built once: the memory with this type, title and body written by
    this agent (or by none) since the cutoff, the newest. Found through the index on ``title``
    (migration 0025), never by reading every memory written in the window."""
    agent = col(MemoryRow.agent_id)
    return (
        select(MemoryRow)
        .where(
            col(MemoryRow.title) == bindparam("twin_title"),
            col(MemoryRow.body) == bindparam("twin_body"),
            col(MemoryRow.type) == bindparam("twin_type"),
            col(MemoryRow.created_at) >= bindparam("twin_cutoff"),
            agent == bindparam("twin_agent") if by_agent else agent.is_(None),
        )
        .order_by(col(MemoryRow.created_at).desc())
        .limit(1)
    )


_TWIN = {by_agent: _twin_query(by_agent) for by_agent in (False, True)}


def _recent_twin(session: Session, memory: MemoryRow, cutoff: datetime) -> MemoryRow | None:
    """The memory an identical remember by the same agent stored since ``cutoff``, if any."""
    values = {"twin_title": memory.title, "twin_body": memory.body, "twin_type": memory.type, "twin_cutoff": cutoff}
    if memory.agent_id is not None:
        values["twin_agent"] = memory.agent_id
    return session.exec(_TWIN[memory.agent_id is not None], params=values).first()
