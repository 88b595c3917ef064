"""Tool modules of the bridge."""
