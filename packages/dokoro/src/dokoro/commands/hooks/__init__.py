"""``dokoro hook <event>`` (what the client runs), ``dokoro hooks install|uninstall|status|capture``,
``dokoro import transcripts`` and ``dokoro forget --session``: memory that fills itself through a
client's lifecycle hooks.

:mod:`.run` is the hook command's fast path (no Typer, Rich, server kit or MCP SDK: ``dokoro``'s
``__main__`` dispatches to it before anything else loads); :mod:`.events` reads the client's event;
:mod:`.settings_file` merges dokoro's entries into the client's settings; :mod:`.commands` holds the
commands a person types.
"""
