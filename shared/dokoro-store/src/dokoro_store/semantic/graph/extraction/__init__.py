"""Entity extraction: regular expressions (always), a local chat model (on demand), and their merge."""

from dokoro_store.semantic.graph.extraction.merge import merge, regex_only
from dokoro_store.semantic.graph.extraction.ollama import OllamaChat, OllamaUnavailableError
from dokoro_store.semantic.graph.extraction.records import (
    ENTITY_TYPES,
    MENTIONS,
    RELATION_TYPES,
    ExtractedEntity,
    ExtractedRelation,
    Extraction,
    canonicalise,
)
from dokoro_store.semantic.graph.extraction.regex import extract as extract_regex

__all__ = [
    "ENTITY_TYPES",
    "MENTIONS",
    "RELATION_TYPES",
    "ExtractedEntity",
    "ExtractedRelation",
    "Extraction",
    "OllamaChat",
    "OllamaUnavailableError",
    "canonicalise",
    "extract_regex",
    "merge",
    "regex_only",
]
