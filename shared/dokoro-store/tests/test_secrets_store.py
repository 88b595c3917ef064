"""The store's last line of defence: every write statement and every file is redacted, whatever
wrote it (a service that forgot, raw SQL, a bulk insert, an import, a store migration)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from dokoro_store import Store
from dokoro_store.moving.backup import apply_import, export_store, load_backup, plan_import
from dokoro_store.moving.transfer import copy_store, read_rows, store_tables
from dokoro_store.walls.files import append_text, atomic_write_bytes, atomic_write_text
from sqlalchemy import insert, select, text

GITHUB = "ghp_" + "Zq8Wm3" * 6
PASSWORD = "Tr0ub4" + "dor-3x"
URL = "postgresql://app:" + "hunter42Zebra" + "@db.example.org/prod"
NEEDLES = (GITHUB, PASSWORD, "hunter42Zebra")


def _leaks(value: Any) -> list[str]:
    dumped = json.dumps(value, default=str)
    return [n for n in NEEDLES if n in dumped]


def _raw(store: Store, sql: str, *params: Any) -> None:
    """Below the hook: straight through the driver, as an older dokoro wrote."""
    raw = store.db.engine.raw_connection()
    try:
        cursor = raw.cursor()
        cursor.execute(sql.replace("?", "%s") if store.db.dialect == "postgresql" else sql, params)
        raw.commit()
    finally:
        raw.close()


def test_raw_sql_core_bulk_and_json_writes_are_redacted(any_store: Store) -> None:
    from dokoro_store.models import SharedNote

    note = any_store.coord.notes.append("alice", "first")
    with any_store.db.write() as session:
        session.execute(
            text("UPDATE shared_notes SET content = :c WHERE id = :i"), {"c": f"use {GITHUB}", "i": note.id}
        )
        table = SharedNote.__table__  # type: ignore[attr-defined]
        session.execute(
            insert(table),
            [
                {
                    "agent_id": "bob",
                    "note_type": "scratch",
                    "content": f"DB_PASSWORD={PASSWORD}",
                    "created_at": any_store.clock.now(),
                },
                {"agent_id": "bob", "note_type": "scratch", "content": URL, "created_at": any_store.clock.now()},
            ],
        )
    any_store.feedback.record(
        "alice",
        "dokoro_recall",
        "failure",
        error_message=f"failed with {URL}",
        metadata={"password": PASSWORD, "n": [GITHUB]},
    )
    rows = {t.name: read_rows(any_store.db, t) for t in store_tables()}
    assert not _leaks(rows)
    contents = sorted(r["content"] for r in rows["shared_notes"])
    assert "use [REDACTED:github-token]" in contents and "DB_PASSWORD=[REDACTED:password]" in contents
    (feedback,) = rows["agent_feedback"]
    assert feedback["metadata_json"] == {"password": "[REDACTED:password]", "n": ["[REDACTED:github-token]"]}


def test_reads_and_lookups_are_not_altered(any_store: Store) -> None:
    from dokoro_store.models import SharedNote

    any_store.coord.notes.append("alice", "the plain note")
    with any_store.db.read() as session:
        found = (
            session.execute(select(SharedNote.content).where(SharedNote.content == "the plain note")).scalars().all()
        )  # type: ignore[arg-type]
    assert found == ["the plain note"]


def test_an_entity_named_by_a_secret_is_stored_redacted_and_answered_under_its_name(any_store: Store) -> None:
    entity = any_store.graph.upsert_entity("service", URL)
    assert "hunter42Zebra" not in entity.name and "[REDACTED:url-password]" in entity.name
    again = any_store.graph.upsert_entity("service", URL)
    assert again.id == entity.id
    assert not _leaks(read_rows(any_store.db, next(t for t in store_tables() if t.name == "entities")))


def test_every_file_the_store_writes_is_redacted_and_binary_data_is_not(tmp_path: Path) -> None:
    atomic_write_text(tmp_path / "a.md", f"token {GITHUB}\n", within=tmp_path)
    assert (tmp_path / "a.md").read_text(encoding="utf-8") == "token [REDACTED:github-token]\n"
    append_text(tmp_path / "log.jsonl", json.dumps({"password": PASSWORD}) + "\n", within=tmp_path)
    assert json.loads((tmp_path / "log.jsonl").read_text(encoding="utf-8")) == {"password": "[REDACTED:password]"}
    binary = b"\x89PNG\r\n\x1a\n\x00" + GITHUB.encode()
    atomic_write_bytes(tmp_path / "x.png", binary, within=tmp_path)
    assert (tmp_path / "x.png").read_bytes() == binary


def test_an_import_redacts_a_backup_that_holds_secrets(tmp_path: Path, database_url: str | None) -> None:
    with Store.open(tmp_path / "a") as a:
        a.coord.notes.append("alice", "deploy notes")
        path, _ = export_store(a.db, tmp_path, a.clock.now())
    document = load_backup(path)
    document["tables"]["shared_notes"][0]["content"] = f"deploy with {GITHUB}"  # a hand-edited backup
    path.write_text(json.dumps(document), encoding="utf-8")
    with Store.open(tmp_path / "b", database_url=database_url) as b:
        plan = plan_import(b.db, load_backup(path))
        assert plan.redacted == ("github-token",)
        apply_import(b.db, plan)
        assert not _leaks({t.name: read_rows(b.db, t) for t in store_tables()})
        again = plan_import(b.db, load_backup(path))
        assert again.new_rows == 0 and again.conflicts == []  # the redacted row is the same row


def test_store_migrate_copies_old_secrets_redacted_and_still_verifies(tmp_path: Path, database_url: str | None) -> None:
    with Store.open(tmp_path / "old") as old, Store.open(tmp_path / "new", database_url=database_url) as new:
        note = old.coord.notes.append("alice", "first")
        old.docs.save("deploy", "plain")
        _raw(old, "UPDATE shared_notes SET content = ? WHERE id = ?", f"DB_PASSWORD={PASSWORD}", note.id)
        _raw(old, "UPDATE docs SET content = ? WHERE id = ?", f"see {URL}", "deploy")
        reports = copy_store(old.db, new.db)
        assert all(r.verified for r in reports), [r.table for r in reports if not r.verified]
        assert not _leaks({t.name: read_rows(new.db, t) for t in store_tables()})
        assert new.docs.get("deploy").content == "see postgresql://app:[REDACTED:url-password]@db.example.org/prod"
        assert all(r.verified for r in copy_store(old.db, new.db))  # twice: nothing new, still verified


@pytest.mark.parametrize("kind", ["daily", "asset"])
def test_a_dump_and_a_copied_file_hold_no_secret(tmp_path: Path, kind: str) -> None:
    with Store.open(tmp_path / "s") as store:
        if kind == "daily":
            store.working.workspace.claim(f"rotate {GITHUB}")
            store.working.workspace.log(f"DB_PASSWORD={PASSWORD}")
            dumped = store.working.workspace.dump("done", keep_active=False)
            written = Path(dumped.path).read_text(encoding="utf-8")
            row = store.docs.get(Path(dumped.path).stem).content or ""
        else:
            source = tmp_path / "notes.txt"
            source.write_text(f"connect to {URL}\n", encoding="utf-8")
            saved = store.working.assets.save_file(str(source), category="documents", cwd=tmp_path)
            written = Path(saved.path).read_text(encoding="utf-8")
            row = ""
    assert not _leaks(written) and not _leaks(row)
    assert "[REDACTED:" in written


def test_the_flush_hook_is_the_stores_own_and_leaves_other_sessions_alone(tmp_path: Path) -> None:
    # The store's sessions redact the objects they flush; a session of another engine in the same
    # process (another library's, a script's) keeps what it was given.
    from datetime import UTC, datetime

    from dokoro_store.models import SharedNote
    from sqlalchemy import create_engine
    from sqlmodel import Session, SQLModel

    with Store.open(tmp_path / "dokoro") as store:
        with store.db.write() as session:
            note = SharedNote(agent_id="a", content=f"token {GITHUB}", created_at=datetime.now(UTC))
            session.add(note)
            session.flush()
            assert GITHUB not in note.content
        other = create_engine(f"sqlite:///{tmp_path / 'other.sqlite'}")
        SQLModel.metadata.create_all(other, tables=[SharedNote.__table__])  # type: ignore[list-item]
        with Session(other) as session:
            mine = SharedNote(agent_id="a", content=f"token {GITHUB}", created_at=datetime.now(UTC))
            session.add(mine)
            session.flush()
            assert GITHUB in mine.content
        other.dispose()
