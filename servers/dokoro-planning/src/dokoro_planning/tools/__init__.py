"""Tool modules of the planning server."""
