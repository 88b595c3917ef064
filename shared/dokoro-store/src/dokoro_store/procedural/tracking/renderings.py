"""The markdown renderings of tracking rows, kept in step both ways.

Rows are the truth; the files under ``tracking/`` (and the feature plans under ``features/``) are
renderings written atomically. A person may still edit one by hand, or move it to another status
folder, and that edit is read back on the next tracking call instead of being overwritten:

* a local cache (``.dokoro/tracking/renderings.json``) remembers, per file, what this machine last
  wrote (text, sha256, size and modification time). An unchanged stat means an untouched file
  (the stat gate); a changed one is read and, if its text differs, compared field by field with
  what was written (:func:`~dokoro_store.procedural.tracking.markdown.hand_edits`) and the fields the
  person changed are written to the row through the same rules as a tool call;
* a rendering found in another status folder is a hand move: the folder is the new status;
* what cannot be applied (a transition the rules refuse, a value outside an enumeration) is
  reported and the rendering shows the row again; a file that cannot be read back at all is
  copied to ``tracking/conflicts/`` first. Nothing a person wrote is dropped silently;
* a rendering that is missing or older than its row is written again.

The cache is local to the machine: on a team database another machine's changes make this
machine's files stale (re-rendered), never "hand-edited". One folder lock serialises all of it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dokoro_store.clock import Clock
from dokoro_store.paths import StorePaths
from dokoro_store.procedural.tracking.items import ItemService
from dokoro_store.procedural.tracking.markdown import (
    FEATURE_ROOT,
    ISSUE_ROOT,
    hand_edits,
    item_path,
    parse_item,
    render_item,
)
from dokoro_store.procedural.tracking.rules import STATUSES
from dokoro_store.results.tracking import ReconcileNote
from dokoro_store.walls import containment as walls
from dokoro_store.walls.files import atomic_write_text, file_lock, read_text_or_none

__all__ = ["Entry", "Pass", "RenderKeeper", "sha256"]

log = logging.getLogger("dokoro.store")

LOCK = "tracking"
CONFLICTS = "tracking/conflicts"
_CACHE_VERSION = 1


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class Entry:
    """What this machine last wrote at one path."""

    key: str  # item:<id> | plan:<id> | week
    version: int  # the row version rendered (-1: must be rendered again)
    sha: str
    mtime_ns: int
    size: int
    text: str

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "version": self.version,
            "sha": self.sha,
            "mtime_ns": self.mtime_ns,
            "size": self.size,
            "text": self.text,
        }


@dataclass
class Pass:
    """One locked pass over the renderings: the cache and what was noticed."""

    cache: dict[str, Entry]
    notes: list[ReconcileNote] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)  # tracking files that are no item's rendering
    duplicates: list[str] = field(default_factory=list)
    rerendered: list[str] = field(default_factory=list)
    written_items: list[str] = field(default_factory=list)  # items whose rendering this pass wrote
    week_written: bool = False

    def path_of(self, key: str) -> str | None:
        for rel, entry in self.cache.items():
            if entry.key == key:
                return rel
        return None

    def note(self, path: str, action: str, detail: str) -> None:
        self.notes.append(ReconcileNote(path=path, action=action, detail=detail))


class RenderKeeper:
    def __init__(self, paths: StorePaths, clock: Clock, items: ItemService) -> None:
        self._paths = paths
        self._clock = clock
        self._items = items

    @property
    def cache_file(self) -> Path:
        return self._paths.data_dir / "tracking" / "renderings.json"

    # ------------------------------------------------------------------ the pass
    @contextlib.contextmanager
    def locked(self) -> Iterator[Pass]:
        """Hold the tracking folder lock for one pass; the cache is saved at the end, whatever happens."""
        with file_lock(self._paths.locks_dir, LOCK, within=self._paths.root):
            current = Pass(self._load())
            try:
                yield current
            finally:
                self._save(current.cache)

    def _load(self) -> dict[str, Entry]:
        text = read_text_or_none(self.cache_file, within=self._paths.root)
        if text is None:
            return {}
        try:
            data = json.loads(text)
            if data.get("version") != _CACHE_VERSION:
                return {}
            return {str(rel): Entry(**value) for rel, value in (data.get("files") or {}).items()}
        except (ValueError, TypeError, AttributeError):
            log.warning("dokoro: unreadable %s; renderings are compared afresh", self.cache_file)
            return {}

    def _save(self, cache: dict[str, Entry]) -> None:
        data = {"version": _CACHE_VERSION, "files": {rel: e.to_json() for rel, e in sorted(cache.items())}}
        atomic_write_text(
            self.cache_file, json.dumps(data, ensure_ascii=False, separators=(",", ":")), within=self._paths.root
        )

    # ------------------------------------------------------------------ files
    def abs(self, rel: str) -> Path:
        return self._paths.root / rel

    def write(self, current: Pass, rel: str, key: str, version: int, text: str) -> None:
        path = self.abs(rel)
        atomic_write_text(path, text, within=self._paths.root)
        self.record(current, rel, key, version, text)

    def record(self, current: Pass, rel: str, key: str, version: int, text: str) -> None:
        stat = self.abs(rel).stat()
        current.cache[rel] = Entry(key, version, sha256(text), stat.st_mtime_ns, stat.st_size, text)

    def changed_text(self, current: Pass, rel: str) -> str | None:
        """The file's text when it differs from what was last written here (the stat gate), else None.

        A missing file is reported as ``""``.
        """
        entry = current.cache.get(rel)
        path = self.abs(rel)
        if path.is_symlink():  # never followed (dokoro_store.walls.containment): as if missing, rendered again
            log.warning("dokoro: %s is a symlink; it is not read and is rendered again", path)
            return ""
        try:
            stat = path.stat()
        except FileNotFoundError:
            return ""
        if entry is not None and (stat.st_mtime_ns, stat.st_size) == (entry.mtime_ns, entry.size):
            return None
        text = read_text_or_none(path, within=self._paths.root, errors="replace") or ""
        if entry is not None and sha256(text) == entry.sha:
            entry.mtime_ns, entry.size = stat.st_mtime_ns, stat.st_size
            return None
        return text

    def remove_if_ours(self, current: Pass, rel: str) -> None:
        """Delete a rendering that moved elsewhere, unless it holds text dokoro did not write."""
        entry = current.cache.pop(rel, None)
        text = read_text_or_none(self.abs(rel), within=self._paths.root)
        if text is None:
            return
        if entry is not None and sha256(text) == entry.sha:
            self.abs(rel).unlink(missing_ok=True)
            return
        self.keep_conflict(current, rel, text, "it changed after dokoro last wrote it")
        self.abs(rel).unlink(missing_ok=True)

    def keep_conflict(self, current: Pass, rel: str, text: str, reason: str) -> str:
        """Copy text that could not be read back to ``tracking/conflicts/`` and say so."""
        stamp = f"{self._clock.now():%Y%m%dT%H%M%S}"
        stem = Path(rel).stem
        target = f"{CONFLICTS}/{stem}-{stamp}.md"
        counter = 2
        while self.abs(target).exists():
            target = f"{CONFLICTS}/{stem}-{stamp}-{counter}.md"
            counter += 1
        atomic_write_text(self.abs(target), text, within=self._paths.root)
        current.note(rel, "kept", f"{reason}; your text is kept at {target}")
        return target

    def scan(self) -> list[str]:
        """Every markdown file in a status folder of ``tracking/issues`` and ``tracking/features``."""
        found: list[str] = []
        for root, kind in ((ISSUE_ROOT, "issue"), (FEATURE_ROOT, "feature")):
            for status in STATUSES[kind]:
                folder = self.abs(f"{root}/{status}")
                # Symlinks and special files are skipped with a warning, never followed.
                files = walls.scan(
                    self._paths.root, folder, skip_dir=lambda _name: True, skip_file=lambda n: n.startswith(".")
                )
                found += [f"{root}/{status}/{path.name}" for path in files]
        return found

    @staticmethod
    def required_dirs() -> list[str]:
        """The ten folders of the reference: one per issue and feature status, and the backups."""
        wanted = [f"{ISSUE_ROOT}/{s}" for s in STATUSES["issue"]] + [f"{FEATURE_ROOT}/{s}" for s in STATUSES["feature"]]
        return [*wanted, "tracking/backups"]

    def missing_dirs(self) -> list[str]:
        return [rel for rel in self.required_dirs() if not self.abs(rel).is_dir()]

    # ------------------------------------------------------------------ reconcile
    def reconcile(self, current: Pass, agent_id: str | None) -> None:
        """Read hand edits and hand moves of item and plan renderings back into the rows."""
        missing: dict[str, str] = {}  # key → cached path whose file is gone
        for rel, entry in list(current.cache.items()):
            if entry.key == "week":
                continue
            text = self.changed_text(current, rel)
            if text is None:
                continue
            if text == "":
                missing[entry.key] = rel
                continue
            if entry.key.startswith("plan:"):
                if self._items.set_plan_markdown(entry.key[5:], text, agent_id):
                    current.note(rel, "applied", "your edit of the plan is now the plan the feature holds")
                self.record(current, rel, entry.key, entry.version, text)
                continue
            self._apply(current, rel, entry.key[5:], entry.text, text, None, agent_id)
        for rel in self.scan():
            if rel in current.cache:
                continue
            self._adopt(current, rel, missing, agent_id)
        for rel in missing.values():
            if rel in current.cache:
                current.cache[rel].version = -3  # gone: rendered again below

    def _adopt(self, current: Pass, rel: str, missing: dict[str, str], agent_id: str | None) -> None:
        """A file in a status folder that this machine did not write there."""
        text = read_text_or_none(self.abs(rel), within=self._paths.root, errors="replace") or ""
        parsed = parse_item(text)
        row = self._items.get(parsed.item_id) if parsed.item_id else None
        if row is None:
            current.unknown.append(rel)
            return
        key = f"item:{row.id}"
        folder_status = rel.split("/")[2]
        if key in missing:  # moved by hand from where dokoro wrote it
            old = missing.pop(key)
            base = current.cache.pop(old).text
            self._apply(current, rel, row.id, base, text, folder_status, agent_id)
            return
        if current.path_of(key) is not None:
            current.duplicates.append(rel)
            return
        events = self._items.events([row.id])[row.id]
        wanted = render_item(row, events)
        if text == wanted:
            self.record(current, rel, key, row.version, text)
        elif parsed.version == row.version:
            self._apply(current, rel, row.id, wanted, text, folder_status, agent_id)
        else:
            self.keep_conflict(
                current, rel, text, f"an older rendering (version {parsed.version}; the row is at {row.version})"
            )
            self.abs(rel).unlink(missing_ok=True)

    def _apply(
        self,
        current: Pass,
        rel: str,
        item_id: str,
        written: str,
        text: str,
        folder_status: str | None,
        agent_id: str | None,
    ) -> None:
        key = f"item:{item_id}"
        if not parse_item(text).front_ok:
            self.keep_conflict(current, rel, text, "its front matter is not valid YAML")
            self.record(current, rel, key, -1, text)
            return
        changes, edited = hand_edits(written, text)
        if folder_status is not None and folder_status != parse_item(written).front.get("status"):
            changes["status"] = folder_status
        if not changes:
            # Formatting only: the file stays as the person left it until the row changes (or,
            # when it was renamed or moved without a status change, it goes back to its name).
            row = self._items.get(item_id)
            version = row.version if row is not None and folder_status is None else -1
            self.record(current, rel, key, version, text)
            return
        row, applied, refused = self._items.apply_hand_edit(item_id, changes, agent_id, rel)
        moved = "status" in applied and folder_status is not None
        if applied:
            what = ", ".join(applied)
            current.note(rel, "moved" if moved else "applied", f"read back from your edit: {what}")
        if edited:
            current.note(rel, "applied", "edits of generated sections are kept in the item's Notes")
        if refused:
            current.note(rel, "refused", "; ".join(refused) + " — the rendering shows the stored value again")
        self.record(current, rel, key, -1, text)

    # ------------------------------------------------------------------ render
    def render(self, current: Pass, own: frozenset[str] = frozenset()) -> None:
        """Write every item (and plan) rendering that is missing or older than its row.

        Items in ``own`` were changed by this call; any other rendering written is reported as
        re-rendered (it was missing, or stale after another agent's change).
        """
        versions = self._items.versions()
        if versions:  # the status folders appear with the first item, not in every store
            for rel in self.missing_dirs():
                self.abs(rel).mkdir(parents=True, exist_ok=True)
        where = {entry.key: rel for rel, entry in current.cache.items()}
        for item_id, (version, plan_path) in sorted(versions.items()):
            key, plan_key = f"item:{item_id}", f"plan:{item_id}"
            old = where.get(key)
            fresh = old is not None and current.cache[old].version == version and self.abs(old).exists()
            plan_fresh = plan_path is None or (
                where.get(plan_key) == plan_path
                and current.cache[plan_path].version == version
                and self.abs(plan_path).exists()
            )
            if fresh and plan_fresh:
                continue
            row = self._items.get(item_id)
            if row is None:
                continue
            if not fresh:
                rel = item_path(row)
                before = current.cache[old].version if old is not None else None
                self.write(current, rel, key, row.version, render_item(row, self._items.events([row.id])[row.id]))
                current.written_items.append(item_id)
                if old is not None and old != rel:
                    self.remove_if_ours(current, old)
                if item_id not in own and before != -1:  # -1: re-rendered after a hand edit was read back
                    current.rerendered.append(rel)
            if not plan_fresh and row.plan_path and row.plan_markdown is not None:
                if read_text_or_none(self.abs(row.plan_path), within=self._paths.root) != row.plan_markdown:
                    self.write(current, row.plan_path, plan_key, row.version, row.plan_markdown)
                else:
                    self.record(current, row.plan_path, plan_key, row.version, row.plan_markdown)
                plan_old = where.get(plan_key)
                if plan_old is not None and plan_old != row.plan_path:
                    self.remove_if_ours(current, plan_old)

    def check(self, current: Pass) -> list[tuple[str, str, str]]:
        """(problem kind, path, detail) of every item or plan rendering that is missing or stale."""
        where = {entry.key: rel for rel, entry in current.cache.items()}
        problems: list[tuple[str, str, str]] = []
        for item_id, (version, plan_path) in sorted(self._items.versions().items()):
            for key, rel in ((f"item:{item_id}", where.get(f"item:{item_id}")), (f"plan:{item_id}", plan_path)):
                if key.startswith("plan:") and rel is None:
                    continue
                if rel is None or not self.abs(rel).exists():
                    problems.append(("missing_rendering", rel or key, f"{key[5:]} has no rendering on this machine"))
                elif rel not in current.cache or current.cache[rel].version not in (version,):
                    problems.append(("stale_rendering", rel, f"{key[5:]} changed since this file was written"))
        return problems
