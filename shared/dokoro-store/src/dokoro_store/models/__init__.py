"""Tables of the store (SQLModel), one module per memory layer.

Schema changes go through the Alembic migrations in ``dokoro_store/db/migrations``; importing
this package registers every table on ``SQLModel.metadata``.
"""

from dokoro_store.models.affective import AgentFeedback
from dokoro_store.models.auth import ApiToken
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
from dokoro_store.models.memories import Memory, MemoryConflict, MemoryEntity, MemoryLink
from dokoro_store.models.memory_settings import MemoryTypeSwitch
from dokoro_store.models.procedural import Plan, PlanItem
from dokoro_store.models.proposals import MemoryProposal
from dokoro_store.models.tracking import TaskTimer, TrackingEvent, TrackingItem, WeeklyItem
from dokoro_store.models.working import Question

__all__ = [
    "AgentFeedback",
    "AgentPresence",
    "ApiToken",
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
