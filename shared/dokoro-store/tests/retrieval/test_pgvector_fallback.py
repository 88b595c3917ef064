"""PostgreSQL without the privilege to enable pgvector: an exact scan, said honestly."""

from __future__ import annotations

import uuid

import psycopg
import pytest
from dokoro_store import Store
from dokoro_store.housekeeping.health import diagnose
from dokoro_store.retrieval import RetrievalConfig


@pytest.fixture
def unprivileged_url(postgres_server):
    admin = str(postgres_server.get_uri())
    name, role = f"t_{uuid.uuid4().hex[:10]}", f"r_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw' NOSUPERUSER")
        connection.execute(f'CREATE DATABASE "{name}" OWNER {role}')
    base = admin.replace("postgresql://", "postgresql+psycopg://", 1)
    scheme, rest = base.split("://", 1)
    hostpart = rest.split("@", 1)[-1]
    url = f"{scheme}://{role}:pw@{hostpart}".replace("/postgres?", f"/{name}?", 1)
    try:
        yield url
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            connection.execute(f"DROP ROLE IF EXISTS {role}")


def test_without_pgvector_vectors_use_an_exact_scan_and_doctor_says_why(unprivileged_url, root, clock):
    with Store.open(
        root, database_url=unprivileged_url, clock=clock, retrieval=RetrievalConfig(embedder="hashing")
    ) as store:
        store.docs.index_content("db", "PostgreSQL database for the team", "DB")

        status = store.search.status()
        hits = store.search.universal("team database").hits

        assert status.vector_engine == "exact"
        assert "CREATE EXTENSION vector" in status.vector_engine_label
        assert hits[0].doc_id == "db" and hits[0].source == "hybrid"
        checks = {c.label: c for c in diagnose(store)}
        assert checks["Vector engine"].status == "warn"
        assert "exact scan" in checks["Vector engine"].value
