"""The markdown the planning helpers write: research notes under insights/ and feature plans under
planning/, each citing the documents and plans it drew on."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from dokoro_store.clock import iso
from dokoro_store.results.planning import PlanMatch, Source
from dokoro_store.walls import frontmatter

__all__ = ["render_feature_plan", "render_research"]


def render_research(
    topic: str, findings: str, sources: Sequence[str], tags: dict[str, Any] | None, now: datetime
) -> str:
    """The markdown of a research note: front matter, findings, sources and next steps."""
    front: dict[str, Any] = {
        "title": f"Research: {topic}",
        "date": iso(now),
        "docType": "research",
        "tags": {"type": "research", "category": "insights", "status": "captured", **(tags or {})},
    }
    lines = [
        f"# Research: {topic}",
        "",
        f"**Captured:** {iso(now)}",
        "",
        "## Key Findings",
        "",
        findings,
        "",
        "## Sources",
        "",
        *([f"- {s}" for s in sources] or ["- (none recorded)"]),
        "",
        "## Next Steps",
        "",
        "- [ ] Review these findings before planning (dokoro_plan_feature with use_existing_research)",
        "- [ ] Turn what holds up into a decision or a plan",
        "- [ ] Compare with current work (dokoro_detect_conflicts)",
        "",
    ]
    return frontmatter.render(front) + "\n".join(lines)


def _cite(source: Source) -> str:
    return f"[{source.title}]({source.filepath}) `{source.doc_id}`"


def render_feature_plan(
    feature: str,
    approach: str,
    context: str | None,
    research: Sequence[Source],
    docs: Sequence[Source],
    similar: Sequence[Source],
    conflicts: Sequence[Source],
    plans: Sequence[PlanMatch],
    now: datetime,
) -> str:
    front = {
        "title": f"Plan: {feature}",
        "date": iso(now),
        "feature": feature,
        "approach": approach,
        "tags": {"type": "plan", "status": "draft", "approach": approach},
    }
    lines = [f"# Plan: {feature}", "", f"**Created:** {iso(now)}  ", f"**Approach:** {approach}", ""]
    if context:
        lines += ["## Context", "", context, ""]
    if approach == "use_existing_research":
        lines += ["## Existing Research", ""]
        if research:
            lines += [f"- {_cite(s)} — {s.why}\n  > {s.excerpt}" for s in research]
        else:
            lines.append("- No stored research relates to this yet: capture some with dokoro_capture_research.")
        lines.append("")
    elif approach == "do_new_research":
        lines += [
            "## Research To Do",
            "",
            "- [ ] What do existing solutions and libraries do?",
            "- [ ] What constraints (performance, security, compatibility) apply?",
            "- [ ] What are the risks and open questions?",
            "- [ ] Record the findings with dokoro_capture_research",
            "",
        ]
        if research:
            lines += ["Read first (already stored):", "", *[f"- {_cite(s)}" for s in research], ""]
    elif approach == "use_docs":
        lines += ["## Documents To Review", ""]
        lines += [f"- [ ] {_cite(s)} — {s.why}" for s in docs] or ["- No stored document relates to this yet."]
        lines.append("")
    lines += ["## Similar Features", ""]
    lines += [f"- {_cite(s)} ({s.status}) — {s.why}" for s in similar] or ["- None found."]
    lines += ["", "## Related Plans In Flight", ""]
    lines += [
        f"- {m.title} `{m.id}` ({m.completion}%)"
        + (f" — similarity {m.similarity:.2f}" if m.similarity is not None else "")
        for m in plans
    ] or ["- None."]
    lines += ["", "## Potential Conflicts", ""]
    lines += [f"- {_cite(s)} [{', '.join(s.labels)}] — {s.excerpt}" for s in conflicts] or ["- None found."]
    lines += [
        "",
        "## Implementation Steps",
        "",
        "1. [ ] Confirm scope and acceptance criteria",
        "2. [ ] Design the change (data, interfaces, failure modes)",
        "3. [ ] Implement in small, reviewable steps",
        "4. [ ] Test: unit, integration, and the regressions listed above",
        "5. [ ] Document and validate (dokoro_plan_create / dokoro_plan_validate to track it)",
        "",
    ]
    cited = {s.doc_id: s for s in [*research, *docs, *similar, *conflicts]}
    if cited or plans:
        lines += ["## Sources", ""]
        lines += [f"- {_cite(s)}" for s in cited.values()]
        lines += [f"- plan `{m.id}`" for m in plans]
        lines.append("")
    return frontmatter.render(front) + "\n".join(lines)
