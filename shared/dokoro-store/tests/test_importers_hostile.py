"""Importers that keep everything and say what they did, on both backends: names in any script stay
distinct documents, a bad line is skipped with its line number (never a traceback), a secret in a
skipped line never reaches the reasons, a note's links are bounded, and an import stopped half-way
continues on the next run with its graph whole. The property tests are in ``test_importers_fuzz.py``."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from dokoro_store import FrozenClock, Store
from dokoro_store.moving.importers import apply_import_set, preview_of, read_knowledge_graph, read_notes_folder, writing
from dokoro_store.moving.importers.items import MAX_LINKS
from sqlalchemy import text

CITIES = ["東京", "大阪", "Москва", "Київ", "서울", "القاهرة", "Αθήνα", "תל אביב"]
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def _jsonl(path: Path, records: list[dict[str, object] | str]) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _entity(name: str, *observations: str, kind: str = "place") -> dict[str, object]:
    return {"type": "entity", "name": name, "entityType": kind, "observations": list(observations) or [f"about {name}"]}


def _docs(store: Store, prefix: str) -> dict[str, str]:
    with store.db.read() as session:
        rows = session.execute(text("SELECT id, title FROM docs WHERE id LIKE :p"), {"p": f"{prefix}%"})
        return {str(doc_id): str(title) for doc_id, title in rows}


def test_eight_cities_in_eight_scripts_are_eight_documents_and_the_report_counts_them(
    tmp_path: Path, any_store: Store
) -> None:
    items = read_knowledge_graph(_jsonl(tmp_path / "m.jsonl", [_entity(c) for c in CITIES]))

    done = apply_import_set(any_store, items)

    docs = _docs(any_store, "kg-")
    assert sorted(docs.values()) == sorted(CITIES)
    assert {"kg-dongjing", "kg-moskva", "kg-kiiv", "kg-athina"} <= set(docs)  # transliterated, readable
    assert (done.new, done.entities) == (8, 8)
    assert any_store.search.universal("Москва", mode="keyword").results[0].doc_id == "kg-moskva"
    again = apply_import_set(any_store, read_knowledge_graph(tmp_path / "m.jsonl"))
    assert (again.new, again.changed, again.unchanged, again.entities) == (0, 0, 8, 0)


def test_names_with_one_slug_get_a_short_hash_and_keep_their_ids_on_a_rerun(tmp_path: Path, any_store: Store) -> None:
    names = ["Cafe", "Café", "John Smith", "John_Smith", "😀", "🎉"]
    items = read_knowledge_graph(_jsonl(tmp_path / "m.jsonl", [_entity(n) for n in names]))

    apply_import_set(any_store, items)

    ids = {note.title: note.doc_id for note in items.notes}
    assert len(set(ids.values())) == 6 and _docs(any_store, "kg-") == {v: k for k, v in ids.items()}
    assert ids["Cafe"] == "kg-cafe" and ids["Café"].startswith("kg-cafe-") and len(ids["Café"]) == len("kg-cafe-") + 8
    # The next file names Café first: every name keeps the document it has.
    reordered = read_knowledge_graph(_jsonl(tmp_path / "m.jsonl", [_entity(n) for n in reversed(names)]))
    assert preview_of(any_store, reordered).unchanged == 6
    assert {note.title: note.doc_id for note in reordered.notes} == ids


def test_vault_notes_with_non_latin_names_stay_distinct(tmp_path: Path, any_store: Store) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    for n, name in enumerate(["会議メモ", "設計", "Заметка", "Нотатка", "노트", "ملاحظة"]):
        (vault / f"{name}.md").write_text(f"# {name}\n\nnote {n} links [[{CITIES[n]}]]\n", encoding="utf-8")

    done = apply_import_set(any_store, read_notes_folder(vault))

    assert (done.new, len(_docs(any_store, "note-"))) == (6, 6)


def test_bad_lines_are_skipped_with_their_line_numbers_and_the_rest_is_imported(
    tmp_path: Path, any_store: Store
) -> None:
    deep = '{"type": "entity", "name": "Deep", "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    records: list[dict[str, object] | str] = [_entity(f"E{n}", kind="concept") for n in range(8)]
    records[1] = deep
    records[3] = '{"type": "entity", "name": "bad\\ud800", "entityType": "x", "observations": ["y"]}'
    records[4] = '{"type": "entity", "name": "nul\\u0000", "entityType": "x", "observations": ["y"]}'
    records[5] = "{not json"
    records.append({"type": "relation", "from": "E0", "to": TOKEN, "relationType": "knows"})
    records.append({"type": "relation", "from": TOKEN, "to": "E0", "relationType": "knows"})
    records.append({"type": "relation", "from": "E0", "note": TOKEN})
    items = read_knowledge_graph(_jsonl(tmp_path / "m.jsonl", records))

    done = apply_import_set(any_store, items)

    assert [n.title for n in items.notes] == ["E0", "E2", "E6", "E7"]
    reasons = "\n".join(items.skipped)
    for expected in (
        "line 2: JSON nested too deep to read",
        "line 4: text with a lone surrogate",
        "line 5: text with a NUL character",
        "line 6: not JSON",
        "line 11: a relation without to/relationType",
        "line 10: relation from",
    ):
        assert expected in reasons, reasons
    assert TOKEN not in reasons and TOKEN[:12] not in reasons  # no secret in what is printed
    assert (done.new, done.skipped, done.relations) == (4, 6, 1)  # E0 knows the token-named entity
    with any_store.db.read() as session:
        names = [str(n) for n in session.execute(text("SELECT name FROM entities")).scalars()]
    assert names and not any(TOKEN in name for name in names)  # stored redacted


def test_a_note_with_twenty_thousand_wikilinks_is_bounded_and_says_so(tmp_path: Path, any_store: Store) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "hub.md").write_text("# Hub\n\n" + " ".join(f"[[Page {n}]]" for n in range(20_000)), encoding="utf-8")

    items = read_notes_folder(vault)
    done = apply_import_set(any_store, items)

    [hub] = items.notes
    assert len(hub.links) == MAX_LINKS and "[[Page 19999]]" in hub.content  # the text keeps every link
    assert any(f"hub.md: more than {MAX_LINKS:,} links; 18,000 left out" in s for s in items.skipped)
    assert done.relations == MAX_LINKS


class _Stopped(Exception):
    """A run stopped half-way (a kill, Ctrl-C, a lost connection)."""


@pytest.mark.parametrize("stop_at", ["graph", "documents", "index"])
def test_an_import_stopped_half_way_continues_with_its_graph_whole(
    tmp_path: Path,
    root: Path,
    clock: FrozenClock,
    database_url: str | None,
    monkeypatch: pytest.MonkeyPatch,
    stop_at: str,
) -> None:
    """Killed after a batch's graph, after its documents, or before their indexing: the rerun finds
    the batches written, writes the rest, and every entity of the file is in the graph."""
    monkeypatch.setattr(writing, "BATCH", 4)
    names = [f"Service {n}" for n in range(10)]
    source = _jsonl(
        tmp_path / "m.jsonl",
        [_entity(n, kind="service") for n in names]
        + [
            {"type": "relation", "from": a, "to": b, "relationType": "depends_on"} for a, b in itertools.pairwise(names)
        ],
    )
    with Store.open(root, database_url=database_url, clock=clock) as store:
        calls = {"n": 0}
        target = {"graph": store.graph, "documents": store.docs, "index": store.docs}[stop_at]
        method = {"graph": "persist_texts", "documents": "save_many", "index": "index_docs"}[stop_at]
        real = getattr(target, method)

        def stopping(*args: object, **kwargs: object) -> object:
            calls["n"] += 1
            if calls["n"] == 2:  # the second batch
                if stop_at == "graph":
                    real(*args, **kwargs)  # its graph committed, its documents never saved
                raise _Stopped
            return real(*args, **kwargs)

        monkeypatch.setattr(target, method, stopping)
        with pytest.raises(_Stopped):
            apply_import_set(store, read_knowledge_graph(source))

    with Store.open(root, database_url=database_url, clock=clock) as store:
        items = read_knowledge_graph(source)
        preview = preview_of(store, items)
        done = apply_import_set(store, items)

        first = 4 if stop_at != "index" else 8  # an unindexed batch is there, indexed now
        assert preview.unchanged == done.unchanged == first
        assert done.new == 10 - first and done.entities >= 10 - first
        assert done.indexed == 10 - 4  # the second batch (saved or not) and the third
        for name in names:
            found = store.graph.find_entity("service", name)
            assert found is not None, name
        assert store.docs.pending(only=[n.doc_id for n in items.notes]) == []
        history = store.graph.history(_service(store, "Service 4"))
        assert ("depends_on", "Service 5") in {(r.type, r.target) for r in history}


def _service(store: Store, name: str) -> int:
    found = store.graph.find_entity("service", name)
    assert found is not None and found.id is not None
    return found.id
