"""The core server's resources: what a client can attach to a conversation without a tool call.

Each reads through the same service and renders the same text as its tool: ``dokoro://current``
(current.md, as dokoro_get_current_focus reads it), ``dokoro://briefing`` (dokoro_briefing),
``dokoro://sessions/recent`` (dokoro_session_recall without a query) and ``dokoro://plans/{id}``
(dokoro_plan_status). None of them writes.
"""

from __future__ import annotations

from typing import Annotated

from dokoro_server import AppState, ResourceSpec, TemplateSpec, default_agent, state
from mcp.server.mcpserver import Context
from pydantic import Field

from dokoro_core.tools.episodic import recall_text
from dokoro_core.tools.plans import plan_text

__all__ = ["BRIEFING_BUDGET", "RECENT_SESSIONS", "RESOURCES", "TEMPLATES"]

BRIEFING_BUDGET = 2000  # tokens, dokoro_briefing's default
RECENT_SESSIONS = 10


def current(app: AppState) -> str:
    """current.md: the claimed task, focus, progress log and next steps of the workspace."""
    text = app.store.working.current.text()
    if text is None:
        return "_No current.md yet: claim the workspace with dokoro_workspace_claim._\n"
    return text


def briefing(app: AppState) -> str:
    """The session briefing: rules and guardrails, the workspace, open blockers, latest sessions and
    others' file claims, within 2,000 tokens (dokoro_briefing with its defaults)."""
    return briefing_text(app)


def briefing_text(app: AppState, focus: str | None = None) -> str:
    """The briefing as dokoro_briefing renders it (also the body of the resume-session prompt)."""
    from dokoro_store import build_briefing

    return build_briefing(app.store, budget=BRIEFING_BUDGET, focus=focus, agent_id=default_agent(app)).render()


def sessions_recent(app: AppState) -> str:
    """The latest session summaries, newest first (dokoro_session_recall without a query)."""
    recalled = app.store.episodic.recall_ranked(limit=RECENT_SESSIONS)
    return recall_text(recalled.result())


def plan(
    ctx: Context[AppState],
    id: Annotated[str, Field(description="Plan id (plan-...), as dokoro_plan_list shows it.")],
) -> str:
    """A plan: status, progress, items with completion times, blockers and notes (dokoro_plan_status)."""
    if not id:  # ``dokoro://plans/``: the service would answer with the newest plan, which was not asked for
        from dokoro_store import InvalidArgumentError

        raise InvalidArgumentError("dokoro://plans/{id} needs a plan id (plan-…): list plans with dokoro_plan_list")
    view = state(ctx).store.plans.status(id)  # an unknown id raises NotFoundError: the client gets its message
    return plan_text(view) if view is not None else "_No plans yet._\n"


RESOURCES = [
    ResourceSpec("dokoro://current", current, "current.md"),
    ResourceSpec("dokoro://briefing", briefing, "Session briefing"),
    ResourceSpec(
        "dokoro://sessions/recent",
        sessions_recent,
        "Recent sessions",
        changed_by=frozenset({"dokoro_session_summary_add"}),
    ),
]
TEMPLATES = [TemplateSpec("dokoro://plans/{id}", plan, "A plan")]
