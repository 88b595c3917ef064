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
use (a close match shown by a recall counts as one) break near-ties only, never burying a clearly
more relevant memory. Nothing is deleted.

The service is the wing's front: its parts are :mod:`.remember` (the route of a remember),
:mod:`.bulk` (an import's drafts), :mod:`.verdicts` (verdicts on the gate's pairs) and
:mod:`.docs` (a memory's document in the store's index).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlmodel import col, select

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.errors import (
    ConflictError,
    InvalidArgumentError,
    NotFoundError,
    OutsideStoreError,
)
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.results.memories import (
    FileProblem,
    FilesSync,
    Forgotten,
    Memory,
    MemoryVerdict,
    Recall,
    RecallHit,
    Remembered,
)
from dokoro_store.results.memory_files import MemoryReindex, MemoryRepair, Reviewed
from dokoro_store.semantic.memories import repository
from dokoro_store.semantic.memories.bulk import MemoryDraft, draft_rows
from dokoro_store.semantic.memories.docs import index_many, index_one
from dokoro_store.semantic.memories.files.look import unread_line
from dokoro_store.semantic.memories.files.sync import DEFAULT_RENDER_BATCH, DEFAULT_SWEEP, LOCK_WAIT, MemoryFiles
from dokoro_store.semantic.memories.gate import ConflictGate, text_similarity
from dokoro_store.semantic.memories.owners import refuse_foreign
from dokoro_store.semantic.memories.recall import MemoryRecall
from dokoro_store.semantic.memories.remember import Remember
from dokoro_store.semantic.memories.remember import twin_query as _twin_query  # noqa: F401  (its old name, for tests)
from dokoro_store.semantic.memories.review import MemoryReview
from dokoro_store.semantic.memories.rows import (
    DOC_PREFIX,
    MEMORY_TYPES,
    STATES,
    TRUST_LEVELS,
    canonical_entities,
    memory_result,
)
from dokoro_store.semantic.memories.staleness import dependents
from dokoro_store.semantic.memories.status import StatusReport, UnresolvedPair, memory_status
from dokoro_store.semantic.memories.verdicts import check_verdict, give_verdict
from dokoro_store.walls.secrets import redact

if TYPE_CHECKING:
    from pathlib import Path

    from dokoro_store.paths import StorePaths
    from dokoro_store.semantic.documents.service import DocumentService, Progress
    from dokoro_store.semantic.search.service import SearchService

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
        actor: str | None = None,
    ) -> None:
        """``paths``: the workspace folder, whose ``memories/`` holds the memories as markdown files
        (:mod:`.files`; none without it). ``review``: agents' inferences wait for a person
        (:mod:`.review`). ``sweep``: files stat-ed per call for in-place edits;
        ``render_batch``: rows changed elsewhere rendered per call at most. ``actor``: who this
        process acts for (its agent; None: a person), whose rights a change in the files is made
        with (:mod:`.files.authority`)."""
        self._db = db
        self._clock = clock
        self._docs = docs
        self._review = review
        self._actor = actor
        self._gate = ConflictGate(db, clock, docs, search)
        self._files = (
            MemoryFiles(
                paths,
                db,
                clock,
                gate=self._gate,
                index=self._index,
                sweep=sweep,
                render_batch=render_batch,
                actor=actor,
            )
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
        self._remember = Remember(
            db,
            clock,
            docs,
            self._gate,
            files=self._files,
            review=review,
            sync=self._sync,
            entities=self._entities,
        )

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

    def _index(self, memory: MemoryRow) -> bool:
        """Save the memory's document and index it (full text, vectors, graph); best effort."""
        return index_one(self._docs, memory)

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
        depends_on: Sequence[str] | None = None,
    ) -> Remembered:
        """Remember one memory, in one pass (:mod:`.remember`; the route in the package doc)."""
        return self._remember.remember(
            type=type,
            title=title,
            body=body,
            entities=entities,
            trust=trust,
            agent_id=agent_id,
            session_id=session_id,
            source=source,
            review_after=review_after,
            valid_until=valid_until,
            supersedes=supersedes,
            depends_on=depends_on,
        )

    def remember_many(self, drafts: Sequence[MemoryDraft], *, progress: Any = None) -> list[Memory]:
        """Bulk import (a backup, another memory system, a benchmark): one transaction, one index pass.

        No conflict gate runs: imported memories are trusted as given (``trust`` defaults to
        ``imported``); secrets are still redacted.
        """
        self._sync()
        rows = draft_rows(drafts, self._clock.now(), self._entities)
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
        """Save the memories' documents in one go and index them (one pass); the number indexed (:mod:`.docs`)."""
        return index_many(self._db, self._docs, rows, threads=threads, force=force, progress=progress)

    def verdict(self, new_id: str, old_id: str, verdict: str, agent_id: str | None = None) -> MemoryVerdict:
        """Record the agent's verdict on a pair the gate showed; ``supersede`` archives the old one
        (once approved, when the new one is a proposal under review), ``discard_new`` deprecates
        the new one, ``keep_both`` keeps both active.

        Accepted from ``agent_id`` for a pair the gate proposed to it (it remembered the new one),
        or for memories it may change (its own, or ones nobody owns); a verdict retires only a
        memory the agent may change (:mod:`.owners`), never another agent's or a person's."""
        check_verdict(verdict)
        self._sync()
        new, old = give_verdict(self._db, self._clock.now(), new_id, old_id, verdict, agent_id)
        self._index(new)
        self._index(old)
        self._rendered(new.id, old.id)
        retired = [m.id for m in (old, new) if m.state in ("archived", "deprecated")]
        with self._db.read() as session:
            flagged = sorted({d for memory_id in retired for d in dependents(session, memory_id)})
        return MemoryVerdict(
            new=memory_result(new), old=memory_result(old), verdict=verdict, dependents_flagged=flagged
        )

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

        ``acting_agent`` is who calls: a known agent may deprecate or purge only its own memories
        and the ones nobody owns; another agent's or a person's is refused with who owns it
        (:mod:`.owners`). A caller without identity (a person at the CLI) may forget any. Returns the
        memory as it now stands (as it was, when purged) and what was done.
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
                refuse_foreign(row, acting_agent, doing="purge")
                repository.purge(session, row, now=now, agent=acting_agent)
                flagged = dependents(session, row.id)
            self._docs.delete(f"{DOC_PREFIX}{row.id}")
            if self._files is not None:
                self._files.remove(row.id)
            done = Forgotten(id=row.id, action="purged", state="purged", dependents_flagged=flagged)
            return memory_result(row), done
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
            refuse_foreign(row, acting_agent, doing="deprecate")
            repository.set_state(session, row, "deprecated", reason=reason.strip(), now=now, agent=acting_agent)
            flagged = dependents(session, row.id)
        self._index(row)
        self._rendered(row.id)
        return memory_result(row), Forgotten(
            id=row.id, action="deprecated", state=row.state, dependents_flagged=flagged
        )

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
        """Memories for ``query``, weathered, filtered; each hit returned that is a close match counts
        as a use (see :class:`~dokoro_store.semantic.memories.recall.MemoryRecall`)."""
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
        hidden = self._recall.hidden_types()
        hits = self._recall.recall(
            query,
            limit=limit,
            types=types,
            entity=entity,
            since=since,
            until=until,
            states=states,
            count_use=count_use,
            hidden=hidden,
        )
        return Recall(hits=hits, files=None if files is None or files.quiet else files, hidden_types=hidden)

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
        """Reconcile the memory files now, say what a person changed (``sweep=False``: as a memory call's own
        reconcile: the sweep's share of its rate, a bounded number of files, a second's wait at most)."""
        if not sweep:
            return self._sync() or FilesSync()
        return self._files.sync(sweep=sweep) if self._files is not None else FilesSync()

    def close(self) -> None:
        """Let go of the memory files' manifest (the store is closing)."""
        if self._files is not None:
            self._files.close()

    def file_problems(self) -> list[FileProblem]:
        """Files under ``memories/`` that hold no memory now (unreadable, refused, copies), and why."""
        return self._files.problems() if self._files is not None else []

    def unsafe_rows(self) -> list[tuple[str, str]]:
        """Memory rows an earlier version let in that no file can hold, as (id, why) (:mod:`.repair`)."""
        from dokoro_store.semantic.memories.repair import find_unsafe

        return find_unsafe(self._db)

    def repair(self) -> MemoryRepair:
        """Repair the rows :meth:`unsafe_rows` finds (``dokoro doctor --fix``, :mod:`.repair`); their
        documents follow their new ids and their files are written."""
        from dokoro_store.semantic.memories.repair import repair_rows

        done = repair_rows(self._db, self._clock, self._docs, self._index)
        self._rendered(*(r.new_id for r in done.repaired))
        return done

    def files_unread(self) -> str | None:
        """The memory files a read-only answer has not read, in a line (None: none; :mod:`.files.look`)."""
        return unread_line(self._files.look()) if self._files is not None else None

    def file_of(self, memory_id: str) -> Path:
        """The markdown file of a memory (written when missing), e.g. to open it in an editor."""
        if self._files is None:
            raise InvalidArgumentError("this store has no workspace folder, so its memories have no files")
        return self._files.file_of(memory_id.strip())

    def reindex_from_files(
        self, *, full: bool = False, progress: Progress | None = None, actor: str | bool | None = True
    ) -> MemoryReindex:
        """Rebuild the memories' rows and index from their files (``dokoro memory reindex``), forward
        only (a file older than its row is brought up to date from it), each change a file makes
        made by ``actor`` (default: whom this process acts for; None: a person) with its rights only
        (:mod:`.files.reindex`); ``full`` re-embeds every memory, not only changed ones."""
        if self._files is None:
            raise InvalidArgumentError("this store has no workspace folder, so its memories have no files")
        report, ids = self._files.reindex(actor=self._actor if isinstance(actor, bool) else actor, progress=progress)
        rows = self._files.rows_of(ids)
        indexed = self._index_many(rows, force=full, progress=progress) if rows else 0
        return report.model_copy(update={"indexed": indexed})


# A bulk import of at least this many memories refreshes the planner's statistics (PostgreSQL).
_BULK_STATISTICS = 1_000
