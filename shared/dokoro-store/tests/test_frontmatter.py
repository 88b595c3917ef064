"""YAML front matter of workspace markdown."""

from __future__ import annotations

from dokoro_store import frontmatter


def test_render_then_parse_round_trips_every_kind_of_value():
    data = {
        "title": 'Session: fix "login": part 2 # not a comment',
        "unicode": "日本語 ✅",
        "multiline": "line one\nline two",
        "count": 3,
        "ratio": 1.5,
        "done": True,
        "nothing": None,
        "empty": [],
        "tags": ["auth", "ui: login"],
        "nested": {"type": "session", "scope": ["coding", "testing"], "deeper": {"a": 1}},
        "looks_like_a_date": "2026-06-10T22:23:15Z",
        "looks_like_a_bool": "yes",
    }
    text = frontmatter.render(data) + "# Body\n\ntext\n"

    parsed, body = frontmatter.parse(text)

    assert parsed == data
    assert body == "# Body\n\ntext\n"


def test_split_separates_front_matter_and_body():
    raw, body = frontmatter.split('---\na: "1"\n---\n# Title\n')

    assert raw == 'a: "1"'
    assert body == "# Title\n"


def test_text_without_front_matter_is_all_body():
    assert frontmatter.split("# Title\n---\n") == (None, "# Title\n---\n")
    assert frontmatter.parse("# Title\n") == ({}, "# Title\n")


def test_invalid_yaml_gives_an_empty_dict_and_keeps_the_body():
    assert frontmatter.parse("---\na: [unclosed\n---\nbody\n") == ({}, "body\n")


def test_front_matter_that_is_not_a_mapping_gives_an_empty_dict():
    assert frontmatter.parse("---\n- a\n- b\n---\nbody\n") == ({}, "body\n")


def test_windows_line_endings_are_understood():
    parsed, body = frontmatter.parse('---\r\nagent_id: "a-1"\r\n---\r\nbody\r\n')

    assert parsed == {"agent_id": "a-1"}
    assert body == "body\r\n"


def test_keys_that_are_not_plain_identifiers_are_quoted_and_round_trip():
    from dokoro_store import frontmatter as fm

    data = {"task": "x", "tags": {"area: auth": "yes", "#hash": ["a"], "plain_key": 1}}
    parsed, body = fm.parse(fm.render(data) + "body")
    assert parsed == data and body == "body"
