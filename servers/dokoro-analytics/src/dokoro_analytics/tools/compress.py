"""``dokoro_compress_week``: a week's daily files and session summaries into one retrospective."""

from __future__ import annotations

from typing import Annotated

from dokoro_server import AppState, ToolSpec, card, result, state
from dokoro_store.results.analytics import CompressWeek
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field

__all__ = ["TOOLS"]


def dokoro_compress_week(
    ctx: Context[AppState],
    weekNumber: Annotated[int | None, Field(ge=1, le=53, description="ISO week number (default: last week).")] = None,
    year: Annotated[int | None, Field(ge=1, le=9999, description="ISO week-year (default: that of the week).")] = None,
    dryRun: Annotated[bool, Field(description="Only show what would be written and moved.")] = False,
) -> Annotated[CallToolResult, CompressWeek]:
    """Consolidate an ISO week: the daily files and session summaries become one retrospective
    (retrospective/weekly/<year>-W<ww>-consolidated.md: accomplishments, decisions, insights,
    per-day breakdown), indexed for search; then the dailies move to archive/daily/<year>-W<ww>/.
    Crash-safe: the summary is written first, and running it again finishes an interrupted move."""
    done = state(ctx).store.analytics.compress_week(weekNumber, year, dryRun)
    figures = {f.name: f"{f.value:g}" for f in done.figures}
    if done.summary_path is None:
        text = card("Nothing to Compress", done.notes[0] if done.notes else "", {"Week": done.week}, status="info")
        return result(text, done)
    details = {
        "Week": f"{done.week} ({done.start} – {done.end})",
        "Daily files": len(done.dailies),
        "Session summaries": done.session_summaries,
        "Accomplishments": figures.get("accomplishments"),
        "Decisions": figures.get("decisions"),
        "Insights": figures.get("insights"),
        "Summary": done.summary_path,
    }
    if done.dry_run:
        lines = [card("Week Compression Preview", "Dry run: nothing was written or moved.", details, status="info")]
        lines += ["", "Would archive:", *(f"- `{d.path}`" for d in done.dailies if d.path.startswith("daily/"))]
        lines += ["", "```markdown", done.preview or "", "```"]
        return result("\n".join(lines), done)
    details["Indexed as"] = f"`{done.doc_id}`" if done.indexed else "not indexed"
    details["Archived"] = f"{len(done.moved)} file(s) to archive/daily/{done.week}/"
    lines = [card("Week Compressed", "", details)]
    lines += [f"- `{m.source}` → `{m.target}` ({m.outcome})" for m in done.moved]
    lines += [f"_Note: {n}_" for n in done.notes]
    return result("\n".join(lines), done)


TOOLS = [ToolSpec(dokoro_compress_week, "Consolidate a week into a retrospective")]
