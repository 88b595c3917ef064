"""The server of one ``dokoro demo`` session: every dokoro tool over stdio, on the story's day.

``python -m dokoro.commands.demo_server DAYS_BACK`` serves like ``dokoro serve`` with the store's
clock moved ``DAYS_BACK`` days into the past, so Thursday's session writes Thursday's files.
Only the demo starts it; its store is the demo's temporary folder (``DOKORO_PATH``).
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from dokoro_store import Clock

__all__ = ["StoryClock", "main"]


class StoryClock(Clock):
    """The real UTC clock, moved by a fixed amount (time still passes as it does)."""

    def __init__(self, shift: timedelta) -> None:
        self._shift = shift

    def now(self) -> datetime:
        return datetime.now(UTC) + self._shift


def main() -> None:
    import anyio
    from dokoro_server import DokoroSettings, build_server
    from dokoro_server.settings import quiet_third_parties
    from dokoro_server.stdio import run_stdio

    from dokoro.server import NAME, registers

    quiet_third_parties()
    days_back = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    settings = DokoroSettings()
    mcp = build_server(settings, name=NAME, cwd=Path.cwd(), clock=StoryClock(timedelta(days=-days_back)))
    for register in registers(settings):
        register(mcp)
    anyio.run(run_stdio, mcp)


if __name__ == "__main__":
    main()
