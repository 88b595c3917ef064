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
    assert rewrite(f"{store}-copy/x") == f"{store}-copy/x"  # another folder whose name starts the same
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
