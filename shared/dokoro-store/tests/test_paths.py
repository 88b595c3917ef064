"""Where a store lives: DOKORO_PATH, the cwd, and the well-known paths under it."""

from __future__ import annotations

from pathlib import Path

from dokoro_store import StorePaths, resolve_dokoro_path


def test_the_environment_value_wins(tmp_path):
    assert resolve_dokoro_path(str(tmp_path / "elsewhere"), tmp_path / "project") == tmp_path / "elsewhere"


def test_a_relative_environment_value_is_made_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    assert resolve_dokoro_path("stores/mine", Path("/unused")) == tmp_path.resolve() / "stores" / "mine"


def test_a_home_relative_environment_value_is_expanded(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))

    assert resolve_dokoro_path("~/dokoro-store", Path("/unused")) == tmp_path.resolve() / "dokoro-store"


def test_the_default_is_a_dokoro_folder_in_the_cwd(tmp_path):
    assert resolve_dokoro_path(None, tmp_path) == tmp_path.resolve() / "dokoro"


def test_an_empty_environment_value_falls_back_to_the_default(tmp_path):
    assert resolve_dokoro_path("", tmp_path) == tmp_path.resolve() / "dokoro"


def test_a_cwd_named_dokoro_is_the_store_itself(tmp_path):
    cwd = tmp_path / "dokoro"
    cwd.mkdir()

    assert resolve_dokoro_path(None, cwd) == cwd.resolve()


def test_a_cwd_named_dokoro_holding_a_dokoro_folder_uses_the_nested_one(tmp_path):
    cwd = tmp_path / "dokoro"
    (cwd / "dokoro").mkdir(parents=True)

    assert resolve_dokoro_path(None, cwd) == cwd.resolve() / "dokoro"


def test_a_clone_named_dokoro_is_a_project_whose_store_is_nested(tmp_path):
    clone = tmp_path / "dokoro"
    (clone / ".git").mkdir(parents=True)

    assert resolve_dokoro_path(None, clone) == clone.resolve() / "dokoro"


def test_a_store_folder_kept_in_git_of_its_own_is_still_the_store(tmp_path):
    store = tmp_path / "dokoro"
    (store / ".git").mkdir(parents=True)
    (store / ".dokoro").mkdir()

    assert resolve_dokoro_path(None, store) == store.resolve()


def test_store_paths_name_every_well_known_file(tmp_path):
    paths = StorePaths(tmp_path)

    assert paths.sqlite_file == tmp_path / ".dokoro" / "db" / "dokoro.sqlite"
    assert paths.current_md == tmp_path / "current.md"
    assert paths.workspace_lock == tmp_path / ".mcp" / "workspace.lock"
    assert paths.session_json == tmp_path / ".mcp" / "session.json"
    assert paths.daily_dir == tmp_path / "daily"
    assert paths.assets_dir == tmp_path / "assets"


def test_relative_paths_are_posix_and_relative_to_the_root(tmp_path):
    paths = StorePaths(tmp_path)

    assert paths.relative(tmp_path / "daily" / "a.md") == "daily/a.md"
