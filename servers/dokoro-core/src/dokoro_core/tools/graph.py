"""Semantic memory tools: the bi-temporal entity graph (search, traversal with time travel) and deep
entity extraction through a local Ollama model."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from dokoro_server import ToolSpec, result, state
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import BaseModel, Field

__all__ = ["TOOLS"]

EntityType = Literal["person", "project", "file", "service", "component", "concept"]


class EntityOut(BaseModel):
    id: int
    type: str
    name: str
    canonical_name: str
    description: str | None
    doc_count: int | None = None


class RelationOut(BaseModel):
    id: int
    source_id: int
    source: str
    target_id: int
    target: str
    type: str
    weight: float
    valid_from: str
    valid_to: str | None
    recorded_at: str
    closed_at: str | None
    hops: int | None = None


class LinkedDocOut(BaseModel):
    doc_id: str
    relation_type: str
    confidence: float
    context: str | None


class GraphStatsOut(BaseModel):
    entities: int
    relations: int
    open_relations: int


class EntityGraphOut(BaseModel):
    mode: Literal["search", "traversal"]
    stats: GraphStatsOut | None = None
    query: str | None = None
    type: str | None = None
    entities: list[EntityOut] = []
    entity: EntityOut | None = None
    as_of: str | None = None
    depth: int | None = None
    relations: list[RelationOut] = []
    documents: list[LinkedDocOut] = []


class ExtractedEntityOut(BaseModel):
    type: str
    name: str
    canonical_name: str
    confidence: float
    context: str
    id: int | None


class ExtractedRelationOut(BaseModel):
    source: str
    target: str
    type: str
    confidence: float
    evidence: str


class DeepExtractOut(BaseModel):
    doc_id: str
    source: Literal["hybrid", "regex-only"]
    model: str | None
    warning: str | None
    entities: list[ExtractedEntityOut]
    relations: list[ExtractedRelationOut]
    links: int
    relations_created: int
    relations_closed: int


def _entity_out(entity: Any, doc_count: int | None = None) -> EntityOut:
    return EntityOut(
        id=int(entity.id),
        type=entity.type,
        name=entity.name,
        canonical_name=entity.canonical_name,
        description=entity.description,
        doc_count=doc_count,
    )


def _relation_out(view: Any) -> RelationOut:
    from dokoro_store.clock import iso

    return RelationOut(
        id=view.id,
        source_id=view.source_id,
        source=view.source,
        target_id=view.target_id,
        target=view.target,
        type=view.type,
        weight=view.weight,
        valid_from=iso(view.valid_from),
        valid_to=iso(view.valid_to) if view.valid_to else None,
        recorded_at=iso(view.recorded_at),
        closed_at=iso(view.closed_at) if view.closed_at else None,
        hops=view.hops,
    )


def _number(value: float) -> str:
    return f"{round(value, 2):g}"


def _traversal(store: Any, entity_id: int, depth: int, as_of: str | None) -> CallToolResult:
    from dokoro_store.clock import iso

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
    data = EntityGraphOut(
        mode="traversal",
        entity=_entity_out(entity),
        as_of=iso(walk.as_of),
        depth=depth,
        relations=[_relation_out(rel) for rel in walk.relations],
        documents=[LinkedDocOut(**vars(doc)) for doc in walk.docs],
    )
    return result("\n".join(lines), data)


def _search(store: Any, query: str | None, entity_type: str | None, limit: int) -> CallToolResult:
    found = store.graph.search(query, entity_type, limit)
    stats = found.stats
    lines = ["## Entity Search Results", f"Graph stats: {stats.entities} entities, {stats.relations} relations"]
    if query:
        lines.append(f'Query: "{query}"')
    if entity_type:
        lines.append(f"Type: {entity_type}")
    lines += [f"Results: {len(found.hits)} found", ""]
    for hit in found.hits:
        e = hit.entity
        description = f" - {e.description}" if e.description else ""
        lines.append(f"**{e.name}** [{e.type}] (ID: {e.id}, docs: {hit.doc_count}){description}")
    if not found.hits:
        lines.append("No entities found. The graph fills as documents are indexed, or with dokoro_entity_extract_deep.")
    data = EntityGraphOut(
        mode="search",
        stats=GraphStatsOut(entities=stats.entities, relations=stats.relations, open_relations=stats.open_relations),
        query=query,
        type=entity_type,
        entities=[_entity_out(hit.entity, hit.doc_count) for hit in found.hits],
    )
    return result("\n".join(lines).rstrip(), data)


def dokoro_entity_graph(
    ctx: Context,
    query: Annotated[str | None, Field(description="Part of an entity name to search for (search mode).")] = None,
    type: Annotated[EntityType | None, Field(description="Only entities of this type (search mode).")] = None,
    entityId: Annotated[
        int | None, Field(description="Entity id to traverse from (traversal mode); ids come from search mode.")
    ] = None,
    depth: Annotated[int, Field(ge=1, le=5, description="Hops to walk from the entity (traversal mode).")] = 2,
    limit: Annotated[int, Field(ge=1, le=100, description="Most entities to list (search mode).")] = 20,
    as_of: Annotated[
        str | None,
        Field(
            description="Time travel (traversal mode): show the relations valid at this ISO-8601 UTC time, "
            "e.g. 2026-05-12T09:00:00Z. Default: now (only facts valid now; future-dated ones hidden)."
        ),
    ] = None,
) -> Annotated[CallToolResult, EntityGraphOut]:
    """Explore the knowledge graph of people, projects, files, services, components and concepts found in
    this project's documents. Without entityId: search entities by name and/or type, most-documented
    first. With entityId: walk its relations (depends_on, implements, blocks, authored_by,
    superseded_by) up to `depth` hops and list the documents that mention it. Relations are
    bi-temporal: pass as_of to see the graph as it was at a past time; superseded facts are kept."""
    store = state(ctx).store
    if entityId is not None:
        return _traversal(store, entityId, depth, as_of)
    return _search(store, query, type, limit)


def _chat(ctx: Context) -> Any:
    from dokoro_store.services.extraction.ollama import DEFAULT_OLLAMA_URL, OllamaChat

    settings = state(ctx).settings
    return OllamaChat(
        base_url=settings.ollama_url or DEFAULT_OLLAMA_URL,
        model=settings.ollama_inference_model,
        chat_timeout_s=settings.ollama_chat_timeout_ms / 1000,
        health_timeout_s=settings.ollama_timeout_ms / 1000,
    )


def dokoro_entity_extract_deep(
    ctx: Context,
    docId: Annotated[
        str, Field(min_length=1, description="Document id the entities are linked to (need not exist as a document).")
    ],
    text: Annotated[
        str | None, Field(description="Text to extract from. Default: the stored content of document docId.")
    ] = None,
) -> Annotated[CallToolResult, DeepExtractOut]:
    """Extract entities and relations from a document with the local Ollama model (OLLAMA_INFERENCE_MODEL,
    default llama3.2) merged with the regex extractor, and save them to the knowledge graph. Needs Ollama
    running with the model pulled; if the model times out or answers badly, the regex result is saved."""
    store = state(ctx).store
    deep = store.graph.extract_deep(docId, text, _chat(ctx))
    extraction, persisted = deep.extraction, deep.persisted
    names = {e.key: e.name for e in extraction.entities}
    relations = [r for r in extraction.relations if r.type != "mentions"]
    lines = [
        f"## Deep Entity Extraction: {persisted.doc_id}",
        f"Source: {extraction.source}",
        f"Model: {extraction.model}",
        f"Entities: {len(extraction.entities)} | Relations: {len(relations)}",
    ]
    if extraction.warning:
        lines.append(f"Warning: the model's answer was not used ({extraction.warning}); regex result saved.")
    lines += ["", "### Entities"]
    for e in extraction.entities:
        context = f" - {e.context}" if e.context else ""
        lines.append(f"**{e.name}** [{e.type}] ({round(e.confidence * 100)}%){context}")
    lines += ["", "### Relations"]
    if not relations:
        lines.append("No relations found.")
    for r in relations:
        source, target = names.get(r.source, r.source[1]), names.get(r.target, r.target[1])
        lines.append(f"{source} --[{r.type}]--> {target} ({round(r.confidence * 100)}%)")
    lines += ["", "_persisted to knowledge graph_"]
    data = DeepExtractOut(
        doc_id=persisted.doc_id,
        source=extraction.source,
        model=extraction.model,
        warning=extraction.warning,
        entities=[
            ExtractedEntityOut(
                type=e.type,
                name=e.name,
                canonical_name=e.canonical,
                confidence=e.confidence,
                context=e.context,
                id=persisted.entity_ids.get(e.key),
            )
            for e in extraction.entities
        ],
        relations=[
            ExtractedRelationOut(
                source=names.get(r.source, r.source[1]),
                target=names.get(r.target, r.target[1]),
                type=r.type,
                confidence=r.confidence,
                evidence=r.evidence,
            )
            for r in relations
        ],
        links=persisted.links,
        relations_created=persisted.relations_created,
        relations_closed=persisted.relations_closed,
    )
    return result("\n".join(lines), data)


TOOLS = [
    ToolSpec(dokoro_entity_graph, "Explore the entity graph", read_only=True, idempotent=True),
    ToolSpec(dokoro_entity_extract_deep, "Deep entity extraction (Ollama)"),
]
