"""Onboarding (``store.onboarding``): a project's own files read and proposed as typed memories.

mokata's guided ``/onboard``, made of what dokoro can read itself: the project's README, package
manifests, CI configuration, Makefile and lint configuration (:mod:`.reading`, hostile input:
bounded, no link followed), what they say (:mod:`.manifests`, :mod:`.texts`), drafted as memories
of the types ``context``, ``reference``, ``best-practice`` and ``guardrail`` (:mod:`.drafts`,
redacted). Nothing is remembered directly: each draft is filed in the proposals ledger as an
``onboard`` proposal, which a person (``dokoro onboard``, ``dokoro memory proposals``, ``dokoro
browse``) or an agent (``dokoro_memory_proposals``) approves — as it is, or with a distilled text
of their own — or rejects.

Filing is idempotent: a draft's proposal id is made of its topic and text, so onboarding the same
files again files nothing new and a rejected draft is never proposed again. When the files have
changed, the open proposals of the earlier reading on the same topic are withdrawn, and approving
the new one supersedes the memory an earlier approval wrote on that topic.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from sqlmodel import Session, col, select

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.errors import InvalidArgumentError
from dokoro_store.models.proposals import MemoryProposal
from dokoro_store.results.onboarding import Onboarding, OnboardingDraft
from dokoro_store.semantic.memories.onboarding.drafts import Draft, draft_memories
from dokoro_store.semantic.memories.onboarding.findings import Findings
from dokoro_store.semantic.memories.onboarding.manifests import read_manifests
from dokoro_store.semantic.memories.onboarding.reading import ProjectFiles, read_project
from dokoro_store.semantic.memories.onboarding.texts import read_texts
from dokoro_store.semantic.memories.proposals import ledger
from dokoro_store.semantic.memories.proposals.proposers import Candidate

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["OnboardingService"]

KIND = "onboard"
# Open onboarding proposals looked at when a new reading withdraws the stale ones.
_OPEN_LIMIT = 200


def _key(draft: Draft) -> str:
    digest = hashlib.sha256(chr(31).join((draft.type, draft.title, draft.body)).encode("utf-8")).hexdigest()[:16]
    return f"{KIND}:{draft.topic}:{digest}"


def _candidate(draft: Draft) -> Candidate:
    return Candidate(
        kind=KIND,
        key=_key(draft),
        title=f"{draft.type}: {draft.title}",
        evidence={
            "topic": draft.topic,
            "type": draft.type,
            "title": draft.title,
            "body": draft.body,
            "entities": list(draft.entities),
            "sources": list(draft.sources),
            # What approving it writes unless the approver gives a distilled text instead.
            "draft": {"title": draft.title, "body": draft.body},
        },
    )


class OnboardingService:
    """Read a project's files and propose what they say as typed memories (see the module)."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock

    def read(self, project: Path) -> tuple[ProjectFiles, Findings, list[Draft]]:
        """What the project's files say, drafted (nothing written)."""
        if not project.is_dir():
            raise InvalidArgumentError(
                f"{project.name or project} is not a folder: onboard a project's folder (where its README and "
                "manifests are)"
            )
        files = read_project(project)
        found = Findings(name=files.name)
        read_texts(files, found)  # the README first: its own words describe the project
        read_manifests(files, found)
        return files, found, draft_memories(found)

    def preview(self, project: Path) -> Onboarding:
        """What onboarding would propose, with the decision any of it already had (nothing written)."""
        files, found, drafts = self.read(project)
        with self._db.read() as session:
            known = self._known(session, drafts)
        return self._answer(files, found, drafts, known, preview=True)

    def propose(self, project: Path) -> Onboarding:
        """File each draft as an ``onboard`` proposal (one write transaction; idempotent), and
        withdraw the open proposals of an earlier reading on the same topics."""
        files, found, drafts = self.read(project)
        now = self._clock.now()
        candidates = [_candidate(d) for d in drafts]
        current = {ledger.proposal_id(c.key) for c in candidates}
        topics = {d.topic for d in drafts}
        withdrawn = 0
        with self._db.write() as session:
            filed = ledger.file(session, self._db.ops, candidates, now=now) if candidates else []
            for row in ledger.open_of_kind(session, KIND, limit=_OPEN_LIMIT):
                if row.id not in current and row.evidence.get("topic") in topics:
                    why = "withdrawn: a newer reading of the project's files proposes another text for this topic"
                    ledger.decide(session, row, "rejected", now=now, by=None, outcome=why)
                    withdrawn += 1
            known = self._known(session, drafts)
        return self._answer(files, found, drafts, known, filed=len(filed), withdrawn=withdrawn)

    @staticmethod
    def _known(session: Session, drafts: Sequence[Draft]) -> dict[str, str]:
        """The proposals already filed for these drafts: id → status."""
        ids = [ledger.proposal_id(_key(d)) for d in drafts]
        if not ids:
            return {}
        rows = session.exec(select(MemoryProposal.id, MemoryProposal.status).where(col(MemoryProposal.id).in_(ids)))
        return {str(i): str(status) for i, status in rows}

    @staticmethod
    def _answer(
        files: ProjectFiles,
        found: Findings,
        drafts: Sequence[Draft],
        known: dict[str, str],
        *,
        preview: bool = False,
        filed: int = 0,
        withdrawn: int = 0,
    ) -> Onboarding:
        shown = []
        for draft in drafts:
            pid = ledger.proposal_id(_key(draft))
            shown.append(
                OnboardingDraft(
                    topic=draft.topic,
                    type=draft.type,
                    title=draft.title,
                    body=draft.body,
                    sources=list(draft.sources),
                    proposal=pid if pid in known else None,
                    status=known.get(pid),
                )
            )
        return Onboarding(
            project=files.name,
            name=found.name,
            files=[f.path for f in files.files],
            skipped=dict(files.skipped),
            drafts=shown,
            filed=filed,
            withdrawn=withdrawn,
            preview=preview,
        )
