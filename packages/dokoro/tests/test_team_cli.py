"""The team commands: move a store, back it up, restore it, diagnose it, issue tokens."""

from __future__ import annotations

import json
from pathlib import Path

from dokoro.cli import app
from dokoro_store import Store
from dokoro_store.moving.transfer import RESTAMPED, read_rows, store_tables
from typer.testing import CliRunner

runner = CliRunner()


def _fill(root: Path) -> None:
    with Store.open(root) as store:
        for i in range(12):
            store.episodic.add_summary(f"s{i % 3}", "claude", f"summary {i}", key_topics=["auth", str(i)])
        store.working.questions.add("Is the cache safe?", context="auth", priority="blocker")
        store.working.workspace.claim("team move")
        store.working.workspace.dump("checkpoint")
        store.tokens.create("alice")
        # Memories with entities and an entity graph: rows the target re-stamps (a memory's rev)
        # and a table whose every column is its key (memory_entities).
        store.memories.remember(
            type="fact", title="Team database", body="The team runs PostgreSQL 16.", entities=["postgres"]
        )
        auth = store.graph.upsert_entity("service", "AuthService").id
        sessions = store.graph.upsert_entity("service", "SessionStore").id
        store.graph.upsert_relation(auth, sessions, "depends_on")
        store.graph.complete_pending()


def _tables(root: Path, url: str | None = None) -> dict[str, list[dict[str, object]]]:
    """Every row, without the columns each database stamps itself (a memory's rev)."""
    with Store.open(root, database_url=url) as store:
        return {
            table.name: [
                {k: v for k, v in row.items() if k not in RESTAMPED.get(table.name, ())}
                for row in read_rows(store.db, table)
            ]
            for table in store_tables()
        }


def test_migrate_sqlite_to_postgres_and_back_compares_field_by_field(tmp_path: Path, postgres_url: str) -> None:
    source = tmp_path / "laptop"
    _fill(source)

    there = runner.invoke(app, ["store", "migrate", "--to", postgres_url, "--path", str(source)])
    assert there.exit_code == 0, there.output
    assert "All tables verified" in there.output
    assert "conversation_summaries" in there.output

    back_root = tmp_path / "back"
    back = runner.invoke(
        app, ["store", "migrate", "--from", postgres_url, "--to", str(back_root), "--path", str(source)]
    )
    assert back.exit_code == 0, back.output
    assert (back_root / ".gitignore").read_text(encoding="utf-8").startswith("# Written by dokoro.")

    original = _tables(source)
    assert _tables(source, postgres_url) == original
    assert _tables(back_root) == original

    again = runner.invoke(app, ["store", "migrate", "--to", postgres_url, "--path", str(source)])
    assert again.exit_code == 0 and "All tables verified" in again.output
    assert _tables(source, postgres_url) == original


def test_export_then_import_round_trips_and_reports_duplicates(tmp_path: Path) -> None:
    source, target = tmp_path / "a", tmp_path / "b"
    _fill(source)
    Store.open(target).close()  # restoring into a store made first (`dokoro init`)
    exported = runner.invoke(app, ["export", "--path", str(source), "--out", str(tmp_path / "backups")])
    assert exported.exit_code == 0, exported.output
    (backup,) = (tmp_path / "backups").glob("dokoro-backup-*.json")
    assert json.loads(backup.read_text(encoding="utf-8"))["format"] == "dokoro-backup"

    preview = runner.invoke(app, ["import", str(backup), "--dry-run", "--path", str(target)])
    assert preview.exit_code == 0 and "Dry run: nothing imported." in preview.output

    imported = runner.invoke(app, ["import", str(backup), "--yes", "--path", str(target)])
    assert imported.exit_code == 0, imported.output
    memory = [name for name in _tables(source) if name != "api_tokens"]
    assert {k: v for k, v in _tables(target).items() if k in memory} == {
        k: v for k, v in _tables(source).items() if k in memory
    }
    assert _tables(target)["api_tokens"] == []  # credentials never travel in a backup

    twice = runner.invoke(app, ["import", str(backup), "--yes", "--path", str(target)])
    assert twice.exit_code == 0, twice.output
    assert "already there" in twice.output and "conflict " not in twice.output


def test_import_surfaces_a_conflicting_fact(tmp_path: Path) -> None:
    source, target = tmp_path / "a", tmp_path / "b"
    _fill(source)
    Store.open(target).close()
    runner.invoke(app, ["export", "--path", str(source), "--out", str(tmp_path / "backups")])
    (backup,) = (tmp_path / "backups").glob("*.json")
    runner.invoke(app, ["import", str(backup), "--yes", "--path", str(target)])
    document = json.loads(backup.read_text(encoding="utf-8"))
    document["tables"]["questions"][0]["context"] = "edited elsewhere"
    backup.write_text(json.dumps(document), encoding="utf-8")

    result = runner.invoke(app, ["import", str(backup), "--yes", "--path", str(target)])
    assert result.exit_code == 0, result.output
    assert "conflict" in result.output and "context" in result.output
    with Store.open(target) as store:
        assert store.working.questions.list("all")[0].context == "auth"


def test_doctor_names_the_backend_and_schema(tmp_path: Path, postgres_url: str) -> None:
    Store.open(tmp_path / "s").close()
    local = runner.invoke(app, ["doctor", "--path", str(tmp_path / "s")])
    assert local.exit_code == 0, local.output
    assert "SQLite (embedded)" in local.output and "Schema" in local.output and "Embedder" in local.output
    as_json = runner.invoke(app, ["doctor", "--json", "--path", str(tmp_path / "s")])
    assert "Embedder" in {check["label"] for check in json.loads(as_json.stdout)}

    team = runner.invoke(app, ["doctor", "--path", str(tmp_path / "s")], env={"DOKORO_DATABASE_URL": postgres_url})
    assert team.exit_code == 0, team.output
    assert "PostgreSQL" in team.output and "pgvector" in team.output


def test_an_unreachable_team_database_is_a_clear_error_at_start(tmp_path: Path) -> None:
    url = "postgresql+psycopg://team:pw@127.0.0.1:9/memory"
    result = runner.invoke(app, ["doctor", "--path", str(tmp_path / "s")], env={"DOKORO_DATABASE_URL": url})
    assert result.exit_code == 2
    assert "127.0.0.1:9" in result.output and "DOKORO_DATABASE_URL" in result.output


def test_tokens_are_created_listed_and_revoked(tmp_path: Path) -> None:
    root = str(tmp_path / "s")
    Store.open(Path(root)).close()
    created = runner.invoke(app, ["token", "create", "--agent", "alice", "--path", root])
    assert created.exit_code == 0, created.output
    token = created.output.strip().splitlines()[-1]
    assert token.startswith("dkr_")
    listed = runner.invoke(app, ["token", "list", "--path", root])
    assert "agent=alice" in listed.output and token not in listed.output
    token_id = listed.output.split()[0]
    revoked = runner.invoke(app, ["token", "revoke", token_id, "--path", root])
    assert revoked.exit_code == 0 and "Revoked" in revoked.output
    missing = runner.invoke(app, ["token", "revoke", "tok_missing", "--path", root])
    assert missing.exit_code == 1 and "dokoro token list" in missing.output
    as_json = runner.invoke(app, ["token", "list", "--json", "--path", root])
    assert [(t["id"], t["agent_id"]) for t in json.loads(as_json.stdout)] == [(token_id, "alice")]


def test_an_operator_token_is_created_with_operator_and_listed_as_one(tmp_path: Path) -> None:
    root = str(tmp_path / "s")
    Store.open(Path(root)).close()
    created = runner.invoke(app, ["token", "create", "--agent", "ops", "--operator", "--path", root])
    runner.invoke(app, ["token", "create", "--agent", "alice", "--path", root])

    assert created.exit_code == 0 and "Operator token tok_" in created.output, created.output
    listed = runner.invoke(app, ["token", "list", "--path", root]).output
    assert "agent=ops  operator  live" in listed and "agent=alice  live" in listed
    as_json = runner.invoke(app, ["token", "list", "--json", "--path", root]).stdout
    assert {t["agent_id"]: t["operator"] for t in json.loads(as_json)} == {"ops": True, "alice": False}
    with Store.open(Path(root)) as store:
        token = created.output.strip().splitlines()[-1]
        found = store.tokens.identity(token)
        assert found is not None and (found.agent_id, found.operator) == ("ops", True)


def test_a_team_database_without_a_store_is_named_and_left_untouched(tmp_path: Path, postgres_url: str) -> None:
    """A read command on a reachable but empty team database says so in one line and exits 1,
    having created no schema; `dokoro init` then creates it and the command works."""
    import psycopg
    from sqlalchemy.engine import make_url

    url = make_url(postgres_url)
    empty = url.set(database=f"{url.database}_empty")
    admin = url.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{empty.database}"')
    empty_url = empty.render_as_string(hide_password=False)
    try:
        env = {"DOKORO_DATABASE_URL": empty_url}
        for command in (["rules"], ["list"], ["doctor"], ["memory", "list"]):
            result = runner.invoke(app, [*command, "--path", str(tmp_path / "s")], env=env)
            assert result.exit_code == 1, result.output
            lines = [line for line in result.output.splitlines() if line.strip()]
            assert len(lines) == 1, lines
            assert lines[0].endswith(
                "holds no dokoro store yet: run `dokoro init` with this DOKORO_DATABASE_URL to create it"
            )
            assert lines[0].count("dokoro init") == 1 and "team's database" not in lines[0], lines[0]
            assert not (tmp_path / "s").exists()  # no folder either: nothing was created
            with psycopg.connect(empty.set(drivername="postgresql").render_as_string(hide_password=False)) as db:
                tables = db.execute("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'")
                assert tables.fetchone() == (0,)

        assert runner.invoke(app, ["init", "--path", str(tmp_path / "s")], env=env).exit_code == 0
        assert runner.invoke(app, ["rules", "--path", str(tmp_path / "s")], env=env).exit_code == 0
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{empty.database}" WITH (FORCE)')
