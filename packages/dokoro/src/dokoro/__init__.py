"""dokoro: a persistent, layered memory for coding agents, served over MCP.

This package is the unified launcher: ``dokoro`` with no arguments serves every tool over
stdio (:mod:`dokoro.server`); with arguments it is the command line (:mod:`dokoro.cli`).
It imports nothing heavy, so starting the server stays fast.
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
