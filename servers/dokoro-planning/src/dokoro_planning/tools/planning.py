"""Planning tools: each answers from the store's hybrid search and plans, and names its sources."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from dokoro_server import ToolSpec, card, result, state
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import BaseModel, Field

__all__ = ["TOOLS"]

_TIPS = (
    "Log progress as you go (dokoro_session_log); dump the session before you stop (dokoro_workspace_dump).",
    "Before starting something new, run dokoro_detect_conflicts and dokoro_check_duplicate on it.",
)


class SourceOut(BaseModel):
    doc_id: str
    title: str
    filepath: str
    doc_type: str
    status: str
    updated_at: str
    score: float
    cosine: float | None
    why: str
    excerpt: str
    labels: list[str]


class PlanMatchOut(BaseModel):
    id: str
    title: str
    status: str
    completion: int
    archived: bool
    similarity: float | None


class FeaturePlanOut(BaseModel):
    feature: str
    approach: str
    path: str
    doc_id: str
    research: list[SourceOut]
    docs: list[SourceOut]
    similar: list[SourceOut]
    conflicts: list[SourceOut]
    plans: list[PlanMatchOut]
    notes: list[str]


class ResearchOut(BaseModel):
    path: str
    doc_id: str
    title: str
    chunks: int
    indexed: bool
    notes: list[str]


class SuggestionOut(BaseModel):
    kind: str
    text: str
    sources: list[str]


class WhatsNextOut(BaseModel):
    context: str | None
    suggestions: list[SuggestionOut]
    related: list[SourceOut]
    research: list[SourceOut]
    notes: list[str]


class ConflictsOut(BaseModel):
    feature: str
    conflicts: list[SourceOut]
    plans: list[PlanMatchOut]
    searched: int
    notes: list[str]


class DuplicatesOut(BaseModel):
    description: str
    finished: list[SourceOut]
    unfinished: list[SourceOut]
    plans: list[PlanMatchOut]
    notes: list[str]


class RegressionsOut(BaseModel):
    component: str
    regressions: list[SourceOut]
    notes: list[str]


def _source(source: Any) -> SourceOut:
    from dokoro_store.clock import iso

    return SourceOut(
        doc_id=source.doc_id,
        title=source.title,
        filepath=source.filepath,
        doc_type=source.doc_type,
        status=source.status,
        updated_at=iso(source.updated_at),
        score=round(source.score, 6),
        cosine=round(source.cosine, 4) if source.cosine is not None else None,
        why=source.why,
        excerpt=source.excerpt,
        labels=list(source.labels),
    )


def _plan(match: Any) -> PlanMatchOut:
    plan = match.plan
    return PlanMatchOut(
        id=plan.id,
        title=plan.title,
        status=plan.status,
        completion=plan.completion,
        archived=plan.archived,
        similarity=round(match.similarity, 4) if match.similarity is not None else None,
    )


def _line(source: Any, *, evidence: bool = True) -> str:
    labels = f" [{', '.join(source.labels)}]" if source.labels else ""
    text = f"- **{source.title}** (`{source.filepath}`){labels} — {source.why}"
    if evidence and source.excerpt:
        text += f"\n  > {source.excerpt}"
    return text


def _plan_line(match: Any) -> str:
    plan = match.plan
    closeness = f", similarity {match.similarity:.2f}" if match.similarity is not None else ""
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
    ctx: Context,
    feature: Annotated[str, Field(description="The feature to plan, in a sentence.")],
    approach: Annotated[
        Literal["do_new_research", "use_existing_research", "plan_only", "use_docs"],
        Field(
            description="use_existing_research: cite stored research; do_new_research: a research checklist; "
            "use_docs: documents to review; plan_only: the plan skeleton only."
        ),
    ] = "use_existing_research",
    context: Annotated[str | None, Field(description="Constraints or background for the plan.")] = None,
) -> Annotated[CallToolResult, FeaturePlanOut]:
    """Draft a plan for a feature from what the store knows (research, similar features, plans in
    flight, known regressions and decisions, found by meaning). Saved to planning/ and indexed."""
    done = state(ctx).store.planning.plan_feature(feature, approach, context)
    out = FeaturePlanOut(
        feature=done.feature,
        approach=done.approach,
        path=done.path,
        doc_id=done.doc_id,
        research=[_source(s) for s in done.research],
        docs=[_source(s) for s in done.docs],
        similar=[_source(s) for s in done.similar],
        conflicts=[_source(s) for s in done.conflicts],
        plans=[_plan(m) for m in done.plans],
        notes=list(done.notes),
    )
    from dokoro_store import frontmatter

    body = frontmatter.split(done.markdown)[1].rstrip()
    lines = [body, "", f"📄 Saved to: {done.path}"]
    lines += [f"_Note: {note}_" for note in done.notes]
    return result("\n".join(lines), out)


def dokoro_capture_research(
    ctx: Context,
    topic: Annotated[str, Field(description="What the research was about.")],
    findings: Annotated[str, Field(description="What was found (markdown).")],
    sources: Annotated[list[str] | None, Field(description="Where it came from: URLs, papers, files.")] = None,
    tags: Annotated[
        dict[str, Any] | None, Field(description="Extra front-matter tags (type/category/status may be overridden).")
    ] = None,
) -> Annotated[CallToolResult, ResearchOut]:
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
    out = ResearchOut(
        path=done.path,
        doc_id=done.doc_id,
        title=done.title,
        chunks=done.chunks,
        indexed=done.indexed,
        notes=list(done.notes),
    )
    return result(text, out)


_SECTIONS = (
    ("plan", "🔄 Plans in flight"),
    ("blocker", "⛔ Blockers"),
    ("question", "❓ Blocking questions"),
    ("related", "🔗 Open work related to the context"),
    ("stale", "🕸️ Stale"),
    ("research", "🔬 Recent research"),
)


def dokoro_whats_next(
    ctx: Context,
    context: Annotated[str | None, Field(description="What you are about to work on, to rank suggestions.")] = None,
) -> Annotated[CallToolResult, WhatsNextOut]:
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
    out = WhatsNextOut(
        context=done.context,
        suggestions=[SuggestionOut(kind=s.kind, text=s.text, sources=list(s.sources)) for s in done.suggestions],
        related=[_source(s) for s in done.related],
        research=[_source(s) for s in done.research],
        notes=list(done.notes),
    )
    return result("\n".join(lines), out)


def dokoro_detect_conflicts(
    ctx: Context,
    feature: Annotated[str, Field(description="The feature or change you are about to make.")],
) -> Annotated[CallToolResult, ConflictsOut]:
    """Before building something: what the store already knows that could clash with it — past
    regressions and bugs, decisions and constraints, research, and plans in flight — found by
    meaning, not only by matching words."""
    done = state(ctx).store.planning.detect_conflicts(feature)
    out = ConflictsOut(
        feature=done.feature,
        conflicts=[_source(s) for s in done.hits],
        plans=[_plan(m) for m in done.plans],
        searched=done.searched,
        notes=list(done.notes),
    )
    if not done.hits and not done.plans:
        text = card(
            "No Conflicts",
            f"Nothing stored relates to “{done.feature}” (looked at {done.searched} search hits).",
            status="info",
        )
        return result("\n".join([text, *_footer([], [], list(done.notes))]), out)
    lines = [f"### ⚠️ Potential Conflicts for “{done.feature}”", ""]
    lines += [_line(s) for s in done.hits]
    lines += [_plan_line(m) for m in done.plans]
    lines += _footer([s.doc_id for s in done.hits], [m.plan.id for m in done.plans], list(done.notes))
    return result("\n".join(lines), out)


def dokoro_check_duplicate(
    ctx: Context,
    description: Annotated[str, Field(description="What you plan to build.")],
) -> Annotated[CallToolResult, DuplicatesOut]:
    """Has this been built or planned already? Finished features, plans and documents close to the
    description (by meaning), and related work still open."""
    done = state(ctx).store.planning.check_duplicate(description)
    out = DuplicatesOut(
        description=done.description,
        finished=[_source(s) for s in done.finished],
        unfinished=[_source(s) for s in done.unfinished],
        plans=[_plan(m) for m in done.plans],
        notes=list(done.notes),
    )
    if not (done.finished or done.unfinished or done.plans):
        text = card("No Duplicates", f"Nothing stored already does “{done.description}”.", status="success")
        return result("\n".join([text, *_footer([], [], list(done.notes))]), out)
    lines: list[str] = []
    if done.finished:
        lines += [f"### ⚠️ Possible Duplicate of “{done.description}”", "", *(_line(s) for s in done.finished), ""]
    if done.unfinished or done.plans:
        lines += ["### Related Work", "", *(_line(s) for s in done.unfinished), *(_plan_line(m) for m in done.plans)]
    doc_ids = [s.doc_id for s in (*done.finished, *done.unfinished)]
    lines += _footer(doc_ids, [m.plan.id for m in done.plans], list(done.notes))
    return result("\n".join(lines).strip(), out)


def dokoro_regression_history(
    ctx: Context,
    component: Annotated[str, Field(description="The component, feature or area to look up.")],
) -> Annotated[CallToolResult, RegressionsOut]:
    """What has broken before in this area: notes about the component (found by meaning) that record
    a regression, failure, crash or revert, each with its date and the sentence that says so."""
    from dokoro_store.clock import iso

    done = state(ctx).store.planning.regression_history(component)
    out = RegressionsOut(component=done.component, regressions=[_source(s) for s in done.hits], notes=list(done.notes))
    if not done.hits:
        text = card("No Regressions Found", f"No stored note records “{done.component}” breaking.", status="info")
        return result("\n".join([text, *_footer([], [], list(done.notes))]), out)
    lines = [f"### 🐛 Regression history: {done.component}", ""]
    for source in done.hits:
        lines.append(f"- {iso(source.updated_at)[:10]} — **{source.title}** (`{source.filepath}`): {source.excerpt}")
        lines.append(f"  ({source.why})")
    lines += _footer([s.doc_id for s in done.hits], [], list(done.notes))
    return result("\n".join(lines), out)


TOOLS = [
    ToolSpec(dokoro_plan_feature, "Plan a feature from what the store knows"),
    ToolSpec(dokoro_capture_research, "Capture research findings"),
    ToolSpec(dokoro_whats_next, "Suggest what to do next", read_only=True),
    ToolSpec(dokoro_detect_conflicts, "Find what could clash with a change", read_only=True),
    ToolSpec(dokoro_check_duplicate, "Find existing work like this", read_only=True),
    ToolSpec(dokoro_regression_history, "What broke before in this area", read_only=True),
]
