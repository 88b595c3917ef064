"""What ``dokoro doctor`` reports: the parts of a store actually in use, each with a plain label."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import text

from dokoro_store.db.engine import describe_url
from dokoro_store.db.migrate import HEADS, current_heads, schema_label
from dokoro_store.moving.transfer import row_count, store_tables

if TYPE_CHECKING:
    from dokoro_store.store import Store

__all__ = ["Check", "diagnose"]


@dataclass(frozen=True)
class Check:
    label: str
    value: str
    status: str  # "ok" | "warn" | "fail" | "info"


def _retrieval_checks(store: Store) -> list[Check]:
    """Embedder, vector engine, full text and index freshness, as the search server sees them."""
    status = store.search.status()
    if status.embedder_kind == "none":
        checks = [Check("Embedder", f"none: {status.embedder_detail}", "info")]
    elif not status.embedder_available:
        # The store's vectors are made by an embedder this process cannot run: search and recall
        # here fall back to word matching, a failure to fix (the detail says how), not a nuance.
        stranded = bool(status.index_stamp and status.vectors)
        checks = [
            Check(
                "Embedder",
                f"{status.embedder_label}: unavailable ({status.embedder_detail})",
                "fail" if stranded else "warn",
            )
        ]
    else:
        state = "warn" if status.embedder_kind == "hashing" else "ok"
        checks = [Check("Embedder", f"{status.embedder_label}, stamp {status.embedder}", state)]
        if status.embedder_model_file:
            checks.append(Check("Embedder model", status.embedder_model_file, "info"))
    checks.append(Check("Re-ranker", status.reranker, "info"))
    if store.db.dialect == "postgresql":
        checks.append(_vector_support(store))
    engine_state = "ok" if status.vector_engine != "exact" else ("warn" if store.db.dialect == "postgresql" else "info")
    checks.append(Check("Vector engine", status.vector_engine_label, engine_state))
    checks.append(Check("Full text", status.full_text, "ok"))
    summary = (
        f"{status.indexed_docs}/{status.total_docs} documents indexed, {status.chunks} chunks, {status.vectors} "
        f"vectors (stamp {status.index_stamp or 'none yet'})"
    )
    if status.stamp_mismatch:
        # One store, two embedders: this process's vectors cannot be compared with the store's.
        checks.append(Check("Search index", f"{summary}; {status.stamp_mismatch}", "fail"))
    elif status.pending_docs:
        checks.append(Check("Search index", f"{summary}; {status.pending_docs} waiting (dokoro reindex)", "info"))
    else:
        checks.append(Check("Search index", summary, "ok"))
    return checks


def _vector_support(store: Store) -> Check:
    with store.db.engine.connect() as connection:
        installed = connection.execute(text("SELECT extversion FROM pg_extension WHERE extname = 'vector'")).scalar()
        available = connection.execute(
            text("SELECT default_version FROM pg_available_extensions WHERE name = 'vector'")
        ).scalar()
    if installed:
        return Check("pgvector", f"installed ({installed})", "ok")
    if available:
        return Check("pgvector", f"available ({available}), not yet enabled in this database", "info")
    return Check("pgvector", "absent: vectors will use an exact scan (slower on large stores)", "warn")


def _moved_in(store: Store) -> list[Check]:
    """Where the store came from when it was converted from the original dokoro (docs/moving-in.md)."""
    from dokoro_store.moving.original import find_conversion, is_original_database

    if store.db.dialect != "sqlite" and is_original_database(store.paths.sqlite_file):
        return [
            Check(
                "Original store",
                f"{store.paths.root} holds a store of the original dokoro, not in this database: bring it here "
                f"with `dokoro migrate --from-original {store.paths.root}`",
                "warn",
            )
        ]
    found = find_conversion(store.paths.root)
    if found is None:
        return []
    folder, record = found
    when = record.get("converted_at") or "?"
    return [Check("Moved in", f"from the original dokoro on {when}; its database and files are in {folder}", "info")]


def diagnose(store: Store) -> list[Check]:
    """Every check, in reading order. Never raises for a healthy-but-partial store."""
    checks: list[Check] = []
    if store.db.dialect == "sqlite":
        checks.append(Check("Backend", f"SQLite (embedded) at {store.paths.sqlite_file}", "ok"))
        with store.db.engine.connect() as connection:
            mode = connection.exec_driver_sql("PRAGMA journal_mode").scalar()
        checks.append(Check("Journal", f"{mode}", "ok" if str(mode).lower() == "wal" else "warn"))
    else:
        with store.db.engine.connect() as connection:
            version = connection.execute(text("SHOW server_version")).scalar()
        checks.append(Check("Backend", f"PostgreSQL {version} (team) at {describe_url(store.db.url)}", "ok"))
    heads = current_heads(store.db)
    upgraded = ""
    if store.schema_before and store.schema_before != heads:
        upgraded = f"; upgraded on this open from {schema_label(store.schema_before)}"
    elif not store.schema_before:
        upgraded = "; created on this open"
    checks.append(
        Check(
            "Schema",
            f"revision {schema_label(heads)} (this dokoro expects {schema_label(HEADS)}){upgraded}",
            "ok" if heads == HEADS else "fail",
        )
    )
    checks.append(Check("Workspace folder", str(store.paths.root), "ok" if store.paths.root.is_dir() else "fail"))
    checks += _moved_in(store)
    checks += _retrieval_checks(store)
    counts = {table.name: row_count(store.db, table) for table in store_tables()}
    checks.append(Check("Rows", ", ".join(f"{name} {count}" for name, count in counts.items()), "info"))
    pending = store.episodic.pending_sessions()
    checks.append(
        Check(
            "Compaction",
            f"{len(pending)} interrupted compaction(s) waiting" if pending else "nothing pending",
            "warn" if pending else "ok",
        )
    )
    unsafe = store.memories.unsafe_rows()
    checks.append(
        Check(
            "Memory rows",
            f"{len(unsafe)} an earlier version let in that no file can hold (e.g. {unsafe[0][0]!r}: {unsafe[0][1]}): "
            "`dokoro doctor --fix` repairs them"
            if unsafe
            else "every memory can be written to its file",
            "fail" if unsafe else "ok",
        )
    )
    tokens = [t for t in store.tokens.list() if t.revoked_at is None]
    checks.append(Check("HTTP tokens", f"{len(tokens)} live token(s)", "info"))
    return checks
