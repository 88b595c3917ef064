"""Verdicts on the pairs of the conflict gate (:meth:`~.service.MemoryService.verdict`).

``supersede`` archives the old memory (once approved, when the new one is a proposal under
review), ``discard_new`` deprecates the new one, ``keep_both`` keeps both active. A verdict is
accepted from an agent for a pair the gate proposed to it (it remembered the new one), or for
memories it may change (its own, or ones nobody owns); a verdict that retires a memory retires only
one the agent may change (:mod:`.owners`): one agent's verdict never archives another agent's or a
person's memory. Rows change through :mod:`.repository`.
"""

from __future__ import annotations

from datetime import datetime

from dokoro_store.clock import iso
from dokoro_store.db.engine import Database
from dokoro_store.errors import ConflictError, InvalidArgumentError, NotFoundError, NotOwnerError
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.models.memories import MemoryConflict
from dokoro_store.semantic.memories import repository
from dokoro_store.semantic.memories.gate import pair_hash
from dokoro_store.semantic.memories.owners import keeper_of, owner_words, refuse_foreign
from dokoro_store.semantic.memories.review import PROPOSED

__all__ = ["VERDICTS", "check_verdict", "give_verdict"]

VERDICTS = ("supersede", "keep_both", "discard_new")


def check_verdict(verdict: str) -> None:
    """Refuse a verdict that is none of :data:`VERDICTS` (before anything is read)."""
    if verdict not in VERDICTS:
        raise InvalidArgumentError(f"verdict must be one of {', '.join(VERDICTS)}; got {verdict!r}")


def give_verdict(
    db: Database, now: datetime, new_id: str, old_id: str, verdict: str, agent_id: str | None
) -> tuple[MemoryRow, MemoryRow]:
    """Record ``agent_id``'s verdict on the pair in one write transaction; the two rows as they now stand."""
    with db.write() as session:
        new = session.get(MemoryRow, new_id.strip(), with_for_update=True)
        old = session.get(MemoryRow, old_id.strip(), with_for_update=True)
        if new is None or old is None:
            missing = new_id if new is None else old_id
            raise NotFoundError(f"no memory {missing!r}; the ids are in dokoro_remember's answer")
        pair = session.get(MemoryConflict, pair_hash(new.id, old.id), with_for_update=True)
        _check_allowed(new, old, verdict, shown=pair is not None, agent=agent_id)
        if pair is not None and pair.verdict is not None:
            raise ConflictError(
                f"this pair already has the verdict {pair.verdict!r} ({iso(pair.decided_at or now)}); nothing changed"
            )
        if verdict == "supersede":
            if old.state != "active":
                raise ConflictError(f"memory {old.id} is already {old.state}; nothing changed")
            if new.state != PROPOSED:  # a proposal supersedes only once a person approves it
                repository.supersede(session, old, by=new.id, now=now, agent=agent_id)
            repository.rewrite(session, new, {"supersedes": old.id, "updated_at": now})
        elif verdict == "discard_new":
            reason = f"duplicate of {old.id} (conflict gate verdict)"
            repository.set_state(session, new, "deprecated", reason=reason, now=now, agent=agent_id)
        repository.record_verdict(session, pair, verdict, new_id=new.id, old_id=old.id, now=now, by=agent_id)
    return new, old


def _check_allowed(new: MemoryRow, old: MemoryRow, verdict: str, *, shown: bool, agent: str | None) -> None:
    """Refuse (:class:`NotOwnerError`, nothing changed) a verdict ``agent`` may not give.

    A verdict that retires a memory (``supersede`` archives the old one, ``discard_new`` deprecates
    the new one) retires only the agent's own memories or ones nobody owns; ``supersede`` on a new
    memory still under review waits for a person's approval, who decides then. Any other verdict
    (``keep_both``, which changes no memory) is accepted for a pair the gate proposed to the agent
    (it remembered the new one) or for memories it may change (:mod:`.owners`)."""
    if verdict == "discard_new":
        refuse_foreign(new, agent, doing="deprecate (discard_new)", instead=_instead(new.id, old.id))
    elif verdict == "supersede" and new.state != PROPOSED:
        refuse_foreign(old, agent, doing="archive (supersede)", instead=_instead(new.id, old.id))
    if shown and keeper_of(new, agent) is None:
        return  # the gate put this pair before the agent that remembered the new one
    touched = [new] if verdict == "discard_new" else [new, old]
    foreign = next((m for m in touched if keeper_of(m, agent) is not None), None)
    if foreign is None:
        return
    owner = keeper_of(foreign, agent) or ""
    why = "the conflict gate did not propose this pair to you" if not shown else f"{new.id} is {owner_words(owner)}"
    raise NotOwnerError(
        f"verdict refused ({why}): memory {foreign.id} is {owner_words(owner)}, and you ({agent}) may "
        "give a verdict only on a pair the gate showed you in your own dokoro_remember answer, or on memories "
        f"you wrote. Nothing changed. To have {foreign.id} retired, ask its owner or a person "
        "(`dokoro memory forget`), or deprecate your own memory with dokoro_forget"
    )


def _instead(new_id: str, old_id: str) -> str:
    return (
        f"Nothing changed. keep_both records that both hold; left unjudged, the pair {new_id}/{old_id} becomes a "
        "merge proposal for {ask} to decide (`dokoro memory proposals`)"
    )
