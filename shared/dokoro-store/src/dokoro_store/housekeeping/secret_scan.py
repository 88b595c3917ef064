"""Finding secrets already stored, and redacting them in place (``dokoro doctor --scan-secrets``).

Since the store redacts every write (``db/redaction.py``, ``files.atomic_write_bytes``), new
secrets never land; this is for what an older dokoro, a hand edit or a copied file left behind.
The scan reads every text and JSON field of every table (the search index's chunks included) and
every regular file under the store folder (not the database's own files, not through symlinks),
and reports where secrets sit: table, column and primary key, or file path. It never keeps or
prints a secret. The memory files' manifest (``.dokoro/index/memory-files.sqlite``, a SQLite file
of this folder, so skipped as binary by the file scan) is read table by table as the database is.

``fix=True`` redacts each finding in place: the row is updated (the redaction hook rewrites it),
the file is rewritten atomically, a manifest entry holding a secret is dropped (it is a cache: the
next memory call compares that file with its row again) and the manifest vacuumed, the
documents whose content or chunks changed are indexed again, the SQLite full-text index is
rebuilt, and the database is vacuumed so the old text does not linger in free pages
(PostgreSQL: ``VACUUM`` of the fixed tables; a ``VACUUM FULL`` rewrites them completely).
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import LargeBinary, Table, select, update
from sqlalchemy.exc import IntegrityError

from dokoro_store.db import write_guard
from dokoro_store.db.engine import Database
from dokoro_store.db.types import UtcDateTime
from dokoro_store.paths import StorePaths
from dokoro_store.results.secrets import SecretFinding, SecretScan
from dokoro_store.semantic.documents.service import DocumentService
from dokoro_store.walls.files import atomic_write_bytes, file_lock, redact_bytes
from dokoro_store.walls.secrets import contains_secret, redact, redact_value

__all__ = ["SecretScanner"]

log = logging.getLogger("dokoro.store")

_BATCH = 500
# Tables whose rows are a document's derived text: a fixed row means the document is indexed again.
_DOC_COLUMN = {"docs": "id", "chunks": "doc_id"}
# The memory files' manifest: its tables, each with its key and its text columns.
MEMORY_MANIFEST = ("index", "memory-files.sqlite")
_MANIFEST_TABLES = (
    ("files", "path", ("path", "memory_id", "note")),
    ("dirs", "path", ("path",)),
    ("meta", "key", ("value",)),
)


def _scan_tables() -> list[Table]:
    from dokoro_store.models.index import chunks
    from dokoro_store.moving.transfer import store_tables

    return [*store_tables(), chunks]


def _text_columns(table: Table) -> list[str]:
    return [c.name for c in table.columns if not isinstance(c.type, LargeBinary | UtcDateTime)]


def _kinds(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return contains_secret(value)
    if isinstance(value, dict | list):
        # Reported to no collector: a scan is not a write.
        from dokoro_store.walls.secrets import collect_redactions

        with collect_redactions():
            return redact_value(value)[1]
    return ()


def _key_text(pk: Sequence[str], row: Mapping[str, Any]) -> str:
    return ", ".join(f"{name}={row[name]}" for name in pk)


class SecretScanner:
    """Scans (and with ``fix``, cleans) the rows and files of one store."""

    def __init__(self, paths: StorePaths, db: Database, docs: DocumentService) -> None:
        self._paths = paths
        self._db = db
        self._docs = docs

    def scan(self, *, fix: bool = False) -> SecretScan:
        findings: list[SecretFinding] = []
        rows = 0
        fixed_tables: set[str] = set()
        reindex: set[str] = set()
        for table in _scan_tables():
            count, found, docs = self._scan_table(table, fix=fix)
            rows += count
            findings += found
            if any(f.fixed for f in found):
                fixed_tables.add(table.name)
                reindex.update(docs)
        files, file_findings = self._scan_files(fix=fix)
        findings += file_findings
        manifest_findings = self._scan_manifest(fix=fix)
        files += manifest_findings is not None
        findings += manifest_findings or []
        reindexed = 0
        if fix and fixed_tables:
            reindexed = self._after_fix(sorted(reindex), sorted(fixed_tables))
        return SecretScan(
            findings=findings, rows_scanned=rows, files_scanned=files, fix=fix, documents_reindexed=reindexed
        )

    # ------------------------------------------------------------------ rows
    def _rows(self, table: Table) -> Iterator[list[Mapping[str, Any]]]:
        pk = [table.c[c.name] for c in table.primary_key.columns]
        with self._db.engine.connect() as connection:
            result = connection.execution_options(yield_per=_BATCH).execute(select(table).order_by(*pk))
            for partition in result.partitions(_BATCH):
                yield [dict(row._mapping) for row in partition]

    def _scan_table(self, table: Table, *, fix: bool) -> tuple[int, list[SecretFinding], set[str]]:
        """How many rows, the findings, and the documents whose text (or chunks) hold secrets."""
        pk = [c.name for c in table.primary_key.columns]
        doc_column = _DOC_COLUMN.get(table.name)
        docs: set[str] = set()
        columns = _text_columns(table)
        found: list[tuple[SecretFinding, dict[str, Any], str, Any]] = []
        count = 0
        for batch in self._rows(table):
            for row in batch:
                count += 1
                for column in columns:
                    value = row[column]
                    kinds = _kinds(value)
                    if not kinds:
                        continue
                    key = _key_text(pk, row)
                    finding = SecretFinding(
                        where=f"{table.name}.{column} [{key}]",
                        table=table.name,
                        column=column,
                        row=key,
                        kinds=list(kinds),
                    )
                    found.append((finding, {name: row[name] for name in pk}, column, value))
                    if doc_column is not None:
                        docs.add(str(row[doc_column]))
        if not fix or not found:
            return count, [f for f, *_ in found], docs
        return count, [self._fix_row(table, *item) for item in found], docs

    def _fix_row(
        self, table: Table, finding: SecretFinding, key: dict[str, Any], column: str, value: Any
    ) -> SecretFinding:
        cleaned, _kinds = redact_value(value)
        statement = update(table).where(*(table.c[name] == v for name, v in key.items())).values({column: cleaned})
        try:
            with self._db.write() as session, write_guard.all_tables(session):  # any table alike
                session.execute(statement)
        except IntegrityError:
            # Redacted, the value equals another row's (two entities named by different secrets).
            return finding.model_copy(
                update={"problem": "redacting it would duplicate another row's unique value; delete the row"}
            )
        return finding.model_copy(update={"fixed": True})

    # ------------------------------------------------------------------ files
    @property
    def _manifest(self) -> Path:
        return self._paths.data_dir.joinpath(*MEMORY_MANIFEST)

    def _scan_manifest(self, *, fix: bool) -> list[SecretFinding] | None:
        """The memory files' manifest, row by row (None when there is none). ``fix`` drops the
        entries holding secrets (a cache, rebuilt from the files and rows) and vacuums it."""
        path = self._manifest
        if path.is_symlink() or not path.is_file():
            return None
        relative = path.relative_to(self._paths.root).as_posix()
        findings: list[SecretFinding] = []
        with contextlib.ExitStack() as stack:
            if fix:
                stack.enter_context(file_lock(self._paths.locks_dir, "memory-files", within=self._paths.root))
            connection = stack.enter_context(contextlib.closing(sqlite3.connect(path, timeout=30.0)))
            dropped: list[tuple[str, str, str]] = []
            for table, key, columns in _MANIFEST_TABLES:
                try:
                    rows = connection.execute(f"SELECT {key}, {', '.join(columns)} FROM {table}").fetchall()
                except sqlite3.DatabaseError:
                    continue  # an older or damaged manifest: the next memory call rebuilds it
                for row in rows:
                    for column, value in zip(columns, row[1:], strict=True):
                        kinds = contains_secret(value) if isinstance(value, str) else ()
                        if not kinds:
                            continue
                        shown = f"{key}={redact(str(row[0])).text}"
                        findings.append(
                            SecretFinding(
                                where=f"file {relative} ({table}.{column} [{shown}])",
                                path=relative,
                                row=shown,
                                kinds=list(kinds),
                                fixed=fix,
                            )
                        )
                        dropped.append((table, key, str(row[0])))
            if fix and dropped:
                with connection:
                    for table, key, value in dropped:
                        connection.execute(f"DELETE FROM {table} WHERE {key} = ?", (value,))
                    if any(table == "meta" for table, _key, _value in dropped):
                        connection.execute("DELETE FROM files")  # the manifest's identity gone: start it again
                        connection.execute("DELETE FROM dirs")
                connection.execute("VACUUM")
        return findings

    def _files(self) -> Iterator[Path]:
        skip = self._paths.db_dir.resolve()
        root = self._paths.root
        stack = [root]
        while stack:
            folder = stack.pop()
            try:
                entries = sorted(folder.iterdir())
            except OSError:
                continue
            for entry in entries:
                if entry.is_symlink():
                    continue  # never followed: it may point outside the store
                if entry.is_dir():
                    if entry.resolve() != skip:
                        stack.append(entry)
                elif entry.is_file():
                    yield entry

    def _scan_files(self, *, fix: bool) -> tuple[int, list[SecretFinding]]:
        findings: list[SecretFinding] = []
        count = 0
        for path in self._files():
            count += 1
            try:
                data = path.read_bytes()
            except OSError:
                continue
            if b"\0" in data:
                continue
            try:
                kinds = contains_secret(data.decode("utf-8"))
            except UnicodeDecodeError:
                continue
            if not kinds:
                continue
            relative = path.relative_to(self._paths.root).as_posix()
            finding = SecretFinding(where=f"file {relative}", path=relative, kinds=list(kinds))
            if fix:
                atomic_write_bytes(path, redact_bytes(data), within=self._paths.root)
                finding = finding.model_copy(update={"fixed": True})
            findings.append(finding)
        return count, findings

    # ------------------------------------------------------------------ after a fix
    def _after_fix(self, doc_ids: Sequence[str], tables: Sequence[str]) -> int:
        from dokoro_store.index.fulltext.index import full_text_for

        reindexed = 0
        if doc_ids:
            existing = self._existing_docs(doc_ids)
            if existing:
                self._docs.index_docs(existing, force=True)
                reindexed = len(existing)
        if "docs" in tables or "chunks" in tables:
            with self._db.write() as session:
                full_text_for(self._db.dialect).rebuild(session)
        self._vacuum(tables)
        return reindexed

    def _existing_docs(self, doc_ids: Sequence[str]) -> list[str]:
        from dokoro_store.models.index import docs_table

        with self._db.read() as session:
            found = session.execute(select(docs_table.c.id).where(docs_table.c.id.in_(list(doc_ids)))).scalars()
            return sorted(str(d) for d in found)

    def _vacuum(self, tables: Sequence[str]) -> None:
        """Drop the old text from the database files (SQLite: checkpoint + VACUUM; PostgreSQL: VACUUM)."""
        raw = self._db.engine.raw_connection()
        driver: Any = raw.driver_connection
        try:
            if self._db.dialect == "postgresql":
                driver.autocommit = True
                try:
                    for name in tables:
                        driver.execute(f'VACUUM "{name}"')
                finally:
                    driver.autocommit = False
            else:
                driver.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                driver.execute("VACUUM")
                driver.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except Exception:  # the fix itself is done; a busy database only keeps old pages longer
            log.warning("dokoro: could not vacuum the database after redacting secrets", exc_info=True)
        finally:
            raw.close()
