"""The ``dokoro`` command line (any arguments): ``serve``, ``init``, ``demo``.

Commands call the same store services and servers the MCP tools use; nothing here holds
business rules of its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

__all__ = ["app", "run"]


class _LoudGroup(TyperGroup):
    """Prints the whole help, not just the usage line, when the command is unknown."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args and not args[0].startswith("-") and self.get_command(ctx, args[0]) is None:
            typer.echo(ctx.get_help() + "\n", err=True)
        return super().resolve_command(ctx, args)


app = typer.Typer(
    name="dokoro",
    cls=_LoudGroup,
    help=(
        "dokoro: a persistent, layered memory for coding agents, served over MCP.\n\n"
        "Run with no arguments to serve every tool over stdio (what an MCP client runs)."
    ),
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)

PathOption = Annotated[
    Path | None,
    typer.Option(
        "--path",
        help="The dokoro folder (default: $DOKORO_PATH, else ./dokoro).",
        file_okay=False,
        resolve_path=True,
    ),
]


@app.command()
def serve(path: PathOption = None) -> None:
    """Serve every dokoro tool over stdio (the same as running `dokoro` with no arguments)."""
    from dokoro.server import serve as serve_stdio

    serve_stdio(path)


@app.command()
def init(path: PathOption = None) -> None:
    """Lay out a dokoro folder (daily/, decisions/, README.md, current.md, ...) and create its database."""
    from dokoro.commands.init import init_store

    init_store(path)


@app.command()
def demo(
    keep: Annotated[
        bool, typer.Option("--keep", help="Keep the temporary store afterwards and print where it is.")
    ] = False,
) -> None:
    """Play the Monday/Thursday story against a real dokoro server over stdio, in a temporary store."""
    from dokoro.commands.demo import run_demo

    raise typer.Exit(0 if run_demo(keep=keep) else 1)


def run() -> None:
    """Run the command line on ``sys.argv``."""
    app()
