"""Bearer tokens of the shared server: one agent each, stored only as hashes."""

from __future__ import annotations

from pathlib import Path

import pytest
from dokoro_store import InvalidArgumentError, NotFoundError, Store
from dokoro_store.models import ApiToken
from sqlmodel import select


def test_a_token_verifies_to_its_agent_and_is_stored_hashed(tmp_path: Path, database_url: str | None) -> None:
    with Store.open(tmp_path / "s", database_url=database_url) as store:
        issued = store.tokens.create("alice", label="laptop")
        assert store.tokens.verify(issued.token) == "alice"
        assert store.tokens.verify(issued.token + "x") is None
        assert store.tokens.verify("") is None
        with store.db.read() as session:
            row = session.exec(select(ApiToken)).one()
        assert issued.token not in (row.token_hash, row.id, row.label)
        assert row.last_used_at is not None


def test_a_revoked_token_no_longer_verifies(tmp_path: Path, database_url: str | None) -> None:
    with Store.open(tmp_path / "s", database_url=database_url) as store:
        issued = store.tokens.create("bob")
        store.tokens.revoke(issued.id)
        assert store.tokens.verify(issued.token) is None
        assert not store.tokens.any_live()
        with pytest.raises(NotFoundError, match="dokoro token list"):
            store.tokens.revoke("tok_missing")


def test_an_agent_id_with_spaces_is_refused(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s") as store, pytest.raises(InvalidArgumentError, match="agent id"):
        store.tokens.create("not ok")
