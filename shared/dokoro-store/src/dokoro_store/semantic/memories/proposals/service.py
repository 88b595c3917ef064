"""Proposals, never silent changes: the upkeep of the memories, proposed and decided.

A pass (:meth:`ProposalService.scan`) files candidates the data already shows (:mod:`.proposers`)
in the ledger (:mod:`.proposal_ledger`): merge near-duplicates, summarise a run of aging
episodes, prune a memory never recalled, promote a recurring correction to a guardrail. Each
carries its evidence. Nothing changes until somebody decides:

- **approve** applies the change in one transaction with the decision, the memory rows through
  :mod:`.repository`: a merge supersedes the older memory by the kept one (and gives the gate's
  pair its ``supersede`` verdict); a prune archives the memory; a summary writes one memory made
  of the episodes and archives them behind it (each superseded by it); a guardrail writes a
  ``guardrail`` memory (what the briefing always shows: the store's rules mechanism), and one
  promoted from a memory supersedes that memory;
- **reject** records the decision (a merge's pair gets ``keep_both``): its key is never filed again.

Who may decide: a person (CLI, TUI: no agent identity) any proposal; an agent (MCP) only the
proposals whose data is its own or nobody's (:mod:`~dokoro_store.semantic.memories.owners` on every
memory touched: another agent's or a person's memory keeps it off; and every agent the evidence
counts). A proposal that writes a new memory is
the approving agent's memory: the per-type switches apply (:mod:`.switches`: a type agents may not
write is refused), and under review (``DOKORO_MEMORY_REVIEW``, or the type's ``needs_review``) it
waits for a person, as every memory an agent writes does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sqlmodel import Session, col, select

from dokoro_store.clock import Clock, iso
from dokoro_store.db.engine import Database
from dokoro_store.errors import ConflictError, InvalidArgumentError, NotFoundError, NotOwnerError
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.models.memories import MemoryConflict
from dokoro_store.models.proposals import MemoryProposal
from dokoro_store.results.proposals import Proposal, ProposalDecision, ProposalList
from dokoro_store.semantic.memories import repository
from dokoro_store.semantic.memories.docs import save_doc
from dokoro_store.semantic.memories.owners import keeper_of, owner_words
from dokoro_store.semantic.memories.proposals import ledger, proposers, summaries
from dokoro_store.semantic.memories.rows import DOC_PREFIX, MEMORY_TYPES, memory_result
from dokoro_store.semantic.memories.switches import TypeSwitches
from dokoro_store.walls.ownership import PERSON, known_agent, memory_keeper, owned_by_another

if TYPE_CHECKING:
    from dokoro_store.semantic.documents.service import DocumentService
    from dokoro_store.semantic.memories.service import MemoryService

__all__ = ["DRAFTED", "MAX_LIST", "MAX_OPEN", "PER_PASS", "WRITES_MEMORY", "ProposalService"]

# New proposals one pass files per kind at most, and the open ones of a kind above which it files
# none: a person decides a page at a time, the ledger never floods.
PER_PASS = 20
MAX_OPEN = 100
MAX_LIST = 500
# The kinds whose approval writes a new memory (the approving agent's: the type switches apply), and
# those whose memory is drafted, so an approver may write a distilled text instead.
WRITES_MEMORY = ("summarise", "guardrail", "onboard")
DRAFTED = ("summarise", "onboard")
_DECIDE_HELP = "`dokoro memory proposals list` shows the open ones"


class ProposalService:
    """The proposals ledger of one store (``store.proposals``)."""

    def __init__(
        self, db: Database, clock: Clock, docs: DocumentService, memories: MemoryService, *, review: bool = False
    ) -> None:
        self._db = db
        self._clock = clock
        self._docs = docs
        self._memories = memories
        self._review = review
        self._switches = TypeSwitches(db, clock)

    # ------------------------------------------------------------------ the pass
    def scan(self, *, per_kind: int = PER_PASS) -> list[str]:
        """File the candidates the data shows now (bounded, idempotent); the ids filed.

        Summaries are looked for before merges: a run of episodes is proposed as one summary, not
        pairwise, and the merges an earlier pass filed among its episodes do not hold it back (they
        are withdrawn when it is filed, :func:`.summaries.withdraw_covered_merges`)."""
        now = self._clock.now()
        with self._db.read() as session:
            waiting = ledger.open_proposals(session, limit=MAX_OPEN * len(proposers.KINDS))
            open_kinds: dict[str, int] = {}
            skip: set[str] = set()  # a memory waits in one open proposal at a time
            for row in waiting:
                open_kinds[row.kind] = open_kinds.get(row.kind, 0) + 1
                skip |= set(row.memory_ids)

            def room(kind: str) -> int:
                return max(0, min(per_kind, MAX_OPEN - open_kinds.get(kind, 0)))

            found: list[proposers.Candidate] = []
            if n := room("summarise"):
                # Episodes held only by open merges between two episodes may join a run.
                found += proposers.summaries(session, now, limit=n, skip=skip - _episode_merges(session, waiting))
                for candidate in found:
                    skip |= set(candidate.memory_ids)
            if n := room("merge"):
                found += proposers.merges(session, limit=n, skip=skip)
            if n := room("prune"):
                found += proposers.prunes(session, now, limit=n, skip=skip)
            if n := room("guardrail"):
                found += proposers.conflict_guardrails(session, limit=n, skip=skip)
                found += proposers.tool_guardrails(session, now, limit=n)
        if not found:
            return []
        with self._db.write() as session:
            filed = ledger.file(session, self._db.ops, found, now=now)
            summaries.withdraw_covered_merges(session, filed, found, waiting, now)
            return filed

    # ------------------------------------------------------------------ reading
    def listing(
        self,
        status: str = "proposed",
        *,
        kind: str | None = None,
        limit: int = 50,
        scan: bool = True,
        acting_agent: str | None = None,
    ) -> ProposalList:
        """The proposals of ``status`` (``all``: every one), oldest first, the pass run first
        (``scan``); for a known ``acting_agent``, only those it may decide."""
        if status != "all" and status not in ledger.STATUSES:
            raise InvalidArgumentError(f"status must be one of {', '.join(ledger.STATUSES)} or all; got {status!r}")
        if kind is not None and kind not in proposers.KINDS:
            raise InvalidArgumentError(f"kind must be one of {', '.join(proposers.KINDS)}; got {kind!r}")
        if not 1 <= limit <= MAX_LIST:
            raise InvalidArgumentError(f"limit must be between 1 and {MAX_LIST}; got {limit}")
        filed = self.scan() if scan else []
        query = select(MemoryProposal)
        if status != "all":
            query = query.where(col(MemoryProposal.status) == status)
        if kind is not None:
            query = query.where(col(MemoryProposal.kind) == kind)
        agent = known_agent(acting_agent)
        with self._db.read() as session:
            rows = session.exec(
                query.order_by(col(MemoryProposal.created_at), col(MemoryProposal.id)).limit(
                    limit if agent is None else MAX_LIST
                )
            ).all()
            shown = list(rows) if agent is None else _decidable(session, rows, agent)
        shown = shown[:limit]
        return ProposalList(proposals=[ledger.result(r) for r in shown], filed=len(filed))

    def get(self, proposal_id: str) -> Proposal:
        with self._db.read() as session:
            return ledger.result(_find(session, proposal_id, lock=False))

    # ------------------------------------------------------------------ deciding
    def approve(
        self,
        proposal_id: str,
        *,
        by: str | None = None,
        acting_agent: str | None = None,
        text: str | None = None,
        title: str | None = None,
    ) -> ProposalDecision:
        """Apply the proposal and record it approved, in one transaction (see the module).

        ``text`` (and ``title``): what a proposal that writes a memory from a draft (``summarise``)
        writes instead of its draft — the approver's distilled summary (:mod:`.summaries`)."""
        now = self._clock.now()
        agent = known_agent(acting_agent)
        who = agent or by
        with self._db.write() as session:
            row = _find(session, proposal_id, lock=True)
            _check_open(row)
            if (text is not None or title is not None) and row.kind not in DRAFTED:
                raise InvalidArgumentError(
                    f"proposal {row.id} is a {row.kind}: text and title replace the draft of a "
                    f"{' or '.join(DRAFTED)} proposal only; approve it without them. Nothing changed"
                )
            touched = _locked(session, row.memory_ids)
            _check_may_decide(row, touched, agent)
            if row.kind in WRITES_MEMORY and agent is not None:
                self._check_agent_may_write(session, row)
            created, changed, outcome = self._apply(session, row, touched, who=who, agent=agent, text=text, title=title)
            ledger.decide(session, row, "approved", now=now, by=who, outcome=outcome)
            decided = ledger.result(row)
        self._after([*created, *changed], new=created)
        return ProposalDecision(
            proposal=decided,
            created=[memory_result(m) for m in created],
            changed=[memory_result(m) for m in changed],
        )

    def reject(
        self, proposal_id: str, *, reason: str | None = None, by: str | None = None, acting_agent: str | None = None
    ) -> ProposalDecision:
        """Record the proposal rejected (with ``reason``); no memory changes, and its key is never
        filed again. A rejected merge gives the gate's pair the ``keep_both`` verdict."""
        now = self._clock.now()
        agent = known_agent(acting_agent)
        who = agent or by
        with self._db.write() as session:
            row = _find(session, proposal_id, lock=True)
            _check_open(row)
            _check_may_decide(row, _locked(session, row.memory_ids), agent)
            if row.kind == "merge":
                new_id, old_id = str(row.evidence["keep"]), str(row.evidence["supersede"][0])
                pair = session.get(MemoryConflict, repository.pair_hash(new_id, old_id), with_for_update=True)
                if pair is not None and pair.verdict is None:
                    repository.record_verdict(session, pair, "keep_both", new_id=new_id, old_id=old_id, now=now, by=who)
            why = "rejected" + (f" by {who}" if who else "")
            if reason and reason.strip():
                why += f": {reason.strip()}"
            ledger.decide(session, row, "rejected", now=now, by=who, outcome=why)
            decided = ledger.result(row)
        return ProposalDecision(proposal=decided)

    def _check_agent_may_write(self, session: Session, row: MemoryProposal) -> None:
        """An agent's approval writes a memory as the agent's: the per-type switches apply (a type
        agents may not write is refused), and one waiting for review waits for a person."""
        kind = _new_type(row)
        switch = self._switches.check_agent_write(session, kind)
        if self._review or switch.needs_review:
            raise NotOwnerError(
                f"proposal {row.id} writes a new {kind} memory, and {kind} memories wait for a person's review "
                f"here: a person approves it with `dokoro memory proposals approve {row.id}` or in `dokoro browse`. "
                "Nothing changed"
            )

    # ------------------------------------------------------------------ applying
    def _apply(
        self,
        session: Session,
        row: MemoryProposal,
        touched: dict[str, MemoryRow],
        *,
        who: str | None,
        agent: str | None,
        text: str | None = None,
        title: str | None = None,
    ) -> tuple[list[MemoryRow], list[MemoryRow], str]:
        """The change of an approved proposal, in ``session``: (memories written, memories
        changed, what was done)."""
        now = self._clock.now()
        evidence = row.evidence
        via = f"proposal {row.id}" + (f", approved by {who}" if who else "")
        if row.kind == "merge":
            kept = _active(touched, str(evidence["keep"]), row)
            olds = [_active(touched, str(i), row) for i in evidence["supersede"]]
            for old in olds:
                why = f"merged into {kept.id} ({via})"
                repository.supersede(session, old, by=kept.id, now=now, agent=agent, reason=why)
                pair = session.get(MemoryConflict, repository.pair_hash(kept.id, old.id), with_for_update=True)
                if pair is not None and pair.verdict is None:
                    repository.record_verdict(
                        session, pair, "supersede", new_id=kept.id, old_id=old.id, now=now, by=who
                    )
                self._save_doc(session, old)
            return [], olds, f"{', '.join(o.id for o in olds)} superseded by {kept.id}"
        if row.kind == "prune":
            memory = _active(touched, str(evidence["memory"]), row)
            reason = f"pruned: never recalled since {iso(memory.created_at)} ({via})"
            repository.set_state(session, memory, "archived", reason=reason, now=now, agent=agent)
            self._save_doc(session, memory)
            return [], [memory], f"{memory.id} archived"
        if row.kind == "summarise":
            episodes = [_active(touched, str(i), row) for i in evidence["episodes"]]
            written = summaries.distilled(text, title, summaries.draft(str(evidence["entity"]), episodes))
            summary = self._new_memory(session, row, written, agent=agent)
            summary.entities = [str(evidence["entity"])]
            summary.source = summaries.source_of(row.id, [e.id for e in episodes])
            repository.create(session, summary)
            for episode in episodes:
                repository.supersede(
                    session, episode, by=summary.id, now=now, agent=agent, reason=f"summarised in {summary.id} ({via})"
                )
                self._save_doc(session, episode)
            self._save_doc(session, summary)
            how = "the approver's distilled text" if text is not None else "the draft"
            return (
                [summary],
                episodes,
                f"summary {summary.id} written ({how}); {len(episodes)} episode(s) archived behind it",
            )
        if row.kind == "onboard":
            return self._apply_onboard(session, row, agent=agent, via=via, text=text, title=title)
        # A guardrail: from a memory the gate kept upholding, or from a tool's recurring failure.
        if evidence.get("source") == "conflict gate":
            promoted = _active(touched, str(evidence["memory"]), row)
            guardrail = self._new_memory(session, row, (promoted.title, promoted.body), agent=agent)
            guardrail.entities = list(promoted.entities)
            guardrail.supersedes = promoted.id
            repository.create(session, guardrail)
            repository.supersede(
                session, promoted, by=guardrail.id, now=now, agent=agent, reason=f"promoted to a guardrail ({via})"
            )
            self._save_doc(session, promoted)
            self._save_doc(session, guardrail)
            return [guardrail], [promoted], f"guardrail {guardrail.id} written; {promoted.id} superseded by it"
        guardrail = self._new_memory(session, row, _tool_rule(evidence), agent=agent)
        guardrail.entities = [str(evidence["tool"]).lower()]
        repository.create(session, guardrail)
        self._save_doc(session, guardrail)
        return [guardrail], [], f"guardrail {guardrail.id} written"

    def _apply_onboard(
        self, session: Session, row: MemoryProposal, *, agent: str | None, via: str, text: str | None, title: str | None
    ) -> tuple[list[MemoryRow], list[MemoryRow], str]:
        """A memory read from the project's files (``dokoro onboard``): its draft, or the approver's
        distilled text; it supersedes the memory an earlier onboarding wrote on the same topic when
        the approver may change that memory (the ownership rule of every supersede); another's is
        kept beside it, and the answer says whose it is."""
        evidence = row.evidence
        topic = str(evidence["topic"])
        written = summaries.distilled(text, title, (str(evidence["title"]), str(evidence["body"])))
        memory = self._new_memory(session, row, written, agent=agent)
        memory.entities = [str(e) for e in evidence.get("entities", [])]
        memory.source = f"dokoro onboard ({topic}): " + ", ".join(str(s) for s in evidence.get("sources", []))
        earlier = ledger.onboarded_memories(session, topic)
        active = [m for m in _locked(session, earlier).values() if m.state == "active"]
        replaced = [m for m in active if keeper_of(m, agent) is None]
        kept = [(m, owner) for m in active if (owner := keeper_of(m, agent)) is not None]
        memory.supersedes = replaced[0].id if replaced else None
        repository.create(session, memory)
        for old in replaced:
            why = f"superseded by {memory.id}, a newer reading of the project's files ({via})"
            repository.supersede(session, old, by=memory.id, now=self._clock.now(), agent=agent, reason=why)
            self._save_doc(session, old)
        self._save_doc(session, memory)
        row.evidence = {**evidence, "memory": memory.id}
        done = f"{memory.type} {memory.id} written" + (" (the approver's distilled text)" if text is not None else "")
        done += "".join(f"; {old.id} superseded by it" for old in replaced)
        return (
            [memory],
            replaced,
            done
            + "".join(
                f"; {old.id} kept beside it ({owner_words(owner)}, not yours to supersede)" for old, owner in kept
            ),
        )

    def _new_memory(
        self, session: Session, row: MemoryProposal, text: tuple[str, str], *, agent: str | None
    ) -> MemoryRow:
        now = self._clock.now()
        title, body = text
        return MemoryRow(
            # Derived from the proposal: an approval retried after a failure names the same row.
            id=repository.new_id(now, row.id, row.key),
            type=_new_type(row),
            title=title[:300],
            body=body,
            entities=[],
            trust="user-stated" if agent is None else "agent-inferred",
            state="active",
            agent_id=agent,
            source=f"proposal {row.id}",
            created_at=now,
            updated_at=now,
        )

    def _save_doc(self, session: Session, memory: MemoryRow) -> None:
        """The memory's document in the decision's transaction (its status follows the state)."""
        save_doc(self._docs, session, memory)

    def _after(self, rows: Sequence[MemoryRow], *, new: Sequence[MemoryRow]) -> None:
        """After the commit: the new memories indexed (full text, vectors, graph) and the files
        rendered (the memory files' reconcile renders the rows changed since it last looked)."""
        if new:
            self._docs.index_docs([f"{DOC_PREFIX}{m.id}" for m in new])
        if rows:
            self._memories.sync_files(sweep=False)


def _new_type(row: MemoryProposal) -> str:
    """The type of the memory an approval writes: a guardrail, a summary (``context``), or the
    type an onboarding proposal drafted."""
    if row.kind == "onboard":
        kind = str(row.evidence.get("type"))
        if kind not in MEMORY_TYPES:
            raise ConflictError(f"proposal {row.id} names no memory type ({kind!r}): reject it. Nothing changed")
        return kind
    return "guardrail" if row.kind == "guardrail" else summaries.SUMMARY_TYPE


def _episode_merges(session: Session, waiting: Sequence[MemoryProposal]) -> set[str]:
    """The memories of the open merges between two episodes (a run's summary may take them over)."""
    pairs = [row.memory_ids for row in waiting if row.kind == "merge"]
    ids = sorted({i for pair in pairs for i in pair})
    if not ids:
        return set()
    episodes = set(
        session.exec(select(MemoryRow.id).where(col(MemoryRow.id).in_(ids), col(MemoryRow.type) == "episode"))
    )
    return {i for pair in pairs if set(pair) <= episodes for i in pair}


def _find(session: Session, proposal_id: str, *, lock: bool) -> MemoryProposal:
    row = session.get(MemoryProposal, proposal_id.strip(), with_for_update=lock)
    if row is None:
        raise NotFoundError(f"no proposal {proposal_id!r}; {_DECIDE_HELP}")
    return row


def _check_open(row: MemoryProposal) -> None:
    if row.status != "proposed":
        when = f" {iso(row.decided_at)}" if row.decided_at else ""
        raise ConflictError(f"proposal {row.id} was {row.status}{when} ({row.outcome}); nothing changed")


def _locked(session: Session, ids: Sequence[str]) -> dict[str, MemoryRow]:
    """The memories a proposal touches, locked for the decision (in id order: no deadlock)."""
    found: dict[str, MemoryRow] = {}
    for memory_id in sorted(set(ids)):
        if (memory := session.get(MemoryRow, memory_id, with_for_update=True)) is not None:
            found[memory_id] = memory
    return found


def _foreign(owners: Sequence[str], agent: str | None) -> str | None:
    return next((owner for owner in owners if owned_by_another(owner, agent)), None)


def _decidable(session: Session, rows: Sequence[MemoryProposal], agent: str) -> list[MemoryProposal]:
    """Of ``rows``, the proposals ``agent`` may decide: none of their memories (read in a few
    queries) nor of the agents their evidence counts is another's or a person's."""
    rows = [r for r in rows if not _foreign(r.owners, agent)]
    ids = sorted({i for r in rows for i in r.memory_ids})
    kept_off: set[str] = set()
    for start in range(0, len(ids), 500):
        found = session.exec(
            select(MemoryRow.id, MemoryRow.agent_id, MemoryRow.trust).where(
                col(MemoryRow.id).in_(ids[start : start + 500])
            )
        )
        kept_off |= {i for i, writer, trust in found if memory_keeper(writer, trust, agent) is not None}
    return [r for r in rows if not kept_off.intersection(r.memory_ids)]


def _check_may_decide(row: MemoryProposal, touched: dict[str, MemoryRow], agent: str | None) -> None:
    """Refuse (nothing changed) a known agent's decision on another agent's or a person's data."""
    kept = next((k for m in touched.values() if (k := keeper_of(m, agent)) is not None), None)
    owner = kept or _foreign(list(row.owners), agent)
    if owner is not None:
        what = owner_words(owner) if kept else f"data of {owner}"
        raise NotOwnerError(
            f"proposal {row.id} changes {what}; you ({agent}) may decide only proposals about your "
            f"own memories (or ones nobody owns). Nothing changed. A person decides it with "
            f"`dokoro memory proposals approve|reject {row.id}` or in `dokoro browse`"
            + ("" if owner == PERSON else f", or ask {owner}")
        )


def _active(touched: dict[str, MemoryRow], memory_id: str, row: MemoryProposal) -> MemoryRow:
    memory = touched.get(memory_id)
    if memory is None or memory.state != "active":
        now = "gone" if memory is None else memory.state
        raise ConflictError(
            f"proposal {row.id} is out of date: memory {memory_id} is {now} now. Nothing changed; "
            f"reject it (`dokoro memory proposals reject {row.id}`) and the next pass proposes what holds"
        )
    return memory


def _tool_rule(evidence: dict[str, object]) -> tuple[str, str]:
    tool, error, count = evidence["tool"], evidence.get("error"), evidence["count"]
    title = f"{tool} keeps failing" + (f": {error}" if error else "")
    body = (
        f"{tool} failed {count} times between {evidence['first']} and {evidence['last']}"
        + (f" with the error: {error}" if error else " (no error message)")
        + f". Check its arguments and preconditions against this failure before calling {tool} again."
    )
    return title, body
