"""What the package manifests say: ``pyproject.toml``, ``package.json``, ``Cargo.toml``, ``go.mod``
(and the version files ``.python-version``, ``.nvmrc``, ``tsconfig.json``).

Parsed with the standard library (``tomllib``, ``json``) from text already bounded in size
(:mod:`.reading`); a file that does not parse, or nests too deep, is reported and left out. Only
what a new session needs is kept: the language and its version, the package manager, the main
dependencies (:data:`MAX_DEPENDENCIES`), the scripts as commands, the tools' settings as
conventions.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable
from typing import Any

from dokoro_store.semantic.memories.onboarding.findings import Findings
from dokoro_store.semantic.memories.onboarding.reading import ProjectFile, ProjectFiles

__all__ = ["MAX_DEPENDENCIES", "read_manifests"]

MAX_DEPENDENCIES = 10
_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _table(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _names(requirements: Any) -> list[str]:
    """Package names of a list of requirement strings (``fastapi>=0.110`` → ``fastapi``)."""
    names: list[str] = []
    for item in requirements if isinstance(requirements, list) else []:
        if isinstance(item, str) and (match := _REQUIREMENT_NAME.match(item)):
            names.append(match.group(1))
    return names


def _some(names: list[str]) -> str:
    shown = ", ".join(names[:MAX_DEPENDENCIES])
    return shown + (f" and {len(names) - MAX_DEPENDENCIES} more" if len(names) > MAX_DEPENDENCIES else "")


def _pyproject(file: ProjectFile, found: Findings, files: ProjectFiles) -> None:
    data = tomllib.loads(file.text)
    project, tool = _table(data.get("project")), _table(data.get("tool"))
    if isinstance(project.get("name"), str):
        found.set_name(project["name"], manifest=True)
    if isinstance(project.get("description"), str):
        found.set_about(project["description"], file.path)
    python = project.get("requires-python")
    found.add_stack(f"Python {python}" if isinstance(python, str) else "Python", file.path)
    backend = _table(data.get("build-system")).get("build-backend")
    uv = _table(tool.get("uv"))
    if "uv.lock" in files.locks or uv:
        members = _table(uv.get("workspace")).get("members")
        found.add_stack(
            "uv" + (f" workspace ({len(members)} member globs)" if isinstance(members, list) else ""), file.path
        )
        found.add_command("install", "uv sync", file.path)
    elif "poetry.lock" in files.locks or "poetry" in tool:
        found.add_stack("Poetry", file.path)
        found.add_command("install", "poetry install", file.path)
    if isinstance(backend, str):
        found.add_stack(f"build backend {backend.split('.')[0]}", file.path)
    if names := _names(project.get("dependencies")):
        found.add_stack(f"Python dependencies: {_some(names)}", file.path)
    for name, target in _table(project.get("scripts")).items():
        if isinstance(target, str):
            found.add_stack(f"command-line entry point `{name}` ({target})", file.path)
    _python_tools(tool, file.path, found)


def _python_tools(tool: dict[str, Any], source: str, found: Findings) -> None:
    """The conventions a pyproject's ``[tool.*]`` tables (or ``ruff.toml``) set."""
    ruff = _table(tool.get("ruff"))
    if ruff:
        bits = [f"line length {ruff['line-length']}" if "line-length" in ruff else ""]
        if isinstance(ruff.get("target-version"), str):
            bits.append(f"target {ruff['target-version']}")
        select = _table(ruff.get("lint")).get("select") or ruff.get("select")
        if isinstance(select, list) and select:
            bits.append("rules " + ", ".join(str(s) for s in select[:12]))
        found.add_convention("Lint and format with ruff" + _paren(bits), source)
    mypy = _table(tool.get("mypy"))
    if mypy:
        found.add_convention("Type-check with mypy" + (" in strict mode" if mypy.get("strict") is True else ""), source)
    pyright = _table(tool.get("pyright"))
    if pyright:
        mode = pyright.get("typeCheckingMode")
        found.add_convention("Type-check with pyright" + (f" ({mode})" if isinstance(mode, str) else ""), source)
    pytest = _table(_table(tool.get("pytest")).get("ini_options"))
    if pytest:
        warnings = pytest.get("filterwarnings")
        strict = isinstance(warnings, list) and "error" in warnings
        found.add_convention("Tests run with pytest" + ("; warnings fail the tests" if strict else ""), source)
        found.add_command("test", "pytest", source)
    black = _table(tool.get("black"))
    if black:
        found.add_convention("Format with black" + _paren([f"line length {black.get('line-length')}"]), source)


def _paren(bits: list[str]) -> str:
    bits = [b for b in bits if b and "None" not in b]
    return f" ({'; '.join(bits)})" if bits else ""


def _manager(files: ProjectFiles, declared: Any) -> str:
    if isinstance(declared, str) and declared.split("@")[0] in ("npm", "pnpm", "yarn", "bun"):
        return declared.split("@")[0]
    for lock, manager in (("pnpm-lock.yaml", "pnpm"), ("yarn.lock", "yarn"), ("bun.lockb", "bun")):
        if lock in files.locks:
            return manager
    return "npm"


_NOTABLE_JS = (
    "react", "next", "vue", "nuxt", "svelte", "@sveltejs/kit", "angular", "@angular/core", "express", "fastify",
    "hono", "koa", "nestjs", "@nestjs/core", "vite", "webpack", "tailwindcss", "prisma", "drizzle-orm", "electron",
    "jest", "vitest", "mocha", "playwright", "@playwright/test", "cypress", "eslint", "prettier", "@biomejs/biome",
)  # fmt: skip


def _package(file: ProjectFile, found: Findings, files: ProjectFiles) -> None:
    data = _table(json.loads(file.text))
    if isinstance(data.get("name"), str):
        found.set_name(data["name"], manifest=True)
    if isinstance(data.get("description"), str):
        found.set_about(data["description"], file.path)
    deps = {**_table(data.get("devDependencies")), **_table(data.get("dependencies"))}
    typescript = "typescript" in deps or any(f.kind == "tsconfig" for f in files.files)
    node = _table(data.get("engines")).get("node")
    found.add_stack(
        ("TypeScript on Node.js" if typescript else "JavaScript on Node.js")
        + (f" {node}" if isinstance(node, str) else ""),
        file.path,
    )
    manager = _manager(files, data.get("packageManager"))
    found.add_stack(f"package manager {manager}", file.path)
    found.add_command("install", f"{manager} install", file.path)
    if data.get("type") == "module":
        found.add_convention('ES modules (package.json "type": "module")', file.path)
    if notable := [name for name in _NOTABLE_JS if name in deps]:
        found.add_stack(f"JavaScript libraries: {_some(notable)}", file.path)
    for name, command in _table(data.get("scripts")).items():
        if isinstance(command, str):
            run = f"{manager} test" if name == "test" else f"{manager} run {name}"
            found.add_command(name, command, file.path, shown=run)


def _cargo(file: ProjectFile, found: Findings, files: ProjectFiles) -> None:
    data = tomllib.loads(file.text)
    package = _table(data.get("package"))
    if isinstance(package.get("name"), str):
        found.set_name(package["name"], manifest=True)
    edition, version = package.get("edition"), package.get("rust-version")
    found.add_stack(
        "Rust"
        + (f" (edition {edition})" if isinstance(edition, str) else "")
        + (f", at least {version}" if isinstance(version, str) else ""),
        file.path,
    )
    members = _table(data.get("workspace")).get("members")
    if isinstance(members, list):
        found.add_stack(f"Cargo workspace of {len(members)} member globs", file.path)
    if names := list(_table(data.get("dependencies"))):
        found.add_stack(f"Rust crates: {_some(names)}", file.path)
    found.add_command("build", "cargo build", file.path)
    found.add_command("test", "cargo test", file.path)
    found.add_command("lint", "cargo clippy", file.path)


def _gomod(file: ProjectFile, found: Findings, files: ProjectFiles) -> None:
    module = re.search(r"^module\s+(\S+)", file.text, re.MULTILINE)
    version = re.search(r"^go\s+(\S+)", file.text, re.MULTILINE)
    found.add_stack(
        "Go" + (f" {version.group(1)}" if version else "") + (f", module {module.group(1)}" if module else ""),
        file.path,
    )
    requires = re.findall(r"^\s+([a-z0-9.-]+\.[a-z]+/\S+)\s+v", file.text, re.MULTILINE)
    if requires:
        found.add_stack(f"Go modules: {_some(requires)}", file.path)
    found.add_command("build", "go build ./...", file.path)
    found.add_command("test", "go test ./...", file.path)


def _versions(file: ProjectFile, found: Findings, files: ProjectFiles) -> None:
    value = file.text.strip().splitlines()[0].strip() if file.text.strip() else ""
    if value and len(value) < 40:
        found.add_stack(("Node.js " if file.kind == "nvmrc" else "Python ") + value + " (pinned)", file.path)


def _tsconfig(file: ProjectFile, found: Findings, files: ProjectFiles) -> None:
    # tsconfig allows comments: a file that is not plain JSON only says TypeScript is used.
    try:
        options = _table(_table(json.loads(file.text)).get("compilerOptions"))
    except (ValueError, RecursionError):
        options = {}
    if options.get("strict") is True:
        found.add_convention("TypeScript in strict mode", file.path)


def _ruff(file: ProjectFile, found: Findings, files: ProjectFiles) -> None:
    _python_tools({"ruff": tomllib.loads(file.text)}, file.path, found)


_READERS: dict[str, Callable[[ProjectFile, Findings, ProjectFiles], None]] = {
    "pyproject": _pyproject,
    "package": _package,
    "cargo": _cargo,
    "gomod": _gomod,
    "nvmrc": _versions,
    "pyversion": _versions,
    "tsconfig": _tsconfig,
    "ruff": _ruff,
}


def read_manifests(files: ProjectFiles, found: Findings) -> None:
    """Add what the manifests say to ``found``; a file that does not parse goes to ``files.skipped``."""
    for file in files.of(*_READERS):
        try:
            _READERS[file.kind](file, found, files)
        except (ValueError, RecursionError, tomllib.TOMLDecodeError) as exc:
            files.skipped[file.path] = f"does not parse ({type(exc).__name__}): left out"
