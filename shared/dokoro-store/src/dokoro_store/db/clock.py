"""The database's clock, read inside a transaction: one clock for every agent of a store.

Leases (file claims, presence) and feedback ages are measured on it, so agents on machines
whose clocks disagree still agree on who holds what.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache

from sqlalchemy import Connection, TextClause, text
from sqlalchemy.orm import Session

from dokoro_store.db.dialect import DialectOps

__all__ = ["db_epoch", "db_now", "db_seconds"]


@cache
def _select(expression: str) -> TextClause:
    """``SELECT expression``, built once per expression (a dialect has one of each)."""
    return text(f"SELECT {expression}")


def db_epoch(session: Session | Connection, ops: DialectOps) -> int:
    """The database clock in whole unix seconds, read in the caller's transaction (an ORM session
    or a plain connection)."""
    return int(session.execute(_select(ops.epoch_now_sql())).scalar_one())


def db_seconds(session: Session, ops: DialectOps) -> float:
    """The database clock in fractional unix seconds."""
    return float(session.execute(_select(ops.now_seconds_sql())).scalar_one())


def db_now(session: Session, ops: DialectOps) -> datetime:
    """The database clock as an aware UTC datetime."""
    return datetime.fromtimestamp(db_seconds(session, ops), UTC)
