"""Issue tools: add, list, work on and complete issues (rows, rendered under tracking/issues/)."""

from __future__ import annotations

from typing import Annotated, Literal

from dokoro_server import AppState, ToolSpec, acting_agent, card, result, secret_notice, state
from dokoro_server.bounds import Key, Note, Title
from dokoro_store.results.tracking import ItemChanged, ItemList
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field

from dokoro_tracking.tools._text import item_line, reconciled

__all__ = ["TOOLS", "changed_text"]

Priority = Literal["low", "medium", "high", "critical"]
PriorityFilter = Literal["all", "low", "medium", "high", "critical"]
Category = Literal["bug", "enhancement", "research", "question"]


def changed_text(title: str, done: ItemChanged) -> str:
    item = done.item
    details = {
        "ID": f"`{item.id}`",
        "Title": item.title,
        "Status": f"{done.previous_status} → {item.status}" if done.previous_status else item.status,
        "Priority": item.priority,
        "Category" if item.kind == "issue" else "Complexity": item.category or item.complexity,
        "Estimate": item.estimate,
        "File": done.path,
        "Plan": done.plan_path,
    }
    lines = [card(title, "", details)]
    notice = secret_notice(done.redacted)
    if notice:
        lines += ["", notice]
    lines += reconciled(done.reconciled)
    return "\n".join(lines)


def list_text(kind: str, done: ItemList) -> str:
    counts = ", ".join(f"{status} {n}" for status, n in done.counts.items())
    lines = [f"## {'🐛 Issues' if kind == 'issue' else '🚀 Features'} ({done.matching} matching; {counts})"]
    if not done.items:
        lines += ["", f"No {kind}s match status={done.status}, priority={done.priority}."]
    lines += [item_line(item) for item in done.items]
    if done.matching > len(done.items):
        lines.append(f"… {done.matching - len(done.items)} more (raise limit)")
    lines += reconciled(done.reconciled)
    return "\n".join(lines)


def dokoro_issue_add(
    ctx: Context[AppState],
    title: Annotated[Title, Field(description="What is wrong or needed, in one line.")],
    category: Annotated[Category, Field(description="Kind of issue.")] = "bug",
    priority: Annotated[Priority, Field(description="How urgent it is.")] = "medium",
    estimate: Annotated[Key, Field(description="Effort estimate, e.g. 30m, 2h, 1d.")] = "1h",
    description: Annotated[Note | None, Field(description="Details: steps, context, links (markdown).")] = None,
) -> Annotated[CallToolResult, ItemChanged]:
    """Record an issue (status pending). Returns its id — use that id with dokoro_issue_work and
    dokoro_issue_complete. Stored as a row shared by every agent; rendered to tracking/issues/pending/."""
    done = state(ctx).store.tracking.add_issue(
        title, category, priority, estimate, description, agent_id=acting_agent(ctx)
    )
    return result(changed_text("Issue Added", done), done)


def dokoro_issue_list(
    ctx: Context[AppState],
    status: Annotated[
        Literal["all", "pending", "active", "resolved", "archived"], Field(description="Only issues with this status.")
    ] = "all",
    priority: Annotated[PriorityFilter, Field(description="Only this priority.")] = "all",
    limit: Annotated[int, Field(ge=1, le=200, description="At most this many issues.")] = 20,
) -> Annotated[CallToolResult, ItemList]:
    """List issues, critical first, then newest first."""
    done = state(ctx).store.tracking.list_items("issue", status, priority, limit)
    return result(list_text("issue", done), done)


def dokoro_issue_work(
    ctx: Context[AppState],
    issue_id: Annotated[Key, Field(description="The id dokoro_issue_add returned (or its file name).")],
) -> Annotated[CallToolResult, ItemChanged]:
    """Start work on an issue: pending → active (a resolved issue is reopened)."""
    done = state(ctx).store.tracking.work_issue(issue_id, agent_id=acting_agent(ctx))
    title = "Issue Reopened" if done.action == "reopened" else "Working on Issue"
    return result(changed_text(title, done), done)


def dokoro_issue_complete(
    ctx: Context[AppState],
    issue_id: Annotated[Key, Field(description="The id dokoro_issue_add returned (or its file name).")],
    solution: Annotated[Note, Field(description="How it was solved (markdown).")],
) -> Annotated[CallToolResult, ItemChanged]:
    """Resolve an issue with its solution: pending or active → resolved."""
    done = state(ctx).store.tracking.complete_issue(issue_id, solution, agent_id=acting_agent(ctx))
    return result(changed_text("Issue Resolved", done), done)


TOOLS = [
    ToolSpec(dokoro_issue_add, "Record an issue"),
    ToolSpec(dokoro_issue_list, "List issues", read_only=True, idempotent=True),
    ToolSpec(dokoro_issue_work, "Start work on an issue"),
    ToolSpec(dokoro_issue_complete, "Resolve an issue"),
]
