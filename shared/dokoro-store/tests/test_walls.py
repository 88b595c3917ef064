"""The containment helper: paths, symlinks and special files (:mod:`dokoro_store.walls.containment`)."""

from __future__ import annotations

import logging
import os
import subprocess
from pathlib import Path

import pytest
from dokoro_store.errors import InvalidArgumentError, NotFoundError, OutsideStoreError
from dokoro_store.semantic.search.ambient import ambient_context
from dokoro_store.walls.containment import inside, lock_file, read_source, scan
from dokoro_store.walls.files import atomic_write_text, file_lock, read_text_or_none
from hypothesis import given
from hypothesis import strategies as st


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    store, outside = tmp_path / "store", tmp_path / "outside"
    (store / "notes" / "deep").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.md").write_text("secret", encoding="utf-8")
    (store / "notes" / "a.md").write_text("a", encoding="utf-8")
    (store / "notes" / "deep" / "b.md").write_text("b", encoding="utf-8")
    return store, outside


def test_inside_refuses_traversal_absolute_paths_and_symlinks_out(layout: tuple[Path, Path]) -> None:
    store, outside = layout
    (store / "notes" / "link.md").symlink_to(outside / "secret.md")
    (store / "out").symlink_to(outside, target_is_directory=True)

    assert inside(store, store / "notes" / "a.md") == (store / "notes" / "a.md").resolve()
    for path in (
        store / ".." / "outside" / "secret.md",
        outside / "secret.md",
        store / "notes" / "link.md",
        store / "out" / "new.md",
    ):
        with pytest.raises(OutsideStoreError, match="leaves"):
            inside(store, path)
    with pytest.raises(InvalidArgumentError, match="NUL"):
        inside(store, store / "a\x00b")


def test_reads_and_writes_never_go_through_a_link_out(layout: tuple[Path, Path]) -> None:
    store, outside = layout
    (store / "notes" / "link.md").symlink_to(outside / "secret.md")
    (store / "out").symlink_to(outside, target_is_directory=True)

    with pytest.raises(OutsideStoreError):
        read_text_or_none(store / "notes" / "link.md", within=store)
    with pytest.raises(OutsideStoreError):
        atomic_write_text(store / "out" / "planted.md", "x", within=store)
    # A link as the file itself is replaced by the new file, never written through.
    atomic_write_text(store / "notes" / "link.md", "replaced", within=store)

    assert not (store / "notes" / "link.md").is_symlink()
    assert (outside / "secret.md").read_text(encoding="utf-8") == "secret"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.md"]


HOSTILE_LOCK_NAMES = [
    "../escape",
    "../../outside/planted",
    "/tmp/absolute",
    "a/b",
    "..",
    ".",
    ".hidden",
    "",
    "nul\x00byte",
    "back\\slash",
    "new\nline",
    "x" * 101,
]


@pytest.mark.parametrize("name", HOSTILE_LOCK_NAMES)
def test_a_lock_name_is_a_name_never_a_path(layout: tuple[Path, Path], name: str) -> None:
    store, outside = layout
    locks = store / ".mcp" / "locks"

    with pytest.raises(InvalidArgumentError, match="not a plain name"), file_lock(locks, name, within=store):
        pytest.fail("a hostile lock name was taken")

    assert sorted(p.name for p in outside.iterdir()) == ["secret.md"]
    assert not (store / ".mcp").exists()  # refused before anything was created


@given(name=st.text(max_size=40))
def test_any_lock_name_stays_in_the_lock_folder_or_is_refused(
    tmp_path_factory: pytest.TempPathFactory, name: str
) -> None:
    store = tmp_path_factory.mktemp("store")
    locks = store / ".mcp" / "locks"
    try:
        path = lock_file(store, locks, name)
    except InvalidArgumentError:
        assert not locks.exists()
        return
    assert path.parent == locks.resolve() and path.name == f"{name}.lock"


def test_a_symlinked_lock_folder_leading_out_is_refused(layout: tuple[Path, Path]) -> None:
    store, outside = layout
    (store / ".mcp").mkdir()
    (store / ".mcp" / "locks").symlink_to(outside, target_is_directory=True)

    with (
        pytest.raises(OutsideStoreError, match="lock folder"),
        file_lock(store / ".mcp" / "locks", "current-md", within=store),
    ):
        pytest.fail("a lock was taken outside the store")

    assert sorted(p.name for p in outside.iterdir()) == ["secret.md"]


def test_a_symlinked_mcp_folder_is_refused_before_the_lock_folder_is_made(layout: tuple[Path, Path]) -> None:
    store, outside = layout
    (store / ".mcp").symlink_to(outside, target_is_directory=True)

    with pytest.raises(OutsideStoreError, match="leaves"):
        lock_file(store, store / ".mcp" / "locks", "plans")

    assert sorted(p.name for p in outside.iterdir()) == ["secret.md"]  # no locks/ made out there


def test_a_planted_symlink_lock_file_is_refused_and_its_target_untouched(layout: tuple[Path, Path]) -> None:
    store, outside = layout
    locks = store / ".mcp" / "locks"
    locks.mkdir(parents=True)
    (locks / "current-md.lock").symlink_to(outside / "secret.md")
    (locks / "plans.lock").symlink_to(store / "notes" / "a.md")  # into the store: still never opened

    for name in ("current-md", "plans"):
        with pytest.raises(OutsideStoreError, match=r"is a symlink.*Remove the symlink"):
            lock_file(store, locks, name)

    assert (outside / "secret.md").read_text(encoding="utf-8") == "secret"
    assert (store / "notes" / "a.md").read_text(encoding="utf-8") == "a"


def test_a_store_with_a_planted_lock_symlink_refuses_the_write_and_says_how_to_fix_it(
    tmp_path: Path, store, root: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me", encoding="utf-8")
    store.working.workspace.claim("first task")
    before = (root / "current.md").read_text(encoding="utf-8")
    planted = root / ".mcp" / "locks" / "current-md.lock"
    planted.unlink(missing_ok=True)
    planted.symlink_to(outside)

    with pytest.raises(OutsideStoreError, match="Remove the symlink"):
        store.working.workspace.log("written through a planted lock?")

    assert outside.read_text(encoding="utf-8") == "keep me"
    assert (root / "current.md").read_text(encoding="utf-8") == before
    planted.unlink()
    store.working.workspace.log("written once the symlink is gone")
    assert "written once the symlink is gone" in (root / "current.md").read_text(encoding="utf-8")


def test_scans_skip_symlinks_and_special_files_with_a_warning(
    layout: tuple[Path, Path], caplog: pytest.LogCaptureFixture
) -> None:
    store, outside = layout
    (store / "notes" / "link.md").symlink_to(outside / "secret.md")
    (store / "notes" / "loop").symlink_to(store, target_is_directory=True)
    os.mkfifo(store / "notes" / "pipe.md")
    (store / "linked").symlink_to(outside, target_is_directory=True)

    with caplog.at_level(logging.WARNING, logger="dokoro.store"):
        found = [p.relative_to(store).as_posix() for p in scan(store, store / "notes")]
        nothing = list(scan(store, store / "linked"))

    assert found == ["notes/a.md", "notes/deep/b.md"]
    assert nothing == []
    warned = caplog.text
    assert "link.md" in warned and "loop" in warned and "pipe.md" in warned and "linked" in warned


def test_a_source_is_a_regular_file_of_the_project(tmp_path: Path, layout: tuple[Path, Path]) -> None:
    store, outside = layout
    project = store
    (project / "notes" / "in.md").symlink_to(project / "notes" / "a.md")
    (project / "notes" / "out.md").symlink_to(outside / "secret.md")
    os.mkfifo(project / "pipe")

    assert read_source(project / "notes" / "in.md", project)[1] == b"a"
    for path, error in (
        (project / "notes" / "out.md", OutsideStoreError),
        (outside / "secret.md", OutsideStoreError),
        (Path("/proc/self/environ"), OutsideStoreError),
        (Path("/dev/zero"), OutsideStoreError),
        (project / "pipe", InvalidArgumentError),
        (project / "notes", InvalidArgumentError),
        (project / "missing.md", NotFoundError),
    ):
        with pytest.raises(error):
            read_source(path, project)


def test_ambient_context_reads_no_repository_around_the_project(tmp_path: Path) -> None:
    around = tmp_path / "around"
    project = around / "project"
    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(around)], check=True)

    with pytest.raises(NotFoundError, match="outside the project"):
        ambient_context(project, project_root=project)
    with pytest.raises(OutsideStoreError, match="leaves"):
        ambient_context(around, project_root=project)
