"""What a planning answer draws on: documents related to a question by words or meaning, and the
plans close to it.

A semantic-only neighbour counts only when its cosine clears a floor chosen for the embedder in
use (see :data:`SEMANTIC_FLOORS`), so an unrelated document is not passed off as related just
because the index is small.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlalchemy import select
from sqlmodel import col

from dokoro_store.db.engine import Database
from dokoro_store.errors import EmbedderUnavailableError
from dokoro_store.models import Doc
from dokoro_store.procedural.plans.service import PlanService
from dokoro_store.procedural.plans.views import PlanView
from dokoro_store.results.planning import PlanMatch, Source
from dokoro_store.walls import frontmatter

if TYPE_CHECKING:
    from dokoro_store.index.embedders.handle import EmbedderHandle
    from dokoro_store.semantic.search.service import SearchHit, SearchService

__all__ = [
    "CONFLICT",
    "REGRESSION",
    "SEMANTIC_FLOORS",
    "Found",
    "PlanHit",
    "RelatedWork",
    "evidence",
    "is_feature",
    "is_research",
]

# The cosine a semantic-only hit needs to count as related, by embedder kind. Static (model2vec)
# and hashing vectors put unrelated text near 0; nomic-embed-text puts it around 0.4.
SEMANTIC_FLOORS = {"static": 0.25, "hashing": 0.2, "ollama": 0.55}
_DEFAULT_FLOOR = 0.3

REGRESSION = re.compile(
    r"\b(broke|broken|breaks?|breaking|regress\w*|revert\w*|roll(?:ed)?[ -]?back|fail\w*|bugs?|crash\w*|"
    r"flak\w*|outage|incident|hotfix\w*)\b",
    re.IGNORECASE,
)
CONFLICT = re.compile(
    r"\b(conflict\w*|incompatib\w*|clash\w*|deprecat\w*|superseded|must not|do not|don't|never|avoid|instead)\b",
    re.IGNORECASE,
)


@dataclass
class Found:
    """Related documents, the search's notes, and how many hits were looked at."""

    sources: list[Source] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    searched: int = 0


def evidence(content: str, pattern: re.Pattern[str], fallback: str) -> str:
    """The first line of the body that matches ``pattern``: the sentence that makes the hit relevant."""
    _raw, body = frontmatter.split(content)
    for line in body.splitlines():
        if line.lstrip().startswith("#"):
            continue  # a heading names the note; the evidence is in its sentences
        stripped = line.strip(" -*>\t")
        if stripped and pattern.search(stripped):
            return stripped if len(stripped) <= 240 else stripped[:240] + "..."
    return fallback


def is_research(source: Source) -> bool:
    return source.doc_type == "research" or source.filepath.startswith(("insights/", "research/"))


def is_feature(source: Source) -> bool:
    return source.doc_type in ("prd", "feature") or source.filepath.startswith(("features/", "planning/"))


@dataclass(frozen=True)
class PlanHit:
    """A plan close to a question; ``similarity`` (cosine) is None when it matched by shared words."""

    plan: PlanView
    similarity: float | None

    def result(self) -> PlanMatch:
        """The match as a planning answer publishes it."""
        return PlanMatch(
            id=self.plan.id,
            title=self.plan.title,
            status=self.plan.status,
            completion=self.plan.completion,
            archived=self.plan.archived,
            similarity=self.similarity,
        )


class RelatedWork:
    """Searches the store for the documents and plans related to a question."""

    def __init__(self, db: Database, search: SearchService, embedder: EmbedderHandle, plans: PlanService) -> None:
        self._db = db
        self._search = search
        self._embedder = embedder
        self._plans = plans

    def floor(self) -> float:
        """The cosine a semantic-only hit needs, for the embedder in use."""
        embedder = self._embedder.get()
        return SEMANTIC_FLOORS.get(embedder.kind, _DEFAULT_FLOOR) if embedder is not None else _DEFAULT_FLOOR

    def refresh(self) -> list[str]:
        """Reconcile hand-edited workspace markdown and index changed documents; the notes it made."""
        return list(self._search.refresh().notes)

    def related(self, query: str, limit: int, keep: Callable[[Source], bool] | None = None) -> Found:
        """Documents related to ``query`` by words or meaning, best first, at most ``limit``."""
        found = Found()
        result = self._search.universal(query, limit=min(100, max(limit * 4, 20)), mode="hybrid")
        found.notes += result.notes
        found.searched = len(result.hits)
        floor = self.floor()
        hits = [h for h in result.hits if h.source != "semantic" or (h.vector_score or 0.0) >= floor]
        contents = self.contents([h.doc_id for h in hits])
        for hit in hits:
            source = self._source(hit, contents.get(hit.doc_id, ""))
            if keep is None or keep(source):
                found.sources.append(source)
            if len(found.sources) >= limit:
                break
        return found

    def contents(self, ids: Sequence[str]) -> dict[str, str]:
        """The stored text of these documents, by id."""
        if not ids:
            return {}
        with self._db.read() as session:
            rows = session.execute(select(col(Doc.id), col(Doc.content)).where(col(Doc.id).in_(list(ids)))).all()
        return {str(row[0]): str(row[1] or "") for row in rows}

    @staticmethod
    def _source(hit: SearchHit, content: str) -> Source:
        labels: list[str] = []
        if REGRESSION.search(content):
            labels.append("regression")
        if hit.doc_type == "decision" or hit.filepath.startswith("decisions/"):
            labels.append("decision")
        if CONFLICT.search(content):
            labels.append("constraint")
        return Source(
            doc_id=hit.doc_id,
            title=hit.title,
            filepath=hit.filepath,
            doc_type=hit.doc_type,
            status=hit.status,
            updated_at=hit.updated_at,
            score=hit.score,
            cosine=hit.vector_score,
            why=hit.why,
            excerpt=hit.excerpt,
            labels=tuple(labels),
        )

    def related_plans(self, query: str, limit: int, *, live_only: bool) -> list[PlanHit]:
        """Plans whose title and items are close to ``query`` (by cosine; by shared words without vectors)."""
        plans = [p for p in self._plans.list() if not (live_only and p.archived)]
        if not plans:
            return []
        texts = [f"{p.title}. {p.description or ''} " + "; ".join(i.text for i in p.items) for p in plans]
        embedder = self._embedder.get()
        if embedder is not None:
            try:
                asked = embedder.embed([query], query=True)[0]
                rows = embedder.embed(texts)
            except EmbedderUnavailableError:
                embedder = None  # e.g. Ollama went away: fall back to shared words
            else:
                sims = [float(asked @ rows[i]) for i in range(len(plans))]  # unit rows: dot = cosine
                floor = self.floor()
                ranked = sorted(
                    (PlanHit(p, s) for p, s in zip(plans, sims, strict=True) if s >= floor),
                    key=lambda m: -(m.similarity or 0.0),
                )
                return ranked[:limit]
        words = {w for w in re.findall(r"[a-z0-9]{4,}", query.lower())}
        matched = [
            PlanHit(p, None)
            for p, t in zip(plans, texts, strict=True)
            if words & set(re.findall(r"[a-z0-9]{4,}", t.lower()))
        ]
        return matched[:limit]
