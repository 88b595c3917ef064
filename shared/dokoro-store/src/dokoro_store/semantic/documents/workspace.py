"""Workspace markdown in the search index, kept in step without a daemon.

:meth:`WorkspaceIndex.reconcile` runs on search-tool entry. It stats every markdown file of the
watched folders (``daily/ decisions/ insights/ research/ features/ retrospective/ archive/`` and
``current.md``) and compares modification time and size with a stat cache; only a file whose stat
changed is read and hashed, and only a file whose sha256 changed is saved as a document. So a
file edited by hand is found on the next call, and an idle call costs one ``stat`` per file. A
watched file that disappears removes its document; a file moved (the archive sweep) keeps its id.

The stat cache (``.dokoro/index/files.json``) is local to this machine: on a shared team database,
other machines' files are never taken for deleted ones.

:meth:`WorkspaceIndex.import_markdown` is ``dokoro migrate``: every ``**/*.md`` of the folder (§4.13).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import and_, not_, or_, select

from dokoro_store.db.engine import Database
from dokoro_store.models import Doc
from dokoro_store.models.index import docs_table
from dokoro_store.paths import StorePaths
from dokoro_store.semantic.documents.markdown import (
    IGNORED_DIRS,
    MarkdownDoc,
    content_hash,
    describe_markdown,
    doc_id_for,
    path_doc_id,
)
from dokoro_store.semantic.documents.service import CONTENT_PREFIX, DocumentService, IndexReport, Progress
from dokoro_store.walls.containment import plain_file, scan
from dokoro_store.walls.files import atomic_write_text, file_lock

__all__ = [
    "RENDERED_DIRS",
    "RENDERED_FILES",
    "WATCHED_DIRS",
    "WATCHED_FILES",
    "ImportReport",
    "ReconcileReport",
    "WorkspaceIndex",
]

log = logging.getLogger("dokoro.store")

WATCHED_DIRS = ("daily", "decisions", "insights", "research", "features", "retrospective", "archive")
WATCHED_FILES = ("current.md",)
# The store's own renderings of its rows (memory files, tracking items and features, the week):
# never documents of their own. A memory is searched as the memory it is (deprecated ones too, as
# such), an issue with its real status; imported as files they came back as live `inbox` issues.
RENDERED_DIRS = ("memories", "tracking")
RENDERED_FILES = ("currentWeek.md",)
# The documents the tracking room writes of its own rows (procedural/tracking/documents.py): their
# files are renderings too, but the documents are the rows' own, never an import's, so kept.
TRACKING_DOCUMENTS = ("issue:", "feature:", "week:")
_CACHE_VERSION = 1


@dataclass
class ReconcileReport:
    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def changed(self) -> int:
        return self.added + self.updated + self.removed


@dataclass
class ImportReport:
    imported: int = 0
    updated: int = 0
    skipped: int = 0
    errors: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    index: IndexReport | None = None
    renderings: int = 0  # the store's own renderings (memories/, tracking/) left out
    renderings_removed: int = 0  # documents an earlier import had made of them, deleted


@dataclass
class _Entry:
    mtime_ns: int
    size: int
    sha256: str

    def to_json(self) -> list[Any]:
        return [self.mtime_ns, self.size, self.sha256]


class WorkspaceIndex:
    def __init__(self, paths: StorePaths, db: Database, docs: DocumentService) -> None:
        self._paths = paths
        self._db = db
        self._docs = docs

    @property
    def cache_file(self) -> Path:
        return self._paths.data_dir / "index" / "files.json"

    # ------------------------------------------------------------------ files
    def _watched(self) -> Iterator[Path]:
        # Symlinks and special files are skipped with a warning, never followed (dokoro_store.walls.containment).
        root = self._paths.root
        for name in WATCHED_FILES:
            if plain_file(root, root / name):
                yield root / name
        for folder in WATCHED_DIRS:
            yield from scan(root, root / folder, skip_file=lambda name: name.startswith("."))

    def _all_markdown(self) -> Iterator[Path]:
        return scan(self._paths.root, self._paths.root, skip_dir=lambda name: name in IGNORED_DIRS)

    def _is_rendering(self, relative: str) -> bool:
        parts = relative.split("/")
        return (parts[0] in RENDERED_DIRS and len(parts) > 1) or relative in RENDERED_FILES

    def _load_cache(self) -> dict[str, _Entry]:
        try:
            data = json.loads(self.cache_file.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("version") != _CACHE_VERSION:
            return {}
        entries: dict[str, _Entry] = {}
        for rel, value in (data.get("files") or {}).items():
            try:
                entries[str(rel)] = _Entry(int(value[0]), int(value[1]), str(value[2]))
            except (TypeError, ValueError, IndexError):
                continue
        return entries

    def _save_cache(self, entries: dict[str, _Entry]) -> None:
        data = {"version": _CACHE_VERSION, "files": {rel: e.to_json() for rel, e in sorted(entries.items())}}
        atomic_write_text(self.cache_file, json.dumps(data, separators=(",", ":")), within=self._paths.root)

    # ------------------------------------------------------------------ documents
    def _resolve_id(self, relative: str) -> tuple[str, Doc | None]:
        """The id a file's document has (or gets), and that document if it exists."""
        preferred = doc_id_for(relative)
        with self._db.read() as session:
            by_path = session.execute(select(Doc).where(docs_table.c.filepath == relative)).scalars().first()
            if by_path is not None:
                return by_path.id, by_path
            by_id = session.get(Doc, preferred)
            if by_id is None:
                return preferred, None
            other = by_id.filepath
            # The id is free to take over when its document's file is gone (moved, e.g. by the archive
            # sweep); not when it is content indexed without a file, or another file still there.
            if not other.startswith(CONTENT_PREFIX) and not (self._paths.root / other).is_file():
                return preferred, by_id
            alternative = path_doc_id(relative)
            return alternative, session.get(Doc, alternative)

    def _save(self, md: MarkdownDoc) -> None:
        self._docs.save(
            md.id,
            md.content,
            title=md.title,
            filepath=md.filepath,
            doc_type=md.doc_type,
            status=md.status,
            priority=md.priority,
            metadata=md.metadata,
        )

    # ------------------------------------------------------------------ reconcile
    def reconcile(self) -> ReconcileReport:
        """Bring the documents of the watched markdown files in step with the files (see module doc)."""
        report = ReconcileReport()
        if not self._paths.root.is_dir():
            return report
        with file_lock(self._paths.locks_dir, "reconcile", within=self._paths.root):
            cache = self._load_cache()
            seen: set[str] = set()
            for path in self._watched():
                rel = self._paths.relative(path)
                seen.add(rel)
                try:
                    self._reconcile_file(path, rel, cache, report)
                except OSError as exc:
                    report.errors.append(f"{rel}: {exc}")
            for rel in sorted(set(cache) - seen):
                cache.pop(rel)
                with self._db.read() as session:
                    doc = session.execute(select(Doc).where(docs_table.c.filepath == rel)).scalars().first()
                if doc is not None:
                    self._docs.delete(doc.id)
                    report.removed += 1
            self._save_cache(cache)
        return report

    def _reconcile_file(self, path: Path, rel: str, cache: dict[str, _Entry], report: ReconcileReport) -> None:
        stat = path.stat()
        entry = cache.get(rel)
        if entry is not None and entry.mtime_ns == stat.st_mtime_ns and entry.size == stat.st_size:
            report.unchanged += 1
            return
        text = path.read_text(encoding="utf-8", errors="replace")
        digest = content_hash(text)
        doc_id, existing = self._resolve_id(rel)
        if existing is not None and existing.content_hash == digest and existing.filepath == rel:
            report.unchanged += 1  # e.g. a session dump: its document was written with the file
        else:
            self._save(describe_markdown(rel, text, doc_id))
            if existing is None:
                report.added += 1
            else:
                report.updated += 1
        cache[rel] = _Entry(stat.st_mtime_ns, stat.st_size, digest)

    # ------------------------------------------------------------------ import (dokoro migrate)
    def import_markdown(
        self, *, dry_run: bool = False, force: bool = False, progress: Progress | None = None
    ) -> ImportReport:
        """Import every markdown file of the folder as a document, then index what changed."""
        report = ImportReport()
        files = []
        for path in self._all_markdown():
            if self._is_rendering(self._paths.relative(path)):
                report.renderings += 1
            else:
                files.append(path)
        changed: list[str] = []
        for done, path in enumerate(files, start=1):
            rel = self._paths.relative(path)
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
                doc_id, existing = self._resolve_id(rel)
                md = describe_markdown(rel, text, doc_id)
                if existing is not None and existing.content_hash == md.content_hash and not force:
                    report.skipped += 1
                else:
                    if existing is None:
                        report.imported += 1
                    else:
                        report.updated += 1
                    report.files.append(rel)
                    if not dry_run:
                        self._save(md)
                        changed.append(md.id)
            except OSError as exc:
                report.errors.append(f"{rel}: {exc}")
            if progress is not None:
                progress(done, len(files), "files")
        if not dry_run:
            report.renderings_removed = self._forget_rendering_documents()
        if not dry_run and changed:
            report.index = self._docs.index_docs(changed, force=force, progress=progress)
        return report

    def _forget_rendering_documents(self) -> int:
        """Delete the documents an earlier import made of the store's renderings (a memory or issue
        there is searched as itself, under ``memory://`` or as a tracking row, never as its file)."""
        column = docs_table.c.filepath
        prefixes = [column.startswith(f"{name}/", autoescape=True) for name in RENDERED_DIRS]
        own = [docs_table.c.id.startswith(prefix, autoescape=True) for prefix in TRACKING_DOCUMENTS]
        imported = and_(or_(*prefixes, column.in_(RENDERED_FILES)), not_(or_(*own)))
        with self._db.read() as session:
            ids = [str(doc_id) for doc_id in session.execute(select(docs_table.c.id).where(imported)).scalars()]
        return sum(self._docs.delete_many(ids[i : i + 500]) for i in range(0, len(ids), 500))
