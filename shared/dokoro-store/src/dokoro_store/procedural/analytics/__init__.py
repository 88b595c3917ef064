"""The analytics layer (``store.analytics``): where features stand, what is pending, velocity, the
timeline, test checklists and the weekly compression — answered from the store's rows (tracking,
sessions, plans, feedback) and documents (hybrid search, and the workspace's markdown documents:
:mod:`.documents`), never from file modification times. Pending, velocity and the timeline bring
the workspace's markdown in step first (a note written by hand counts at once), as search does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.paths import StorePaths
from dokoro_store.procedural.analytics.compress import WeekCompressor
from dokoro_store.procedural.analytics.features import FeatureDesk
from dokoro_store.procedural.analytics.insights import Insights
from dokoro_store.procedural.tracking import TrackingService
from dokoro_store.results.analytics import CompressWeek, FeatureStatus, Pending, TestChecklist, Timeline, Velocity

if TYPE_CHECKING:
    from dokoro_store.procedural.plans.service import PlanService
    from dokoro_store.semantic.documents.service import DocumentService
    from dokoro_store.semantic.search.service import SearchService

__all__ = ["AnalyticsService"]


class AnalyticsService:
    def __init__(
        self,
        paths: StorePaths,
        db: Database,
        clock: Clock,
        tracking: TrackingService,
        *,
        search: SearchService,
        docs: DocumentService,
        plans: PlanService,
    ) -> None:
        self._tracking = tracking
        self._search = search
        self._insights = Insights(db, clock, tracking.tasks)
        self._features = FeatureDesk(tracking.items, search, docs, plans)
        self._compressor = WeekCompressor(paths, db, clock, docs, search)

    def feature_status(self, feature: str) -> FeatureStatus:
        self._tracking.refresh()  # hand edits of the renderings count before anything is read
        return self._features.status(feature)

    def pending(self, staleness: str = "all") -> Pending:
        self._refresh()
        return self._insights.pending(staleness)

    def velocity(self, period: str = "week") -> Velocity:
        self._refresh()
        return self._insights.velocity(period)

    def timeline(self, range_: str = "month") -> Timeline:
        self._refresh()
        return self._insights.timeline(range_)

    def _refresh(self) -> None:
        """Hand edits of the tracking renderings and of the workspace's markdown count before
        anything is read (the markdown's reconcile stats each file; a changed one is indexed)."""
        self._tracking.refresh()
        self._search.refresh()

    def test_checklist(self, feature: str, fmt: str = "checklist") -> TestChecklist:
        self._tracking.refresh()
        return self._features.checklist(feature, fmt)

    def compress_week(
        self, week_number: int | None = None, year: int | None = None, dry_run: bool = False
    ) -> CompressWeek:
        return self._compressor.compress(week_number, year, dry_run)
