"""Results of the episodic layer: session summaries written and recalled."""

from __future__ import annotations

from pydantic import Field

from dokoro_store.results.base import IsoTime, Result

__all__ = ["Compaction", "Episode", "EpisodeRecall", "SummaryAdded"]


class Compaction(Result):
    """A session's summaries folded into one retained entry."""

    compacted_count: int
    total_tokens: int


class SummaryAdded(Result):
    id: int
    session_id: str
    compaction: Compaction | None = None  # set when this summary made the session pass the threshold
    redacted: tuple[str, ...] = ()  # kinds of secret removed before the summary was stored


class Episode(Result):
    """One recalled session summary."""

    id: int
    session_id: str | None
    ai_model: str
    summary: str
    started_at: IsoTime
    message_count: int | None
    token_count: int | None
    key_decisions: list[str]
    key_topics: list[str]
    compacted: bool
    similarity: float | None = Field(
        default=None, description="Cosine of the summary with the query, when recall compared them by meaning."
    )


class EpisodeRecall(Result):
    # "recency" (no query), or "relevance (similarity by <embedder>, …; full text n, substring n; n candidates)",
    # or "relevance without similarity (<why>; …)", or "nearest by meaning …" / "most recent …" (no close match).
    ranking: str
    episodes: list[Episode]
    close_match: bool = Field(
        default=True,
        description="False when nothing matched the query's words or came close in meaning: the episodes are then "
        "only the nearest ones (or the most recent, without an embedder), not answers.",
    )
