"""The core server's prompts: the start and the end of a session, picked by a user from a menu.

Each prompt is one user message that carries what the store knows now (read through the same
services as the tools, rendered as the tools render it) and names the tools to call next.
"""

from __future__ import annotations

from typing import Annotated

from dokoro_server import AppState, PromptSpec, state
from mcp.server.mcpserver import Context
from pydantic import Field

from dokoro_core.resources import briefing_text
from dokoro_core.tools.workspace import status_text

__all__ = ["PROMPTS"]


def resume_session(
    ctx: Context[AppState],
    task: Annotated[str | None, Field(description="What you are about to work on (orders the rules).")] = None,
) -> str:
    """Resume work on this project: the session briefing (rules, workspace, blockers, latest sessions, others'
    claims), then claim the workspace."""
    app = state(ctx)
    claim = f'dokoro_workspace_claim with task="{task}"' if task else "dokoro_workspace_claim with the task you take up"
    return "\n".join(
        [
            "We are resuming work on this project. dokoro, its memory, says:",
            "",
            briefing_text(app, focus=task),
            "",
            "Next:",
            f"1. Claim the workspace: {claim}.",
            "2. If a blocker question is open (dokoro_question_check), answer or raise it before going on.",
            "3. Recall what you need as you go (dokoro_recall, dokoro_session_recall with a query) and log "
            "progress with dokoro_session_log.",
        ]
    )


def end_session(
    ctx: Context[AppState],
    session_id: Annotated[str | None, Field(description="Id of the session to summarise.")] = None,
    ai_model: Annotated[str | None, Field(description="Model that ran the session.")] = None,
) -> str:
    """End this session: summarise it for later sessions, dump the workspace and release your claims."""
    status = state(ctx).store.working.workspace.status()
    session = session_id or status.session_id or "<this session's id>"
    model = ai_model or "<your model>"
    return "\n".join(
        [
            "We are ending this session. The workspace, as dokoro sees it:",
            "",
            status_text(status),
            "",
            "Before you stop:",
            f'1. dokoro_session_summary_add with session_id="{session}", ai_model="{model}", a summary of what was '
            "done, found and left open, and the key decisions and topics.",
            "2. dokoro_workspace_dump with a reason and keepActive=false (it saves the session to daily/ and "
            "releases the workspace).",
            "3. dokoro_file_release with all=true if you claimed files.",
            "4. If work is left for someone else, dokoro_handoff_write with the open items.",
        ]
    )


PROMPTS = [
    PromptSpec(resume_session, "Resume a session"),
    PromptSpec(end_session, "End a session"),
]
