"""Tool modules of the core server, one per memory concern."""
