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

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dokoro_store.affective.service import Outcome, z_for_confidence
    from dokoro_store.background.announcements import take_announcements
    from dokoro_store.background.write_behind import on_first_run
    from dokoro_store.briefing import build_briefing
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
    from dokoro_store.housekeeping.health import diagnose
    from dokoro_store.housekeeping.init import init_folder
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
    "import_original",
    "init_folder",
    "inside",
    "is_original_database",
    "iso",
    "load_backup",
    "normalise_url",
    "on_first_run",
    "parse_front_matter",
    "plan_import",
    "preview_of",
    "preview_original",
    "read_knowledge_graph",
    "read_notes_folder",
    "recent_markdown",
    "redact",
    "redact_all",
    "resolve_dokoro_path",
    "search_markdown",
    "split_front_matter",
    "stale_words",
    "take_announcements",
    "usage_line",
    "z_for_confidence",
]

# name -> (module under dokoro_store, attribute)
_HOMES: dict[str, tuple[str, str]] = {
    "Store": ("store", "Store"),
    "WorkingMemory": ("store", "WorkingMemory"),
    "StorePaths": ("paths", "StorePaths"),
    "resolve_dokoro_path": ("paths", "resolve_dokoro_path"),
    "RetrievalConfig": ("retrieval", "RetrievalConfig"),
    "ConflictError": ("errors", "ConflictError"),
    "DokoroError": ("errors", "DokoroError"),
    "InvalidArgumentError": ("errors", "InvalidArgumentError"),
    "NoStoreError": ("errors", "NoStoreError"),
    "NoWorkspaceError": ("errors", "NoWorkspaceError"),
    "NotFoundError": ("errors", "NotFoundError"),
    "StoreUnavailableError": ("errors", "StoreUnavailableError"),
    "WorkspaceLockedError": ("errors", "WorkspaceLockedError"),
    "Clock": ("clock", "Clock"),
    "FrozenClock": ("clock", "FrozenClock"),
    "format_duration": ("clock", "format_duration"),
    "iso": ("clock", "iso"),
    "MAX_COUNT": ("limits", "MAX_COUNT"),
    "MAX_INT32": ("limits", "MAX_INT32"),
    "MAX_TOKEN_COUNT": ("limits", "MAX_TOKEN_COUNT"),
    "Redaction": ("walls.secrets", "Redaction"),
    "collect_redactions": ("walls.secrets", "collect_redactions"),
    "redact": ("walls.secrets", "redact"),
    "redact_all": ("walls.secrets", "redact_all"),
    "inside": ("walls.containment", "inside"),
    "split_front_matter": ("walls.frontmatter", "split"),
    "parse_front_matter": ("walls.frontmatter", "parse"),
    "on_first_run": ("background.write_behind", "on_first_run"),
    "take_announcements": ("background.announcements", "take_announcements"),
    "NEXT_STATUS": ("procedural.plans.service", "NEXT_STATUS"),
    "PlanView": ("procedural.plans.views", "PlanView"),
    "MAX_LIST": ("procedural.tracking", "MAX_LIST"),
    "MAX_TTL": ("coordination.presence", "MAX_TTL"),
    "PRESENCE_TTL": ("coordination.presence", "PRESENCE_TTL"),
    "MEMORY_TYPES": ("semantic.memories.service", "MEMORY_TYPES"),
    "stale_words": ("semantic.memories.lifecycle", "stale_words"),
    "usage_line": ("semantic.memories.usage", "usage_line"),
    "CLOSE_MATCH": ("index.ranking.calibration", "CLOSE_MATCH"),
    "DocScope": ("index.scope", "DocScope"),
    "SEARCH_MODES": ("semantic.search.service", "SEARCH_MODES"),
    "recent_markdown": ("semantic.documents.markdown_search", "recent_markdown"),
    "search_markdown": ("semantic.documents.markdown_search", "search_markdown"),
    "Outcome": ("affective.service", "Outcome"),
    "z_for_confidence": ("affective.service", "z_for_confidence"),
    "DEFAULT_OLLAMA_URL": ("semantic.graph.extraction.ollama", "DEFAULT_OLLAMA_URL"),
    "OllamaChat": ("semantic.graph.extraction.ollama", "OllamaChat"),
    "build_briefing": ("briefing", "build_briefing"),
    "init_folder": ("housekeeping.init", "init_folder"),
    "diagnose": ("housekeeping.health", "diagnose"),
    "apply_import": ("moving.backup", "apply_import"),
    "export_store": ("moving.backup", "export_store"),
    "load_backup": ("moving.backup", "load_backup"),
    "plan_import": ("moving.backup", "plan_import"),
    "copy_store": ("moving.transfer", "copy_store"),
    "ImportSet": ("moving.importers", "ImportSet"),
    "apply_import_set": ("moving.importers", "apply_import_set"),
    "preview_of": ("moving.importers", "preview_of"),
    "read_knowledge_graph": ("moving.importers", "read_knowledge_graph"),
    "read_notes_folder": ("moving.importers", "read_notes_folder"),
    "find_conversion": ("moving.original", "find_conversion"),
    "import_original": ("moving.original", "import_original"),
    "is_original_database": ("moving.original", "is_original_database"),
    "preview_original": ("moving.original", "preview_original"),
    "describe_url": ("db.engine", "describe_url"),
    "normalise_url": ("db.engine", "normalise_url"),
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'dokoro_store' has no attribute {name!r}")
    module, attribute = home
    value = getattr(importlib.import_module(f"dokoro_store.{module}"), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
