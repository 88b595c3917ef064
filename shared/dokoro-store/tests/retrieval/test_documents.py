"""The indexing pipeline: content hashes, chunks, stamped vectors, listeners; on both backends."""

from __future__ import annotations

import pytest
from dokoro_store.errors import EmbedderMismatchError, InvalidArgumentError, NotFoundError
from dokoro_store.index.embedders.hashing import HashingEmbedder
from dokoro_store.models.index import chunks
from dokoro_store.semantic.documents.service import CONTENT_PREFIX, NewDocument
from sqlalchemy import select


@pytest.fixture
def embed_calls(monkeypatch):
    """Texts the hashing embedder was asked to embed, in order."""
    calls: list[str] = []
    original = HashingEmbedder.embed

    def spy(self, texts, *, query=False):
        calls.extend(texts)
        return original(self, texts, query=query)

    monkeypatch.setattr(HashingEmbedder, "embed", spy)
    return calls


def test_indexing_content_creates_the_document_when_the_id_is_new(search_store):
    report = search_store.docs.index_content("adr-012", "We chose JWT for the API.", "Auth decision")

    doc = search_store.docs.get("adr-012")
    assert doc.filepath == f"{CONTENT_PREFIX}adr-012"
    assert doc.title == "Auth decision"
    assert report.indexed == 1 and report.chunks == 1 and report.vectors == 1
    assert report.embedder == search_store.embedder.status().id
    with search_store.db.read() as session:
        (row,) = session.execute(select(chunks)).all()
    assert row.embedder == report.embedder and row.embedding is not None


def test_only_changed_documents_are_re_embedded(open_store, embed_calls):
    store = open_store(embedder="hashing")
    store.docs.index_content("a", "alpha text", "A")
    store.docs.index_content("b", "beta text", "B")
    embed_calls.clear()

    report = store.docs.index_docs(None)
    assert (report.indexed, report.unchanged) == (0, 2)
    assert embed_calls == []

    store.docs.save("b", "beta text, edited")
    assert store.docs.pending() == ["b"]
    report = store.docs.index_pending()

    assert report.indexed == 1
    assert embed_calls == ["B\nbeta text, edited"]
    assert store.docs.pending() == []


def test_indexing_listeners_hear_new_and_changed_documents_once(open_store):
    store = open_store(embedder="hashing")
    heard = []
    store.docs.on_indexed(lambda doc: heard.append((doc.doc_id, doc.reason, doc.content)))

    store.docs.index_content("n", "first", "N")
    store.docs.index_content("n", "first")  # unchanged: not indexed again
    store.docs.index_content("n", "second")
    store.docs.reindex(full=True)

    assert heard == [("n", "new", "first"), ("n", "changed", "second"), ("n", "full", "second")]


def test_a_batch_listener_hears_each_indexing_batch_in_one_call(open_store):
    store = open_store(embedder="hashing")
    batches = []
    store.docs.on_indexed(lambda docs: batches.append(sorted(d.doc_id for d in docs)), batch=True)

    store.docs.save("a", "alpha text")
    store.docs.save("b", "beta text")
    store.docs.index_docs(["a", "b"])
    store.docs.index_docs(["a", "b"])  # unchanged: no call

    assert batches == [["a", "b"]]


def test_a_bulk_index_embeds_the_next_batch_while_writing_this_one_and_keeps_the_order(open_store, embed_calls):
    store = open_store(embedder="hashing")
    batches, steps = [], []
    store.docs.on_indexed(lambda docs: batches.append([d.doc_id for d in docs]), batch=True)
    ids = [f"d{n:03d}" for n in range(150)]  # three indexing batches
    store.docs.save_many([NewDocument(i, f"text number {i}") for i in ids])

    report = store.docs.index_docs(ids, progress=lambda done, total, _what: steps.append((done, total)))

    assert report.indexed == 150 and report.vectors == 150
    assert embed_calls == [f"Untitled\ntext number {i}" for i in ids]  # every text once, in order
    assert [i for batch in batches for i in batch] == ids and len(batches) == 3
    assert steps == [(64, 150), (128, 150), (150, 150)]
    assert store.docs.pending() == []


def test_an_embedder_failing_mid_run_leaves_the_rest_of_the_run_to_full_text(open_store, monkeypatch):
    from dokoro_store.errors import EmbedderUnavailableError

    store = open_store(embedder="hashing")
    ids = [f"d{n:03d}" for n in range(150)]
    store.docs.save_many([NewDocument(i, f"text number {i}") for i in ids])
    original, calls = HashingEmbedder.embed, []

    def failing_after_the_first_batch(self, texts, *, query=False):
        calls.append(len(texts))
        if len(calls) > 1:
            raise EmbedderUnavailableError("the model went away")
        return original(self, texts, query=query)

    monkeypatch.setattr(HashingEmbedder, "embed", failing_after_the_first_batch)
    report = store.docs.index_docs(ids)

    assert report.indexed == 150 and report.vectors == 64  # the first batch only
    assert report.notes == ["vectors skipped: the model went away"]
    assert len(store.docs.pending()) == 150 - 64  # their vectors are still to make


def test_a_failing_listener_never_breaks_indexing_or_the_other_listeners(open_store):
    store = open_store(embedder="hashing")
    heard = []

    def broken(_doc):
        raise RuntimeError("boom")

    store.docs.on_indexed(broken)
    store.docs.on_indexed(lambda _docs: 1 / 0, batch=True)
    store.docs.on_indexed(lambda doc: heard.append(doc.doc_id))

    report = store.docs.index_content("x", "text")

    assert report.indexed == 1 and heard == ["x"]


def test_without_an_embedder_documents_are_indexed_for_full_text_only(open_store):
    store = open_store(embedder="none")

    report = store.docs.index_content("x", "full text only")

    assert report.vectors == 0 and report.embedder is None
    assert store.search.universal("full text").hits[0].doc_id == "x"
    assert store.docs.pending() == []


def test_searching_with_another_embedder_matches_words_says_why_and_names_dokoro_reembed(open_store):
    first = open_store(embedder="hashing")
    first.docs.index_content("x", "refresh token rotation", "Auth")
    first.close()

    other = open_store(embedder="static")
    hybrid = other.search.universal("token rotation")  # word matching still answers, and says why
    assert hybrid.results[0].doc_id == "x" and hybrid.embedder is None
    assert any("dokoro reembed" in note and "full-text only" in note for note in hybrid.notes)
    with pytest.raises(EmbedderMismatchError, match="dokoro reembed"):
        other.search.universal("token rotation", mode="semantic")
    with pytest.raises(EmbedderMismatchError, match="dokoro reembed"):
        other.docs.index_content("y", "another document")
    assert other.search.universal("token rotation", mode="keyword").hits[0].doc_id == "x"
    assert other.search.status().stamp_mismatch is not None

    report = other.docs.reembed()

    assert report.vectors == 1
    assert other.docs.stamp()[0] == other.embedder.status().id
    assert other.search.universal("token rotation").hits[0].doc_id == "x"


def test_refresh_notes_a_mismatch_instead_of_failing(open_store):
    first = open_store(embedder="hashing")
    first.docs.index_content("x", "one")
    first.docs.save("x", "one, changed")
    first.close()

    other = open_store(embedder="static")
    refresh = other.search.refresh()

    (note,) = refresh.notes
    assert "dokoro reembed" in note
    assert other.docs.pending() == ["x"]  # it waits: vectors of two embedders are never mixed


def test_a_full_reindex_rebuilds_every_chunk_and_restamps(open_store):
    store = open_store(embedder="hashing")
    store.docs.index_content("a", "alpha")
    store.docs.index_content("b", "beta")

    report = store.docs.reindex(full=True)

    assert (report.indexed, report.vectors) == (2, 2)
    assert store.docs.stats().indexed_docs == 2


def test_deleting_a_document_removes_its_chunks(open_store):
    store = open_store(embedder="hashing")
    store.docs.index_content("a", "alpha")

    assert store.docs.delete("a")

    assert store.docs.stats().chunks == 0
    with pytest.raises(NotFoundError):
        store.docs.get("a")
    assert not store.docs.delete("a")


def test_bulk_saving_then_indexing(open_store):
    store = open_store(embedder="hashing")

    store.docs.save_many([NewDocument(f"d{i}", f"text number {i}", title=f"T{i}") for i in range(130)])
    report = store.docs.index_pending()

    assert report.indexed == 130
    assert store.docs.stats().vectors == 130


@pytest.mark.parametrize(
    ("doc_id", "content", "message"),
    [
        (" ", "x", "doc_id must not be empty"),
        ("a\nb", "x", "one line"),
        ("x" * 300, "x", "too long"),
        ("a", " ", "content"),
    ],
)
def test_bad_arguments_are_refused(search_store, doc_id, content, message):
    with pytest.raises(InvalidArgumentError, match=message):
        search_store.docs.index_content(doc_id, content)


def test_long_documents_are_chunked_and_each_chunk_has_a_vector(open_store):
    store = open_store(embedder="hashing")
    text = "\n".join(f"## Part {i}\n" + "lorem ipsum dolor " * 40 for i in range(40))

    report = store.docs.index_content("long", text)

    assert report.chunks > 5 and report.vectors == report.chunks
    with store.db.read() as session:
        ids = [r.chunk_id for r in session.execute(select(chunks).order_by(chunks.c.chunk_index)).all()]
    assert ids[:2] == ["long_0", "long_1"]


def test_a_process_that_cannot_run_the_store_embedder_says_so_on_every_search_answer(open_store, monkeypatch):
    from dokoro_store.index.embedders import handle as embedders_module

    first = open_store(embedder="static")
    first.docs.index_content("x", "refresh token rotation", "Auth")
    stamp = first.docs.stamp()[0]
    first.close()
    assert first.search.vector_notice() is None  # the process that made the vectors compares them

    monkeypatch.setattr(embedders_module, "static_available", lambda: (False, "model2vec is not installed"))
    other = open_store()  # auto: the stamp decides, and this process cannot run it
    notice = other.search.vector_notice()
    assert notice is not None and "cannot run" in notice and str(stamp) in notice and "dokoro reembed" in notice
    for _ in range(2):  # every answer, not the first only
        found = other.search.universal("token rotation")
        assert found.results[0].doc_id == "x"
        assert any("model2vec is not installed" in note for note in found.notes)
    assert other.docs.stamp()[0] == stamp  # nothing switched the store's embedder
