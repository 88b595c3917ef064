"""The one writer of memory rows (services/memories/repository.py), on both backends: the store's
sessions refuse a memory row written any other way, and what the repository writes holds."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from dokoro_store import Store
from dokoro_store.db.write_guard import GuardedWriteError
from dokoro_store.models.memories import Memory as MemoryRow
from dokoro_store.models.memories import MemoryConflict, MemoryEntity, MemoryTombstone
from dokoro_store.semantic.memories import repository
from dokoro_store.semantic.memories.service import MemoryDraft
from sqlalchemy import insert, update
from sqlmodel import col, select


def _row(store: Store, memory_id: str, **values: object) -> MemoryRow:
    now = store.clock.now()
    fields: dict[str, object] = {"type": "fact", "title": "Port", "body": "The api listens on 8080."}
    fields.update(values)
    return MemoryRow(id=memory_id, created_at=now, updated_at=now, **fields)  # type: ignore[arg-type]


def test_a_memory_row_written_outside_the_repository_is_refused_and_nothing_is_stored(any_store: Store) -> None:
    kept = any_store.memories.remember(type="fact", title="Kept", body="The kept memory stays as it is.").memory

    with pytest.raises(GuardedWriteError, match="repository"), any_store.db.write() as session:
        session.add(_row(any_store, "mem_20260101_aaaaaaaaaaaa"))
    with pytest.raises(GuardedWriteError), any_store.db.write() as session:
        row = session.get(MemoryRow, kept.id)
        assert row is not None
        row.state = "deprecated"
    with pytest.raises(GuardedWriteError), any_store.db.write() as session:
        session.execute(update(MemoryRow).where(col(MemoryRow.id) == kept.id).values(title="Changed"))
    with pytest.raises(GuardedWriteError), any_store.db.write() as session:
        session.execute(insert(MemoryEntity.__table__), [{"memory_id": kept.id, "entity": "x"}])  # type: ignore[attr-defined]
    with pytest.raises(GuardedWriteError), any_store.db.write() as session:
        session.add(MemoryConflict(pair_hash="p", new_id=kept.id, old_id=kept.id, shown_at=any_store.clock.now()))

    assert any_store.memories.get(kept.id) == kept
    with any_store.db.read() as session:
        assert session.exec(select(MemoryRow.id)).all() == [kept.id]
        assert session.exec(select(MemoryConflict)).all() == []
        assert session.exec(select(MemoryEntity)).all() == []


def test_a_change_made_after_a_repository_call_is_still_refused(any_store: Store) -> None:
    with pytest.raises(GuardedWriteError), any_store.db.write() as session:
        row = _row(any_store, "mem_20260101_bbbbbbbbbbbb")
        repository.create(session, row)
        stored = session.get(MemoryRow, row.id)
        assert stored is not None
        repository.set_state(session, stored, "deprecated", reason="no longer true", now=any_store.clock.now())
        stored.title = "Edited outside"  # flushed at commit, outside the repository
    with any_store.db.read() as session:
        assert session.get(MemoryRow, "mem_20260101_bbbbbbbbbbbb") is None  # the transaction rolled back


def test_the_repositorys_writes_hold_entities_pairs_states_and_purge(any_store: Store) -> None:
    now = any_store.clock.now()
    with any_store.db.write() as session:
        first = _row(any_store, "mem_20260101_cccccccccccc", entities=["api", "port"])
        second = _row(any_store, "mem_20260101_dddddddddddd", body="The api listens on 9090.", entities=["api"])
        repository.create_many(session, [first, second])
        key = repository.pair_hash(second.id, first.id)
        repository.record_pair(
            session, pair_hash=key, new_id=second.id, old_id=first.id, shared=["api"], similarity=0.9, shown_at=now
        )
    with any_store.db.write() as session:
        old = session.get(MemoryRow, first.id)
        new = session.get(MemoryRow, second.id)
        assert old is not None and new is not None
        repository.supersede(session, old, by=new.id, now=now, agent="agent-a")
        repository.rewrite(session, new, {"supersedes": old.id, "entities": ["api", "listen"]})
        pair = session.get(MemoryConflict, key)
        repository.record_verdict(session, pair, "supersede", new_id=new.id, old_id=old.id, now=now, by="agent-a")
    with any_store.db.read() as session:
        archived = session.get(MemoryRow, first.id)
        assert archived is not None
        assert (archived.state, archived.superseded_by, archived.state_changed_by) == ("archived", second.id, "agent-a")
        entities = session.exec(select(MemoryEntity.entity).where(col(MemoryEntity.memory_id) == second.id)).all()
        assert sorted(entities) == ["api", "listen"]
        ledger = session.get(MemoryConflict, key)
        assert ledger is not None and (ledger.verdict, ledger.decided_by) == ("supersede", "agent-a")

    with any_store.db.write() as session:
        row = session.get(MemoryRow, first.id)
        assert row is not None
        repository.purge(session, row, now=any_store.clock.now(), agent="agent-a")
    with any_store.db.read() as session:
        assert session.get(MemoryRow, first.id) is None
        tomb = session.get(MemoryTombstone, first.id)  # what was purged, when and by whom: no text
        assert tomb is not None and (tomb.revision, tomb.purged_by) == (archived.revision, "agent-a")
        assert session.exec(select(MemoryConflict)).all() == []
        assert session.exec(select(MemoryEntity.entity).where(col(MemoryEntity.memory_id) == first.id)).all() == []


def test_a_file_made_memory_is_written_once_whatever_the_retries(any_store: Store) -> None:
    now = any_store.clock.now()
    memory_id = repository.new_id(now, "file", "memories/fact/port.md", "the text")
    assert memory_id == repository.new_id(now, "file", "memories/fact/port.md", "the text")
    assert memory_id != repository.new_id(now, "file", "memories/fact/port.md", "another text")
    with any_store.db.write() as session:
        written = repository.insert_new(session, _row(any_store, memory_id))
    with any_store.db.write() as session:
        again = repository.insert_new(session, _row(any_store, memory_id, title="A retry"))
    assert (written.title, again.title) == ("Port", "Port")
    with any_store.db.read() as session:
        assert session.exec(select(MemoryRow.id)).all() == [memory_id]


_ID = re.compile(r"mem_\d{8}_[0-9a-f]{12}")


def test_every_way_of_writing_a_memory_gives_an_id_of_one_format_and_old_ids_still_work(
    any_store: Store, root: Path
) -> None:
    remembered = any_store.memories.remember(type="fact", title="CI", body="The CI runs on every push.").memory
    (imported,) = any_store.memories.remember_many([MemoryDraft(type="fact", title="Port", body="It is 8080.")])
    note = root / "memories" / "fact" / "uv.md"
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text("# We use uv\n\nEvery package is managed with uv; no pip.\n", encoding="utf-8")
    (created,) = [c for c in any_store.memories.sync_files().changes if c.action == "created"]
    assert created.new_id is not None
    edited = next((root / "memories" / "fact").glob(f"{remembered.id}-*.md"))
    edited.write_text(edited.read_text(encoding="utf-8").replace("every push", "every push to main"), encoding="utf-8")
    (version,) = [c for c in any_store.memories.sync_files().changes if c.action == "new_version"]
    assert version.new_id is not None
    for memory_id in (remembered.id, imported.id, created.new_id, version.new_id):
        assert _ID.fullmatch(memory_id), memory_id

    # Ids written before (8 and 10 hex digits) are read, changed and judged as they are.
    with any_store.db.write() as session:
        repository.create_many(
            session,
            [
                _row(any_store, "mem_20250101_2a5a02ab", entities=["api"]),
                _row(any_store, "mem_20250101_2a5a02ab91", body="The api listens on 9090.", entities=["api"]),
            ],
        )
    assert any_store.memories.get("mem_20250101_2a5a02ab").title == "Port"
    done = any_store.memories.verdict("mem_20250101_2a5a02ab91", "mem_20250101_2a5a02ab", "supersede")
    assert (done.old.state, done.old.superseded_by) == ("archived", "mem_20250101_2a5a02ab91")
    forgotten, _ = any_store.memories.forget("mem_20250101_2a5a02ab91", reason="moved to 9443")
    assert (forgotten.state, forgotten.state_reason) == ("deprecated", "moved to 9443")
