"""Tool modules of the analytics server."""
