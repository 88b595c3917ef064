"""dokoro launcher."""
