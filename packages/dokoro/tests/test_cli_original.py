"""``dokoro migrate --from-original``: a preview, then the original's history moved in, once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dokoro.cli import app
from dokoro_store import Store
from dokoro_store.moving.original import is_original_database
from dokoro_testkit.original import original_copy
from typer.testing import CliRunner

runner = CliRunner()


def test_in_place_previews_then_converts_once(tmp_path: Path) -> None:
    store = original_copy(tmp_path)
    preview = runner.invoke(app, ["migrate", "--from-original", str(store), "--path", str(store), "--dry-run"])
    assert preview.exit_code == 0, preview.output
    assert "conversation summaries" in preview.output and "Dry run: nothing changed." in preview.output
    assert is_original_database(store / ".dokoro" / "db" / "dokoro.sqlite")  # the preview changed nothing

    moved = runner.invoke(app, ["migrate", "--from-original", str(store), "--path", str(store), "--yes"])
    assert moved.exit_code == 0, moved.output
    assert "every count verified" in moved.output
    assert not is_original_database(store / ".dokoro" / "db" / "dokoro.sqlite")

    again = runner.invoke(app, ["migrate", "--from-original", str(store), "--path", str(store), "--yes"])
    assert again.exit_code == 0 and "converted already" in again.output
    doctor = runner.invoke(app, ["doctor", "--path", str(store)])
    assert doctor.exit_code == 0, doctor.output
    assert "from the original dokoro on" in doctor.output
    with Store.open(store) as opened:
        assert opened.moved_in is None
        assert len(opened.episodic.recall(limit=10)) == 3


def test_into_another_store_twice_adds_nothing_the_second_time(tmp_path: Path, database_url: str | None) -> None:
    original = original_copy(tmp_path)
    target = tmp_path / "team"
    env = {"DOKORO_DATABASE_URL": database_url} if database_url else {}
    first = runner.invoke(app, ["migrate", "--from-original", str(original), "--path", str(target), "--yes"], env=env)
    assert first.exit_code == 0, first.output
    assert "Imported 46 row(s); 0 already there, 0 conflict(s)" in first.output
    second = runner.invoke(app, ["migrate", "--from-original", str(original), "--path", str(target), "--yes"], env=env)
    assert second.exit_code == 0, second.output
    assert "Imported 0 row(s); 46 already there, 0 conflict(s)" in second.output
    # The original's folder was only read.
    assert is_original_database(original / ".dokoro" / "db" / "dokoro.sqlite")
    with Store.open(target, database_url=database_url) as store:
        questions = {q.question for q in store.working.questions.list("all")}
        assert "Which CI runner should the e2e job use?" in questions
        assert store.coord.blocks.read("conventions") is not None


def test_a_folder_that_is_no_original_store_is_refused_with_the_fix(tmp_path: Path) -> None:
    result = runner.invoke(app, ["migrate", "--from-original", str(tmp_path / "nothing"), "--path", str(tmp_path)])
    assert result.exit_code == 1
    assert "holds no store of the original dokoro" in result.output


SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "dokoro-store" / "tests" / "samples"


def test_moving_in_from_the_mcp_memory_graph_previews_then_imports_once(tmp_path: Path) -> None:
    store = tmp_path / "dokoro"
    graph = SAMPLES / "mcp-memory" / "memory.jsonl"
    preview = runner.invoke(app, ["migrate", "--from-mcp-memory", str(graph), "--path", str(store), "--dry-run"])
    assert preview.exit_code == 0, preview.output
    assert "Dry run: nothing imported." in preview.output and "skipped: line 7: not JSON" in preview.output
    done = runner.invoke(app, ["migrate", "--from-mcp-memory", str(graph), "--path", str(store), "--yes"])
    assert done.exit_code == 0 and "Imported 3 new" in done.output, done.output
    again = runner.invoke(app, ["migrate", "--from-mcp-memory", str(graph), "--path", str(store), "--yes"])
    assert again.exit_code == 0 and "Everything is already there" in again.output


def test_moving_in_skips_bad_lines_by_number_prints_no_secret_and_counts_what_it_wrote(tmp_path: Path) -> None:
    store = tmp_path / "dokoro"
    token = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    graph = tmp_path / "memory.jsonl"
    lines = [
        json.dumps({"type": "entity", "name": name, "entityType": "place", "observations": ["a city"]})
        for name in ("東京", "大阪", "Москва", "서울")
    ]
    lines.insert(1, json.dumps({"type": "relation", "from": "東京", "token": token}))
    lines.insert(2, '{"type": "entity", "name": "x", "a": ' + "[" * 50_000 + "]" * 50_000 + "}")
    graph.write_text("\n".join(lines) + "\n", encoding="utf-8")

    done = runner.invoke(app, ["migrate", "--from-mcp-memory", str(graph), "--path", str(store), "--yes"])

    assert done.exit_code == 0, done.output
    assert "Traceback" not in done.output and token not in done.output and token[:10] not in done.output
    assert "skipped: line 2: a relation without to/relationType" in done.output
    assert "skipped: line 3: JSON nested too deep to read" in done.output
    assert "Imported 4 new and 0 changed document(s), 4 entities" in done.output
    assert "2 line(s) or note(s) skipped" in done.output


def test_moving_in_from_a_notes_folder(tmp_path: Path) -> None:
    store = tmp_path / "dokoro"
    done = runner.invoke(app, ["migrate", "--from-notes", str(SAMPLES / "notes"), "--path", str(store), "--yes"])
    assert done.exit_code == 0, done.output
    assert "Imported 5 new" in done.output
    with Store.open(store) as opened:
        assert opened.graph.find_entity("service", "Auth Service") is not None
    both = runner.invoke(app, ["migrate", "--from-notes", "a", "--from-mcp-memory", "b", "--path", str(store)])
    assert both.exit_code != 0


def test_an_import_declined_at_the_question_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dokoro.commands import _output

    monkeypatch.setattr(_output, "stdin_is_terminal", lambda: True)  # a person at a terminal, who says no
    store = tmp_path / "dokoro"
    graph = SAMPLES / "mcp-memory" / "memory.jsonl"

    declined = runner.invoke(app, ["migrate", "--from-mcp-memory", str(graph), "--path", str(store)], input="n\n")

    assert declined.exit_code == 0, declined.output
    assert "Nothing imported." in declined.output
    with Store.open(store) as opened:
        assert opened.docs.stats().total_docs == 0


def test_an_import_of_a_missing_folder_says_so_and_creates_no_store(tmp_path: Path) -> None:
    store = tmp_path / "dokoro"

    result = runner.invoke(app, ["migrate", "--from-notes", str(tmp_path / "nowhere"), "--path", str(store)])

    assert result.exit_code == 1
    assert "nowhere" in result.output
    assert not store.exists()


@pytest.mark.parametrize("damage", ["wrong schema", "scrambled", "zero bytes"])
def test_doctor_on_a_damaged_original_store_says_so_in_one_line(tmp_path: Path, damage: str) -> None:
    import sqlite3

    root = original_copy(tmp_path)
    database = root / ".dokoro" / "db" / "dokoro.sqlite"
    if damage == "wrong schema":
        with sqlite3.connect(database) as connection:
            connection.execute("ALTER TABLE sessions DROP COLUMN metadata_json")
    elif damage == "zero bytes":
        database.write_bytes(b"")
    else:
        data = bytearray(database.read_bytes())
        for at in range(4096, len(data), 97):
            data[at] = (data[at] * 7 + 13) % 256
        database.write_bytes(bytes(data))

    result = runner.invoke(app, ["doctor", "--path", str(root)])

    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("dokoro: "), result.output
    assert "Traceback" not in result.output and "Error" not in result.output
    assert not (root / ".dokoro" / "backup").exists()
