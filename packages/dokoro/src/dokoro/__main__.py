"""The ``dokoro`` command (and ``python -m dokoro``).

No arguments: serve every registered tool over stdio, which is what an MCP client such as
Claude Code runs. Any argument: the command line. The choice is made on ``sys.argv`` before
anything else is imported, so the server never pays for Typer and Rich.
"""

from __future__ import annotations

import sys

__all__ = ["main"]


def main() -> None:
    """Entry point of the ``dokoro`` console script."""
    if len(sys.argv) <= 1:
        from dokoro.server import serve

        serve()
        return
    from dokoro.cli import run

    run()


if __name__ == "__main__":
    main()
