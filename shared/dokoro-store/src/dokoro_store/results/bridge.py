"""Results of the tachibot bridge (reference §2.14): research indexed as documents, plans imported
as plan rows, and the context the bridge hands back to tachibot."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from dokoro_store.results.base import IsoTime, Result

__all__ = [
    "RESEARCH_SOURCES",
    "BridgeContext",
    "ContextEntry",
    "ContextPlan",
    "PlanImported",
    "ResearchIndexed",
    "ResearchSource",
]

# The tachibot tools whose answers the bridge indexes (reference §2.14).
ResearchSource = Literal[
    "perplexity_ask",
    "perplexity_reason",
    "perplexity_research",
    "grok_reason",
    "grok_search",
    "openai_reason",
    "openai_search",
    "gemini_search",
    "gemini_analyze_code",
    "gemini_analyze_text",
]
RESEARCH_SOURCES: tuple[ResearchSource, ...] = (
    "perplexity_ask",
    "perplexity_reason",
    "perplexity_research",
    "grok_reason",
    "grok_search",
    "openai_reason",
    "openai_search",
    "gemini_search",
    "gemini_analyze_code",
    "gemini_analyze_text",
)


class ResearchIndexed(Result):
    """A research answer stored as a document under its deterministic id."""

    doc_id: str
    source: ResearchSource
    query: str
    title: str
    filepath: str
    # indexed: a new document; reindexed: its content changed; unchanged: nothing was written.
    action: Literal["indexed", "reindexed", "unchanged"]
    chunks: int
    tokens: int
    vectors: int
    embedder: str | None
    notes: list[str]
    redacted: list[str]


class PlanImported(Result):
    """A tachibot plan stored as an ordinary plan (row, items and ``.mcp/plans`` mirror)."""

    plan_id: str
    title: str
    description: str
    status: Literal["draft", "active"]
    items: list[str]
    mirror: str  # relative to the workspace folder
    created_at: IsoTime
    redacted: list[str]


class ContextEntry(Result):
    """One document of the context, as hybrid search ranked it."""

    rank: int
    doc_id: str
    doc_type: str
    title: str
    filepath: str
    score: float
    source: str  # hybrid | keyword | semantic
    why: str
    excerpt: str
    updated_at: IsoTime
    retired: str | None = Field(
        default=None, description="A memory that no longer holds (superseded, archived, deprecated): which, in words."
    )
    stale: str | None = Field(
        default=None,
        description="A memory in force but stale (past valid_until or review_after, or depending on a retired "
        "memory): why, in words starting with 'stale'.",
    )


class ContextPlan(Result):
    """A live plan whose title and items are close to the query."""

    plan_id: str
    title: str
    status: str
    completion: int
    done: int
    total: int
    next_item: str | None
    similarity: float | None  # cosine to the query; None when matched by shared words


class BridgeContext(Result):
    """What dokoro knows about a query: documents first, then related live plans."""

    query: str
    include_research: bool
    include_plans: bool
    entries: list[ContextEntry]
    plans: list[ContextPlan]
    searched: int  # documents hybrid search returned before the type filter
    notes: list[str]
