"""A captured session's extractive summary: what was asked, which files were touched, and the
decisions and errors found by rule — no model, nothing invented, every phrase taken from the turns.

Rules: an *ask* is the first line of a person's turn; a *file* is a path a tool call named; a
*decision* is a sentence of the agent's or the person's text that says one was made ("decided",
"we'll use", "going with", "switched to", "instead of", ...); an *error* is a tool call that
failed (its first line) or a line of text that reports one (``SomethingError:``, ``Traceback``,
``FAILED``). Each list is bounded and keeps the first it found, once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from dokoro_store.capture.turns import Turn

__all__ = ["CAPTURE_MODEL", "Digest"]

# The ai_model of a summary row the capture wrote: a summary with any other model was written by
# an agent (dokoro_session_summary_add), and always wins over this one.
CAPTURE_MODEL = "dokoro-capture"

_LIMITS = {"asks": 8, "files": 20, "decisions": 8, "errors": 8}
_DECISION = re.compile(
    r"\b(decided|decision|we(?:'ll| will) (?:use|go with|keep)|going with|settled on|chose|opted for|"
    r"switch(?:ed)? to|instead of|let's use|agreed)\b",
    re.IGNORECASE,
)
_ERROR_LINE = re.compile(r"(\b\w*(?:Error|Exception)\b:|Traceback \(most recent call last\)|\bFAILED\b)")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def _short(text: str, limit: int) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


@dataclass
class Digest:
    asks: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    tools: int = 0

    @classmethod
    def load(cls, raw: object) -> Digest:
        """The digest as a mark stores it (anything unreadable starts afresh)."""
        if not isinstance(raw, dict):
            return cls()
        lists = {k: [str(v) for v in raw.get(k, []) if isinstance(v, str)][:n] for k, n in _LIMITS.items()}
        tools = raw.get("tools")
        return cls(**lists, tools=tools if isinstance(tools, int) and tools >= 0 else 0)

    def dump(self) -> dict[str, Any]:
        return {
            "asks": self.asks,
            "files": self.files,
            "decisions": self.decisions,
            "errors": self.errors,
            "tools": self.tools,
        }

    def copy(self) -> Digest:
        return Digest.load(self.dump())

    def _add(self, name: str, value: str) -> None:
        values: list[str] = getattr(self, name)
        if value and value not in values and len(values) < _LIMITS[name]:
            values.append(value)

    def add(self, turn: Turn, project: str | None = None) -> None:
        """What ``turn`` adds (once: a turn read again adds nothing new)."""
        if turn.role == "user":
            first = next((line for text in turn.texts for line in text.splitlines() if line.strip()), "")
            self._add("asks", _short(first, 160))
        else:
            self.tools += turn.tool_count
            for path in turn.files:
                self._add("files", _relative(path, project))
            for error in turn.errors:
                self._add("errors", _short(error, 200))
        for text in turn.texts:
            for sentence in _SENTENCE.split(text):
                if _DECISION.search(sentence) and 12 <= len(sentence.strip()) <= 400:
                    self._add("decisions", _short(sentence, 200))
                if turn.role == "assistant" and _ERROR_LINE.search(sentence):
                    self._add("errors", _short(sentence, 200))

    def render(self, title: str | None, turns: int) -> str:
        """The summary's text (empty when the session said nothing yet)."""
        if not self.asks and not turns:
            return ""
        lines = [_short(title, 200) if title else (self.asks[0] if self.asks else "A captured session")]
        if self.asks:
            lines.append("Asked: " + "; ".join(self.asks))
        if self.files:
            lines.append("Files: " + ", ".join(self.files))
        if self.decisions:
            lines.append("Decisions: " + " | ".join(self.decisions))
        if self.errors:
            lines.append("Errors: " + " | ".join(self.errors))
        lines.append(f"(captured from the transcript: {turns} turn(s), {self.tools} tool call(s))")
        return "\n".join(lines)


def _relative(path: str, project: str | None) -> str:
    if project:
        try:
            return PurePath(path).relative_to(project).as_posix()
        except ValueError:
            pass
    return path
