"""The entity graph written behind the index writes (``docs.unextracted``), with real processes:
a write leaves a durable mark, the graph tools answer from a complete graph right after the write,
a writer killed (SIGKILL) before its background step leaves marks the next process completes,
on SQLite and PostgreSQL."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from dokoro_store import Store
from dokoro_store.clock import FrozenClock
from dokoro_store.models import Doc
from mcp import Client
from sqlalchemy import func, select

pytestmark = pytest.mark.anyio

# A writer: indexes documents one at a time, printing each id once committed. ``delay`` is the
# wait before the background extraction; the doomed writer never gets there.
_CHILD = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    import dokoro_store.semantic.graph.indexer as behind
    from dokoro_store import Store

    root, url, count, delay = Path(sys.argv[1]), sys.argv[2] or None, int(sys.argv[3]), float(sys.argv[4])
    behind.EXTRACT_DELAY = delay
    with Store.open(root, database_url=url) as store:
        for i in range(count):
            store.docs.index_content(f"note-{i}", f"services/svc{i}.py uses redis.", f"Note {i}")
            print(f"note-{i}", flush=True)
    """
)


def _marked(store: Store) -> list[str]:
    docs = Doc.__table__  # type: ignore[attr-defined]
    with store.db.read() as session:
        return sorted(
            str(x) for x in session.execute(select(docs.c.id).where(docs.c.unextracted.is_not(None))).scalars()
        )


def _linked_docs(store: Store) -> int:
    from dokoro_store.models import DocEntity

    with store.db.read() as session:
        return int(session.execute(select(func.count(func.distinct(DocEntity.doc_id)))).scalar_one())


def test_a_write_marks_its_document_and_a_graph_read_completes_it(
    tmp_path: Path, database_url: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dokoro_store.semantic.graph.indexer as behind

    monkeypatch.setattr(behind, "EXTRACT_DELAY", 3600.0)  # no background step in this test
    clock = FrozenClock(datetime(2026, 5, 1, 9, 0, tzinfo=UTC))
    with Store.open(tmp_path / "dokoro", database_url=database_url, clock=clock) as store:
        written_at = clock.now()
        store.docs.index_content("doc-1", "src/app.ts uses redis.", "App")
        assert _marked(store) == ["doc-1"]  # durable: in the database, not only in this process
        assert _linked_docs(store) == 0  # not extracted on the write's path
        clock.advance(timedelta(days=2))
        hits = store.graph.search("redis").hits  # a read completes what is pending first
        assert [(h.name, h.doc_count) for h in hits] == [("redis", 1)]
        assert _marked(store) == []
        app = store.graph.search("src/app.ts").hits[0]
        walk = store.graph.traverse(app.id, as_of=written_at + timedelta(hours=1))
        # The relation holds from when its text was written, not from the (later) extraction.
        assert [(r.source, r.type, r.target) for r in walk.relations] == [("src/app.ts", "depends_on", "redis")]
        # Indexed again with new text before the step ran: the newer mark wins, nothing is lost.
        store.docs.index_content("doc-1", "src/app.ts uses postgres.", "App")
        store.docs.index_content("doc-2", "src/cli.ts uses kafka.", "Cli")
        assert _marked(store) == ["doc-1", "doc-2"]
        assert store.graph.search("kafka").hits[0].doc_count == 1
        assert store.graph.search("postgres").hits[0].doc_count == 1
        store.docs.index_content("doc-3", "lib/worker.py uses rabbitmq.", "Worker")
    with Store.open(tmp_path / "dokoro", database_url=database_url, clock=clock) as store:
        assert _marked(store) == []  # the store's close extracted what was left
        assert _linked_docs(store) == 3


def test_the_background_step_extracts_without_a_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import dokoro_store.semantic.graph.indexer as behind

    monkeypatch.setattr(behind, "EXTRACT_DELAY", 0.05)
    with Store.open(tmp_path / "dokoro") as store:
        for i in range(5):
            store.docs.index_content(f"doc-{i}", f"services/svc{i}.py uses redis.", f"Doc {i}")
        deadline = time.monotonic() + 60
        while _marked(store) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _marked(store) == []
        assert _linked_docs(store) == 5


def test_a_bulk_batch_is_extracted_inline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import dokoro_store.semantic.graph.indexer as behind
    from dokoro_store.semantic.documents.service import NewDocument

    monkeypatch.setattr(behind, "EXTRACT_DELAY", 3600.0)
    with Store.open(tmp_path / "dokoro") as store:
        count = behind.INLINE_FROM + 4
        store.docs.save_many([NewDocument(id=f"d{i}", content=f"src/m{i}.ts uses redis.") for i in range(count)])
        store.docs.index_docs()
        assert _marked(store) == []
        assert _linked_docs(store) == count


@pytest.mark.slow  # writer processes, one killed
def test_a_writer_killed_before_extracting_leaves_marks_the_next_process_completes(
    tmp_path: Path, database_url: str | None, killed_after: Any
) -> None:
    root = tmp_path / "dokoro"
    with Store.open(root, database_url=database_url):  # the schema, before the writer
        pass
    writer = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(root), database_url or "", "1000", "3600"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    written = killed_after(writer, 6)
    with Store.open(root, database_url=database_url) as store:
        left = _marked(store)
        assert set(written) <= set(left)  # every committed write left its mark
        assert _linked_docs(store) == 0
        for i in range(len(written)):
            hits = store.graph.search(f"services/svc{i}.py").hits
            assert [h.doc_count for h in hits] == [1], f"services/svc{i}.py"
        assert _marked(store) == []
        assert _linked_docs(store) >= len(written)


async def test_the_graph_tools_see_a_document_right_after_it_is_indexed(tmp_path: Path, server_params: Any) -> None:
    store = tmp_path / "dokoro"
    async with Client(server_params("dokoro", store, tmp_path, DOKORO_EMBEDDER="hashing")) as client:
        done = await client.call_tool(
            "search_index_content",
            {"doc_id": "arch", "title": "Architecture", "content": "services/billing.py uses stripe."},
        )
        assert not done.is_error, done.content
        found = await client.call_tool("dokoro_entity_graph", {"query": "stripe"})
        assert not found.is_error, found.content
        hits = found.structured_content["entities"]
        assert [(h["name"], h["doc_count"]) for h in hits] == [("stripe", 1)]
