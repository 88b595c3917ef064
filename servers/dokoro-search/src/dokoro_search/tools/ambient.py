"""Ambient context: what the project is doing now (git), and what memory says about it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from dokoro_server import ToolSpec, card, result, state
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import BaseModel, Field

from dokoro_search.tools.search import SearchHitOut, hits_out, render_hits

__all__ = ["TOOLS"]


class AmbientOut(BaseModel):
    project_path: str
    branch: str
    commits: list[str]
    files: list[str]
    branch_keywords: list[str]
    commit_keywords: list[str]
    file_keywords: list[str]
    query: str
    notes: list[str]
    results: list[SearchHitOut]


def dokoro_ambient_context(
    ctx: Context,
    projectPath: Annotated[
        str | None, Field(description="The git checkout to read (default: the server's working directory).")
    ] = None,
    limit: Annotated[int, Field(ge=1, le=50, description="How many related documents to return.")] = 10,
) -> Annotated[CallToolResult, AmbientOut]:
    """Read what the project is doing right now from git (branch, last commits, changed files), turn it into
    a search query, and return the memory documents that match it: context to resume work with."""
    from dokoro_store.retrieval.ambient import ambient_context

    app = state(ctx)
    path = Path(projectPath).expanduser() if projectPath else app.cwd
    if not path.is_absolute():
        path = app.cwd / path
    ambient = ambient_context(path.resolve())
    notes: list[str] = []
    hits: list[SearchHitOut] = []
    if ambient.query:
        notes += app.store.search.refresh().notes
        found = app.store.search.universal(ambient.query, limit=limit)
        notes += found.notes
        hits = hits_out(found.hits)
    out = AmbientOut(
        project_path=ambient.project_path,
        branch=ambient.branch,
        commits=ambient.commits,
        files=ambient.files,
        branch_keywords=ambient.branch_keywords,
        commit_keywords=ambient.commit_keywords,
        file_keywords=ambient.file_keywords,
        query=ambient.query,
        notes=notes,
        results=hits,
    )
    details = {
        "Branch": ambient.branch or "?",
        "Query": ambient.query or "(no keywords)",
        "Branch keywords": ", ".join(ambient.branch_keywords) or "-",
        "Commit keywords": ", ".join(ambient.commit_keywords) or "-",
        "File keywords": ", ".join(ambient.file_keywords) or "-",
        "Commits": len(ambient.commits),
        "Changed files": len(ambient.files),
    }
    text = card("Ambient Context", "", details, status="info")
    if hits:
        text += f"\n\n🔎 {len(hits)} related document(s):\n\n" + render_hits(hits)
    elif ambient.query:
        text += "\n\nNo memory matches this context yet."
    if notes:
        text += "\n\n" + "\n".join(f"⚠️ {note}" for note in notes)
    return result(text, out)


TOOLS = [ToolSpec(dokoro_ambient_context, "Ambient git context", idempotent=True)]
