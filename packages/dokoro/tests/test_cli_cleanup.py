"""``dokoro cleanup``: preview, backup first, move, roll back; through Typer's runner."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from dokoro.cli import app
from dokoro_store import Store
from typer.testing import CliRunner

runner = CliRunner()


def _tree(root: Path) -> None:
    Store.open(root).close()  # a store: only `dokoro init` and the servers make one
    (root / "research").mkdir(parents=True)
    (root / "decisions").mkdir()
    (root / "decisions" / "adr.md").write_text("# ADR\nsame\n", encoding="utf-8")
    (root / "research" / "adr-copy.md").write_text("# ADR\nsame\n", encoding="utf-8")
    ancient = root / "research" / "ancient.md"
    ancient.write_text("# Ancient\n", encoding="utf-8")
    old = time.time() - 400 * 86400
    os.utime(ancient, (old, old))
    os.utime(root / "decisions" / "adr.md", (old + 1, old + 1))


def test_dry_run_lists_and_moves_nothing(tmp_path):
    root = tmp_path / "dokoro"
    _tree(root)

    result = runner.invoke(app, ["cleanup", "--dry-run", "--path", str(root)])

    assert result.exit_code == 0, result.output
    assert "would move research/adr-copy.md → archive/duplicates/research/adr-copy.md" in result.output
    assert "would move research/ancient.md → archive/old/research/ancient.md" in result.output
    assert "old (400 days)" in result.output
    assert (root / "research" / "ancient.md").is_file()


def test_cleanup_asks_then_backs_up_moves_and_rolls_back(tmp_path):
    root = tmp_path / "dokoro"
    _tree(root)

    declined = runner.invoke(app, ["cleanup", "--path", str(root)], input="n\n")
    assert "Nothing moved." in declined.output and (root / "research" / "ancient.md").is_file()

    done = runner.invoke(app, ["cleanup", "--yes", "--json", "--path", str(root)])
    report = json.loads(done.stdout)
    assert done.exit_code == 0, done.output
    assert Path(report["backup"]).is_file() and Path(report["manifest"]).is_file()
    assert not (root / "research" / "ancient.md").exists()
    assert (root / "archive" / "old" / "research" / "ancient.md").is_file()

    back = runner.invoke(app, ["cleanup", "--rollback", report["manifest"], "--path", str(root)])
    assert back.exit_code == 0, back.output
    assert "moved back" in back.output
    assert (root / "research" / "ancient.md").is_file() and (root / "research" / "adr-copy.md").is_file()


def test_a_bad_manifest_is_refused(tmp_path):
    Store.open(tmp_path / "d").close()
    not_json = tmp_path / "x.json"
    not_json.write_text("nope", encoding="utf-8")

    missing = runner.invoke(
        app, ["cleanup", "--rollback", str(tmp_path / "missing.json"), "--path", str(tmp_path / "d")]
    )
    assert missing.exit_code == 1
    assert runner.invoke(app, ["cleanup", "--rollback", str(not_json), "--path", str(tmp_path / "d")]).exit_code == 2
