"""Memories as markdown files, on both backends: rendering, and every reconcile case of a
person's hand (edit, edit of an archived memory, state edit, delete, both changed, new file,
unreadable file, move), the dictionary of entity synonyms, and the rebuild from files."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from dokoro_store import FrozenClock, NotFoundError, Store
from dokoro_store.models.memories import MemoryConflict
from dokoro_store.semantic.memories.files.markdown import parse_memory_file
from sqlalchemy import text
from sqlmodel import select


def _fact(store: Store, title: str, body: str, entities: list[str] | None = None, **extra):
    return store.memories.remember(type="fact", title=title, body=body, entities=entities or [], **extra).memory


def _file(root: Path, memory_id: str) -> Path:
    found = sorted((root / "memories").glob(f"*/{memory_id}*.md"))
    assert len(found) == 1, found
    return found[0]


def _edit(path: Path, old: str, new: str) -> None:
    content = path.read_text(encoding="utf-8")
    assert old in content
    # Tests change the size too: a same-size rewrite in the same clock tick keeps the stat.
    path.write_text(content.replace(old, new), encoding="utf-8")


@pytest.fixture
def shared_url(root: Path, database_url: str | None) -> str:
    """The database of ``any_store`` as a URL another folder (another machine) can open."""
    return database_url or f"sqlite:///{root / '.dokoro' / 'db' / 'dokoro.sqlite'}"


@pytest.fixture
def machine_b(tmp_path: Path, any_store: Store, shared_url: str, clock: FrozenClock) -> Iterator[Store]:
    """A second machine: its own folder, the same database."""
    with Store.open(tmp_path / "machine-b", database_url=shared_url, clock=clock) as opened:
        yield opened


# ---------------------------------------------------------------------- rendering
def test_every_memory_is_rendered_to_a_markdown_file_that_reads_back_as_its_row(any_store: Store, root: Path) -> None:
    memory = _fact(any_store, "Login sessions use JWT", "auth/session.ts keeps stateless JWT tokens.", ["Auth"])

    path = _file(root, memory.id)
    assert path.relative_to(root).as_posix() == f"memories/fact/{memory.id}-login-sessions-use-jwt.md"
    content = path.read_text(encoding="utf-8")
    assert content.startswith(f"---\nid: {memory.id}\ntype: fact\nstate: active\ntrust: agent-inferred\n")
    assert "entities: [auth]\n" in content
    assert content.endswith("---\n# Login sessions use JWT\n\nauth/session.ts keeps stateless JWT tokens.\n")
    fields = parse_memory_file(content)
    assert (fields.id, fields.title, fields.entities, fields.created) == (
        memory.id,
        memory.title,
        ("auth",),
        "2026-06-10T22:23:15Z",
    )
    assert (root / "memories" / "dictionary.md").is_file()


def test_every_write_path_renders_and_recall_writes_no_file(any_store: Store, root: Path) -> None:
    old = _fact(any_store, "Sessions", "Login sessions are JWT tokens.")
    new = any_store.memories.remember(
        type="fact", title="Sessions now", body="Login sessions are cookies.", supersedes=old.id
    ).memory
    assert "state: archived\n" in _file(root, old.id).read_text()
    assert f"superseded_by: {new.id}\n" in _file(root, old.id).read_text()
    assert f"supersedes: {old.id}\n" in _file(root, new.id).read_text()

    before = _file(root, new.id).stat()
    assert [h.memory.id for h in any_store.memories.recall("login sessions cookies")] == [new.id]
    assert any_store.memories.get(new.id).recall_count == 1
    after = _file(root, new.id).stat()
    assert (after.st_mtime_ns, after.st_size) == (before.st_mtime_ns, before.st_size)  # recall counts stay in the db

    any_store.memories.forget(new.id, reason="moved to tokens again")
    content = _file(root, new.id).read_text()
    assert "state: deprecated\n" in content and "state_reason: " in content

    any_store.memories.forget(old.id, purge=True, confirm=True)
    assert not list((root / "memories").glob(f"*/{old.id}*.md"))


def test_a_bulk_import_is_rendered_too(any_store: Store, root: Path) -> None:
    from dokoro_store.semantic.memories.service import MemoryDraft

    imported = any_store.memories.remember_many(
        [MemoryDraft(type="fact", title=f"Imported {i}", body=f"Imported memory {i}.") for i in range(3)]
    )

    assert all("trust: imported\n" in _file(root, m.id).read_text() for m in imported)


def test_a_memory_written_on_another_machine_is_rendered_into_this_folder_on_its_next_call(
    any_store: Store, machine_b: Store, root: Path
) -> None:
    theirs = _fact(machine_b, "Deploys on Fridays", "We never deploy on Fridays.")
    assert not list((root / "memories").glob(f"*/{theirs.id}*.md"))

    any_store.memories.status()

    assert "We never deploy on Fridays." in _file(root, theirs.id).read_text()
    machine_b.memories.forget(theirs.id, reason="we deploy any day now")
    any_store.memories.get(theirs.id)
    assert "state: deprecated\n" in _file(root, theirs.id).read_text()


def test_many_rows_changed_elsewhere_are_rendered_over_the_next_calls_oldest_first(
    any_store: Store, machine_b: Store, root: Path
) -> None:
    from dokoro_store.semantic.memories.service import MemoryService

    theirs = [_fact(machine_b, f"Remote {i}", f"Remote memory number {i}.").id for i in range(5)]
    here = MemoryService(
        any_store.db, any_store.clock, any_store.docs, any_store.search, paths=any_store.paths, render_batch=2
    )

    rendered = [here.sync_files().rendered for _ in range(4)]

    assert rendered == [2, 2, 1, 0]
    assert all(_file(root, memory_id).is_file() for memory_id in theirs)


def test_a_memory_purged_on_another_machine_loses_its_file_here_unless_it_was_edited(
    any_store: Store, machine_b: Store, root: Path
) -> None:
    gone = _fact(any_store, "Gone", "This one is purged elsewhere.")
    edited = _fact(any_store, "Edited", "This one is purged elsewhere but edited here.")
    machine_b.memories.forget(gone.id, purge=True, confirm=True)
    machine_b.memories.forget(edited.id, purge=True, confirm=True)
    _edit(_file(root, edited.id), "edited here.", "edited here, and kept.")

    synced = any_store.memories.sync_files()

    assert not list((root / "memories").glob(f"*/{gone.id}*.md"))
    # The purge stands (a purged memory never comes back); the edit is kept, as a new memory.
    [change] = synced.changes
    assert change.action == "created" and "was purged" in change.message
    assert any_store.memories.get(change.memory_id).body == "This one is purged elsewhere but edited here, and kept."
    with pytest.raises(NotFoundError):
        any_store.memories.get(edited.id)


def test_a_damaged_manifest_is_rebuilt_and_no_edit_is_lost(any_store: Store, root: Path) -> None:
    memory = _fact(any_store, "Manifest", "The manifest is only a cache.")
    assert any_store.memories._files is not None
    any_store.memories._files.manifest_file.write_bytes(b"not a database at all" * 100)
    _edit(_file(root, memory.id), "only a cache.", "only a cache, rebuilt when damaged.")

    [change] = any_store.memories.sync_files().changes

    # Without the manifest there is no telling which side changed: both are kept, and it says so.
    assert (change.action, change.memory_id) == ("kept_both", memory.id)
    assert any_store.memories.get(memory.id).state == "active"
    assert any_store.memories.get(str(change.new_id)).body == "The manifest is only a cache, rebuilt when damaged."
    assert any_store.memories.sync_files().quiet


def test_a_manifest_deleted_while_the_process_keeps_it_open_is_rebuilt_not_written_through_the_old_handle(
    any_store: Store, root: Path
) -> None:
    memory = _fact(any_store, "Kept open", "The process keeps its manifest open between calls.")
    files = any_store.memories._files
    assert files is not None
    files.manifest_file.unlink()  # e.g. a person clearing .dokoro/index
    _edit(_file(root, memory.id), "between calls.", "between calls, and reopens it.")

    [change] = any_store.memories.sync_files().changes

    # A fresh manifest on disk (the kept handle pointed at the deleted file), rebuilt from the files.
    assert files.manifest_file.is_file()
    assert (change.action, change.memory_id) == ("kept_both", memory.id)
    assert any_store.memories.get(str(change.new_id)).body.endswith("between calls, and reopens it.")
    assert any_store.memories.sync_files().quiet


# ---------------------------------------------------------------------- a person's edits
def test_an_edit_makes_a_user_stated_new_version_and_the_gate_runs_on_it(any_store: Store, root: Path) -> None:
    neighbour = _fact(any_store, "Cache", "The api cache lives in redis with a ten minute ttl.", ["cache"])
    memory = _fact(any_store, "Cache ttl", "The cache ttl is five minutes for the api.", ["cache"])
    path = _file(root, memory.id)
    _edit(path, "The cache ttl is five minutes for the api.", "The api cache lives in redis with a ten minute ttl now.")

    synced = any_store.memories.sync_files()

    [change] = synced.changes
    assert (change.action, change.memory_id, change.fields) == ("new_version", memory.id, ["body"])
    new = any_store.memories.get(str(change.new_id))
    assert (new.trust, new.state, new.supersedes, new.body) == (
        "user-stated",
        "active",
        memory.id,
        "The api cache lives in redis with a ten minute ttl now.",
    )
    old = any_store.memories.get(memory.id)
    assert (old.state, old.superseded_by) == ("archived", new.id)
    assert [c.memory.id for c in change.conflicts] == [neighbour.id]  # the gate ran on the edit
    # The edited file shows its (archived) row again; the new version has a file of its own.
    assert "state: archived\n" in path.read_text() and "five minutes" in path.read_text()
    assert "ten minute ttl now" in _file(root, new.id).read_text()
    assert any_store.memories.sync_files().quiet


def test_editing_an_archived_memorys_file_brings_it_back_as_active(any_store: Store, root: Path) -> None:
    old = _fact(any_store, "Sessions", "Login sessions are JWT tokens.")
    newer = any_store.memories.remember(
        type="fact", title="Sessions now", body="Login sessions are cookies.", supersedes=old.id
    ).memory
    _edit(_file(root, old.id), "Login sessions are JWT tokens.", "Login sessions are JWT tokens again, signed.")

    [change] = any_store.memories.sync_files().changes

    # That same memory is back (no new id), with the file's text, vouched for by the person.
    assert (change.action, change.memory_id, change.state, change.new_id) == ("revived", old.id, "active", None)
    back = any_store.memories.get(old.id)
    assert (back.state, back.body, back.trust) == (
        "active",
        "Login sessions are JWT tokens again, signed.",
        "user-stated",
    )
    assert [h.memory.id for h in any_store.memories.recall("JWT tokens signed")][:1] == [old.id]
    assert back.superseded_by == newer.id  # the chain it had is kept
    assert any_store.memories.status().total == 2
    assert "Login sessions are JWT tokens again, signed." in _file(root, old.id).read_text()


def test_setting_the_state_in_the_front_matter_changes_the_same_memory(any_store: Store, root: Path) -> None:
    old = _fact(any_store, "Sessions", "Login sessions are JWT tokens.")
    any_store.memories.remember(type="fact", title="Sessions now", body="Cookies.", supersedes=old.id)
    _edit(_file(root, old.id), "state: archived", "state: active")

    [change] = any_store.memories.sync_files().changes

    assert (change.action, change.memory_id, change.state) == ("state_changed", old.id, "active")
    assert any_store.memories.get(old.id).state == "active"
    _edit(_file(root, old.id), "state: active", "state: deprecated")
    any_store.memories.status()
    assert any_store.memories.get(old.id).state == "deprecated"


def test_deleting_a_file_deprecates_its_memory_and_the_file_stays_gone(any_store: Store, root: Path) -> None:
    memory = _fact(any_store, "Old build", "The build uses make.")
    _file(root, memory.id).unlink()

    [change] = any_store.memories.sync_files().changes

    assert (change.action, change.memory_id) == ("deprecated", memory.id)
    kept = any_store.memories.get(memory.id)  # never a purge
    assert (kept.state, kept.state_reason) == ("deprecated", "file deleted")
    any_store.memories.recall("build make")
    assert not list((root / "memories").glob(f"*/{memory.id}*.md"))
    # A later change of the memory renders it again; `memory edit` asks for its file too.
    assert "state: deprecated" in any_store.memories.file_of(memory.id).read_text()


def test_when_the_file_and_the_database_both_changed_both_are_kept_and_the_answer_says_so(
    any_store: Store, machine_b: Store, root: Path
) -> None:
    memory = _fact(any_store, "Queue", "Jobs go through the redis queue.", ["queue"])
    # Machine B changes the row while a person here edits the file (before this folder saw B's change).
    machine_b.memories.forget(memory.id, reason="we moved to a database queue")
    _edit(_file(root, memory.id), "Jobs go through the redis queue.", "Jobs go through the redis queue, two workers.")

    synced = any_store.memories.sync_files()

    [change] = synced.changes
    assert (change.action, change.memory_id) == ("kept_both", memory.id)
    assert "both changed" in change.message and str(change.new_id) in change.message
    theirs, mine = any_store.memories.get(memory.id), any_store.memories.get(str(change.new_id))
    assert (theirs.state, theirs.state_reason) == ("deprecated", "we moved to a database queue")
    assert (mine.state, mine.trust, mine.body) == (
        "active",
        "user-stated",
        "Jobs go through the redis queue, two workers.",
    )
    assert "state: deprecated" in _file(root, memory.id).read_text()
    assert "two workers" in _file(root, mine.id).read_text()
    with any_store.db.read() as session:  # the pair waits in the conflict ledger for a verdict
        pairs = session.exec(select(MemoryConflict).where(MemoryConflict.new_id == mine.id)).all()
    assert [(p.old_id, p.verdict) for p in pairs] == [(memory.id, None)]


def test_a_new_file_becomes_a_memory_and_keeps_its_name(any_store: Store, root: Path) -> None:
    _fact(any_store, "Anything", "So that the folder exists.")
    note = root / "memories" / "decision" / "use-uv.md"
    note.parent.mkdir(exist_ok=True)
    note.write_text("# We use uv\n\nEvery package is managed with uv; no pip.\n", encoding="utf-8")

    [change] = any_store.memories.sync_files().changes

    assert change.action == "created"
    memory = any_store.memories.get(change.memory_id)
    assert (memory.type, memory.trust, memory.title) == ("decision", "user-stated", "We use uv")
    assert note.read_text().startswith(f"---\nid: {memory.id}\ntype: decision\n")  # same file, front matter added
    assert any_store.memories.sync_files().quiet


def test_an_unreadable_file_is_reported_and_never_written_over(any_store: Store, machine_b: Store, root: Path) -> None:
    memory = _fact(any_store, "Ports", "The api listens on 8080.")
    path = _file(root, memory.id)
    path.write_text(path.read_text().replace("type: fact", "type: [broken"), encoding="utf-8")
    broken = path.read_text()

    first = any_store.memories.sync_files()
    assert [p.path for p in first.problems] == [path.relative_to(root).as_posix()]
    machine_b.memories.forget(memory.id, reason="port changed")  # a change this folder must not write over
    any_store.memories.sync_files()
    assert path.read_text() == broken

    path.write_text(broken.replace("type: [broken", "type: fact"), encoding="utf-8")
    fixed = any_store.memories.sync_files()
    assert not fixed.problems
    assert "state: deprecated" in _file(root, memory.id).read_text()


def test_a_moved_file_stays_its_memorys_file(any_store: Store, root: Path) -> None:
    memory = _fact(any_store, "Moved", "This memory's file is renamed by hand.")
    path = _file(root, memory.id)
    path.rename(path.with_name("renamed-by-hand.md"))

    assert any_store.memories.sync_files().quiet
    assert any_store.memories.get(memory.id).state == "active"
    any_store.memories.forget(memory.id, reason="done")
    assert "state: deprecated" in (path.with_name("renamed-by-hand.md")).read_text()


def _edit_in_place(path: Path, old: str, new: str) -> None:
    """Rewrite ``path`` in place (same inode, the folder's time does not move), as an editor may."""
    with path.open("r+", encoding="utf-8") as handle:
        content = handle.read().replace(old, new)
        handle.seek(0)
        handle.write(content)
        handle.truncate()


def test_a_workspace_moved_whole_keeps_its_manifest_so_an_edit_made_meanwhile_is_an_edit(
    tmp_path: Path, clock: FrozenClock
) -> None:
    before, after = tmp_path / "before" / "dokoro", tmp_path / "after" / "dokoro"
    with Store.open(before, clock=clock) as store:
        memory = _fact(store, "Cache ttl", "The cache ttl is five minutes for the api.")
    after.parent.mkdir()
    shutil.move(before, after)  # the project folder moved, its store inside it
    _edit(_file(after, memory.id), "five minutes", "seven minutes")

    with Store.open(after, clock=clock) as store:
        [change] = store.memories.sync_files().changes
        # The manifest still describes the files: the person's edit is a new version, not a
        # "both changed" conflict, and no other file is read again.
        assert (change.action, change.memory_id, change.fields) == ("new_version", memory.id, ["body"])
        assert store.memories.get(str(change.new_id)).body == "The cache ttl is seven minutes for the api."
        assert store.memories.sync_files().quiet


def test_a_manifest_written_under_the_databases_url_by_an_older_version_is_kept(root: Path, clock: FrozenClock) -> None:
    import sqlite3

    with Store.open(root, clock=clock) as store:
        memory = _fact(store, "Cache ttl", "The cache ttl is five minutes for the api.")
        assert store.memories._files is not None
        manifest, url = store.memories._files.manifest_file, store.db.url.render_as_string(hide_password=True)
    with sqlite3.connect(manifest) as connection:  # what earlier versions wrote
        connection.execute("UPDATE meta SET value = ? WHERE key = 'database'", (url,))
    _edit(_file(root, memory.id), "five minutes", "seven minutes")

    with Store.open(root, clock=clock) as store:
        [change] = store.memories.sync_files().changes
        assert (change.action, change.memory_id) == ("new_version", memory.id)
    with sqlite3.connect(manifest) as connection:
        [(renamed,)] = connection.execute("SELECT value FROM meta WHERE key = 'database'").fetchall()
    assert renamed != url and renamed.endswith("dokoro.sqlite")


def test_removing_the_whole_folder_renders_it_again_without_deprecating(any_store: Store, root: Path) -> None:
    memory = _fact(any_store, "Kept", "Removing the folder is not forgetting.")
    shutil.rmtree(root / "memories")

    assert any_store.memories.sync_files().quiet
    assert any_store.memories.get(memory.id).state == "active"
    assert _file(root, memory.id).is_file()


def test_an_in_place_edit_is_found_by_the_rolling_sweep_in_a_large_folder(any_store: Store, root: Path) -> None:
    from dokoro_store.semantic.memories.service import MemoryService

    ids = [_fact(any_store, f"Note {i}", f"Note number {i} of a large folder.").id for i in range(6)]
    # A service that stats only two files per call, as a 100k-file folder would stat a window.
    small = MemoryService(
        any_store.db, any_store.clock, any_store.docs, any_store.search, paths=any_store.paths, sweep=2
    )
    small.sync_files()
    path = _file(root, ids[0])
    _edit_in_place(path, "Note number 0", "Note number zero")

    changes = [small.sync_files().changes for _ in range(3)]  # 6 files / 2 per call

    assert [c.memory_id for batch in changes for c in batch] == [ids[0]]


def test_a_memory_call_sweeps_a_large_folder_when_due_and_an_explicit_sync_always(
    any_store: Store, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dokoro_store.semantic.memories.files import sync as memory_files
    from dokoro_store.semantic.memories.service import MemoryService

    ids = [_fact(any_store, f"Note {i}", f"Note number {i} of a large folder.").id for i in range(6)]
    # A "large" folder (more than SWEEP_ALWAYS files) whose sweep is never due again in this test.
    monkeypatch.setattr(memory_files, "SWEEP_ALWAYS", 2)
    monkeypatch.setattr(memory_files, "SWEEP_INTERVAL", 10_000.0)
    service = MemoryService(any_store.db, any_store.clock, any_store.docs, any_store.search, paths=any_store.paths)
    service.sync_files()  # swept just now
    path = _file(root, ids[0])
    _edit_in_place(path, "Note number 0", "Note number zero")

    # A memory call's own reconcile does not sweep again before it is due: the edit waits.
    service.remember(type="fact", title="Unrelated", body="Something else entirely.")
    assert "Note number 0 of" in service.get(ids[0]).body
    # An explicit sync always sweeps.
    assert [c.memory_id for c in service.sync_files().changes] == [ids[0]]


def test_a_memory_call_in_a_large_folder_sweeps_its_share_of_the_rate_and_sees_an_edit_in_time(
    any_store: Store, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dokoro_store.semantic.memories.files import sync as memory_files
    from dokoro_store.semantic.memories.service import MemoryService

    ids = [_fact(any_store, f"Note {i}", f"Note number {i} of a large folder.").id for i in range(6)]
    monkeypatch.setattr(memory_files, "SWEEP_ALWAYS", 2)  # a "large" folder
    now = [1000.0]
    monkeypatch.setattr(memory_files, "time", SimpleNamespace(monotonic=lambda: now[0]))
    sizes: list[int] = []
    sweep_files = memory_files.MemoryFiles._sweep_files

    def spy(self, run, subdirs, found, files, **kw):  # type: ignore[no-untyped-def]
        sizes.append(files)
        return sweep_files(self, run, subdirs, found, files, **kw)

    monkeypatch.setattr(memory_files.MemoryFiles, "_sweep_files", spy)
    # Six files per second (``sweep`` files per SWEEP_INTERVAL).
    service = MemoryService(
        any_store.db, any_store.clock, any_store.docs, any_store.search, paths=any_store.paths, sweep=6
    )
    service.sync_files()  # a whole window, just now
    path = _file(root, ids[0])
    _edit_in_place(path, "Note number 0", "Note number zero")

    # No time has passed: a memory call stats no file, and the edit waits.
    assert "Note number 0 of" in service.get(ids[0]).body
    # A call every eighth of a second stats 0.75 files on average (never the whole window at once),
    # and within a second of calls every file was looked at: the edit is seen.
    sizes.clear()
    for _ in range(8):
        now[0] += 0.125
        service.get(ids[1])
    assert max(sizes) == 1 and sum(sizes) == 6
    assert service.get(ids[0]).state == "archived"  # the edit made a new version


# ---------------------------------------------------------------------- dictionary
def test_the_dictionary_names_entities_on_every_write_and_query(any_store: Store, root: Path) -> None:
    before = _fact(any_store, "Backups", "Nightly backups of the pg cluster.", ["PG"])
    (root / "memories" / "dictionary.md").write_text(
        "# Entities\n\n- postgres: the team database (aka: pg, PostgreSQL)\n\n```\n- example (aka: pg)\n```\n",
        encoding="utf-8",
    )

    after = _fact(any_store, "Vacuum", "Autovacuum runs on the pg cluster every night.", ["postgresql", "pg"])

    assert after.entities == ["postgres"]
    assert any_store.memories.get(before.id).entities == ["pg"]  # stored before the entry; matched by name
    found = {h.memory.id for h in any_store.memories.recall("nightly pg cluster", entity="PostgreSQL")}
    assert found == {before.id, after.id}
    assert "entities: [postgres]" in _file(root, after.id).read_text()


def test_a_synonym_in_a_query_finds_the_memories_written_under_the_name(any_store: Store, root: Path) -> None:
    memory = _fact(any_store, "Replicas", "The postgres cluster keeps three replicas.", ["postgres"])

    def words(query: str) -> str:
        [hit] = [h for h in any_store.memories.recall(query) if h.memory.id == memory.id]
        return hit.reason

    assert "matched terms" not in words("pg")
    (root / "memories" / "dictionary.md").write_text("- postgres (aka: pg, the team db)\n", encoding="utf-8")

    assert "matched terms: postgres" in words("pg")
    assert "matched terms: postgres" in words("The Team  DB")
    assert any_store.memories._files is not None
    expand = any_store.memories._files.dictionary.expand
    assert (expand("pg pool"), expand("postgres and pg"), expand("pgbouncer")) == (
        "pg pool postgres",
        "postgres and pg",
        "pgbouncer",
    )


# ---------------------------------------------------------------------- rebuild from files
def test_reindex_rebuilds_rows_and_index_from_the_files(any_store: Store, root: Path) -> None:
    kept = _fact(any_store, "Timeouts", "The http client times out after thirty seconds.")
    lost = _fact(any_store, "Retries", "Failed jobs are retried three times with backoff.")
    same = _fact(any_store, "Pools", "The pool holds ten connections.")
    with any_store.db.write() as session:  # the database loses a row
        session.execute(text("DELETE FROM memories WHERE id = :id"), {"id": lost.id})
    _edit(_file(root, kept.id), "thirty seconds", "sixty seconds")  # a person's edit, not read yet
    progress: list[tuple[int, int]] = []

    report = any_store.memories.reindex_from_files(progress=lambda done, total, _what: progress.append((done, total)))

    assert (report.files, report.restored, report.updated, report.unchanged) == (3, 1, 1, 1)
    assert progress[-1] == (3, 3)
    [version] = [c for c in report.changes if c.action == "new_version"]
    assert version.memory_id == kept.id
    assert any_store.memories.get(version.new_id or "").body == "The http client times out after sixty seconds."
    assert any_store.memories.get(kept.id).state == "archived"
    assert any_store.memories.get(lost.id).title == "Retries"
    assert any_store.memories.get(same.id).title == "Pools"
    assert [h.memory.id for h in any_store.memories.recall("retried with backoff")][:1] == [lost.id]
    assert any_store.memories.sync_files().quiet


def test_a_folder_of_memory_files_restores_its_memories_into_an_empty_database(
    any_store: Store, root: Path, tmp_path: Path, clock: FrozenClock
) -> None:
    memory = _fact(any_store, "Clone", "A git clone brings the memories along.", ["git"])
    clone = tmp_path / "clone"
    shutil.copytree(root / "memories", clone / "memories")

    with Store.open(clone, clock=clock) as fresh:
        restored = fresh.memories.get(memory.id)

    assert (restored.title, restored.entities, restored.trust) == ("Clone", ["git"], "agent-inferred")


_EDIT_ELSEWHERE = """
import sys
from pathlib import Path
from sqlalchemy import text
from dokoro_store import Store
folder, url, memory_id = sys.argv[1:]
with Store.open(Path(folder), database_url=url) as store, store.db.write() as session:
    session.execute(text("UPDATE memories SET body = 'Edited by the other process.' WHERE id = :id"), {"id": memory_id})
"""


def test_a_change_by_another_process_right_after_a_remember_is_not_hidden_by_its_render(
    any_store: Store, shared_url: str, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process changes the memory (same state) between this remember's commit and its
    file's render: the render leaves it to the next sync, which writes the file as the row stands."""
    import subprocess
    import sys

    files = any_store.memories._files
    assert files is not None
    render = files.render_written

    def edited_first(rows):  # type: ignore[no-untyped-def]
        subprocess.run(
            [sys.executable, "-c", _EDIT_ELSEWHERE, str(tmp_path / "other"), shared_url, rows[0].id], check=True
        )
        return render(rows)

    monkeypatch.setattr(files, "render_written", edited_first)
    memory = _fact(any_store, "Deploys", "We deploy on Fridays.")
    monkeypatch.setattr(files, "render_written", render)

    any_store.memories.get(memory.id)  # the next call's sync
    assert "Edited by the other process." in _file(root, memory.id).read_text(encoding="utf-8")


def test_a_memory_call_looks_purges_up_at_most_once_per_interval_and_sync_files_always(
    any_store: Store, machine_b: Store, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dokoro_store.semantic.memories.files import sync as memory_files

    now = [1000.0]
    monkeypatch.setattr(memory_files, "time", SimpleNamespace(monotonic=lambda: now[0]))
    kept = _fact(any_store, "Kept", "This one stays.")
    gone = _fact(any_store, "Gone soon", "This one is purged elsewhere.")
    any_store.memories.get(kept.id)  # a memory call: purges looked up just now
    machine_b.memories.forget(gone.id, purge=True, confirm=True)

    now[0] += memory_files.PURGE_EVERY / 2
    any_store.memories.get(kept.id)
    assert _file(root, gone.id).is_file()  # within the interval: not looked up yet

    now[0] += memory_files.PURGE_EVERY
    any_store.memories.get(kept.id)
    assert not list((root / "memories").glob(f"*/{gone.id}*.md"))  # past it: the file goes

    again = _fact(any_store, "Gone at once", "Purged elsewhere, then a person syncs.")
    machine_b.memories.forget(again.id, purge=True, confirm=True)
    any_store.memories.sync_files()  # a person's sync always looks purges up
    assert not list((root / "memories").glob(f"*/{again.id}*.md"))
