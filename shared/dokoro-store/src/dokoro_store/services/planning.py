"""Planning helpers (reference §2.15), answered from the store's hybrid search and plans.

The reference grepped markdown files for words such as "regression"; here every question is put
to the hybrid search (full text + vectors, fused by rank), so a note is found by what it means
and not only by the words it happens to use. A semantic-only neighbour counts only when its
cosine clears a floor chosen for the embedder in use (see :data:`SEMANTIC_FLOORS`), so an unrelated
document is not passed off as related just because the index is small. Every answer names the
documents (and plans) it drew on.

Before searching, each helper runs :meth:`SearchService.refresh`: hand-edited workspace markdown
is reconciled and changed documents indexed, as the search tools do.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

from sqlalchemy import select
from sqlmodel import col

from dokoro_store import frontmatter
from dokoro_store.clock import Clock, iso, slug
from dokoro_store.db.engine import Database
from dokoro_store.errors import EmbedderUnavailableError, InvalidArgumentError
from dokoro_store.files import atomic_write_text
from dokoro_store.models import Doc
from dokoro_store.paths import StorePaths
from dokoro_store.services.plans import PlanService, PlanView
from dokoro_store.services.questions import QuestionService

if TYPE_CHECKING:
    from dokoro_store.retrieval.documents import DocumentService
    from dokoro_store.retrieval.embedders import EmbedderHandle
    from dokoro_store.retrieval.search import SearchHit, SearchService

__all__ = [
    "APPROACHES",
    "SEMANTIC_FLOORS",
    "Conflicts",
    "Duplicates",
    "FeaturePlan",
    "PlanningService",
    "RegressionHistory",
    "ResearchCaptured",
    "Source",
    "Suggestion",
    "WhatsNext",
]

Approach = Literal["do_new_research", "use_existing_research", "plan_only", "use_docs"]
APPROACHES: tuple[Approach, ...] = ("do_new_research", "use_existing_research", "plan_only", "use_docs")

# The cosine a semantic-only hit needs to count as related, by embedder kind. Static (model2vec)
# and hashing vectors put unrelated text near 0; nomic-embed-text puts it around 0.4.
SEMANTIC_FLOORS = {"static": 0.25, "hashing": 0.2, "ollama": 0.55}
_DEFAULT_FLOOR = 0.3
STALE_AFTER = timedelta(days=7)
_MAX_TEXT = 20_000

_REGRESSION = re.compile(
    r"\b(broke|broken|breaks?|breaking|regress\w*|revert\w*|roll(?:ed)?[ -]?back|fail\w*|bugs?|crash\w*|"
    r"flak\w*|outage|incident|hotfix\w*)\b",
    re.IGNORECASE,
)
_CONFLICT = re.compile(
    r"\b(conflict\w*|incompatib\w*|clash\w*|deprecat\w*|superseded|must not|do not|don't|never|avoid|instead)\b",
    re.IGNORECASE,
)
_FINISHED = re.compile(r"\b(implemented|completed|done|shipped|released|merged|finished)\b", re.IGNORECASE)
_OPEN_STATUSES = frozenset({"active", "pending", "backlog", "inbox", "in-progress", "blocked", "paused", "todo"})
_DONE_STATUSES = frozenset({"done", "completed", "validated", "archived", "resolved", "shipped"})


@dataclass(frozen=True)
class Source:
    """A document an answer drew on, and why it surfaced."""

    doc_id: str
    title: str
    filepath: str
    doc_type: str
    status: str
    updated_at: datetime
    score: float
    cosine: float | None
    why: str
    excerpt: str
    labels: tuple[str, ...] = ()


@dataclass(frozen=True)
class PlanMatch:
    plan: PlanView
    similarity: float | None  # cosine to the question, None when matched by words


@dataclass(frozen=True)
class FeaturePlan:
    feature: str
    approach: str
    markdown: str
    path: str  # relative to the workspace folder
    doc_id: str
    research: tuple[Source, ...]
    docs: tuple[Source, ...]
    similar: tuple[Source, ...]
    conflicts: tuple[Source, ...]
    plans: tuple[PlanMatch, ...]
    notes: tuple[str, ...]


@dataclass(frozen=True)
class ResearchCaptured:
    path: str
    doc_id: str
    title: str
    chunks: int
    indexed: bool
    notes: tuple[str, ...]


@dataclass(frozen=True)
class Suggestion:
    kind: str  # plan | blocker | question | related | research | stale
    text: str
    sources: tuple[str, ...]  # doc ids, plan ids, question ids


@dataclass(frozen=True)
class WhatsNext:
    context: str | None
    suggestions: tuple[Suggestion, ...]
    related: tuple[Source, ...]
    research: tuple[Source, ...]
    notes: tuple[str, ...]


@dataclass(frozen=True)
class Conflicts:
    feature: str
    hits: tuple[Source, ...]
    plans: tuple[PlanMatch, ...]
    searched: int
    notes: tuple[str, ...]


@dataclass(frozen=True)
class Duplicates:
    description: str
    finished: tuple[Source, ...]
    unfinished: tuple[Source, ...]
    plans: tuple[PlanMatch, ...]
    notes: tuple[str, ...]


@dataclass(frozen=True)
class RegressionHistory:
    component: str
    hits: tuple[Source, ...]
    notes: tuple[str, ...]


@dataclass
class _Found:
    sources: list[Source] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    searched: int = 0


def _text_slug(text: str, limit: int = 50) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:limit].strip("-")


def _required(text: str, what: str) -> str:
    value = text.strip()
    if not value:
        raise InvalidArgumentError(f"{what} must not be empty")
    if len(value) > _MAX_TEXT:
        raise InvalidArgumentError(f"{what} is {len(value)} characters; keep it under {_MAX_TEXT}")
    return value


def _evidence(content: str, pattern: re.Pattern[str], fallback: str) -> str:
    """The first line of the body that matches ``pattern``: the sentence that makes the hit relevant."""
    _raw, body = frontmatter.split(content)
    for line in body.splitlines():
        if line.lstrip().startswith("#"):
            continue  # a heading names the note; the evidence is in its sentences
        stripped = line.strip(" -*>\t")
        if stripped and pattern.search(stripped):
            return stripped if len(stripped) <= 240 else stripped[:240] + "..."
    return fallback


def _is_research(source: Source) -> bool:
    return source.doc_type == "research" or source.filepath.startswith(("insights/", "research/"))


def _is_feature(source: Source) -> bool:
    return source.doc_type in ("prd", "feature") or source.filepath.startswith(("features/", "planning/"))


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
        self._search = search
        self._docs = docs
        self._embedder = embedder

    # ------------------------------------------------------------------ search
    def _floor(self) -> float:
        embedder = self._embedder.get()
        return SEMANTIC_FLOORS.get(embedder.kind, _DEFAULT_FLOOR) if embedder is not None else _DEFAULT_FLOOR

    def _refresh(self) -> list[str]:
        return list(self._search.refresh().notes)

    def _related(self, query: str, limit: int, keep: Callable[[Source], bool] | None = None) -> _Found:
        """Documents related to ``query`` by words or meaning, best first, at most ``limit``."""
        found = _Found()
        result = self._search.universal(query, limit=min(100, max(limit * 4, 20)), mode="hybrid")
        found.notes += result.notes
        found.searched = len(result.hits)
        floor = self._floor()
        hits = [h for h in result.hits if h.source != "semantic" or (h.vector_score or 0.0) >= floor]
        contents = self._contents([h.doc_id for h in hits])
        for hit in hits:
            source = self._source(hit, contents.get(hit.doc_id, ""))
            if keep is None or keep(source):
                found.sources.append(source)
            if len(found.sources) >= limit:
                break
        return found

    def _contents(self, ids: Sequence[str]) -> dict[str, str]:
        if not ids:
            return {}
        with self._db.read() as session:
            rows = session.execute(select(col(Doc.id), col(Doc.content)).where(col(Doc.id).in_(list(ids)))).all()
        return {str(row[0]): str(row[1] or "") for row in rows}

    @staticmethod
    def _source(hit: SearchHit, content: str) -> Source:
        labels: list[str] = []
        if _REGRESSION.search(content):
            labels.append("regression")
        if hit.doc_type == "decision" or hit.filepath.startswith("decisions/"):
            labels.append("decision")
        if _CONFLICT.search(content):
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

    def related_plans(self, query: str, limit: int, *, live_only: bool = True) -> list[PlanMatch]:
        """Plans close to ``query``, closest first (the tachibot bridge's context uses it)."""
        return self._related_plans(query, limit, live_only=live_only)

    def _related_plans(self, query: str, limit: int, *, live_only: bool) -> list[PlanMatch]:
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
                floor = self._floor()
                ranked = sorted(
                    (PlanMatch(p, s) for p, s in zip(plans, sims, strict=True) if s >= floor),
                    key=lambda m: -(m.similarity or 0.0),
                )
                return ranked[:limit]
        words = {w for w in re.findall(r"[a-z0-9]{4,}", query.lower())}
        matched = [
            PlanMatch(p, None)
            for p, t in zip(plans, texts, strict=True)
            if words & set(re.findall(r"[a-z0-9]{4,}", t.lower()))
        ]
        return matched[:limit]

    # ------------------------------------------------------------------ conflicts
    def detect_conflicts(self, feature: str) -> Conflicts:
        """What already in the store could clash with ``feature``: regressions and bugs, decisions,
        constraints, research and work in flight on the same thing."""
        feature = _required(feature, "feature")
        notes = self._refresh()

        def relevant(source: Source) -> bool:
            return (
                bool(source.labels) or _is_research(source) or (_is_feature(source) and source.status in _OPEN_STATUSES)
            )

        found = self._related(feature, 5, relevant)
        plans = self._related_plans(feature, 3, live_only=True)
        return Conflicts(feature, tuple(found.sources), tuple(plans), found.searched, tuple(notes + found.notes))

    # ------------------------------------------------------------------ regressions
    def regression_history(self, component: str, limit: int = 5) -> RegressionHistory:
        """Notes about ``component`` (found by meaning) that record something breaking, failing or
        being reverted, best first, each with the sentence that says so."""
        component = _required(component, "component")
        notes = self._refresh()
        found = self._related(component, limit, lambda s: "regression" in s.labels)
        contents = self._contents([s.doc_id for s in found.sources])
        hits = tuple(
            replace(s, excerpt=_evidence(contents.get(s.doc_id, ""), _REGRESSION, s.excerpt)) for s in found.sources
        )
        return RegressionHistory(component, hits, tuple(notes + found.notes))

    # ------------------------------------------------------------------ duplicates
    def check_duplicate(self, description: str) -> Duplicates:
        """Features, plans and documents that already do what ``description`` says, finished or not."""
        description = _required(description, "description")
        notes = self._refresh()

        def candidate(source: Source) -> bool:
            return _is_feature(source) or source.doc_type in ("plan", "issue") or source.status in _DONE_STATUSES

        found = self._related(description, 6, candidate)
        contents = self._contents([s.doc_id for s in found.sources])
        finished = [
            s for s in found.sources if s.status in _DONE_STATUSES or _FINISHED.search(contents.get(s.doc_id, ""))
        ]
        unfinished = [s for s in found.sources if s not in finished]
        plans = self._related_plans(description, 3, live_only=False)
        return Duplicates(description, tuple(finished), tuple(unfinished), tuple(plans), tuple(notes + found.notes))

    # ------------------------------------------------------------------ research capture
    def capture_research(
        self,
        topic: str,
        findings: str,
        sources: Sequence[str] | None = None,
        tags: dict[str, Any] | None = None,
    ) -> ResearchCaptured:
        """Write ``insights/<date>-<topic>-research.md`` and index it, so later questions find it."""
        from dokoro_store.retrieval.markdown_docs import describe_markdown, doc_id_for, path_doc_id

        topic = _required(topic, "topic")
        findings = _required(findings, "findings")
        clean_sources = [s.strip() for s in sources or [] if s and s.strip()]
        if tags is not None and not all(isinstance(k, str) and k for k in tags):
            raise InvalidArgumentError("tags must map non-empty names to values")
        now = self._clock.now()
        front: dict[str, Any] = {
            "title": f"Research: {topic}",
            "date": iso(now),
            "docType": "research",
            "tags": {"type": "research", "category": "insights", "status": "captured", **(tags or {})},
        }
        lines = [
            f"# Research: {topic}",
            "",
            f"**Captured:** {iso(now)}",
            "",
            "## Key Findings",
            "",
            findings,
            "",
            "## Sources",
            "",
            *([f"- {s}" for s in clean_sources] or ["- (none recorded)"]),
            "",
            "## Next Steps",
            "",
            "- [ ] Review these findings before planning (dokoro_plan_feature with use_existing_research)",
            "- [ ] Turn what holds up into a decision or a plan",
            "- [ ] Compare with current work (dokoro_detect_conflicts)",
            "",
        ]
        text = frontmatter.render(front) + "\n".join(lines)
        stem = f"{now:%Y-%m-%d}-{_text_slug(topic) or 'topic'}-research"
        folder = self._paths.root / "insights"
        path = folder / f"{stem}.md"
        counter = 2
        while path.exists():
            path = folder / f"{stem}-{counter}.md"
            counter += 1
        atomic_write_text(path, text)
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
            relative, md.id, md.title, report.chunks, report.indexed > 0 or report.unchanged > 0, tuple(report.notes)
        )

    # ------------------------------------------------------------------ what next
    def whats_next(self, context: str | None = None) -> WhatsNext:
        """Next steps from the plans in flight, blockers, open questions, related open documents,
        recent research and stale plans."""
        context = context.strip() if context else None
        if context:
            context = _required(context, "context")
        notes = self._refresh()
        now = self._clock.now()
        suggestions: list[Suggestion] = []
        live = [p for p in self._plans.list() if not p.archived and p.status in ("active", "completed")]
        if context and live:
            order = {m.plan.id: i for i, m in enumerate(self._related_plans(context, len(live), live_only=True))}
            live.sort(key=lambda p: order.get(p.id, len(order)))
        for plan in live[:5]:
            pending = [i for i in plan.items if not i.completed]
            if plan.status == "completed" or not pending:
                suggestions.append(
                    Suggestion(
                        "plan", f"Validate “{plan.title}”: every item is done (dokoro_plan_validate).", (plan.id,)
                    )
                )
                continue
            step = pending[0]
            suggestions.append(
                Suggestion(
                    "plan", f"“{plan.title}” ({plan.completion}%): next is {step.index}. {step.text}", (plan.id,)
                )
            )
            for item in pending:
                for blocker in item.blockers:
                    suggestions.append(
                        Suggestion("blocker", f"Unblock “{item.text}” in “{plan.title}”: {blocker}", (plan.id,))
                    )
            if now - plan.updated_at > STALE_AFTER:
                days = (now - plan.updated_at).days
                suggestions.append(
                    Suggestion(
                        "stale", f"“{plan.title}” has not moved for {days} days: resume it or close it.", (plan.id,)
                    )
                )
        for question in self._questions.list("open"):
            if question.priority == "blocker":
                suggestions.append(
                    Suggestion("question", f"Answer the blocking question: {question.question}", (question.id,))
                )
        related: list[Source] = []
        if context:
            found = self._related(context, 5, lambda s: s.status in _OPEN_STATUSES and s.filepath != "current.md")
            related = found.sources
            notes += found.notes
            for source in related:
                suggestions.append(
                    Suggestion("related", f"Open work on this: {source.title} ({source.filepath})", (source.doc_id,))
                )
        research = self._recent_research(3)
        for source in research:
            suggestions.append(
                Suggestion("research", f"Recent research: {source.title} ({source.filepath})", (source.doc_id,))
            )
        return WhatsNext(context, tuple(suggestions), tuple(related), tuple(research), tuple(notes))

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
            )
            for row in rows
        ]

    # ------------------------------------------------------------------ feature plan
    def plan_feature(
        self, feature: str, approach: str = "use_existing_research", context: str | None = None
    ) -> FeaturePlan:
        """A markdown plan for ``feature`` built from what the store knows; saved under planning/ and indexed."""
        feature = _required(feature, "feature")
        if approach not in APPROACHES:
            raise InvalidArgumentError(f"approach must be one of {', '.join(APPROACHES)}; got {approach!r}")
        context = context.strip() if context else None
        if context:
            context = _required(context, "context")
        notes = self._refresh()
        question = f"{feature}. {context}" if context else feature
        research: list[Source] = []
        docs: list[Source] = []
        if approach in ("use_existing_research", "do_new_research"):
            found = self._related(question, 3, _is_research)
            research, notes = found.sources, notes + found.notes
        if approach == "use_docs":
            found = self._related(question, 5)
            docs, notes = found.sources, notes + found.notes
        similar_found = self._related(feature, 3, lambda s: _is_feature(s) or s.doc_type == "plan")
        conflicts_found = self._related(
            feature, 3, lambda s: bool({"regression", "decision", "constraint"} & set(s.labels))
        )
        plans = self._related_plans(question, 3, live_only=True)
        notes += similar_found.notes + conflicts_found.notes
        now = self._clock.now()
        markdown = _render_feature_plan(
            feature, approach, context, research, docs, similar_found.sources, conflicts_found.sources, plans, now
        )
        relative = f"planning/{slug(now)}-{_text_slug(feature) or 'feature'}-plan.md"
        path = self._paths.root / relative
        counter = 2
        while path.exists():
            relative = f"planning/{slug(now)}-{_text_slug(feature) or 'feature'}-plan-{counter}.md"
            path = self._paths.root / relative
            counter += 1
        atomic_write_text(path, markdown)
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
        return FeaturePlan(
            feature,
            approach,
            markdown,
            relative,
            doc_id,
            tuple(research),
            tuple(docs),
            tuple(similar_found.sources),
            tuple(conflicts_found.sources),
            tuple(plans),
            tuple(dict.fromkeys(notes)),
        )


def _cite(source: Source) -> str:
    return f"[{source.title}]({source.filepath}) `{source.doc_id}`"


def _render_feature_plan(
    feature: str,
    approach: str,
    context: str | None,
    research: list[Source],
    docs: list[Source],
    similar: list[Source],
    conflicts: list[Source],
    plans: list[PlanMatch],
    now: datetime,
) -> str:
    front = {
        "title": f"Plan: {feature}",
        "date": iso(now),
        "feature": feature,
        "approach": approach,
        "tags": {"type": "plan", "status": "draft", "approach": approach},
    }
    lines = [f"# Plan: {feature}", "", f"**Created:** {iso(now)}  ", f"**Approach:** {approach}", ""]
    if context:
        lines += ["## Context", "", context, ""]
    if approach == "use_existing_research":
        lines += ["## Existing Research", ""]
        if research:
            lines += [f"- {_cite(s)} — {s.why}\n  > {s.excerpt}" for s in research]
        else:
            lines.append("- No stored research relates to this yet: capture some with dokoro_capture_research.")
        lines.append("")
    elif approach == "do_new_research":
        lines += [
            "## Research To Do",
            "",
            "- [ ] What do existing solutions and libraries do?",
            "- [ ] What constraints (performance, security, compatibility) apply?",
            "- [ ] What are the risks and open questions?",
            "- [ ] Record the findings with dokoro_capture_research",
            "",
        ]
        if research:
            lines += ["Read first (already stored):", "", *[f"- {_cite(s)}" for s in research], ""]
    elif approach == "use_docs":
        lines += ["## Documents To Review", ""]
        lines += [f"- [ ] {_cite(s)} — {s.why}" for s in docs] or ["- No stored document relates to this yet."]
        lines.append("")
    lines += ["## Similar Features", ""]
    lines += [f"- {_cite(s)} ({s.status}) — {s.why}" for s in similar] or ["- None found."]
    lines += ["", "## Related Plans In Flight", ""]
    lines += [
        f"- {m.plan.title} `{m.plan.id}` ({m.plan.completion}%)"
        + (f" — similarity {m.similarity:.2f}" if m.similarity is not None else "")
        for m in plans
    ] or ["- None."]
    lines += ["", "## Potential Conflicts", ""]
    lines += [f"- {_cite(s)} [{', '.join(s.labels)}] — {s.excerpt}" for s in conflicts] or ["- None found."]
    lines += [
        "",
        "## Implementation Steps",
        "",
        "1. [ ] Confirm scope and acceptance criteria",
        "2. [ ] Design the change (data, interfaces, failure modes)",
        "3. [ ] Implement in small, reviewable steps",
        "4. [ ] Test: unit, integration, and the regressions listed above",
        "5. [ ] Document and validate (dokoro_plan_create / dokoro_plan_validate to track it)",
        "",
    ]
    cited = {s.doc_id: s for s in [*research, *docs, *similar, *conflicts]}
    if cited or plans:
        lines += ["## Sources", ""]
        lines += [f"- {_cite(s)}" for s in cited.values()]
        lines += [f"- plan `{m.plan.id}`" for m in plans]
        lines.append("")
    return frontmatter.render(front) + "\n".join(lines)
