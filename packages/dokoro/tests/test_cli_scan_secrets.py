"""``dokoro doctor --scan-secrets [--fix]``: secrets an older dokoro left in rows and files are
found (where, never what) and redacted in place, the documents indexed again.

The secrets are planted below the store's redaction (straight through the database driver and the
file system), as an older dokoro or a hand edit would have left them. Both backends.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from dokoro.cli import app
from dokoro_store import Store
from typer.testing import CliRunner

runner = CliRunner()

GITHUB = "ghp_" + "Zq8Wm3" * 6
URL_PASSWORD = "hunter" + "42Zebra"
ENV_PASSWORD = "Tr0ub4" + "dor-3x"
NEEDLES = (GITHUB, URL_PASSWORD, ENV_PASSWORD)
DOC = f"# Deploy\n\nThe staging deploy uses {GITHUB} and postgresql://app:{URL_PASSWORD}@db.example.org/prod\n"


def _raw(store: Store, sql: str, *params: Any) -> None:
    """Run ``sql`` on the driver itself, below the store's redaction hook (``?`` placeholders)."""
    raw = store.db.engine.raw_connection()
    try:
        cursor = raw.cursor()
        if store.db.dialect == "postgresql":
            sql = sql.replace("?", "%s")
        cursor.execute(sql, params)
        raw.commit()
    finally:
        raw.close()


def _plant(root: Path, url: str | None) -> None:
    with Store.open(root, database_url=url) as store:
        store.docs.index_content("deploy-notes", "# Deploy\n\nThe staging deploy uses a token.\n")
        note = store.coord.notes.append("alice", "connection details below")
        store.feedback.record("alice", "dokoro_recall", "failure", error_message="boom", metadata={"a": 1})
        _raw(store, "UPDATE docs SET content = ? WHERE id = ?", DOC, "deploy-notes")
        _raw(store, "UPDATE shared_notes SET content = ? WHERE id = ?", f"DB_PASSWORD={ENV_PASSWORD}", note.id)
        _raw(store, "UPDATE agent_feedback SET metadata_json = ?", json.dumps({"password": ENV_PASSWORD}))
    (root / "daily").mkdir(parents=True, exist_ok=True)
    (root / "daily" / "old-session.md").write_text(f"pushed with {GITHUB}\n", encoding="utf-8")
    (root / "notes.md").write_text("nothing secret here\n", encoding="utf-8")


def _env(url: str | None) -> dict[str, str]:
    return {"DOKORO_DATABASE_URL": url} if url else {}


def _leaks(text: str) -> list[str]:
    return [needle for needle in NEEDLES if needle in text]


@pytest.mark.parametrize("database_url", ["sqlite", "postgresql"], indirect=True)
def test_scan_finds_where_secrets_sit_and_fix_redacts_them(tmp_path: Path, database_url: str | None) -> None:
    root = tmp_path / "dokoro"
    _plant(root, database_url)
    args = ["doctor", "--scan-secrets", "--path", str(root)]

    found = runner.invoke(app, args, env=_env(database_url))
    assert found.exit_code == 1, found.output
    assert "docs.content [id=deploy-notes]" in found.output
    assert "shared_notes.content" in found.output and "agent_feedback.metadata_json" in found.output
    assert "file daily/old-session.md" in found.output and "notes.md" not in found.output.replace("old-session.md", "")
    assert "github-token" in found.output and "url-password" in found.output
    assert "--fix" in found.output
    assert not _leaks(found.output), "the scan printed a secret"

    as_json = runner.invoke(app, [*args, "--json"], env=_env(database_url))
    assert as_json.exit_code == 1
    report = json.loads(as_json.output)
    assert {f["table"] for f in report["findings"] if f["table"]} >= {"docs", "shared_notes", "agent_feedback"}
    assert [f["path"] for f in report["findings"] if f["path"]] == ["daily/old-session.md"]
    assert not _leaks(as_json.output)

    fixed = runner.invoke(app, [*args, "--fix"], env=_env(database_url))
    assert fixed.exit_code == 0, fixed.output
    assert "redacted" in fixed.output and "re-indexed 1 document" in fixed.output
    assert not _leaks(fixed.output)

    again = runner.invoke(app, args, env=_env(database_url))
    assert again.exit_code == 0, again.output
    assert "no secrets found" in again.output

    assert not _leaks((root / "daily" / "old-session.md").read_text(encoding="utf-8"))
    assert (root / "notes.md").read_text(encoding="utf-8") == "nothing secret here\n"
    with Store.open(root, database_url=database_url) as store:
        content = store.docs.get("deploy-notes").content or ""
        assert "[REDACTED:github-token]" in content and "staging deploy" in content
        # Indexed again: found by its words, not by the secret.
        assert [h.doc_id for h in store.search.universal("staging deploy").hits] == ["deploy-notes"]
        from dokoro_store.moving.transfer import read_rows, store_tables

        for table in store_tables():
            assert not _leaks(json.dumps(read_rows(store.db, table), default=str)), table.name
    if database_url is None:
        # The old text does not linger in the SQLite file's free pages either.
        for path in (root / ".dokoro" / "db").rglob("*"):
            if path.is_file():
                assert not any(n.encode() in path.read_bytes() for n in NEEDLES), path.name


def test_fix_alone_repairs_memory_rows_of_an_existing_store_only(tmp_path: Path) -> None:
    # --fix without --scan-secrets repairs memory rows (test_cli_memory_repair.py); it creates no store.
    result = runner.invoke(app, ["doctor", "--fix", "--path", str(tmp_path / "s")])
    assert result.exit_code == 1
    assert not (tmp_path / "s").exists()
