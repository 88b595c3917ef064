"""Four agents, four real processes in two workspace folders on one team database (both backends),
planning one feature at the same moment: one plan is written, every agent is answered with it, and
no folder holds a plan file the feature does not link (no orphan)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from dokoro_store import Store

pytestmark = pytest.mark.slow

AGENTS = 4

# Each process opens its store, then waits at a barrier (a file per process) so that the four call
# dokoro_feature_plan's service at the same moment.
DRIVER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from dokoro_store import Store

    root, url, barrier, n, feature, count = sys.argv[1:7]
    with Store.open(Path(root), database_url=url) as store:
        Path(barrier, n).touch()
        deadline = time.monotonic() + 60
        while len(list(Path(barrier).iterdir())) < int(count) and time.monotonic() < deadline:
            time.sleep(0.005)
        done = store.tracking.plan_feature(feature, agent_id=f"agent{n}")
        print(done.action, done.plan_path)
    """
)


@pytest.mark.parametrize("database_url", ["sqlite", "postgresql"], indirect=True)
def test_four_agents_planning_one_feature_leave_one_plan_file(tmp_path: Path, database_url: str | None) -> None:
    url = database_url or f"sqlite:///{tmp_path / 'team.sqlite'}"
    folders = [tmp_path / "alice", tmp_path / "bob"]
    with Store.open(folders[0], database_url=url) as store:
        feature = store.tracking.add_feature("Session refresh dashboard").item.id
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", DRIVER, str(folders[n % 2]), url, str(barrier), str(n), feature, str(AGENTS)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(AGENTS)
    ]
    said = []
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        said.append(out.strip())

    actions = sorted(line.rsplit(" ", 1)[0] for line in said)
    assert actions == ["already planned"] * (AGENTS - 1) + ["planned"], said
    paths = {line.rsplit(" ", 1)[1] for line in said}
    assert len(paths) == 1, said  # every agent got the one plan
    [plan] = paths
    for folder in folders:
        with Store.open(folder, database_url=url) as store:
            item = store.tracking.items.get(feature)
            assert item is not None and item.plan_path == plan
            store.tracking.list_items("feature")  # a read renders what this folder lacks
        written = sorted(p.relative_to(folder).as_posix() for p in (folder / "features").rglob("*-plan.md"))
        assert written == [plan], (folder.name, written)
