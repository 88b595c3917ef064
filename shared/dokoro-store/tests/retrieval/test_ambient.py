"""Ambient context from git: keywords and the query they make (reference §2.12)."""

from __future__ import annotations

import subprocess

import pytest
from dokoro_store.errors import NotFoundError
from dokoro_store.semantic.search.ambient import ambient_context, keywords_from


def test_keywords_come_from_branch_commits_and_files_minus_stop_words():
    branch, commits, files, query = keywords_from(
        "feature/vector-cache_warmup",
        ["feat: add vector cache", "fix cache eviction", "docs: update readme"],
        ["src/store/cache_manager.py", "tests/test_cache.py"],
    )

    assert branch == ["feature", "vector", "cache", "warmup"]
    assert commits[0] == "cache" and "fix" not in commits and "add" not in commits
    assert "manager" in files and "store" in files and "src" not in files
    assert query.split()[:4] == ["feature", "vector", "cache", "warmup"]
    assert len(query.split()) <= 12


def git(path, *args):
    subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True)


def test_ambient_context_reads_a_real_repository(tmp_path):
    git(tmp_path, "init", "-q", "-b", "fix/login-timeout")
    git(tmp_path, "config", "user.email", "t@example.com")
    git(tmp_path, "config", "user.name", "t")
    for i in range(6):
        (tmp_path / f"session_{i}.py").write_text("x = 1\n")
        git(tmp_path, "add", ".")
        git(tmp_path, "commit", "-q", "-m", f"Refresh session cookies on login, step {i}")

    context = ambient_context(tmp_path, project_root=tmp_path)

    assert context.branch == "fix/login-timeout"
    assert len(context.commits) == 5 and context.commits[0] == "Refresh session cookies on login, step 5"
    assert context.files == [f"session_{i}.py" for i in range(1, 6)]  # changed over HEAD~5..HEAD
    assert context.query.startswith("login timeout")
    assert "cookies" in context.commit_keywords and "session" in context.file_keywords


def test_a_folder_that_is_not_a_repository_says_so(tmp_path):
    with pytest.raises(NotFoundError, match="not a git repository"):
        ambient_context(tmp_path, project_root=tmp_path)
