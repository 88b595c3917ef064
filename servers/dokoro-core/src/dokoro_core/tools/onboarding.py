"""Onboarding over MCP: the project's own files proposed as typed memories (``dokoro_onboard``).

The ``onboard-project`` prompt (:mod:`dokoro_core.prompts`) shows the same drafts without filing
them, and guides the agent through reviewing them with its user.
"""

from __future__ import annotations

from typing import Annotated

from dokoro_server import AppState, ToolSpec, over_http, result, state
from dokoro_store.results.onboarding import Onboarding
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult
from pydantic import Field

__all__ = ["TOOLS", "check_local", "onboarding_lines"]


def check_local(ctx: Context[AppState], what: str) -> None:
    """Onboarding reads the project on the server's disk: over HTTP only where the operator allows it."""
    if over_http(ctx) and not state(ctx).settings.ambient_over_http:
        raise ToolError(
            f"{what} is off over HTTP: it reads the project's files on the server's disk. The server's operator can "
            "turn it on with DOKORO_AMBIENT_OVER_HTTP=true; otherwise call it from a stdio server in your project"
        )


def onboarding_lines(report: Onboarding) -> list[str]:
    """The drafts as an agent reads them: each memory with its type, sources and proposal."""
    lines = [f"Read {len(report.files)} file(s) of {report.name}: {', '.join(report.files) or 'none'}."]
    lines += [f"- skipped {path}: {why}" for path, why in report.skipped.items()]
    if not report.drafts:
        lines.append("Nothing to propose: no README, manifest, CI, Makefile or lint configuration found.")
    for draft in report.drafts:
        where = f" — {draft.proposal} [{draft.status}]" if draft.proposal else ""
        lines += ["", f"### {draft.type}: {draft.title}{where}", draft.body, f"(from {', '.join(draft.sources)})"]
    return lines


def dokoro_onboard(
    ctx: Context[AppState],
    dry_run: Annotated[bool, Field(description="Only show what would be proposed; file nothing.")] = False,
) -> Annotated[CallToolResult, Onboarding]:
    """Onboard this project: read its own files (README, package manifests, CI workflows, Makefile, lint and
    format configuration, contributor and agent instructions; no symlink followed, sizes bounded, secrets
    redacted) and propose what they say as typed memories — its stack and what it is (context), its commands
    (reference), its conventions (best-practice) and the checks CI runs (guardrail). Nothing is remembered
    yet: each is filed as a proposal (kind onboard) to approve with dokoro_memory_proposals — as it is, or
    with text= your distilled version — or reject. Calling it again files nothing new unless the files
    changed."""
    check_local(ctx, "dokoro_onboard")
    app = state(ctx)
    report = app.store.onboarding.preview(app.cwd) if dry_run else app.store.onboarding.propose(app.cwd)
    head = (
        ["Preview: nothing filed."]
        if report.preview
        else [
            f"{report.filed} proposal(s) filed"
            + (f", {report.withdrawn} withdrawn (the files changed)." if report.withdrawn else ".")
        ]
    )
    tail = [
        "",
        "Next: review each with the user; approve with dokoro_memory_proposals action=approve id=<proposal> "
        "(text= and title= to write your distilled version instead), or action=reject with a reason.",
    ]
    return result("\n".join(head + onboarding_lines(report) + (tail if report.drafts else [])), report)


TOOLS = [ToolSpec(dokoro_onboard, "Onboard this project", idempotent=True)]
