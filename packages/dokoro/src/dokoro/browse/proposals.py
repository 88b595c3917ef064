"""The Proposals category of ``dokoro browse``: the memories' upkeep the store proposes (merge,
summarise, prune, guardrail), open ones first with their evidence as the preview; ``v`` approves and
``x`` rejects the selected one, after a y/n (:mod:`.actions`).

Loading it runs the proposals' pass (bounded; a proposal is never filed twice), as
``dokoro memory proposals`` does: what the data shows now is listed, never applied.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dokoro.browse.items import Item, _stamp

if TYPE_CHECKING:
    from dokoro_store import Store
    from dokoro_store.results.proposals import Proposal

__all__ = ["DECIDED_SHOWN", "open_proposals", "proposal_items"]

# The latest decided proposals shown below the open ones (dimmed), for the record.
DECIDED_SHOWN = 50
OPEN_SHOWN = 200


def _item(proposal: Proposal) -> Item:
    waiting = proposal.status == "proposed"
    when = _stamp(proposal.decided_at or proposal.created_at)
    lines = proposal.lines()
    card = [f"# Proposal {proposal.id}", "", f"- **Kind:** {proposal.kind}", f"- **Status:** {proposal.status}"]
    card += [f"- **Filed:** {_stamp(proposal.created_at)}", "", lines[0], "", *lines[1:]]
    if waiting:
        card += ["", "v approves · x rejects (each asks y/n first)"]
    return Item(
        id=f"proposal:{proposal.id}",
        label=proposal.title,
        sublabel=f"{proposal.kind} · "
        + ("proposed (v approve · x reject)" if waiting else f"{proposal.status} {when}"),
        kind="proposal",
        archived=not waiting,
        ref=proposal.id,
        status=proposal.status,
        dim=not waiting,
        detail="\n".join(card),
    )


def proposal_items(store: Store) -> list[Item]:
    """Open proposals (the pass run first), oldest first, then the latest decided ones."""
    waiting = store.proposals.listing("proposed", limit=OPEN_SHOWN).proposals
    decided = [
        p
        for status in ("approved", "rejected")
        for p in store.proposals.listing(status, limit=DECIDED_SHOWN, scan=False).proposals
    ]
    decided.sort(key=lambda p: (p.decided_at or p.created_at, p.id), reverse=True)
    return [_item(p) for p in waiting] + [_item(p) for p in decided[:DECIDED_SHOWN]]


def open_proposals(items: list[Item]) -> int:
    """The badge of the category: how many wait for a decision."""
    return sum(1 for item in items if item.status == "proposed")
