"""The route of a remember (:meth:`~.service.MemoryService.remember`), in one pass.

The arguments checked once; the memory files reconciled (a bounded share); title, body and source
redacted once; the document chunked and embedded outside the write lock; one write transaction
(the retry check, the superseded memory archived, the row, its entities, its document with its
chunks and vectors, the conflict gate's pairs), every memory row through :mod:`.repository`; after
the commit the vector engine's copy and the memory's file. A retry of the same call moments ago
returns the memory it stored (:data:`RETRY_WINDOW`).

Remember is the agents' door: the store's per-type switches (:mod:`.switches`) are enforced here.
A type agents may not write is refused before anything is prepared (nothing stored); a type that
needs review starts as ``proposed``. ``depends_on`` names memories in force the new one relies on:
the links are written in the same transaction (:func:`~.repository.link`).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from sqlalchemy import bindparam, insert
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm.attributes import set_committed_value
from sqlmodel import Session, col, select

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.errors import (
    ConflictError,
    DokoroError,
    EmbedderMismatchError,
    InvalidArgumentError,
    NotFoundError,
    OutsideStoreError,
)
from dokoro_store.models.docs import Doc
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.results.memories import CloseMemory, FilesSync, Remembered
from dokoro_store.semantic.documents.threads import clean_thread, place_in_thread
from dokoro_store.semantic.memories import repository
from dokoro_store.semantic.memories.docs import save_doc
from dokoro_store.semantic.memories.gate import ConflictGate
from dokoro_store.semantic.memories.owners import refuse_foreign
from dokoro_store.semantic.memories.review import PROPOSED, initial_state
from dokoro_store.semantic.memories.rows import (
    DOC_PREFIX,
    DOC_TYPE,
    MEMORY_TYPES,
    TRUST_LEVELS,
    doc_text,
    memory_result,
    parse_time,
)
from dokoro_store.semantic.memories.staleness import IN_FORCE, dependents
from dokoro_store.semantic.memories.switches import TypeSwitches
from dokoro_store.walls.secrets import redact_all

if TYPE_CHECKING:
    from sqlmodel.sql.expression import SelectOfScalar

    from dokoro_store.semantic.documents.service import DocumentService, PreparedIndex
    from dokoro_store.semantic.memories.files.sync import MemoryFiles

__all__ = ["MAX_DEPENDS_ON", "RETRY_WINDOW", "Remember", "recent_twin", "retry_key", "twin_query"]

log = logging.getLogger("dokoro.store")

# A second identical remember by the same agent within this window is a retry, not a new memory.
RETRY_WINDOW = timedelta(minutes=10)
# The memories one memory may depend on at most.
MAX_DEPENDS_ON = 20
_MEMORIES = MemoryRow.__table__  # type: ignore[attr-defined]
_DOCS = Doc.__table__  # type: ignore[attr-defined]


class Remember:
    """Remember for one store (see the module doc). ``sync`` is the memory call's own reconcile of
    the files (None without them), ``entities`` the entities as stored (the dictionary's names)."""

    def __init__(
        self,
        db: Database,
        clock: Clock,
        docs: DocumentService,
        gate: ConflictGate,
        *,
        files: MemoryFiles | None,
        review: bool,
        sync: Callable[[], FilesSync | None],
        entities: Callable[[Sequence[str] | None], list[str]],
    ) -> None:
        self._db = db
        self._clock = clock
        self._docs = docs
        self._gate = gate
        self._files = files
        self._review = review
        self._sync = sync
        self._entities = entities
        self._switches = TypeSwitches(db, clock)

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
        needed = _depends_on(depends_on)
        with self._db.read() as session:  # before any work: a switched-off type stores nothing
            switch = self._switches.check_agent_write(session, type)
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
            state=PROPOSED if switch.needs_review else initial_state(review=self._review),
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
                if twin is None and needed:
                    _check_dependencies(session, needed, memory.supersedes)
                    repository.link(session, memory.id, needed, now=now)
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
        notes = list(prepared.report.notes) + self._notes(memory, trust, switch.needs_review, gate_failed, superseded)
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
            depends_on=needed,
        )

    def _notes(
        self,
        memory: MemoryRow,
        trust: str,
        type_needs_review: bool,
        gate_failed: str | None,
        superseded: MemoryRow | None,
    ) -> list[str]:
        """What the answer of a stored memory adds: why it waits for review, what could not run,
        and the memories now stale because the one it superseded was retired."""
        notes: list[str] = []
        if type_needs_review and not self._review:
            notes.append(
                f"memories of type {memory.type!r} wait for a person's review in this store: proposed until "
                "approved (`dokoro memory approve`; switches: `dokoro memory types`)"
            )
        if memory.state == PROPOSED and trust != "agent-inferred":
            notes.append(
                f"trust {trust!r} does not skip the review queue: a person approves it "
                "(`dokoro memory approve`, `dokoro browse`)"
            )
        if gate_failed is not None:
            notes.append(f"stored; the conflict check could not run ({gate_failed})")
        if superseded is not None and (flagged := self._dependents(superseded.id)):
            notes.append(
                f"{len(flagged)} memory(ies) depending on {superseded.id} are now stale until renewed: "
                + ", ".join(flagged)
            )
        return notes

    def _dependents(self, memory_id: str) -> list[str]:
        """The memories depending on ``memory_id`` (just retired); a failed read is no failure."""
        try:
            with self._db.read() as session:
                return dependents(session, memory_id)
        except SQLAlchemyError:
            log.warning("dokoro: the dependents of a superseded memory could not be read", exc_info=True)
            return []

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
        self._db.ops.lock_keys(session, "remember", [retry_key(memory)])
        twin = recent_twin(session, memory, now - RETRY_WINDOW)
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
            if memory.state != PROPOSED:  # a proposal supersedes only once approved (by a person)
                refuse_foreign(
                    old,
                    memory.agent_id,
                    doing="supersede",
                    instead="Nothing was stored. Remember yours without supersedes (both are kept, and the "
                    "conflict gate puts a close pair before {ask}), or ask {ask} to retire it",
                )
                repository.supersede(session, old, by=memory.id, now=now, agent=memory.agent_id)
                # Its text is unchanged: only its document's state moves (its index stays current).
                save_doc(self._docs, session, old)
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


def _nothing() -> None:
    return None


def _depends_on(ids: Sequence[str] | None) -> list[str]:
    """``depends_on`` cleaned: ids, each once, at most :data:`MAX_DEPENDS_ON`."""
    cleaned = list(dict.fromkeys(i.strip() for i in ids or () if i and i.strip()))
    if len(cleaned) > MAX_DEPENDS_ON:
        raise InvalidArgumentError(f"depends_on: at most {MAX_DEPENDS_ON} memories; got {len(cleaned)}")
    return cleaned


def _check_dependencies(session: Session, ids: Sequence[str], supersedes: str | None) -> None:
    """Refuse (nothing stored) a dependency that does not exist, is retired, or is the memory this
    one supersedes (being retired by this very call)."""
    found = {m.id: m for m in session.exec(select(MemoryRow).where(col(MemoryRow.id).in_(list(ids))))}
    for memory_id in ids:
        row = found.get(memory_id)
        if row is None:
            raise NotFoundError(
                f"depends_on: no memory {memory_id!r}; the ids are in dokoro_recall's answer. Nothing was stored."
            )
        if memory_id == supersedes or row.state not in IN_FORCE:
            state = "superseded by this memory" if memory_id == supersedes else row.state
            raise ConflictError(
                f"depends_on: memory {memory_id} is {state}: a memory depends only on memories in force. "
                "Nothing was stored."
            )


def retry_key(memory: MemoryRow) -> str:
    parts = [memory.agent_id or "", memory.type, memory.title, memory.body]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def twin_query(by_agent: bool) -> SelectOfScalar[MemoryRow]:
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


_TWIN = {by_agent: twin_query(by_agent) for by_agent in (False, True)}


def recent_twin(session: Session, memory: MemoryRow, cutoff: datetime) -> MemoryRow | None:
    """The memory an identical remember by the same agent stored since ``cutoff``, if any."""
    values = {"twin_title": memory.title, "twin_body": memory.body, "twin_type": memory.type, "twin_cutoff": cutoff}
    if memory.agent_id is not None:
        values["twin_agent"] = memory.agent_id
    return session.exec(_TWIN[memory.agent_id is not None], params=values).first()
