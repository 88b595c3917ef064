"""Results of the proposals ledger: upkeep of the memories the store proposes and a person (or
the owning agent) approves or rejects."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from dokoro_store.results.base import IsoTime, Result
from dokoro_store.results.memories import Memory

__all__ = ["Proposal", "ProposalDecision", "ProposalList", "ProposalsAnswer"]


class Proposal(Result):
    """One proposal: what it would change, why (its evidence), and what was decided.

    ``kind``: ``merge`` (near-duplicates: the kept memory supersedes the others), ``summarise``
    (a run of aging episodes becomes one ``context`` memory, the episodes archived behind it; its
    ``evidence.draft`` is what it writes unless the approver gives a distilled text),
    ``prune`` (an old memory never recalled is archived), ``guardrail`` (a recurring
    correction becomes a guardrail memory) or ``onboard`` (a memory read from the project's own
    files by ``dokoro onboard``, with its draft). ``status``: proposed, approved or rejected."""

    id: str
    kind: str
    title: str
    evidence: dict[str, Any]
    memory_ids: list[str]
    owners: list[str]
    status: str
    created_at: IsoTime
    decided_at: IsoTime | None = None
    decided_by: str | None = None
    outcome: str | None = None

    def lines(self) -> list[str]:
        """The proposal for a person to judge: what it would do, its evidence, its decision."""
        e = self.evidence
        out = [f"{self.kind} {self.title}"]
        if self.kind == "merge":
            titles, created, recalled = e.get("titles", {}), e.get("created", {}), e.get("recalled", {})
            out.append(f"similarity {e.get('similarity')}; keep the newer one, supersede the older:")
            for role, memory_id in [("keep", e.get("keep")), *(("supersede", i) for i in e.get("supersede", []))]:
                out.append(
                    f"  {role:<9} {memory_id} {titles.get(memory_id, '')!r} "
                    f"(written {created.get(memory_id)}, recalled {recalled.get(memory_id)} time(s))"
                )
        elif self.kind == "summarise":
            out.append(f"{e.get('count')} aging episodes about {e.get('entity')}, {e.get('first')} to {e.get('last')}:")
            out += [f"  {memory_id} {title!r}" for memory_id, title in e.get("titles", {}).items()]
            if isinstance(draft := e.get("draft"), dict):
                out.append(f"draft: {draft.get('title')}")
                out += [f"  {line}" for line in str(draft.get("body", "")).splitlines()]
            out.append(
                "approve: one context memory is written (the draft, or the distilled text you give) and the "
                "episodes are archived behind it"
            )
        elif self.kind == "onboard":
            out.append(
                f"read in the project's files ({', '.join(e.get('sources', []))}); approve writes this "
                f"{e.get('type')} memory (or the distilled text you give):"
            )
            out += [f"  {line}" for line in str(e.get("body", "")).splitlines()]
        elif self.kind == "prune":
            out.append(
                f"{e.get('memory')} ({e.get('type')}) written {e.get('created')}, {e.get('age_days')} days ago, "
                f"recalled {e.get('recall_count')} time(s); approve archives it (kept, not deleted)"
            )
        elif e.get("source") == "conflict gate":
            out.append(
                f"the conflict gate upheld {e.get('memory')} against {e.get('count')} newer memories "
                f"({e.get('first')} to {e.get('last')}: {', '.join(e.get('discarded', []))}); "
                "approve makes it a guardrail (the briefing always shows guardrails)"
            )
        else:
            agents = ", ".join(e.get("agents", [])) or "-"
            out.append(
                f"{e.get('tool')} failed {e.get('count')} times, {e.get('first')} to {e.get('last')} (agents: {agents})"
                + (f", error: {e.get('error')}" if e.get("error") else "")
                + "; approve writes a guardrail about it"
            )
        if self.status != "proposed":
            out.append(f"{self.status} by {self.decided_by or 'a person'}: {self.outcome}")
        return out


class ProposalList(Result):
    """The proposals asked for, and how many the pass before the listing filed (0 without one)."""

    proposals: list[Proposal]
    filed: int = 0


class ProposalDecision(Result):
    """A proposal after its decision, with the memories the decision wrote or changed."""

    proposal: Proposal
    created: list[Memory] = Field(default_factory=list)
    changed: list[Memory] = Field(default_factory=list)


class ProposalsAnswer(Result):
    """What ``dokoro_memory_proposals`` answers: the listing (``action=list``) or the decision."""

    listing: ProposalList | None = None
    decision: ProposalDecision | None = None
