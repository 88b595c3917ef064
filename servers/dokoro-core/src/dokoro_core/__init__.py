"""dokoro core server."""
