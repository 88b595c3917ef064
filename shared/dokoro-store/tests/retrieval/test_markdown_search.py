"""Grep-style markdown search and recent files (search_dokoros, list_recent_dokoros)."""

from __future__ import annotations

import os
from datetime import UTC, datetime

import pytest
from dokoro_store.errors import InvalidArgumentError
from dokoro_store.semantic.documents.markdown_search import recent_markdown, search_markdown, tags_match


def write(root, relative, text, when: datetime) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    stamp = when.timestamp()
    os.utime(path, (stamp, stamp))


@pytest.fixture
def folder(tmp_path):
    root = tmp_path / "dokoro"
    write(
        root,
        "decisions/a.md",
        "---\ntitle: Use JWT\ntags:\n  type: decision\n  scope: [auth, api]\n---\nJWT body",
        datetime(2026, 6, 1, tzinfo=UTC),
    )
    write(
        root,
        "daily/b.md",
        "---\ntags: [standup, auth]\n---\n# Standup\nTalked about AUTH.",
        datetime(2026, 6, 9, tzinfo=UTC),
    )
    write(root, "insights/c.md", "---\ntitle: broken: yaml: here\n---\nno tags", datetime(2026, 6, 10, tzinfo=UTC))
    write(root, ".mcp/hidden.md", "auth", datetime(2026, 6, 10, tzinfo=UTC))
    return root


def test_search_matches_title_or_body_case_insensitively_newest_first(folder):
    hits = search_markdown(folder, "auth")

    assert [h.file for h in hits] == ["daily/b.md"]
    assert [h.file for h in search_markdown(folder, "jwt")] == ["decisions/a.md"]
    assert [h.file for h in search_markdown(folder)] == ["insights/c.md", "daily/b.md", "decisions/a.md"]


def test_search_within_one_folder_and_with_tag_filters(folder):
    assert [h.file for h in search_markdown(folder, "", "decisions")] == ["decisions/a.md"]
    assert [h.file for h in search_markdown(folder, tags={"scope": "auth"})] == ["decisions/a.md"]
    assert [h.file for h in search_markdown(folder, tags={"tags": ["auth"]})] == ["daily/b.md"]
    assert search_markdown(folder, tags={"type": "plan"}) == []


def test_broken_front_matter_is_fixed_up_before_giving_up(folder):
    (hit,) = search_markdown(folder, "no tags")

    assert hit.title == "broken: yaml: here"


def test_tag_matching_rules():
    assert tags_match({"type": "decision"}, {"type": "Decision"})
    assert tags_match({"scope": ["a", "b"]}, {"scope": ["b", "c"]})
    assert not tags_match({"scope": ["a"]}, {"other": "a"})
    assert not tags_match("not tags", {"x": 1})


def test_recent_lists_files_changed_within_the_window(folder):
    now = datetime(2026, 6, 10, 12, tzinfo=UTC)

    assert [h.file for h in recent_markdown(folder, now, days=2)] == ["insights/c.md", "daily/b.md"]
    assert recent_markdown(folder, now, days=7, type_="features") == []


def test_bad_arguments_are_refused(folder):
    with pytest.raises(InvalidArgumentError, match="type must be one of"):
        search_markdown(folder, type_="posts")
    with pytest.raises(InvalidArgumentError, match="days must be between"):
        recent_markdown(folder, datetime.now(UTC), days=0)
