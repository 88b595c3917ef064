"""Tool modules of the tracking server."""
