"""Working memory tools: init, claim, status, session log and dump."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from dokoro_server import AppState, ToolSpec, acting_agent, authenticated_agent, card, result, secret_notice, state
from dokoro_server.bounds import Mapping, Note, PathText, Text
from dokoro_store.results.working import (
    ONE_WORKSPACE,
    FolderInit,
    LogEntry,
    SessionDump,
    WorkspaceClaim,
    WorkspaceStatus,
)
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult
from pydantic import Field

__all__ = ["TOOLS", "status_text"]


def dokoro_init(
    ctx: Context[AppState],
    projectPath: Annotated[
        PathText | None,
        Field(
            description="A folder of the project the server was started in; the store is created at "
            "<projectPath>/dokoro. Default: this server's store."
        ),
    ] = None,
    skipIfExists: Annotated[bool, Field(description="Leave an existing dokoro folder untouched.")] = True,
) -> Annotated[CallToolResult, FolderInit]:
    """Create the dokoro folder layout (daily/, decisions/, insights/, research/, ..., README.md,
    a template current.md). Without projectPath it initialises the folder this server serves."""
    from dokoro_store import init_folder, inside, iso

    app = state(ctx)
    if projectPath and authenticated_agent() is not None:
        raise ToolError(
            "projectPath is not accepted on the shared HTTP server (it would create folders on the server's disk); "
            "call dokoro_init without it to initialise the served folder"
        )
    # A relative projectPath means relative to where the agent started the server, not this process's cwd;
    # like every path an agent passes, it stays inside that project (symlinks followed).
    root = (
        inside(app.cwd, app.cwd / Path(projectPath).expanduser(), what="projectPath") / "dokoro"
        if projectPath
        else app.store.paths.root
    )
    done = init_folder(root, app.store.clock, skip_if_exists=skipIfExists)
    if not done.created:
        text = card("Already Exists", f"A dokoro folder is already set up at {root}.", status="info")
    else:
        text = card(
            "Dokoro Initialized",
            f"Created {root} at {iso(app.store.clock.now())}.",
            {"Folders": ", ".join(done.folders), "Next": "dokoro_workspace_claim with your task"},
        )
    return result(text, done)


def dokoro_workspace_claim(
    ctx: Context[AppState],
    task: Annotated[Note, Field(description="What this session will work on, in a sentence.")],
    force: Annotated[
        bool,
        Field(
            description="Take the workspace over from an anonymous session whose lock is live "
            "(a named agent's lock is taken over only once stale)."
        ),
    ] = False,
    tags: Annotated[Mapping | None, Field(description="Optional tags written to current.md.")] = None,
) -> Annotated[CallToolResult, WorkspaceClaim]:
    """Claim the workspace for this session: takes the workspace lock (30 min, renewed while you
    work), rewrites current.md with the task, and starts session time tracking. Call it first."""
    # An authenticated agent (shared HTTP server) or DOKORO_AGENT_ID claims under its own name;
    # without an identity the reference's time-based agent id is generated.
    app = state(ctx)
    # The claim also runs the opportunistic archive sweep; file claims are keyed from the server's cwd.
    claimed = app.store.working.workspace.claim(
        task, force=force, tags=tags, agent_id=acting_agent(ctx), claim_root=app.cwd
    )
    details = {
        "Agent": claimed.agent_id,
        "Session": claimed.session_id,
        "Task": claimed.task,
        "Lock": "expires in 30 minutes",
        "Shared": ONE_WORKSPACE,
    }
    if claimed.took_over:
        details["Took over from"] = claimed.took_over
    message = "\n".join(part for part in (secret_notice(claimed.redacted), claimed.sweep_note or "") if part)
    return result(card("Workspace Claimed", message, details), claimed.result())


def dokoro_workspace_status(ctx: Context[AppState]) -> Annotated[CallToolResult, WorkspaceStatus]:
    """Is a task in flight? Shows the claimed task, who holds the lock, session time and log entries."""
    status = state(ctx).store.working.workspace.status()
    return result(status_text(status), status)


def status_text(status: WorkspaceStatus) -> str:
    """The workspace's state as dokoro_workspace_status and the end-session prompt show it."""
    from dokoro_store import format_duration, iso

    stale = " (stale)" if status.lock_stale else ""
    if not status.active:
        if status.locked_by is not None and status.lock_expires_at is not None:
            return card(
                "No Active Workspace",
                f"Found existing lock by {status.locked_by}{stale}",
                {"Lock expires": iso(status.lock_expires_at), "Shared": ONE_WORKSPACE},
                status="warning",
            )
        return card("No Workspace", "No workspace is claimed. Use dokoro_workspace_claim.", status="info")
    lock_text = "unlocked"
    if status.locked_by is not None and status.lock_expires_at is not None:
        lock_text = f"locked by {status.locked_by} until {iso(status.lock_expires_at)}{stale}"
    return card(
        "Workspace Status",
        "",
        {
            "Workspace": "current.md",
            "Task": status.task,
            "Agent": status.agent_id,
            "Session": status.session_id,
            "Lock": lock_text,
            "Session duration": format_duration(status.session_minutes),
            "Active time": format_duration(status.active_minutes),
            "Log entries": status.entries,
            "Tool calls": status.tool_calls,
            "Shared": ONE_WORKSPACE,
        },
    )


def dokoro_session_log(
    ctx: Context[AppState],
    entry: Annotated[Text, Field(description="What happened: progress, a note, an issue or a decision.")],
    type: Annotated[Literal["progress", "note", "issue", "decision"], Field(description="Kind of entry.")] = "progress",
) -> Annotated[CallToolResult, LogEntry]:
    """Append a timestamped line to the claimed workspace's log (current.md)."""
    logged = state(ctx).store.working.workspace.log(entry, type, agent=acting_agent(ctx))
    details = {"Type": logged.type, "Time": f"{logged.time:%H:%M:%S}"}
    return result(card("Entry Logged", secret_notice(logged.redacted), details), logged)


def dokoro_workspace_dump(
    ctx: Context[AppState],
    reason: Annotated[Note, Field(description="Why the session is being saved (end of day, handoff, ...).")],
    keepActive: Annotated[
        bool, Field(description="Keep the workspace claimed (true) or release the lock and end it (false).")
    ] = True,
    status: Annotated[
        Literal["active", "pending", "backlog", "done", "paused", "blocked"],
        Field(description="Status recorded on the dumped document."),
    ] = "active",
    docType: Annotated[
        Literal["issue", "prd", "research", "decision", "note", "session", "plan"],
        Field(description="Document type of the dump."),
    ] = "session",
) -> Annotated[CallToolResult, SessionDump]:
    """Save the workspace to daily/<UTC slug>-session-<topic>.md and index it as a document.
    With keepActive=false the lock is released and current.md removed."""
    from dokoro_store import format_duration

    dumped = state(ctx).store.working.workspace.dump(
        reason, keep_active=keepActive, status=status, doc_type=docType, acting_agent=acting_agent(ctx)
    )
    text = card(
        "Saved to Dokoro",
        dumped.path,
        {
            "Relative": dumped.relative,
            "Status": dumped.status.upper(),
            "Type": dumped.doc_type,
            "Reason": dumped.reason,
            "Duration": format_duration(dumped.duration_minutes),
            "Workspace": "kept active" if keepActive else "released",
            "Indexed": None if dumped.doc_indexed else "no: the database was unavailable; the file is saved",
            "File claims released": dumped.claims_released or None,
        },
    )
    return result(text, dumped)


TOOLS = [
    ToolSpec(dokoro_init, "Initialise a dokoro folder", idempotent=True),
    ToolSpec(dokoro_workspace_claim, "Claim the workspace", destructive=True),  # rewrites current.md
    ToolSpec(dokoro_workspace_status, "Workspace status", read_only=True, idempotent=True),
    ToolSpec(dokoro_session_log, "Log to the session"),
    ToolSpec(dokoro_workspace_dump, "Dump the session to a daily file", destructive=True),  # keepActive=false ends it
]
