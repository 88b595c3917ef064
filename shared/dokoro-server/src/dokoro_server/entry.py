"""What a server script does first, before it imports the MCP SDK: its command line (``--help`` and
``--version`` print and exit, anything else is refused, and a person who types the command in a
terminal, where no MCP client is attached, gets a short help instead of a silent wait for
JSON-RPC), then :func:`prepare`: the settings read and the store's opener made.

The opener is started by :func:`~dokoro_server.server.serve` once the SDK and the tool modules are
imported, before the tools are registered and the client's handshake: the store opens while the
server answers ``initialize`` and ``tools/list`` and waits for the client, so the first tool call
finds it open instead of waiting for it after ``tools/list``. Started before the SDK's import
instead, the two imports shared one interpreter lock and cost 0.45 s more CPU per start on this
machine, with a later first answer (docs/benchmarks.md, "At the SDK's floor").
Nothing here imports the store or the SDK.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from dokoro_server.app import StoreOpener
    from dokoro_server.settings import DokoroSettings

__all__ = ["Prepared", "check_invocation", "prepare", "registration_lines", "version_of"]

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


@dataclass(frozen=True)
class Prepared:
    """What :func:`prepare` settled for :func:`~dokoro_server.server.serve`: the settings, the
    working folder and the store's opener (started by ``serve``)."""

    settings: DokoroSettings
    cwd: Path
    opener: StoreOpener


def prepare(
    name: str,
    argv: Sequence[str] | None = None,
    *,
    settings: DokoroSettings | None = None,
    explicit: bool = False,
) -> Prepared:
    """A server entry point's first step, before the MCP SDK is imported: act on the command line
    (:func:`check_invocation`: ``--help``/``--version`` exit before anything is opened or created),
    then read the settings and make the store's opener (see the module docstring for when it starts).

    What this process changes for itself is set here, at its entry point and nowhere in the
    libraries: third-party telemetry off, the long-lived heap kept out of the collector's full
    walks (:mod:`dokoro_server.heap`), and the log level of ``DOKORO_LOG_LEVEL`` (the SDK's own
    log set-up, later, keeps this handler).
    """
    from dokoro_server import heap
    from dokoro_server.app import StoreOpener
    from dokoro_server.settings import DokoroSettings, quiet_third_parties

    check_invocation(name, sys.argv[1:] if argv is None else argv, explicit=explicit)
    quiet_third_parties()
    heap.install()
    settings = settings or DokoroSettings()
    logging.basicConfig(level=settings.log_level, format="%(message)s")
    cwd = Path.cwd()
    return Prepared(settings, cwd, StoreOpener.for_settings(settings, cwd))
