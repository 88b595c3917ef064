"""Typed memory tools: remember (with the conflict gate), recall, forget, status, briefing."""

from __future__ import annotations

from typing import Annotated, Literal

from dokoro_server import AppState, ToolSpec, acting_agent, require_operator, result, secret_notice, state
from dokoro_server.bounds import IsoDate, Key, Keys, Note, Query, Text, Title
from dokoro_store.results.memories import (
    BriefingSummary,
    FilesSync,
    Forgotten,
    Memory,
    MemoryStatus,
    MemoryVerdict,
    Recall,
    Remembered,
)
from dokoro_store.results.memory_files import MemoryReindex
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field

__all__ = ["TOOLS"]

MemoryType = Literal[
    "fact", "preference", "decision", "lesson", "rule", "guardrail", "reference", "episode", "best-practice", "context"
]
Trust = Literal["user-stated", "agent-inferred", "imported"]
State = Literal["active", "archived", "deprecated", "proposed"]


def _files_lines(files: FilesSync | None) -> list[str]:
    """What a person changed in the memory files since the last call (picked up before this one),
    and the files that hold no memory until fixed (named on every call)."""
    if files is None or files.quiet:
        return []
    head = "📝 memory files edited by a person (picked up now):" if files.changes else "📝 memory files:"
    return ["", head, *files.lines()]


def dokoro_remember(
    ctx: Context[AppState],
    type: Annotated[MemoryType, Field(description="What kind of memory this is.")],
    title: Annotated[Title, Field(description="One line naming the memory.")],
    body: Annotated[Text, Field(description="The memory itself; its first paragraph is the excerpt.")],
    entities: Annotated[
        Keys | None, Field(description="Things it is about: files, services, components, people.")
    ] = None,
    trust: Annotated[Trust, Field(description="Who vouches for it: the user, or your own inference.")] = (
        "agent-inferred"
    ),
    source: Annotated[Note | None, Field(description="Where it comes from (a conversation, a doc, a URL).")] = None,
    session_id: Annotated[Key | None, Field(description="The session it was learned in.")] = None,
    review_after: Annotated[IsoDate | None, Field(description="ISO date after which it should be re-checked.")] = None,
    valid_until: Annotated[IsoDate | None, Field(description="ISO date after which it no longer holds.")] = None,
    supersedes: Annotated[
        Key | None,
        Field(description="Id of the memory this one replaces (it becomes archived): yours, or one nobody owns."),
    ] = None,
    agent_id: Annotated[Key | None, Field(description="Who remembers it (default: this agent).")] = None,
    depends_on: Annotated[
        Keys | None,
        Field(description="Ids of memories this one relies on (in force, at most 20): retiring one makes it stale."),
    ] = None,
) -> Annotated[CallToolResult, Remembered]:
    """Remember a fact, preference, decision, lesson, rule, guardrail, reference, episode, best-practice (a
    recommended pattern) or context (the project's stack, commands, domain facts) for later sessions. Rules
    and guardrails are briefed every session, the rest recalled when relevant. If close memories already
    exist (same entity, similar text), they are returned for you to judge — nothing is overwritten: give a
    verdict with dokoro_memory_verdict. Secrets are redacted. All or nothing: an error means nothing was
    stored; repeating an identical call moments later returns the memory the first call stored
    (retried=true), never a duplicate."""
    app = state(ctx)
    done = app.store.memories.remember(
        type=type,
        title=title,
        body=body,
        entities=entities,
        trust=trust,
        agent_id=acting_agent(ctx, agent_id),
        session_id=session_id,
        source=source,
        review_after=review_after,
        valid_until=valid_until,
        supersedes=supersedes,
        depends_on=depends_on,
    )
    memory = done.memory
    if done.retried:
        text = f"already remembered {memory.type} {memory.id} moments ago (identical call): nothing new stored"
        return result(text, done)
    lines = [f"remembered {memory.type} {memory.id}: {memory.title}"]
    if memory.state == "proposed":
        lines.append(
            "proposed: it waits for a person's review before it counts (`dokoro memory approve|reject`); "
            "recall shows it only with include_proposed=true"
        )
    if done.superseded is not None:
        lines.append(f"superseded {done.superseded.id} (now archived; the chain is kept)")
    if done.depends_on:
        lines.append(f"depends on {', '.join(done.depends_on)} (retiring one makes this memory stale)")
    if done.redacted:
        lines.append(secret_notice(done.redacted))
    if not done.indexed:
        lines.append("(not indexed yet: dokoro_memory_status shows the index; recall finds it once indexed)")
    lines += [f"note: {note}" for note in done.notes]
    if done.conflicts:
        lines += ["", f"⚖️ {len(done.conflicts)} close memory(ies) — nothing was overwritten; judge each pair:"]
        lines += ["new: " + _in_full(memory)]
        for c in done.conflicts:
            advice = (
                "latest-wins looks safe" if c.latest_wins_eligible else f"latest-wins NOT safe: {c.why_not_latest_wins}"
            )
            shared = ", ".join(c.shared_entities) or "none"
            signals = f"meaning {c.semantic}, words {c.lexical}" if c.semantic is not None else f"words {c.lexical}"
            lines.append(
                f"- old: {_in_full(c.memory)}\n  similarity {c.similarity} ({signals}), shared entities: {shared}, "
                f"{c.gap_days} days apart; {advice}"
            )
        lines.append(
            f"Verdict: dokoro_memory_verdict(new_id='{memory.id}', old_id=..., "
            "verdict='supersede' | 'keep_both' | 'discard_new')."
        )
    lines += _files_lines(done.files)
    return result("\n".join(lines), done)


def _in_full(memory: Memory) -> str:
    """A memory as the gate shows it: everything needed to judge it without another call."""
    dates = f"created {memory.created_at:%Y-%m-%dT%H:%M:%SZ}"
    if memory.updated_at != memory.created_at:
        dates += f", updated {memory.updated_at:%Y-%m-%dT%H:%M:%SZ}"
    if memory.valid_until is not None:
        dates += f", valid until {memory.valid_until:%Y-%m-%dT%H:%M:%SZ}"
    body = "\n".join("  " + line for line in memory.body.splitlines())
    return f"{memory.id} [{memory.type}, {memory.trust}, {dates}] {memory.title}\n{body}"


def dokoro_memory_verdict(
    ctx: Context[AppState],
    new_id: Annotated[Key, Field(description="The newer memory of the pair.")],
    old_id: Annotated[Key, Field(description="The older memory of the pair.")],
    verdict: Annotated[
        Literal["supersede", "keep_both", "discard_new"],
        Field(
            description="supersede: the new one replaces the old (archived); keep_both: both hold; "
            "discard_new: the new one was a duplicate (deprecated)."
        ),
    ],
) -> Annotated[CallToolResult, MemoryVerdict]:
    """Judge a pair of close memories that dokoro_remember surfaced. Nothing changes without this."""
    done = state(ctx).store.memories.verdict(new_id, old_id, verdict, acting_agent(ctx))
    new, old = done.new, done.old
    text = f"verdict {verdict}: {new.id} is {new.state}, {old.id} is {old.state}"
    if done.dependents_flagged:
        text += "\n" + _flagged_line(done.dependents_flagged)
    return result(text, done)


def _flagged_line(flagged: list[str]) -> str:
    return f"{len(flagged)} memory(ies) depending on it are now stale until renewed: {', '.join(flagged)}"


def dokoro_recall(
    ctx: Context[AppState],
    query: Annotated[Query, Field(description="What you want to remember, in your own words.")],
    limit: Annotated[int, Field(ge=1, le=50, description="Top-k memories to return.")] = 10,
    types: Annotated[list[MemoryType] | None, Field(max_length=10, description="Only these kinds of memory.")] = None,
    entity: Annotated[Key | None, Field(description="Only memories about this entity.")] = None,
    since: Annotated[IsoDate | None, Field(description="Only memories created at or after this ISO date.")] = None,
    until: Annotated[IsoDate | None, Field(description="Only memories created at or before this ISO date.")] = None,
    include_archived: Annotated[
        bool, Field(description="Also superseded (archived) and deprecated memories, ranked lower.")
    ] = False,
    include_proposed: Annotated[
        bool,
        Field(description="Also memories proposed by agents that still wait for a person's review (review queue)."),
    ] = False,
) -> Annotated[CallToolResult, Recall]:
    """Recall memories by meaning and words (hybrid search over full text, vectors and the entity graph),
    ranked by relevance weighted by trust, state, freshness and use; stale memories (past valid_until or
    review_after, or depending on a retired one) come after the current ones and say "stale", superseded and
    deprecated ones come last and say so. Each hit shows its relevance (how likely it is what you asked for, on
    one scale for every query) and why it surfaced; when none is a close match the answer says so."""
    states = ("active", "archived", "deprecated") if include_archived else ("active",)
    if include_proposed:
        states = (*states, "proposed")
    # One pass: the memory files reconciled (a bounded share, docs/memory-files.md), then the recall.
    answer = state(ctx).store.memories.recall_answer(
        query, limit=limit, types=types, entity=entity, since=since, until=until, states=states
    )
    hits, files = answer.hits, answer.files
    # A process that cannot compare vectors on this store says so on every answer (one embedder per store).
    notice = state(ctx).store.search.vector_notice()
    said = [f"note: {notice}"] if notice else []
    asked_hidden = [t for t in answer.hidden_types if not types or t in types]
    if asked_hidden and (types or not hits):
        # Said when it can explain the answer: the types asked for, or an empty recall.
        said.append(
            f"note: memory types switched off in this store (hidden, never recalled): {', '.join(asked_hidden)}"
        )
    if not hits:
        return result("\n".join(["(no memories found)", *_files_lines(files), *said]), answer)
    lines = []
    for i, h in enumerate(hits, start=1):
        m = h.memory
        excerpt = " ".join(m.body.split("\n\n", 1)[0].split())
        if len(excerpt) > 240:
            excerpt = excerpt[:237] + "..."
        tag = f"[{m.type}, proposed]" if m.state == "proposed" else f"[{m.type}]"
        if h.retired:
            tag = f"[{m.type}, ⚠️ RETIRED: {h.retired}]"
        elif h.stale:
            tag = f"[{m.type}, ⏳ {h.stale}]"
        lines.append(f"{i}. {tag} {m.title} ({m.id}, relevance {h.relevance:.2f})\n   {excerpt}\n   why: {h.reason}")
    from dokoro_store import CLOSE_MATCH  # not at import: tools/list loads no store

    if all(h.relevance < CLOSE_MATCH for h in hits):
        lines.insert(0, f"(no close match: no memory reaches relevance {CLOSE_MATCH}; the nearest are)")
    lines += _files_lines(files) + said
    return result("\n".join(lines), answer)


def dokoro_forget(
    ctx: Context[AppState],
    id: Annotated[Key, Field(description="The memory to forget.")],
    reason: Annotated[
        Note | None, Field(description="Why it no longer holds (required to deprecate; history is kept).")
    ] = None,
    purge: Annotated[bool, Field(description="Delete it for good instead of deprecating it.")] = False,
    confirm: Annotated[bool, Field(description="Required with purge=true.")] = False,
) -> Annotated[CallToolResult, Forgotten]:
    """Forget one of your memories (or one nobody owns): deprecate it with a reason (kept, ranked far down,
    shown only on request), or purge it for good with purge=true and confirm=true. Another agent's or a
    person's memory is refused, with whose it is: remember what you know as your own memory instead."""
    memory, done = state(ctx).store.memories.forget(
        id, reason=reason, purge=purge, confirm=confirm, acting_agent=acting_agent(ctx)
    )
    text = f"{done.action} {memory.id}: {memory.title}" + (
        f" — {memory.state_reason}" if done.action == "deprecated" else ""
    )
    if done.dependents_flagged:
        text += "\n" + _flagged_line(done.dependents_flagged)
    return result(text, done)


def dokoro_memory_status(ctx: Context[AppState]) -> Annotated[CallToolResult, MemoryStatus]:
    """An honest health report of the memories, starting with one actionable line when something waits for a
    decision: index freshness, stale ones, unresolved conflicts, use by type (written, read, never read), and
    aging episodes that could be compacted into one memory."""
    from dokoro_store import usage_line  # not at import: tools/list loads no store

    memories = state(ctx).store.memories
    # Read-only: a person's edits to the memory files are taken in by the next writing call.
    report = memories.status(reconcile=False)
    lines = [
        *([f"⚠️ {report.health}"] if report.health else []),
        f"## Memory status: {report.total} memories",
        "- by state: " + (", ".join(f"{k} {v}" for k, v in sorted(report.by_state.items())) or "none"),
        "- by type: " + (", ".join(f"{k} {v}" for k, v in sorted(report.by_type.items())) or "none"),
        "- index: "
        + ("up to date" if not report.index_pending else f"{report.index_pending} memory(ies) waiting to be indexed"),
        f"- never recalled: {report.never_recalled}",
        usage_line(report.usage),
    ]
    if report.hidden:
        lines.append(
            "- switched off (hidden from recall and the briefing, refused on write; `dokoro memory types TYPE --on`): "
            + ", ".join(f"{kind} ({count} in force)" for kind, count in report.hidden.items())
        )
    if report.stale_total:
        lines.append(f"- stale now: {report.stale_total} (`dokoro memory review`, dokoro_memory_review)")
    if report.stale:
        lines.append(
            f"- past review_after ({len(report.stale)}): " + ", ".join(f"{m.id} {m.title}" for m in report.stale[:10])
        )
    if report.expired:
        lines.append(f"- past valid_until ({len(report.expired)}): " + ", ".join(m.id for m in report.expired[:10]))
    if report.unresolved:
        lines.append(f"- unresolved conflicts ({len(report.unresolved)}):")
        lines += [f"  - {p.new_id} vs {p.old_id} (similarity {p.similarity})" for p in report.unresolved[:10]]
    if report.compaction_candidates:
        lines.append("- compaction candidates (aging, unused episodes sharing an entity):")
        lines += [f"  - {entity}: {len(items)} episodes" for entity, items in report.compaction_candidates[:10]]
    if proposed := report.by_state.get("proposed"):
        lines.append(f"- waiting for review: {proposed} proposed memory(ies) (`dokoro memory approve|reject`)")
    if (check := report.files_check) is not None:
        mark = "" if check.in_step else "⚠️ "
        lines.append(f"- memory files: {mark}{check.message}")
        lines += [f"  - {p.path}: {p.reason}" for p in check.unread_files]
        if check.unread > len(check.unread_files):
            lines.append(f"  - …and {check.unread - len(check.unread_files)} more")
    files = FilesSync(problems=memories.file_problems())
    lines += [f"- memory files not read ({len(files.problems)}):", *files.lines()] if files.problems else []
    return result("\n".join(lines), report.result().model_copy(update={"files": None if files.quiet else files}))


def dokoro_memory_reindex(
    ctx: Context[AppState],
    full: Annotated[bool, Field(description="Re-embed every memory, not only the ones whose text changed.")] = False,
) -> Annotated[CallToolResult, MemoryReindex]:
    """Rebuild the memories from their markdown files under memories/ in one call, forward only: a file older
    than its memory (a folder behind the database) is written again from the database, never the database
    from it; a file whose memory the database lacks is restored with its id, links and (memories/ledger/)
    verdicts and use counters, unless it was purged; a file's edits are yours, with your rights only (no
    owner change, no trust raised, no proposal approved); a file that cannot be read is skipped, and why.
    Use it when dokoro_memory_status says the files and the database differ (a lost or replaced database,
    a fresh clone). On the shared HTTP server it is the operator's (an operator token)."""
    require_operator("rebuilding every memory from its file (dokoro_memory_reindex)", "`dokoro memory reindex`")
    report = state(ctx).store.memories.reindex_from_files(full=full, actor=acting_agent(ctx))
    lines = [
        f"rebuilt from {report.files} memory file(s): {report.restored} restored, {report.updated} updated, "
        f"{report.unchanged} unchanged, {report.created} created, {report.behind} behind the database (written "
        f"again from it), {report.removed} removed (purged), {report.skipped} skipped; {report.indexed} indexed",
    ]
    if report.links or report.verdicts or report.uses or report.purges:
        lines.append(
            f"brought back: {report.links} depends_on link(s), {report.verdicts} verdict(s), {report.uses} use "
            f"counter(s), {report.purges} purge record(s)"
        )
    if report.rows_without_file:
        lines.append(f"{report.rows_without_file} memory(ies) had no file: kept, and written to files now")
    lines += [f"- {c.path}: {c.message}" for c in report.changes if c.action not in ("behind", "created")]
    lines += [f"- {p.path}: skipped ({p.reason})" for p in report.problems]
    lines += [f"- {p.path}: skipped ({p.reason})" for p in report.duplicates]
    return result("\n".join(lines), report)


def dokoro_briefing(
    ctx: Context[AppState],
    budget: Annotated[int, Field(ge=200, le=32000, description="Token budget of the briefing.")] = 2000,
    focus: Annotated[
        Query | None, Field(description="What you are about to do (default: the claimed task); orders the rules.")
    ] = None,
) -> Annotated[CallToolResult, BriefingSummary]:
    """What to read at session start, within a token budget: every rule and guardrail (most relevant first
    when over budget, overflow counted), the workspace, open blockers, latest sessions, others' claims."""
    from dokoro_store import build_briefing

    app = state(ctx)
    briefing = build_briefing(app.store, budget=budget, focus=focus, agent_id=acting_agent(ctx))
    return result(briefing.render(), briefing.summary())


TOOLS = [
    ToolSpec(dokoro_remember, "Remember"),
    ToolSpec(dokoro_memory_verdict, "Judge a pair of close memories"),
    ToolSpec(dokoro_recall, "Recall memories", idempotent=False),
    ToolSpec(dokoro_forget, "Forget a memory", destructive=True),
    ToolSpec(dokoro_memory_status, "Memory health", read_only=True, idempotent=True),
    ToolSpec(dokoro_memory_reindex, "Rebuild the memories from their files", destructive=True, idempotent=True),
    ToolSpec(dokoro_briefing, "Session briefing", read_only=True, idempotent=True),
]
