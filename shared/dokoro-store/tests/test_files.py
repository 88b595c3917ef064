"""Atomic writes and the cross-process file lock."""

from __future__ import annotations

import os

import pytest
from dokoro_store.walls.files import atomic_write_bytes, atomic_write_text, file_lock, read_text_or_none


def test_atomic_write_creates_the_file_and_its_folders(tmp_path):
    target = tmp_path / "a" / "b" / "current.md"

    atomic_write_text(target, "héllo ✅\n", within=tmp_path)

    assert target.read_bytes() == "héllo ✅\n".encode()


def test_atomic_write_replaces_the_whole_file_and_leaves_no_temp_file(tmp_path):
    target = tmp_path / "current.md"
    target.write_text("a much longer old content\n" * 10)

    atomic_write_text(target, "new", within=tmp_path)

    assert target.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["current.md"]


def test_a_failed_atomic_write_keeps_the_old_file_and_removes_its_temp_file(tmp_path, monkeypatch):
    target = tmp_path / "current.md"
    target.write_text("old")

    def broken_fsync(_fd: int) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="disk full"):
        atomic_write_bytes(target, b"new", within=tmp_path)

    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["current.md"]


def test_read_text_or_none_tells_a_missing_file_from_an_empty_one(tmp_path):
    (tmp_path / "empty.md").write_text("")

    assert read_text_or_none(tmp_path / "missing.md", within=tmp_path) is None
    assert read_text_or_none(tmp_path / "empty.md", within=tmp_path) == ""


def test_file_lock_creates_its_folder_and_can_be_taken_again_after_release(tmp_path):
    locks = tmp_path / ".mcp" / "locks"

    with file_lock(locks, "current-md", within=tmp_path):
        assert (locks / "current-md.lock").exists()
    with file_lock(locks, "current-md", within=tmp_path):
        pass
