"""What a server script does with its command line before it serves: ``--help`` and ``--version``
print and exit, anything else is refused, and a person who types the command in a terminal (stdin
is a terminal, so no MCP client is attached) gets a short help instead of a silent wait for JSON-RPC.

Nothing here opens, creates or imports the store, nor the MCP SDK.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TextIO

__all__ = ["check_invocation", "registration_lines", "version_of"]

# Until the packages are on the public registry, the recipes that work: from a clone (`uv run
# --project` keeps the agent's project as the working directory, so the store lands there) and
# from wheels built in the clone.
_CLONE = "claude mcp add dokoro -- uv run --project /path/to/dokoro {script}"
_WHEELS = "claude mcp add dokoro -- uvx --find-links /path/to/dokoro/dist --from {dist} {script}"


def registration_lines(script: str, dist: str | None = None) -> list[str]:
    """Lines that register ``script`` with Claude Code and work as written (README, help, ``dokoro init``)."""
    return [
        "  # from a clone of the repository:",
        "  " + _CLONE.format(script=script),
        "  # from the wheels built in it (uv build --all-packages):",
        "  " + _WHEELS.format(dist=dist or script, script=script),
    ]


def version_of(dist: str) -> str:
    """The installed version of the distribution ``dist`` (its metadata), else the kit's."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "0.1.0"


def _summary(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        return str(metadata(dist)["Summary"] or "a dokoro MCP server")
    except PackageNotFoundError:
        return "a dokoro MCP server"


def server_help(name: str) -> str:
    """The help of the server script ``name`` (also its distribution's name)."""
    lines = [
        f"usage: {name} [--help | --version]",
        "",
        f"{name} {version_of(name)}: {_summary(name)}",
        "",
        "It serves MCP over stdio: an MCP client (Claude Code, Gemini CLI, ...) starts it and speaks",
        "JSON-RPC on its stdin and stdout. Typed in a terminal, it prints this help and exits.",
        "",
        "Register it with your agent:",
        *registration_lines(name),
        "",
        "Environment (all optional; docs/configuration.md has every variable):",
        "  DOKORO_PATH          the store folder (default ./dokoro of the working directory)",
        "  DOKORO_DATABASE_URL  a team's PostgreSQL instead of the folder's SQLite file",
        "  DOKORO_AGENT_ID      who this server acts for",
    ]
    return "\n".join(lines) + "\n"


def check_invocation(name: str, argv: Sequence[str], *, stdin: TextIO | None = None, explicit: bool = False) -> None:
    """Act on a server script's arguments before it serves: exit 0 after ``--help``/``--version``,
    exit 2 on anything else, exit 0 with the help when stdin is a terminal (unless ``explicit``:
    ``dokoro serve`` asked to serve, so it only says on stderr what it is waiting for)."""
    args = list(argv)
    if args:
        if args[0] in ("-h", "--help"):
            sys.stdout.write(server_help(name))
            raise SystemExit(0)
        if args[0] in ("-V", "--version"):
            sys.stdout.write(f"{name} {version_of(name)}\n")
            raise SystemExit(0)
        sys.stderr.write(f"{name}: unknown argument {args[0]!r}; {name} takes only --help or --version\n")
        raise SystemExit(2)
    stream = stdin if stdin is not None else sys.stdin
    if not _is_terminal(stream):
        return
    if explicit:
        sys.stderr.write(
            f"{name}: serving MCP over stdio, waiting for a client's JSON-RPC on stdin (Ctrl-D or Ctrl-C stops)\n"
        )
        return
    sys.stdout.write(server_help(name))
    raise SystemExit(0)


def _is_terminal(stream: TextIO | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (OSError, ValueError):
        return False
