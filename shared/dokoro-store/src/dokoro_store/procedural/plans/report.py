"""The validation report of a plan: ``daily/<slug>-validation-<planId>.md`` (reference §4.10)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from dokoro_store.clock import format_duration, iso, slug
from dokoro_store.paths import StorePaths
from dokoro_store.procedural.plans.files import safe_id
from dokoro_store.procedural.plans.views import PlanView
from dokoro_store.walls import frontmatter
from dokoro_store.walls.files import atomic_write_text

__all__ = ["validation_table", "write_report"]


def _minutes(start: datetime, end: datetime | None) -> str:
    if end is None:
        return "-"
    return format_duration(round((end - start).total_seconds() / 60))


def validation_table(view: PlanView, now: datetime) -> str:
    """The validation report body: header, item table, summary and notes."""
    validated = view.validated_at or now
    lines = [
        f"# Plan Validation: {view.title}",
        "",
        f"- **Plan:** {view.id}",
        f"- **Status:** {view.status.upper()}",
        f"- **Completion:** {view.completion}% ({view.done}/{view.total})",
        f"- **Created:** {iso(view.created_at)}",
        f"- **Validated:** {iso(validated)}",
        f"- **Total duration:** {_minutes(view.created_at, validated)}",
        "",
        "| # | Task | Status | Completed At | Duration |",
        "|---|------|--------|--------------|----------|",
    ]
    for item in view.items:
        text = item.text if len(item.text) <= 40 else item.text[:40] + "..."
        text = text.replace("|", "\\|").replace("\n", " ")
        lines.append(
            f"| {item.index} | {text} | {'✅' if item.completed else '❌'} | "
            f"{iso(item.completed_at) if item.completed_at else '-'} | {_minutes(item.created_at, item.completed_at)} |"
        )
    lines += ["", "## Summary", "", f"- Completed: {view.done}/{view.total}"]
    pending = [item for item in view.items if not item.completed]
    if pending:
        lines.append("- Pending:")
        for item in pending:
            lines.append(f"  - {item.index}. {item.text}")
            lines += [f"    - ⛔ {blocker}" for blocker in item.blockers]
    if view.validation_notes:
        lines += ["", "## Notes", "", view.validation_notes]
    return "\n".join(lines)


def write_report(paths: StorePaths, view: PlanView, table: str, now: datetime) -> Path:
    """Write the report of ``view`` (its body is ``table``) to daily/; the file written."""
    front = {
        "title": f"Plan Validation: {view.title}",
        "date": iso(now),
        "plan_id": view.id,
        "status": view.status,
        "completion": view.completion,
        "tags": {"type": "validation", "result": view.status},
    }
    path = paths.daily_dir / f"{slug(now)}-validation-{safe_id(view.id)}.md"
    atomic_write_text(path, frontmatter.render(front) + table + "\n", within=paths.root)
    return path
