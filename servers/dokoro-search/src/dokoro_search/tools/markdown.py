"""Markdown tools: grep the workspace files, list recent ones (reference §2.12)."""

from __future__ import annotations

from typing import Annotated, Literal

from dokoro_server import AppState, ToolSpec, card, result, state
from dokoro_server.bounds import Mapping, Query
from dokoro_store.results.search import MarkdownHit, MarkdownResults
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field

__all__ = ["TOOLS"]


def _render(hits: list[MarkdownHit]) -> str:
    from dokoro_store import iso

    blocks = []
    for i, h in enumerate(hits, start=1):
        lines = [f"**{i}. {h.title}** ({h.file}, modified {iso(h.last_modified)})"]
        if h.tags:
            lines.append(f"Tags: {h.tags}")
        if h.excerpt:
            lines.append(f"> {h.excerpt}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def search_dokoros(
    ctx: Context[AppState],
    query: Annotated[Query, Field(description="Text the title or body contains (case-insensitive); empty = any.")] = "",
    type: Annotated[
        Literal["insights", "decisions", "features", "daily", "current", "all"],
        Field(description="Which folder to search, or current.md, or all markdown."),
    ] = "all",
    limit: Annotated[int, Field(ge=1, le=100, description="How many files to return.")] = 10,
    tags: Annotated[
        Mapping | None,
        Field(description='Front-matter tag filter, e.g. {"type": "decision"}; every key must match.'),
    ] = None,
) -> Annotated[CallToolResult, MarkdownResults]:
    """Grep the workspace markdown files (daily notes, decisions, insights, features, current.md) by a plain
    substring and front-matter tags, newest first. For meaning-based search use search_universal."""
    from dokoro_store import redact, search_markdown

    store = state(ctx).store
    hits = search_markdown(store.paths.root, query, type, limit, tags)
    if not hits:
        return result(
            card("No Matches", f"No markdown under {type!r} matches {redact(query).text!r}.", status="info"),
            MarkdownResults(results=[]),
        )
    return result(f"📄 {len(hits)} file(s):\n\n" + _render(hits), MarkdownResults(results=hits))


def list_recent_dokoros(
    ctx: Context[AppState],
    days: Annotated[int, Field(ge=1, le=3650, description="Modified within this many days.")] = 7,
    type: Annotated[
        Literal["posts", "ideas", "features", "all"],
        Field(description="posts/, ideas-to-verify/, features/, or all markdown of the folder."),
    ] = "all",
) -> Annotated[CallToolResult, MarkdownResults]:
    """List the workspace markdown files changed in the last N days, newest first."""
    from dokoro_store import recent_markdown

    store = state(ctx).store
    hits = recent_markdown(store.paths.root, store.clock.now(), days, type)
    if not hits:
        return result(
            card("Nothing Recent", f"No markdown changed in the last {days} day(s).", status="info"),
            MarkdownResults(results=[]),
        )
    return result(
        f"🕒 {len(hits)} file(s) changed in the last {days} day(s):\n\n" + _render(hits), MarkdownResults(results=hits)
    )


TOOLS = [
    ToolSpec(search_dokoros, "Grep workspace markdown", read_only=True, idempotent=True),
    ToolSpec(list_recent_dokoros, "Recent workspace markdown", read_only=True, idempotent=True),
]
