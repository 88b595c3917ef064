"""Advisory file claims: leases on paths, so agents editing one tree stay out of each other's way.

Reference §4.9a. A claim is all-or-nothing over up to 50 paths: every path is evaluated and
written in ONE write transaction (``BEGIN IMMEDIATE`` on SQLite; per-path advisory locks plus
row locks on PostgreSQL), so two processes can never both hold a live claim on one path and a
multi-path claim is held entirely or not at all. Every time is the database clock in unix
seconds. Each change is also written to ``file_claim_events`` in the same transaction: the
history of who held which path, when, and whom a takeover displaced.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from sqlalchemy import CursorResult, Row, Table, bindparam, delete, insert, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from dokoro_store.coordination.claims.paths import (
    MAX_PATHS,
    ClaimTarget,
    clean_root,
    normalise_claim_path,
    normalise_claim_paths,
)
from dokoro_store.coordination.presence import presence_labels
from dokoro_store.db.clock import db_epoch
from dokoro_store.db.engine import Database
from dokoro_store.db.model_tables import table_of
from dokoro_store.errors import ConflictError, InvalidArgumentError
from dokoro_store.models import FileClaim, FileClaimEvent
from dokoro_store.results.coordination import (
    Claim,
    ClaimHolder,
    ClaimItem,
    ClaimOutcome,
    ReleaseItem,
    ReleaseOutcome,
)
from dokoro_store.walls.names import optional_name, required_name

__all__ = ["DEFAULT_TTL", "MAX_PATHS", "MAX_TTL", "ClaimService", "normalise_claim_paths"]

DEFAULT_TTL = 300
MAX_TTL = 3600
# Released rows, and open rows expired this long ago, are deleted on the next claim.
PRUNE_AFTER = 86400
# The claim history is kept a week.
HISTORY_KEEP = 7 * 86400
_LOCK_NAMESPACE = "file_claim"
MAX_INTENT = 2000


def _claims() -> Table:
    return table_of(FileClaim)


def _events() -> Table:
    return table_of(FileClaimEvent)


def _listed(by_agent: bool, include_expired: bool) -> Any:
    """The open claims, soonest to expire first: a Core statement per shape of :meth:`ClaimService.list`."""
    claims = _claims()
    statement = select(claims).where(claims.c.released_at.is_(None))
    if by_agent:
        statement = statement.where(claims.c.agent_id == bindparam("agent_id"))
    if not include_expired:
        statement = statement.where(claims.c.expires_at > bindparam("now"))
    return statement.order_by(claims.c.expires_at, claims.c.claim_key)


# Built once (statements are immutable), by (only one agent's, expired ones too).
_LISTED = {(agent, expired): _listed(agent, expired) for agent in (False, True) for expired in (False, True)}


class ClaimService:
    def __init__(self, db: Database) -> None:
        self._db = db

    # ------------------------------------------------------------------ claim
    def claim(
        self,
        paths: Sequence[str],
        agent_id: str,
        *,
        root: Path | str,
        session_id: str | None = None,
        intent: str | None = None,
        ttl_seconds: int = DEFAULT_TTL,
        force: bool = False,
    ) -> ClaimOutcome:
        """Claim every path for ``ttl_seconds``, or none of them.

        Per path: free or released → claimed; yours → renewed (heartbeat_seq + 1); another
        agent's that is not live (expired, or its presence is stale) → taken_over; live and
        ``force`` → taken_over_forced; live otherwise → conflict, and nothing is written.
        """
        agent_id = required_name(agent_id, "agent_id")
        if not 1 <= ttl_seconds <= MAX_TTL:
            raise InvalidArgumentError(f"ttl_seconds must be between 1 and {MAX_TTL}; got {ttl_seconds}")
        intent = (intent or "").strip() or None
        if intent is not None and len(intent) > MAX_INTENT:
            raise InvalidArgumentError(f"intent is {len(intent)} characters; at most {MAX_INTENT}")
        session_id = optional_name(session_id, "session_id")
        targets = normalise_claim_paths(paths, root)
        try:
            with self._db.write() as session:
                return self._claim(session, targets, agent_id, session_id, intent, ttl_seconds, force)
        except IntegrityError as exc:  # only if the key locks were bypassed; never half-applied
            raise ConflictError("file_claim lost a race for a path — NOTHING was claimed; retry the call") from exc

    def _claim(
        self,
        session: Session,
        targets: list[ClaimTarget],
        agent_id: str,
        session_id: str | None,
        intent: str | None,
        ttl: int,
        force: bool,
    ) -> ClaimOutcome:
        ops = self._db.ops
        claims = _claims()
        keys = [target.key for target in targets]
        ops.lock_keys(session, _LOCK_NAMESPACE, keys)
        now = db_epoch(session, ops)
        self._prune(session, now)
        rows = {
            row.claim_key: row
            for row in session.execute(select(claims).where(claims.c.claim_key.in_(keys)).with_for_update())
        }
        open_rows = [row for row in rows.values() if row.released_at is None and row.agent_id != agent_id]
        labels = presence_labels(session, (row.agent_id for row in open_rows), now)

        plan: list[tuple[ClaimTarget, str, Row[Any] | None]] = []
        report: list[ClaimItem] = []
        conflict = False
        for target in targets:
            row = rows.get(target.key)
            if row is None:
                plan.append((target, "insert", None))
            elif row.released_at is not None:
                plan.append((target, "reuse", row))
            elif row.agent_id == agent_id:
                plan.append((target, "renew", row))
            else:
                presence = labels.get(row.agent_id, "unknown")
                live = int(row.expires_at) > now and presence != "stale"
                if not live:
                    plan.append((target, "takeover", row))
                elif force:
                    plan.append((target, "takeover_forced", row))
                else:
                    conflict = True
                    holder = ClaimHolder(
                        agent_id=row.agent_id,
                        intent=row.intent,
                        expires_in_seconds=max(0, int(row.expires_at) - now),
                        presence=presence,
                    )
                    report.append(ClaimItem(path=target.path, status="conflict", holder=holder))
                    continue
            report.append(ClaimItem(path=target.path, status="would_acquire"))
        if conflict:
            return ClaimOutcome(claimed=False, agent_id=agent_id, report=report)

        expires_at = now + ttl
        fresh = {
            "agent_id": agent_id,
            "session_id": session_id,
            "intent": intent,
            "claimed_at": now,
            "expires_at": expires_at,
            "heartbeat_seq": 0,
            "released_at": None,
        }
        report = []
        events: list[dict[str, Any]] = []
        for target, action, row in plan:
            previous: str | None = None
            if action == "insert":
                session.execute(insert(claims).values(claim_key=target.key, file_path=target.path, **fresh))
                status = "claimed"
            elif action == "reuse":
                self._guarded(
                    session,
                    update(claims)
                    .where(claims.c.claim_key == target.key, claims.c.released_at.is_not(None))
                    .values(file_path=target.path, **fresh),
                    target,
                )
                status = "claimed"
            elif action == "renew":
                values: dict[str, Any] = {
                    "file_path": target.path,
                    "expires_at": expires_at,
                    "heartbeat_seq": claims.c.heartbeat_seq + 1,
                }
                if intent is not None:
                    values["intent"] = intent
                if session_id is not None:
                    values["session_id"] = session_id
                self._guarded(
                    session,
                    update(claims)
                    .where(
                        claims.c.claim_key == target.key,
                        claims.c.agent_id == agent_id,
                        claims.c.released_at.is_(None),
                    )
                    .values(**values),
                    target,
                )
                status = "renewed"
            else:
                assert row is not None
                previous = row.agent_id
                guard = [claims.c.claim_key == target.key, claims.c.released_at.is_(None)]
                if action == "takeover":
                    guard.append(or_(claims.c.expires_at <= now, claims.c.agent_id == previous))
                    status = "taken_over"
                else:
                    guard.append(claims.c.agent_id == previous)
                    status = "taken_over_forced"
                self._guarded(session, update(claims).where(*guard).values(file_path=target.path, **fresh), target)
            report.append(ClaimItem(path=target.path, status=status, previous_holder=previous))
            events.append(
                {
                    "claim_key": target.key,
                    "file_path": target.path,
                    "agent_id": agent_id,
                    "action": status,
                    "previous_agent": previous,
                    "session_id": session_id if action != "renew" else (session_id or _opt(row, "session_id")),
                    "at": now,
                    "expires_at": expires_at,
                }
            )
        session.execute(insert(_events()), events)
        return ClaimOutcome(
            claimed=True, agent_id=agent_id, expires_at=expires_at, expires_in_seconds=ttl, report=report
        )

    @staticmethod
    def _guarded(session: Session, statement: Any, target: ClaimTarget) -> None:
        done = cast("CursorResult[Any]", session.execute(statement))
        if done.rowcount != 1:
            raise ConflictError(
                f"file_claim lost a race for {target.path} (another agent changed it) — NOTHING was claimed; retry"
            )

    def _prune(self, session: Session, now: int) -> None:
        claims = _claims()
        old = or_(
            (claims.c.released_at.is_not(None)) & (claims.c.released_at < now - PRUNE_AFTER),
            (claims.c.released_at.is_(None)) & (claims.c.expires_at < now - PRUNE_AFTER),
        )
        # SKIP LOCKED (PostgreSQL): never wait on, or deadlock with, a row another claim is using.
        stale_keys = select(claims.c.claim_key).where(old).with_for_update(skip_locked=True)
        session.execute(delete(claims).where(claims.c.claim_key.in_(stale_keys)))
        events = _events()
        session.execute(delete(events).where(events.c.at < now - HISTORY_KEEP))

    # ------------------------------------------------------------------ release
    def release(
        self,
        agent_id: str,
        *,
        root: Path | str,
        paths: Sequence[str] | None = None,
        all: bool = False,
    ) -> ReleaseOutcome:
        """Release your own claims: the given paths, or ``all`` of them. Idempotent."""
        agent_id = required_name(agent_id, "agent_id")
        if (paths is None or len(paths) == 0) == (not all):
            raise InvalidArgumentError(
                "file_release needs exactly one of: paths (the paths to release) or all=true (every claim you hold)"
            )
        claims = _claims()
        ops = self._db.ops
        if all:
            with self._db.write() as session:
                keys = list(
                    session.execute(
                        select(claims.c.claim_key).where(claims.c.agent_id == agent_id, claims.c.released_at.is_(None))
                    ).scalars()
                )
                freed = self._release_keys(session, keys, claims.c.agent_id == agent_id)
            items = [ReleaseItem(path=path, status="released") for path in sorted(freed.values(), key=str.lower)]
            return ReleaseOutcome(agent_id=agent_id, report=items)
        targets = normalise_claim_paths(list(paths or []), root, verb="file_release")
        keys = [target.key for target in targets]
        with self._db.write() as session:
            ops.lock_keys(session, _LOCK_NAMESPACE, keys)
            released = set(self._release_keys(session, keys, claims.c.agent_id == agent_id, locked=True))
            rows = {row.claim_key: row for row in session.execute(select(claims).where(claims.c.claim_key.in_(keys)))}
        report = []
        for target in targets:
            if target.key in released:
                report.append(ReleaseItem(path=target.path, status="released"))
                continue
            row = rows.get(target.key)
            held_by_other = row is not None and row.released_at is None and row.agent_id != agent_id
            report.append(ReleaseItem(path=target.path, status="not_held_by_you" if held_by_other else "not_found"))
        return ReleaseOutcome(agent_id=agent_id, report=report)

    def release_session(self, session_id: str) -> int:
        """Release every open claim tagged with ``session_id`` (a workspace session ending)."""
        if not session_id:
            return 0
        claims = _claims()
        with self._db.write() as session:
            keys = list(
                session.execute(
                    select(claims.c.claim_key).where(claims.c.session_id == session_id, claims.c.released_at.is_(None))
                ).scalars()
            )
            return len(self._release_keys(session, keys, claims.c.session_id == session_id))

    def _release_keys(self, session: Session, keys: list[str], owner: Any, *, locked: bool = False) -> dict[str, str]:
        """Release the open rows among ``keys`` that match ``owner`` (one event each); key → path."""
        if not keys:
            return {}
        ops = self._db.ops
        claims = _claims()
        if not locked:
            ops.lock_keys(session, _LOCK_NAMESPACE, keys)
        now = db_epoch(session, ops)
        rows = session.execute(
            select(claims).where(claims.c.claim_key.in_(keys), claims.c.released_at.is_(None), owner).with_for_update()
        ).all()
        if not rows:
            return {}
        session.execute(
            update(claims)
            .where(claims.c.claim_key.in_([row.claim_key for row in rows]), claims.c.released_at.is_(None), owner)
            .values(released_at=now)
        )
        session.execute(
            insert(_events()),
            [
                {
                    "claim_key": row.claim_key,
                    "file_path": row.file_path,
                    "agent_id": row.agent_id,
                    "action": "released",
                    "previous_agent": None,
                    "session_id": row.session_id,
                    "at": now,
                    "expires_at": None,
                }
                for row in rows
            ],
        )
        return {row.claim_key: row.file_path for row in rows}

    def release_stale(self, path: str) -> str:
        """Release another agent's claim by hand (``dokoro browse``), only when its holder is not live.

        ``path`` is the claim's path as :meth:`list` shows it (root-relative). The holder is live, as
        for a takeover, while the claim is unexpired and its presence is not stale. Outcomes:
        ``released`` | ``alreadyReleased`` | ``holderLive`` | ``missing``.
        """
        claim_key = path.replace("\\", "/").lower()
        claims = _claims()
        with self._db.write() as session:
            self._db.ops.lock_keys(session, _LOCK_NAMESPACE, [claim_key])
            row = session.execute(select(claims).where(claims.c.claim_key == claim_key).with_for_update()).first()
            if row is None:
                return "missing"
            if row.released_at is not None:
                return "alreadyReleased"
            now = db_epoch(session, self._db.ops)
            presence = presence_labels(session, [row.agent_id], now)[row.agent_id]
            if int(row.expires_at) > now and presence != "stale":
                return "holderLive"
            self._release_keys(session, [claim_key], claims.c.agent_id == row.agent_id, locked=True)
        return "released"

    # ------------------------------------------------------------------ read
    def history(self, path: str | None = None, *, root: Path | str | None = None) -> list[FileClaimEvent]:
        """The claim events, oldest first: all of them, or one path's (relative to ``root``)."""
        events = _events()
        statement = select(FileClaimEvent).order_by(events.c.id)
        if path is not None:
            if root is None:
                key = path.replace("\\", "/").lower()
            else:
                (target,) = normalise_claim_paths([path], root)
                key = target.key
            statement = statement.where(events.c.claim_key == key)
        with self._db.read() as session:
            return list(session.scalars(statement).all())

    def is_claimed(self, path: Path, root: Path) -> bool:
        """Does a live (open, unexpired) claim hold ``path``, keyed relative to ``root``?

        For sweeps that must leave claimed files alone; a path outside ``root`` is never claimed.
        """
        target = normalise_claim_path(str(path), clean_root(root))
        if isinstance(target, str):
            return False
        claims = _claims()
        with self._db.read() as session:
            now = db_epoch(session, self._db.ops)
            found = session.execute(
                select(claims.c.claim_key).where(
                    claims.c.claim_key == target.key, claims.c.released_at.is_(None), claims.c.expires_at > now
                )
            ).first()
        return found is not None

    def list(self, agent_id: str | None = None, *, include_expired: bool = False) -> list[Claim]:
        """Open claims (live ones only unless ``include_expired``), soonest to expire first."""
        agent = agent_id.strip() if agent_id is not None else ""
        statement = _LISTED[(bool(agent), include_expired)]
        # Cached Core statements in one short read transaction (no ORM session): the database clock,
        # the claims and their holders' presence.
        with self._db.reading() as connection:
            now = db_epoch(connection, self._db.ops)
            params: dict[str, Any] = {"now": now} if not include_expired else {}
            if agent:
                params["agent_id"] = agent
            rows = connection.execute(statement, params).all()
            labels = presence_labels(connection, (row.agent_id for row in rows), now)
        return [
            Claim(
                path=row.file_path,
                agent_id=row.agent_id,
                intent=row.intent,
                session_id=row.session_id,
                expires_at=int(row.expires_at),
                expires_in_seconds=int(row.expires_at) - now,
                heartbeat_seq=int(row.heartbeat_seq),
                presence=labels.get(row.agent_id, "unknown"),
            )
            for row in rows
        ]


def _opt(row: Row[Any] | None, name: str) -> Any:
    return None if row is None else getattr(row, name)
