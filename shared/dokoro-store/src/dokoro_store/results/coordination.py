"""Results of the coordination layer: presence, file claims, shared notes, blocks and handoffs.

Presence heartbeats are ISO timestamps; claim leases stay whole unix seconds of the database
clock (``expires_at``), as the reference reports them.
"""

from __future__ import annotations

from typing import Any

from dokoro_store.results.base import IsoTime, Result

__all__ = [
    "Block",
    "BlockList",
    "BlockRead",
    "BlockWrite",
    "Claim",
    "ClaimHolder",
    "ClaimItem",
    "ClaimList",
    "ClaimOutcome",
    "Handoff",
    "HandoffInbox",
    "Note",
    "NoteList",
    "Presence",
    "PresenceList",
    "ReleaseItem",
    "ReleaseOutcome",
]


# ---------------------------------------------------------------------------------------------- presence


class Presence(Result):
    """An agent's last heartbeat, and how long ago it was (database clock)."""

    agent_id: str
    session_id: str | None
    status: str
    current_focus: str | None
    last_heartbeat: IsoTime
    seconds_ago: int
    heartbeat_seq: int


class PresenceList(Result):
    """The agents seen within ``ttl_seconds``, most recent first."""

    ttl_seconds: int
    agents: list[Presence]


# ---------------------------------------------------------------------------------------------- claims


class ClaimHolder(Result):
    """Who holds a path another agent asked for."""

    agent_id: str
    intent: str | None
    expires_in_seconds: int
    presence: str


class ClaimItem(Result):
    """One path of a claim: claimed | renewed | taken_over | taken_over_forced | conflict | would_acquire."""

    path: str
    status: str
    holder: ClaimHolder | None = None
    previous_holder: str | None = None


class ClaimOutcome(Result):
    """An all-or-nothing claim: every path acquired (``claimed``), or none and who holds what."""

    claimed: bool
    agent_id: str
    expires_at: int | None = None
    expires_in_seconds: int | None = None
    report: list[ClaimItem]

    @property
    def conflicts(self) -> list[ClaimItem]:
        return [item for item in self.report if item.status == "conflict"]


class ReleaseItem(Result):
    """One path of a release: released | not_held_by_you | not_found."""

    path: str
    status: str


class ReleaseOutcome(Result):
    agent_id: str
    report: list[ReleaseItem]

    @property
    def released(self) -> list[str]:
        return [item.path for item in self.report if item.status == "released"]


class Claim(Result):
    """An open claim: its holder, lease (unix seconds) and the holder's presence (live | stale | unknown)."""

    path: str
    agent_id: str
    intent: str | None
    session_id: str | None
    expires_at: int
    expires_in_seconds: int
    heartbeat_seq: int
    presence: str


class ClaimList(Result):
    claims: list[Claim]


# ---------------------------------------------------------------------------------------------- notes


class Note(Result):
    """A shared note (append-only)."""

    id: int
    agent_id: str
    note_type: str
    content: str
    created_at: IsoTime
    metadata: dict[str, Any] | None = None


class NoteList(Result):
    notes: list[Note]


# ---------------------------------------------------------------------------------------------- blocks


class Block(Result):
    """A shared block at one version; ``content`` only when the block was read."""

    block_key: str
    version: int
    updated_by: str
    updated_at: IsoTime
    created_at: IsoTime
    content: str | None = None


class BlockWrite(Result):
    block: Block
    created: bool


class BlockRead(Result):
    found: bool
    block: Block | None = None


class BlockList(Result):
    blocks: list[Block]


# ---------------------------------------------------------------------------------------------- handoffs


class Handoff(Result):
    """Work handed over: open until exactly one taker claims it."""

    id: int
    from_agent: str
    to_agent: str | None
    session_id: str | None
    summary: str
    open_items: list[str]
    status: str
    claimed_by: str | None
    created_at: IsoTime
    claimed_at: IsoTime | None


class HandoffInbox(Result):
    handoffs: list[Handoff]
