"""dokoro storage library: every table, file and domain rule of the memory layers.

This module is the store's one front door. Servers, the server kit and the CLI import from here
(and the typed results from :mod:`dokoro_store.results`), never a module inside: everything
else is private, and the import-linter contracts in ``.importlinter`` keep it so. Open one
:class:`Store` per process and call its services; nothing else touches the database or the
workspace files. ``docs/architecture.md`` maps the rooms behind this door.

Names are resolved on first use (PEP 562), so importing this package (or ``dokoro_store.results``,
pure pydantic) never drags in SQLAlchemy at server start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dokoro_store.lazy import lazy_exports

if TYPE_CHECKING:
    from dokoro_store.affective.service import Outcome, z_for_confidence
    from dokoro_store.briefing import build_briefing, session_start_text
    from dokoro_store.capture.journal import journal_path as hook_journal_path
    from dokoro_store.capture.journal import last_runs as last_hook_runs
    from dokoro_store.capture.journal import record_run as record_hook_run
    from dokoro_store.capture.recall import render_recall
    from dokoro_store.capture.switches import write_switch as write_capture_switch
    from dokoro_store.capture.transcript import ReadBounds
    from dokoro_store.clock import Clock, FrozenClock, format_duration, iso
    from dokoro_store.coordination.presence import MAX_TTL, PRESENCE_TTL
    from dokoro_store.db.engine import describe_url, normalise_url
    from dokoro_store.errors import (
        ConflictError,
        DokoroError,
        InvalidArgumentError,
        NoStoreError,
        NotFoundError,
        NoWorkspaceError,
        StoreUnavailableError,
        WorkspaceLockedError,
    )
    from dokoro_store.housekeeping.gitignore import write_gitignore
    from dokoro_store.housekeeping.health import diagnose
    from dokoro_store.housekeeping.init import init_folder
    from dokoro_store.index.config import EMBEDDER_CHOICES
    from dokoro_store.index.ranking.calibration import CLOSE_MATCH
    from dokoro_store.index.scope import DocScope
    from dokoro_store.limits import MAX_COUNT, MAX_INT32, MAX_TOKEN_COUNT
    from dokoro_store.moving.backup import apply_import, export_store, load_backup, plan_import
    from dokoro_store.moving.importers import (
        ImportSet,
        apply_import_set,
        preview_of,
        read_knowledge_graph,
        read_notes_folder,
    )
    from dokoro_store.moving.original import find_conversion, import_original, is_original_database, preview_original
    from dokoro_store.moving.transfer import copy_store
    from dokoro_store.paths import StorePaths, resolve_dokoro_path
    from dokoro_store.procedural.plans.service import NEXT_STATUS
    from dokoro_store.procedural.plans.views import PlanView
    from dokoro_store.procedural.tracking import MAX_LIST
    from dokoro_store.retrieval import RetrievalConfig
    from dokoro_store.semantic.documents.markdown_search import recent_markdown, search_markdown
    from dokoro_store.semantic.graph.extraction.ollama import DEFAULT_OLLAMA_URL, OllamaChat
    from dokoro_store.semantic.memories.lifecycle import stale_words
    from dokoro_store.semantic.memories.service import MEMORY_TYPES
    from dokoro_store.semantic.memories.usage import usage_line
    from dokoro_store.semantic.search.service import SEARCH_MODES
    from dokoro_store.store import Store, WorkingMemory
    from dokoro_store.walls.containment import inside
    from dokoro_store.walls.frontmatter import parse as parse_front_matter
    from dokoro_store.walls.frontmatter import split as split_front_matter
    from dokoro_store.walls.secrets import Redaction, collect_redactions, redact, redact_all

__all__ = [
    "CLOSE_MATCH",
    "DEFAULT_OLLAMA_URL",
    "EMBEDDER_CHOICES",
    "MAX_COUNT",
    "MAX_INT32",
    "MAX_LIST",
    "MAX_TOKEN_COUNT",
    "MAX_TTL",
    "MEMORY_TYPES",
    "NEXT_STATUS",
    "PRESENCE_TTL",
    "SEARCH_MODES",
    "Clock",
    "ConflictError",
    "DocScope",
    "DokoroError",
    "FrozenClock",
    "ImportSet",
    "InvalidArgumentError",
    "NoStoreError",
    "NoWorkspaceError",
    "NotFoundError",
    "OllamaChat",
    "Outcome",
    "PlanView",
    "ReadBounds",
    "Redaction",
    "RetrievalConfig",
    "Store",
    "StorePaths",
    "StoreUnavailableError",
    "WorkingMemory",
    "WorkspaceLockedError",
    "apply_import",
    "apply_import_set",
    "build_briefing",
    "collect_redactions",
    "copy_store",
    "describe_url",
    "diagnose",
    "export_store",
    "find_conversion",
    "format_duration",
    "hook_journal_path",
    "import_original",
    "init_folder",
    "inside",
    "is_original_database",
    "iso",
    "last_hook_runs",
    "lazy_exports",
    "load_backup",
    "normalise_url",
    "parse_front_matter",
    "plan_import",
    "preview_of",
    "preview_original",
    "read_knowledge_graph",
    "read_notes_folder",
    "recent_markdown",
    "record_hook_run",
    "redact",
    "redact_all",
    "render_recall",
    "resolve_dokoro_path",
    "search_markdown",
    "session_start_text",
    "split_front_matter",
    "stale_words",
    "usage_line",
    "write_capture_switch",
    "write_gitignore",
    "z_for_confidence",
]

# name -> its module under dokoro_store ("module:attribute" when it has another name there)
_HOMES = {
    "Store": "store",
    "WorkingMemory": "store",
    "StorePaths": "paths",
    "resolve_dokoro_path": "paths",
    "RetrievalConfig": "retrieval",
    "EMBEDDER_CHOICES": "index.config",
    "ConflictError": "errors",
    "DokoroError": "errors",
    "InvalidArgumentError": "errors",
    "NoStoreError": "errors",
    "NoWorkspaceError": "errors",
    "NotFoundError": "errors",
    "StoreUnavailableError": "errors",
    "WorkspaceLockedError": "errors",
    "Clock": "clock",
    "FrozenClock": "clock",
    "format_duration": "clock",
    "iso": "clock",
    "MAX_COUNT": "limits",
    "MAX_INT32": "limits",
    "MAX_TOKEN_COUNT": "limits",
    "Redaction": "walls.secrets",
    "collect_redactions": "walls.secrets",
    "redact": "walls.secrets",
    "redact_all": "walls.secrets",
    "inside": "walls.containment",
    "split_front_matter": "walls.frontmatter:split",
    "parse_front_matter": "walls.frontmatter:parse",
    "NEXT_STATUS": "procedural.plans.service",
    "PlanView": "procedural.plans.views",
    "MAX_LIST": "procedural.tracking",
    "MAX_TTL": "coordination.presence",
    "PRESENCE_TTL": "coordination.presence",
    "MEMORY_TYPES": "semantic.memories.service",
    "stale_words": "semantic.memories.lifecycle",
    "usage_line": "semantic.memories.usage",
    "CLOSE_MATCH": "index.ranking.calibration",
    "DocScope": "index.scope",
    "SEARCH_MODES": "semantic.search.service",
    "recent_markdown": "semantic.documents.markdown_search",
    "search_markdown": "semantic.documents.markdown_search",
    "Outcome": "affective.service",
    "z_for_confidence": "affective.service",
    "DEFAULT_OLLAMA_URL": "semantic.graph.extraction.ollama",
    "OllamaChat": "semantic.graph.extraction.ollama",
    "build_briefing": "briefing",
    "session_start_text": "briefing",
    "ReadBounds": "capture.transcript",
    "record_hook_run": "capture.journal:record_run",
    "last_hook_runs": "capture.journal:last_runs",
    "hook_journal_path": "capture.journal:journal_path",
    "render_recall": "capture.recall",
    "write_capture_switch": "capture.switches:write_switch",
    "write_gitignore": "housekeeping.gitignore",
    "init_folder": "housekeeping.init",
    "diagnose": "housekeeping.health",
    "apply_import": "moving.backup",
    "export_store": "moving.backup",
    "load_backup": "moving.backup",
    "plan_import": "moving.backup",
    "copy_store": "moving.transfer",
    "ImportSet": "moving.importers",
    "apply_import_set": "moving.importers",
    "preview_of": "moving.importers",
    "read_knowledge_graph": "moving.importers",
    "read_notes_folder": "moving.importers",
    "find_conversion": "moving.original",
    "import_original": "moving.original",
    "is_original_database": "moving.original",
    "preview_original": "moving.original",
    "describe_url": "db.engine",
    "normalise_url": "db.engine",
}


__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
