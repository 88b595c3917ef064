"""A compaction killed half-way is finished by the next process that opens the store."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from dokoro_store import Store

pytestmark = pytest.mark.slow  # processes killed half-way

# The child adds summaries until one crosses the threshold, and dies (os._exit, no cleanup,
# no rollback by Python) at the chosen point of the compaction.
_CHILD = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from sqlmodel import Session
    from dokoro_store import Store
    from dokoro_store.episodic import service as episodic

    where = sys.argv[2]
    if where == "between-steps":
        episodic.EpisodicService._fold = lambda self, session_id: os._exit(17)
    else:  # "inside-fold": after the first source row is deleted, before the commit
        original = Session.delete
        def delete(self, instance):
            original(self, instance)
            self.flush()
            os._exit(17)
        Session.delete = delete

    store = Store.open(Path(sys.argv[1]))
    for i in range(3):
        store.episodic.add_summary("long", "model", f"<part-{i}>", token_count=15_000)
    """
)


def _crash(store: Path, where: str) -> None:
    done = subprocess.run([sys.executable, "-c", _CHILD, str(store), where], capture_output=True, text=True)
    assert done.returncode == 17, done.stderr


@pytest.mark.parametrize("where", ["between-steps", "inside-fold"])
def test_an_interrupted_compaction_is_redone_on_the_next_open(tmp_path: Path, where: str) -> None:
    store = tmp_path / "dokoro"
    _crash(store, where)

    with Store.open(store) as reopened:
        assert [r.session_id for r in reopened.recovered] == ["long"]
        assert reopened.recovered[0].compacted_count == 3
        rows = reopened.episodic.recall(session_id="long")
        assert reopened.episodic.pending_sessions() == []

    assert len(rows) == 1 and rows[0].compacted
    assert rows[0].token_count == 45_000
    for i in range(3):
        assert rows[0].summary.count(f"<part-{i}>") == 1

    with Store.open(store) as again:  # recovery is done once, not on every open
        assert again.recovered == []
        assert len(again.episodic.recall(session_id="long")) == 1
