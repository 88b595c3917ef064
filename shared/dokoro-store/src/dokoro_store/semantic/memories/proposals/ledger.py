"""The one writer of the proposals ledger (``memory_proposals``): filing candidates and recording
a decision, each in the caller's write session.

A proposal's id is derived from its key (what it is about), so filing is idempotent: a key filed
before — proposed, approved or rejected — is never filed again, even by two processes at once
(the insert does nothing on a clash of ids). Secrets are redacted below, by the database's own
hook (:mod:`dokoro_store.db.redaction`), as in every write. This module holds no memory row: the memory rows
a decision changes are written by :mod:`.repository`, in the same transaction.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime

from sqlmodel import Session, col, select

from dokoro_store.db.dialect import DialectOps
from dokoro_store.db.model_tables import table_of
from dokoro_store.models.proposals import MemoryProposal
from dokoro_store.results.proposals import Proposal
from dokoro_store.semantic.memories.proposals.proposers import Candidate

__all__ = [
    "STATUSES",
    "decide",
    "file",
    "onboarded_memories",
    "open_of_kind",
    "open_proposals",
    "proposal_id",
    "result",
]

STATUSES = ("proposed", "approved", "rejected")
_TABLE = table_of(MemoryProposal)


def proposal_id(key: str) -> str:
    """The id of the proposal about ``key``: ``prop_<10 hex>``, the same wherever it is filed."""
    return "prop_" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:10]


def result(row: MemoryProposal) -> Proposal:
    """The public result of a ledger row."""
    return Proposal.model_validate(row, from_attributes=True)


def open_proposals(session: Session, *, limit: int) -> list[MemoryProposal]:
    """The proposals waiting for a decision, oldest first (at most ``limit``)."""
    return list(
        session.exec(
            select(MemoryProposal)
            .where(col(MemoryProposal.status) == "proposed")
            .order_by(col(MemoryProposal.created_at), col(MemoryProposal.id))
            .limit(limit)
        )
    )


def open_of_kind(session: Session, kind: str, *, limit: int) -> list[MemoryProposal]:
    """The open proposals of one kind, oldest first (at most ``limit``), locked for a decision."""
    return list(
        session.exec(
            select(MemoryProposal)
            .where(col(MemoryProposal.status) == "proposed", col(MemoryProposal.kind) == kind)
            .order_by(col(MemoryProposal.created_at), col(MemoryProposal.id))
            .limit(limit)
            .with_for_update()
        )
    )


def onboarded_memories(session: Session, topic: str) -> list[str]:
    """The memories approved onboarding proposals on ``topic`` wrote (their evidence names them)."""
    rows = session.exec(
        select(MemoryProposal).where(col(MemoryProposal.kind) == "onboard", col(MemoryProposal.status) == "approved")
    )
    return [str(r.evidence["memory"]) for r in rows if r.evidence.get("topic") == topic and r.evidence.get("memory")]


def file(session: Session, ops: DialectOps, candidates: Sequence[Candidate], *, now: datetime) -> list[str]:
    """File the candidates not filed before; the ids of those filed now."""
    by_id = {proposal_id(c.key): c for c in candidates}
    if not by_id:
        return []
    known = set(session.exec(select(MemoryProposal.id).where(col(MemoryProposal.id).in_(list(by_id)))))
    new = {pid: c for pid, c in by_id.items() if pid not in known}
    if not new:
        return []
    rows = []
    for pid, c in new.items():
        rows.append(
            {
                "id": pid,
                "key": c.key,
                "kind": c.kind,
                "title": c.title,
                "evidence": c.evidence,
                "memory_ids": list(c.memory_ids),
                "owners": list(c.owners),
                "status": "proposed",
                "created_at": now,
                "decided_at": None,
                "decided_by": None,
                "outcome": None,
            }
        )
    # Another process filing the same proposal meanwhile: its row stands, this one is skipped.
    session.execute(ops.upsert_many(_TABLE, rows, ["id"], None))
    return sorted(new)


def decide(session: Session, row: MemoryProposal, status: str, *, now: datetime, by: str | None, outcome: str) -> None:
    """Record the decision on ``row`` (of ``session``): who, when, and what came of it."""
    row.status = status
    row.decided_at = now
    row.decided_by = by
    row.outcome = outcome
    session.add(row)
    session.flush()
