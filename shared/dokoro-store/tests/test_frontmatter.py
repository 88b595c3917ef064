"""YAML front matter of workspace markdown."""

from __future__ import annotations

from datetime import UTC

from dokoro_store.walls import frontmatter


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
    from dokoro_store.walls import frontmatter as fm

    data = {"task": "x", "tags": {"area: auth": "yes", "#hash": ["a"], "plain_key": 1}}
    parsed, body = fm.parse(fm.render(data) + "body")
    assert parsed == data and body == "body"


def test_characters_yaml_cannot_hold_are_escaped_in_keys_and_values_and_round_trip():
    """DEL, the C1 controls and the Unicode line separators are not YAML, even quoted (JSON leaves
    them as they are): written escaped, read back as they were."""
    from dokoro_store.walls import frontmatter as fm

    data = {"tags": {"\x7f": None, "a\x85\x9fb": "c\x7fd\u2028", "é": "ü"}, "title": "\x80 and \x7f"}
    parsed, body = fm.parse(fm.render(data) + "body")
    assert parsed == data and body == "body"


def test_a_hand_written_character_yaml_cannot_hold_is_a_front_matter_error():
    import pytest
    from dokoro_store.walls import frontmatter as fm

    with pytest.raises(fm.FrontMatterError, match="not valid YAML"):
        fm.load("title: a\x7fb")
    assert fm.parse("---\ntitle: a\x7fb\n---\nbody") == ({}, "body")


# An alias bomb: nine levels of nine aliases each, a few hundred bytes that expand to 9**9 strings
# once walked (``str()`` of the loaded value, a title read from it).
ALIAS_BOMB = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{chr(ord('b') + i)}: &{chr(ord('b') + i)} [{','.join(['*' + chr(ord('a') + i)] * 9)}]\n" for i in range(8)
)


def test_anchors_and_aliases_are_refused_with_what_to_fix():
    import pytest

    with pytest.raises(frontmatter.FrontMatterError, match="anchor or alias"):
        frontmatter.load(ALIAS_BOMB)
    with pytest.raises(frontmatter.FrontMatterError, match="anchor or alias"):
        frontmatter.load("base: &base {a: 1}\nother:\n  <<: *base\n")
    # The lenient reader: an empty map, the body kept (an issue rendering's title read from it is None).
    assert frontmatter.parse(f"---\ntitle: *i\n{ALIAS_BOMB}---\nbody\n") == ({}, "body\n")


def test_nesting_and_length_are_bounded():
    import pytest

    deep = "x: " + "[" * (frontmatter.MAX_DEPTH + 1) + "]" * (frontmatter.MAX_DEPTH + 1)
    with pytest.raises(frontmatter.FrontMatterError, match="nests deeper"):
        frontmatter.load(deep)
    assert frontmatter.load("x: " + "[" * 10 + "1" + "]" * 10) == {"x": [[[[[[[[[[1]]]]]]]]]]}
    with pytest.raises(frontmatter.FrontMatterError, match="characters long"):
        frontmatter.load("x: " + "a" * frontmatter.MAX_CHARS)


def test_python_tags_are_not_constructed():
    import pytest

    with pytest.raises(frontmatter.FrontMatterError, match="not valid YAML"):
        frontmatter.load("x: !!python/object/apply:os.system ['true']\n")


def test_an_issue_rendering_with_an_alias_bomb_reads_as_a_broken_front_matter():
    from dokoro_store.procedural.tracking.markdown import parse_item

    parsed = parse_item(f"---\nissue_id: ISS-1\ntitle: *i\n{ALIAS_BOMB}---\n# Title\n")

    assert parsed.front_ok is False
    assert parsed.front["title"] is None


def test_the_plain_layout_writes_plain_words_and_one_line_lists_and_leaves_out_empty_keys():
    from datetime import datetime

    data = {
        "id": "mem_1",
        "entities": ["auth/session.ts", "ui: login", "yes"],
        "none": [],
        "created": "2026-11-30T16:00:00Z",
        "agent": None,
        "source": 'a "quoted" # note',
        "word": "No",
    }
    text = frontmatter.render(data, plain=True)

    assert text == (
        "---\nid: mem_1\n"
        'entities: [auth/session.ts, "ui: login", "yes"]\n'
        "none: []\n"
        "created: 2026-11-30T16:00:00Z\n"
        'source: "a \\"quoted\\" # note"\n'
        'word: "No"\n---\n'
    )
    parsed, _ = frontmatter.parse(text)
    # Every string reads back as itself; the timestamp as the same moment.
    assert parsed == {
        "id": "mem_1",
        "entities": ["auth/session.ts", "ui: login", "yes"],
        "none": [],
        "created": datetime(2026, 11, 30, 16, tzinfo=UTC),
        "source": 'a "quoted" # note',
        "word": "No",
    }


def test_the_plain_layout_escapes_what_yaml_cannot_hold_like_the_quoted_one():
    data = {"entities": ["a\x85b", "ok"], "source": "x\u2028y", "agent": "al\x7fice"}
    parsed, _ = frontmatter.parse(frontmatter.render(data, plain=True))
    assert parsed == data


def test_a_memory_file_holding_characters_yaml_cannot_hold_reads_back_as_its_row(any_store, root):
    """Memory files are written by the one front-matter writer: a value with DEL, a C1 control or
    a Unicode line separator is escaped, and the file reads back (it used to be left unreadable)."""
    from dokoro_store.semantic.memories.files.markdown import parse_memory_file

    memory = any_store.memories.remember(
        type="fact", title="Odd characters", body="kept", entities=["a\x85b"], source="x\u2028y\x7fz"
    ).memory
    (path,) = sorted((root / "memories").glob(f"*/{memory.id}*.md"))
    fields = parse_memory_file(path.read_text(encoding="utf-8"))
    assert (fields.id, fields.entities, fields.source) == (memory.id, tuple(memory.entities), memory.source)
    assert fields.source == "x\u2028y\x7fz"


def test_the_quoted_layout_writes_plain_keys_and_double_quoted_strings():
    text = frontmatter.render({"agent_id": "agent-1", "last_active": "2026-06-10T22:23:15Z", "task": "Getting started"})

    assert text == '---\nagent_id: "agent-1"\nlast_active: "2026-06-10T22:23:15Z"\ntask: "Getting started"\n---\n'


def test_what_the_hand_written_emitter_lost_reads_back_now():
    """An empty map (it read back as null), a float past 1e16 (as a string), a long value (one
    line however long), a character beyond the BMP, a lone surrogate (escaped by PyYAML's own
    emitter when libyaml refuses it)."""
    data = {
        "empty": {},
        "nested": {"empty": {}},
        "huge": 1e20,
        "long": "word " * 400,
        "emoji": "🚀 launch: v2",
        "lone": "half \ud800 an emoji",
    }
    text = frontmatter.render(data)

    assert len(text.splitlines()) == len(data) + 3  # --- , a line per key (and "nested"'s one), ---
    assert frontmatter.parse(text + "body")[0] == data
    assert frontmatter.parse(frontmatter.render(data, plain=True) + "body")[0] == data
