"""A store that git can hold: every store-creating path writes the store's ``.gitignore``, which
keeps the database, locks and caches out of git and the markdown (memories, dailies, plans,
tracking renderings) in; a person's own ``.gitignore`` is never touched."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from dokoro_store import Store, init_folder, write_gitignore
from dokoro_store.housekeeping.gitignore import _EARLIER, GITIGNORE

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True, timeout=60)
    return done.stdout


def _staged(root: Path) -> list[str]:
    _git(root, "init", "-q", ".")
    _git(root, "add", "-A")
    return sorted(_git(root, "diff", "--cached", "--name-only").split())


def test_a_store_opened_for_the_first_time_stages_its_markdown_and_never_its_database(tmp_path, clock):
    root = tmp_path / "dokoro"
    with Store.open(root, clock=clock) as store:
        store.working.workspace.claim("fix the login race", agent_id="claude")
        store.working.workspace.dump("end of the session", keep_active=False, acting_agent="claude")
        store.memories.remember(type="fact", title="The API uses JWT", body="Tokens are JWT.")
        plan = store.plans.create("Ship the login fix", ["reproduce", "fix"])
        store.tracking.add_issue("Login fails after a token refresh")

    staged = _staged(root)

    assert (root / ".gitignore").read_text(encoding="utf-8") == GITIGNORE
    assert ".gitignore" in staged
    assert any(p.startswith("daily/") for p in staged), staged
    assert any(p.startswith("memories/") for p in staged), staged
    assert any(p.startswith("tracking/issues/") for p in staged), staged
    assert f".mcp/plans/{plan.id}.json" in staged
    for kept_out in (".dokoro/", ".mcp/locks/", ".mcp/session.json", ".mcp/workspace.lock", ".mcp/archive"):
        assert not [p for p in staged if p.startswith(kept_out)], (kept_out, staged)


@pytest.mark.parametrize("store_url", ["sqlite", "postgresql"], indirect=True)
def test_every_new_store_writes_it_on_both_databases(tmp_path, store_url):
    root = tmp_path / "fresh"
    with Store.open(root, database_url=store_url):
        pass

    assert (root / ".gitignore").read_text(encoding="utf-8") == GITIGNORE


def test_a_persons_own_gitignore_is_left_alone(tmp_path, clock):
    root = tmp_path / "dokoro"
    root.mkdir()
    (root / ".gitignore").write_text("*.sqlite\n", encoding="utf-8")

    with Store.open(root):
        pass
    init_folder(root, clock)

    assert (root / ".gitignore").read_text(encoding="utf-8") == "*.sqlite\n"


def test_the_earlier_template_is_brought_up_to_date(tmp_path):
    (tmp_path / ".gitignore").write_text(_EARLIER, encoding="utf-8")

    assert write_gitignore(tmp_path)
    assert (tmp_path / ".gitignore").read_text(encoding="utf-8") == GITIGNORE


def test_a_symlinked_gitignore_is_neither_followed_nor_replaced(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text(_EARLIER, encoding="utf-8")
    root = tmp_path / "dokoro"
    root.mkdir()
    (root / ".gitignore").symlink_to(outside)

    assert not write_gitignore(root)
    assert outside.read_text(encoding="utf-8") == _EARLIER


def test_dokoro_init_writes_it_into_a_store_made_before_dokoro_did(tmp_path, clock):
    root = tmp_path / "dokoro"
    with Store.open(root, clock=clock):
        pass
    (root / ".gitignore").unlink()
    (root / "README.md").write_text("# mine\n", encoding="utf-8")
    (root / "daily").mkdir(exist_ok=True)

    done = init_folder(root, clock)

    assert not done.created and (root / ".gitignore").read_text(encoding="utf-8") == GITIGNORE
