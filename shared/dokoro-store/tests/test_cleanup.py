"""``dokoro cleanup``: duplicates and old files to the archive, a backup first, and a rollback."""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path

import pytest
from dokoro_store import InvalidArgumentError


def _write(root, rel, text, age_days, now):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    moment = (now - timedelta(days=age_days)).timestamp()
    os.utime(path, (moment, moment))
    return path


def _tree(store, clock):
    root, now = store.paths.root, clock.now()
    _write(root, "decisions/adr-1.md", "# ADR 1\nUse JWT\n", 10, now)
    _write(root, "research/adr-1-copy.md", "# ADR 1\nUse JWT\n", 5, now)
    _write(root, "research/ancient.md", "# Old\nold research\n", 400, now)
    _write(root, "current.md", "# Current\n", 500, now)  # never touched
    _write(root, "archive/daily/2025-W01/x.md", "old archive\n", 600, now)  # the archive stays
    _write(root, "memories/fact/m1.md", "# memory\n", 700, now)  # the store's own files stay
    return root


def test_a_dry_run_lists_duplicates_and_old_files_and_moves_nothing(any_store, clock):
    root = _tree(any_store, clock)

    report = any_store.cleanup.run(dry_run=True)

    assert report.dry_run
    assert [(g.keep, g.duplicates) for g in report.duplicates] == [("decisions/adr-1.md", ["research/adr-1-copy.md"])]
    assert [(o.path, o.age_days) for o in report.old_files] == [("research/ancient.md", 400)]
    assert [(m.source, m.target, m.reason) for m in report.moves] == [
        ("research/adr-1-copy.md", "archive/duplicates/research/adr-1-copy.md", "duplicate"),
        ("research/ancient.md", "archive/old/research/ancient.md", "old"),
    ]
    assert (root / "research/adr-1-copy.md").is_file() and (root / "research/ancient.md").is_file()
    assert report.backup is None


def test_a_cleanup_backs_up_first_moves_files_repoints_documents_and_rolls_back(any_store, clock):
    root = _tree(any_store, clock)
    any_store.markdown.import_markdown()

    report = any_store.cleanup.run()

    assert report.errors == []
    backup = json.loads(Path(report.backup).read_text(encoding="utf-8"))
    assert backup["format"] == "dokoro-backup"
    assert "research/ancient.md" in {row["filepath"] for row in backup["tables"]["docs"]}
    assert not (root / "research/ancient.md").exists()
    assert (root / "archive/old/research/ancient.md").read_text(encoding="utf-8") == "# Old\nold research\n"
    assert (root / "archive/duplicates/research/adr-1-copy.md").is_file()
    assert any_store.docs.get("ancient").filepath == "archive/old/research/ancient.md"

    back = any_store.cleanup.rollback(Path(report.manifest))

    assert back.errors == [] and len(back.moves) == 2
    assert (root / "research/ancient.md").is_file() and (root / "research/adr-1-copy.md").is_file()
    assert any_store.docs.get("ancient").filepath == "research/ancient.md"


def test_nothing_to_do_writes_no_backup_and_a_bad_threshold_is_refused(store, clock):
    report = store.cleanup.run()

    assert report.moves == [] and report.backup is None
    assert not (store.paths.data_dir / "backup").exists()
    with pytest.raises(InvalidArgumentError, match="older_than_days"):
        store.cleanup.run(0)
