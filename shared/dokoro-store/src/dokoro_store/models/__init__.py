"""Tables of the store (SQLModel), one module per memory layer.

Schema changes go through the Alembic migrations in ``dokoro_store/db/migrations``; importing
this package registers every table on ``SQLModel.metadata``.
"""

from dokoro_store.models.auth import ApiToken
from dokoro_store.models.docs import Doc
from dokoro_store.models.episodic import ConversationSummary, EpisodeSession
from dokoro_store.models.working import Question

__all__ = ["ApiToken", "ConversationSummary", "Doc", "EpisodeSession", "Question"]
