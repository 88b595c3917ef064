"""Where a feature stands, and what to test for it (reference §2.17 ``dokoro_feature_status``,
``dokoro_test_checklist``).

The tracking rows are the authority on status; documents found by hybrid search (by meaning, not
only by words) add evidence, and are the fall-back when no tracked item matches. The checklist
adds, to five standard checks, one check per bug already fixed in this area (resolved issues)
and per stored note that records something breaking, each naming where it comes from.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING

from sqlalchemy.exc import SQLAlchemyError

from dokoro_store.errors import DokoroError, InvalidArgumentError
from dokoro_store.procedural.tracking.items import ItemService
from dokoro_store.procedural.tracking.rules import clean_text
from dokoro_store.results.analytics import (
    ChecklistItem,
    DocEvidence,
    FeatureMatch,
    FeatureStatus,
    PlanMatch,
    TestChecklist,
)

if TYPE_CHECKING:
    from dokoro_store.procedural.plans.service import PlanService
    from dokoro_store.semantic.documents.service import DocumentService
    from dokoro_store.semantic.search.service import SearchService

__all__ = ["FORMATS", "FeatureDesk", "similarity"]

log = logging.getLogger("dokoro.store")

FORMATS = ("checklist", "detailed", "json")
_WORD = re.compile(r"[a-z0-9]+")
_STOP = {"the", "a", "an", "and", "or", "of", "for", "to", "in", "on", "with", "add", "feature", "support"}
_DONE = re.compile(r"✅|\bcompleted\b|\bimplemented\b|\bdone\b", re.IGNORECASE)
_DOING = re.compile(r"🚧|\bin progress\b|\bworking on\b", re.IGNORECASE)
_PLANNED = re.compile(r"📋|\bplanned\b|\btodo\b", re.IGNORECASE)
_MARKER = re.compile(r"✅|🚧|📋")
_BROKE = re.compile(r"\b(broke|broken|regress\w*|fail\w*|crash\w*|revert\w*|bug)\b", re.IGNORECASE)
_KEYWORD_CHECKS = (
    (re.compile(r"\b(null|undefined|none|nil|empty)\b", re.IGNORECASE), "Null, undefined and empty values are handled"),
    (re.compile(r"\b(performance|slow|latency|timeout)\b", re.IGNORECASE), "Performance does not regress (time it)"),
    (re.compile(r"\b(memory|leak|oom)\b", re.IGNORECASE), "Memory use stays bounded under load"),
    (re.compile(r"\b(race|concurren\w*|deadlock|lock)\b", re.IGNORECASE), "Concurrent use keeps data consistent"),
)
STANDARD = (
    "Happy path: {f} works end to end with typical input",
    "Bad input: invalid, empty and boundary values give clear errors",
    "Edge cases: empty data, very large data, unicode, concurrent use",
    "Error handling: failures of what {f} depends on are reported, not swallowed",
    "Regression suite: the existing tests still pass",
)
_STATUS_OF = {"ideas": "planned", "planned": "planned", "active": "in_progress", "completed": "completed"}
_ISSUE_STATUS = {"pending": "planned", "active": "in_progress", "resolved": "completed"}


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def similarity(query: str, title: str) -> float:
    """Share of the query's words found in the title (1.0 = every word)."""
    wanted = _words(query)
    if not wanted:
        return 0.0
    return round(len(wanted & _words(title)) / len(wanted), 3)


class FeatureDesk:
    def __init__(
        self,
        items: ItemService,
        search: SearchService | None,
        docs: DocumentService,
        plans: PlanService | None,
    ) -> None:
        self._items = items
        self._search = search
        self._docs = docs
        self._plans = plans

    def _matches(self, feature: str, kinds: tuple[str, ...] = ("feature", "issue")) -> list[FeatureMatch]:
        found: list[FeatureMatch] = []
        for row in self._items.all():
            if row.kind not in kinds:
                continue
            score = 1.0 if row.id == feature.strip() else similarity(feature, row.title)
            if score >= 0.5:
                found.append(
                    FeatureMatch(
                        id=row.id,
                        kind=row.kind,
                        title=row.title,
                        status=row.status,
                        similarity=score,
                        updated_at=row.updated_at,
                        plan_path=row.plan_path,
                    )
                )
        found.sort(key=lambda m: (-m.similarity, m.kind != "feature", -m.updated_at.timestamp()))
        return found[:5]

    def _documents(self, query: str, notes: list[str], limit: int = 5) -> list[DocEvidence]:
        if self._search is None:
            return []
        try:
            self._search.refresh()
            hits = self._search.universal(query, limit=limit).hits
        except (DokoroError, SQLAlchemyError, OSError) as exc:
            log.warning("dokoro: analytics search failed", exc_info=True)
            notes.append(f"document search failed: {exc}")
            return []
        evidence: list[DocEvidence] = []
        for hit in hits:
            if hit.filepath.startswith("tracking/"):
                continue  # renderings of the rows already counted
            try:
                content = self._docs.get(hit.doc_id).content or ""
            except DokoroError:
                content = hit.excerpt
            markers = [line.strip() for line in content.splitlines() if _MARKER.search(line)][:10]
            evidence.append(
                DocEvidence(doc_id=hit.doc_id, title=hit.title, filepath=hit.filepath, why=hit.why, markers=markers)
            )
        return evidence

    def _plan_matches(self, feature: str) -> list[PlanMatch]:
        if self._plans is None:
            return []
        return [
            PlanMatch(id=p.id, title=p.title, status=p.status, completion=p.completion)
            for p in self._plans.list("all")
            if similarity(feature, p.title) >= 0.5
        ][:5]

    def status(self, feature: str) -> FeatureStatus:
        query = clean_text(feature, "feature", required=True, limit=300)
        assert query is not None
        notes: list[str] = []
        matches = self._matches(query)
        documents = self._documents(query, notes)
        plans = self._plan_matches(query)
        if matches:
            best = matches[0]
            mapping = _STATUS_OF if best.kind == "feature" else _ISSUE_STATUS
            status = mapping.get(best.status, "unknown")
            basis = f"tracking {best.kind} {best.id} is {best.status} (title matches {round(best.similarity * 100)}%)"
        elif documents:
            text = "\n".join(documents[0].markers) or documents[0].why
            status = "unknown"
            for name, pattern in (("completed", _DONE), ("in_progress", _DOING), ("planned", _PLANNED)):
                if pattern.search(text):
                    status = name
                    break
            basis = f"no tracked item matches; markers in the closest document {documents[0].filepath}"
        else:
            status, basis = "unknown", "no tracked item, plan or document matches"
        if plans and not matches:
            notes.append("plans with a similar title are listed; their completion is not a feature status")
        return FeatureStatus(
            feature=query, status=status, basis=basis, matches=matches, documents=documents, plans=plans, notes=notes
        )

    def checklist(self, feature: str, fmt: str = "checklist") -> TestChecklist:
        query = clean_text(feature, "feature", required=True, limit=300)
        assert query is not None
        if fmt not in FORMATS:
            raise InvalidArgumentError(f"format must be one of {', '.join(FORMATS)}; got {fmt!r}")
        notes: list[str] = []
        items = [ChecklistItem(text=t.format(f=query), kind="standard", source=None, why=None) for t in STANDARD]
        for row in self._items.all():
            if row.kind != "issue" or row.status not in ("resolved", "archived") or row.category != "bug":
                continue
            score = similarity(query, f"{row.title} {row.description or ''}")
            if score >= 0.5:
                fix = f" (fixed by: {row.solution.splitlines()[0][:120]})" if row.solution else ""
                items.append(
                    ChecklistItem(
                        text=f"Regression: “{row.title}” stays fixed{fix}",
                        kind="regression",
                        source=row.id,
                        why=f"resolved bug {row.id} matches {round(score * 100)}% of the feature's words",
                    )
                )
        seen_checks: set[str] = set()
        for doc in self._documents(query, notes, limit=8):
            # Plans written by dokoro_feature_plan name regressions in their template, not as facts.
            if doc.filepath.endswith("-implementation-plan.md") or not _BROKE.search(self._content(doc.doc_id)):
                continue
            items.append(
                ChecklistItem(
                    text=f"Regression: re-check what broke before — {doc.title}",
                    kind="regression",
                    source=doc.filepath,
                    why=doc.why,
                )
            )
            content = self._content(doc.doc_id)
            for pattern, check in _KEYWORD_CHECKS:
                if check not in seen_checks and pattern.search(content):
                    seen_checks.add(check)
                    items.append(
                        ChecklistItem(text=check, kind="regression", source=doc.filepath, why="named in the note")
                    )
        for match in self._matches(query, ("feature",)):
            planned = self._items.get(match.id)
            if planned is None or not planned.plan_markdown:
                continue
            why = f"testing step of {planned.id}'s plan"
            for line in _section(planned.plan_markdown, "Testing"):
                items.append(ChecklistItem(text=line, kind="plan", source=planned.plan_path, why=why))
            break
        return TestChecklist(feature=query, format=fmt, items=items, notes=notes)

    def _content(self, doc_id: str) -> str:
        try:
            return str(self._docs.get(doc_id).content or "")
        except DokoroError:
            return ""


def _section(markdown: str, heading: str) -> list[str]:
    lines: list[str] = []
    inside = False
    for raw in markdown.splitlines():
        if raw.startswith("## "):
            inside = raw[3:].strip().lower() == heading.lower()
            continue
        match = re.match(r"^\s*-\s+\[[ xX]\]\s+(.*)$", raw)
        if inside and match:
            lines.append(match.group(1).strip())
    return lines
