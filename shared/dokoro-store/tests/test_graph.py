"""The bi-temporal entity graph, on both backends: entities, functional close/open, time travel,
traversal, search and persisting extractions."""

from __future__ import annotations

from datetime import timedelta

import pytest
from dokoro_store import InvalidArgumentError, NotFoundError, Store
from dokoro_store.models import DocEntity, Entity, EntityContentHash, EntityRelation
from dokoro_store.semantic.graph.extraction import extract_regex
from dokoro_store.semantic.graph.service import DEFAULT_FUNCTIONAL_RELATION_TYPES
from sqlalchemy.exc import IntegrityError
from sqlmodel import select

DAY = timedelta(days=1)


def _trio(store, *names):
    return [store.graph.upsert_entity("component", name).id for name in names]


def _visible(store, entity_id, **kwargs):
    walk = store.graph.traverse(entity_id, **kwargs)
    return {(r.source, r.type, r.target) for r in walk.relations}


def _rows(store, model):
    with store.db.read() as session:
        return list(session.exec(select(model)))


# ---------------------------------------------------------------- entities


def test_an_entity_is_unique_by_type_and_canonical_name(any_store, clock):
    first = any_store.graph.upsert_entity("file", "./auth/Session.ts")
    clock.advance(DAY)
    again = any_store.graph.upsert_entity("file", "auth/session.ts", description="the session module")
    other_type = any_store.graph.upsert_entity("concept", "auth/session.ts")

    assert again.id == first.id
    assert again.canonical_name == "auth/session.ts"
    assert again.name == "./auth/Session.ts"  # the first surface form stays
    assert again.description == "the session module"
    assert again.updated_at == clock.now()
    assert again.created_at == clock.now() - DAY
    assert other_type.id != first.id


def test_an_entity_of_an_unknown_type_or_without_a_name_is_refused(any_store):
    with pytest.raises(InvalidArgumentError, match="person, project, file"):
        any_store.graph.upsert_entity("planet", "mars")
    with pytest.raises(InvalidArgumentError, match="non-empty name"):
        any_store.graph.upsert_entity("person", " @ ")


# ---------------------------------------------------------------- functional close/open


def test_the_default_functional_relation_type_is_superseded_by():
    assert frozenset({"superseded_by"}) == DEFAULT_FUNCTIONAL_RELATION_TYPES


def test_a_new_target_of_a_functional_relation_closes_the_open_fact(any_store, clock):
    legacy, tokens, cookies = _trio(any_store, "LegacyAuth", "TokenAuth", "CookieAuth")
    t1 = clock.now()
    first = any_store.graph.upsert_relation(legacy, tokens, "superseded_by")
    clock.advance(DAY)
    t2 = clock.now()
    second = any_store.graph.upsert_relation(legacy, cookies, "superseded_by")

    assert first.created and second.created
    assert second.closed == [first.relation.id]
    history = {r.target: r for r in any_store.graph.history(legacy)}
    assert set(history) == {"TokenAuth", "CookieAuth"}  # nothing deleted
    assert (history["TokenAuth"].valid_from, history["TokenAuth"].valid_to) == (t1, t2)
    assert history["TokenAuth"].closed_at == t2
    assert (history["CookieAuth"].valid_from, history["CookieAuth"].valid_to) == (t2, None)
    assert _visible(any_store, legacy) == {("LegacyAuth", "superseded_by", "CookieAuth")}


def test_many_valued_relations_accumulate(any_store, clock):
    app, redis, kafka = _trio(any_store, "AppServer", "RedisClient", "KafkaClient")
    any_store.graph.upsert_relation(app, redis, "depends_on")
    clock.advance(DAY)
    written = any_store.graph.upsert_relation(app, kafka, "depends_on")

    assert written.closed == []
    assert _visible(any_store, app, depth=1) == {
        ("AppServer", "depends_on", "RedisClient"),
        ("AppServer", "depends_on", "KafkaClient"),
    }


def test_recording_an_open_fact_again_changes_nothing(any_store, clock):
    app, redis, _ = _trio(any_store, "AppServer", "RedisClient", "Unused")
    first = any_store.graph.upsert_relation(app, redis, "depends_on")
    clock.advance(DAY)
    again = any_store.graph.upsert_relation(app, redis, "depends_on", weight=0.5)

    assert not again.created
    assert again.relation.id == first.relation.id
    assert len(any_store.graph.history(app)) == 1


def test_a_fact_can_return_after_it_was_superseded(any_store, clock):
    a, b, c = _trio(any_store, "ServiceA", "ServiceB", "ServiceC")
    any_store.graph.upsert_relation(a, b, "superseded_by")
    clock.advance(DAY)
    any_store.graph.upsert_relation(a, c, "superseded_by")
    clock.advance(DAY)
    back = any_store.graph.upsert_relation(a, b, "superseded_by")

    assert back.created
    assert [(r.target, r.valid_to is None) for r in any_store.graph.history(a)] == [
        ("ServiceB", False),
        ("ServiceC", False),
        ("ServiceB", True),
    ]


def test_the_functional_types_are_an_option_of_the_store(root, clock, database_url):
    with Store.open(root, database_url=database_url, clock=clock, functional_relation_types={"owned_by"}) as store:
        a, b, c = _trio(store, "ModuleA", "TeamB", "TeamC")
        store.graph.upsert_relation(a, b, "owned_by")
        store.graph.upsert_relation(a, b, "superseded_by")
        clock.advance(DAY)
        store.graph.upsert_relation(a, c, "owned_by")
        store.graph.upsert_relation(a, c, "superseded_by")

        assert _visible(store, a, depth=1) == {
            ("ModuleA", "owned_by", "TeamC"),
            ("ModuleA", "superseded_by", "TeamB"),  # no longer functional: accumulates
            ("ModuleA", "superseded_by", "TeamC"),
        }


def test_the_database_allows_one_open_row_per_fact(any_store):
    a, b, _ = _trio(any_store, "ServiceA", "ServiceB", "Unused")
    now = any_store.clock.now()

    def row(valid_to):
        return EntityRelation(
            source_id=a, target_id=b, relation_type="blocks", valid_from=now, valid_to=valid_to, recorded_at=now
        )

    with any_store.db.write() as session:  # closed duplicates are history, allowed
        session.add_all([row(now), row(now), row(None)])
    with pytest.raises(IntegrityError), any_store.db.write() as session:
        session.add(row(None))


def test_a_relation_needs_existing_distinct_entities_and_a_snake_case_type(any_store):
    a, b, _ = _trio(any_store, "ServiceA", "ServiceB", "Unused")
    with pytest.raises(NotFoundError, match="No entity with ID 999"):
        any_store.graph.upsert_relation(a, 999, "depends_on")
    with pytest.raises(InvalidArgumentError, match="two different entities"):
        any_store.graph.upsert_relation(a, a, "depends_on")
    with pytest.raises(InvalidArgumentError, match="lower_snake_case"):
        any_store.graph.upsert_relation(a, b, "Depends On")
    with pytest.raises(InvalidArgumentError, match="ISO-8601"):
        any_store.graph.upsert_relation(a, b, "depends_on", valid_from="last tuesday")


# ---------------------------------------------------------------- time travel


def test_as_of_shows_a_closed_fact_only_inside_its_window(any_store, clock):
    legacy, tokens, cookies = _trio(any_store, "LegacyAuth", "TokenAuth", "CookieAuth")
    t1 = clock.now()
    any_store.graph.upsert_relation(legacy, tokens, "superseded_by")
    clock.advance(DAY)
    t2 = clock.now()
    any_store.graph.upsert_relation(legacy, cookies, "superseded_by")
    clock.advance(DAY)

    old = ("LegacyAuth", "superseded_by", "TokenAuth")
    new = ("LegacyAuth", "superseded_by", "CookieAuth")
    assert _visible(any_store, legacy, as_of=t1 - timedelta(seconds=1)) == set()  # before the window
    assert _visible(any_store, legacy, as_of=t1) == {old}  # the window includes its start
    assert _visible(any_store, legacy, as_of=t1 + timedelta(hours=12)) == {old}
    assert _visible(any_store, legacy, as_of=t2) == {new}  # ... and excludes its end
    assert _visible(any_store, legacy) == {new}  # default: now
    assert _visible(any_store, legacy, as_of="2000-01-01T00:00:00Z") == set()


def test_a_future_dated_fact_is_hidden_until_its_time(any_store, clock):
    a, b, _ = _trio(any_store, "ServiceA", "ServiceB", "Unused")
    starts = clock.now() + DAY
    any_store.graph.upsert_relation(a, b, "depends_on", valid_from=starts)

    assert _visible(any_store, a) == set()
    assert _visible(any_store, a, as_of=starts) == {("ServiceA", "depends_on", "ServiceB")}
    clock.advance(2 * DAY)
    assert _visible(any_store, a) == {("ServiceA", "depends_on", "ServiceB")}


def test_a_future_dated_functional_fact_keeps_the_current_one_until_it_starts(any_store, clock):
    a, b, c = _trio(any_store, "ServiceA", "ServiceB", "ServiceC")
    any_store.graph.upsert_relation(a, b, "superseded_by")
    switch = clock.now() + DAY
    any_store.graph.upsert_relation(a, c, "superseded_by", valid_from=switch)

    assert _visible(any_store, a) == {("ServiceA", "superseded_by", "ServiceB")}
    assert _visible(any_store, a, as_of=switch) == {("ServiceA", "superseded_by", "ServiceC")}


def test_a_fact_learned_late_keeps_its_real_time_and_when_it_was_learned(any_store, clock):
    a, b, _ = _trio(any_store, "ServiceA", "ServiceB", "Unused")
    happened = clock.now() - 10 * DAY
    written = any_store.graph.upsert_relation(a, b, "blocks", valid_from="2026-05-31T22:23:15Z")

    assert written.relation.valid_from == happened
    assert written.relation.recorded_at == clock.now()
    assert _visible(any_store, a, as_of=happened + DAY) == {("ServiceA", "blocks", "ServiceB")}
    assert _visible(any_store, a, as_of=happened - DAY) == set()


def test_a_late_functional_fact_older_than_the_open_one_is_recorded_as_already_ended(any_store, clock):
    a, b, c = _trio(any_store, "ServiceA", "ServiceB", "ServiceC")
    any_store.graph.upsert_relation(a, c, "superseded_by")  # open since now
    earlier = clock.now() - 5 * DAY
    late = any_store.graph.upsert_relation(a, b, "superseded_by", valid_from=earlier)

    assert late.closed == []
    assert (late.relation.valid_from, late.relation.valid_to) == (earlier, clock.now())
    assert late.relation.closed_at == clock.now()
    assert _visible(any_store, a) == {("ServiceA", "superseded_by", "ServiceC")}
    assert _visible(any_store, a, as_of=earlier + DAY) == {("ServiceA", "superseded_by", "ServiceB")}


# ---------------------------------------------------------------- traversal


def test_traversal_walks_both_directions_and_includes_edges_touching_the_last_hop(any_store):
    a, b, c = _trio(any_store, "NodeA", "NodeB", "NodeC")
    (d,) = _trio(any_store, "NodeD")
    any_store.graph.upsert_relation(b, a, "depends_on")  # reached backwards from A
    any_store.graph.upsert_relation(b, c, "depends_on")
    any_store.graph.upsert_relation(c, d, "depends_on")

    walk = any_store.graph.traverse(a, depth=1)
    assert walk.visited == 2  # A and B
    assert {(r.source, r.target) for r in walk.relations} == {("NodeB", "NodeA"), ("NodeB", "NodeC")}
    deeper = any_store.graph.traverse(a, depth=2)
    # Nearest the root first: B-A touches A (0 hops), B-C touches B (1), C-D touches C (2).
    assert [(r.source, r.target, r.hops) for r in deeper.relations] == [
        ("NodeB", "NodeA", 0),
        ("NodeB", "NodeC", 1),
        ("NodeC", "NodeD", 2),
    ]


def test_traversal_of_a_cycle_terminates(any_store):
    a, b, c = _trio(any_store, "NodeA", "NodeB", "NodeC")
    any_store.graph.upsert_relation(a, b, "depends_on")
    any_store.graph.upsert_relation(b, c, "depends_on")
    any_store.graph.upsert_relation(c, a, "depends_on")
    any_store.graph.upsert_relation(a, c, "blocks")

    walk = any_store.graph.traverse(a, depth=5)
    assert walk.visited == 3
    assert len(walk.relations) == 4


def test_traversal_only_walks_edges_valid_at_the_time(any_store, clock):
    a, b, c = _trio(any_store, "NodeA", "NodeB", "NodeC")
    (d,) = _trio(any_store, "NodeD")
    any_store.graph.upsert_relation(a, b, "superseded_by")
    any_store.graph.upsert_relation(b, c, "depends_on")
    clock.advance(DAY)
    any_store.graph.upsert_relation(a, d, "superseded_by")  # closes A→B: C is no longer reachable

    assert any_store.graph.traverse(a, depth=3).visited == 2
    assert any_store.graph.traverse(a, depth=3, as_of=clock.now() - DAY).visited == 3


def test_traversal_depth_is_one_to_five_and_the_entity_must_exist(any_store):
    (a,) = _trio(any_store, "NodeA")
    with pytest.raises(InvalidArgumentError, match="between 1 and 5"):
        any_store.graph.traverse(a, depth=6)
    with pytest.raises(NotFoundError, match="dokoro_entity_graph"):
        any_store.graph.traverse(12345)


# ---------------------------------------------------------------- search


def test_search_matches_names_case_insensitively_by_type_most_linked_first(any_store):
    any_store.graph.extract_text("doc-1", "SessionStore and SessionCache use redis.")
    any_store.graph.extract_text("doc-2", "SessionCache is fast.")
    any_store.graph.upsert_entity("concept", "50%_off")

    found = any_store.graph.search("SESSION")
    assert [(h.name, h.doc_count) for h in found.hits] == [("SessionCache", 2), ("SessionStore", 1)]
    assert [h.name for h in any_store.graph.search(entity_type="service").hits] == ["redis"]
    assert [h.name for h in any_store.graph.search("%").hits] == ["50%_off"]  # taken literally
    assert [h.name for h in any_store.graph.search("session", limit=1).hits] == ["SessionCache"]
    assert found.stats.entities == 4


def test_search_refuses_an_unknown_type_and_a_bad_limit(any_store):
    with pytest.raises(InvalidArgumentError, match="type must be one of"):
        any_store.graph.search(entity_type="planet")
    with pytest.raises(InvalidArgumentError, match="between 1 and 100"):
        any_store.graph.search(limit=0)


# ---------------------------------------------------------------- persisting extractions


def test_persisting_links_entities_to_a_document_that_has_no_document_row(any_store):
    persisted = any_store.graph.extract_text("not-a-doc", "src/app.ts depends on redis, says @alice.").persisted

    assert persisted.relations_created == 1
    links = {(link.entity_id, link.relation_type) for link in _rows(any_store, DocEntity)}
    app = persisted.entity_ids[("file", "src/app.ts")]
    redis = persisted.entity_ids[("service", "redis")]
    assert (app, "mentions") in links
    assert (app, "depends_on") in links  # the source's link carries the relation type
    assert (redis, "mentions") in links
    docs = any_store.graph.traverse(app).docs
    assert {(d.doc_id, d.relation_type) for d in docs} == {("not-a-doc", "mentions"), ("not-a-doc", "depends_on")}


def test_re_extracting_a_document_replaces_its_links_and_keeps_relations(any_store, clock):
    any_store.graph.extract_text("doc-1", "src/app.ts depends on redis.")
    clock.advance(DAY)
    any_store.graph.extract_text("doc-1", "src/app.ts depends on kafka.")

    linked = {
        e.canonical_name for e in _rows(any_store, Entity) if e.id in {d.entity_id for d in _rows(any_store, DocEntity)}
    }
    assert linked == {"src/app.ts", "kafka"}
    app = any_store.graph.find_entity("file", "src/app.ts")
    assert _visible(any_store, app.id) == {("src/app.ts", "depends_on", "redis"), ("src/app.ts", "depends_on", "kafka")}


def test_a_failure_while_persisting_writes_nothing(any_store, monkeypatch):
    def boom(*_args, **_kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(any_store.graph.storage, "_record", boom)
    with pytest.raises(RuntimeError):
        any_store.graph.persist("doc-1", extract_regex("src/app.ts depends on redis."))

    assert _rows(any_store, Entity) == []
    assert _rows(any_store, DocEntity) == []


def test_indexing_skips_a_document_whose_text_did_not_change(any_store, clock):
    assert any_store.graph.index_document("doc-1", "src/app.ts uses redis.") is not None
    assert any_store.graph.index_document("doc-1", "src/app.ts uses redis.") is None
    assert any_store.graph.index_document("doc-1", "   ") is None
    changed = any_store.graph.index_document("doc-1", "src/app.ts uses kafka.")
    assert changed is not None
    assert changed.relations_created == 1


def test_indexing_a_batch_reads_and_writes_the_hashes_once_and_skips_what_did_not_change(any_store):
    docs = [("doc-1", "src/app.ts uses redis.", False), ("doc-2", "src/db.ts uses postgres.", False), ("e", " ", False)]
    first = any_store.graph.index_documents(docs)
    again = any_store.graph.index_documents([*docs[:1], ("doc-2", "src/db.ts uses mysql.", False)])
    forced = any_store.graph.index_documents([("doc-1", "src/app.ts uses redis.", True)])

    assert sorted(p.doc_id for p in first) == ["doc-1", "doc-2"]
    assert [p.doc_id for p in again] == ["doc-2"]  # doc-1 unchanged
    assert [p.doc_id for p in forced] == ["doc-1"]
    assert {r.doc_id for r in _rows(any_store, EntityContentHash)} == {"doc-1", "doc-2"}


SAMPLE = [
    ("t-1", "Caroline: I loved 'Becoming Nicole' by Amy Ellis Nutt, said @carol."),
    ("t-2", "Melanie: Thanks, Caroline! We both helped with the painting."),
    ("t-3", "src/app.ts depends on redis; src/db.ts uses postgres."),
    ("t-4", "ok, see you soon"),
    ("t-5", "The AuthService calls the SessionStore, see docs/auth.md."),
]


def _graph_of(store):
    names = {e.id: (e.type, e.canonical_name) for e in _rows(store, Entity)}
    links = {(d.doc_id, names[d.entity_id], d.relation_type) for d in _rows(store, DocEntity)}
    relations = {(names[r.source_id], r.relation_type, names[r.target_id]) for r in _rows(store, EntityRelation)}
    return set(names.values()), links, relations


def test_a_batch_writes_the_same_graph_as_each_document_alone(tmp_path, any_store):
    alone = Store.open(tmp_path / "alone")
    try:
        for doc_id, text in SAMPLE:
            alone.graph.extract_text(doc_id, text)
        any_store.graph.index_documents([(doc_id, text, False) for doc_id, text in SAMPLE])
        expected = _graph_of(alone)
    finally:
        alone.close()

    assert _graph_of(any_store) == expected
    assert {doc_id for doc_id, _e, _r in expected[1]} == {"t-1", "t-3", "t-5"}  # the others name no entity


def test_a_document_that_no_longer_names_an_entity_loses_its_links(any_store):
    any_store.graph.index_documents([("doc-1", "src/app.ts uses redis.", False), ("doc-2", "src/b.ts", False)])
    done = any_store.graph.index_documents([("doc-1", "nothing to see here", False), ("doc-2", "src/b.ts", False)])

    assert [(p.doc_id, p.links) for p in done] == [("doc-1", 0)]
    assert {d.doc_id for d in _rows(any_store, DocEntity)} == {"doc-2"}
    assert len(_rows(any_store, EntityRelation)) == 1  # history stays


def test_one_document_failing_in_a_batch_costs_only_itself(any_store, monkeypatch, caplog):
    persist_many = any_store.graph.storage.persist_many

    def picky(extractions, **kwargs):
        if any(doc_id == "bad" for doc_id, _ in extractions):
            raise RuntimeError("disk on fire")  # the batch's transaction rolls back as a whole
        return persist_many(extractions, **kwargs)

    # persist goes through persist_many: the batch fails, then each document on its own.
    monkeypatch.setattr(any_store.graph.storage, "persist_many", picky)
    done = any_store.graph.index_documents(
        [("bad", "src/a.ts uses redis.", False), ("good", "src/b.ts uses kafka.", False)]
    )

    assert [p.doc_id for p in done] == ["good"]
    assert {r.doc_id for r in _rows(any_store, EntityContentHash)} == {"good"}  # bad is tried again next time
    assert "entity extraction failed on bad" in caplog.text


def test_forgetting_a_document_drops_its_links_but_not_the_history(any_store):
    any_store.graph.index_document("doc-1", "src/app.ts uses redis.")

    assert any_store.graph.forget_document("doc-1") == 3
    assert _rows(any_store, DocEntity) == []
    assert len(_rows(any_store, EntityRelation)) == 1
    assert any_store.graph.index_document("doc-1", "src/app.ts uses redis.") is not None  # hash forgotten too


def test_entities_named_in_a_query_are_found_by_canonical_name(any_store):
    any_store.graph.extract_text("doc-1", "src/app.ts uses redis; see #caching.")

    named = {e.canonical_name for e in any_store.graph.entities_named_in("why does ./src/app.ts need Redis?")}
    assert named == {"src/app.ts", "redis"}
    assert any_store.graph.entities_named_in("nothing here") == []


def test_a_batch_of_documents_writes_the_graph_one_persist_after_another_would(any_store):
    texts = [
        ("doc-a", "src/a.ts uses redis."),
        ("doc-b", "src/a.ts uses redis; src/b.ts uses kafka."),
        ("doc-c", "src/c.ts uses redis."),
    ]
    done = any_store.graph.index_documents([(doc_id, text, False) for doc_id, text in texts])
    batch_relations = sorted(
        (r.source_id, r.target_id, r.relation_type, r.valid_to is None) for r in _rows(any_store, EntityRelation)
    )
    batch_links = sorted((link.doc_id, link.entity_id, link.relation_type) for link in _rows(any_store, DocEntity))

    assert [p.doc_id for p in done] == ["doc-a", "doc-b", "doc-c"]
    assert done[1].relations_created == 1  # a.ts → redis is already open from doc-a: only b.ts → kafka is new
    # The same documents again, one at a time, with new ids: the same links, no new relation.
    for doc_id, text in texts:
        any_store.graph.index_document(doc_id.replace("doc", "one"), text)
    relations = sorted(
        (r.source_id, r.target_id, r.relation_type, r.valid_to is None) for r in _rows(any_store, EntityRelation)
    )
    links = sorted(
        (link.doc_id.replace("one", "doc"), link.entity_id, link.relation_type)
        for link in _rows(any_store, DocEntity)
        if link.doc_id.startswith("one")
    )
    assert relations == batch_relations
    assert links == batch_links
    assert {p.entity_ids.keys() == set() for p in done} == {False}


def _spans(store, name):
    entity = store.graph.find_entity("file", name)
    return sorted(
        (r.target_id, r.valid_from, r.valid_to, r.recorded_at)
        for r in _rows(store, EntityRelation)
        if r.source_id == entity.id and r.relation_type != "mentions"
    )


def test_a_full_reindex_keeps_every_relation_time(any_store, clock):
    any_store.search.index_content("d1", "src/auth.ts depends on redis. src/auth.ts is replaced by src/login.ts.")
    any_store.graph.complete_pending()
    clock.advance(10 * DAY)
    any_store.search.index_content("d2", "src/auth.ts is replaced by src/session.ts.")
    any_store.graph.complete_pending()
    before = _spans(any_store, "src/auth.ts")
    assert len(before) == 3  # redis (open), login.ts (closed when session.ts came), session.ts (open)

    clock.advance(30 * DAY)
    any_store.docs.reindex(full=True)
    any_store.graph.complete_pending()
    assert _spans(any_store, "src/auth.ts") == before  # no start moved to the reindex, nothing reopened
    auth = any_store.graph.find_entity("file", "src/auth.ts")
    assert _visible(any_store, auth.id) >= {("src/auth.ts", "superseded_by", "src/session.ts")}
    assert ("src/auth.ts", "superseded_by", "src/login.ts") not in _visible(any_store, auth.id)


def test_a_superseded_fact_said_again_later_still_returns(any_store, clock):
    any_store.graph.extract_text("n1", "src/auth.ts is replaced by src/login.ts.")
    clock.advance(DAY)
    any_store.graph.extract_text("n2", "src/auth.ts is replaced by src/session.ts.")
    clock.advance(DAY)
    any_store.graph.extract_text("n3", "src/auth.ts is replaced by src/login.ts.")  # a new text, a new time
    auth = any_store.graph.find_entity("file", "src/auth.ts")
    assert ("src/auth.ts", "superseded_by", "src/login.ts") in _visible(any_store, auth.id)
    assert ("src/auth.ts", "superseded_by", "src/session.ts") not in _visible(any_store, auth.id)
