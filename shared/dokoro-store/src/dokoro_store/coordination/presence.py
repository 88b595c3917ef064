"""Presence: which agents are working on this store right now (reference §2.8).

An agent pings; its heartbeat is the database clock in unix seconds. An agent is present while
its last heartbeat is at most a TTL old (900 s by default). File claims use the same TTL to tell
a live holder from an abandoned one.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, Literal

from sqlalchemy import Connection, Row, Table, bindparam, literal_column, select
from sqlalchemy.orm import Session

from dokoro_store.db.clock import db_epoch
from dokoro_store.db.engine import Database
from dokoro_store.db.model_tables import table_of
from dokoro_store.errors import InvalidArgumentError
from dokoro_store.models import AgentPresence
from dokoro_store.results.coordination import Presence
from dokoro_store.walls.names import optional_name, required_name

__all__ = ["PRESENCE_STATUSES", "PRESENCE_TTL", "PresenceLabel", "PresenceService", "presence_labels"]

PRESENCE_STATUSES = ("active", "idle", "away")
PRESENCE_TTL = 900
MAX_TTL = 86400
MAX_FOCUS = 2000

PresenceLabel = Literal["live", "stale", "unknown"]


def _table() -> Table:
    return table_of(AgentPresence)


def _heartbeats() -> Any:
    table = _table()
    return select(table.c.agent_id, table.c.last_heartbeat).where(
        table.c.agent_id.in_(bindparam("agents", expanding=True))
    )


_HEARTBEATS = _heartbeats()  # built once (statements are immutable)


def presence_labels(
    session: Session | Connection, agents: Iterable[str], now: int, ttl: int = PRESENCE_TTL
) -> dict[str, str]:
    """``live`` (heartbeat within ``ttl``), ``stale`` (older) or ``unknown`` (never pinged), per agent;
    read in the caller's transaction (an ORM session or a plain connection)."""
    wanted = sorted(set(agents))
    labels = dict.fromkeys(wanted, "unknown")
    if not wanted:
        return labels
    rows = session.execute(_HEARTBEATS, {"agents": wanted}).all()
    for agent_id, heartbeat in rows:
        labels[agent_id] = "live" if now - int(heartbeat) <= ttl else "stale"
    return labels


class PresenceService:
    def __init__(self, db: Database) -> None:
        self._db = db

    def ping(
        self,
        agent_id: str,
        *,
        session_id: str | None = None,
        status: str = "active",
        current_focus: str | None = None,
    ) -> Presence:
        """Record a heartbeat: the first one inserts (seq 1), later ones overwrite and count up."""
        agent_id = required_name(agent_id, "agent_id")
        if status not in PRESENCE_STATUSES:
            raise InvalidArgumentError(f"status must be one of {', '.join(PRESENCE_STATUSES)}; got {status!r}")
        focus = (current_focus or "").strip() or None
        if focus is not None and len(focus) > MAX_FOCUS:
            raise InvalidArgumentError(f"current_focus is {len(focus)} characters; at most {MAX_FOCUS}")
        table = _table()
        ops = self._db.ops
        statement = ops.insert(table).values(
            agent_id=agent_id,
            session_id=optional_name(session_id, "session_id"),
            status=status,
            current_focus=focus,
            last_heartbeat=literal_column(ops.epoch_now_sql()),
            heartbeat_seq=1,
        )
        statement = statement.on_conflict_do_update(
            index_elements=["agent_id"],
            set_={
                "session_id": statement.excluded.session_id,
                "status": statement.excluded.status,
                "current_focus": statement.excluded.current_focus,
                "last_heartbeat": statement.excluded.last_heartbeat,
                "heartbeat_seq": table.c.heartbeat_seq + 1,
            },
        )
        with self._db.write() as session:
            session.execute(statement)
            now = db_epoch(session, ops)
            row = session.execute(select(table).where(table.c.agent_id == agent_id)).one()
        return _presence(row, now)

    def list(self, ttl_seconds: int = PRESENCE_TTL) -> list[Presence]:
        """Agents whose last heartbeat is at most ``ttl_seconds`` old, most recent first."""
        if not 1 <= ttl_seconds <= MAX_TTL:
            raise InvalidArgumentError(f"ttl_seconds must be between 1 and {MAX_TTL}; got {ttl_seconds}")
        table = _table()
        with self._db.read() as session:
            now = db_epoch(session, self._db.ops)
            rows = session.execute(
                select(table)
                .where(table.c.last_heartbeat >= now - ttl_seconds)
                .order_by(table.c.last_heartbeat.desc(), table.c.agent_id)
            ).all()
        return [_presence(row, now) for row in rows]

    def get(self, agent_id: str) -> Presence | None:
        table = _table()
        with self._db.read() as session:
            now = db_epoch(session, self._db.ops)
            row = session.execute(select(table).where(table.c.agent_id == agent_id)).first()
        return None if row is None else _presence(row, now)


def _presence(row: Row[Any], now: int) -> Presence:
    heartbeat = int(row.last_heartbeat)
    return Presence(
        agent_id=row.agent_id,
        session_id=row.session_id,
        status=row.status,
        current_focus=row.current_focus,
        last_heartbeat=datetime.fromtimestamp(heartbeat, UTC),
        heartbeat_seq=int(row.heartbeat_seq),
        seconds_ago=max(0, now - heartbeat),
    )
