"""Planning tools: each answers from the store's hybrid search and plans, and names its sources."""

from __future__ import annotations

from typing import Annotated, Literal

from dokoro_server import AppState, ToolSpec, card, result, state
from dokoro_server.bounds import Mapping, Note, Paths, Title
from dokoro_store.results.planning import (
    ConflictCheck,
    DuplicateCheck,
    FeaturePlan,
    PlanMatch,
    RegressionHistory,
    ResearchCaptured,
    Source,
    WhatsNext,
)
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field

__all__ = ["TOOLS", "plan_line"]

_TIPS = (
    "Log progress as you go (dokoro_session_log); dump the session before you stop (dokoro_workspace_dump).",
    "Before starting something new, run dokoro_detect_conflicts and dokoro_check_duplicate on it.",
)


def _line(source: Source, *, evidence: bool = True) -> str:
    labels = f" [{', '.join(source.labels)}]" if source.labels else ""
    text = f"- **{source.title}** (`{source.filepath}`){labels} — {source.why}"
    if evidence and source.excerpt:
        text += f"\n  > {source.excerpt}"
    return text


def plan_line(plan: PlanMatch) -> str:
    """A plan close to the question, as the planning tools and the plan-feature prompt list it."""
    closeness = f", similarity {plan.similarity:.2f}" if plan.similarity is not None else ""
    where = "archived" if plan.archived else plan.status
    return f"- plan **{plan.title}** `{plan.id}` ({where}, {plan.completion}%{closeness})"


def _footer(doc_ids: list[str], plan_ids: list[str], notes: list[str]) -> list[str]:
    lines: list[str] = []
    cited = list(dict.fromkeys(doc_ids))
    if cited or plan_ids:
        lines += ["", "Sources: " + ", ".join([*(f"`{d}`" for d in cited), *(f"plan `{p}`" for p in plan_ids)])]
    lines += [f"_Note: {note}_" for note in dict.fromkeys(notes)]
    return lines


def dokoro_plan_feature(
    ctx: Context[AppState],
    feature: Annotated[Note, Field(description="The feature to plan, in a sentence.")],
    approach: Annotated[
        Literal["do_new_research", "use_existing_research", "plan_only", "use_docs"],
        Field(
            description="use_existing_research: cite stored research; do_new_research: a research checklist; "
            "use_docs: documents to review; plan_only: the plan skeleton only."
        ),
    ] = "use_existing_research",
    context: Annotated[Note | None, Field(description="Constraints or background for the plan.")] = None,
) -> Annotated[CallToolResult, FeaturePlan]:
    """Draft a plan for a feature from what the store knows (research, similar features, plans in
    flight, known regressions and decisions, found by meaning). Saved to planning/ and indexed."""
    done, markdown = state(ctx).store.planning.plan_feature(feature, approach, context)
    from dokoro_store import split_front_matter

    body = split_front_matter(markdown)[1].rstrip()
    lines = [body, "", f"📄 Saved to: {done.path}"]
    lines += [f"_Note: {note}_" for note in done.notes]
    return result("\n".join(lines), done)


def dokoro_capture_research(
    ctx: Context[AppState],
    topic: Annotated[Title, Field(description="What the research was about.")],
    findings: Annotated[Note, Field(description="What was found (markdown).")],
    sources: Annotated[Paths | None, Field(description="Where it came from: URLs, papers, files.")] = None,
    tags: Annotated[
        Mapping | None, Field(description="Extra front-matter tags (type/category/status may be overridden).")
    ] = None,
) -> Annotated[CallToolResult, ResearchCaptured]:
    """Save research findings to insights/<date>-<topic>-research.md and index them at once, so
    dokoro_plan_feature, dokoro_detect_conflicts and search find them by meaning."""
    done = state(ctx).store.planning.capture_research(topic, findings, sources, tags)
    details = {
        "File": done.path,
        "Doc ID": done.doc_id,
        "Indexed": f"{done.chunks} chunk(s)" if done.indexed else "not yet (see note)",
    }
    text = card("Research Captured", done.title, details)
    if done.notes:
        text += "\n" + "\n".join(f"_Note: {note}_" for note in done.notes)
    return result(text, done)


_SECTIONS = (
    ("plan", "🔄 Plans in flight"),
    ("blocker", "⛔ Blockers"),
    ("question", "❓ Blocking questions"),
    ("related", "🔗 Open work related to the context"),
    ("stale", "🕸️ Stale"),
    ("research", "🔬 Recent research"),
)


def dokoro_whats_next(
    ctx: Context[AppState],
    context: Annotated[Note | None, Field(description="What you are about to work on, to rank suggestions.")] = None,
) -> Annotated[CallToolResult, WhatsNext]:
    """Suggest what to do next: the next item of each plan in flight, blockers, blocking questions,
    open documents related to the context (by meaning), stale plans and recent research."""
    done = state(ctx).store.planning.whats_next(context)
    lines = ["## 🧭 What's Next" + (f" — {done.context}" if done.context else "")]
    for kind, heading in _SECTIONS:
        picked = [s for s in done.suggestions if s.kind == kind]
        if picked:
            lines += ["", f"### {heading}", *(f"- {s.text}" for s in picked)]
    if not done.suggestions:
        lines += ["", "Nothing in flight: no active plans, blockers or related open work."]
    lines += ["", "### 💡 Tips", *(f"- {tip}" for tip in _TIPS)]
    doc_ids = [s.doc_id for s in (*done.related, *done.research)]
    plan_ids = list(
        dict.fromkeys(i for s in done.suggestions if s.kind in ("plan", "blocker", "stale") for i in s.sources)
    )
    lines += _footer(doc_ids, plan_ids, list(done.notes))
    return result("\n".join(lines), done)


def dokoro_detect_conflicts(
    ctx: Context[AppState],
    feature: Annotated[Note, Field(description="The feature or change you are about to make.")],
) -> Annotated[CallToolResult, ConflictCheck]:
    """Before building something: what the store already knows that could clash with it — past
    regressions and bugs, decisions and constraints, research, and plans in flight — found by
    meaning, not only by matching words."""
    done = state(ctx).store.planning.detect_conflicts(feature)
    if not done.conflicts and not done.plans:
        text = card(
            "No Conflicts",
            f"Nothing stored relates to “{done.feature}” (looked at {done.searched} search hits).",
            status="info",
        )
        return result("\n".join([text, *_footer([], [], list(done.notes))]), done)
    lines = [f"### ⚠️ Potential Conflicts for “{done.feature}”", ""]
    lines += [_line(s) for s in done.conflicts]
    lines += [plan_line(m) for m in done.plans]
    lines += _footer([s.doc_id for s in done.conflicts], [m.id for m in done.plans], list(done.notes))
    return result("\n".join(lines), done)


def dokoro_check_duplicate(
    ctx: Context[AppState],
    description: Annotated[Note, Field(description="What you plan to build.")],
) -> Annotated[CallToolResult, DuplicateCheck]:
    """Has this been built or planned already? Finished features, plans and documents close to the
    description (by meaning), and related work still open."""
    done = state(ctx).store.planning.check_duplicate(description)
    if not (done.finished or done.unfinished or done.plans):
        text = card("No Duplicates", f"Nothing stored already does “{done.description}”.", status="success")
        return result("\n".join([text, *_footer([], [], list(done.notes))]), done)
    lines: list[str] = []
    if done.finished:
        lines += [f"### ⚠️ Possible Duplicate of “{done.description}”", "", *(_line(s) for s in done.finished), ""]
    if done.unfinished or done.plans:
        lines += ["### Related Work", "", *(_line(s) for s in done.unfinished), *(plan_line(m) for m in done.plans)]
    doc_ids = [s.doc_id for s in (*done.finished, *done.unfinished)]
    lines += _footer(doc_ids, [m.id for m in done.plans], list(done.notes))
    return result("\n".join(lines).strip(), done)


def dokoro_regression_history(
    ctx: Context[AppState],
    component: Annotated[Title, Field(description="The component, feature or area to look up.")],
) -> Annotated[CallToolResult, RegressionHistory]:
    """What has broken before in this area: notes about the component (found by meaning) that record
    a regression, failure, crash or revert, each with its date and the sentence that says so."""
    from dokoro_store import iso

    done = state(ctx).store.planning.regression_history(component)
    if not done.regressions:
        text = card("No Regressions Found", f"No stored note records “{done.component}” breaking.", status="info")
        return result("\n".join([text, *_footer([], [], list(done.notes))]), done)
    lines = [f"### 🐛 Regression history: {done.component}", ""]
    for source in done.regressions:
        lines.append(f"- {iso(source.updated_at)[:10]} — **{source.title}** (`{source.filepath}`): {source.excerpt}")
        lines.append(f"  ({source.why})")
    lines += _footer([s.doc_id for s in done.regressions], [], list(done.notes))
    return result("\n".join(lines), done)


TOOLS = [
    ToolSpec(dokoro_plan_feature, "Plan a feature from what the store knows"),
    ToolSpec(dokoro_capture_research, "Capture research findings"),
    # Not read-only: like the search tools, each first indexes hand-edited workspace markdown.
    ToolSpec(dokoro_whats_next, "Suggest what to do next", idempotent=True),
    ToolSpec(dokoro_detect_conflicts, "Find what could clash with a change", idempotent=True),
    ToolSpec(dokoro_check_duplicate, "Find existing work like this", idempotent=True),
    ToolSpec(dokoro_regression_history, "What broke before in this area", idempotent=True),
]
