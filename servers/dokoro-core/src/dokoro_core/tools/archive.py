"""The archive sweep tool: old daily files and finished plans out of the way, safely."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from dokoro_server import AppState, ToolSpec, result, state
from dokoro_server.bounds import Days, PathText
from dokoro_store.results.archive import ArchiveSweep
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult
from pydantic import Field

__all__ = ["TOOLS"]

_CAP = 20


def _capped(lines: list[str]) -> list[str]:
    if len(lines) <= _CAP:
        return lines
    return [*lines[:_CAP], f"- …(+{len(lines) - _CAP} more)"]


def _status_only(ctx: Context[AppState]) -> CallToolResult:
    status = state(ctx).store.archive.status()
    if status is None:
        return result("No sweep has run yet.", ArchiveSweep(status_only=True))
    lines = [
        "## 🧹 Archive Sweep Status",
        "",
        f"- **Last run:** {status.last_run}",
        f"- **Daily files moved:** {status.moved_daily}",
        f"- **Plans archived:** {status.archived_plans}",
        f"- **Errors:** {len(status.errors)}",
    ]
    lines += _capped([f"- {e.path}: {e.error}" for e in status.errors])
    if status.last_error:
        lines.append(f"- **Last error:** {status.last_error}")
    return result("\n".join(lines), status.result())


def dokoro_archive_sweep(
    ctx: Context[AppState],
    olderThanDays: Annotated[
        Days, Field(ge=0, description="Move daily/ files dated more than this many days ago.")
    ] = 7,
    planOlderThanDays: Annotated[
        Days, Field(ge=0, description="Archive completed/validated plans unchanged for this many days.")
    ] = 30,
    dryRun: Annotated[bool, Field(description="Only report what would move.")] = False,
    status_only: Annotated[bool, Field(description="Only show the last sweep's status file.")] = False,
    claimRoot: Annotated[
        PathText | None,
        Field(description="Folder file claims are keyed from. Default: the server's working directory."),
    ] = None,
) -> Annotated[CallToolResult, ArchiveSweep]:
    """Archive old daily files to archive/daily/YYYY-Www/ and old finished plans to
    .mcp/plans/archive/. Never touches the current ISO week or a file with a live file claim.
    Moves files unless dryRun=true."""
    if status_only:
        return _status_only(ctx)
    app = state(ctx)
    root = (app.cwd / Path(claimRoot).expanduser()).resolve() if claimRoot else app.cwd
    swept = app.store.archive.sweep(
        older_than_days=olderThanDays, plan_older_than_days=planOlderThanDays, dry_run=dryRun, claim_root=root
    )
    out = swept.result()
    if swept.skipped == "locked":
        return result("Sweep skipped — another sweep holds `.mcp/archive.lock` (benign; retry shortly).", out)
    if swept.error and not swept.did_work:
        raise ToolError(f"archive_sweep failed: {swept.error}")
    lines = ["## 🧹 Workspace Sweep" + (" (dry run)" if dryRun else ""), ""]
    if dryRun:
        lines += ["**DRY RUN — nothing moved.**", ""]
    verb = "would move" if dryRun else "moved"
    lines.append(f"- **Daily files {verb}:** {len(swept.moved_daily)}")
    lines.append(f"- **Plans {'to archive' if dryRun else 'archived'}:** {len(swept.archived_plans)}")
    lines.append(f"- **Kept (current week or claimed):** {len(swept.held)}")
    lines.append(f"- **Errors:** {len(swept.errors)}")
    bullets = [f"- {m.source} → {m.target}" for m in swept.moved_daily]
    bullets += [f"- plan {plan_id}" for plan_id in swept.archived_plans]
    bullets += [f"- kept {h.path} ({h.reason.replace('_', ' ')})" for h in swept.held]
    bullets += [f"- ⚠ {e.path}: {e.error}" for e in swept.errors]
    if bullets:
        lines += ["", *_capped(bullets)]
    if swept.last_error and not dryRun:
        lines += ["", f"Last error: {swept.last_error}"]
    return result("\n".join(lines), out)


TOOLS = [ToolSpec(dokoro_archive_sweep, "Archive old daily files and finished plans", destructive=False)]
