"""``dokoro-core`` and ``python -m dokoro_core``: serve the core tools over stdio.

The store starts opening (in a thread) before the MCP SDK is imported: :func:`main` prepares
first and imports the server module, which imports the SDK, only then.
"""

from __future__ import annotations

__all__ = ["main"]

NAME = "dokoro-core"  # dokoro_core.server.NAME, spelled here so that nothing is imported before prepare()


def main() -> None:
    """Entry point of ``dokoro-core``: serve the core tools over stdio."""
    from dokoro_server.entry import prepare

    prepared = prepare(NAME)
    from dokoro_server import serve

    from dokoro_core.server import register

    serve(NAME, register, prepared=prepared)


if __name__ == "__main__":
    main()
