"""Backups, restores and health of the tracking rows and their renderings."""

from __future__ import annotations

from typing import Annotated, Literal

from dokoro_server import AppState, ToolSpec, acting_agent, card, result, state
from dokoro_store.results.tracking import BackupVerify, HealthReport, RestoreReport
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field

from dokoro_tracking.tools._text import reconciled

__all__ = ["TOOLS"]


def dokoro_backup_verify(
    ctx: Context[AppState],
    create_backup: Annotated[
        bool, Field(description="Also write a backup (JSON export of the tracking tables) to tracking/backups/.")
    ] = False,
) -> Annotated[CallToolResult, BackupVerify]:
    """Check the tracking rows and their renderings: counts per status, renderings that were missing
    or stale (written again), items changed in the last 24 hours, and the latest backup's age."""
    done = state(ctx).store.tracking.upkeep.verify(create_backup, agent_id=acting_agent(ctx))
    issues, features = done.items["issue"], done.items["feature"]
    details = {
        "Issues": ", ".join(f"{s} {n}" for s, n in issues.items()),
        "Features": ", ".join(f"{s} {n}" for s, n in features.items()),
        "Rows": ", ".join(f"{t} {n}" for t, n in done.rows.items()),
        "Renderings checked": done.renderings_checked,
        "Re-rendered": ", ".join(done.rerendered) or "none",
        "Changed in 24 h": len(done.changed_last_24h),
        "Backup written": done.created.path if done.created else None,
        "Latest backup": (
            f"{done.latest.path} ({round(done.latest.age_seconds / 3600, 1)} h old)" if done.latest else "none yet"
        ),
    }
    return result("\n".join([card("Tracking Verified", "", details), *reconciled(done.reconciled)]), done)


def dokoro_restore_items(
    ctx: Context[AppState],
    type: Annotated[Literal["all", "issues", "features"], Field(description="What to restore.")] = "all",
    source: Annotated[
        Literal["backup", "auto"],
        Field(description="backup: the latest backup (an error if there is none); auto: the latest backup if any."),
    ] = "auto",
    dry_run: Annotated[bool, Field(description="Only report what would be restored (default).")] = True,
) -> Annotated[CallToolResult, RestoreReport]:
    """Restore tracking rows from the latest backup: rows that are missing, or older here than in
    the backup. A dry run (the default) changes nothing; renderings follow the restored rows."""
    done = state(ctx).store.tracking.upkeep.restore(type, source, dry_run, agent_id=acting_agent(ctx))
    title = "Restore Preview" if dry_run else "Items Restored"
    lines = [
        card(
            title,
            "",
            {
                "Backup": done.source or "none",
                "To restore" if dry_run else "Restored": len(done.items),
                "Identical": done.identical,
                "Newer here (kept)": done.newer_here,
                "Re-rendered": ", ".join(done.rerendered) or None,
            },
            status="info" if dry_run else "success",
        )
    ]
    lines += [f"- {i.table} `{i.key}` {i.title or ''} ({i.reason})" for i in done.items]
    lines += [f"_Note: {n}_" for n in done.notes]
    return result("\n".join(lines), done)


def dokoro_health_check(
    ctx: Context[AppState],
    fix_issues: Annotated[
        bool, Field(description="Create missing folders and re-render missing or stale renderings.")
    ] = False,
) -> Annotated[CallToolResult, HealthReport]:
    """Check the tracking folders, renderings (missing, stale, unknown or duplicate files, copies
    of unreadable edits) and currentWeek.md's tracking section; fix what can be fixed on request."""
    done = state(ctx).store.tracking.upkeep.health(fix_issues, agent_id=acting_agent(ctx))
    if done.healthy and not done.problems:
        checked = f"{done.dirs_checked} folders and {done.renderings_checked} renderings checked."
        text = card("Tracking Healthy", checked)
    else:
        status = "success" if done.healthy else "warning"
        text = card("Tracking Health", f"{len(done.problems)} problem(s)", status=status)
        text += "\n\n" + "\n".join(
            f"- {'✅ fixed' if p.fixed else '⚠️'} {p.kind}: `{p.path}` — {p.detail}" for p in done.problems
        )
        fixable = ("missing_dir", "missing_rendering", "stale_rendering", "week_section_missing")
        if not fix_issues and any(p.kind in fixable for p in done.problems):
            text += "\n\nRun again with fix_issues=true to fix the folders and renderings."
    return result("\n".join([text, *reconciled(done.reconciled)]), done)


TOOLS = [
    ToolSpec(dokoro_backup_verify, "Verify (and back up) the tracking rows"),
    ToolSpec(
        dokoro_restore_items, "Restore tracking rows from a backup", destructive=True
    ),  # overwrites rows older here than in the backup
    ToolSpec(dokoro_health_check, "Check the tracking folders and renderings"),
]
