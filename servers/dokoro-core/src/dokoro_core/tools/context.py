"""Context-inspector tools: log what went into an agent's context, read it back, search it."""

from __future__ import annotations

import json
from typing import Annotated

from dokoro_server import AppState, ToolSpec, result, state
from dokoro_server.bounds import Mapping, Query
from dokoro_store.results.context import ContextEvents, ContextLogged
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field

__all__ = ["TOOLS"]


def dokoro_context_log(
    ctx: Context[AppState],
    event: Annotated[
        Mapping,
        Field(
            description=(
                'A context_inspect event: {"event": "context_inspect", "timestamp": ISO-8601, "totalEstimate": n, '
                '"layers": [{"name", "reason", "tokenEstimate", "contentSnippet", "score"?, "source"?}], '
                '"sessionId"?, "turn"?, "budgetTokens"?, "dropped"?: [{"reason", "source"?, "score"?, '
                '"tokenEstimate"?}]}'
            )
        ),
    ],
) -> Annotated[CallToolResult, ContextLogged]:
    """Record what was put into (and dropped from) an agent's context for one turn; snippets are
    cut to 500 characters. Stored as JSON lines in context-inspect/<date>.jsonl."""
    logged = state(ctx).store.context.log(event)
    turn = "?" if logged.turn is None else str(logged.turn)
    text = f"logged context_inspect (turn={turn}, layers={logged.layers}) -> {logged.file}"
    return result(text, logged)


def dokoro_context_last(
    ctx: Context[AppState],
    limit: Annotated[int, Field(ge=1, le=500, description="How many events.")] = 5,
) -> Annotated[CallToolResult, ContextEvents]:
    """The most recent context-inspector events, newest first, as a JSON array."""
    events = state(ctx).store.context.last(limit)
    text = json.dumps(events, ensure_ascii=False, indent=2) if events else "(no context events)"
    return result(text, ContextEvents(events=events))


def dokoro_context_search(
    ctx: Context[AppState],
    query: Annotated[Query, Field(description="Text to find in session ids and layer reasons, snippets or sources.")],
    limit: Annotated[int, Field(ge=1, le=500, description="How many events.")] = 10,
) -> Annotated[CallToolResult, ContextEvents]:
    """Find context-inspector events (newest first, among the newest 5,000) mentioning a text,
    case-insensitively. Returns a JSON array."""
    events = state(ctx).store.context.search(query, limit)
    text = json.dumps(events, ensure_ascii=False, indent=2) if events else "(no matching context events)"
    return result(text, ContextEvents(events=events))


TOOLS = [
    ToolSpec(dokoro_context_log, "Log a context-inspector event"),
    ToolSpec(dokoro_context_last, "Latest context-inspector events", read_only=True, idempotent=True),
    ToolSpec(dokoro_context_search, "Search context-inspector events", read_only=True, idempotent=True),
]
