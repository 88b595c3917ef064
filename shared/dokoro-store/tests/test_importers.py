"""Moving in from the MCP memory server's knowledge graph and from folders of markdown notes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from dokoro_store import InvalidArgumentError, Store
from dokoro_store.moving.importers import apply_import_set, preview_of, read_knowledge_graph, read_notes_folder

SAMPLES = Path(__file__).parent / "samples"


def _relations(store: Store, entity_type: str, name: str) -> set[tuple[str, str]]:
    entity = store.graph.find_entity(entity_type, name)
    assert entity is not None and entity.id is not None, name
    return {(r.type, r.target) for r in store.graph.history(entity.id) if r.source_id == entity.id}


def test_the_mcp_memory_graph_becomes_documents_entities_and_relations(any_store: Store) -> None:
    items = read_knowledge_graph(SAMPLES / "mcp-memory" / "memory.jsonl")
    assert [n.title for n in items.notes] == ["John_Smith", "Anthropic", "AuthService"]
    assert any("line 7: not JSON" in s for s in items.skipped)
    assert any("relation from 'Nobody': no entity" in s for s in items.skipped)
    preview = preview_of(any_store, items)
    assert (preview.new, preview.unchanged, preview.relations) == (3, 0, 3)

    apply_import_set(any_store, items)

    assert _relations(any_store, "person", "John_Smith") >= {("works_at", "Anthropic"), ("maintains", "AuthService")}
    assert ("depends_on", "PostgreSQL") in _relations(any_store, "service", "AuthService")  # dependsOn → depends_on
    found = any_store.search.universal("who speaks Spanish", mode="keyword")
    assert found.results[0].doc_id == "kg-john-smith"
    anthropic = any_store.graph.find_entity("concept", "Anthropic")  # an organization: a concept here
    assert anthropic is not None
    assert "Type: organization" in any_store.docs.get("kg-anthropic").content


def test_importing_the_same_graph_twice_changes_nothing(any_store: Store) -> None:
    items = read_knowledge_graph(SAMPLES / "mcp-memory" / "memory.jsonl")
    apply_import_set(any_store, items)
    before = _relations(any_store, "person", "John_Smith")
    again = apply_import_set(any_store, read_knowledge_graph(SAMPLES / "mcp-memory" / "memory.jsonl"))
    assert (again.new, again.changed, again.unchanged) == (0, 0, 3)
    assert _relations(any_store, "person", "John_Smith") == before


def test_a_notes_folder_keeps_titles_tags_links_and_typed_relations(any_store: Store) -> None:
    items = read_notes_folder(SAMPLES / "notes")
    titles = {n.title: n for n in items.notes}
    assert set(titles) == {"Auth Service", "Login Flow", "Session Store", "Cache Plan", "broken"}
    assert titles["Auth Service"].entity_type == "service" and titles["Auth Service"].tags == ["auth", "security"]
    assert titles["Session Store"].tags == ["database", "sessions"]
    assert any("broken.md: front matter not readable" in s for s in items.skipped)
    assert str(titles["Login Flow"].written) == "2026-05-19 10:00:00+00:00"

    apply_import_set(any_store, items)

    auth = _relations(any_store, "service", "Auth Service")
    assert {("implements", "Login Flow"), ("depends_on", "Session Store")} <= auth
    assert ("links_to", "Cache Plan") in _relations(any_store, "concept", "Session Store")  # [[Projects/Cache Plan#..]]
    assert ("links_to", "Auth Service") in _relations(any_store, "concept", "Login Flow")
    hits = any_store.search.universal("Redis TTL sessions", mode="keyword").results
    assert hits[0].doc_id == "note-obsidian-session-store"
    login = any_store.graph.find_entity("concept", "Login Flow")
    assert login is not None and login.id is not None
    part_of = [r for r in any_store.graph.history(login.id) if r.type == "part_of"]
    assert part_of and part_of[0].model_dump(mode="json")["valid_from"] == "2026-05-19T10:00:00Z"


def test_a_notes_folder_is_read_behind_the_walls(tmp_path: Path, store: Store) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(SAMPLES / "notes" / "obsidian", vault)
    secret = tmp_path / "outside.md"
    secret.write_text("# Outside\nnot part of the vault\n", encoding="utf-8")
    (vault / "linked.md").symlink_to(secret)
    (vault / "huge.md").write_text("x" * (3 * 1024 * 1024), encoding="utf-8")
    items = read_notes_folder(vault)
    assert "Outside" not in {n.title for n in items.notes}
    assert any("huge.md: larger than" in s for s in items.skipped)
    with pytest.raises(InvalidArgumentError, match="no folder of notes"):
        read_notes_folder(tmp_path / "missing")
    with pytest.raises(InvalidArgumentError, match="no knowledge graph file"):
        read_knowledge_graph(tmp_path / "missing.jsonl")
