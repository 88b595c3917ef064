"""Bridge tools (reference §2.14): tachibot's research and plans into dokoro, dokoro's context out."""

from __future__ import annotations

from typing import Annotated, Literal

from dokoro_server import AppState, ToolSpec, acting_agent, card, result, secret_notice, state
from dokoro_server.bounds import Lines, Mapping, PathText, Query, Text, Title
from dokoro_store.results.bridge import BridgeContext, PlanImported, ResearchIndexed, ResearchSource
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field

__all__ = ["TOOLS"]

_QUERY_SHOWN = 80


def _notes(text: str, notes: list[str], redacted: list[str] | None = None) -> str:
    lines = [f"⚠️ {note}" for note in notes]
    notice = secret_notice(redacted or [])
    if notice:
        lines.append(notice)
    return text + ("\n\n" + "\n".join(lines) if lines else "")


def bridge_index_research(
    ctx: Context[AppState],
    source: Annotated[ResearchSource, Field(description="The tachibot tool that produced the answer.")],
    query: Annotated[Query, Field(min_length=1, description="The question that was asked.")],
    content: Annotated[Text, Field(min_length=1, description="The answer to keep (markdown welcome).")],
    metadata: Annotated[
        Mapping | None,
        Field(description="Anything worth keeping with it (model, URLs, cost); stored with the document."),
    ] = None,
) -> Annotated[CallToolResult, ResearchIndexed]:
    """Keep a research answer from tachibot (perplexity, grok, openai, gemini) in dokoro's memory so
    search_universal, bridge_get_context and the planning tools find it. One document per source and
    question: asking again replaces the answer, and an identical answer changes nothing."""
    done = state(ctx).store.bridge.index_research(source, query, content, metadata)
    shown = done.query if len(done.query) <= _QUERY_SHOWN else done.query[: _QUERY_SHOWN - 3] + "..."
    title = {"indexed": "Research Indexed", "reindexed": "Research Re-indexed", "unchanged": "Research Unchanged"}
    details = {
        "Doc ID": done.doc_id,
        "Source": done.source,
        "Query": shown,
        "Action": done.action,
        "Chunks/Tokens": f"{done.chunks}/{done.tokens}",
        "Vectors": f"{done.vectors} ({done.embedder})" if done.embedder else "none (full text only)",
    }
    status = "info" if done.action == "unchanged" else "success"
    return result(_notes(card(title[done.action], "", details, status=status), done.notes, done.redacted), done)


def bridge_import_plan(
    ctx: Context[AppState],
    title: Annotated[Title, Field(min_length=1, description="Title of the plan.")],
    phases: Annotated[
        Lines, Field(min_length=1, description="The phases, in order; each becomes an item of the plan.")
    ],
    filepath: Annotated[
        PathText | None, Field(description="Where tachibot keeps the plan; recorded in the description.")
    ] = None,
    status: Annotated[
        Literal["draft", "active"], Field(description="active (work starts now) or draft (not started).")
    ] = "active",
) -> Annotated[CallToolResult, PlanImported]:
    """Import a plan made by tachibot's planner as a dokoro plan: one item per phase. It is an ordinary
    plan afterwards (dokoro_plan_status, dokoro_plan_check, dokoro_plan_validate work on it)."""
    app = state(ctx)
    done = app.store.bridge.import_plan(title, phases, status=status, filepath=filepath, agent_id=acting_agent(ctx))
    details = {"Plan ID": done.plan_id, "Items": len(done.items), "Status": done.status.upper(), "Path": done.mirror}
    return result(_notes(card("Plan Imported", done.title, details), [], done.redacted), done)


def bridge_get_context(
    ctx: Context[AppState],
    query: Annotated[Query, Field(min_length=1, description="What the context is for, in plain words.")],
    limit: Annotated[int, Field(ge=1, le=50, description="How many documents to return.")] = 5,
    include_research: Annotated[bool, Field(description="Include research documents.")] = True,
    include_plans: Annotated[bool, Field(description="Include plan documents and related live plans.")] = True,
) -> Annotated[CallToolResult, BridgeContext]:
    """What dokoro already knows about a question, for tachibot to start from: the documents hybrid
    search ranks best (session dumps, decisions, research, notes), then the live plans closest to it."""
    context = state(ctx).store.bridge.get_context(
        query, limit, include_research=include_research, include_plans=include_plans
    )
    if not context.entries and not context.plans:
        text = (
            f"No context found for {context.query!r}. Index research with bridge_index_research, or run search_reindex."
        )
    else:
        blocks = [f"**{len(context.entries)} context entries** for {context.query!r}:"]
        blocks += [
            f"[{e.rank}] ({e.doc_type}) {e.title}"
            + (f" — ⚠️ RETIRED: {e.retired}" if e.retired else "")
            + (f" — ⏳ {e.stale}" if e.stale else "")
            + f"\n{e.excerpt}"
            for e in context.entries
        ]
        if context.plans:
            lines = ["**Related plans:**"]
            for plan in context.plans:
                step = f" — next: {plan.next_item}" if plan.next_item else ""
                lines.append(f"- {plan.title} `{plan.plan_id}` ({plan.status}, {plan.completion}%){step}")
            blocks.append("\n".join(lines))
        text = "\n\n".join(blocks)
    return result(_notes(text, context.notes), context)


TOOLS = [
    ToolSpec(bridge_index_research, "Index a tachibot research answer", destructive=True, idempotent=True),
    ToolSpec(bridge_import_plan, "Import a tachibot plan"),
    ToolSpec(bridge_get_context, "Context for tachibot", idempotent=True),
]
