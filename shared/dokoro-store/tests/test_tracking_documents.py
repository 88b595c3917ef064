"""Everything an agent writes is findable: issues, features and the week are documents, found by
hybrid search and listed on the board, and kept in step with their rows (on both databases)."""

from __future__ import annotations

from dokoro_store import Store
from dokoro_store.models import Doc


def _hit(store: Store, query: str, doc_id: str):
    store.search.refresh()  # what every search tool does first: index the documents written since
    found = {h.doc_id: h for h in store.search.universal(query, limit=10).hits}
    return found.get(doc_id)


def test_an_issue_is_found_by_search_and_listed_with_its_status(any_store: Store):
    added = any_store.tracking.add_issue(
        "Login fails after a token refresh", priority="high", description="The refresh races with the logout."
    )
    issue = added.item

    hit = _hit(any_store, "login token refresh race", f"issue:{issue.id}")

    assert hit is not None and hit.title == "Login fails after a token refresh"
    assert (hit.doc_type, hit.status, hit.filepath) == ("issue", "pending", added.path)
    listed = {c.id: c for c in any_store.board.docs(None)}
    assert listed[f"issue:{issue.id}"].status == "pending" and listed[f"issue:{issue.id}"].priority == "high"


def test_a_moved_issue_carries_its_new_status_and_file(any_store: Store):
    issue = any_store.tracking.add_issue("Cache warms twice").item

    resolved = any_store.tracking.complete_issue(issue.id, "warm it once, at start")

    card = {c.id: c for c in any_store.board.docs("resolved")}[f"issue:{issue.id}"]
    assert card.filepath == resolved.path and "/resolved/" in card.filepath
    assert "warm it once, at start" in any_store.board.get(f"issue:{issue.id}").content


def test_a_feature_and_the_week_are_found_too(any_store: Store):
    feature = any_store.tracking.add_feature("Offline mode for the mobile app", complexity="complex").item
    any_store.tracking.week.add_item("task", "Write the offline sync design note", priority="high")

    assert _hit(any_store, "offline mode mobile", f"feature:{feature.id}") is not None
    any_store.search.refresh()
    week = [h for h in any_store.search.universal("offline sync design note", limit=10).hits if h.doc_type == "week"]
    assert len(week) == 1 and week[0].doc_id.startswith("week:") and week[0].filepath == "currentWeek.md"


def test_items_written_before_they_were_indexed_get_their_document_on_the_next_call(any_store: Store):
    issue = any_store.tracking.add_issue("Flaky upload test").item
    with any_store.db.write() as session:
        row = session.get(Doc, f"issue:{issue.id}")
        assert row is not None
        session.delete(row)

    any_store.tracking.list_items("issue")

    assert _hit(any_store, "flaky upload test", f"issue:{issue.id}") is not None
