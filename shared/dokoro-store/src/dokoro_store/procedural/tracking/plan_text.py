"""The implementation plan ``dokoro_feature_plan`` writes for a feature (reference §2.16).

A research checklist that depends on the approach (with the store's own research, found by hybrid
search, for ``use_existing_research``), implementation phases scaled to the feature's complexity,
testing and a definition of done.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from dokoro_store.clock import iso
from dokoro_store.models import TrackingItem

__all__ = ["APPROACHES", "Source", "plan_markdown"]

APPROACHES = ("use_existing_research", "do_new_research", "plan_only")

_PHASES = {
    "small": [
        ("Implement", ["Make the change behind the smallest interface that works", "Keep the diff reviewable"]),
        ("Test", ["Cover the new behaviour and one failure case", "Run the whole suite"]),
        ("Ship", ["Update the docs that mention it", "Note the change in the session summary"]),
    ],
    "large": [
        ("Design", ["Write down the interfaces and data it touches", "List the risks and how to roll back"]),
        ("Core implementation", ["Build the core path end to end", "Keep each step in a separate commit"]),
        ("Integration", ["Wire it into the callers and migrations", "Check concurrency and error paths"]),
        ("Polish and docs", ["Handle the edge cases found on the way", "Update the documentation and examples"]),
    ],
}


@dataclass(frozen=True)
class Source:
    """A stored document the plan cites (from hybrid search)."""

    doc_id: str
    title: str
    filepath: str
    why: str


def plan_markdown(item: TrackingItem, approach: str, now: datetime, sources: Sequence[Source], note: str | None) -> str:
    lines = [
        f"# Implementation Plan: {item.title}",
        "",
        f"- **Feature:** `{item.id}` ({item.priority} priority, {item.complexity or 'moderate'} complexity)",
        f"- **Estimate:** {item.estimate}",
        f"- **Approach:** {approach}",
        f"- **Planned:** {iso(now)}",
        "",
    ]
    if item.description:
        lines += ["## Context", "", item.description, ""]
    lines += ["## Research", ""]
    if approach == "use_existing_research":
        if sources:
            lines += ["What the store already knows (hybrid search):", ""]
            lines += [f"- [ ] Read **{s.title}** (`{s.filepath}`) — {s.why}" for s in sources]
        else:
            lines.append(
                "- [ ] No stored research matches this feature yet: capture what you find (dokoro_capture_research)"
            )
        if note:
            lines += ["", f"_Note: {note}_"]
    elif approach == "do_new_research":
        lines += [
            "- [ ] Survey how others solve this (libraries, papers, prior art)",
            "- [ ] Compare at least two options and their trade-offs",
            "- [ ] Prototype the riskiest part",
            "- [ ] Record the findings (dokoro_capture_research) and the decision",
        ]
    else:
        lines.append("- Planning only: no research step.")
    lines.append("")
    size = "small" if (item.complexity or "moderate") in ("trivial", "simple") else "large"
    lines += ["## Implementation", ""]
    for number, (name, steps) in enumerate(_PHASES[size], start=1):
        lines += [f"### Phase {number}: {name}", "", *(f"- [ ] {step}" for step in steps), ""]
    lines += [
        "## Testing",
        "",
        "- [ ] Tests for the new behaviour, including bad input",
        "- [ ] Regression tests for anything this touches that broke before (dokoro_regression_history)",
        "- [ ] Run the full suite",
        "",
        "## Definition of Done",
        "",
        "- [ ] Works end to end and is tested",
        "- [ ] Documentation updated",
        f"- [ ] Feature `{item.id}` started (dokoro_feature_start) and moved to completed when shipped",
        "",
    ]
    return "\n".join(lines)
