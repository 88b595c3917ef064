"""Converting a store of the original dokoro: its graph, hostile files, several processes at once."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from dokoro_store import Store
from dokoro_store.moving.original import find_conversion, is_original_database
from dokoro_testkit.original import original_copy


def _add_graph(root: Path) -> None:
    """Entities, a document link and two relations (one closed) as the original's tools write them."""
    with sqlite3.connect(root / ".dokoro" / "db" / "dokoro.sqlite") as db:
        db.execute(
            "INSERT INTO entities (id, type, name, canonical_name, created_at) VALUES "
            "(1, 'service', 'AuthService', 'authservice', '2026-05-01 10:00:00'), "
            "(2, 'service', 'SessionStore', NULL, '2026-05-01 10:00:00'), "
            "(3, 'file', 'auth/session.ts', 'auth/session.ts', '2026-05-01 10:00:00')"
        )
        db.execute(
            "INSERT INTO doc_entities (doc_id, entity_id, relation_type, context) VALUES "
            "('2026-12-02-01h57-wednesday-session-fix-flaky-login-test', 3, 'mentions', 'partial fix')"
        )
        db.execute(
            "INSERT INTO entity_relations (source_id, target_id, relation_type, valid_from, valid_to, created_at) "
            "VALUES (1, 2, 'depends_on', '2026-05-02T09:00:00Z', NULL, '2026-05-02T09:00:05Z'), "
            "(1, 3, 'uses', '2026-04-01T09:00:00Z', '2026-05-01T00:00:00Z', '2026-04-01T09:00:00Z')"
        )


def test_the_graph_keeps_its_entities_links_and_relation_times(tmp_path: Path) -> None:
    root = original_copy(tmp_path)
    _add_graph(root)
    with Store.open(root) as store:
        assert store.moved_in is not None and store.moved_in.counts["entity_relations"] == 2
        auth = store.graph.find_entity("service", "AuthService")
        assert auth is not None and auth.id is not None
        history = store.graph.history(auth.id)
    spans = {(h.type, h.model_dump(mode="json")["valid_from"], h.model_dump(mode="json")["valid_to"]) for h in history}
    assert ("depends_on", "2026-05-02T09:00:00Z", None) in spans
    assert ("uses", "2026-04-01T09:00:00Z", "2026-05-01T00:00:00Z") in spans


def test_hostile_plan_and_question_files_are_skipped_with_a_note(tmp_path: Path) -> None:
    root = original_copy(tmp_path)
    outside = tmp_path / "secret.json"
    outside.write_text(json.dumps({"id": "plan-x", "title": "stolen", "items": [{"text": "x"}]}), encoding="utf-8")
    (root / ".mcp" / "plans" / "plan-x.json").symlink_to(outside)
    (root / ".mcp" / "plans" / "plan-broken.json").write_text("{not json", encoding="utf-8")
    (root / ".mcp" / "questions.json").write_text(
        json.dumps([{"id": "q-1", "question": "kept?"}, {"question": "no id"}, 42]), encoding="utf-8"
    )
    with Store.open(root) as store:
        assert store.moved_in is not None
        notes = "\n".join(store.moved_in.notes)
        assert "plan-x.json: skipped (a symlink" in notes and "plan-broken.json: skipped (not valid JSON" in notes
        assert [p.title for p in store.plans.list()] == ["Harden login"]
        assert [q.question for q in store.working.questions.list("all")] == ["kept?"]


_OPEN = """
import sys
from pathlib import Path
from dokoro_store import Store
with Store.open(Path(sys.argv[1])) as store:
    print(store.moved_in is not None, len(store.episodic.recall(limit=10)))
"""


def test_several_processes_opening_it_at_once_convert_it_once(tmp_path: Path) -> None:
    root = original_copy(tmp_path)
    workers = [
        subprocess.Popen([sys.executable, "-c", _OPEN, str(root)], stdout=subprocess.PIPE, text=True) for _ in range(3)
    ]
    results = sorted(worker.communicate(timeout=180)[0].split() for worker in workers)
    assert all(worker.returncode == 0 for worker in workers)
    assert results == [["False", "3"], ["False", "3"], ["True", "3"]]
    assert len(list((root / ".dokoro" / "backup").glob("original-*"))) == 1
    assert not is_original_database(root / ".dokoro" / "db" / "dokoro.sqlite")
    found = find_conversion(root)
    assert found is not None and found[1]["counts"]["conversation_summaries"] == 3
