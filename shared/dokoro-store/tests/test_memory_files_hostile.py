"""Memory files are a person's, so hostile input: each file that once broke the store, on both
backends. A symlinked file or type folder, an alias bomb, a 50 MB file, a front matter that never
closes, a secret in the front matter, a delete during a call, a call failing part-way and retried,
and another real process stuck on the folder: each gives a clear report, nothing is read from
outside the store, nothing is duplicated, and the other calls go on."""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from dokoro_store import FrozenClock, Store
from dokoro_store.models.memories import Memory as MemoryRow
from sqlmodel import col, func, select

OUTSIDE_TEXT = "The outside secret plan: nobody may read this."


def _fact(store: Store, title: str, body: str) -> str:
    return store.memories.remember(type="fact", title=title, body=body).memory.id


def _file(root: Path, memory_id: str) -> Path:
    found = sorted((root / "memories").glob(f"*/{memory_id}*.md"))
    assert len(found) == 1, found
    return found[0]


def _count(store: Store, **where: str) -> int:
    with store.db.read() as session:
        query = select(func.count()).select_from(MemoryRow)
        for name, value in where.items():
            query = query.where(col(getattr(MemoryRow, name)) == value)
        return int(session.exec(query).one())


def _nothing_from_outside(store: Store) -> None:
    with store.db.read() as session:
        bodies = list(session.exec(select(MemoryRow.body)))
    assert not any("outside secret" in body for body in bodies)


def _problems(store: Store) -> dict[str, str]:
    return {p.path: p.reason for p in store.memories.file_problems()}


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    (folder / "plan.md").write_text(f"---\ntype: fact\n---\n# Outside plan\n\n{OUTSIDE_TEXT}\n", encoding="utf-8")
    return folder


# ---------------------------------------------------------------------- symlinks
def test_a_memory_file_replaced_by_a_symlink_is_reported_never_read_nor_replaced(
    any_store: Store, root: Path, outside: Path
) -> None:
    memory_id = _fact(any_store, "Deploys", "We deploy with the blue-green script.")
    path = _file(root, memory_id)
    path.unlink()
    path.symlink_to(outside / "plan.md")

    synced = any_store.memories.sync_files()
    any_store.memories.forget(memory_id, reason="a row change the folder would render")  # a write renders it
    _fact(any_store, "Another", "Another memory written meanwhile.")

    assert path.is_symlink() and path.readlink() == outside / "plan.md"  # the link is left alone
    assert (outside / "plan.md").read_text(encoding="utf-8").endswith(f"{OUTSIDE_TEXT}\n")
    assert any("symlink" in p.reason for p in synced.problems if p.path.endswith(path.name))
    assert "symlink" in _problems(any_store)[path.relative_to(root).as_posix()]
    assert any_store.memories.get(memory_id).body == "We deploy with the blue-green script."
    assert _count(any_store) == 2
    _nothing_from_outside(any_store)


def test_a_new_file_linked_to_a_file_outside_is_not_imported(any_store: Store, root: Path, outside: Path) -> None:
    _fact(any_store, "Seed", "A first memory makes the folders.")
    link = root / "memories" / "fact" / "x.md"
    link.symlink_to(outside / "plan.md")

    first = any_store.memories.sync_files()
    _fact(any_store, "Later", "A later memory.")

    assert link.is_symlink()
    assert "symlink" in {p.path: p.reason for p in first.problems}["memories/fact/x.md"]
    assert "symlink" in _problems(any_store)["memories/fact/x.md"]
    assert _count(any_store) == 2
    _nothing_from_outside(any_store)


def test_a_type_folder_linked_out_is_never_read_or_written_and_a_retried_call_duplicates_nothing(
    any_store: Store, root: Path, outside: Path
) -> None:
    _fact(any_store, "Seed", "A first memory makes the folders.")
    (root / "memories" / "lesson").symlink_to(outside, target_is_directory=True)
    hand = root / "memories" / "fact" / "hand.md"
    hand.write_text("# Hand written\n\nA person wrote this memory by hand.\n", encoding="utf-8")

    done = any_store.memories.remember(type="lesson", title="Linked out", body="A lesson whose folder is a link.")
    again = any_store.memories.remember(type="lesson", title="Linked out", body="A lesson whose folder is a link.")
    any_store.memories.sync_files()

    assert again.retried and again.memory.id == done.memory.id
    assert sorted(p.name for p in outside.iterdir()) == ["plan.md"]  # nothing written through the link
    assert "symlink" in _problems(any_store)["memories/lesson"]
    assert _count(any_store, title="Hand written") == 1
    assert _count(any_store, title="Linked out") == 1
    _nothing_from_outside(any_store)


def test_memories_folder_itself_linked_out_is_left_alone(any_store: Store, root: Path, outside: Path) -> None:
    (root / "memories").mkdir(parents=True, exist_ok=True)
    (root / "memories").rename(root / "memories.old")
    (root / "memories").symlink_to(outside, target_is_directory=True)

    memory_id = _fact(any_store, "Stored anyway", "The row is the truth; its file waits for a real folder.")

    assert any_store.memories.get(memory_id).title == "Stored anyway"
    assert sorted(p.name for p in outside.iterdir()) == ["plan.md"]
    assert "symlink" in _problems(any_store)["memories"]
    _nothing_from_outside(any_store)


# ---------------------------------------------------------------------- hostile content
ALIAS_BOMB = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{chr(ord('b') + i)}: &{chr(ord('b') + i)} [{','.join(['*' + chr(ord('a') + i)] * 9)}]\n" for i in range(8)
)


def test_an_alias_bomb_is_refused_as_a_new_file_and_as_an_edit(any_store: Store, root: Path) -> None:
    memory_id = _fact(any_store, "Sessions", "Login sessions are JWT tokens.")
    bomb = root / "memories" / "fact" / "bomb.md"
    bomb.write_text(f"---\ntitle: *i\n{ALIAS_BOMB}---\n# Bomb\n\nboom\n", encoding="utf-8")
    path = _file(root, memory_id)
    path.write_text(path.read_text(encoding="utf-8").replace("---\n# ", f"{ALIAS_BOMB}---\n# ", 1), encoding="utf-8")

    synced = any_store.memories.sync_files()
    hits = any_store.memories.recall("login sessions")

    reasons = {p.path: p.reason for p in synced.problems}
    assert "anchor or alias" in reasons["memories/fact/bomb.md"]
    assert "anchor or alias" in reasons[path.relative_to(root).as_posix()]
    assert [h.memory.id for h in hits] == [memory_id]
    assert _count(any_store) == 1  # no new version, no memory from the bomb
    assert path.read_text(encoding="utf-8").count("&a") == 1  # the person's file is not written over


def test_a_50_mb_file_is_reported_and_never_imported_not_even_after_a_restart(
    root: Path, clock: FrozenClock, database_url: str | None
) -> None:
    with Store.open(root, database_url=database_url, clock=clock) as store:
        _fact(store, "Seed", "A first memory makes the folders.")
        huge = root / "memories" / "fact" / "huge.md"
        with huge.open("wb") as handle:
            handle.write(b"# Huge\n\n")
            handle.truncate(50 * 1024 * 1024)  # 50 MB (sparse: nothing of it is read)
        synced = store.memories.sync_files()
        assert (
            "files are read up to 1,000,000 bytes"
            in {p.path: p.reason for p in synced.problems}["memories/fact/huge.md"]
        )
    with Store.open(root, database_url=database_url, clock=clock) as store:
        store.memories.sync_files()
        assert _count(store) == 1
        assert "1,000,000 bytes" in _problems(store)["memories/fact/huge.md"]


def test_front_matter_that_never_closes_is_reported_never_a_version(any_store: Store, root: Path) -> None:
    memory_id = _fact(any_store, "Sessions", "Login sessions are JWT tokens.")
    path = _file(root, memory_id)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("---\n# Sessions", "# Sessions edited", 1), encoding="utf-8")  # the closing --- gone
    (root / "memories" / "fact" / "open.md").write_text("---\ntype: fact\n# Open\n\nnever closed\n", encoding="utf-8")

    synced = any_store.memories.sync_files()

    reasons = {p.path: p.reason for p in synced.problems}
    assert "never closes" in reasons["memories/fact/open.md"]
    assert "never closes" in reasons[path.relative_to(root).as_posix()]
    assert _count(any_store) == 1
    assert _count(any_store, title="---") == 0
    assert any_store.memories.get(memory_id).state == "active"


SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def test_secrets_in_a_file_are_redacted_before_anything_is_stored_or_echoed(any_store: Store, root: Path) -> None:
    _fact(any_store, "Seed", "A first memory makes the folders.")
    folder = root / "memories" / "fact"
    (folder / "token.md").write_text(
        f"---\nsource: {SECRET}\nentities: [{SECRET}]\nagent: {SECRET}\n---\n# Token\n\nThe token is {SECRET}.\n",
        encoding="utf-8",
    )
    (folder / "bad.md").write_text(f"---\ntrust: {SECRET}\n---\n# Bad\n\nAn unknown trust level.\n", encoding="utf-8")

    synced = any_store.memories.sync_files()
    status = any_store.memories.file_problems()

    echoed = synced.model_dump_json() + "".join(p.reason for p in status)
    assert SECRET not in echoed
    assert "is not one of" in {p.path: p.reason for p in synced.problems}["memories/fact/bad.md"]
    with any_store.db.read() as session:
        row = session.exec(select(MemoryRow).where(MemoryRow.title == "Token")).one()
    assert SECRET not in f"{row.body} {row.source} {row.entities} {row.agent_id}"
    manifest = root / ".dokoro" / "index" / "memory-files.sqlite"
    with sqlite3.connect(manifest) as connection:
        dumped = "\n".join(connection.iterdump())
    assert SECRET not in dumped and "bad.md" in dumped


# ---------------------------------------------------------------------- a person's hand during a call
def test_a_file_deleted_while_a_call_reads_it_is_not_the_calls_error(
    any_store: Store, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dokoro_store.semantic.memories.files import sync as files

    memory_id = _fact(any_store, "Sessions", "Login sessions are JWT tokens.")
    path = _file(root, memory_id)
    path.write_text(path.read_text(encoding="utf-8").replace("JWT tokens", "cookies"), encoding="utf-8")
    (root / "memories" / "fact" / "new.md").write_text("# New\n\nA new hand-written memory.\n", encoding="utf-8")
    real = files.walls.read_within

    def deleted_first(base: Path, relative: str, **kwargs: int) -> bytes:
        (base / relative).unlink(missing_ok=True)  # the person deletes it just as it is read
        return real(base, relative, **kwargs)

    monkeypatch.setattr(files.walls, "read_within", deleted_first)
    done = any_store.memories.remember(type="fact", title="Agent's", body="The agent's own memory.")
    monkeypatch.undo()
    later = any_store.memories.sync_files()

    assert done.memory.title == "Agent's"
    assert _count(any_store, title="New") == 0
    assert any(c.memory_id == memory_id and c.action == "deprecated" for c in later.changes)
    assert any_store.memories.get(memory_id).body == "Login sessions are JWT tokens."


def test_a_call_failing_part_way_and_retried_writes_one_memory_per_file(
    any_store: Store, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dokoro_store.semantic.memories.files.sync import MemoryFiles

    memory_id = _fact(any_store, "Sessions", "Login sessions are JWT tokens.")
    path = _file(root, memory_id)
    path.write_text(path.read_text(encoding="utf-8").replace("JWT tokens", "server-side cookies"), encoding="utf-8")
    (root / "memories" / "fact" / "hand.md").write_text("# Hand written\n\nA person wrote it.\n", encoding="utf-8")
    real = MemoryFiles._gate_check
    failures = iter([True, True])

    def failing_once(self: MemoryFiles, row: MemoryRow, also: MemoryRow | None = None) -> list:
        if next(failures, False):
            raise OSError("the disk went away")
        return real(self, row, also)

    monkeypatch.setattr(MemoryFiles, "_gate_check", failing_once)
    for _ in range(3):  # fails part-way twice (after writing its rows), then goes through
        with contextlib.suppress(OSError):
            any_store.memories.sync_files()
    any_store.memories.sync_files()

    assert _count(any_store, title="Hand written") == 1
    with any_store.db.read() as session:
        versions = list(session.exec(select(MemoryRow).where(MemoryRow.supersedes == memory_id)))
    assert [v.body for v in versions] == ["Login sessions are server-side cookies."]
    assert _count(any_store) == 3


# ---------------------------------------------------------------------- another process
_STUCK = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from dokoro_store import Store
    from dokoro_store.semantic.memories.files import sync as files

    root, url, marker = Path(sys.argv[1]), sys.argv[2] or None, Path(sys.argv[3])
    real = files.walls.read_within

    def slow(base, relative, **kwargs):
        if relative.endswith("slow.md"):
            marker.write_text("reading")
            time.sleep(600)  # a file on a hung network mount
        return real(base, relative, **kwargs)

    files.walls.read_within = slow
    with Store.open(root, database_url=url) as store:
        store.memories.sync_files()
    """
)


def test_a_process_stuck_on_a_slow_file_does_not_hold_another_process_memory_calls(
    any_store: Store, root: Path, database_url: str | None, tmp_path: Path
) -> None:
    memory_id = _fact(any_store, "Sessions", "Login sessions are JWT tokens.")
    (root / "memories" / "fact" / "slow.md").write_text("# Slow\n\nRead slowly.\n", encoding="utf-8")
    marker = tmp_path / "stuck"
    url = database_url or ""
    stuck = subprocess.Popen([sys.executable, "-c", _STUCK, str(root), url, str(marker)])
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert stuck.poll() is None, "the stuck process ended early"
            assert time.monotonic() < deadline, "the stuck process never reached the slow file"
            time.sleep(0.1)

        done = any_store.memories.remember(type="fact", title="Meanwhile", body="Written while another process hangs.")
        hits = any_store.memories.recall("login sessions")

        assert stuck.poll() is None  # still holding the folder: these calls did not wait for it
        assert done.files is not None and done.files.note is not None and "another process" in done.files.note
        assert [h.memory.id for h in hits][:1] == [memory_id]
        assert any_store.memories.get(done.memory.id).title == "Meanwhile"
    finally:
        stuck.kill()
        stuck.wait()
    any_store.memories.sync_files()  # the folder is free again: the new file and the late render go through
    assert _count(any_store, title="Slow") == 1
    assert _file(root, done.memory.id).is_file()


def test_doctor_scan_secrets_reads_the_manifest_and_fix_drops_what_holds_one(any_store: Store, root: Path) -> None:
    _fact(any_store, "Seed", "A first memory makes the folders.")
    manifest = root / ".dokoro" / "index" / "memory-files.sqlite"
    with sqlite3.connect(manifest) as connection:  # as an older dokoro left it: a note quoting the file
        connection.execute(
            "INSERT INTO files (path, memory_id, mtime_ns, size, digest, rev, note) VALUES (?, NULL, 1, 1, NULL, 0, ?)",
            ("memories/fact/old.md", f"trust: '{SECRET}' is not one of user-stated"),
        )

    found = any_store.secret_scan.scan()

    hits = [f for f in found.findings if f.path == ".dokoro/index/memory-files.sqlite"]
    assert [(f.row, f.kinds) for f in hits] == [("path=memories/fact/old.md", ["github-token"])]
    assert SECRET not in found.model_dump_json()
    fixed = any_store.secret_scan.scan(fix=True)
    assert [f.fixed for f in fixed.findings if f.path == ".dokoro/index/memory-files.sqlite"] == [True]
    assert SECRET.encode() not in manifest.read_bytes()
    assert not [f for f in any_store.secret_scan.scan().findings if f.path == ".dokoro/index/memory-files.sqlite"]
    any_store.memories.sync_files()  # the manifest still works
