"""``dokoro migrate``, ``dokoro reindex`` and ``dokoro reembed``, through Typer's runner."""

from __future__ import annotations

from pathlib import Path

import pytest
from dokoro.cli import app
from dokoro.commands import _output
from dokoro_store import Store
from typer.testing import CliRunner

runner = CliRunner()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "dokoro"
    Store.open(root).close()  # a store: only `dokoro init` and the servers make one
    (root / "decisions").mkdir(parents=True)
    (root / "decisions" / "adr-1.md").write_text("---\ntitle: Use JWT\n---\nJWT for the API.\n")
    (root / "notes.md").write_text("# Notes\nloose notes\n")
    return root


def test_migrate_imports_every_markdown_file_and_indexes_it(folder):
    dry = runner.invoke(app, ["migrate", "--dry-run", "--path", str(folder)])
    first = runner.invoke(app, ["migrate", "--path", str(folder)])
    again = runner.invoke(app, ["migrate", "--path", str(folder)])

    assert dry.exit_code == 0 and "would import 2" in dry.output and "decisions/adr-1.md" in dry.output
    assert first.exit_code == 0, first.output
    assert "imported 2, updated 0, skipped 0" in first.output and "indexed 2 document(s)" in first.output
    assert "skipped 2" in again.output
    with Store.open(folder) as store:
        assert store.search.universal("jwt", mode="keyword").hits[0].doc_id == "adr-1"


def test_reindex_picks_up_workspace_files_and_reports_the_index(folder):
    result = runner.invoke(app, ["reindex", "--path", str(folder)])
    full = runner.invoke(app, ["reindex", "--full", "--path", str(folder)])

    assert result.exit_code == 0, result.output
    assert "workspace files: 1 added" in result.output
    assert "index: 1/1 documents" in result.output
    assert full.exit_code == 0 and "indexed 1 document(s)" in full.output


def test_reembed_rebuilds_vectors_with_the_configured_embedder(folder, monkeypatch):
    runner.invoke(app, ["migrate", "--path", str(folder)])
    monkeypatch.setenv("DOKORO_EMBEDDER", "hashing")

    result = runner.invoke(app, ["reembed", "--yes", "--path", str(folder)])

    assert result.exit_code == 0, result.output
    assert "re-embedding with hashing floor" in result.output
    assert "2 vectors (hashing:v1-512)" in result.output
    with Store.open(folder) as store:
        assert store.docs.stamp()[0] == "hashing:v1-512"


def test_the_commands_are_listed_in_the_help():
    result = runner.invoke(app, ["--help"])

    for command in ("migrate", "reindex", "reembed"):
        assert command in result.output


def test_reembed_moves_a_static_store_to_the_onnx_embedder_and_auto_follows(folder, monkeypatch):
    monkeypatch.setenv("DOKORO_EMBEDDER", "static")
    runner.invoke(app, ["migrate", "--path", str(folder)])
    monkeypatch.delenv("DOKORO_EMBEDDER")
    with Store.open(folder) as store:
        static_stamp = store.docs.stamp()[0]
        assert static_stamp is not None and static_stamp.startswith("static:")
        assert store.embedder.status().id == static_stamp  # auto stays with the stamped model

    result = runner.invoke(app, ["reembed", "--embedder", "onnx", "--yes", "--path", str(folder)])

    assert result.exit_code == 0, result.output
    assert f"(was {static_stamp})" in result.output and "reembed" in result.output
    with Store.open(folder) as store:
        stamp = store.docs.stamp()[0]
        assert stamp is not None and stamp.startswith("onnx:")
        assert store.embedder.status().id == stamp  # and now follows the new stamp
        assert store.search.universal("JWT for the API").hits[0].doc_id == "adr-1"


def test_reembed_refuses_an_unknown_embedder(folder):
    result = runner.invoke(app, ["reembed", "--embedder", "bert", "--path", str(folder)])

    assert result.exit_code == 1 and "--embedder must be one of" in result.output


def test_migrate_leaves_out_the_memory_and_tracking_renderings(folder: Path) -> None:
    with Store.open(folder) as store:
        remembered = store.memories.remember(
            type="fact", title="Old cache rule", body="The cache is flushed nightly.", entities=["cache"]
        )
        store.memories.forget(remembered.memory.id, reason="the cache is gone")
        issue = store.tracking.add_issue("Login race", description="refresh races the logout").item
        store.tracking.work_issue(issue.id)
        store.tracking.complete_issue(issue.id, "serialised the refresh")
        store.memories.close()
    assert list((folder / "memories").rglob("*.md")) and list((folder / "tracking").rglob("*.md"))

    with Store.open(folder) as store:  # what an earlier dokoro's migrate left behind
        store.docs.save("memories-old", "stale", filepath="memories/fact/old.md", doc_type="issue")
    result = runner.invoke(app, ["migrate", "--path", str(folder)])
    assert result.exit_code == 0, result.output
    assert "removed 1 document(s)" in result.output
    assert "left out" in result.output and "memories/, tracking/" in result.output
    with Store.open(folder) as store, store.db.read() as session:
        from dokoro_store.models import Doc
        from sqlmodel import select

        docs = {doc.id: doc.filepath for doc in session.exec(select(Doc))}
    paths = list(docs.values())
    assert "decisions/adr-1.md" in paths and "notes.md" in paths
    # The issue's own document (its row's, written by the tracking room) stays; no import of a rendering.
    rendered = {i: p for i, p in docs.items() if p.startswith(("memories/", "tracking/"))}
    assert rendered == {f"issue:{issue.id}": rendered.get(f"issue:{issue.id}")}
    assert rendered[f"issue:{issue.id}"].startswith("tracking/")


def _static_store(folder: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("DOKORO_EMBEDDER", "static")
    runner.invoke(app, ["migrate", "--path", str(folder)])
    monkeypatch.delenv("DOKORO_EMBEDDER")
    with Store.open(folder) as store:
        stamp = store.docs.stamp()[0]
    assert stamp is not None and stamp.startswith("static:")
    return stamp


def test_a_full_reindex_keeps_the_store_embedder_and_refuses_to_switch_it(folder, monkeypatch):
    stamp = _static_store(folder, monkeypatch)
    kept = runner.invoke(app, ["reindex", "--full", "--path", str(folder)])  # auto: the stamp decides
    assert kept.exit_code == 0, kept.output
    assert f"stamp {stamp}" in kept.output

    monkeypatch.setenv("DOKORO_EMBEDDER", "hashing")
    refused = runner.invoke(app, ["reindex", "--full", "--path", str(folder)])
    assert refused.exit_code != 0
    assert "nothing was changed" in refused.output and "dokoro reembed" in refused.output
    with Store.open(folder) as store:
        assert store.docs.stamp()[0] == stamp and store.docs.stats().vectors == 2


def test_reembed_previews_and_asks_before_it_changes_the_store_embedder(folder, monkeypatch):
    stamp = _static_store(folder, monkeypatch)
    preview = runner.invoke(app, ["reembed", "--embedder", "onnx", "--dry-run", "--path", str(folder)])
    assert preview.exit_code == 0, preview.output
    assert f"stamped {stamp}" in preview.output and "Dry run: nothing changed." in preview.output
    assert "documents:          2 (2 vectors)" in preview.output and "session summaries:  0" in preview.output
    assert "embedder after:     onnx:" in preview.output
    monkeypatch.setattr(_output, "stdin_is_terminal", lambda: True)  # a person at a terminal, who says no
    declined = runner.invoke(app, ["reembed", "--embedder", "onnx", "--path", str(folder)], input="n\n")
    assert declined.exit_code == 0 and "Re-embed the whole store? [y/N]" in declined.output
    assert "Nothing changed." in declined.output
    with Store.open(folder) as store:
        assert store.docs.stamp()[0] == stamp


def test_reembed_without_yes_and_no_terminal_changes_nothing_and_says_how_to_go_ahead(folder, monkeypatch):
    stamp = _static_store(folder, monkeypatch)
    with Store.open(folder) as store:
        before = (store.docs.stats(), store.docs.stamp())

    piped = runner.invoke(app, ["reembed", "--embedder", "onnx", "--path", str(folder)], input="y\n")

    assert piped.exit_code == 1, piped.output
    assert "Re-embedding rewrites every vector" in piped.output and "[y/N]" not in piped.output
    assert "Nothing changed: there is no terminal to ask on. Run it again with --yes" in piped.output
    with Store.open(folder) as store:
        assert (store.docs.stats(), store.docs.stamp()) == before and store.docs.stamp()[0] == stamp


def test_doctor_fails_on_a_process_whose_embedder_is_not_the_store_one(folder, monkeypatch):
    _static_store(folder, monkeypatch)
    assert runner.invoke(app, ["doctor", "--path", str(folder)]).exit_code == 0
    monkeypatch.setenv("DOKORO_EMBEDDER", "hashing")
    doctor = runner.invoke(app, ["doctor", "--path", str(folder)])
    assert doctor.exit_code == 1, doctor.output
    assert "✗" in doctor.output and "dokoro reembed" in doctor.output
