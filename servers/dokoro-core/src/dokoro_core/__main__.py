"""``dokoro-core`` and ``python -m dokoro_core``: serve the core tools over stdio.

:func:`main` prepares first (the command line, the settings: ``--help`` and ``--version`` answer
before anything heavy is imported), then imports the server module and the SDK, and serves; the
store opens in a thread from there on (``dokoro_server.entry``).
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
