"""Tool modules of the search server, one per concern."""
