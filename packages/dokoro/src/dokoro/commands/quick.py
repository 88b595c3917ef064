"""Commands answered before the command line loads: ``dokoro hook <event>`` and ``dokoro rules``.

A hook runs on every prompt and ``dokoro rules`` is read often; Typer and Rich (and, through the
usual store opening, the server kit's settings) cost a good part of a second before a command does
anything. These two are parsed here by hand and open the store directly. Anything this parser does
not expect (``--help``, an unknown option, a store that is missing) returns None, and the full
command line answers instead, with its usual help and messages.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

__all__ = ["run_quick"]


def run_quick(argv: list[str]) -> int | None:
    """The exit code of the command in ``argv`` (``argv[0]`` is ``hook`` or ``rules``), or None
    when the full command line should answer it."""
    if "--help" in argv or "-h" in argv:
        return None
    if argv[0] == "hook":
        from dokoro.commands.hooks.run import main

        return main(argv[1:])
    if argv[0] == "rules":
        return _rules(argv[1:])
    return None


def _rules_options(argv: list[str]) -> tuple[bool, Path | None] | None:
    as_json, path = False, None
    rest = list(argv)
    while rest:
        flag = rest.pop(0)
        if flag == "--json":
            as_json = True
        elif flag == "--path" and rest:
            path = Path(rest.pop(0))
        elif flag.startswith("--path="):
            path = Path(flag.split("=", 1)[1])
        else:
            return None
    return as_json, path


def _rules(argv: list[str]) -> int | None:
    parsed = _rules_options(argv)
    from dokoro.commands.environment import embedder_choice

    embedder = embedder_choice()
    if parsed is None or embedder is None:
        return None
    as_json, path = parsed
    from dokoro_store import DokoroError, NoStoreError, RetrievalConfig, Store, StorePaths, resolve_dokoro_path

    url = os.environ.get("DOKORO_DATABASE_URL") or None
    if path is not None:
        root = path.expanduser().resolve()
        if root.exists() and not root.is_dir():
            return None
    else:
        root = resolve_dokoro_path(os.environ.get("DOKORO_PATH") or None, Path.cwd())
    if url is None and not StorePaths(root).sqlite_file.is_file():
        return None  # the command line says where it looked and how to make one
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    try:
        store = Store.open(root, database_url=url, retrieval=RetrievalConfig(embedder=embedder), create=False)  # type: ignore[arg-type]
    except NoStoreError as exc:
        sys.stderr.write(f"dokoro: {exc}\n")
        return 1
    except DokoroError as exc:
        sys.stderr.write(f"dokoro: {exc}\n")
        return 2
    try:
        found = store.memories.of_types(["rule", "guardrail"])
    finally:
        store.close(finish=False)
    found.sort(key=lambda m: m.type != "guardrail")
    out = sys.stdout
    if as_json:
        out.write(json.dumps([m.model_dump(mode="json") for m in found], indent=2, ensure_ascii=False) + "\n")
        return 0
    if not found:
        out.write("No rules or guardrails yet. Agents add them with dokoro_remember (type rule or guardrail).\n")
        return 0
    colour = out.isatty() and "NO_COLOR" not in os.environ
    bold, dim, plain = ("\x1b[1m", "\x1b[2m", "\x1b[0m") if colour else ("", "", "")
    for m in found:
        out.write(f"{bold}{m.type}{plain} {m.title}  {dim}({m.id}){plain}\n")
        out.write(f"  {' '.join(m.body.split())}\n")
    return 0
