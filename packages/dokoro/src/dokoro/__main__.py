"""The ``dokoro`` command (and ``python -m dokoro``).

No arguments: serve every registered tool over stdio, which is what an MCP client such as
Claude Code runs. Any argument: the command line. The choice is made on ``sys.argv`` before
anything else is imported, so the server never pays for Typer and Rich. With no arguments on a
terminal (a person, not an MCP client), it prints a short help instead of waiting for JSON-RPC.
"""

from __future__ import annotations

import os
import sys

__all__ = ["main"]


_TERMINAL_HELP = """\
dokoro serves every dokoro tool over stdio to an MCP client (Claude Code, Gemini CLI, ...), which
starts it and speaks JSON-RPC on its stdin. Typed in a terminal there is no client, so it only
prints this.

  dokoro --help        the commands (init, browse, search, rules, doctor, ...)
  dokoro init          make a store here (./dokoro)
  dokoro serve         serve over stdio anyway (Ctrl-D or Ctrl-C stops)

Register it with your agent:
"""


def main() -> None:
    """Entry point of the ``dokoro`` console script."""
    if sys.argv[1:] in (["--version"], ["-V"]):
        # Printed before the command line's stack (Typer, Rich, the settings) is imported: a
        # version check costs the interpreter's start and nothing more.
        from dokoro import __version__

        sys.stdout.write(f"dokoro {__version__}\n")
        return
    # A shell asking for completions runs the bare command with this variable set (Typer's completion).
    if len(sys.argv) <= 1 and "_DOKORO_COMPLETE" not in os.environ:
        if _on_terminal():
            from dokoro_server.entry import registration_lines

            sys.stdout.write(_TERMINAL_HELP + "\n".join(registration_lines("dokoro")) + "\n")
            return
        from dokoro.server import serve

        serve()
        return
    from dokoro.cli import run

    run()


def _on_terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (OSError, ValueError):
        return False


if __name__ == "__main__":
    main()
