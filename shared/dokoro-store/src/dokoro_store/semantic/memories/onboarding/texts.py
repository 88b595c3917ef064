"""What the project's other files say: the README and contributor (or agent) instructions, the
Makefile or justfile, the CI workflows, and the lint and format configuration.

All read line by line with bounded patterns (no YAML or Markdown parser, no evaluation of
anything): a README's title and first paragraph, the shell lines of its code blocks; a Makefile's
targets and their first recipe line; the ``run:`` (GitHub Actions, CircleCI) and ``script:``
(GitLab CI) lines of CI; the lines of contributor instructions that say *must*, *never*,
*always* or *do not*; the settings of ``.editorconfig``, ``[flake8]``, ``.prettierrc``,
``rustfmt.toml``; which linters and hooks are configured.
"""

from __future__ import annotations

import configparser
import json
import re
from collections.abc import Callable, Iterator

from dokoro_store.semantic.memories.onboarding.findings import Findings
from dokoro_store.semantic.memories.onboarding.reading import ProjectFile, ProjectFiles

__all__ = ["read_texts"]

# Lines of one file looked at most (a bounded file, but a million one-character lines is bounded too).
MAX_LINES = 5_000
_FENCE = re.compile(r"^\s*(```|~~~)\s*([A-Za-z-]*)")
_SHELL = ("", "bash", "sh", "shell", "console", "zsh", "terminal")
_RULE_WORDS = re.compile(r"\b(must|never|always|do not|don't|required|forbidden)\b", re.IGNORECASE)
_MAKE_TARGET = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_.-]*)\s*:(?!=)")
_JUST_RECIPE = re.compile(r"^@?([A-Za-z0-9][A-Za-z0-9_-]*)(?:\s+[^:=]*)?:(?!=)")
_RUN = re.compile(r"^(\s*)(?:-\s*)?run:\s*(.*)$")
_GITLAB_SCRIPT = re.compile(r"^(\s*)(?:before_script|script):\s*$")
_COMMENT = re.compile(r"\s+#\s.*$")


def _lines(text: str) -> list[str]:
    return text.splitlines()[:MAX_LINES]


def _paragraph(lines: list[str]) -> str | None:
    """The first paragraph of prose after the title: no heading, badge, HTML or list."""
    paragraph: list[str] = []
    in_code = False
    for line in lines:
        stripped = line.strip()
        if _FENCE.match(line):
            in_code = not in_code
            continue
        if in_code:
            continue
        if not stripped:
            if paragraph:
                break
            continue
        if stripped.startswith(("#", "[![", "![", "<", "=", "-", "*", "|", ">", ":")) or set(stripped) <= set("=-~"):
            if paragraph:
                break
            continue
        paragraph.append(stripped)
    text = " ".join(paragraph)
    return text[:600] + ("…" if len(text) > 600 else "") if text else None


def _uncommented(command: str) -> str:
    """A shell line without its trailing comment (``uv run pytest  # the fast suite``), or "" for a comment."""
    return _COMMENT.sub("", command).strip() if not command.lstrip().startswith("#") else ""


def _code_commands(lines: list[str]) -> Iterator[str]:
    """The command lines of a document's shell code blocks (``$ `` prompts taken off, comments skipped)."""
    shell = False
    in_code = False
    for line in lines:
        if fence := _FENCE.match(line):
            in_code = not in_code
            shell = in_code and fence.group(2).lower() in _SHELL
            continue
        if in_code and shell:
            command = _uncommented(line.strip().removeprefix("$ "))
            if command:
                yield command


def _readme(file: ProjectFile, found: Findings, files: ProjectFiles) -> None:
    lines = _lines(file.text)
    title = next((line.lstrip("# ").strip() for line in lines if line.startswith("# ")), None)
    if title:
        found.set_name(title, manifest=False)
    if about := _paragraph(lines):
        found.set_about(about, file.path)  # read before the manifests: the README's own words first
    for command in _code_commands(lines):
        found.add_command(None, command, file.path)


def _contributing(file: ProjectFile, found: Findings, files: ProjectFiles) -> None:
    lines = _lines(file.text)
    in_code = False
    for line in lines:
        if _FENCE.match(line):
            in_code = not in_code
            continue
        stripped = line.strip().lstrip("-*+ ").strip()
        if not in_code and 12 <= len(stripped) <= 240 and _RULE_WORDS.search(stripped) and not stripped.startswith("#"):
            found.add_guardrail(stripped, file.path)
    for command in _code_commands(lines):
        found.add_command(None, command, file.path)


def _make(file: ProjectFile, found: Findings, files: ProjectFiles) -> None:
    lines = _lines(file.text)
    tool = "just" if file.kind == "just" else "make"
    pattern = _JUST_RECIPE if tool == "just" else _MAKE_TARGET
    for i, line in enumerate(lines):
        match = pattern.match(line)
        if not match or match.group(1).startswith(".") or "%" in match.group(1):
            continue
        recipe = next(
            (r.strip().lstrip("@-") for r in lines[i + 1 : i + 6] if r.startswith(("\t", "    ")) and r.strip()), ""
        )
        name = match.group(1)
        found.add_command(name, recipe or f"{tool} {name}", file.path, shown=f"{tool} {name}")


def _ci(file: ProjectFile, found: Findings, files: ProjectFiles) -> None:
    """The commands a CI workflow runs: ``run:`` lines and blocks, GitLab's ``script:`` lists."""
    lines = _lines(file.text)
    i = 0
    while i < len(lines):
        line = lines[i]
        if (run := _RUN.match(line)) is not None:
            value = run.group(2).strip()
            if value in ("|", ">", "|-", ">-", ""):
                block, i = _block(lines, i + 1, len(run.group(1)))
                commands = block
            else:
                commands, i = [value.strip("'\"")], i + 1
        elif (script := _GITLAB_SCRIPT.match(line)) is not None:
            block, i = _block(lines, i + 1, len(script.group(1)))
            commands = [c.removeprefix("- ").strip("'\"") for c in block if c.startswith("- ")]
        else:
            i += 1
            continue
        for line_ in commands:
            if command := _uncommented(line_):
                found.add_ci(command, file.path)
                found.add_command(None, command, file.path)


def _block(lines: list[str], start: int, indent: int) -> tuple[list[str], int]:
    """The lines indented deeper than ``indent`` from ``start`` (a YAML block), stripped; and where it ends."""
    block: list[str] = []
    i = start
    while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent):
        if lines[i].strip():
            block.append(lines[i].strip())
        i += 1
    return block[:20], i


def _editorconfig(file: ProjectFile, found: Findings, files: ProjectFiles) -> None:
    section, settings = "", {}
    for line in _lines(file.text):
        stripped = line.strip()
        if stripped.startswith("["):
            section = stripped
        elif "=" in stripped and section in ("[*]", "") and not stripped.startswith(("#", ";")):
            key, value = (p.strip() for p in stripped.split("=", 1))
            settings[key.lower()] = value
    bits = []
    if style := settings.get("indent_style"):
        bits.append(f"indent with {style}" + (f" ({settings['indent_size']})" if "indent_size" in settings else ""))
    if width := settings.get("max_line_length"):
        bits.append(f"lines of at most {width} characters")
    if eol := settings.get("end_of_line"):
        bits.append(f"{eol.upper()} line endings")
    if bits:
        found.add_convention("Editor settings: " + ", ".join(bits), file.path)


def _ini(file: ProjectFile, found: Findings, files: ProjectFiles) -> None:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(file.text)
    except configparser.Error:
        files.skipped[file.path] = "does not parse (configparser): left out"
        return
    if parser.has_section("flake8"):
        width = parser.get("flake8", "max-line-length", fallback=None)
        found.add_convention("Lint with flake8" + (f" (line length {width})" if width else ""), file.path)
    if parser.has_section("mypy"):
        strict = parser.get("mypy", "strict", fallback="").lower() == "true"
        found.add_convention("Type-check with mypy" + (" in strict mode" if strict else ""), file.path)
    if parser.has_section("tox") or parser.has_section("tox:tox"):
        found.add_command("test", "tox", file.path)


def _precommit(file: ProjectFile, found: Findings, files: ProjectFiles) -> None:
    hooks = list(dict.fromkeys(re.findall(r"^\s*-?\s*id:\s*([A-Za-z0-9_.-]+)", file.text, re.MULTILINE)))[:12]
    if hooks:
        found.add_guardrail(f"pre-commit hooks run on every commit: {', '.join(hooks)}", file.path)


def _prettier(file: ProjectFile, found: Findings, files: ProjectFiles) -> None:
    try:
        options = json.loads(file.text)
    except (ValueError, RecursionError):
        options = None
    bits = []
    if isinstance(options, dict):
        for key, words in (("printWidth", "width {}"), ("tabWidth", "tab width {}"), ("semi", "semicolons {}")):
            if key in options:
                bits.append(words.format(options[key]))
        if options.get("singleQuote") is True:
            bits.append("single quotes")
    found.add_convention("Format with Prettier" + (f" ({', '.join(bits)})" if bits else ""), file.path)


def _named(tool: str) -> Callable[[ProjectFile, Findings, ProjectFiles], None]:
    def note(file: ProjectFile, found: Findings, files: ProjectFiles) -> None:
        width = re.search(r"max_width\s*=\s*(\d+)", file.text) if tool == "rustfmt" else None
        found.add_convention(
            f"{tool} is configured ({file.path})" + (f": max width {width.group(1)}" if width else ""), file.path
        )

    return note


_READERS: dict[str, Callable[[ProjectFile, Findings, ProjectFiles], None]] = {
    "readme": _readme,
    "contributing": _contributing,
    "make": _make,
    "just": _make,
    "ci": _ci,
    "editorconfig": _editorconfig,
    "ini": _ini,
    "precommit": _precommit,
    "prettier": _prettier,
    "eslint": _named("ESLint"),
    "biome": _named("Biome"),
    "rustfmt": _named("rustfmt"),
    "golangci": _named("golangci-lint"),
}


def read_texts(files: ProjectFiles, found: Findings) -> None:
    """Add what the project's other files say to ``found``."""
    for file in files.of(*_READERS):
        _READERS[file.kind](file, found, files)
