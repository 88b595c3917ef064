"""Semantic memory tools: the bi-temporal entity graph (search, traversal with time travel) and deep
entity extraction through a local Ollama model."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from dokoro_server import AppState, ToolSpec, result, state
from dokoro_server.bounds import IsoDate, Key, Query, RowId, Text
from dokoro_store.results.graph import DeepExtraction, EntityGraph
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field

if TYPE_CHECKING:
    from dokoro_store import OllamaChat, Store

__all__ = ["TOOLS"]

EntityType = Literal["person", "project", "file", "service", "component", "concept"]


def _number(value: float) -> str:
    return f"{round(value, 2):g}"


def _traversal(store: Store, entity_id: int, depth: int, as_of: str | None) -> CallToolResult:
    from dokoro_store import iso

    walk = store.graph.traverse(entity_id, depth=depth, as_of=as_of)
    entity = walk.entity
    lines = [
        f"## Entity: {entity.name}",
        f"Type: {entity.type}",
        f"ID: {entity.id}",
        f"Canonical: {entity.canonical_name}",
    ]
    if entity.description:
        lines.append(f"Description: {entity.description}")
    lines.append(f"As of: {iso(walk.as_of)}")
    lines += ["", f"### Relations (depth {depth}, {len(walk.relations)} found)"]
    if not walk.relations:
        lines.append("No relations found.")
    for rel in walk.relations:
        weight = f" (weight: {_number(rel.weight)})" if rel.weight != 1 else ""
        lines.append(f"{rel.source} --[{rel.type}]--> {rel.target}{weight}")
    lines += ["", f"### Linked Documents ({len(walk.docs)})"]
    if not walk.docs:
        lines.append("No linked documents found.")
    for doc in walk.docs:
        confidence = f", confidence: {doc.confidence:.2f}" if doc.confidence < 1 else ""
        lines.append(f"**{doc.doc_id}** ({doc.relation_type}{confidence})")
    return result("\n".join(lines), walk.result())


def _search(store: Store, query: str | None, entity_type: str | None, limit: int) -> CallToolResult:
    found = store.graph.search(query, entity_type, limit)
    stats = found.stats
    lines = ["## Entity Search Results", f"Graph stats: {stats.entities} entities, {stats.relations} relations"]
    if found.query:
        lines.append(f'Query: "{found.query}"')
    if entity_type:
        lines.append(f"Type: {entity_type}")
    lines += [f"Results: {len(found.hits)} found", ""]
    for e in found.hits:
        description = f" - {e.description}" if e.description else ""
        lines.append(f"**{e.name}** [{e.type}] (ID: {e.id}, docs: {e.doc_count}){description}")
    if not found.hits:
        lines.append("No entities found. The graph fills as documents are indexed, or with dokoro_entity_extract_deep.")
    return result("\n".join(lines).rstrip(), found.result())


def dokoro_entity_graph(
    ctx: Context[AppState],
    query: Annotated[Query | None, Field(description="Part of an entity name to search for (search mode).")] = None,
    type: Annotated[EntityType | None, Field(description="Only entities of this type (search mode).")] = None,
    entityId: Annotated[
        RowId | None, Field(description="Entity id to traverse from (traversal mode); ids come from search mode.")
    ] = None,
    depth: Annotated[int, Field(ge=1, le=5, description="Hops to walk from the entity (traversal mode).")] = 2,
    limit: Annotated[int, Field(ge=1, le=100, description="Most entities to list (search mode).")] = 20,
    as_of: Annotated[
        IsoDate | None,
        Field(
            description="Time travel (traversal mode): show the relations valid at this ISO-8601 UTC time, "
            "e.g. 2026-05-12T09:00:00Z. Default: now (only facts valid now; future-dated ones hidden)."
        ),
    ] = None,
) -> Annotated[CallToolResult, EntityGraph]:
    """Explore the knowledge graph of people, projects, files, services, components and concepts found in
    this project's documents. Without entityId: search entities by name and/or type, most-documented
    first. With entityId: walk its relations (depends_on, implements, blocks, authored_by,
    superseded_by) up to `depth` hops and list the documents that mention it. Relations are
    bi-temporal: pass as_of to see the graph as it was at a past time; superseded facts are kept."""
    store = state(ctx).store
    if entityId is not None:
        return _traversal(store, entityId, depth, as_of)
    return _search(store, query, type, limit)


def _chat(ctx: Context[AppState]) -> OllamaChat:
    from dokoro_store import DEFAULT_OLLAMA_URL, OllamaChat

    settings = state(ctx).settings
    return OllamaChat(
        base_url=settings.ollama_url or DEFAULT_OLLAMA_URL,
        model=settings.ollama_inference_model,
        chat_timeout_s=settings.ollama_chat_timeout_ms / 1000,
        health_timeout_s=settings.ollama_timeout_ms / 1000,
    )


def dokoro_entity_extract_deep(
    ctx: Context[AppState],
    docId: Annotated[
        Key, Field(min_length=1, description="Document id the entities are linked to (need not exist as a document).")
    ],
    text: Annotated[
        Text | None, Field(description="Text to extract from. Default: the stored content of document docId.")
    ] = None,
) -> Annotated[CallToolResult, DeepExtraction]:
    """Extract entities and relations from a document with the local Ollama model (OLLAMA_INFERENCE_MODEL,
    default llama3.2) merged with the regex extractor, and save them to the knowledge graph. Needs Ollama
    running with the model pulled; if the model times out or answers badly, the regex result is saved."""
    store = state(ctx).store
    deep = store.graph.extract_deep(docId, text, _chat(ctx)).result()
    lines = [
        f"## Deep Entity Extraction: {deep.doc_id}",
        f"Source: {deep.source}",
        f"Model: {deep.model}",
        f"Entities: {len(deep.entities)} | Relations: {len(deep.relations)}",
    ]
    if deep.warning:
        lines.append(f"Warning: the model's answer was not used ({deep.warning}); regex result saved.")
    lines += ["", "### Entities"]
    for e in deep.entities:
        context = f" - {e.context}" if e.context else ""
        lines.append(f"**{e.name}** [{e.type}] ({round(e.confidence * 100)}%){context}")
    lines += ["", "### Relations"]
    if not deep.relations:
        lines.append("No relations found.")
    for r in deep.relations:
        lines.append(f"{r.source} --[{r.type}]--> {r.target} ({round(r.confidence * 100)}%)")
    lines += ["", "_persisted to knowledge graph_"]
    return result("\n".join(lines), deep)


TOOLS = [
    ToolSpec(dokoro_entity_graph, "Explore the entity graph", read_only=True, idempotent=True),
    ToolSpec(dokoro_entity_extract_deep, "Deep entity extraction (Ollama)", open_world=True),
]
