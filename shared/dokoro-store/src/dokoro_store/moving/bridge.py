"""The tachibot bridge (reference §2.14): what another agent tool found, kept in dokoro's memory.

tachibot asks search engines and models (perplexity, grok, openai, gemini) and makes plans. The
bridge keeps those answers where every dokoro tool finds them:

- a research answer is a **document** whose id is derived from ``source:query``
  (``research-<source>-<12 hex of sha256>``), so asking the same question again updates that one
  document instead of piling up copies; it is re-indexed only when its content changed;
- an imported plan is an ordinary **plan** (row, items, ``.mcp/plans`` mirror, today's id style),
  so ``dokoro_plan_status``/``_check``/``_validate`` work on it like on any other;
- the context handed back is hybrid search over the documents plus the live plans close to the
  query (plans are rows, not documents, so search alone would never find an imported plan).

Everything written is redacted first: an answer pasted from the web may carry a token.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from dokoro_store.clock import Clock
from dokoro_store.errors import InvalidArgumentError, NotFoundError
from dokoro_store.paths import StorePaths
from dokoro_store.results.bridge import (
    RESEARCH_SOURCES,
    BridgeContext,
    ContextEntry,
    ContextPlan,
    PlanImported,
    ResearchIndexed,
    ResearchSource,
)
from dokoro_store.semantic.documents.markdown import content_hash
from dokoro_store.walls.secrets import redact, redact_all

if TYPE_CHECKING:
    from dokoro_store.index.embedders.handle import EmbedderHandle
    from dokoro_store.procedural.planning.service import PlanningService
    from dokoro_store.procedural.plans.service import PlanService
    from dokoro_store.semantic.documents.service import DocumentService
    from dokoro_store.semantic.search.service import SearchService

__all__ = ["IMPORT_DESCRIPTION", "MAX_CONTEXT", "RESEARCH_DOC_TYPE", "BridgeService", "research_doc_id"]

RESEARCH_DOC_TYPE = "research"
IMPORT_DESCRIPTION = "Imported from tachibot planner_maker"
MAX_CONTEXT = 50
_CONTEXT_PLANS = 3


def research_doc_id(source: str, query: str) -> str:
    """``research-<source>-<first 12 hex of sha256("source:query")>`` (reference §2.14)."""
    digest = hashlib.sha256(f"{source}:{query}".encode()).hexdigest()[:12]
    return f"research-{source}-{digest}"


def _required(value: str, what: str, hint: str) -> str:
    clean = (value or "").strip()
    if not clean:
        raise InvalidArgumentError(f"{what} must not be empty: {hint}")
    return clean


def _source(value: str) -> ResearchSource:
    for known in RESEARCH_SOURCES:
        if value == known:
            return known
    raise InvalidArgumentError(f"source must be one of {', '.join(RESEARCH_SOURCES)}; got {value!r}")


def _status(value: str) -> Literal["draft", "active"]:
    if value == "draft":
        return "draft"
    if value == "active":
        return "active"
    raise InvalidArgumentError(f"status must be draft or active; got {value!r}")


def _redact_metadata(metadata: dict[str, Any], kinds: list[str]) -> dict[str, Any]:
    """``metadata`` with every string inside it redacted (keys are kept as given)."""

    def clean(value: Any) -> Any:
        if isinstance(value, str):
            cleaned = redact(value)
            kinds.extend(cleaned.kinds)
            return cleaned.text
        if isinstance(value, dict):
            return {str(k): clean(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [clean(v) for v in value]
        return value

    return {str(key): clean(value) for key, value in metadata.items()}


class BridgeService:
    """Research answers as documents, tachibot plans as plans, and context for a query."""

    def __init__(
        self,
        paths: StorePaths,
        clock: Clock,
        docs: DocumentService,
        search: SearchService,
        embedder: EmbedderHandle,
        plans: PlanService,
        planning: PlanningService,
    ) -> None:
        self._paths = paths
        self._clock = clock
        self._docs = docs
        self._search = search
        self._embedder = embedder
        self._plans = plans
        self._planning = planning

    # ------------------------------------------------------------------ research
    def index_research(
        self,
        source: str,
        query: str,
        content: str,
        metadata: dict[str, Any] | None = None,
    ) -> ResearchIndexed:
        """Keep one research answer as the document of ``(source, query)`` and index it.

        A new pair creates the document (``indexed``); the same pair with new content replaces it
        and re-indexes it (``reindexed``); the same content again writes nothing (``unchanged``).
        """
        known = _source(source)
        query = _required(query, "query", "pass the question the research answered")
        _required(content, "content", "pass the research answer to index")
        doc_id = research_doc_id(source, query)
        digest = doc_id.rsplit("-", 1)[1]
        kinds: list[str] = []
        body = redact(content)
        kinds += body.kinds
        shown_query = redact(query)
        kinds += shown_query.kinds
        title = f"[{source}] {shown_query.text}"
        filepath = f"bridge://research/{source}/{digest}"
        meta = _redact_metadata(dict(metadata or {}), kinds)
        meta.update(source=source, query=shown_query.text)

        embedder = self._embedder.get()
        if embedder is not None:
            self._docs.check_search_stamp(embedder)  # refuse before writing anything
        try:
            before = self._docs.get(doc_id)
        except NotFoundError:
            before = None
        same = (
            before is not None
            and before.content_hash == content_hash(body.text)
            and before.title == title
            and (before.metadata_json or {}) == meta
            and before.doc_type == RESEARCH_DOC_TYPE
        )
        if not same:
            self._docs.save(
                doc_id,
                body.text,
                title=title,
                filepath=filepath,
                doc_type=RESEARCH_DOC_TYPE,
                status="active",
                metadata=meta,
            )
        # Indexes only what is new or changed (or lacks vectors of the current embedder).
        report = self._docs.index_docs([doc_id])
        if before is None:
            action = "indexed"
        elif report.indexed:
            action = "reindexed"
        else:
            action = "unchanged"
        return ResearchIndexed(
            doc_id=doc_id,
            source=known,
            query=shown_query.text,
            title=title,
            filepath=filepath,
            action=action,
            chunks=report.chunks,
            tokens=report.tokens,
            vectors=report.vectors,
            embedder=report.embedder,
            notes=list(report.notes),
            redacted=list(kinds),
        )

    # ------------------------------------------------------------------ plans
    def import_plan(
        self,
        title: str,
        phases: Sequence[str],
        *,
        status: str = "active",
        filepath: str | None = None,
        agent_id: str | None = None,
    ) -> PlanImported:
        """Store a tachibot plan as an ordinary plan: one item per phase, in order."""
        wanted = _status(status)
        if not phases:
            raise InvalidArgumentError("phases must list at least one phase of the plan")
        cleaned, kinds = redact_all([title, *phases, filepath])
        clean_title, *clean_phases, clean_path = cleaned
        description = IMPORT_DESCRIPTION + (f" ({clean_path.strip()})" if clean_path and clean_path.strip() else "")
        view = self._plans.create(
            clean_title or "",
            [phase or "" for phase in clean_phases],
            description,
            agent_id=agent_id,
            status=wanted,
        )
        mirror = self._plans.files.live(view.id).relative_to(self._paths.root).as_posix()
        return PlanImported(
            plan_id=view.id,
            title=view.title,
            description=view.description or description,
            status=wanted,
            items=[item.text for item in view.items],
            mirror=mirror,
            created_at=view.created_at,
            redacted=list(kinds),
        )

    # ------------------------------------------------------------------ context
    def get_context(
        self,
        query: str,
        limit: int = 5,
        *,
        include_research: bool = True,
        include_plans: bool = True,
    ) -> BridgeContext:
        """The documents hybrid search ranks best for ``query`` (research and plan documents only
        when asked for), then the live plans closest to it (when ``include_plans``)."""
        query = _required(query, "query", "say what the context is for")
        if not 1 <= limit <= MAX_CONTEXT:
            raise InvalidArgumentError(f"limit must be between 1 and {MAX_CONTEXT}; got {limit}")
        notes = list(self._search.refresh().notes)
        found = self._search.universal(query, limit=min(100, limit * 2), mode="hybrid")
        notes += found.notes
        excluded = set()
        if not include_research:
            excluded.add(RESEARCH_DOC_TYPE)
        if not include_plans:
            excluded.add("plan")
        kept = [hit for hit in found.hits if hit.doc_type not in excluded][:limit]
        entries = [
            ContextEntry(
                rank=rank,
                doc_id=hit.doc_id,
                doc_type=hit.doc_type,
                title=hit.title,
                filepath=hit.filepath,
                score=round(hit.score, 6),
                source=hit.source,
                why=hit.why,
                excerpt=hit.excerpt,
                updated_at=hit.updated_at,
                retired=hit.retired,
                stale=hit.stale,
            )
            for rank, hit in enumerate(kept, start=1)
        ]
        plans: list[ContextPlan] = []
        if include_plans:
            for match in self._planning.related_plans(query, min(_CONTEXT_PLANS, limit), live_only=True):
                plan = match.plan
                pending = next((item.text for item in plan.items if not item.completed), None)
                plans.append(
                    ContextPlan(
                        plan_id=plan.id,
                        title=plan.title,
                        status=plan.status,
                        completion=plan.completion,
                        done=plan.done,
                        total=plan.total,
                        next_item=pending,
                        similarity=round(match.similarity, 4) if match.similarity is not None else None,
                    )
                )
        return BridgeContext(
            query=redact(query).text,  # echoed redacted: a secret asked about is never printed back
            include_research=include_research,
            include_plans=include_plans,
            entries=entries,
            plans=plans,
            searched=len(found.hits),
            notes=list(dict.fromkeys(notes)),
        )
