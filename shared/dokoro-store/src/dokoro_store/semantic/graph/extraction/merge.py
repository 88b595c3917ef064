"""Merging a regex extraction with a model's (reference §4.7): the model wins where both speak."""

from __future__ import annotations

from dataclasses import replace

from dokoro_store.semantic.graph.extraction.records import (
    MENTIONS,
    ExtractedEntity,
    ExtractedRelation,
    Extraction,
)

__all__ = ["HYBRID_REGEX_CONFIDENCE", "merge", "regex_only"]

# Regex findings are re-scored to this in a deep extraction; the model's carry 0.9.
HYBRID_REGEX_CONFIDENCE = 0.7


def regex_only(regex: Extraction, *, model: str | None, warning: str | None) -> Extraction:
    """The regex result as a deep extraction whose model failed: every confidence 0.7."""
    return Extraction(
        entities=[e.with_confidence(HYBRID_REGEX_CONFIDENCE) for e in regex.entities],
        relations=[r.with_confidence(HYBRID_REGEX_CONFIDENCE) for r in regex.relations],
        source="regex-only",
        model=model,
        warning=warning,
    )


def merge(regex: Extraction, llm: Extraction) -> Extraction:
    """Regex findings at 0.7, overwritten by the model's (0.9) for the same (type, canonical name),
    keeping the regex span and context. Every entity gets a ``mentions`` link to the document."""
    entities: dict[tuple[str, str], ExtractedEntity] = {
        e.key: e.with_confidence(HYBRID_REGEX_CONFIDENCE) for e in regex.entities
    }
    for found in llm.entities:
        spanned = entities.get(found.key)
        if spanned is None:
            entities[found.key] = found
        else:
            entities[found.key] = replace(
                spanned,
                confidence=found.confidence,
                description=found.description or spanned.description,
                context=spanned.context or found.context,
            )
    relations: dict[tuple[tuple[str, str], tuple[str, str], str], ExtractedRelation] = {
        r.key: r.with_confidence(HYBRID_REGEX_CONFIDENCE) for r in regex.relations
    }
    for relation in llm.relations:
        relations[relation.key] = relation
    for entity in entities.values():
        key = (entity.key, entity.key, MENTIONS)
        if key not in relations:
            relations[key] = ExtractedRelation(entity.key, entity.key, MENTIONS, entity.confidence, entity.context)
    return Extraction(
        entities=list(entities.values()), relations=list(relations.values()), source="hybrid", model=llm.model
    )
