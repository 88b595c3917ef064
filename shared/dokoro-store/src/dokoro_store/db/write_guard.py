"""Tables one module alone writes, enforced on the store's own sessions.

The memory rows (``memories``, ``memory_entities``, ``memory_conflicts``, ``memory_links``) are written by
:mod:`dokoro_store.semantic.memories.repository` only: it opens :func:`writing` around each of its
writes, and :func:`install` hooks the store's session factories so that an ORM flush holding a new,
changed or deleted row of a guarded table, or an ``INSERT``/``UPDATE``/``DELETE`` statement on one
passed to ``Session.execute``, is refused (:class:`GuardedWriteError`) outside it. A service that
writes a memory row another way fails its first test instead of growing a second door.

The plain writes (:meth:`~dokoro_store.db.engine.Database.writing`: Core statements on a connection,
no session) are guarded too (:func:`install_plain`): none of them may write a memory row.

What the hooks cannot see (raw SQL text, a connection outside the store's doors) the static
scan of the architecture test covers (``tests/test_architecture.py``). Table-level writes that treat
every table alike, naming none (``transfer.copy_store``, ``backup.apply_import``, which the
original store's move-in uses too, and the secret scan's fix of a finding), open :func:`all_tables`:
rows copied or redacted as they are, below every service. The schema migrations run on their own connection.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from sqlalchemy import event, inspect
from sqlalchemy.orm import ORMExecuteState, Session, sessionmaker

__all__ = ["GUARDED_TABLES", "PLAIN", "GuardedWriteError", "all_tables", "install", "install_plain", "writing"]

GUARDED_TABLES = frozenset({"memories", "memory_entities", "memory_conflicts", "memory_links"})
_FLAG = "dokoro.memory_repository"
# The execution option that marks the connections of Database.writing (plain Core writes).
PLAIN = "dokoro_plain_write"


class GuardedWriteError(RuntimeError):
    """A memory row written outside the memory repository (a programming error, never the user's)."""


@contextlib.contextmanager
def writing(session: Session) -> Iterator[Session]:
    """Let ``session`` write the guarded tables for the block; what the block changed is flushed
    before it ends, so a change made after it (outside the repository) is still refused."""
    session.info[_FLAG] = session.info.get(_FLAG, 0) + 1
    try:
        yield session
        session.flush()
    finally:
        session.info[_FLAG] -= 1


def all_tables(session: Session) -> contextlib.AbstractContextManager[Session]:
    """Let a generic write over every table alike (a store copied between databases, a backup
    imported, the secret scan's fix of a finding) write the guarded tables in ``session``: rows
    copied or redacted as they are, not a memory service's change."""
    return writing(session)


def _allowed(session: Session) -> bool:
    return bool(session.info.get(_FLAG))


def _refuse(what: str) -> None:
    raise GuardedWriteError(
        f"{what}: memory rows are written by dokoro_store.semantic.memories.repository only "
        "(its functions take the session); call it instead"
    )


def _before_flush(session: Session, _context: Any, _instances: Any) -> None:
    if _allowed(session):
        return
    for kind, objects in (("new", session.new), ("deleted", session.deleted), ("changed", session.dirty)):
        for obj in objects:
            table = getattr(inspect(obj).mapper.persist_selectable, "name", None)
            if table in GUARDED_TABLES and (kind != "changed" or session.is_modified(obj)):
                _refuse(f"a {kind} row of {table} flushed outside the repository")


def _on_execute(state: ORMExecuteState) -> None:
    if not (state.is_insert or state.is_update or state.is_delete) or _allowed(state.session):
        return
    table = getattr(getattr(state.statement, "table", None), "name", None)
    if table in GUARDED_TABLES:
        _refuse(f"a statement writing {table} outside the repository")


def install(*factories: sessionmaker[Any]) -> None:
    """Guard the sessions ``factories`` make (each hook once)."""
    for factory in factories:
        if not event.contains(factory, "before_flush", _before_flush):
            event.listen(factory, "before_flush", _before_flush)
        if not event.contains(factory, "do_orm_execute", _on_execute):
            event.listen(factory, "do_orm_execute", _on_execute)


def _on_plain_execute(conn: Any, clauseelement: Any, _multiparams: Any, _params: Any, _options: Any) -> None:
    if not conn.get_execution_options().get(PLAIN) or not getattr(clauseelement, "is_dml", False):
        return
    table = getattr(getattr(clauseelement, "table", None), "name", None)
    if table in GUARDED_TABLES:
        _refuse(f"a plain write of {table}")


def install_plain(engine: Any) -> None:
    """Refuse a memory row written by a plain write (a connection of ``Database.writing``), once per engine."""
    if not event.contains(engine, "before_execute", _on_plain_execute):
        event.listen(engine, "before_execute", _on_plain_execute)
