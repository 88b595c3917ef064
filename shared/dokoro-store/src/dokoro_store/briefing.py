"""The session-start briefing: what an agent should read first, within a token budget.

It starts with the memories' health line when something waits for a decision (stale memories,
proposals: :mod:`.memories.health`), and a line on the memory files it has not read (changed since
the folder last read them: the briefing writes nothing, so it cannot take them in). Sections, in
order: every active ``rule`` and ``guardrail`` memory (when they do not all fit, the ones most
relevant to the current task go first and the overflow is counted, never silently dropped; a stale
one says so and comes after the current ones), the workspace status, open blocker questions, the
latest session summaries, and the live file claims of other agents. Sections after the rules take
what budget is left.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dokoro_store.clock import iso
from dokoro_store.errors import InvalidArgumentError
from dokoro_store.results.memories import BriefingSummary, Memory
from dokoro_store.semantic.memories.gate import text_similarity

if TYPE_CHECKING:
    from dokoro_store.store import Store

__all__ = ["Briefing", "build_briefing"]

MIN_BUDGET = 200
MAX_BUDGET = 32_000


def _tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


@dataclass
class Briefing:
    budget: int
    used: int = 0
    rules_shown: list[Memory] = field(default_factory=list)
    rules_total: int = 0
    sections: list[tuple[str, list[str]]] = field(default_factory=list)
    omitted: dict[str, int] = field(default_factory=dict)
    health: str | None = None  # the memories' one actionable line (None: all is well)
    files: str | None = None  # the memory files this read-only briefing has not read (None: none)

    @property
    def rules_overflow(self) -> int:
        return self.rules_total - len(self.rules_shown)

    def fits(self, text: str) -> bool:
        return self.used + _tokens(text) <= self.budget

    def take(self, text: str) -> bool:
        if not self.fits(text):
            return False
        self.used += _tokens(text)
        return True

    def summary(self) -> BriefingSummary:
        """What ``dokoro_briefing`` publishes beside the text: the budget used and the rules shown."""
        return BriefingSummary(
            budget=self.budget,
            used=self.used,
            rules_shown=[m.id for m in self.rules_shown],
            rules_total=self.rules_total,
            rules_overflow=self.rules_overflow,
            omitted=self.omitted,
        )

    def render(self) -> str:
        lines = [f"# Briefing ({self.used}/{self.budget} tokens)"]
        if self.files:
            lines.insert(0, f"📝 {self.files}")
        if self.health:
            lines.insert(0, f"⚠️ {self.health}")
        for title, body in self.sections:
            lines += ["", f"## {title}", *body]
        if self.omitted:
            lines += [
                "",
                "_Left out to stay within the budget: "
                + ", ".join(f"{n} {what}" for what, n in self.omitted.items())
                + "._",
            ]
        return "\n".join(lines)


def _rule_line(memory: Memory, stale: str | None = None) -> str:
    body = " ".join(memory.body.split())
    if len(body) > 240:
        body = body[:237] + "..."
    tag = f"{memory.type}, ⏳ {stale}" if stale else memory.type
    return f"- **[{tag}] {memory.title}** — {body} `({memory.id})`"


def _stale_rules(store: Store, rules: list[Memory]) -> dict[str, str]:
    """The stale ones among ``rules``, each with why (:mod:`dokoro_store.semantic.memories.lifecycle`)."""
    from dokoro_store.semantic.memories.lifecycle import broken_dependencies, stale_words

    now = store.clock.now()
    with store.db.read() as session:
        broken = broken_dependencies(session.connection(), [m.id for m in rules]) if rules else {}
    out: dict[str, str] = {}
    for m in rules:
        if (words := stale_words(m.state, m.review_after, m.valid_until, now, broken.get(m.id, ()))) is not None:
            out[m.id] = words
    return out


def build_briefing(
    store: Store, *, budget: int = 2000, focus: str | None = None, agent_id: str | None = None
) -> Briefing:
    """Compose the briefing from the store's layers; ``focus`` (default: the claimed task) orders
    the rules by relevance when they exceed the budget; ``agent_id`` excludes one's own claims."""
    if not MIN_BUDGET <= budget <= MAX_BUDGET:
        raise InvalidArgumentError(f"budget must be between {MIN_BUDGET} and {MAX_BUDGET} tokens; got {budget}")
    from dokoro_store.semantic.memories.health import health_line

    briefing = Briefing(budget)
    briefing.health = health_line(store.db, store.clock)
    if briefing.health:
        briefing.used += _tokens(briefing.health)
    # Read-only: the memory files are not read in here; what was not read is said plainly.
    briefing.files = store.memories.files_unread()
    if briefing.files:
        briefing.used += _tokens(briefing.files)
    status = store.working.workspace.status()
    topic = focus or status.task or ""

    # Rules and guardrails: all of them when they fit; else the most relevant first, overflow counted.
    # A type switched off in this store (`dokoro memory types rule --off`) is not briefed.
    shown_types = store.upkeep.switches.in_use(["rule", "guardrail"])
    rules = store.memories.of_types(shown_types, reconcile=False) if shown_types else []  # read-only
    briefing.rules_total = len(rules)
    stale = _stale_rules(store, rules)
    if topic:
        rules.sort(
            key=lambda m: (
                m.id in stale,
                -text_similarity(topic, f"{m.title} {m.body} {' '.join(m.entities)}"),
                m.type != "guardrail",
            )
        )
    else:
        rules.sort(key=lambda m: (m.id in stale, m.type != "guardrail"))
    rule_lines: list[str] = []
    for memory in rules:
        line = _rule_line(memory, stale.get(memory.id))
        if briefing.take(line):
            rule_lines.append(line)
            briefing.rules_shown.append(memory)
    if briefing.rules_overflow:
        rule_lines.append(
            f"- …and {briefing.rules_overflow} more rule(s)/guardrail(s) over the budget: "
            "dokoro_recall with types=['rule','guardrail'] lists them."
        )
    if off := [kind for kind in ("rule", "guardrail") if kind not in shown_types]:
        rule_lines.append(f"- _{' and '.join(off)} memories are switched off in this store: not briefed._")
    briefing.sections.append(("Rules and guardrails", rule_lines or ["_None recorded._"]))

    def section(title: str, lines: list[str], what: str) -> None:
        kept: list[str] = []
        for line in lines:
            if briefing.take(line):
                kept.append(line)
        if len(kept) < len(lines):
            briefing.omitted[what] = len(lines) - len(kept)
        if kept or not lines:
            briefing.sections.append((title, kept or ["_Nothing._"]))

    if status.active:
        workspace = [
            f"- Task: {status.task}",
            f"- Held by {status.agent_id} since "
            f"{iso(status.session_start) if status.session_start else '?'} ({status.entries} log entries)",
        ]
    else:
        workspace = ["- No workspace claimed: start with dokoro_workspace_claim."]
    section("Workspace", workspace, "workspace lines")

    blockers = [q for q in store.working.questions.list("open") if q.priority == "blocker"]
    section("Open blocker questions", [f"- 🚨 {q.question} `[{q.id}]`" for q in blockers], "blocker questions")

    summaries = store.episodic.recall(limit=3)
    section(
        "Latest sessions",
        [f"- [{iso(s.started_at)}] {s.session_id}: {' '.join(s.summary.split())[:300]}" for s in summaries],
        "session summaries",
    )

    claims = [c for c in store.coord.claims.list() if not agent_id or c.agent_id != agent_id]
    section(
        "Files claimed by others",
        [
            f"- `{c.path}` by {c.agent_id}" + (f" ({c.intent})" if c.intent else "") + f", {c.expires_in_seconds}s left"
            for c in claims
        ],
        "claims",
    )
    return briefing


_PLACEHOLDERS = ("_None recorded._", "_Nothing._", "- No workspace claimed")


def session_start_text(store: Store, *, budget: int = 1500, agent_id: str | None = None) -> str:
    """The briefing a client's session-start hook hands the agent: :func:`build_briefing` plus
    the memories due for review, within ``budget`` tokens; empty when the store has nothing to say
    (no rule, no claimed task, no blocker, no session, no claim, nothing due)."""
    briefing = build_briefing(store, budget=budget, agent_id=agent_id)
    review = store.upkeep.review(limit=5)
    due = [_rule_line(entry.memory, entry.stale) for entry in review.stale]
    kept = [line for line in due if briefing.take(line)]
    if kept:
        briefing.sections.append(("Due for review", kept))
    said = briefing.health is not None or any(
        not line.startswith(_PLACEHOLDERS) for _title, body in briefing.sections for line in body
    )
    return briefing.render() if said else ""
