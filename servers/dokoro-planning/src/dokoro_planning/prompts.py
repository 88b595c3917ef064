"""The planning server's prompt: plan a feature with what the store already knows.

``plan-feature`` is one user message: the plans in flight that resemble the feature (found by
meaning, as the planning tools find them, without indexing anything) and the tools to call, in
order, to check for duplicates and conflicts, draft the plan and track it.
"""

from __future__ import annotations

from typing import Annotated

from dokoro_server import AppState, PromptSpec, state
from mcp.server.mcpserver import Context
from pydantic import Field

from dokoro_planning.tools.planning import plan_line

__all__ = ["PROMPTS"]

RELATED_PLANS = 5


def plan_feature(
    ctx: Context[AppState],
    feature: Annotated[str, Field(description="The feature to plan, in a sentence.")],
    context: Annotated[str | None, Field(description="Constraints or background for the plan.")] = None,
) -> str:
    """Plan a feature: what already resembles it, then check duplicates and conflicts, draft and track the plan."""
    related = state(ctx).store.planning.related_plans(feature, RELATED_PLANS)
    lines = [f"Plan this feature: {feature}"]
    if context:
        lines += ["", f"Context: {context}"]
    lines += ["", "## Plans in flight that resemble it", ""]
    lines += [plan_line(hit.result()) for hit in related] or ["(none)"]
    lines += [
        "",
        "Steps:",
        f'1. dokoro_check_duplicate with description="{feature}": continue existing work rather than start over.',
        f'2. dokoro_detect_conflicts with feature="{feature}": note what could clash (decisions, regressions, '
        "work in flight).",
        f'3. dokoro_plan_feature with feature="{feature}" (approach use_existing_research, or do_new_research '
        "when the store knows little): it drafts the plan under planning/ and cites its sources.",
        "4. dokoro_plan_create with the plan's steps as items, then check them off with dokoro_plan_check as you go.",
    ]
    return "\n".join(lines)


PROMPTS = [PromptSpec(plan_feature, "Plan a feature")]
