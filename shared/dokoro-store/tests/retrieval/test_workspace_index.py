"""Workspace markdown kept in step with the index without a daemon; the markdown import (§4.13)."""

from __future__ import annotations

import os

import pytest
from dokoro_store.semantic.documents import workspace as workspace_index
from dokoro_store.semantic.documents.markdown import describe_markdown, doc_id_for


def write(root, relative: str, text: str, mtime_ns: int | None = None) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if mtime_ns is not None:
        os.utime(path, ns=(mtime_ns, mtime_ns))


def found(store, query: str) -> list[str]:
    return [h.doc_id for h in store.search.universal(query, mode="keyword").hits]


def test_a_file_edited_by_hand_is_found_on_the_next_call(search_store, root):
    write(root, "decisions/adr-7.md", "# ADR 7\nWe store sessions in Redis.\n", mtime_ns=1_000_000_000)
    search_store.search.refresh()
    assert found(search_store, "redis") == ["adr-7"]

    write(root, "decisions/adr-7.md", "# ADR 7\nWe store sessions in Valkey now.\n", mtime_ns=2_000_000_000)
    refresh = search_store.search.refresh()

    assert refresh.reconcile is not None and refresh.reconcile.updated == 1
    assert found(search_store, "valkey") == ["adr-7"]
    assert found(search_store, "redis") == []
    hit = search_store.search.universal("where are sessions stored").hits[0]
    assert hit.doc_id == "adr-7" and hit.vector_score is not None  # re-embedded, not only re-worded


def test_an_untouched_file_costs_a_stat_not_a_read(search_store, root, monkeypatch):
    write(root, "insights/one.md", "an insight\n")
    search_store.search.refresh()
    reads = []
    monkeypatch.setattr(workspace_index, "content_hash", lambda text: reads.append(text) or "x")

    report = search_store.markdown.reconcile()

    assert (report.unchanged, report.changed) == (1, 0)
    assert reads == []


def test_a_touched_but_unchanged_file_is_hashed_and_not_saved_again(search_store, root):
    write(root, "research/r.md", "same text\n", mtime_ns=1_000_000_000)
    search_store.search.refresh()
    write(root, "research/r.md", "same text\n", mtime_ns=3_000_000_000)

    report = search_store.markdown.reconcile()

    assert (report.unchanged, report.changed) == (1, 0)


def test_a_deleted_file_leaves_the_index(search_store, root):
    write(root, "features/f.md", "# Dark mode\nA dark theme for the TUI.\n")
    search_store.search.refresh()

    (root / "features/f.md").unlink()
    report = search_store.markdown.reconcile()

    assert report.removed == 1
    assert found(search_store, "theme") == []


def test_a_moved_file_keeps_its_document(search_store, root):
    write(root, "daily/2026-06-01-10h00-monday-session-x.md", "# Session x\nworked on caching\n")
    search_store.search.refresh()

    (root / "archive/daily/2026-W23").mkdir(parents=True)
    (root / "daily/2026-06-01-10h00-monday-session-x.md").rename(
        root / "archive/daily/2026-W23/2026-06-01-10h00-monday-session-x.md"
    )
    report = search_store.markdown.reconcile()

    assert report.removed == 0
    doc = search_store.docs.get("2026-06-01-10h00-monday-session-x")
    assert doc.filepath == "archive/daily/2026-W23/2026-06-01-10h00-monday-session-x.md"


def test_two_files_with_one_name_get_two_documents(search_store, root):
    write(root, "decisions/readme.md", "decisions index\n")
    write(root, "research/readme.md", "research index\n")

    search_store.search.refresh()

    assert sorted(found(search_store, "index")) == ["readme", "research--readme"]


def test_files_outside_the_watched_folders_are_not_indexed_on_entry(search_store, root):
    write(root, "scratch/private.md", "secret plans\n")
    write(root, "current.md", "# Current Workspace\nworking on the parser\n")

    search_store.search.refresh()

    assert found(search_store, "secret") == []
    assert found(search_store, "parser") == ["current"]


def test_a_session_dump_is_indexed_when_it_is_written(search_store, root):
    search_store.working.workspace.claim("tune the vector cache")
    search_store.working.workspace.log("measured the cache hit ratio")

    dump = search_store.working.workspace.dump("end of day")

    assert search_store.docs.pending() == []
    hit = search_store.search.universal("cache hit ratio").hits[0]
    assert hit.doc_id == dump.doc_id and hit.source == "hybrid"
    search_store.search.refresh()  # the daily file is the same document, not a second one
    assert sorted(found(search_store, "ratio")) == sorted([dump.doc_id, "current"])


def test_the_markdown_import_reads_titles_types_tags_and_skips_unchanged_files(search_store, root):
    write(
        root,
        "decisions/ADR 12 Auth.md",
        "---\ntitle: Use JWT\nstatus: completed\ntags: [auth, api]\n---\nBody #security\n",
    )
    write(root, "2026-01-05-plan-high.md", "no heading here\n")
    write(root, ".mcp/ignored.md", "never imported\n")

    first = search_store.markdown.import_markdown()
    again = search_store.markdown.import_markdown()

    assert (first.imported, first.updated, first.skipped, first.errors) == (2, 0, 0, [])
    assert (again.imported, again.skipped) == (0, 2)
    adr = search_store.docs.get("adr-12-auth")
    assert (adr.title, adr.doc_type, adr.status) == ("Use JWT", "decision", "done")
    assert adr.metadata_json["tags"] == ["auth", "api", "security", "decisions"]
    plan = search_store.docs.get("2026-01-05-plan-high")
    assert (plan.title, plan.doc_type, plan.priority) == ("Plan High", "plan", "high")
    assert found(search_store, "jwt") == ["adr-12-auth"]


def test_a_dry_run_import_changes_nothing(search_store, root):
    write(root, "notes.md", "# Notes\n")

    report = search_store.markdown.import_markdown(dry_run=True)

    assert report.imported == 1 and report.files == ["notes.md"]
    assert search_store.docs.stats().total_docs == 0


@pytest.mark.parametrize(
    ("relative", "expected"),
    [
        ("decisions/ADR 12 Auth.md", "adr-12-auth"),
        ("daily/2026-06-10-22h23-wednesday-session-x.md", "2026-06-10-22h23-wednesday-session-x"),
    ],
)
def test_document_ids_come_from_file_names(relative, expected):
    assert doc_id_for(relative) == expected


def test_a_document_title_falls_back_to_the_first_heading_then_the_file_name():
    assert describe_markdown("x/a.md", "text\n# The Heading\n").title == "The Heading"
    assert describe_markdown("x/2026-05-01-my-great-idea.md", "text").title == "My Great Idea"
