"""Ambient context: what the project is doing now (git), and what memory says about it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from dokoro_server import AppState, ToolSpec, card, over_http, result, state
from dokoro_server.bounds import PathText
from dokoro_store.results.search import AmbientResult
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult
from pydantic import Field

from dokoro_search.tools.search import render_hits

__all__ = ["TOOLS"]


def dokoro_ambient_context(
    ctx: Context[AppState],
    projectPath: Annotated[
        PathText | None,
        Field(
            description="A git checkout inside the project the server was started for (default: the project itself)."
        ),
    ] = None,
    limit: Annotated[int, Field(ge=1, le=50, description="How many related documents to return.")] = 10,
) -> Annotated[CallToolResult, AmbientResult]:
    """Read what the project is doing right now from git (branch, last commits, changed files), turn it into
    a search query, and return the memory documents that match it: context to resume work with."""
    app = state(ctx)
    if over_http(ctx) and not app.settings.ambient_over_http:
        raise ToolError(
            "dokoro_ambient_context is off over HTTP: it runs git on the server's disk. The server's operator "
            "can turn it on with DOKORO_AMBIENT_OVER_HTTP=true; otherwise call it from a stdio server in your project"
        )
    path = Path(projectPath).expanduser() if projectPath else app.cwd
    if not path.is_absolute():
        path = app.cwd / path
    out = app.store.search.ambient(path, limit=limit, project_root=app.cwd)
    details = {
        "Branch": out.branch or "?",
        "Query": out.query or "(no keywords)",
        "Branch keywords": ", ".join(out.branch_keywords) or "-",
        "Commit keywords": ", ".join(out.commit_keywords) or "-",
        "File keywords": ", ".join(out.file_keywords) or "-",
        "Commits": len(out.commits),
        "Changed files": len(out.files),
    }
    text = card("Ambient Context", "", details, status="info")
    if out.results:
        text += f"\n\n🔎 {len(out.results)} related document(s):\n\n" + render_hits(out.results)
    elif out.query:
        text += "\n\nNo memory matches this context yet."
    if out.notes:
        text += "\n\n" + "\n".join(f"⚠️ {note}" for note in out.notes)
    return result(text, out)


TOOLS = [ToolSpec(dokoro_ambient_context, "Ambient git context", idempotent=True, open_world=True)]  # runs git
