"""Where proposals come from: candidates for upkeep found in the data the store already holds.

Each finder reads, never writes, and does bounded work: the database filters, groups and counts,
and at most ``limit`` candidates (and a bounded number of rows per candidate) reach Python.

- **merge**: the unresolved pairs of the conflict gate (the near-duplicates ``dokoro_memory_status``
  counts, :func:`~.status.unresolved_pairs`); the newer memory is kept (latest wins, the gate's
  own rule) and supersedes the older;
- **summarise**: the compaction candidates of the status (aging episodes sharing an entity,
  :func:`~.status.aging_episodes` grouped by :func:`~.status.episode_runs`);
- **prune**: active memories older than :data:`PRUNE_AGE` never recalled (rules and guardrails
  are left out: the briefing shows them without a recall);
- **guardrail**: a recurring correction — the conflict gate's ``discard_new`` verdict given
  :data:`RECURRING` times or more against the same memory (agents keep contradicting it and are
  corrected the same way), or the same failure of one tool (same error text) recorded
  :data:`TOOL_FAILURES` times or more in the affective layer within :data:`FAILURE_WINDOW`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

from sqlalchemy import func, literal_column
from sqlalchemy import select as core_select
from sqlmodel import Session, col, select

from dokoro_store.clock import iso
from dokoro_store.models import AgentFeedback
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.models.memories import MemoryConflict
from dokoro_store.semantic.memories.repository import pair_hash
from dokoro_store.semantic.memories.rows import memory_result
from dokoro_store.semantic.memories.status import aging_episodes, episode_runs, unresolved_pairs

__all__ = [
    "FAILURE_WINDOW",
    "KINDS",
    "PRUNE_AGE",
    "RECURRING",
    "TOOL_FAILURES",
    "Candidate",
    "conflict_guardrails",
    "draft",
    "merges",
    "prunes",
    "summaries",
    "tool_guardrails",
]

# ``onboard``: a memory read from the project's own files (``dokoro onboard``, :mod:`..onboarding`),
# filed on request, never by the pass.
KINDS = ("merge", "summarise", "prune", "guardrail", "onboard")
# A memory this old that no recall ever returned is proposed for pruning (archived, not deleted).
PRUNE_AGE = timedelta(days=90)
# The same correction this many times is a pattern worth a guardrail.
RECURRING = 3
# The same failure of a tool this many times within the window.
TOOL_FAILURES = 5
FAILURE_WINDOW = timedelta(days=30)
FAILED_OUTCOMES = ("failure", "timeout")
# At most this many episodes in one summary, and this many ids quoted as evidence of a pattern.
MAX_RUN = 50
MAX_EVIDENCE_IDS = 20
# How much of an error message makes "the same failure" (the rest is often an id or a path).
ERROR_PREFIX = 120
# How much of each episode a summary's draft quotes.
_EXCERPT = 200


class Episode(Protocol):
    """What a summary's draft reads of an episode (a row, or its public result)."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def body(self) -> str: ...
    @property
    def created_at(self) -> datetime: ...


@dataclass(frozen=True)
class Candidate:
    """A proposal before it is filed: ``key`` names what it is about (the same key is filed once)."""

    kind: str
    key: str
    title: str
    evidence: dict[str, Any]
    memory_ids: list[str] = field(default_factory=list)
    owners: list[str] = field(default_factory=list)


def _owners(agents: Iterable[str | None]) -> list[str]:
    return sorted({a for a in agents if a})


def _digest(*parts: str) -> str:
    return hashlib.sha256(chr(31).join(parts).encode("utf-8")).hexdigest()[:16]


def _rows(session: Session, ids: Sequence[str]) -> dict[str, MemoryRow]:
    if not ids:
        return {}
    return {row.id: row for row in session.exec(select(MemoryRow).where(col(MemoryRow.id).in_(list(ids))))}


def draft(entity: str, episodes: Sequence[Episode]) -> tuple[str, str]:
    """The draft of a summary: the episodes themselves (no model writes it), one line each, oldest
    first; the approver may replace it with a distilled text (:mod:`.summaries`)."""
    ordered = sorted(episodes, key=lambda m: (m.created_at, m.id))
    first, last = ordered[0].created_at, ordered[-1].created_at
    title = f"Summary: {len(ordered)} episodes about {entity} ({first:%Y-%m-%d} to {last:%Y-%m-%d})"
    lines = []
    for m in ordered:
        excerpt = " ".join(m.body.split())
        excerpt = excerpt if len(excerpt) <= _EXCERPT else excerpt[: _EXCERPT - 1] + "…"
        lines.append(f"- {m.created_at:%Y-%m-%d} {m.title}: {excerpt} ({m.id})")
    return title, "\n".join(lines)


def merges(session: Session, *, limit: int, skip: set[str]) -> list[Candidate]:
    """Unresolved near-duplicate pairs, oldest shown first: keep the newer, supersede the older."""
    pairs = session.exec(unresolved_pairs().limit(limit * 2)).all()
    rows = _rows(session, [i for new_id, old_id, _ in pairs for i in (new_id, old_id)])
    found: list[Candidate] = []
    for new_id, old_id, similarity in pairs:
        new, old = rows.get(new_id), rows.get(old_id)
        if new is None or old is None or skip & {new_id, old_id}:
            continue
        found.append(
            Candidate(
                kind="merge",
                key=f"merge:{pair_hash(new_id, old_id)}",
                title=f"“{old.title}” into “{new.title}” (similarity {float(similarity):.2f})",
                evidence={
                    "keep": new.id,
                    "supersede": [old.id],
                    "similarity": round(float(similarity), 4),
                    "titles": {new.id: new.title, old.id: old.title},
                    "created": {new.id: iso(new.created_at), old.id: iso(old.created_at)},
                    "recalled": {new.id: new.recall_count, old.id: old.recall_count},
                },
                memory_ids=[new.id, old.id],
                owners=_owners([new.agent_id, old.agent_id]),
            )
        )
        skip |= {new_id, old_id}
        if len(found) >= limit:
            break
    return found


def summaries(session: Session, now: datetime, *, limit: int, skip: set[str]) -> list[Candidate]:
    """Runs of aging episodes that share an entity (the status's compaction candidates)."""
    aging = [memory_result(row) for row in session.exec(aging_episodes(now).limit(limit * MAX_RUN)).all()]
    found: list[Candidate] = []
    for entity, run in episode_runs(aging):
        episodes = [m for m in run if m.id not in skip][:MAX_RUN]
        if len(episodes) < 2:
            continue
        ids = sorted(m.id for m in episodes)
        found.append(
            Candidate(
                kind="summarise",
                key=f"summarise:{entity}:{_digest(*ids)}",
                title=f"{len(episodes)} aging episodes about {entity} into one memory",
                evidence={
                    "entity": entity,
                    "episodes": ids,
                    "count": len(episodes),
                    "first": iso(min(m.created_at for m in episodes)),
                    "last": iso(max(m.created_at for m in episodes)),
                    "titles": {m.id: m.title for m in episodes},
                    # What approving it writes unless the approver gives a distilled text instead.
                    "draft": dict(zip(("title", "body"), draft(entity, episodes), strict=True)),
                },
                memory_ids=ids,
                owners=_owners(m.agent_id for m in episodes),
            )
        )
        skip |= set(ids)
        if len(found) >= limit:
            break
    return found


def prunes(session: Session, now: datetime, *, limit: int, skip: set[str]) -> list[Candidate]:
    """Old active memories no recall ever returned, oldest first."""
    rows = session.exec(
        select(MemoryRow)
        .where(
            col(MemoryRow.state) == "active",
            # A literal, so the partial index of the never recalled (migration 0029) applies.
            col(MemoryRow.recall_count) == literal_column("0"),
            col(MemoryRow.created_at) <= now - PRUNE_AGE,
            col(MemoryRow.type).not_in(["rule", "guardrail"]),
        )
        .order_by(col(MemoryRow.created_at), col(MemoryRow.id))
        .limit(limit + len(skip))
    ).all()
    found: list[Candidate] = []
    for row in rows:
        if row.id in skip:
            continue
        found.append(
            Candidate(
                kind="prune",
                key=f"prune:{row.id}",
                title=f"“{row.title}” ({row.type}, never recalled in {(now - row.created_at).days} days)",
                evidence={
                    "memory": row.id,
                    "type": row.type,
                    "created": iso(row.created_at),
                    "recall_count": row.recall_count,
                    "age_days": int((now - row.created_at).total_seconds() // 86400),
                },
                memory_ids=[row.id],
                owners=_owners([row.agent_id]),
            )
        )
        if len(found) >= limit:
            break
    return found


def conflict_guardrails(session: Session, *, limit: int, skip: set[str]) -> list[Candidate]:
    """A memory the gate's ``discard_new`` verdict upheld against :data:`RECURRING` or more newer
    memories: the correction recurs, so the memory is proposed as a guardrail."""
    count = func.count()
    groups = session.exec(
        select(MemoryConflict.old_id, count, func.min(MemoryConflict.decided_at), func.max(MemoryConflict.decided_at))
        .where(col(MemoryConflict.verdict) == "discard_new")
        .group_by(col(MemoryConflict.old_id))
        .having(count >= RECURRING)
        .order_by(count.desc(), col(MemoryConflict.old_id))
        .limit(limit + len(skip))
    ).all()
    rows = _rows(session, [old_id for old_id, *_ in groups])
    found: list[Candidate] = []
    for old_id, times, first, last in groups:
        row = rows.get(old_id)
        if row is None or row.state != "active" or row.type == "guardrail" or old_id in skip:
            continue
        discarded = session.exec(
            select(MemoryConflict.new_id)
            .where(col(MemoryConflict.old_id) == old_id, col(MemoryConflict.verdict) == "discard_new")
            .order_by(col(MemoryConflict.decided_at))
            .limit(MAX_EVIDENCE_IDS)
        ).all()
        found.append(
            Candidate(
                kind="guardrail",
                key=f"guardrail:conflict:{old_id}",
                title=f"“{row.title}” upheld against {int(times)} contradictions: make it a guardrail",
                evidence={
                    "source": "conflict gate",
                    "memory": row.id,
                    "verdict": "discard_new",
                    "count": int(times),
                    "first": iso(first) if first else None,
                    "last": iso(last) if last else None,
                    "discarded": list(discarded),
                },
                memory_ids=[row.id],
                owners=_owners([row.agent_id]),
            )
        )
        if len(found) >= limit:
            break
    return found


def tool_guardrails(session: Session, now: datetime, *, limit: int) -> list[Candidate]:
    """The same failure of one tool (the first :data:`ERROR_PREFIX` characters of its error, or
    none) recorded :data:`TOOL_FAILURES` times or more within :data:`FAILURE_WINDOW`."""
    error = func.substr(func.coalesce(col(AgentFeedback.error_message), ""), 1, ERROR_PREFIX)
    count = func.count()
    recent = (
        col(AgentFeedback.recorded_at) >= now - FAILURE_WINDOW,
        col(AgentFeedback.outcome).in_(FAILED_OUTCOMES),
    )
    # Five columns: past the typed overloads of sqlmodel's select, so SQLAlchemy's own.
    groups = session.execute(
        core_select(
            col(AgentFeedback.tool_name),
            error,
            count,
            func.min(AgentFeedback.recorded_at),
            func.max(AgentFeedback.recorded_at),
        )
        .where(*recent)
        .group_by(col(AgentFeedback.tool_name), error)
        .having(count >= TOOL_FAILURES)
        .order_by(count.desc(), col(AgentFeedback.tool_name))
        .limit(limit)
    ).all()
    found: list[Candidate] = []
    for tool, message, times, first, last in groups:
        agents = session.exec(
            select(AgentFeedback.agent_id)
            .where(*recent, col(AgentFeedback.tool_name) == tool, error == message)
            .group_by(col(AgentFeedback.agent_id))
            .order_by(col(AgentFeedback.agent_id))
            .limit(MAX_EVIDENCE_IDS)
        ).all()
        text = str(message or "")
        found.append(
            Candidate(
                kind="guardrail",
                key=f"guardrail:tool:{tool}:{_digest(text)}",
                title=f"{tool} failed {int(times)} times" + (f" with “{text}”" if text else "") + ": a guardrail",
                evidence={
                    "source": "tool failures",
                    "tool": tool,
                    "error": text or None,
                    "count": int(times),
                    "first": iso(first),
                    "last": iso(last),
                    "agents": list(agents),
                },
                owners=_owners(agents),
            )
        )
    return found
