"""Who may change a memory: one rule for every action that retires, supersedes or renews one.

Forget (deprecate or purge), remember with ``supersedes``, a verdict that archives or deprecates,
renew and retire, and the decisions on upkeep proposals all ask :func:`refuse_foreign` before they
write: a known agent changes only its own memories and the ones nobody owns
(:func:`dokoro_store.walls.ownership.memory_keeper`); another agent's memory, or a person's, is
refused with who owns it and what the agent can do instead. A caller without identity (a person at
the command line or in ``dokoro browse``) may act on any. Where the change waits for a person anyway
(a proposal under review that names what it supersedes), the callers let it through: a person
decides it then.
"""

from __future__ import annotations

from typing import Protocol

from dokoro_store.errors import NotOwnerError
from dokoro_store.walls.ownership import PERSON, memory_keeper

__all__ = ["Owned", "asked", "keeper_of", "owner_words", "refuse_foreign"]


class Owned(Protocol):
    """What the rule reads of a memory: its id, who wrote it and who vouches for it."""

    @property
    def id(self) -> str: ...
    @property
    def agent_id(self) -> str | None: ...
    @property
    def trust(self) -> str: ...


def keeper_of(memory: Owned, actor: str | None) -> str | None:
    """The owner that keeps ``actor`` off ``memory`` (None: ``actor`` may change it)."""
    return memory_keeper(memory.agent_id, memory.trust, actor)


def owner_words(owner: str) -> str:
    """An owner as an answer names it: ``alice's memory`` or ``a person's memory (…)``."""
    if owner == PERSON:
        return "a person's memory (user-stated, written by no agent: at the command line, in its file or by the user)"
    return f"{owner}'s memory"


def asked(owner: str) -> str:
    """Whom to ask about ``owner``'s memory."""
    return "a person" if owner == PERSON else f"{owner} or a person"


def refuse_foreign(memory: Owned, actor: str | None, *, doing: str, instead: str = "") -> None:
    """Raise :class:`NotOwnerError` (nothing changed) when ``actor`` may not ``doing`` ``memory``.

    ``doing`` is the verb the message names (``deprecate``, ``supersede``, ...); ``instead``
    replaces the default "Nothing changed" and advice, ``{ask}`` in it naming whom to ask."""
    owner = keeper_of(memory, actor)
    if owner is None:
        return
    advice = instead or (
        "Nothing changed. Ask {ask} to retire it (a person: "
        f"`dokoro memory forget {memory.id} --reason ...`); what you know now can be your own memory "
        "(dokoro_remember without supersedes: both are kept, and the conflict gate puts a close pair before {ask})"
    )
    raise NotOwnerError(
        f"memory {memory.id} is {owner_words(owner)}; you ({actor}) may not {doing} it. "
        + advice.replace("{ask}", asked(owner))
    )
