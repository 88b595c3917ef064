"""Feature tools: add, list, start and plan features (rows, rendered under tracking/features/)."""

from __future__ import annotations

from typing import Annotated, Literal

from dokoro_server import AppState, ToolSpec, acting_agent, result, state
from dokoro_server.bounds import Key, Note, Title
from dokoro_store.results.tracking import ItemChanged, ItemList
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field

from dokoro_tracking.tools.issues import changed_text, list_text

__all__ = ["TOOLS"]

Priority = Literal["low", "medium", "high", "critical"]
PriorityFilter = Literal["all", "low", "medium", "high", "critical"]


def dokoro_feature_add(
    ctx: Context[AppState],
    title: Annotated[Title, Field(description="The feature, in one line.")],
    complexity: Annotated[
        Literal["trivial", "simple", "moderate", "complex", "epic"], Field(description="How big it is.")
    ] = "moderate",
    priority: Annotated[Priority, Field(description="How urgent it is.")] = "medium",
    estimate: Annotated[Key, Field(description="Effort estimate, e.g. 4h, 1d, 2w.")] = "1d",
    description: Annotated[Note | None, Field(description="What it should do and why (markdown).")] = None,
) -> Annotated[CallToolResult, ItemChanged]:
    """Record a feature idea (status ideas). Returns its id for dokoro_feature_plan and
    dokoro_feature_start. Rendered to tracking/features/ideas/."""
    done = state(ctx).store.tracking.add_feature(
        title, complexity, priority, estimate, description, agent_id=acting_agent(ctx)
    )
    return result(changed_text("Feature Added", done), done)


def dokoro_feature_list(
    ctx: Context[AppState],
    status: Annotated[
        Literal["all", "ideas", "planned", "active", "completed", "archived"],
        Field(description="Only features with this status."),
    ] = "all",
    priority: Annotated[PriorityFilter, Field(description="Only this priority.")] = "all",
    limit: Annotated[int, Field(ge=1, le=200, description="At most this many features.")] = 20,
) -> Annotated[CallToolResult, ItemList]:
    """List features, critical first, then newest first."""
    done = state(ctx).store.tracking.list_items("feature", status, priority, limit)
    return result(list_text("feature", done), done)


def dokoro_feature_start(
    ctx: Context[AppState],
    feature_id: Annotated[Key, Field(description="The id dokoro_feature_add returned (or its file name).")],
) -> Annotated[CallToolResult, ItemChanged]:
    """Start building a feature: ideas or planned → active."""
    done = state(ctx).store.tracking.start_feature(feature_id, agent_id=acting_agent(ctx))
    return result(changed_text("Feature Started", done), done)


def dokoro_feature_plan(
    ctx: Context[AppState],
    feature_id: Annotated[Key, Field(description="The id dokoro_feature_add returned (or its file name).")],
    approach: Annotated[
        Literal["use_existing_research", "do_new_research", "plan_only"],
        Field(
            description="use_existing_research: cite the store's research (hybrid search); do_new_research: a "
            "research checklist; plan_only: phases and tests only."
        ),
    ] = "plan_only",
) -> Annotated[CallToolResult, ItemChanged]:
    """Write an implementation plan for a feature (features/<stamp>-<title>-implementation-plan.md)
    and move it to planned (ideas → planned; planning again writes a new plan). A feature planned
    less than a minute ago (another agent just did) is not planned twice: you get its plan."""
    done = state(ctx).store.tracking.plan_feature(feature_id, approach, agent_id=acting_agent(ctx))
    title = "Feature Already Planned (moments ago; no second plan)" if done.action == "already planned" else None
    return result(changed_text(title or "Feature Planned", done), done)


TOOLS = [
    ToolSpec(dokoro_feature_add, "Record a feature idea"),
    ToolSpec(dokoro_feature_list, "List features", read_only=True, idempotent=True),
    ToolSpec(dokoro_feature_start, "Start building a feature"),
    ToolSpec(dokoro_feature_plan, "Plan a feature"),
]
