"""The memory files at the command line: ``dokoro memory reindex`` on a clone with memory files and no
database creates the store and brings the memories back (issue 46 item 1); a symlinked or hostile file
is one file skipped, never the command's failure (issue 49 item 2); ``dokoro doctor`` names the memory
rows an earlier version let in and ``dokoro doctor --fix`` repairs them. Both backends."""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from dokoro.cli import app
from dokoro_store import Store
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.semantic.memories import repository
from typer.testing import CliRunner

runner = CliRunner()


def _env(url: str | None) -> dict[str, str]:
    return {"DOKORO_DATABASE_URL": url} if url else {}


@pytest.fixture
def empty_url(database_url: str | None, postgres_server: object) -> Iterator[str | None]:
    """No database yet: None (SQLite: no .dokoro/ in the clone), or a PostgreSQL database without a schema."""
    if database_url is None:
        yield None
        return
    import psycopg

    admin = str(postgres_server.get_uri())  # type: ignore[attr-defined]
    name = f"e_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    from sqlalchemy.engine import make_url

    yield make_url(database_url).set(database=name).render_as_string(hide_password=False)
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_memory_reindex_on_a_clone_without_a_database_creates_the_store(
    tmp_path: Path, database_url: str | None, empty_url: str | None
) -> None:
    origin = tmp_path / "origin"
    with Store.open(origin) as store:
        base = store.memories.remember(type="fact", title="Postgres", body="The database is PostgreSQL.").memory.id
        store.memories.remember(type="rule", title="Replicas", body="Read from the replicas.", depends_on=[base])
        store.memories.sync_files()
    clone = tmp_path / "clone"
    shutil.copytree(origin / "memories", clone / "memories")  # what git brings along: no .dokoro/

    done = runner.invoke(app, ["memory", "reindex", "--json", "--path", str(clone)], env=_env(empty_url))

    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert (report["restored"], report["links"], report["skipped"]) == (2, 1, 0)
    with Store.open(clone, database_url=empty_url) as opened:
        assert opened.memories.get(base).title == "Postgres"
        assert [m.title for m in opened.memories.of_types(["rule"])] == ["Replicas"]


def test_memory_reindex_without_memory_files_still_refuses_to_make_a_store(tmp_path: Path) -> None:
    done = runner.invoke(app, ["memory", "reindex", "--path", str(tmp_path / "nothing")])
    assert done.exit_code == 1 and "dokoro init" in done.output
    assert not (tmp_path / "nothing").exists()


def test_memory_reindex_skips_a_symlinked_and_a_hostile_file_and_exits_0(
    tmp_path: Path, database_url: str | None
) -> None:
    root = tmp_path / "store"
    with Store.open(root, database_url=database_url) as store:
        kept = store.memories.remember(type="fact", title="Kept", body="A memory that stays.").memory.id
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\n\nNot the store's.\n", encoding="utf-8")
    (root / "memories" / "fact" / "link.md").symlink_to(outside)
    (root / "memories" / "fact" / "evil.md").write_text("---\nid: ../../../etc/passwd\n---\n# Evil\n\nx\n")

    done = runner.invoke(app, ["memory", "reindex", "--path", str(root)], env=_env(database_url))

    assert done.exit_code == 0, done.output
    assert "memories/fact/link.md: skipped (a symlink" in done.output
    assert "memories/fact/evil.md: skipped (id: '../../../etc/passwd' is not a memory id" in done.output
    with Store.open(root, database_url=database_url) as store:
        assert store.memories.get(kept).title == "Kept"


def test_doctor_names_rows_no_file_can_hold_and_doctor_fix_repairs_them(
    tmp_path: Path, database_url: str | None
) -> None:
    root = tmp_path / "store"
    with Store.open(root, database_url=database_url) as store:
        now = store.clock.now()
        with store.db.write() as session:  # as an earlier version let a file's id in
            repository.create(
                session, MemoryRow(id="../../x", type="fact", title="Let in", body="x", created_at=now, updated_at=now)
            )
    env = _env(database_url)

    found = runner.invoke(app, ["doctor", "--path", str(root)], env=env)
    fixed = runner.invoke(app, ["doctor", "--fix", "--path", str(root)], env=env)
    again = runner.invoke(app, ["doctor", "--fix", "--json", "--path", str(root)], env=env)

    assert found.exit_code == 1 and "Memory rows" in found.output and "dokoro doctor --fix" in found.output
    assert fixed.exit_code == 0 and "'../../x'" not in fixed.output and "../../x had an id" in fixed.output
    assert json.loads(again.stdout) == {"repaired": []}
    with Store.open(root, database_url=database_url) as store:
        assert store.memories.unsafe_rows() == []
        assert [m.title for m in store.memories.of_types(["fact"])] == ["Let in"]
