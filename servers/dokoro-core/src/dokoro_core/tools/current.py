"""current.md tools: regenerate it from daily files, edit a section, read the focus."""

from __future__ import annotations

from typing import Annotated

from dokoro_server import AppState, ToolSpec, acting_agent, card, result, secret_notice, state
from dokoro_server.bounds import Keys, Text, Title
from dokoro_store.results.working import CurrentFocus, CurrentRegenerated, SectionUpdate
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field

__all__ = ["TOOLS"]


def dokoro_regenerate_current(
    ctx: Context[AppState],
    includeDays: Annotated[int, Field(ge=0, le=3650, description="How many days of daily/ files to scan.")] = 7,
    preserveSections: Annotated[
        Keys, Field(description="Sections of the old current.md to keep, e.g. ['Next Steps'].")
    ] = [],  # noqa: B006 - pydantic copies defaults; the schema shows []
) -> Annotated[CallToolResult, CurrentRegenerated]:
    """Rebuild current.md from the checklists of recent daily files (in progress, recently
    completed, active tags). Overwrites current.md, keeping the sections you name."""
    done = state(ctx).store.working.current.regenerate(includeDays, preserveSections, agent=acting_agent(ctx))
    text = card(
        "Current Workspace Regenerated",
        "",
        {
            "In Progress": done.in_progress,
            "Completed": done.completed,
            "Upcoming": done.upcoming,
            "Active Tags": len(done.active_tags),
            "Files scanned": done.files_scanned,
            "Path": done.path,
        },
    )
    return result(text, done)


def dokoro_update_current_section(
    ctx: Context[AppState],
    section: Annotated[Title, Field(description="Heading to edit, e.g. 'Next Steps' (leading # optional).")],
    content: Annotated[Text, Field(description="New markdown body of the section.")],
    append: Annotated[bool, Field(description="Append to the section instead of replacing it.")] = False,
) -> Annotated[CallToolResult, SectionUpdate]:
    """Replace (or append to) one section of current.md; a missing section is added at the end."""
    done = state(ctx).store.working.current.update_section(section, content, append=append, agent=acting_agent(ctx))
    from dokoro_store import redact

    verb = {"appended": "Appended to section", "replaced": "Replaced section", "added": "Added new section"}
    message = "\n".join(part for part in (verb[done.action], secret_notice(redact(content).kinds)) if part)
    return result(card(f'Updated "{done.section}"', message), done)


def dokoro_get_current_focus(ctx: Context[AppState]) -> Annotated[CallToolResult, CurrentFocus]:
    """Read the Current Focus, In Progress and Next Steps sections of current.md."""
    focus = state(ctx).store.working.current.focus()
    lines = ["# Current Workspace Status", "", f"*Last Updated: {focus.last_updated or 'unknown'}*"]
    for name, body in focus.sections.items():
        lines += ["", f"## {name}", "", body]
    if not focus.sections:
        lines += ["", "_No focus, progress or next-steps sections found in current.md._"]
    return result("\n".join(lines), focus)


TOOLS = [
    ToolSpec(dokoro_regenerate_current, "Regenerate current.md", destructive=True),  # overwrites current.md
    ToolSpec(dokoro_update_current_section, "Update a current.md section", destructive=True),  # replaces unless append
    ToolSpec(dokoro_get_current_focus, "Current focus", read_only=True, idempotent=True),
]
