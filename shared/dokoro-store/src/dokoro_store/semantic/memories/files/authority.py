"""Files carry content, not authority: who a memory file's change is made by, and what it may do.

Nobody can tell who edited a file. A change a file makes is made by the **caller**: the process that
reads the folder (the agent a server acts for, ``DOKORO_AGENT_ID``; a person at the command line, the
TUI or a server nobody named), or whoever runs a rebuild (``dokoro_memory_reindex``'s agent, the
CLI's person). The caller's rights are those of the walls (:mod:`dokoro_store.walls.ownership`), as
for every memory tool: a person may change any memory; a known agent its own memories and those nobody
owns (a user-stated memory no agent wrote is a person's: an agent may not retire or replace it).

What a file may do, whoever wrote it (:class:`Caller` answers each question):

- content (title, body, type, entities, source, dates): a new version by the caller; it supersedes
  the edited memory when the caller may change it, else both are kept (the other's memory stays
  active, the pair waits in the conflict ledger for its owner's verdict);
- ``trust``: never raised; a person's version is ``user-stated`` (the person vouches), an agent's
  keeps the lower of the file's and the memory's;
- ``state``: retire or bring back a memory the caller may change; never approve a proposal
  (``dokoro memory approve``) nor propose one;
- ``agent``, ``id``, dates, chain, revision, dependencies: the database's; never changed;
- a memory the database lacks: restored as the file says only when the caller may change it (a person;
  an agent its own, or one nobody owns): a file naming another agent, or a person (user-stated, no
  agent), is refused — a fabricated memory never speaks for another.
"""

from __future__ import annotations

from dataclasses import dataclass

from dokoro_store.walls.ownership import known_agent, memory_keeper

__all__ = ["A_PERSON", "TRUST_RANK", "Caller", "lower_trust"]

# Higher is more trusted; a file never moves a memory up this scale.
TRUST_RANK = {"imported": 0, "agent-inferred": 1, "user-stated": 2}


def lower_trust(a: str, b: str) -> str:
    """The less trusted of two trust levels."""
    return a if TRUST_RANK.get(a, 0) <= TRUST_RANK.get(b, 0) else b


@dataclass(frozen=True)
class Caller:
    """Who a file's change is made by: a known agent, or a person (``agent`` None)."""

    agent: str | None = None

    @classmethod
    def of(cls, agent: str | None) -> Caller:
        return cls(known_agent(agent))

    @property
    def person(self) -> bool:
        return self.agent is None

    def keeper(self, agent_id: str | None, trust: str) -> str | None:
        """Who keeps the caller off a memory ``agent_id`` wrote with ``trust`` (None: the caller may
        supersede, retire or bring it back): the walls' one rule (an agent's memory is its own; a
        person's, user-stated and written by no agent, is a person's), as every memory tool applies it."""
        return memory_keeper(agent_id, trust, self.agent)

    def version_trust(self, file_trust: str, row_trust: str) -> str:
        """The trust of a new version the caller's edit makes (never above the edited memory's,
        unless a person vouches for it)."""
        return "user-stated" if self.person else lower_trust(file_trust, row_trust)

    def new_trust(self, file_trust: str) -> str:
        """The trust of a new memory a new file becomes: a person's is user-stated, an agent's at
        most agent-inferred."""
        return "user-stated" if self.person else lower_trust(file_trust, "agent-inferred")

    def describe(self) -> str:
        return "a person" if self.person else f"agent {self.agent}"


A_PERSON = Caller()  # the caller without identity (walls.ownership.PERSON names a person as an owner)
