"""A workspace service is complete once constructed: its collaborators come in through the constructor."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from dokoro_store import FrozenClock, Store
from dokoro_store.working.current.file import CurrentFile
from dokoro_store.working.workspace.service import WorkspaceService


class _Documents:
    """Records what the dump asks of the documents service."""

    def __init__(self) -> None:
        self.saved: list[tuple[str, str | None, str | None, str | None]] = []
        self.indexed: list[str] = []

    def save(
        self,
        doc_id: str,
        content: str,
        *,
        title: str | None = None,
        filepath: str | None = None,
        doc_type: str | None = None,
        status: str | None = None,
    ) -> bool:
        assert content.startswith("---\n")
        self.saved.append((doc_id, title, filepath, doc_type))
        return True

    def index_docs(self, doc_ids: Sequence[str] | None = None) -> object:
        self.indexed += list(doc_ids or [])
        return None


def test_a_workspace_built_alone_calls_the_collaborators_it_was_given(store: Store, clock: FrozenClock) -> None:
    documents = _Documents()
    sweeps: list[Path | None] = []
    released: list[str] = []

    def sweep(claim_root: Path | None) -> str:
        sweeps.append(claim_root)
        return "swept"

    def release(session_id: str) -> int:
        released.append(session_id)
        return 2

    workspace = WorkspaceService(
        store.paths,
        store.db,
        clock,
        current=CurrentFile(store.paths, clock),
        documents=documents,
        after_claim=sweep,
        release_claims=release,
    )

    claimed = workspace.claim("wire it", claim_root=store.paths.root)
    dumped = workspace.dump("done", keep_active=False)

    assert (claimed.sweep_note, sweeps) == ("swept", [store.paths.root])
    assert documents.saved == [(dumped.doc_id, "Session: wire it", dumped.relative, "session")]
    assert documents.indexed == [dumped.doc_id]
    assert (released, dumped.claims_released) == ([claimed.session_id], 2)


def test_without_optional_collaborators_a_claim_says_nothing_of_a_sweep_and_a_dump_releases_no_claims(
    store: Store, clock: FrozenClock
) -> None:
    workspace = WorkspaceService(
        store.paths, store.db, clock, current=CurrentFile(store.paths, clock), documents=_Documents()
    )

    claimed = workspace.claim("alone")
    dumped = workspace.dump("done", keep_active=False)

    assert claimed.sweep_note is None
    assert (dumped.released, dumped.claims_released) == (True, 0)
