"""Tables of the store (SQLModel), one module per memory layer.

Schema changes go through the Alembic migrations in ``dokoro_store/db/migrations``. Each table's
module is imported when one of its names is first asked for (``from dokoro_store.models import
Memory`` imports the memories' tables only: building SQLModel classes is a good part of a command's
start-up); :func:`register_all` imports every module, for the code that needs the whole schema on
``SQLModel.metadata`` (the schema check, store migrate).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from dokoro_store.lazy import lazy_exports

if TYPE_CHECKING:
    from dokoro_store.models.affective import AgentFeedback
    from dokoro_store.models.auth import ApiToken
    from dokoro_store.models.capture import CaptureMark
    from dokoro_store.models.coordination import (
        AgentPresence,
        FileClaim,
        FileClaimEvent,
        Handoff,
        SharedBlock,
        SharedNote,
    )
    from dokoro_store.models.docs import Doc
    from dokoro_store.models.episodic import ConversationSummary, EpisodeSession
    from dokoro_store.models.graph import DocEntity, Entity, EntityContentHash, EntityRelation
    from dokoro_store.models.memories import Memory, MemoryConflict, MemoryEntity, MemoryLink, MemoryTombstone
    from dokoro_store.models.memory_settings import MemoryTypeSwitch
    from dokoro_store.models.procedural import Plan, PlanItem
    from dokoro_store.models.proposals import MemoryProposal
    from dokoro_store.models.tracking import TaskTimer, TrackingEvent, TrackingItem, WeeklyItem
    from dokoro_store.models.working import Question

__all__ = [
    "AgentFeedback",
    "AgentPresence",
    "ApiToken",
    "CaptureMark",
    "ConversationSummary",
    "Doc",
    "DocEntity",
    "Entity",
    "EntityContentHash",
    "EntityRelation",
    "EpisodeSession",
    "FileClaim",
    "FileClaimEvent",
    "Handoff",
    "Memory",
    "MemoryConflict",
    "MemoryEntity",
    "MemoryLink",
    "MemoryProposal",
    "MemoryTombstone",
    "MemoryTypeSwitch",
    "Plan",
    "PlanItem",
    "Question",
    "SharedBlock",
    "SharedNote",
    "TaskTimer",
    "TrackingEvent",
    "TrackingItem",
    "WeeklyItem",
]

_HOMES = {
    "AgentFeedback": "affective",
    "AgentPresence": "coordination",
    "ApiToken": "auth",
    "CaptureMark": "capture",
    "ConversationSummary": "episodic",
    "Doc": "docs",
    "DocEntity": "graph",
    "Entity": "graph",
    "EntityContentHash": "graph",
    "EntityRelation": "graph",
    "EpisodeSession": "episodic",
    "FileClaim": "coordination",
    "FileClaimEvent": "coordination",
    "Handoff": "coordination",
    "Memory": "memories",
    "MemoryConflict": "memories",
    "MemoryEntity": "memories",
    "MemoryLink": "memories",
    "MemoryTombstone": "memories",
    "MemoryProposal": "proposals",
    "MemoryTypeSwitch": "memory_settings",
    "Plan": "procedural",
    "PlanItem": "procedural",
    "Question": "working",
    "SharedBlock": "coordination",
    "SharedNote": "coordination",
    "TaskTimer": "tracking",
    "TrackingEvent": "tracking",
    "TrackingItem": "tracking",
    "WeeklyItem": "tracking",
}


def register_all() -> None:
    """Import every table's module, so ``SQLModel.metadata`` holds the whole schema."""
    for module in sorted(set(_HOMES.values())):
        importlib.import_module(f"dokoro_store.models.{module}")


__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
