"""The rewrite of absolute paths in answers (dokoro_server.shown_paths)."""

from __future__ import annotations

from pathlib import Path

from dokoro_server.shown_paths import rewriter, shown


def test_a_store_inside_the_project_is_shown_relative_to_the_project(tmp_path: Path) -> None:
    project = tmp_path / "project"
    rewrite = rewriter(str(project / "dokoro"), str(project))
    assert rewrite(f"Saved {project}/dokoro/daily/a.md.") == "Saved dokoro/daily/a.md."
    assert rewrite(f"Dokoro Path: {project / 'dokoro'}") == "Dokoro Path: dokoro"
    assert rewrite(f"(relative to {project}).") == "(relative to the project folder)."
    assert rewrite(f"{project}/notes.md is not a folder") == "notes.md is not a folder"


def test_a_store_elsewhere_is_shown_relative_to_itself_and_near_misses_are_left(tmp_path: Path) -> None:
    store, project = tmp_path / "store", tmp_path / "app"
    rewrite = rewriter(str(store), str(project))
    assert rewrite(f"'{store}/daily/a.md'") == "'daily/a.md'"
    assert rewrite(f"root {store}, next") == "root the store folder, next"
    # Another folder whose name starts the same is not the store: a path beside it, in the folder above.
    assert rewrite(f"{store}-copy/x") == "…/store-copy/x"
    assert rewrite("no path here") == "no path here"


def test_symlinked_folders_are_rewritten_in_both_spellings(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "dokoro").mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(real)
    rewrite = rewriter(str(link / "dokoro"), str(link))
    assert rewrite(f"{real.resolve()}/dokoro/daily/a.md and {link}/dokoro/b.md") == "dokoro/daily/a.md and dokoro/b.md"


def test_structured_content_is_rewritten_throughout(tmp_path: Path) -> None:
    rewrite = rewriter(str(tmp_path / "s"), str(tmp_path / "p"))
    value = {"path": f"{tmp_path}/s/a.md", "items": [f"{tmp_path}/p/b.md", 3, None], "n": 1.5}
    assert shown(value, rewrite) == {"path": "a.md", "items": ["b.md", 3, None], "n": 1.5}


def test_the_folders_above_the_store_and_the_project_are_not_shown(tmp_path: Path) -> None:
    """A store-open error names a parent that is a file; a sibling path is in a folder above."""
    blocker = tmp_path / "blocker.txt"
    rewrite = rewriter(str(blocker / "dokoro"), str(tmp_path / "app"))
    said = rewrite(f"{blocker / 'dokoro'} cannot be a dokoro folder: {blocker} is a file")
    assert str(tmp_path) not in said
    assert said == "the store folder cannot be a dokoro folder: a folder above the store or the project is a file"
    assert rewrite("see /etc/hostname and /tmp") == "see /etc/hostname and /tmp"  # not the server's folders
