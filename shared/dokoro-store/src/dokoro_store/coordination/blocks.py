"""Shared blocks: named texts agents rewrite with compare-and-set on a version (reference §2.8).

Writing with ``expected_version`` succeeds only if the block is still at that version, so two
agents editing one block never silently overwrite each other; omitting it is last-writer-wins.
"""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import CursorResult, update
from sqlmodel import col, select

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.errors import ConflictError, InvalidArgumentError
from dokoro_store.models import SharedBlock
from dokoro_store.results.coordination import Block, BlockWrite
from dokoro_store.walls.names import required_name

__all__ = ["MAX_BLOCK", "BlockService"]

MAX_BLOCK = 100_000
_LOCK_NAMESPACE = "shared_block"


class BlockService:
    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock

    def write(self, block_key: str, content: str, agent_id: str, *, expected_version: int | None = None) -> BlockWrite:
        block_key = required_name(block_key, "block_key")
        agent_id = required_name(agent_id, "agent_id")
        if len(content) > MAX_BLOCK:
            raise InvalidArgumentError(f"content is {len(content)} characters; at most {MAX_BLOCK}")
        if expected_version is not None and expected_version < 0:
            raise InvalidArgumentError(f"expected_version must be 0 or more; got {expected_version}")
        now = self._clock.now()
        with self._db.write() as session:
            self._db.ops.lock_keys(session, _LOCK_NAMESPACE, [block_key])
            current = session.get(SharedBlock, block_key)
            if current is None:
                if expected_version not in (None, 0):
                    raise ConflictError(
                        f"conflict: block '{block_key}' does not exist (expected_version={expected_version}); "
                        "create it with expected_version=0 or without expected_version"
                    )
                block = SharedBlock(
                    block_key=block_key, content=content, version=1, updated_by=agent_id, created_at=now, updated_at=now
                )
                session.add(block)
                session.flush()
                return BlockWrite(block=_block(block, content=False), created=True)
            version = current.version
            if expected_version is not None and expected_version != version:
                raise ConflictError(
                    f"conflict: block '{block_key}' is at version {version}, not {expected_version} — re-read and retry"
                )
            done = cast(
                "CursorResult[Any]",
                session.execute(
                    update(SharedBlock)
                    .where(col(SharedBlock.block_key) == block_key, col(SharedBlock.version) == version)
                    .values(content=content, version=version + 1, updated_by=agent_id, updated_at=now)
                ),
            )
            if done.rowcount != 1:
                raise ConflictError(f"conflict: block '{block_key}' changed concurrently — re-read and retry")
            session.expire_all()
            written = session.get(SharedBlock, block_key)
            assert written is not None
            return BlockWrite(block=_block(written, content=False), created=False)

    def read(self, block_key: str) -> Block | None:
        """The block with its text, or None."""
        block_key = required_name(block_key, "block_key")
        with self._db.read() as session:
            row = session.get(SharedBlock, block_key)
            return None if row is None else _block(row, content=True)

    def list(self) -> list[Block]:
        """Every block without its text, most recently updated first."""
        with self._db.read() as session:
            rows = session.exec(
                select(SharedBlock).order_by(col(SharedBlock.updated_at).desc(), col(SharedBlock.block_key))
            )
            return [_block(row, content=False) for row in rows]


def _block(row: SharedBlock, *, content: bool) -> Block:
    """The block's result; a write or a listing leaves the text out (the caller has it, or reads it)."""
    return Block(
        block_key=row.block_key,
        version=row.version,
        updated_by=row.updated_by,
        updated_at=row.updated_at,
        created_at=row.created_at,
        content=row.content if content else None,
    )
