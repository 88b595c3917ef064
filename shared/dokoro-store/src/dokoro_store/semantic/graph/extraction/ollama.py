"""Deep extraction through a local Ollama chat model (reference §4.7), with a timeout.

:class:`OllamaChat` is configured by explicit arguments (the entry point reads ``OLLAMA_URL``,
``OLLAMA_INFERENCE_MODEL`` and the timeouts). It talks through the store's one Ollama client
(:mod:`dokoro_store.index.embedders.ollama_client`, the official ``ollama`` package, imported on first use), so it
matches model names as the embedder does (exact or with a tag: ``llama3.2`` is never
``llama3.2-vision``), shares the process's cached health check and bounds every call by a timeout.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, cast

from dokoro_store.errors import DokoroError
from dokoro_store.semantic.graph.extraction.records import (
    ENTITY_TYPES,
    RELATION_TYPES,
    ExtractedEntity,
    ExtractedRelation,
    Extraction,
    canonicalise,
)

if TYPE_CHECKING:
    from dokoro_store.index.embedders.ollama_client import OllamaClient, OllamaServers

__all__ = [
    "DEFAULT_CHAT_TIMEOUT_S",
    "DEFAULT_HEALTH_TIMEOUT_S",
    "DEFAULT_INFERENCE_MODEL",
    "DEFAULT_OLLAMA_URL",
    "LLM_CONFIDENCE",
    "ChatFailedError",
    "OllamaChat",
    "OllamaUnavailableError",
    "parse_llm_output",
]

log = logging.getLogger("dokoro.extraction")

DEFAULT_OLLAMA_URL = "http://localhost:11434"
DEFAULT_INFERENCE_MODEL = "llama3.2"
DEFAULT_HEALTH_TIMEOUT_S = 5.0
DEFAULT_CHAT_TIMEOUT_S = 120.0
LLM_CONFIDENCE = 0.9

SYSTEM_PROMPT = """You are an entity-extraction system for a developer knowledge graph.
Output only JSON of this shape:
{"entities": [{"name": "...", "type": "...", "description": "..."}],
 "relations": [{"source": "...", "target": "...", "type": "..."}]}
"name" is the exact text as it appears. "source" and "target" are entity names.
Entity types:
- person: a human or bot, by handle or name
- project: a repository or product
- file: a file path
- service: an external system, database, cloud or SaaS service
- component: a class, module, function or UI component of the code
- concept: an idea, technique, pattern or topic
Relation types:
- mentions: the text mentions the source
- implements: the source implements or builds the target
- depends_on: the source uses, requires or needs the target
- blocks: the source blocks the target
- authored_by: the source was written, built or fixed by the person target
- superseded_by: the source was replaced by, or renamed to, the target
Be thorough, but only include entities clearly mentioned in the text."""

USER_PROMPT = "Extract entities and relations from this text:\n\n"


class OllamaUnavailableError(DokoroError):
    """Ollama cannot be reached, or the inference model is not pulled."""


class ChatFailedError(Exception):
    """The chat call failed or answered something unusable (the caller falls back to regex)."""


@dataclass(frozen=True)
class OllamaChat:
    """A chat model served by Ollama at ``base_url``.

    ``health_timeout_s`` bounds the availability check; ``chat_timeout_s`` bounds generation.
    ``transport`` replaces the network (an ``httpx`` transport); without it the store's client for
    this address and these timeouts is used, with its cached health check (``servers``, given by
    the store's graph when it runs the chat: :meth:`within`), or, outside a store, a client of its own.
    """

    base_url: str = DEFAULT_OLLAMA_URL
    model: str = DEFAULT_INFERENCE_MODEL
    chat_timeout_s: float = DEFAULT_CHAT_TIMEOUT_S
    health_timeout_s: float = DEFAULT_HEALTH_TIMEOUT_S
    transport: Any = None
    servers: OllamaServers | None = field(default=None, compare=False, repr=False)

    def within(self, servers: OllamaServers) -> OllamaChat:
        """This chat model reached through ``servers`` (a store's), unless it has a transport or servers."""
        if self.transport is not None or self.servers is not None:
            return self
        return replace(self, servers=servers)

    @property
    def pull_hint(self) -> str:
        return f"`ollama pull {self.model}`"

    @cached_property
    def client(self) -> OllamaClient:
        from dokoro_store.index.embedders.ollama_client import OllamaClient

        if self.servers is not None:
            return self.servers.client(
                self.base_url, timeout_s=self.chat_timeout_s, health_timeout_s=self.health_timeout_s
            )
        return OllamaClient(
            self.base_url,
            timeout_s=self.chat_timeout_s,
            health_timeout_s=self.health_timeout_s,
            transport=self.transport,
        )

    def check(self) -> None:
        """Raise :class:`OllamaUnavailableError`, saying what to do, unless the model is available."""
        from dokoro_store.index.embedders.ollama_client import model_matches

        reachable, why, names = self.client.models()
        if not reachable:
            raise OllamaUnavailableError(
                f"{why}. Start it with `ollama serve` (https://ollama.com) and pull the model: {self.pull_hint}; "
                "set OLLAMA_URL if it runs elsewhere"
            )
        if not any(model_matches(name, self.model) for name in names):
            have = ", ".join(names) or "none"
            raise OllamaUnavailableError(
                f"Ollama at {self.base_url} does not have the model {self.model!r} (it has: {have}). "
                f"Pull it with {self.pull_hint}, or set OLLAMA_INFERENCE_MODEL to one it has"
            )

    def chat(self, text: str) -> str:
        """The model's raw JSON answer for ``text`` (raises :class:`ChatFailedError`)."""
        from dokoro_store.index.embedders.ollama_client import OllamaCallError

        messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": USER_PROMPT + text},
        ]
        try:
            return self.client.chat(self.model, messages, json_format=True)
        except OllamaCallError as exc:
            if exc.timed_out:
                raise ChatFailedError(
                    f"{self.model} did not answer within {self.chat_timeout_s:g}s (raise OLLAMA_CHAT_TIMEOUT_MS)"
                ) from None
            raise ChatFailedError(f"the chat call to {self.model} failed: {exc}") from None

    def extract(self, text: str) -> Extraction:
        """Entities and relations of ``text`` according to the model (source ``llm``)."""
        return parse_llm_output(self.chat(text), model=self.model)


def _str(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def parse_llm_output(content: str, *, model: str | None = None) -> Extraction:
    """Parse the model's JSON: invalid entities and unresolved relations are dropped.

    Raises :class:`ChatFailedError` when the answer is not the expected JSON object.
    """
    try:
        data = json.loads(content)
    except json.JSONDecodeError as exc:
        raise ChatFailedError(f"the model's answer is not JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise ChatFailedError("the model's answer is not a JSON object")
    data = cast(dict[str, Any], data)
    raw_entities = data.get("entities", [])
    raw_relations = data.get("relations", [])
    if not isinstance(raw_entities, list) or not isinstance(raw_relations, list):
        raise ChatFailedError("the model's answer has no entities/relations lists")
    entities: dict[tuple[str, str], ExtractedEntity] = {}
    by_name: dict[str, ExtractedEntity] = {}
    for item in raw_entities:
        if not isinstance(item, dict):
            continue
        name, kind = _str(item.get("name")), _str(item.get("type")).lower()
        if not name or kind not in ENTITY_TYPES:
            continue
        canonical = canonicalise(kind, name)
        if not canonical:
            continue
        description = _str(item.get("description")) or None
        entity = ExtractedEntity(
            type=kind,  # checked against ENTITY_TYPES above
            name=name,
            canonical=canonical,
            confidence=LLM_CONFIDENCE,
            context=description or "",
            description=description,
        )
        entities.setdefault(entity.key, entity)
        by_name.setdefault(name.lower(), entity)
        by_name.setdefault(canonical, entity)
    relations: dict[tuple[tuple[str, str], tuple[str, str], str], ExtractedRelation] = {}
    for item in raw_relations:
        if not isinstance(item, dict):
            continue
        kind = _str(item.get("type")).lower()
        source = by_name.get(_str(item.get("source")).lower())
        target = by_name.get(_str(item.get("target")).lower())
        if kind not in RELATION_TYPES or source is None or target is None:
            continue
        relation = ExtractedRelation(
            source.key, target.key, kind, LLM_CONFIDENCE, f"LLM: {source.name} {kind} {target.name}"
        )
        relations.setdefault(relation.key, relation)
    if raw_entities and not entities:
        log.info("deep extraction: the model named entities, none of a known type")
    return Extraction(list(entities.values()), list(relations.values()), source="llm", model=model)
