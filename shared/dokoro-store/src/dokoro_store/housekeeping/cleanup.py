"""``dokoro cleanup``: duplicate and old markdown files of the workspace folder go to the archive.

The reference shelled out to a script that was not shipped; this is the same job, in the store:

- **duplicates**: markdown files with identical bytes; the oldest (then the shortest path) stays,
  the others move to ``archive/duplicates/<their path>``;
- **old files**: markdown files not modified for ``older_than_days`` (default 180) move to
  ``archive/old/<their path>``.

Nothing is deleted. Before the first move the whole store is exported (the JSON backup of
``dokoro export``) and a manifest of every move is written to ``.dokoro/backup/``, so
:meth:`CleanupService.rollback` can move every file back. Document rows follow their files.
Files the store owns or a person keeps at the top (``current.md``, ``README.md``,
``currentWeek.md``), the archive itself, hidden folders and ``memories/`` are never touched.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import update

from dokoro_store.clock import Clock, iso
from dokoro_store.db.engine import Database
from dokoro_store.errors import InvalidArgumentError, NotFoundError, OutsideStoreError
from dokoro_store.models import Doc
from dokoro_store.moving.backup import export_store
from dokoro_store.paths import StorePaths
from dokoro_store.results.cleanup import CleanupMove, CleanupReport, DuplicateGroup, OldFile
from dokoro_store.walls.containment import inside, is_inside, scan
from dokoro_store.walls.files import atomic_write_text, file_lock

__all__ = ["OLDER_THAN_DAYS", "CleanupService"]

OLDER_THAN_DAYS = 180
_KEPT_FILES = frozenset({"current.md", "README.md", "currentWeek.md"})
_KEPT_DIRS = frozenset({"archive", "memories", "node_modules"})
_MANIFEST = "dokoro-cleanup"


class CleanupService:
    def __init__(self, paths: StorePaths, db: Database, clock: Clock) -> None:
        self._paths = paths
        self._db = db
        self._clock = clock

    @property
    def backup_dir(self) -> Path:
        return self._paths.data_dir / "backup"

    def _candidates(self) -> Iterator[Path]:
        # Symlinks and special files are skipped with a warning, never followed (dokoro_store.walls.containment).
        root = self._paths.root
        for path in scan(root, root, skip_file=lambda name: name.startswith(".")):
            parts = path.relative_to(root).parts
            if (len(parts) > 1 and parts[0] in _KEPT_DIRS) or (len(parts) == 1 and parts[0] in _KEPT_FILES):
                continue
            yield path

    def scan(self, older_than_days: int = OLDER_THAN_DAYS) -> CleanupReport:
        """What a cleanup would move, moving nothing."""
        if older_than_days < 1:
            raise InvalidArgumentError(f"older_than_days must be 1 or more; got {older_than_days}")
        now = self._clock.now()
        cutoff = now - timedelta(days=older_than_days)
        by_hash: dict[str, list[tuple[float, str]]] = {}
        old: list[OldFile] = []
        for path in self._candidates():
            stat = path.stat()
            relative = self._paths.relative(path)
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            by_hash.setdefault(digest, []).append((stat.st_mtime, relative))
            modified = datetime.fromtimestamp(stat.st_mtime, UTC)
            if modified < cutoff:
                old.append(OldFile(path=relative, modified_at=modified, age_days=(now - modified).days))
        groups: list[DuplicateGroup] = []
        for files in by_hash.values():
            if len(files) > 1:
                files.sort(key=lambda f: (f[0], len(f[1]), f[1]))
                groups.append(DuplicateGroup(keep=files[0][1], duplicates=[f[1] for f in files[1:]]))
        groups.sort(key=lambda g: g.keep)
        moves = [
            CleanupMove(source=d, target=f"archive/duplicates/{d}", reason="duplicate")
            for g in groups
            for d in g.duplicates
        ]
        planned = {m.source for m in moves}
        moves += [
            CleanupMove(source=o.path, target=f"archive/old/{o.path}", reason="old")
            for o in old
            if o.path not in planned
        ]
        return CleanupReport(
            dry_run=True, older_than_days=older_than_days, duplicates=groups, old_files=old, moves=moves
        )

    def run(self, older_than_days: int = OLDER_THAN_DAYS, *, dry_run: bool = False) -> CleanupReport:
        """Back up, then move what :meth:`scan` finds; a dry run only scans."""
        report = self.scan(older_than_days)
        if dry_run or not report.moves:
            return report.model_copy(update={"dry_run": dry_run})
        now = self._clock.now()
        with file_lock(self._paths.locks_dir, "cleanup", within=self._paths.root):
            self.backup_dir.mkdir(parents=True, exist_ok=True)
            backup, _counts = export_store(self._db, self.backup_dir, now)
            done: list[CleanupMove] = []
            errors: list[str] = []
            for move in report.moves:
                try:
                    target = _move(self._paths.root / move.source, self._paths.root / move.target, self._paths.root)
                except (OSError, OutsideStoreError) as exc:
                    errors.append(f"{move.source}: {exc}")
                    continue
                done.append(move.model_copy(update={"target": self._paths.relative(target)}))
            manifest = self.backup_dir / f"{_MANIFEST}-{now:%Y%m%dT%H%M%SZ}.json"
            record = {
                "format": _MANIFEST,
                "at": iso(now),
                "backup": backup.name,
                "moves": [m.model_dump() for m in done],
            }
            atomic_write_text(
                manifest, json.dumps(record, indent=2, ensure_ascii=False) + "\n", within=self._paths.root
            )
            self._repoint(done)
        return report.model_copy(
            update={
                "dry_run": False,
                "moves": done,
                "backup": str(backup),
                "manifest": str(manifest),
                "errors": errors,
            }
        )

    def rollback(self, manifest: Path) -> CleanupReport:
        """Move every file a cleanup moved back where it was (never over another file)."""
        try:
            record = json.loads(manifest.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise NotFoundError(f"no cleanup manifest {manifest}; they are in {self.backup_dir}") from None
        except ValueError:
            raise InvalidArgumentError(f"{manifest} is not a cleanup manifest (not JSON)") from None
        if not isinstance(record, dict) or record.get("format") != _MANIFEST:
            raise InvalidArgumentError(f"{manifest} is not a cleanup manifest (written by `dokoro cleanup`)")
        back: list[CleanupMove] = []
        errors: list[str] = []
        with file_lock(self._paths.locks_dir, "cleanup", within=self._paths.root):
            for item in reversed(record.get("moves") or []):
                move = CleanupMove.model_validate(item)
                source, target = self._paths.root / move.target, self._paths.root / move.source
                if not is_inside(self._paths.root, source) or not is_inside(self._paths.root, target.parent):
                    errors.append(f"{move.target}: leaves the store (a symlink?); not restored")
                elif source.is_symlink() or not source.is_file():
                    errors.append(f"{move.target}: gone, cannot restore {move.source}")
                elif target.exists():
                    errors.append(f"{move.source}: a file is there again; {move.target} left in the archive")
                else:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.move(source, target)
                    back.append(CleanupMove(source=move.target, target=move.source, reason=move.reason))
            self._repoint(back)
        return CleanupReport(dry_run=False, older_than_days=0, moves=back, manifest=str(manifest), errors=errors)

    def _repoint(self, moves: list[CleanupMove]) -> None:
        """Document rows of moved files follow them (one transaction)."""
        if not moves:
            return
        with self._db.write() as session:
            for move in moves:
                session.execute(
                    update(Doc).where(Doc.filepath == move.source).values(filepath=move.target)  # type: ignore[arg-type]
                )


def _move(source: Path, target: Path, root: Path) -> Path:
    """Move ``source`` to ``target`` without overwriting a different file; where it landed. Both
    stay inside the store ``root`` (no symlink on the way leads out)."""
    if source.is_symlink():
        raise OutsideStoreError(f"{source} is a symlink; cleanup moves only plain files")
    inside(root, source, what="file")
    inside(root, target.parent, what="cleanup folder")
    target.parent.mkdir(parents=True, exist_ok=True)
    inside(root, target.parent, what="cleanup folder")
    counter = 2
    while target.is_symlink() or target.exists():
        if not target.is_symlink() and target.read_bytes() == source.read_bytes():
            source.unlink()
            return target
        target = target.with_name(f"{source.stem}-{counter}{source.suffix}")
        counter += 1
    shutil.move(source, target)
    return target
