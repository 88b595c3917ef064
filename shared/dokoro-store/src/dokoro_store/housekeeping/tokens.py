"""Bearer tokens for the shared HTTP server: each maps to one agent id; only hashes are stored."""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import timedelta

from sqlmodel import col, select

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.errors import InvalidArgumentError, NotFoundError
from dokoro_store.models import ApiToken

__all__ = ["IssuedToken", "TokenIdentity", "TokenService"]

_AGENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$")
# Writing last_used_at on every request would turn every read into a write; once a minute is enough.
_TOUCH_EVERY = timedelta(minutes=1)


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class IssuedToken:
    id: str
    agent_id: str
    token: str  # shown once; never stored
    operator: bool = False


@dataclass(frozen=True)
class TokenIdentity:
    """Who a live token speaks for: an agent, and whether it is the operator's (whole-store actions)."""

    agent_id: str
    operator: bool


class TokenService:
    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock

    def create(self, agent_id: str, label: str | None = None, *, operator: bool = False) -> IssuedToken:
        """A new token for ``agent_id`` (shown once); ``operator``: it may also run the whole-store
        actions over HTTP (a full reindex)."""
        agent_id = agent_id.strip()
        if not _AGENT.match(agent_id):
            raise InvalidArgumentError(
                "agent id must be 1-128 characters of letters, digits, '.', '_', '@' or '-', e.g. claude-alice"
            )
        token_id = f"tok_{secrets.token_hex(4)}"
        token = f"dkr_{token_id[4:]}_{secrets.token_urlsafe(32)}"
        with self._db.write() as session:
            session.add(
                ApiToken(
                    id=token_id,
                    agent_id=agent_id,
                    token_hash=_hash(token),
                    label=label,
                    created_at=self._clock.now(),
                    operator=operator,
                )
            )
        return IssuedToken(token_id, agent_id, token, operator)

    def verify(self, token: str) -> str | None:
        """The agent id a live token belongs to, or None."""
        found = self.identity(token)
        return found.agent_id if found is not None else None

    def identity(self, token: str) -> TokenIdentity | None:
        """Who a live token speaks for, or None (unknown or revoked)."""
        if not token:
            return None
        digest = _hash(token.strip())
        with self._db.read() as session:
            row = session.exec(
                select(ApiToken).where(ApiToken.token_hash == digest, col(ApiToken.revoked_at).is_(None))
            ).first()
        if row is None:
            return None
        now = self._clock.now()
        if row.last_used_at is None or now - row.last_used_at >= _TOUCH_EVERY:
            with self._db.write() as session:
                fresh = session.get(ApiToken, row.id)
                if fresh is not None:
                    fresh.last_used_at = now
                    session.add(fresh)
        return TokenIdentity(row.agent_id, bool(row.operator))

    def list(self) -> list[ApiToken]:
        with self._db.read() as session:
            return list(session.exec(select(ApiToken).order_by(col(ApiToken.created_at))))

    def revoke(self, token_id: str) -> ApiToken:
        with self._db.write() as session:
            row = session.get(ApiToken, token_id)
            if row is None:
                raise NotFoundError(f"no token {token_id!r}; list them with `dokoro token list`")
            if row.revoked_at is None:
                row.revoked_at = self._clock.now()
                session.add(row)
        return row

    def any_live(self) -> bool:
        with self._db.read() as session:
            return session.exec(select(ApiToken.id).where(col(ApiToken.revoked_at).is_(None))).first() is not None
