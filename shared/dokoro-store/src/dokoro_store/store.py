"""The :class:`Store`: one per process, opened from a folder (or a database URL)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy.exc import DatabaseError, OperationalError

from dokoro_store.background.announcements import Announcements
from dokoro_store.clock import Clock
from dokoro_store.db.changes import ChangeSignal
from dokoro_store.db.engine import Database, describe_url
from dokoro_store.db.migrate import current_heads, upgrade
from dokoro_store.episodic.service import CompactionResult, EpisodicService
from dokoro_store.errors import NoStoreError, StoreUnavailableError
from dokoro_store.lazy import lazy
from dokoro_store.paths import StorePaths, damaged_database, damaged_message, unusable_folder
from dokoro_store.retrieval import Retrieval, RetrievalConfig
from dokoro_store.semantic.graph.service import DEFAULT_FUNCTIONAL_RELATION_TYPES, GraphService
from dokoro_store.semantic.memories.service import MemoryService
from dokoro_store.working.current.file import CurrentFile

if TYPE_CHECKING:
    # The layers a command or a tool reaches now and then are built (and imported) on first use:
    # `dokoro rules` need not import analytics, tracking or the archive sweep.
    from dokoro_store.affective.log import FeedbackLog
    from dokoro_store.affective.service import FeedbackService
    from dokoro_store.capture.service import CaptureService
    from dokoro_store.coordination.service import Coordination
    from dokoro_store.housekeeping.cleanup import CleanupService
    from dokoro_store.housekeeping.secret_scan import SecretScanner
    from dokoro_store.housekeeping.tokens import TokenService
    from dokoro_store.moving.bridge import BridgeService
    from dokoro_store.moving.original import MoveIn
    from dokoro_store.procedural.analytics import AnalyticsService
    from dokoro_store.procedural.archive.sweep import ArchiveService
    from dokoro_store.procedural.planning.service import PlanningService
    from dokoro_store.procedural.plans.service import PlanService
    from dokoro_store.procedural.tracking import TrackingService
    from dokoro_store.semantic.documents.board import DocBoard
    from dokoro_store.semantic.memories.onboarding.service import OnboardingService
    from dokoro_store.semantic.memories.proposals.service import ProposalService
    from dokoro_store.semantic.memories.upkeep import MemoryUpkeep
    from dokoro_store.working.assets import AssetService
    from dokoro_store.working.context_inspect import ContextService
    from dokoro_store.working.current.service import CurrentService
    from dokoro_store.working.questions import QuestionService
    from dokoro_store.working.work_sessions import WorkSessions
    from dokoro_store.working.workspace.service import WorkspaceService

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

    def __init__(
        self,
        paths: StorePaths,
        db: Database,
        clock: Clock,
        functional_relation_types: Iterable[str] = DEFAULT_FUNCTIONAL_RELATION_TYPES,
        retrieval: RetrievalConfig | None = None,
        memory_review: bool = False,
        agent_id: str | None = None,
    ) -> None:
        self.paths = paths
        self.db = db
        self.clock = clock
        # Every step and thread pool working behind this store's writes, listed by name
        # (``store.background.listing()``); the database handle holds it, as every layer gets that.
        self.background = db.background
        # What the next tool answer tells the agent once (the server kit takes them).
        self.announcements = Announcements()
        # Every service gets its collaborators in its constructor, so the order below is the
        # dependency order: a service is complete once constructed.
        #
        # Retrieval: documents and their index (store.docs, .markdown), hybrid search (store.search),
        # the embedder shared by search and episodic recall (store.embedder).
        self.retrieval = Retrieval(paths, db, clock, retrieval or RetrievalConfig())
        self.embedder = self.retrieval.embedder
        self.docs = self.retrieval.docs
        self.markdown = self.retrieval.markdown
        self.search = self.retrieval.search
        self.graph = GraphService(db, clock, functional_relation_types, ollama=self.retrieval.ollama)
        # The retrieval objects take their graph hooks by registration (their constructors belong
        # to the retrieval package): every indexed document goes through regex entity extraction,
        # whichever server indexed it, and hybrid search lifts documents linked to entities named
        # in the query.
        self.docs.on_indexed(self.graph.on_documents_indexed, batch=True)
        self.search.graph_signal = self.graph.search_signal
        self.episodic = EpisodicService(
            db, clock, self.embedder, self.retrieval.summaries, embed_behind=self.retrieval.config.embed_behind
        )
        # current.md: the workspace writes it; questions, assets and plans log lines to it.
        self._current = CurrentFile(paths, clock)
        # Typed memories (remember / recall / forget): rows indexed as documents for hybrid recall,
        # rendered as markdown files under memories/ (a person's edits reconciled on each call);
        # with ``memory_review``, agents' inferences wait as proposed until a person approves them.
        # ``agent_id``: whom this process acts for, the author of what a person's hand (or an agent's)
        # changes in the memory files (their changes carry that caller's rights only).
        self.memories = MemoryService(
            db, clock, self.docs, self.search, paths=paths, review=memory_review, actor=agent_id
        )
        self._memory_review = memory_review
        self.recovered: list[CompactionResult] = []
        # The schema revisions found when the store was opened, before any upgrade.
        self.schema_before: frozenset[str] = frozenset()
        # What opening it moved in from a store of the original dokoro (converted on this open).
        self.moved_in: MoveIn | None = None

    # ------------------------------------------------------------ layers built on first use
    # Each is built once, under the store's lock, from the layers above it (the dependency order).

    @lazy
    def proposals(self) -> ProposalService:
        from dokoro_store.semantic.memories.proposals.service import ProposalService

        # The memories' upkeep, proposed and never applied silently: merges, summaries, prunes and
        # guardrails filed with their evidence, applied once a person (or the owning agent) approves.
        return ProposalService(self.db, self.clock, self.docs, self.memories, review=self._memory_review)

    @lazy
    def onboarding(self) -> OnboardingService:
        from dokoro_store.semantic.memories.onboarding.service import OnboardingService

        # A project's own files (README, manifests, CI, lint config) proposed as typed memories.
        return OnboardingService(self.db, self.clock)

    @lazy
    def upkeep(self) -> MemoryUpkeep:
        from dokoro_store.semantic.memories.upkeep import MemoryUpkeep

        # Stale memories and the review list, renewal, and the per-type switches (the store's settings).
        return MemoryUpkeep(self.db, self.clock, self.memories)

    @lazy
    def coord(self) -> Coordination:
        from dokoro_store.coordination.service import Coordination

        return Coordination.open(self.db, self.clock)

    @lazy
    def feedback(self) -> FeedbackService:
        from dokoro_store.affective.service import FeedbackService

        return FeedbackService(self.db)

    @lazy
    def tokens(self) -> TokenService:
        from dokoro_store.housekeeping.tokens import TokenService

        return TokenService(self.db, self.clock)

    @lazy
    def plans(self) -> PlanService:
        from dokoro_store.procedural.plans.service import PlanService

        return PlanService(self.paths, self.db, self.clock, self._current)

    @lazy
    def archive(self) -> ArchiveService:
        from dokoro_store.procedural.archive.sweep import ArchiveService

        # The sweep skips files under a live file claim.
        return ArchiveService(self.paths, self.db, self.clock, self.plans, claims=self.coord.claims.is_claimed)

    @lazy
    def working(self) -> WorkingMemory:
        from dokoro_store.working.assets import AssetService
        from dokoro_store.working.current.service import CurrentService
        from dokoro_store.working.questions import QuestionService
        from dokoro_store.working.workspace.service import WorkspaceService

        paths, db, clock, current = self.paths, self.db, self.clock, self._current
        # A claim runs the archive sweep; a dump saves and indexes its document like any other;
        # ending a session (dump with keepActive=false) releases the session's file claims.
        workspace = WorkspaceService(
            paths,
            db,
            clock,
            current=current,
            documents=self.docs,
            after_claim=self.archive.after_claim,
            release_claims=self.coord.claims.release_session,
        )
        return WorkingMemory(
            workspace=workspace,
            current=CurrentService(paths, clock, current),
            questions=QuestionService(db, clock, current),
            assets=AssetService(paths, clock, current),
        )

    @lazy
    def context(self) -> ContextService:
        from dokoro_store.working.context_inspect import ContextService

        return ContextService(self.paths, self.clock)

    @lazy
    def planning(self) -> PlanningService:
        from dokoro_store.procedural.planning.service import PlanningService

        # Planning helpers (dokoro-planning) answer from hybrid search and plans.
        return PlanningService(
            self.paths,
            self.db,
            self.clock,
            self.plans,
            self.working.questions,
            self.search,
            self.docs,
            self.embedder,
        )

    @lazy
    def bridge(self) -> BridgeService:
        from dokoro_store.moving.bridge import BridgeService

        # The tachibot bridge (dokoro-bridge): research answers as documents, tachibot plans as plans.
        return BridgeService(self.paths, self.clock, self.docs, self.search, self.embedder, self.plans, self.planning)

    @lazy
    def tracking(self) -> TrackingService:
        from dokoro_store.procedural.tracking import TrackingService

        # Tracking (issues, features, the week, task timers).
        return TrackingService(
            self.paths,
            self.db,
            self.clock,
            session_id=lambda: self.working.workspace.claimed_session,
            log_line=self._current.log_line,
            search=self.search,
            docs=self.docs,
        )

    @lazy
    def analytics(self) -> AnalyticsService:
        from dokoro_store.procedural.analytics import AnalyticsService

        # Analytics over every layer's rows.
        return AnalyticsService(
            self.paths, self.db, self.clock, self.tracking, search=self.search, docs=self.docs, plans=self.plans
        )

    # What a person does from the command line and `dokoro browse`: the documents as a work board
    # (status, tags, time), work sessions, cleanup of the folder, single feedback rows.
    @lazy
    def board(self) -> DocBoard:
        from dokoro_store.semantic.documents.board import DocBoard

        return DocBoard(self.db, self.clock)

    @lazy
    def work_sessions(self) -> WorkSessions:
        from dokoro_store.working.work_sessions import WorkSessions

        return WorkSessions(self.db, self.clock, self.episodic)

    @lazy
    def cleanup(self) -> CleanupService:
        from dokoro_store.housekeeping.cleanup import CleanupService

        return CleanupService(self.paths, self.db, self.clock)

    @lazy
    def feedback_log(self) -> FeedbackLog:
        from dokoro_store.affective.log import FeedbackLog

        return FeedbackLog(self.db)

    @lazy
    def capture(self) -> CaptureService:
        from dokoro_store.capture.service import CaptureService

        # Client transcripts (Claude Code's hooks) read into the store as turns, session summaries
        # and marks; recall for a prompt across memories, summaries and captured turns.
        return CaptureService(self.paths, self.db, self.clock, self.docs, self.search, self.episodic)

    @lazy
    def secret_scan(self) -> SecretScanner:
        from dokoro_store.housekeeping.secret_scan import SecretScanner

        # `dokoro doctor --scan-secrets [--fix]`: secrets already stored (rows and files), redacted in place.
        return SecretScanner(self.paths, self.db, self.docs)

    @classmethod
    def open(
        cls,
        root: Path,
        *,
        database_url: str | None = None,
        clock: Clock | None = None,
        functional_relation_types: Iterable[str] = DEFAULT_FUNCTIONAL_RELATION_TYPES,
        retrieval: RetrievalConfig | None = None,
        memory_review: bool = False,
        create: bool = True,
        agent_id: str | None = None,
    ) -> Store:
        """Open the store of the workspace folder ``root``.

        The database is ``root/.dokoro/db/dokoro.sqlite`` unless ``database_url`` names another
        one. The folder is created when missing, so a fresh project works at once;
        ``dokoro_init`` adds the conventional folders and files. ``functional_relation_types`` are the
        single-valued relation types of the entity graph (default ``{"superseded_by"}``).
        ``retrieval`` chooses the embedder and vector engine (default: ``auto`` for both).
        ``memory_review``: memories agents infer wait as ``proposed`` for a person's approval.
        ``agent_id``: whom this process acts for (``DOKORO_AGENT_ID``; None: a person): the memory
        files' changes are made with its rights only (``docs/memory-files.md``).
        ``create=False`` (a command that only reads or changes a store): a database at
        ``database_url`` that holds no dokoro schema raises :class:`NoStoreError` untouched.
        """
        paths = StorePaths(root.expanduser().resolve())
        clock = clock or Clock()
        notices: list[str] = []
        db, moved_in, fresh_folder = _open_database(paths, database_url, clock, create=create, notices=notices)
        try:
            schema_before = current_heads(db)
            if not create and database_url and not schema_before:
                raise NoStoreError(
                    f"the database of DOKORO_DATABASE_URL at {describe_url(db.url)} holds no dokoro store yet: "
                    "run `dokoro init` with this DOKORO_DATABASE_URL to create it"
                )
            paths.root.mkdir(parents=True, exist_ok=True)
            upgrade(db, current=schema_before)  # one read of the stored version; migrations only if it differs
            if fresh_folder or not schema_before or moved_in is not None:
                from dokoro_store.housekeeping.gitignore import write_gitignore

                write_gitignore(paths.root)  # a new store: git keeps its markdown, not its database
            store = cls(paths, db, clock, functional_relation_types, retrieval, memory_review, agent_id)
            store.schema_before = schema_before
            store.moved_in = moved_in
            if moved_in is not None:  # said once, on the first answer of the process that converted it
                notices.append(f"📦 {moved_in.summary()}.")
            for notice in notices:
                store.announcements.add(notice)
            store.recovered = store.episodic.recover()
            # Vectors a killed writer left to its write-behind (embed_behind): embedded shortly, here.
            store.episodic.resume_behind()
            store.docs.resume_behind()
        except OSError as exc:
            db.dispose()
            raise StoreUnavailableError(unusable_folder(paths.root, exc)) from None
        except OperationalError as exc:
            db.dispose()
            if "readonly" not in str(exc) and "read-only" not in str(exc) and not _unwritable(paths.db_dir):
                raise
            raise StoreUnavailableError(unusable_folder(paths.root, PermissionError(str(exc.orig)))) from None
        except DatabaseError as exc:
            db.dispose()
            if database_url or not damaged_database(exc):
                raise
            raise StoreUnavailableError(damaged_message(paths, exc)) from None
        except BaseException:
            db.dispose()
            raise
        if store.recovered:
            log.warning("finished %d interrupted compaction(s) on open", len(store.recovered))
        return store

    def change_signal(self) -> ChangeSignal:
        """A poller of the database's write counter (close it when done); see :mod:`dokoro_store.db.changes`."""
        return ChangeSignal(self.db)

    def close(self, *, finish: bool = True) -> None:
        """Close the store. ``finish``: first complete the work written behind the writes (the
        entity graph's extraction, LanceDB's copy of new vectors); without it (a server whose
        client has gone) that work stays marked in the database, where the next process or the
        next reader completes it, and closing costs only the database's own close."""
        self.episodic.close(finish=finish)  # the summaries' vectors written behind
        self.graph.close(finish=finish)  # the graph write-behind: extracts what waits, or leaves it marked
        self.memories.close()
        self.retrieval.close(finish=finish)  # the documents' vectors written behind, then LanceDB's copy
        self.db.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def _open_database(
    paths: StorePaths, database_url: str | None, clock: Clock, *, create: bool, notices: list[str]
) -> tuple[Database, MoveIn | None, bool]:
    """The store's database, opened (not yet migrated): the folder made when a store may be created,
    an original dokoro's store moved in and converted once; the database, the move-in, whether the
    folder is new. What the agent's next answer should say is added to ``notices``."""
    moved_in = None
    try:
        fresh_folder = not paths.root.exists()
        if create or database_url is None:  # a team database without a store creates no folder
            paths.root.mkdir(parents=True, exist_ok=True)
        if database_url is None:
            # A store the original TypeScript dokoro wrote: backed up, converted, verified, once
            # (first moved in from its legacy place, <project>/.dokoro, when it is still there).
            from dokoro_store.moving.original import convert_in_place, move_legacy

            move_legacy(paths, clock.now(), notices.append)
            moved_in = convert_in_place(paths, clock.now())
        elif paths.sqlite_file.is_file():
            from dokoro_store.moving.original import is_original_database

            if is_original_database(paths.sqlite_file):
                log.warning(
                    "dokoro: %s holds a store of the original dokoro; this process uses the database of "
                    "DOKORO_DATABASE_URL. Bring its history there with `dokoro migrate --from-original %s`",
                    paths.root,
                    paths.root,
                )
        db = Database.open_url(database_url, paths.db_dir) if database_url else Database.open_sqlite(paths.sqlite_file)
    except OSError as exc:
        raise StoreUnavailableError(unusable_folder(paths.root, exc)) from None
    except DatabaseError as exc:
        if database_url or not damaged_database(exc):
            raise
        raise StoreUnavailableError(damaged_message(paths, exc)) from None
    return db, moved_in, fresh_folder


def _unwritable(folder: Path) -> bool:
    """SQLite reports a folder it cannot write its log files in as "unable to open database file":
    a probe file tells that apart from other failures (``os.access`` says yes to root on an
    immutable folder)."""
    import tempfile

    try:
        with tempfile.TemporaryFile(dir=folder):
            return False
    except OSError:
        return True
