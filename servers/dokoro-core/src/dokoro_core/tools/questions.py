"""Question tools: open questions shared by every agent of the store, blockers first."""

from __future__ import annotations

from typing import Annotated, Literal

from dokoro_server import AppState, ToolSpec, acting_agent, card, result, secret_notice, state
from dokoro_server.bounds import Key, Note
from dokoro_store.results.working import BlockerCheck, QuestionAdded, QuestionAnswered, QuestionList
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field

__all__ = ["TOOLS"]

_ICON = {"blocker": "🚨", "high": "❗", "medium": "•", "low": "○"}


def _ago(seconds: float) -> str:
    minutes = int(seconds // 60)
    if minutes < 60:
        return f"{minutes}m"
    if minutes < 60 * 24:
        return f"{minutes // 60}h"
    return f"{minutes // (60 * 24)}d"


def dokoro_question_add(
    ctx: Context[AppState],
    question: Annotated[Note, Field(description="The open question.")],
    context: Annotated[Note | None, Field(description="What it is about or why it matters.")] = None,
    priority: Annotated[
        Literal["low", "medium", "high", "blocker"], Field(description="'blocker' stops work until answered.")
    ] = "medium",
) -> Annotated[CallToolResult, QuestionAdded]:
    """Record an open question (shared with every agent of this store); blockers surface first."""
    app = state(ctx)
    added = app.store.working.questions.add(question, context=context, priority=priority, agent_id=acting_agent(ctx))
    row, counts = added.question, added.counts
    from dokoro_store import redact_all

    notice = secret_notice(redact_all([question, context])[1])
    text = card(
        "Question Added",
        row.question + (f"\n\n{notice}" if notice else ""),
        {
            "ID": row.id,
            "PRIORITY": row.priority.upper(),
            "Open questions": f"{counts.open} ({counts.blockers} blockers)",
        },
        status="warning" if priority == "blocker" else "success",
    )
    return result(text, added)


def dokoro_question_answer(
    ctx: Context[AppState],
    answer: Annotated[Note, Field(description="The answer.")],
    id: Annotated[Key | None, Field(description="Question id (q-...). Default: the most recent open question.")] = None,
) -> Annotated[CallToolResult, QuestionAnswered]:
    """Answer an open question (by id, or the most recent open one)."""
    done = state(ctx).store.working.questions.answer(answer, id, agent=acting_agent(ctx))
    text = card(
        "Question Answered",
        done.question.question,
        {
            "ID": done.question.id,
            "Answer": done.question.answer,
            "Was open for": _ago(done.open_for_seconds),
            "Remaining open": done.counts.open,
        },
    )
    return result(text, done)


def dokoro_question_list(
    ctx: Context[AppState],
    status: Annotated[Literal["open", "answered", "all"], Field(description="Which questions to list.")] = "open",
    includeAnswered: Annotated[bool, Field(description="Also show up to 10 answered questions.")] = False,
) -> Annotated[CallToolResult, QuestionList]:
    """List questions: blockers first, then by priority, newest first."""
    service = state(ctx).store.working.questions
    # includeAnswered widens the default open list; it never adds open questions to status='answered'.
    wanted = "all" if includeAnswered and status == "open" else status
    rows = service.list(wanted)
    if not rows:
        return result(card("No Questions", f"No {status} questions.", status="info"), QuestionList(questions=[]))
    open_rows = [q for q in rows if q.status == "open"]
    answered = [q for q in rows if q.status == "answered"]
    lines = [f"## Questions ({len(rows)})"]
    blockers = [q for q in open_rows if q.priority == "blocker"]
    others = [q for q in open_rows if q.priority != "blocker"]
    if blockers:
        lines += ["", "### 🚨 BLOCKERS"]
        lines += [f"- 🚨 **{q.question}** `[{q.id}]`" + (f"\n  _{q.context}_" if q.context else "") for q in blockers]
    if others:
        lines += ["", "### Open Questions"]
        lines += [
            f"- {_ICON.get(q.priority, '•')} {q.question} `[{q.id}]`" + (f"\n  _{q.context}_" if q.context else "")
            for q in others
        ]
    if answered and (includeAnswered or status in ("answered", "all")):
        lines += ["", "### Answered"]
        answered.sort(key=lambda q: q.answered_at or q.created_at, reverse=True)
        lines += [f"- ~~{q.question}~~ → {q.answer} `[{q.id}]`" for q in answered[:10]]
        if len(answered) > 10:
            lines.append(f"- ...and {len(answered) - 10} more")
    return result("\n".join(lines), QuestionList(questions=rows))


def dokoro_question_check(ctx: Context[AppState]) -> Annotated[CallToolResult, BlockerCheck]:
    """Are we blocked? Lists open blocker questions that must be answered before going on."""
    out = state(ctx).store.working.questions.check()
    blockers, counts = out.blockers, out.counts
    if blockers:
        lines = [f"## 🚨 BLOCKED: {len(blockers)} question(s) must be answered", ""]
        lines += [f"- **{q.question}** `[{q.id}]`" + (f" — {q.context}" if q.context else "") for q in blockers]
        lines += ["", "Answer with dokoro_question_answer(id=..., answer=...)."]
        return result("\n".join(lines), out)
    if counts.open:
        details = {p.capitalize(): n for p, n in counts.by_priority.items()}
        return result(card("Open Questions", f"{counts.open} open, none blocking.", details, "warning"), out)
    return result(card("All Clear", "No open questions.", status="success"), out)


TOOLS = [
    ToolSpec(dokoro_question_add, "Add a question"),
    ToolSpec(dokoro_question_answer, "Answer a question"),
    ToolSpec(dokoro_question_list, "List questions", read_only=True, idempotent=True),
    ToolSpec(dokoro_question_check, "Check for blockers", read_only=True, idempotent=True),
]
