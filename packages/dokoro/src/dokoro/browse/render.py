"""Preview text as styled lines: markdown headings, bold, code and lists as spans (no raw ANSI).

One :class:`rich.text.Text` per source line, so the preview can compare old and new lines and
highlight the ones that changed.
"""

from __future__ import annotations

import re

from rich.text import Text

__all__ = ["changed_lines", "markdown_lines", "plain_lines"]

_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+(.*)$")
_CHECK = re.compile(r"^(\s*)[-*+]\s+\[( |x|X)\]\s+(.*)$")
_INLINE = re.compile(r"(\*\*[^*]+\*\*|`[^`]+`)")


def _inline(text: str, base: str = "") -> Text:
    out = Text(style=base)
    for part in _INLINE.split(text):
        if part.startswith("**") and part.endswith("**") and len(part) > 4:
            out.append(part[2:-2], style="bold")
        elif part.startswith("`") and part.endswith("`") and len(part) > 2:
            out.append(part[1:-1], style="bold cyan")
        elif part:
            out.append(part)
    return out


def markdown_lines(source: str) -> list[Text]:
    lines: list[Text] = []
    fenced = False
    for raw in source.splitlines():
        if raw.lstrip().startswith("```"):
            fenced = not fenced
            lines.append(Text(raw, style="dim"))
            continue
        if fenced:
            lines.append(Text(raw, style="cyan"))
            continue
        heading = _HEADING.match(raw)
        if heading:
            style = "bold underline magenta" if len(heading.group(1)) == 1 else "bold magenta"
            lines.append(_inline(heading.group(2), style))
            continue
        check = _CHECK.match(raw)
        if check:
            box = "☑ " if check.group(2).lower() == "x" else "☐ "
            lines.append(Text(check.group(1) + box) + _inline(check.group(3)))
            continue
        bullet = _BULLET.match(raw)
        if bullet:
            lines.append(Text(bullet.group(1) + "• ") + _inline(bullet.group(2)))
            continue
        if raw.startswith(">"):
            lines.append(_inline(raw, "italic"))
            continue
        lines.append(_inline(raw))
    return lines


def plain_lines(source: str) -> list[Text]:
    return [Text(line) for line in source.splitlines()]


def changed_lines(old: list[Text], new: list[Text]) -> set[int]:
    """Indexes of ``new`` whose text differs from the line at the same place in ``old``."""
    return {i for i, line in enumerate(new) if i >= len(old) or old[i].plain != line.plain}
