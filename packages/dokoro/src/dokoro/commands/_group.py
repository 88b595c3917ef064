"""The command group class of every ``dokoro`` command (unknown commands and store errors)."""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperGroup

__all__ = ["LoudGroup", "group"]


class LoudGroup(TyperGroup):
    """An unknown command prints the whole help and exits 1 (as the reference does); a store error
    prints its message, never a traceback."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args and not args[0].startswith("-") and self.get_command(ctx, args[0]) is None:
            typer.echo(ctx.get_help() + "\n", err=True)
            typer.echo(f"Error: No such command '{args[0]}'.", err=True)
            ctx.exit(1)
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: Any) -> Any:
        # The message of a store error says how to fix the call. An unknown id exits 1 (as
        # `get` does in the reference); any other refusal (bad argument, unreachable database,
        # missing token) exits 2.
        from dokoro_store import DokoroError, NotFoundError

        try:
            return super().invoke(ctx)
        except DokoroError as exc:
            typer.echo(f"dokoro: {exc}", err=True)
            raise typer.Exit(1 if isinstance(exc, NotFoundError) else 2) from None
        except KeyboardInterrupt:
            typer.echo("dokoro: interrupted", err=True)
            raise typer.Exit(130) from None
        except OSError as exc:  # a file the command reads or writes (not the store's: Store.open words those)
            where = f" ({exc.filename})" if exc.filename else ""
            typer.echo(f"dokoro: {exc.strerror or exc}{where}", err=True)
            raise typer.Exit(2) from None


def group(help_text: str) -> typer.Typer:
    """A sub-command group (``dokoro session …``) that behaves like the top level."""
    return typer.Typer(help=help_text, cls=LoudGroup, no_args_is_help=True, rich_markup_mode=None)
