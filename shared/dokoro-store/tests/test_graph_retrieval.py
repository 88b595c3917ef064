"""The entity graph and retrieval, on both backends: indexing fills the graph (the indexing listener),
and hybrid search lifts documents linked to entities named in the query (the graph signal)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta

import pytest
from dokoro_store import Store
from dokoro_store.models import DocEntity
from dokoro_store.retrieval import RetrievalConfig
from dokoro_store.semantic.graph.extraction import extract_regex
from sqlalchemy import delete


@pytest.fixture
def indexed_store(root, clock, database_url) -> Iterator[Store]:
    """A store without an embedder: full text and the graph are all these tests need."""
    with Store.open(root, database_url=database_url, clock=clock, retrieval=RetrievalConfig(embedder="none")) as store:
        yield store


def test_indexing_a_document_extracts_its_entities_and_relations(indexed_store):
    indexed_store.docs.index_content("doc-1", "auth/session.ts uses jwt-stateless-tokens.", title="Auth notes")

    session_ts = indexed_store.graph.find_entity("file", "auth/session.ts")
    assert session_ts is not None
    walk = indexed_store.graph.traverse(session_ts.id)
    assert {(r.source, r.type, r.target) for r in walk.relations} == {
        ("auth/session.ts", "depends_on", "jwt-stateless-tokens")
    }
    assert {d.doc_id for d in walk.docs} == {"doc-1"}


def test_an_unchanged_document_is_not_extracted_again_and_a_changed_one_is(indexed_store, clock):
    indexed_store.docs.index_content("doc-1", "src/app.ts uses redis.")
    indexed_store.graph.forget_document("doc-1")  # links gone, content hash gone ...
    indexed_store.docs.index_content("doc-1", "src/app.ts uses redis.")  # ... unchanged: not re-indexed
    assert indexed_store.graph.search(entity_type="service").hits[0].doc_count == 0

    clock.advance(timedelta(days=1))
    indexed_store.docs.index_content("doc-1", "src/app.ts uses kafka.")
    kafka = indexed_store.graph.search("kafka").hits[0]
    assert kafka.doc_count == 1


def _ranking(store, query, **kwargs):
    return [hit.doc_id for hit in store.search.universal(query, limit=5, **kwargs).hits]


def test_the_graph_signal_lifts_a_document_linked_to_an_entity_named_in_the_query(indexed_store):
    # Full text prefers doc-a (the query's words, many times); doc-b says the words once, but the
    # graph links it to SessionManager, which the query names.
    indexed_store.docs.index_content("doc-a", "Timeout handling: a timeout, another timeout, and timeout retries.")
    indexed_store.docs.index_content("doc-b", "Notes on login state. One timeout seen.")
    indexed_store.graph.persist("doc-b", extract_regex("SessionManager owns the login state."))

    query = "SessionManager timeout"
    assert _ranking(indexed_store, query, graph=False) == ["doc-a", "doc-b"]
    found = indexed_store.search.universal(query, limit=5)
    assert [hit.doc_id for hit in found.hits] == ["doc-b", "doc-a"]
    lifted = found.hits[0]
    assert lifted.graph_rank == 0
    assert lifted.graph_entities == ("SessionManager",)
    assert "linked in the knowledge graph to SessionManager" in lifted.why
    assert found.hits[1].graph_rank is None
    assert "knowledge graph" not in found.hits[1].why


def test_the_graph_signal_lifts_only_documents_the_search_found(indexed_store):
    indexed_store.docs.index_content("doc-c", "Unrelated words entirely.")
    indexed_store.graph.persist("doc-c", extract_regex("PaymentGateway retries."))

    assert _ranking(indexed_store, "PaymentGateway") == []
    assert indexed_store.graph.search_signal("PaymentGateway", 5)[0].doc_id == "doc-c"


def test_pure_keyword_search_has_no_graph_signal(indexed_store):
    indexed_store.docs.index_content("doc-a", "Timeout handling: a timeout, another timeout, and timeout retries.")
    indexed_store.docs.index_content("doc-b", "Notes on login state. One timeout seen.")
    indexed_store.graph.persist("doc-b", extract_regex("SessionManager owns the login state."))

    assert _ranking(indexed_store, "SessionManager timeout", mode="keyword") == ["doc-a", "doc-b"]


def test_a_full_reindex_extracts_every_document_again(indexed_store):
    indexed_store.docs.index_content("doc-1", "src/app.ts uses redis.")
    indexed_store.graph.catch_up()  # the extraction behind the write, done before the raw delete below
    with indexed_store.db.write() as session:  # links lost, hash kept: only a forced extraction restores them
        session.execute(delete(DocEntity))

    indexed_store.graph.on_document_indexed(_Indexed("doc-1", "src/app.ts uses redis.", "changed"))
    assert indexed_store.graph.search("redis").hits[0].doc_count == 0
    indexed_store.graph.on_document_indexed(_Indexed("doc-1", "src/app.ts uses redis.", "full"))
    assert indexed_store.graph.search("redis").hits[0].doc_count == 1


@dataclass(frozen=True)
class _Indexed:
    doc_id: str
    content: str
    reason: str
