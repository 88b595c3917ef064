"""The regex extractor (reference §4.7): six entity types, overlap precedence, relation triggers."""

from __future__ import annotations

import pytest
from dokoro_store.semantic.graph.extraction import canonicalise, extract_regex
from dokoro_store.semantic.graph.extraction.regex import extract_entities, fenced_ranges


def _entities(text):
    return {(e.type, e.canonical): e for e in extract_entities(text)}


def _relations(text):
    return {
        (r.source[1], r.type, r.target[1]): r.confidence for r in extract_regex(text).relations if r.type != "mentions"
    }


# ---------------------------------------------------------------- entity types


def test_a_handle_is_a_person_without_its_at_sign():
    found = _entities("Reviewed by @alice-smith today.")
    person = found[("person", "alice-smith")]
    assert person.name == "@alice-smith"
    assert person.confidence == 0.85


def test_an_email_address_and_a_scoped_package_are_not_people():
    found = _entities("mail bob@example.com or install @types/node")
    assert not [key for key in found if key[0] == "person"]


def test_a_capitalised_name_after_by_from_or_with_is_a_person():
    found = _entities("Paired with Carol Jones, then a note from Dave.")
    assert found[("person", "carol jones")].confidence == 0.7
    assert ("person", "dave") in found


def test_a_path_with_a_directory_and_an_extension_is_a_file():
    found = _entities("Edit ./auth/session.ts and ../lib/db/pool.py, not session.ts alone.")
    assert found[("file", "auth/session.ts")].name == "./auth/session.ts"
    assert found[("file", "auth/session.ts")].confidence == 0.85
    assert ("file", "../lib/db/pool.py") in found
    assert not [key for key in found if key == ("file", "session.ts")]


def test_relative_import_paths_are_files():
    found = _entities("import x from './utils/helpers'; const y = require(\"../lib/thing\")")
    assert ("file", "utils/helpers") in found
    assert ("file", "../lib/thing") in found


def test_owner_slash_repo_is_a_project_unless_it_is_a_directory_or_a_file():
    found = _entities("Forked acme/widgets into src/widgets; see docs/guide and a/b.md, and/or later.")
    assert found[("project", "acme/widgets")].confidence == 0.7
    projects = {key[1] for key in found if key[0] == "project"}
    assert projects == {"acme/widgets"}


def test_gazetteer_words_and_url_hosts_are_services():
    found = _entities("Cache in Redis, queue on KAFKA, docs at https://docs.example.com/x.")
    assert found[("service", "redis")].confidence == 0.85
    assert found[("service", "kafka")].name == "KAFKA"
    assert found[("service", "docs.example.com")].confidence == 0.7


def test_pascal_case_names_are_components_except_builtins_and_services():
    found = _entities("SessionManager wraps a TypeError from JavaScript; GitHub hosts it. Plain Word stays.")
    assert found[("component", "sessionmanager")].confidence == 0.7
    components = {key[1] for key in found if key[0] == "component"}
    assert components == {"sessionmanager"}


def test_hashtags_and_words_after_about_are_concepts():
    found = _entities("Tagged #security. A note about caching, regarding the rollout, about it.")
    assert found[("concept", "security")].confidence == 0.85
    assert found[("concept", "caching")].confidence == 0.7
    assert ("concept", "rollout") in found
    assert ("concept", "it") not in found


def test_canonical_forms_strip_markers_and_lower_case():
    assert canonicalise("file", "./Src/App.TS") == "src/app.ts"
    assert canonicalise("person", "@Alice") == "alice"
    assert canonicalise("concept", "#Perf") == "perf"
    assert canonicalise("service", " Redis ") == "redis"


# ---------------------------------------------------------------- merge and dedup


def test_an_overlapping_file_beats_a_project_and_a_service():
    # "redis/client.ts" is also a project-like "redis/client" and holds the service word "redis".
    found = _entities("Look at redis/client.ts first.")
    assert set(found) == {("file", "redis/client.ts")}


def test_a_service_beats_a_component_and_a_person_on_the_same_span():
    found = _entities("Deployed with Redis.")  # person candidate "Redis" after "with", and a service
    assert set(found) == {("service", "redis")}


def test_at_equal_precedence_the_longer_span_wins():
    # "github" (gazetteer) and "github.com" (URL host) overlap: both services.
    found = _entities("Hosted at https://github.com today.")
    assert ("service", "github.com") in found
    assert ("service", "github") not in found


def test_repeated_entities_are_kept_once_with_the_best_confidence():
    text = "From Redis to redis: https://redis.example.org and REDIS again."
    entities = [e for e in extract_entities(text) if e.canonical == "redis"]
    assert len(entities) == 1
    assert entities[0].confidence == 0.85


def test_every_entity_has_a_context_snippet_of_forty_characters_each_side():
    text = "x" * 60 + " auth/session.ts " + "y" * 60
    (entity,) = extract_entities(text)
    assert entity.context == "x" * 39 + " auth/session.ts " + "y" * 39


def test_anything_inside_fenced_code_is_ignored():
    text = "Before.\n```ts\nimport a from './secret/path'\nRedis uses kafka\n```\nAfter: nginx.\n~~~\nmongo\n"
    assert fenced_ranges(text)[0][0] == text.index("```")
    found = _entities(text)
    assert set(found) == {("service", "nginx")}
    assert _relations(text) == {}


# ---------------------------------------------------------------- relations


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("SessionManager implements #oauth.", ("sessionmanager", "implements", "oauth")),
        ("SessionManager develops #oauth.", ("sessionmanager", "implements", "oauth")),
        ("src/api/app.ts depends on redis.", ("src/api/app.ts", "depends_on", "redis")),
        ("src/api/app.ts requires redis.", ("src/api/app.ts", "depends_on", "redis")),
        ("src/api/app.ts needs redis.", ("src/api/app.ts", "depends_on", "redis")),
        ("src/api/app.ts uses redis.", ("src/api/app.ts", "depends_on", "redis")),
        ("PaymentService blocks CheckoutFlow.", ("paymentservice", "blocks", "checkoutflow")),
        ("CheckoutFlow blocked by PaymentService.", ("paymentservice", "blocks", "checkoutflow")),
        ("src/auth/login.ts was written by @alice.", ("src/auth/login.ts", "authored_by", "alice")),
        ("src/auth/login.ts fixed by @bob.", ("src/auth/login.ts", "authored_by", "bob")),
        ("LegacyAuth was replaced by TokenAuth.", ("legacyauth", "superseded_by", "tokenauth")),
        ("LegacyAuth superseded by TokenAuth.", ("legacyauth", "superseded_by", "tokenauth")),
        ("LegacyAuth is deprecated in favor of TokenAuth.", ("legacyauth", "superseded_by", "tokenauth")),
        ("LegacyAuth renamed to TokenAuth.", ("legacyauth", "superseded_by", "tokenauth")),
    ],
)
def test_each_trigger_phrase_gives_its_relation(sentence, expected):
    assert _relations(sentence) == {expected: 0.85}


def test_built_by_is_authorship_and_built_alone_is_implementation():
    assert _relations("WidgetKit built by @carol.") == {("widgetkit", "authored_by", "carol"): 0.85}
    assert _relations("@carol built WidgetKit.") == {("carol", "implements", "widgetkit"): 0.85}


@pytest.mark.parametrize(
    "sentence",
    [
        "src/api/app.ts does not use redis, it requires kafka.",
        "src/api/app.ts no longer requires redis.",
        "src/api/app.ts doesn't need redis.",
        "src/api/app.ts never depends on redis.",
        "src/api/app.ts works without requiring redis.",
        "src/api/app.ts won't need redis.",
        "PaymentService isn’t blocked by CheckoutFlow.",
    ],
)
def test_a_negation_within_25_characters_before_the_trigger_cancels_it(sentence):
    assert [key for key in _relations(sentence) if key[2] == "redis" or key[0] == "checkoutflow"] == []


def test_a_negation_further_back_does_not_cancel_the_trigger():
    sentence = "No worries: the rollout finished; SessionManager in src/api/app.ts requires redis."
    assert ("src/api/app.ts", "depends_on", "redis") in _relations(sentence)


def test_a_missing_side_is_inferred_from_the_adjacent_term():
    assert _relations("auth/session.ts uses jwt-stateless-tokens.") == {
        ("auth/session.ts", "depends_on", "jwt-stateless-tokens"): 0.7
    }
    extraction = extract_regex("auth/session.ts uses jwt-stateless-tokens.")
    concept = extraction.entity(("concept", "jwt-stateless-tokens"))
    assert concept is not None
    assert concept.confidence == 0.6


def test_two_adjacent_terms_relate_at_a_lower_confidence():
    assert _relations("In auth/session.ts, jwt-stateless-tokens were replaced by session-cookies.") == {
        ("jwt-stateless-tokens", "superseded_by", "session-cookies"): 0.6
    }


def test_ordinary_words_are_not_inferred_as_entities():
    assert _relations("The job needs a fix. It uses caching.") == {}


def test_subject_and_object_stay_in_the_trigger_sentence():
    text = "We touched src/old/file.ts yesterday. Now it requires redis."
    assert _relations(text) == {}


def test_every_entity_is_linked_to_its_document_by_a_mentions_relation():
    extraction = extract_regex("@alice maintains src/app.ts with Redis.")
    mentions = {r.source for r in extraction.relations if r.type == "mentions"}
    assert mentions == {e.key for e in extraction.entities}
    assert {r.confidence for r in extraction.relations if r.type == "mentions"} == {0.5}


def test_a_repeated_entity_relates_at_each_of_its_occurrences():
    text = "WidgetKit was written by @carol. Later, GadgetKit was written by @carol too."
    assert _relations(text) == {
        ("widgetkit", "authored_by", "carol"): 0.85,
        ("gadgetkit", "authored_by", "carol"): 0.85,
    }
    assert [e.key for e in extract_regex(text).entities if e.type == "concept"] == []
