"""Planning helpers (reference §2.15), answered from the store's hybrid search and plans.

The reference grepped markdown files for words such as "regression"; here every question is put
to the hybrid search (full text + vectors, fused by rank), so a note is found by what it means
and not only by the words it happens to use (:mod:`.planning_sources`, which also keeps an
unrelated semantic neighbour out). Every answer names the documents (and plans) it drew on; the
markdown the helpers write is rendered in :mod:`.planning_markdown`.

Before searching, each helper runs :meth:`SearchService.refresh`: hand-edited workspace markdown
is reconciled and changed documents indexed, as the search tools do.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Literal

from sqlalchemy import select
from sqlmodel import col

from dokoro_store.clock import Clock, slug
from dokoro_store.db.engine import Database
from dokoro_store.errors import InvalidArgumentError
from dokoro_store.models import Doc
from dokoro_store.paths import StorePaths
from dokoro_store.procedural.planning.markdown import render_feature_plan, render_research
from dokoro_store.procedural.planning.sources import (
    REGRESSION,
    SEMANTIC_FLOORS,
    PlanHit,
    RelatedWork,
    evidence,
    is_feature,
    is_research,
)
from dokoro_store.procedural.plans.service import PlanService
from dokoro_store.results.planning import (
    ConflictCheck,
    DuplicateCheck,
    FeaturePlan,
    RegressionHistory,
    ResearchCaptured,
    Source,
    Suggestion,
    WhatsNext,
)
from dokoro_store.walls.files import atomic_write_text
from dokoro_store.walls.secrets import redact
from dokoro_store.working.questions import QuestionService

if TYPE_CHECKING:
    from dokoro_store.index.embedders.handle import EmbedderHandle
    from dokoro_store.semantic.documents.service import DocumentService
    from dokoro_store.semantic.search.service import SearchService

__all__ = ["APPROACHES", "SEMANTIC_FLOORS", "PlanningService"]

Approach = Literal["do_new_research", "use_existing_research", "plan_only", "use_docs"]
APPROACHES: tuple[Approach, ...] = ("do_new_research", "use_existing_research", "plan_only", "use_docs")

STALE_AFTER = timedelta(days=7)
_MAX_TEXT = 20_000

_FINISHED = re.compile(r"\b(implemented|completed|done|shipped|released|merged|finished)\b", re.IGNORECASE)
_OPEN_STATUSES = frozenset({"active", "pending", "backlog", "inbox", "in-progress", "blocked", "paused", "todo"})
_DONE_STATUSES = frozenset({"done", "completed", "validated", "archived", "resolved", "shipped"})


def _text_slug(text: str, limit: int = 50) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:limit].strip("-")


def _required(text: str, what: str) -> str:
    value = text.strip()
    if not value:
        raise InvalidArgumentError(f"{what} must not be empty")
    if len(value) > _MAX_TEXT:
        raise InvalidArgumentError(f"{what} is {len(value)} characters; keep it under {_MAX_TEXT}")
    return redact(value).text


def _suggestion(kind: str, text: str, sources: tuple[str, ...]) -> Suggestion:
    return Suggestion(kind=kind, text=text, sources=sources)


class PlanningService:
    """Planning helpers over one store: feature plans, research capture, next steps, conflicts,
    duplicates and regression history."""

    def __init__(
        self,
        paths: StorePaths,
        db: Database,
        clock: Clock,
        plans: PlanService,
        questions: QuestionService,
        search: SearchService,
        docs: DocumentService,
        embedder: EmbedderHandle,
    ) -> None:
        self._paths = paths
        self._db = db
        self._clock = clock
        self._plans = plans
        self._questions = questions
        self._docs = docs
        self._related = RelatedWork(db, search, embedder, plans)

    def related_plans(self, query: str, limit: int, *, live_only: bool = True) -> list[PlanHit]:
        """Plans close to ``query``, closest first (the tachibot bridge's context uses it)."""
        return self._related.related_plans(query, limit, live_only=live_only)

    # ------------------------------------------------------------------ conflicts
    def detect_conflicts(self, feature: str) -> ConflictCheck:
        """What already in the store could clash with ``feature``: regressions and bugs, decisions,
        constraints, research and work in flight on the same thing."""
        feature = _required(feature, "feature")
        notes = self._related.refresh()

        def relevant(source: Source) -> bool:
            return (
                bool(source.labels) or is_research(source) or (is_feature(source) and source.status in _OPEN_STATUSES)
            )

        found = self._related.related(feature, 5, relevant)
        plans = [hit.result() for hit in self._related.related_plans(feature, 3, live_only=True)]
        return ConflictCheck(
            feature=feature,
            conflicts=tuple(found.sources),
            plans=tuple(plans),
            searched=found.searched,
            notes=tuple(notes + found.notes),
        )

    # ------------------------------------------------------------------ regressions
    def regression_history(self, component: str, limit: int = 5) -> RegressionHistory:
        """Notes about ``component`` (found by meaning) that record something breaking, failing or
        being reverted, best first, each with the sentence that says so."""
        component = _required(component, "component")
        notes = self._related.refresh()
        found = self._related.related(component, limit, lambda s: "regression" in s.labels)
        contents = self._related.contents([s.doc_id for s in found.sources])
        hits = tuple(
            s.model_copy(update={"excerpt": evidence(contents.get(s.doc_id, ""), REGRESSION, s.excerpt)})
            for s in found.sources
        )
        return RegressionHistory(component=component, regressions=hits, notes=tuple(notes + found.notes))

    # ------------------------------------------------------------------ duplicates
    def check_duplicate(self, description: str) -> DuplicateCheck:
        """Features, plans and documents that already do what ``description`` says, finished or not."""
        description = _required(description, "description")
        notes = self._related.refresh()

        def candidate(source: Source) -> bool:
            return is_feature(source) or source.doc_type in ("plan", "issue") or source.status in _DONE_STATUSES

        found = self._related.related(description, 6, candidate)
        contents = self._related.contents([s.doc_id for s in found.sources])
        finished = [
            s for s in found.sources if s.status in _DONE_STATUSES or _FINISHED.search(contents.get(s.doc_id, ""))
        ]
        unfinished = [s for s in found.sources if s not in finished]
        plans = [hit.result() for hit in self._related.related_plans(description, 3, live_only=False)]
        return DuplicateCheck(
            description=description,
            finished=tuple(finished),
            unfinished=tuple(unfinished),
            plans=tuple(plans),
            notes=tuple(notes + found.notes),
        )

    # ------------------------------------------------------------------ research capture
    def capture_research(
        self,
        topic: str,
        findings: str,
        sources: Sequence[str] | None = None,
        tags: dict[str, Any] | None = None,
    ) -> ResearchCaptured:
        """Write ``insights/<date>-<topic>-research.md`` and index it, so later questions find it."""
        from dokoro_store.semantic.documents.markdown import describe_markdown, doc_id_for, path_doc_id

        topic = _required(topic, "topic")
        findings = _required(findings, "findings")
        clean_sources = [redact(s.strip()).text for s in sources or [] if s and s.strip()]
        if tags is not None and not all(isinstance(k, str) and k for k in tags):
            raise InvalidArgumentError("tags must map non-empty names to values")
        now = self._clock.now()
        text = render_research(topic, findings, clean_sources, tags, now)
        stem = f"{now:%Y-%m-%d}-{_text_slug(topic) or 'topic'}-research"
        folder = self._paths.root / "insights"
        path = folder / f"{stem}.md"
        counter = 2
        while path.exists():
            path = folder / f"{stem}-{counter}.md"
            counter += 1
        atomic_write_text(path, text, within=self._paths.root)
        relative = self._paths.relative(path)
        doc_id = doc_id_for(relative)
        with self._db.read() as session:
            taken = session.get(Doc, doc_id)
            if taken is not None and taken.filepath != relative:
                doc_id = path_doc_id(relative)
        md = describe_markdown(relative, text, doc_id)
        self._docs.save(
            md.id,
            md.content,
            title=md.title,
            filepath=relative,
            doc_type="research",
            status="active",
            priority=md.priority,
            metadata={**md.metadata, "sources": clean_sources},
        )
        report = self._docs.index_docs([md.id])
        return ResearchCaptured(
            path=relative,
            doc_id=md.id,
            title=md.title,
            chunks=report.chunks,
            indexed=report.indexed > 0 or report.unchanged > 0,
            notes=tuple(report.notes),
        )

    # ------------------------------------------------------------------ what next
    def whats_next(self, context: str | None = None) -> WhatsNext:
        """Next steps from the plans in flight, blockers, open questions, related open documents,
        recent research and stale plans."""
        context = context.strip() if context else None
        if context:
            context = _required(context, "context")
        notes = self._related.refresh()
        now = self._clock.now()
        suggestions: list[Suggestion] = []
        live = [p for p in self._plans.list() if not p.archived and p.status in ("active", "completed")]
        if context and live:
            order = {
                m.plan.id: i for i, m in enumerate(self._related.related_plans(context, len(live), live_only=True))
            }
            live.sort(key=lambda p: order.get(p.id, len(order)))
        for plan in live[:5]:
            pending = [i for i in plan.items if not i.completed]
            if plan.status == "completed" or not pending:
                suggestions.append(
                    _suggestion(
                        "plan", f"Validate “{plan.title}”: every item is done (dokoro_plan_validate).", (plan.id,)
                    )
                )
                continue
            step = pending[0]
            suggestions.append(
                _suggestion(
                    "plan", f"“{plan.title}” ({plan.completion}%): next is {step.index}. {step.text}", (plan.id,)
                )
            )
            for item in pending:
                for blocker in item.blockers:
                    suggestions.append(
                        _suggestion("blocker", f"Unblock “{item.text}” in “{plan.title}”: {blocker}", (plan.id,))
                    )
            if now - plan.updated_at > STALE_AFTER:
                days = (now - plan.updated_at).days
                suggestions.append(
                    _suggestion(
                        "stale", f"“{plan.title}” has not moved for {days} days: resume it or close it.", (plan.id,)
                    )
                )
        for question in self._questions.list("open"):
            if question.priority == "blocker":
                suggestions.append(
                    _suggestion("question", f"Answer the blocking question: {question.question}", (question.id,))
                )
        related: list[Source] = []
        if context:
            found = self._related.related(
                context, 5, lambda s: s.status in _OPEN_STATUSES and s.filepath != "current.md"
            )
            related = found.sources
            notes += found.notes
            for source in related:
                suggestions.append(
                    _suggestion("related", f"Open work on this: {source.title} ({source.filepath})", (source.doc_id,))
                )
        research = self._recent_research(3)
        for source in research:
            suggestions.append(
                _suggestion("research", f"Recent research: {source.title} ({source.filepath})", (source.doc_id,))
            )
        return WhatsNext(
            context=context,
            suggestions=tuple(suggestions),
            related=tuple(related),
            research=tuple(research),
            notes=tuple(notes),
        )

    def _recent_research(self, limit: int) -> list[Source]:
        with self._db.read() as session:
            rows = list(
                session.execute(
                    select(Doc)
                    .where(col(Doc.doc_type) == "research")
                    .order_by(col(Doc.updated_at).desc(), col(Doc.id))
                    .limit(limit)
                ).scalars()
            )
        return [
            Source(
                doc_id=row.id,
                title=row.title,
                filepath=row.filepath,
                doc_type=row.doc_type,
                status=row.status,
                updated_at=row.updated_at,
                score=0.0,
                cosine=None,
                why="most recent research",
                excerpt="",
                labels=(),
            )
            for row in rows
        ]

    # ------------------------------------------------------------------ feature plan
    def plan_feature(
        self, feature: str, approach: str = "use_existing_research", context: str | None = None
    ) -> tuple[FeaturePlan, str]:
        """A markdown plan for ``feature`` built from what the store knows; saved under planning/ and
        indexed. Returns the plan's result and its markdown."""
        feature = _required(feature, "feature")
        if approach not in APPROACHES:
            raise InvalidArgumentError(f"approach must be one of {', '.join(APPROACHES)}; got {approach!r}")
        context = context.strip() if context else None
        if context:
            context = _required(context, "context")
        notes = self._related.refresh()
        question = f"{feature}. {context}" if context else feature
        research: list[Source] = []
        docs: list[Source] = []
        if approach in ("use_existing_research", "do_new_research"):
            found = self._related.related(question, 3, is_research)
            research, notes = found.sources, notes + found.notes
        if approach == "use_docs":
            found = self._related.related(question, 5)
            docs, notes = found.sources, notes + found.notes
        similar_found = self._related.related(feature, 3, lambda s: is_feature(s) or s.doc_type == "plan")
        conflicts_found = self._related.related(
            feature, 3, lambda s: bool({"regression", "decision", "constraint"} & set(s.labels))
        )
        plans = [hit.result() for hit in self._related.related_plans(question, 3, live_only=True)]
        notes += similar_found.notes + conflicts_found.notes
        now = self._clock.now()
        markdown = render_feature_plan(
            feature, approach, context, research, docs, similar_found.sources, conflicts_found.sources, plans, now
        )
        relative = f"planning/{slug(now)}-{_text_slug(feature) or 'feature'}-plan.md"
        path = self._paths.root / relative
        counter = 2
        while path.exists():
            relative = f"planning/{slug(now)}-{_text_slug(feature) or 'feature'}-plan-{counter}.md"
            path = self._paths.root / relative
            counter += 1
        atomic_write_text(path, markdown, within=self._paths.root)
        doc_id = _text_slug(path.stem, 200)
        self._docs.save(
            doc_id,
            markdown,
            title=f"Plan: {feature}",
            filepath=relative,
            doc_type="plan",
            status="backlog",
            metadata={"source": "dokoro_plan_feature", "approach": approach},
        )
        self._docs.index_docs([doc_id])
        plan = FeaturePlan(
            feature=feature,
            approach=approach,
            path=relative,
            doc_id=doc_id,
            research=tuple(research),
            docs=tuple(docs),
            similar=tuple(similar_found.sources),
            conflicts=tuple(conflicts_found.sources),
            plans=tuple(plans),
            notes=tuple(dict.fromkeys(notes)),
        )
        return plan, markdown
