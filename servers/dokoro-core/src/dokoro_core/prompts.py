"""The core server's prompts: the start and the end of a session, and onboarding a project, picked
by a user from a menu.

Each prompt is one user message that carries what the store knows now (read through the same
services as the tools, rendered as the tools render it) and names the tools to call next.
"""

from __future__ import annotations

from typing import Annotated

from dokoro_server import AppState, PromptSpec, state
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from dokoro_core.resources import briefing_text
from dokoro_core.tools.onboarding import check_local, onboarding_lines
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


def onboard_project(
    ctx: Context[AppState],
    focus: Annotated[
        str | None, Field(description="What matters most to capture (e.g. 'testing', 'deploys'); optional.")
    ] = None,
) -> str:
    """Onboard this project: what dokoro read in its own files (README, manifests, CI, Makefile, lint config)
    as typed memories to review with the user, the questions files cannot answer, and how to file and
    approve them."""
    try:
        check_local(ctx, "the onboard-project prompt")
    except ToolError as refused:
        return str(refused)
    app = state(ctx)
    report = app.store.onboarding.preview(app.cwd)  # getting a prompt writes nothing
    about = f" Pay most attention to: {focus}." if focus else ""
    return "\n".join(
        [
            "We are onboarding dokoro, the project's memory, so every later session starts knowing its stack, "
            f"commands, conventions and guardrails.{about} dokoro read the project's own files and drafts:",
            "",
            *onboarding_lines(report),
            "",
            "Next:",
            "1. Check each draft against what you see in the project; ask the user what the files cannot say:",
            "   - Which commands must pass before a change lands (and which are slow or flaky)?",
            "   - What must an agent never do here (paths not to touch, services not to call, data not to log)?",
            "   - Which conventions live in no config file (naming, layout, how to write tests, commit messages)?",
            "   - What domain terms, people or systems should every session know about?",
            "2. File the drafts as proposals with dokoro_onboard (nothing is remembered before approval).",
            "3. For each, dokoro_memory_proposals action=approve id=<proposal>, with text= (and title=) your "
            "distilled version when the draft is noisy, or action=reject with a reason.",
            "4. Remember what the user tells you with dokoro_remember, trust=user-stated: type guardrail or rule "
            "for what must always hold (briefed every session), best-practice for recommended patterns, context "
            "for domain facts (recalled when relevant).",
        ]
    )


PROMPTS = [
    PromptSpec(resume_session, "Resume a session"),
    PromptSpec(end_session, "End a session"),
    PromptSpec(onboard_project, "Onboard this project"),
]
