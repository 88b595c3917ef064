"""Episodic memory tools: write a session summary, recall past sessions."""

from __future__ import annotations

from typing import Annotated

from dokoro_server import AppState, ToolSpec, result, secret_notice, state
from dokoro_server.bounds import Count, IsoDate, Key, Lines, Query, Text, TokenCount
from dokoro_store.results.episodic import EpisodeRecall, SummaryAdded
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field

__all__ = ["TOOLS", "recall_text"]


def dokoro_session_summary_add(
    ctx: Context[AppState],
    session_id: Annotated[Key, Field(description="Id of the session summarised (any stable string).")],
    ai_model: Annotated[Key, Field(description="Model that ran the session, e.g. claude-opus-4-7.")],
    summary: Annotated[Text, Field(description="What the session did, found and left open.")],
    key_decisions: Annotated[Lines | None, Field(description="Decisions taken.")] = None,
    key_topics: Annotated[Lines | None, Field(description="Topics touched.")] = None,
    message_count: Annotated[Count | None, Field(ge=0, description="Messages in the session.")] = None,
    token_count: Annotated[
        TokenCount | None, Field(ge=0, description="Tokens of the session; estimated from the summary when omitted.")
    ] = None,
) -> Annotated[CallToolResult, SummaryAdded]:
    """Write an episodic summary at session end, so a later session can recall it. A session
    whose summaries pass 40,000 tokens is compacted into one retained entry."""
    added = state(ctx).store.episodic.add_summary(
        session_id,
        ai_model,
        summary,
        key_decisions=key_decisions,
        key_topics=key_topics,
        message_count=message_count,
        token_count=token_count,
    )
    out = added.result()
    text = f"summary recorded for session {out.session_id}"
    if out.compaction is not None:
        text += f" (compacted {out.compaction.compacted_count} summaries, ~{out.compaction.total_tokens} tokens)"
    if out.redacted:
        text += "\n" + secret_notice(out.redacted)
    return result(text, out)


def dokoro_session_recall(
    ctx: Context[AppState],
    query: Annotated[
        Query | None,
        Field(description="What was done, in any words: matched by meaning, by its words in any order, and as text."),
    ] = None,
    session_id: Annotated[Key | None, Field(description="Only this session.")] = None,
    since: Annotated[
        IsoDate | None, Field(description="ISO-8601 lower bound, e.g. 2026-05-12 or 2026-05-12T09:00:00Z.")
    ] = None,
    until: Annotated[IsoDate | None, Field(description="ISO-8601 upper bound (inclusive), e.g. 2026-05-19.")] = None,
    limit: Annotated[int, Field(ge=1, le=100, description="How many summaries to return.")] = 10,
) -> Annotated[CallToolResult, EpisodeRecall]:
    """Recall summaries of past sessions: what was done before, to resume work. With a query, summaries
    sharing its words (in any order), close to it in meaning, or containing it are ranked by meaning with
    the word matches as a second signal, so an old but relevant session comes first; otherwise newest
    first. `ranking` says how the hits were ranked."""
    recalled = state(ctx).store.episodic.recall_ranked(
        query=query, session_id=session_id, since=since, until=until, limit=limit
    )
    out = recalled.result()
    text = recall_text(out)
    if query and (notice := state(ctx).store.search.vector_notice()):
        # A process that cannot compare vectors on this store says so (one embedder per store).
        text += f"\n\nnote: {notice}"
    return result(text, out)


def recall_text(out: EpisodeRecall) -> str:
    """Recalled sessions as dokoro_session_recall and the ``dokoro://sessions/recent`` resource show them."""
    from dokoro_store import iso

    if not out.episodes:
        return "(no past sessions)"
    blocks = []
    for e in out.episodes:
        msgs = e.message_count if e.message_count is not None else "null"
        # The reference's line; the similarity only when these are the nearest, not matches.
        similar = f" similarity={e.similarity:.3f}" if e.similarity is not None and not out.close_match else ""
        head = f"[{iso(e.started_at)}] session={e.session_id} model={e.ai_model} msgs={msgs}{similar}"
        blocks.append(f"{head}\n  {e.summary}")
    text = "\n\n".join(blocks)
    if not out.close_match:
        return f"(no close match; the nearest are below)\n\n{text}\n\n({out.ranking})"
    if out.ranking != "recency":  # a query was given: say how the matches were ordered
        text += f"\n\n(ranked by {out.ranking})"
    return text


TOOLS = [
    # Destructive: past 40,000 tokens a session's summaries are replaced by one compacted entry.
    ToolSpec(dokoro_session_summary_add, "Add a session summary", destructive=True),
    # Not read-only: a summary without a vector of the current embedder is embedded and the vector kept.
    ToolSpec(dokoro_session_recall, "Recall past sessions", idempotent=True),
]
