"""Readable ids taken inside the write transaction that inserts them.

Issues, features and plans get an id made of their date and title (``fix-login-20261202-1015``),
numbered ``-2``, ``-3``… when another row already has it; a week's items are ``<week>-<n>``.
:func:`take_id` picks the first free one *inside* the caller's ``db.write()`` transaction, after
taking the table's id lock, and the caller inserts the row before that transaction ends: two
writers (threads, processes, machines on one PostgreSQL) never pick the same id, so no caller
retries on a duplicate key.

- SQLite: the write transaction (``BEGIN IMMEDIATE``) already holds the database's one write
  lock; the read sees every committed row.
- PostgreSQL: a transaction-scoped advisory lock per table (:meth:`DialectOps.lock_keys`), so
  allocations of one table take turns; read committed, the read after the lock sees the row
  the previous holder committed. One lock per table, not per base: ``fix`` numbered ``fix-2``
  and a title that makes ``fix-2`` itself would otherwise race for the same id.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Mapped
from sqlmodel import Session, select

from dokoro_store.db.dialect import DialectOps

__all__ = ["TakenId", "take_id"]

_LOCK = "new_id"


@dataclass(frozen=True)
class TakenId:
    """A free id and its number (1 for the bare ``base``)."""

    id: str
    number: int


def _candidate(base: str, number: int, *, bare: bool) -> str:
    return base if bare and number == 1 else f"{base}-{number}"


def take_id(session: Session, ops: DialectOps, column: Mapped[str], base: str, *, first: int | None = None) -> TakenId:
    """The first id no row of ``column``'s table holds among ``base``, ``base-2``, ``base-3``…
    (with ``first``: ``base-<first>``, ``base-<first+1>``…), taken in ``session``, a
    ``db.write()`` transaction that must insert the row before it ends (see the module doc).

    ``column`` is the model's id column (``col(Model.id)``). One indexed prefix read of the
    ids that start with ``base``, whatever the size of the table.
    """
    ops.lock_keys(session, _LOCK, [str(column)])
    taken = set(session.exec(select(column).where(column.startswith(base, autoescape=True))))
    bare = first is None
    number = 1 if first is None else first
    while _candidate(base, number, bare=bare) in taken:
        number += 1
    return TakenId(_candidate(base, number, bare=bare), number)
