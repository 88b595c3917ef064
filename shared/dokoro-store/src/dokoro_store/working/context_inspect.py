"""The context inspector: what a client put into an agent's context, one JSON line per event
(reference §2.10).

Events live in ``context-inspect/<YYYY-MM-DD>.jsonl`` (the date of the event's timestamp, or
today in UTC when it has none that parses). Appends run under a cross-process lock, so lines
of two writers never interleave; readers skip a malformed line instead of failing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from datetime import date
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dokoro_store.clock import Clock
from dokoro_store.errors import InvalidArgumentError, OutsideStoreError
from dokoro_store.paths import StorePaths
from dokoro_store.results.context import ContextLogged
from dokoro_store.walls.containment import is_inside, scan
from dokoro_store.walls.files import append_text, file_lock
from dokoro_store.walls.secrets import redact_value

__all__ = [
    "LAST_DEFAULT",
    "MAX_LIMIT",
    "SCAN_LIMIT",
    "SEARCH_DEFAULT",
    "SNIPPET_LIMIT",
    "ContextEvent",
    "ContextService",
]

EVENT_NAME = "context_inspect"
SNIPPET_LIMIT = 500
LAST_DEFAULT = 5
SEARCH_DEFAULT = 10
MAX_LIMIT = 500
SCAN_LIMIT = 5_000
MAX_EVENT_BYTES = 1_000_000
_PARTITION = re.compile(r"^(\d{4}-\d{2}-\d{2})\.jsonl$")


class ContextLayer(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str
    reason: str
    score: float | None = None
    tokenEstimate: float
    source: str | None = None
    contentSnippet: str


class DroppedLayer(BaseModel):
    model_config = ConfigDict(extra="allow")

    source: str | None = None
    reason: str
    score: float | None = None
    tokenEstimate: float | None = None


class ContextEvent(BaseModel):
    """One context-inspector event; fields beyond these are kept as given."""

    model_config = ConfigDict(extra="allow")

    event: str
    sessionId: str | None = None
    turn: int | None = None
    timestamp: str
    budgetTokens: float | None = None
    totalEstimate: float
    layers: list[ContextLayer] = Field(default_factory=list)
    dropped: list[DroppedLayer] | None = None


def _partition(timestamp: str) -> str | None:
    head = timestamp[:10]
    try:
        return date.fromisoformat(head).isoformat() if len(head) == 10 else None
    except ValueError:
        return None


def _mentions(event: Mapping[str, Any], needle: str) -> bool:
    session_id = event.get("sessionId")
    if isinstance(session_id, str) and needle in session_id.lower():
        return True
    layers = event.get("layers")
    if not isinstance(layers, list):
        return False
    for layer in layers:
        if not isinstance(layer, dict):
            continue
        for key in ("reason", "contentSnippet", "source"):
            value = layer.get(key)
            if isinstance(value, str) and needle in value.lower():
                return True
    return False


class ContextService:
    """Log, list and search context-inspector events of one workspace folder."""

    def __init__(self, paths: StorePaths, clock: Clock) -> None:
        self._paths = paths
        self._clock = clock

    @property
    def folder(self) -> Path:
        return self._paths.root / "context-inspect"

    def log(self, event: Mapping[str, Any]) -> ContextLogged:
        """Validate ``event``, cut every layer's snippet to 500 characters, append it to its day's file."""
        if not isinstance(event, Mapping) or event.get("event") != EVENT_NAME:
            got = event.get("event") if isinstance(event, Mapping) else type(event).__name__
            raise InvalidArgumentError(
                f'not a context_inspect event (event={got!r}): set "event": "context_inspect" and give '
                "timestamp, totalEstimate and layers [{name, reason, tokenEstimate, contentSnippet}]"
            )
        # Redacted before the snippets are cut: a secret cut in half would no longer be recognised.
        cleaned, _kinds = redact_value(dict(event))
        try:
            parsed = ContextEvent.model_validate(cleaned)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in error['loc']) or 'event'}: {error['msg']}" for error in exc.errors()
            )
            raise InvalidArgumentError(f"invalid context_inspect event — {problems}") from None
        for layer in parsed.layers:
            layer.contentSnippet = layer.contentSnippet[:SNIPPET_LIMIT]
        day = _partition(parsed.timestamp) or self._clock.now().date().isoformat()
        line = json.dumps(parsed.model_dump(mode="json", exclude_unset=True), ensure_ascii=False)
        if len(line.encode("utf-8")) > MAX_EVENT_BYTES:
            raise InvalidArgumentError(
                f"the event is larger than {MAX_EVENT_BYTES} bytes once snippets are cut; log fewer layers"
            )
        path = self.folder / f"{day}.jsonl"
        with file_lock(self._paths.locks_dir, "context-inspect", within=self._paths.root):
            self._paths.inside(self.folder, what="context folder")
            self.folder.mkdir(parents=True, exist_ok=True)
            if path.is_symlink():  # appended to in place: a link would take the write elsewhere
                raise OutsideStoreError(f"{path} is a symlink; remove it (dokoro writes only plain files)")
            self._paths.inside(path, what="context log")
            append_text(path, line + "\n", within=None)  # checked just above
        return ContextLogged(turn=parsed.turn, layers=len(parsed.layers), file=self._paths.relative(path))

    def _newest_first(self) -> Iterator[dict[str, Any]]:
        if not self.folder.is_dir() or not is_inside(self._paths.root, self.folder):
            return
        days = sorted(
            (p for p in scan(self._paths.root, self.folder, suffix=".jsonl") if _PARTITION.match(p.name)),
            reverse=True,
        )
        for path in days:
            try:
                lines = path.read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError):
                continue
            for line in reversed(lines):
                try:
                    event = json.loads(line)
                except ValueError:
                    continue  # a torn or hand-edited line: skip it, keep the rest readable
                if isinstance(event, dict):
                    yield event

    @staticmethod
    def _check_limit(limit: int) -> None:
        if not 1 <= limit <= MAX_LIMIT:
            raise InvalidArgumentError(f"limit must be between 1 and {MAX_LIMIT}; got {limit}")

    def last(self, limit: int = LAST_DEFAULT) -> list[dict[str, Any]]:
        """The newest ``limit`` events, newest first."""
        self._check_limit(limit)
        events: list[dict[str, Any]] = []
        for event in self._newest_first():
            events.append(event)
            if len(events) >= limit:
                break
        return events

    def search(self, query: str, limit: int = SEARCH_DEFAULT) -> list[dict[str, Any]]:
        """Events (newest first, among the newest 5,000) whose session id or any layer's reason,
        snippet or source contains ``query`` (case-insensitive)."""
        needle = query.strip().lower()
        if not needle:
            raise InvalidArgumentError("query must not be empty")
        self._check_limit(limit)
        found: list[dict[str, Any]] = []
        for scanned, event in enumerate(self._newest_first(), start=1):
            if _mentions(event, needle):
                found.append(event)
                if len(found) >= limit:
                    break
            if scanned >= SCAN_LIMIT:
                break
        return found
