"""The command group class of every ``dokoro`` command: unknown commands (with a "did you mean"),
``-h`` and ``help``, and store errors worded for a person at a shell."""

from __future__ import annotations

import difflib
from typing import Any

import typer
from typer.core import TyperGroup

__all__ = ["HELP_OPTIONS", "LoudGroup", "closest", "group"]

# `-h` as well as `--help`, on every command (Click's default is `--help` only).
HELP_OPTIONS: dict[str, Any] = {"help_option_names": ["-h", "--help"]}


def closest(word: str, choices: list[str]) -> str | None:
    """The choice a mistyped ``word`` most likely meant (``serch`` → ``search``), or None."""
    found = difflib.get_close_matches(word.lower(), choices, n=1, cutoff=0.6)
    return found[0] if found else None


class LoudGroup(TyperGroup):
    """An unknown command says which one was meant when one is close (else prints the whole help,
    as the reference does) and exits 1; ``help [COMMAND…]`` is ``COMMAND… --help``; a store error
    prints its message, in shell words, never a traceback."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args and args[0] == "help" and self.get_command(ctx, "help") is None:
            self._help(ctx, args[1:])
        if args and not args[0].startswith("-") and self.get_command(ctx, args[0]) is None:
            names = [name for name in self.list_commands(ctx) if not self._hidden(ctx, name)]
            meant = closest(args[0], names)
            if meant is None:
                typer.echo(ctx.get_help() + "\n", err=True)
                typer.echo(f"Error: No such command '{args[0]}'.", err=True)
            else:
                typer.echo(
                    f"Error: No such command '{args[0]}'. Did you mean '{meant}'? "
                    f"(`{ctx.command_path} --help` lists them all)",
                    err=True,
                )
            ctx.exit(1)
        return super().resolve_command(ctx, args)

    def _hidden(self, ctx: Any, name: str) -> bool:
        command = self.get_command(ctx, name)
        return command is None or bool(getattr(command, "hidden", False))

    def _help(self, ctx: Any, path: list[str]) -> None:
        """``dokoro help memory forget``: the help of that command (or of this group)."""
        command: Any = self
        context = ctx
        for word in path:
            sub: Any = command.get_command(context, word) if hasattr(command, "get_command") else None
            if sub is None:
                names = list(command.list_commands(context)) if hasattr(command, "list_commands") else []
                meant = closest(word, names)
                hint = f" Did you mean '{meant}'?" if meant else ""
                typer.echo(f"Error: No such command '{word}'.{hint}", err=True)
                context.exit(1)
            context = sub.make_context(word, ["--help"], parent=context, resilient_parsing=True)
            command = sub
        typer.echo(context.get_help())
        context.exit(0)

    def invoke(self, ctx: Any) -> Any:
        # The message of a store error says how to fix the call. An unknown id exits 1 (as
        # `get` does in the reference); any other refusal (bad argument, unreachable database,
        # missing token) exits 2.
        from dokoro_store import DokoroError, NotFoundError

        from dokoro.commands._words import for_people

        try:
            return super().invoke(ctx)
        except DokoroError as exc:
            typer.echo(f"dokoro: {for_people(str(exc))}", err=True)
            raise typer.Exit(1 if isinstance(exc, NotFoundError) else 2) from None
        except KeyboardInterrupt:
            typer.echo("dokoro: interrupted", err=True)
            raise typer.Exit(130) from None
        except BrokenPipeError:  # `dokoro list | head`: the reader has all it wanted, nothing to say
            import os
            import sys

            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
            raise typer.Exit(1) from None
        except OSError as exc:  # a file the command reads or writes (not the store's: Store.open words those)
            where = f" ({exc.filename})" if exc.filename else ""
            typer.echo(f"dokoro: {exc.strerror or exc}{where}", err=True)
            raise typer.Exit(2) from None


def group(help_text: str) -> typer.Typer:
    """A sub-command group (``dokoro session …``) that behaves like the top level."""
    return typer.Typer(
        help=help_text, cls=LoudGroup, no_args_is_help=True, rich_markup_mode=None, context_settings=HELP_OPTIONS
    )
