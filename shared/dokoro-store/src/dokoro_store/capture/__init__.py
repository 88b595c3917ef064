"""Capture: what a client's own lifecycle hooks hand the store, with no tool call needed.

Claude Code's transcripts (JSONL) are read into the store (:mod:`.transcript` streams and bounds
the reading, :mod:`.turns` makes turns of lines, :mod:`.digest` the session's extractive summary),
under a person's switches (:mod:`.switches`, ``.dokoro.yml``); a prompt gets what the store holds
close to it (:mod:`.recall`); every hook run is journaled (:mod:`.journal`). The door is
:class:`.service.CaptureService`, the store's ``store.capture``.
"""
