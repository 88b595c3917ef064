"""The coordination layer: who else is working here, and on what (``store.coord``)."""

from __future__ import annotations

from dataclasses import dataclass

from dokoro_store.clock import Clock
from dokoro_store.coordination.blocks import BlockService
from dokoro_store.coordination.claims.service import ClaimService
from dokoro_store.coordination.handoffs import HandoffService
from dokoro_store.coordination.notes import NoteService
from dokoro_store.coordination.presence import PresenceService
from dokoro_store.db.engine import Database

__all__ = ["Coordination"]


@dataclass(frozen=True)
class Coordination:
    """Presence, advisory file claims, shared notes, shared blocks and handoffs."""

    presence: PresenceService
    claims: ClaimService
    notes: NoteService
    blocks: BlockService
    handoffs: HandoffService

    @classmethod
    def open(cls, db: Database, clock: Clock) -> Coordination:
        return cls(
            presence=PresenceService(db),
            claims=ClaimService(db),
            notes=NoteService(db, clock),
            blocks=BlockService(db, clock),
            handoffs=HandoffService(db, clock),
        )
