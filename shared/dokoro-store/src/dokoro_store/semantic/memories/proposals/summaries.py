"""Summaries worth keeping: what a ``summarise`` proposal drafts, and what an approval writes.

A run of aging episodes sharing an entity (:func:`~.proposers.summaries`) is proposed as one memory.
The proposal carries a **draft** made of the episodes themselves (no model writes it: one line each,
in order), and the approver may replace it with a **distilled text** — what the episodes taught,
in a few lines — given to the approval (``dokoro_memory_proposals`` ``text``/``title``, ``dokoro
memory proposals approve ID --text``, or the prompt the command shows a person at a terminal).

The memory written is of type ``context`` (what the project knows, recalled when relevant), its
entity the run's, its ``source`` the proposal and every episode it was distilled from; the episodes
are archived behind it (each ``superseded_by`` the summary), so recall finds the summary and a
person can follow it back to them.

Open gate pairs among the episodes do not block a summary: the pass looks for summaries before
merges (the episodes of a run are not proposed pairwise), and merges an earlier pass filed among a
run's episodes are withdrawn when its summary is filed (:func:`withdraw_covered_merges`): the
summary decides them all at once, and their pairs keep no verdict (a rejected summary leaves the
gate's pairs as they were).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from sqlmodel import Session

from dokoro_store.errors import InvalidArgumentError
from dokoro_store.models.proposals import MemoryProposal
from dokoro_store.semantic.memories.proposals import ledger
from dokoro_store.semantic.memories.proposals.proposers import Candidate, draft

__all__ = ["MAX_TITLE", "SUMMARY_TYPE", "distilled", "draft", "source_of", "withdraw_covered_merges"]

# The type of the memory an approved summary writes (mokata's ``context``: what the project knows).
SUMMARY_TYPE = "context"
MAX_TITLE = 300
# A distilled text at most this long (a memory's body, not a document).
MAX_TEXT = 100_000


def distilled(text: str | None, title: str | None, fallback: tuple[str, str]) -> tuple[str, str]:
    """The title and body an approval writes: the approver's distilled ``text`` (and ``title``)
    where given, else the draft (``fallback``). Refused, nothing changed, when they are not usable."""
    draft_title, draft_body = fallback
    body = draft_body if text is None else text.strip()
    if not body:
        raise InvalidArgumentError("text is empty: give the distilled summary, or leave text out to keep the draft")
    if len(body) > MAX_TEXT:
        raise InvalidArgumentError(f"text is {len(body)} characters; a memory holds at most {MAX_TEXT}")
    chosen = draft_title if title is None or not title.strip() else " ".join(title.split())
    if len(chosen) > MAX_TITLE:
        raise InvalidArgumentError(f"title must be one line of at most {MAX_TITLE} characters; put the rest in text")
    return chosen, body


def source_of(proposal_id: str, episode_ids: Iterable[str]) -> str:
    """Where a summary comes from: the proposal and every episode it was distilled from."""
    ids = sorted(episode_ids)
    return f"proposal {proposal_id}: distilled from {len(ids)} episodes ({', '.join(ids)})"


def withdraw_covered_merges(
    session: Session,
    filed: Sequence[str],
    candidates: Sequence[Candidate],
    waiting: Sequence[MemoryProposal],
    now: datetime,
) -> int:
    """Withdraw the open merges whose memories are all episodes of a summary filed now (``filed``
    ids among ``candidates``); ``waiting``: the open proposals the pass read. The number withdrawn."""
    runs = {ledger.proposal_id(c.key): set(c.memory_ids) for c in candidates if c.kind == "summarise"}
    runs = {pid: ids for pid, ids in runs.items() if pid in set(filed)}
    if not runs:
        return 0
    withdrawn = 0
    for merge in waiting:
        if merge.kind != "merge":
            continue
        covering = next((pid for pid, ids in runs.items() if set(merge.memory_ids) <= ids), None)
        if covering is None:
            continue
        row = session.get(MemoryProposal, merge.id, with_for_update=True)
        if row is None or row.status != "proposed":
            continue
        why = f"withdrawn: its memories are episodes summarised together in proposal {covering}"
        ledger.decide(session, row, "rejected", now=now, by=None, outcome=why)
        withdrawn += 1
    return withdrawn
