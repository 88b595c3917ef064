"""Working memory tools: init, claim, status, session log and dump."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from dokoro_server import ToolSpec, authenticated_agent, card, result, secret_notice, state
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult
from pydantic import BaseModel, Field

__all__ = ["TOOLS"]


class InitOut(BaseModel):
    path: str
    created: bool
    folders: list[str]


class ClaimOut(BaseModel):
    agent_id: str
    session_id: str
    task: str
    lock_expires_at: str
    took_over_from: str | None = None
    sweep: str | None = None


class StatusOut(BaseModel):
    active: bool
    task: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    session_start: str | None = None
    locked: bool = False
    locked_by: str | None = None
    lock_expires_at: str | None = None
    lock_stale: bool = False
    session_minutes: int = 0
    active_minutes: int = 0
    entries: int = 0
    tool_calls: int = 0


class LogOut(BaseModel):
    type: str
    time: str
    redacted: list[str] = []


class DumpOut(BaseModel):
    path: str
    relative: str
    doc_id: str
    status: str
    doc_type: str
    reason: str
    duration_minutes: int
    released: bool
    doc_indexed: bool = True
    claims_released: int = 0


def dokoro_init(
    ctx: Context,
    projectPath: Annotated[
        str | None,
        Field(
            description="Project folder; the store is created at <projectPath>/dokoro. Default: this server's store."
        ),
    ] = None,
    skipIfExists: Annotated[bool, Field(description="Leave an existing dokoro folder untouched.")] = True,
) -> Annotated[CallToolResult, InitOut]:
    """Create the dokoro folder layout (daily/, decisions/, insights/, research/, ..., README.md,
    a template current.md). Without projectPath it initialises the folder this server serves."""
    from dokoro_store.clock import iso
    from dokoro_store.services.init import init_folder

    app = state(ctx)
    if projectPath and authenticated_agent() is not None:
        raise ToolError(
            "projectPath is not accepted on the shared HTTP server (it would create folders on the server's disk); "
            "call dokoro_init without it to initialise the served folder"
        )
    # A relative projectPath means relative to where the agent started the server, not this process's cwd.
    root = (app.cwd / Path(projectPath).expanduser()).resolve() / "dokoro" if projectPath else app.store.paths.root
    done = init_folder(root, app.store.clock, skip_if_exists=skipIfExists)
    out = InitOut(path=str(root), created=done.created, folders=list(done.folders))
    if not done.created:
        text = card("Already Exists", f"A dokoro folder is already set up at {root}.", status="info")
    else:
        text = card(
            "Dokoro Initialized",
            f"Created {root} at {iso(app.store.clock.now())}.",
            {"Folders": ", ".join(done.folders), "Next": "dokoro_workspace_claim with your task"},
        )
    return result(text, out)


def dokoro_workspace_claim(
    ctx: Context,
    task: Annotated[str, Field(description="What this session will work on, in a sentence.")],
    force: Annotated[bool, Field(description="Take the workspace even if another agent's lock is live.")] = False,
    tags: Annotated[dict[str, Any] | None, Field(description="Optional tags written to current.md.")] = None,
) -> Annotated[CallToolResult, ClaimOut]:
    """Claim the workspace for this session: takes the workspace lock (30 min, renewed while you
    work), rewrites current.md with the task, and starts session time tracking. Call it first."""
    from dokoro_store.clock import iso

    # An authenticated agent (shared HTTP server) claims under its own name; otherwise the
    # reference's time-based agent id is generated.
    app = state(ctx)
    # The claim also runs the opportunistic archive sweep; file claims are keyed from the server's cwd.
    claimed = app.store.working.workspace.claim(
        task, force=force, tags=tags, agent_id=authenticated_agent(), claim_root=app.cwd
    )
    details = {
        "Agent": claimed.agent_id,
        "Session": claimed.session_id,
        "Task": claimed.task,
        "Lock": "expires in 30 minutes",
    }
    if claimed.took_over:
        details["Took over from"] = claimed.took_over
    out = ClaimOut(
        agent_id=claimed.agent_id,
        session_id=claimed.session_id,
        task=claimed.task,
        lock_expires_at=iso(claimed.lock_expires_at),
        took_over_from=claimed.took_over,
        sweep=claimed.sweep_note,
    )
    message = "\n".join(part for part in (secret_notice(claimed.redacted), claimed.sweep_note or "") if part)
    return result(card("Workspace Claimed", message, details), out)


def dokoro_workspace_status(ctx: Context) -> Annotated[CallToolResult, StatusOut]:
    """Is a task in flight? Shows the claimed task, who holds the lock, session time and log entries."""
    from dokoro_store.clock import format_duration, iso

    status = state(ctx).store.working.workspace.status()
    lock = status.lock
    out = StatusOut(
        active=status.active,
        task=status.task,
        agent_id=status.agent_id,
        session_id=status.session_id,
        session_start=iso(status.session_start) if status.session_start else None,
        locked=lock is not None and not status.lock_stale,
        locked_by=lock.agent_id if lock else None,
        lock_expires_at=iso(lock.expires_at) if lock else None,
        lock_stale=status.lock_stale,
        session_minutes=status.session_minutes,
        active_minutes=status.active_minutes,
        entries=status.entries,
        tool_calls=status.tool_calls,
    )
    if not status.active:
        if lock is not None:
            text = card(
                "No Active Workspace",
                f"Found existing lock by {lock.agent_id}" + (" (stale)" if status.lock_stale else ""),
                {"Lock expires": iso(lock.expires_at)},
                status="warning",
            )
        else:
            text = card("No Workspace", "No workspace is claimed. Use dokoro_workspace_claim.", status="info")
        return result(text, out)
    lock_text = "unlocked"
    if lock is not None:
        lock_text = f"locked by {lock.agent_id} until {iso(lock.expires_at)}" + (
            " (stale)" if status.lock_stale else ""
        )
    text = card(
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
        },
    )
    return result(text, out)


def dokoro_session_log(
    ctx: Context,
    entry: Annotated[str, Field(description="What happened: progress, a note, an issue or a decision.")],
    type: Annotated[Literal["progress", "note", "issue", "decision"], Field(description="Kind of entry.")] = "progress",
) -> Annotated[CallToolResult, LogOut]:
    """Append a timestamped line to the claimed workspace's log (current.md)."""
    from dokoro_store.clock import iso

    logged = state(ctx).store.working.workspace.log(entry, type)
    at = logged.at
    return result(
        card("Entry Logged", secret_notice(logged.redacted), {"Type": type, "Time": f"{at:%H:%M:%S}"}),
        LogOut(type=type, time=iso(at), redacted=list(logged.redacted)),
    )


def dokoro_workspace_dump(
    ctx: Context,
    reason: Annotated[str, Field(description="Why the session is being saved (end of day, handoff, ...).")],
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
) -> Annotated[CallToolResult, DumpOut]:
    """Save the workspace to daily/<UTC slug>-session-<topic>.md and index it as a document.
    With keepActive=false the lock is released and current.md removed."""
    from dokoro_store.clock import format_duration

    dumped = state(ctx).store.working.workspace.dump(
        reason, keep_active=keepActive, status=status, doc_type=docType, acting_agent=authenticated_agent()
    )
    out = DumpOut(
        path=str(dumped.path),
        relative=dumped.relative,
        doc_id=dumped.doc_id,
        status=dumped.status,
        doc_type=dumped.doc_type,
        reason=dumped.reason,
        duration_minutes=dumped.duration_minutes,
        released=dumped.released,
        doc_indexed=dumped.doc_indexed,
        claims_released=dumped.claims_released,
    )
    text = card(
        "Saved to Dokoro",
        str(dumped.path),
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
    return result(text, out)


TOOLS = [
    ToolSpec(dokoro_init, "Initialise a dokoro folder", idempotent=True),
    ToolSpec(dokoro_workspace_claim, "Claim the workspace", destructive=True),  # rewrites current.md
    ToolSpec(dokoro_workspace_status, "Workspace status", read_only=True, idempotent=True),
    ToolSpec(dokoro_session_log, "Log to the session"),
    ToolSpec(dokoro_workspace_dump, "Dump the session to a daily file", destructive=True),  # keepActive=false ends it
]
