"""The :class:`Store`: one per process, opened from a folder (or a database URL)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from dokoro_store.clock import Clock
from dokoro_store.db.engine import Database
from dokoro_store.db.migrate import upgrade
from dokoro_store.paths import StorePaths
from dokoro_store.services.assets import AssetService
from dokoro_store.services.current import CurrentService
from dokoro_store.services.episodic import CompactionResult, EpisodicService
from dokoro_store.services.questions import QuestionService
from dokoro_store.services.tokens import TokenService
from dokoro_store.services.workspace import WorkspaceService

__all__ = ["Store", "WorkingMemory"]

log = logging.getLogger("dokoro.store")


@dataclass(frozen=True)
class WorkingMemory:
    """The working-memory layer: what the agent is doing right now."""

    workspace: WorkspaceService
    current: CurrentService
    questions: QuestionService
    assets: AssetService


class Store:
    """Every memory layer of one project, over one database and one workspace folder.

    Open it once per process (``Store.open``), reach the layers through its attributes and
    ``close()`` it at the end. Opening upgrades the schema and finishes interrupted
    compactions.
    """

    def __init__(self, paths: StorePaths, db: Database, clock: Clock) -> None:
        self.paths = paths
        self.db = db
        self.clock = clock
        workspace = WorkspaceService(paths, db, clock)
        self.working = WorkingMemory(
            workspace=workspace,
            current=CurrentService(paths, clock, workspace),
            questions=QuestionService(db, clock, workspace),
            assets=AssetService(paths, clock, workspace),
        )
        self.episodic = EpisodicService(db, clock)
        self.tokens = TokenService(db, clock)
        self.recovered: list[CompactionResult] = []

    @classmethod
    def open(
        cls,
        root: Path,
        *,
        database_url: str | None = None,
        clock: Clock | None = None,
    ) -> Store:
        """Open the store of the workspace folder ``root``.

        The database is ``root/.dokoro/db/dokoro.sqlite`` unless ``database_url`` names another
        one. The folder is created when missing, so a fresh project works at once;
        ``dokoro_init`` adds the conventional folders and files.
        """
        paths = StorePaths(root.expanduser().resolve())
        paths.root.mkdir(parents=True, exist_ok=True)
        db = Database.open_url(database_url, paths.db_dir) if database_url else Database.open_sqlite(paths.sqlite_file)
        try:
            upgrade(db)
            store = cls(paths, db, clock or Clock())
            store.recovered = store.episodic.recover()
        except BaseException:
            db.dispose()
            raise
        if store.recovered:
            log.warning("finished %d interrupted compaction(s) on open", len(store.recovered))
        return store

    def close(self) -> None:
        self.db.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
