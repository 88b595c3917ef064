"""The original's damaged stores: a wrong schema, a damaged or zero-byte database, a huge
``questions.json``, a conversion refused mid-way. Each is one clear line (or, for the questions,
the real ones kept), the original is left as it was, and no backup folder piles up per attempt.
Copies of the fixture the original TypeScript dokoro wrote (``../shared/fixtures/original-store``)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from dokoro_store import FrozenClock, Store, StoreUnavailableError
from dokoro_store.moving.original import moving_in, preview_original
from dokoro_testkit.original import original_copy

DATABASE = Path(".dokoro") / "db" / "dokoro.sqlite"


def _backups(root: Path) -> list[Path]:
    folder = root / ".dokoro" / "backup"
    return sorted(folder.iterdir()) if folder.is_dir() else []


def _drop_a_column(database: Path) -> None:
    with sqlite3.connect(database) as connection:
        connection.execute("ALTER TABLE sessions RENAME TO old_sessions")
        connection.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, started_at TEXT)")
        connection.execute("INSERT INTO sessions SELECT id, started_at FROM old_sessions")
        connection.execute("DROP TABLE old_sessions")


def test_a_wrong_schema_is_one_clear_line_and_leaves_the_original_and_no_backup(
    tmp_path: Path, clock: FrozenClock
) -> None:
    root = original_copy(tmp_path)
    _drop_a_column(root / DATABASE)
    before = (root / DATABASE).read_bytes()

    for _attempt in range(2):  # every server start tries again
        with pytest.raises(StoreUnavailableError) as refused:
            Store.open(root, clock=clock)
        message = str(refused.value)
        assert "\n" not in message and "does not have the schema the original wrote" in message
        assert "schema_version 12" in message and "sessions and summaries" in message
    assert (root / DATABASE).read_bytes() == before
    assert _backups(root) == [] and not (root / DATABASE.with_suffix(".sqlite.converting")).exists()
    with pytest.raises(StoreUnavailableError, match="does not have the schema"):
        preview_original(root, clock.now())  # `dokoro migrate --from-original` says the same


@pytest.mark.parametrize("damage", ["scrambled", "zero bytes"])
def test_a_damaged_or_empty_database_is_one_clear_line_and_is_left_as_it_is(
    tmp_path: Path, clock: FrozenClock, damage: str
) -> None:
    root = original_copy(tmp_path)
    database = root / DATABASE
    if damage == "zero bytes":
        database.write_bytes(b"")
    else:
        data = bytearray(database.read_bytes())
        for at in range(4096, len(data), 97):
            data[at] = (data[at] * 7 + 13) % 256
        database.write_bytes(bytes(data))
    before = database.read_bytes()

    with pytest.raises(StoreUnavailableError) as refused:
        Store.open(root, clock=clock)

    message = str(refused.value)
    assert "\n" not in message
    assert ("is empty (0 bytes)" if damage == "zero bytes" else "is damaged") in message
    assert database.read_bytes() == before and _backups(root) == []


def test_a_huge_questions_file_keeps_the_real_questions(tmp_path: Path, clock: FrozenClock) -> None:
    root = original_copy(tmp_path)
    questions = root / ".mcp" / "questions.json"
    real = json.loads(questions.read_text(encoding="utf-8"))
    padded = [real[0], {"id": "q-pad", "question": "padding", "context": "x" * (30 * 1024 * 1024)}, *real[1:]]
    questions.write_text(json.dumps(padded), encoding="utf-8")  # 30 MB: past the old 20 MB refusal

    with Store.open(root, clock=clock) as store:
        moved = store.moved_in
        kept = {q.id for q in store.working.questions.list(status="all")}

    assert moved is not None
    assert kept == {q["id"] for q in real}
    assert any(".mcp/questions.json: entry 2 skipped (larger than 1 MB)" in note for note in moved.notes)


def test_a_conversion_refused_mid_way_leaves_no_backup_folder(
    tmp_path: Path, clock: FrozenClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The original's servers still hold its file: each refused start leaves nothing behind."""
    root = original_copy(tmp_path)
    before = (root / DATABASE).read_bytes()

    def held(database: Path) -> None:
        raise StoreUnavailableError(f"cannot convert the original dokoro's database {database}: database is locked")

    monkeypatch.setattr(moving_in, "_release_journal", held)
    for _attempt in range(3):
        with pytest.raises(StoreUnavailableError, match="database is locked"):
            Store.open(root, clock=clock)

    assert _backups(root) == [] and (root / DATABASE).read_bytes() == before
    monkeypatch.undo()
    with Store.open(root, clock=clock) as store:  # once the original's servers are stopped
        assert store.moved_in is not None
    assert len(_backups(root)) == 1
