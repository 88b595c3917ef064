"""The one writer of memory rows: ``memories``, their ``memory_entities`` and the conflict ledger.

Every change to those tables goes through a function here, each taking the caller's write
session (so it joins the caller's transaction: remember writes the memory, its document and the
gate's pairs in one): :func:`create` and :func:`create_many` (remember, a bulk import, a file),
:func:`insert_new` (a file's memory, written once whatever the retries), :func:`supersede` and
:func:`chain` (one supersede rule, :func:`~.rows.archive`), :func:`set_state` (forget, deprecate,
restore, approve, reject), :func:`rewrite` (a file's edit, a reindex), :func:`record_pair` and
:func:`record_verdict` (the gate's ledger), :func:`purge` (which leaves a tombstone: id, revision,
when and by whom, no text), :func:`count_uses` (recall), and the ``depends_on`` links (:func:`link`,
:func:`renew`). What a rebuild from the memory files brings back goes through here too, forward only:
:func:`entomb` (a purge the folder's ledger records), :func:`restore_links`, :func:`restore_verdict`
and :func:`restore_uses` (only what the database lacks; counters only go up). Ids come from
:func:`new_id`; :func:`is_memory_id` and :func:`is_safe_id` say which ids a file may name, and
:func:`reassign_id` gives a row an earlier version let in with an unsafe id a safe one (``dokoro
doctor --fix``).

**Retiring flags the dependents.** Whatever retires a memory here (:func:`supersede`, :func:`set_state`
to archived or deprecated, :func:`rewrite` of its state, :func:`purge`) clears ``checked_at`` of the
links that depend on it, in the same transaction: each dependent reads as stale
(:mod:`dokoro_store.semantic.memories.lifecycle`) until it is renewed (:func:`renew`).

The rule is enforced, not only written down: the store's sessions refuse a memory row written
outside these functions (:mod:`dokoro_store.db.write_guard`), and the architecture test scans the
library for any other write. Writes that treat every table alike stay generic and below this
module (they name no memory table and open :func:`~dokoro_store.db.write_guard.all_tables`):
``transfer.copy_store`` (``dokoro team``), ``backup.apply_import`` (``dokoro import``, and the
original store's move-in, which goes through it) and the secret scan's fix of a finding; the
schema migrations (the change-number triggers, the first entity rows) run on their own connection.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import case, delete, insert, update
from sqlmodel import Session, col, select

from dokoro_store.db.write_guard import writing
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.models.memories import MemoryConflict, MemoryEntity, MemoryLink, MemoryTombstone
from dokoro_store.semantic.memories.rows import archive
from dokoro_store.walls.ownership import known_agent
from dokoro_store.walls.secrets import redact_value

__all__ = [
    "ID_HEX",
    "chain",
    "count_uses",
    "create",
    "create_many",
    "entomb",
    "insert_new",
    "is_memory_id",
    "is_safe_id",
    "link",
    "new_id",
    "pair_hash",
    "purge",
    "reassign_id",
    "record_pair",
    "record_verdict",
    "renew",
    "restore_links",
    "restore_uses",
    "restore_verdict",
    "rewrite",
    "set_state",
    "supersede",
]

_MEMORIES = MemoryRow.__table__  # type: ignore[attr-defined]
_ENTITIES = MemoryEntity.__table__  # type: ignore[attr-defined]
_LINKS = MemoryLink.__table__  # type: ignore[attr-defined]
_RETIRED = ("archived", "deprecated")


# ---------------------------------------------------------------------- ids
# The hex digits of an id after its day: 48 bits, so a million memories written on one day (a bulk
# import) collide with a chance of about 2 in 1,000 and 100k with 2 in 100,000 (the 8 digits ids
# had were 32 bits: 100k memories on one day collided more often than not, failing the import).
ID_HEX = 12


def new_id(now: datetime, *key: str) -> str:
    """A memory's id, the one format every way of writing one uses: ``mem_<day>_<12 hex>``. Random,
    or derived from ``key`` (a file's path and text, a memory and its edited text) so that a call
    retried after a failure names the row it wrote. Ids written before (8 or 10 hex digits) are
    read as they are: an id is only ever compared whole."""
    derived = hashlib.sha256(chr(31).join(key).encode("utf-8")).hexdigest() if key else None
    digest = derived or secrets.token_hex(ID_HEX // 2)
    return f"mem_{now:%Y%m%d}_{digest[:ID_HEX]}"


# Every id dokoro writes (8 or 10 hex digits before; 12 now; a derived one may be longer).
_MEMORY_ID = re.compile(r"mem_[0-9]{8}_[0-9a-f]{8,64}")
# What may name a file and a row at all: a plain name (no path, no leading dot, no space, no control).
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:+-]{0,127}")


def is_memory_id(text: str) -> bool:
    """Whether ``text`` is an id dokoro writes (``mem_<day>_<hex>``): what a file may restore."""
    return _MEMORY_ID.fullmatch(text) is not None


def is_safe_id(text: str) -> bool:
    """Whether ``text`` can name a memory's row and file: a plain name, never a path (``..``, ``/``)."""
    return _SAFE_ID.fullmatch(text) is not None and ".." not in text


def pair_hash(a: str, b: str) -> str:
    """The ledger key of a pair of memories, whichever order they come in."""
    first, second = sorted((a, b))
    return hashlib.sha256(f"{first}|{second}".encode()).hexdigest()


# ---------------------------------------------------------------------- new rows
def column_values(table: Any, row: Any) -> dict[str, Any]:
    """A model's column values for a plain insert into ``table``, each redacted of secrets on the
    object too (as the ORM flush does): what the caller answers is what the database holds."""
    values: dict[str, Any] = {}
    for column in table.columns:
        value = getattr(row, column.name)
        if isinstance(value, str | dict | list):
            cleaned, kinds = redact_value(value)
            if kinds:
                setattr(row, column.name, cleaned)
                value = cleaned
        values[column.name] = value
    return values


def _entity_rows(rows: Sequence[MemoryRow]) -> list[dict[str, str]]:
    return [{"memory_id": m.id, "entity": e} for m in rows for e in dict.fromkeys(m.entities)]


def create(session: Session, row: MemoryRow) -> None:
    """Insert a new memory and its entity rows (plain inserts: no ORM unit of work; ``row`` stays
    detached, as written)."""
    create_many(session, [row])


def create_many(session: Session, rows: Sequence[MemoryRow]) -> None:
    """Insert new memories and their entity rows in the caller's transaction (a bulk import)."""
    if not rows:
        return
    with writing(session):
        session.execute(insert(_MEMORIES), [column_values(_MEMORIES, row) for row in rows])
        if entities := _entity_rows(rows):
            session.execute(insert(_ENTITIES), entities)


def insert_new(session: Session, row: MemoryRow) -> MemoryRow:
    """Insert ``row`` unless its id is there already (a retry of a call that wrote it: that row is
    returned instead)."""
    if (written := session.get(MemoryRow, row.id)) is not None:
        return written
    create(session, row)
    return row


# ---------------------------------------------------------------------- lifecycle
def supersede(
    session: Session, old: MemoryRow, *, by: str, now: datetime, agent: str | None, reason: str | None = None
) -> None:
    """Archive ``old`` (a row of ``session``) as superseded by ``by``: the one rule, :func:`~.rows.archive`."""
    with writing(session):
        archive(old, by=by, now=now, agent=agent, reason=reason)
        session.add(old)
        _flag_dependents(session, old.id)


def chain(session: Session, old: MemoryRow, *, by: str, now: datetime) -> None:
    """Record that ``by`` supersedes ``old``, which is retired already (its state unchanged)."""
    with writing(session):
        old.superseded_by = by
        old.updated_at = now
        session.add(old)


def set_state(
    session: Session, row: MemoryRow, state: str, *, reason: str, now: datetime, agent: str | None = None
) -> None:
    """Move ``row`` (of ``session``) to ``state``, saying why, when and who (``agent`` when it names
    an agent; a person's change through the CLI, the TUI or a file records none)."""
    with writing(session):
        retiring = state in _RETIRED and row.state not in _RETIRED
        row.state = state
        row.state_reason = reason
        row.state_changed_at = now
        row.state_changed_by = known_agent(agent)
        row.updated_at = now
        session.add(row)
        if retiring:
            _flag_dependents(session, row.id)


def rewrite(session: Session, row: MemoryRow, values: Mapping[str, Any]) -> None:
    """Set columns of ``row`` (of ``session``): a person's edit brought in, a reindex from the files,
    a verdict's chain. Its entity rows follow its ``entities`` when they are among ``values``."""
    with writing(session):
        retiring = values.get("state", row.state) in _RETIRED and row.state not in _RETIRED
        for name, value in values.items():
            setattr(row, name, value)
        session.add(row)
        if retiring:
            _flag_dependents(session, row.id)
        if "entities" in values:
            session.flush()
            session.execute(delete(MemoryEntity).where(col(MemoryEntity.memory_id) == row.id))
            if entities := _entity_rows([row]):
                session.execute(insert(_ENTITIES), entities)


def purge(session: Session, row: MemoryRow, *, now: datetime, agent: str | None = None) -> None:
    """Delete a memory for good, with its pairs in the ledger (its entity rows go by cascade), and
    leave its tombstone (id, revision, when, who: no text), so that no folder's older file brings it back."""
    with writing(session):
        tomb = session.get(MemoryTombstone, row.id)
        if tomb is None:
            session.add(
                MemoryTombstone(memory_id=row.id, revision=row.revision, purged_at=now, purged_by=known_agent(agent))
            )
        else:  # purged before, brought back by an edit since, purged again
            tomb.revision, tomb.purged_at, tomb.purged_by = max(tomb.revision, row.revision), now, known_agent(agent)
            session.add(tomb)
        for pair in session.exec(
            select(MemoryConflict).where(
                (col(MemoryConflict.new_id) == row.id) | (col(MemoryConflict.old_id) == row.id)
            )
        ):
            session.delete(pair)
        session.execute(delete(MemoryEntity).where(col(MemoryEntity.memory_id) == row.id))
        session.execute(delete(MemoryLink).where(col(MemoryLink.memory_id) == row.id))
        _flag_dependents(session, row.id)
        session.delete(row)


def entomb(session: Session, memory_id: str, *, revision: int, purged_at: datetime, by: str | None) -> bool:
    """Record a purge a folder's ledger carries, for a memory the database does not have (a rebuild
    from the files): no row is touched. False when the database has the memory or its tombstone."""
    with writing(session):
        if session.get(MemoryRow, memory_id) is not None or session.get(MemoryTombstone, memory_id) is not None:
            return False
        session.add(MemoryTombstone(memory_id=memory_id, revision=revision, purged_at=purged_at, purged_by=by))
        return True


def reassign_id(session: Session, row: MemoryRow, new: str) -> None:
    """Give ``row`` (of ``session``) the id ``new``, and every reference to it (chains, links, the
    conflict ledger) with it: a row an earlier version let in under an id that cannot name a file."""
    old = row.id
    with writing(session):
        session.flush()
        values = {column.name: getattr(row, column.name) for column in _MEMORIES.columns}
        entities = [e for e in session.exec(select(MemoryEntity.entity).where(col(MemoryEntity.memory_id) == old))]
        links = [
            (d, created, checked)
            for d, created, checked in session.execute(
                select(MemoryLink.depends_on, MemoryLink.created_at, MemoryLink.checked_at).where(
                    col(MemoryLink.memory_id) == old
                )
            )
        ]
        session.execute(delete(MemoryEntity).where(col(MemoryEntity.memory_id) == old))
        session.execute(delete(MemoryLink).where(col(MemoryLink.memory_id) == old))
        session.expunge(row)
        session.execute(delete(MemoryRow).where(col(MemoryRow.id) == old))
        values["id"] = new
        session.execute(insert(_MEMORIES), [values])
        if entities:
            session.execute(insert(_ENTITIES), [{"memory_id": new, "entity": e} for e in dict.fromkeys(entities)])
        if links:
            session.execute(
                insert(_LINKS),
                [{"memory_id": new, "depends_on": d, "created_at": c, "checked_at": k} for d, c, k in links],
            )
        session.execute(update(MemoryLink).where(col(MemoryLink.depends_on) == old).values(depends_on=new))
        session.execute(update(MemoryRow).where(col(MemoryRow.supersedes) == old).values(supersedes=new))
        session.execute(update(MemoryRow).where(col(MemoryRow.superseded_by) == old).values(superseded_by=new))
        for pair in session.exec(
            select(MemoryConflict).where((col(MemoryConflict.new_id) == old) | (col(MemoryConflict.old_id) == old))
        ).all():
            new_id = new if pair.new_id == old else pair.new_id
            old_id = new if pair.old_id == old else pair.old_id
            session.delete(pair)
            session.flush()
            session.add(
                MemoryConflict(
                    pair_hash=pair_hash(new_id, old_id),
                    new_id=new_id,
                    old_id=old_id,
                    shared_entities=list(pair.shared_entities),
                    similarity=pair.similarity,
                    shown_at=pair.shown_at,
                    verdict=pair.verdict,
                    decided_at=pair.decided_at,
                    decided_by=pair.decided_by,
                )
            )


# ---------------------------------------------------------------------- depends_on
def link(session: Session, memory_id: str, depends_on: Sequence[str], *, now: datetime) -> None:
    """Record that ``memory_id`` depends on each of ``depends_on`` (links already there are kept)."""
    wanted = [d for d in dict.fromkeys(depends_on) if d != memory_id]
    if not wanted:
        return
    with writing(session):
        there = set(
            session.exec(
                select(MemoryLink.depends_on).where(
                    col(MemoryLink.memory_id) == memory_id, col(MemoryLink.depends_on).in_(wanted)
                )
            )
        )
        rows = [{"memory_id": memory_id, "depends_on": d, "created_at": now} for d in wanted if d not in there]
        if rows:
            session.execute(insert(_LINKS), rows)


def renew(session: Session, row: MemoryRow, *, values: Mapping[str, Any], now: datetime) -> None:
    """Renew ``row`` (of ``session``): its dates pushed forward (``values``: ``review_after``,
    ``valid_until``) and its dependencies checked now (retired ones no longer make it stale)."""
    with writing(session):
        for name, value in values.items():
            setattr(row, name, value)
        row.updated_at = now
        session.add(row)
        session.execute(update(MemoryLink).where(col(MemoryLink.memory_id) == row.id).values(checked_at=now))


def restore_links(session: Session, links: Sequence[tuple[str, str, datetime, datetime | None]]) -> int:
    """Links a rebuild from the files brings back (``memory_id``, ``depends_on``, ``created_at``,
    ``checked_at``): only those the database lacks, each of a memory it has. How many were written."""
    if not links:
        return 0
    wanted = {(m, d): (c, k) for m, d, c, k in links if m != d}
    ids = sorted({m for m, _d in wanted})
    with writing(session):
        there: set[tuple[str, str]] = set()
        present: set[str] = set()
        for start in range(0, len(ids), 500):
            batch = ids[start : start + 500]
            there |= {
                (str(m), str(d))
                for m, d in session.execute(
                    select(MemoryLink.memory_id, MemoryLink.depends_on).where(col(MemoryLink.memory_id).in_(batch))
                )
            }
            present |= set(session.exec(select(MemoryRow.id).where(col(MemoryRow.id).in_(batch))))
        rows = [
            {"memory_id": m, "depends_on": d, "created_at": c, "checked_at": k}
            for (m, d), (c, k) in sorted(wanted.items())
            if (m, d) not in there and m in present
        ]
        if rows:
            session.execute(insert(_LINKS), rows)
        return len(rows)


def _flag_dependents(session: Session, memory_id: str) -> None:
    """The memories depending on ``memory_id``, which is being retired: stale until renewed."""
    session.execute(
        update(MemoryLink)
        .where(col(MemoryLink.depends_on) == memory_id, col(MemoryLink.checked_at).is_not(None))
        .values(checked_at=None)
    )


# ---------------------------------------------------------------------- the conflict ledger
def record_pair(
    session: Session,
    *,
    pair_hash: str,
    new_id: str,
    old_id: str,
    shared: Sequence[str],
    similarity: float,
    shown_at: datetime,
) -> None:
    """Write a pair the conflict gate showed (unresolved until a verdict)."""
    with writing(session):
        session.add(
            MemoryConflict(
                pair_hash=pair_hash,
                new_id=new_id,
                old_id=old_id,
                shared_entities=list(shared),
                similarity=similarity,
                shown_at=shown_at,
            )
        )


def record_verdict(
    session: Session,
    pair: MemoryConflict | None,
    verdict: str,
    *,
    new_id: str,
    old_id: str,
    now: datetime,
    by: str | None,
) -> None:
    """The verdict given on the pair ``new_id``/``old_id``: ``pair`` is its row of the ledger (of
    ``session``), or None for a pair the gate never showed (its row is written now)."""
    with writing(session):
        if pair is None:
            pair = MemoryConflict(pair_hash=pair_hash(new_id, old_id), new_id=new_id, old_id=old_id, shown_at=now)
        pair.verdict = verdict
        pair.decided_at = now
        pair.decided_by = by
        session.add(pair)


def restore_verdict(
    session: Session, *, new_id: str, old_id: str, verdict: str, decided_at: datetime, by: str | None
) -> bool:
    """A verdict a rebuild from the files brings back into the ledger: only for a pair of memories the
    database has that holds no verdict yet (no memory's state is changed: that is in their files)."""
    with writing(session):
        if session.get(MemoryRow, new_id) is None or session.get(MemoryRow, old_id) is None:
            return False
        pair = session.get(MemoryConflict, pair_hash(new_id, old_id))
        if pair is not None and pair.verdict is not None:
            return False
        record_verdict(session, pair, verdict, new_id=new_id, old_id=old_id, now=decided_at, by=by)
        return True


# ---------------------------------------------------------------------- use
def count_uses(session: Session, memory_ids: Sequence[str], *, now: datetime) -> None:
    """Count one recall of each memory: incremented in SQL (no read, no lost update between processes)."""
    if not memory_ids:
        return
    with writing(session):
        session.execute(
            update(MemoryRow)
            .where(col(MemoryRow.id).in_(list(memory_ids)))
            .values(recall_count=col(MemoryRow.recall_count) + 1, last_recalled_at=now)
        )


def restore_uses(session: Session, memory_id: str, uses: int, last: datetime | None) -> bool:
    """Use counters a rebuild from the files brings back: they only go up (a database that counted
    more keeps its count). True when the row took them."""
    with writing(session):
        latest = col(MemoryRow.last_recalled_at)
        when = latest if last is None else case((latest.is_not(None) & (latest > last), latest), else_=last)
        result = session.execute(
            update(MemoryRow)
            .where(col(MemoryRow.id) == memory_id, col(MemoryRow.recall_count) < uses)
            .values(recall_count=uses, last_recalled_at=when)
        )
        return bool(getattr(result, "rowcount", 0))
