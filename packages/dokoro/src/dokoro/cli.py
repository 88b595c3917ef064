"""The ``dokoro`` command line (any arguments).

Commands call the same store services and servers the MCP tools use; nothing here holds
business rules of its own. Command groups live in ``dokoro.commands.<group>``; the commands whose
work is heavy import it inside the function, so ``dokoro --help`` stays quick.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dokoro.commands import cleanup as _cleanup
from dokoro.commands import docs as _docs
from dokoro.commands import memory as _memory
from dokoro.commands import memory_upkeep as _memory_upkeep  # noqa: F401 - registers review, renew, types
from dokoro.commands import onboard as _onboard
from dokoro.commands import proposals as _proposals
from dokoro.commands import work as _work
from dokoro.commands._group import HELP_OPTIONS, LoudGroup, group
from dokoro.commands._output import EditorOption, JsonOption, PathOption
from dokoro.commands.hooks import commands as _hooks

__all__ = ["app", "run"]


app = typer.Typer(
    name="dokoro",
    cls=LoudGroup,
    help=(
        "dokoro: a persistent, layered memory for coding agents, served over MCP.\n\n"
        "Run with no arguments to serve every tool over stdio (what an MCP client runs)."
    ),
    add_completion=True,
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings=HELP_OPTIONS,
)


def _print_version(value: bool) -> None:
    if value:
        from dokoro_server.entry import version_of

        typer.echo(f"dokoro {version_of('dokoro')}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", "-V", help="Print the version and exit.", callback=_print_version, is_eager=True),
    ] = False,
) -> None:
    """dokoro: a persistent, layered memory for coding agents, served over MCP.

    Run with no arguments to serve every tool over stdio (what an MCP client runs).
    """


@app.command()
def serve(
    path: PathOption = None,
    http: Annotated[bool, typer.Option("--http", help="Serve over streamable HTTP instead of stdio.")] = False,
    host: Annotated[str, typer.Option(help="HTTP address to bind; anything but loopback needs tokens.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="HTTP port.")] = 8765,
    require_token: Annotated[
        bool, typer.Option("--require-token", help="Demand bearer tokens even on loopback.")
    ] = False,
) -> None:
    """Serve every dokoro tool over stdio (as with no arguments), or over HTTP with --http."""
    if http:
        from dokoro.http import serve_http

        serve_http(path, host, port, require_token)
        return
    from dokoro.server import serve as serve_stdio

    serve_stdio(path, explicit=True)


@app.command()
def init(path: PathOption = None) -> None:
    """Lay out a dokoro folder (daily/, decisions/, README.md, current.md, ...) and create its database."""
    from dokoro.commands.init import init_store

    init_store(path)
    _hooks.offer_install()


@app.command()
def demo(
    keep: Annotated[
        bool, typer.Option("--keep", help="Keep the temporary store afterwards and print where it is.")
    ] = False,
) -> None:
    """Play the Monday/Thursday story against a real dokoro server over stdio, in a temporary store."""
    from dokoro.commands.demo import run_demo

    raise typer.Exit(0 if run_demo(keep=keep) else 1)


store_app = group("Move the store between databases.")
token_app = group("Bearer tokens of the shared HTTP server (one agent each).")
app.add_typer(store_app, name="store")
app.add_typer(token_app, name="token")

# What a person reads and changes: documents, sessions, time, memories, rules, cleanup, the browser.
_docs.register(app)
app.add_typer(_work.session_app, name="session")
app.add_typer(_work.time_app, name="time")
_memory.memory_app.add_typer(_proposals.proposals_app, name="proposals")
app.add_typer(_memory.memory_app, name="memory")
app.command("rules")(_memory.rules)
app.command("onboard")(_onboard.onboard)
app.command("cleanup")(_cleanup.cleanup)
# Claude Code's lifecycle hooks: `dokoro hook <event>` (answered by commands/quick.py before Typer
# loads; registered here for its --help), `dokoro hooks install|uninstall|status|capture`.
app.command("hook")(_hooks.hook)
app.add_typer(_hooks.hooks_app, name="hooks")


@app.command()
def forget(
    session: Annotated[str, typer.Option("--session", help="A captured session's id (its turns, summary and mark).")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Forget without asking.")] = False,
    path: PathOption = None,
) -> None:
    """Remove what capture stored of a session (`dokoro browse --category sessions` lists them)."""
    _hooks.forget_session(path, session, yes)


@app.command()
def browse(
    category: Annotated[
        str | None, typer.Option(help="Open this category (current, daily, plans, claims, memories, ...).")
    ] = None,
    editor: EditorOption = "vi",
    json: JsonOption = False,
    path: PathOption = None,
) -> None:
    """Browse the store in the terminal: workspace, dailies, plans, claims, agents, memories, ...

    Not on a terminal (piped), it prints a summary instead; --json prints the categories (or one
    category's items) as JSON.
    """
    import shlex

    from dokoro.browse import run_browse

    raise typer.Exit(run_browse(path, category, json, shlex.split(editor)))


@store_app.command("migrate")
def store_migrate(
    to: Annotated[str, typer.Option("--to", help="Target: a database URL, or a folder for its SQLite file.")],
    from_url: Annotated[str | None, typer.Option("--from", help="Source database URL (default: this store).")] = None,
    path: PathOption = None,
) -> None:
    """Copy everything to another database (SQLite ⇄ PostgreSQL): idempotent, non-destructive, verified."""
    from dokoro.commands.team import migrate_store

    raise typer.Exit(0 if migrate_store(path, to, from_url) else 1)


@app.command("export")
def export_(
    out: Annotated[Path | None, typer.Option("--out", help="Folder for the backup (default .dokoro/backup).")] = None,
    path: PathOption = None,
) -> None:
    """Write a timestamped, human-readable JSON backup of the whole store."""
    from dokoro.commands.team import export_backup

    export_backup(path, out)


@app.command("import")
def import_(
    file: Annotated[Path, typer.Argument(help="A backup written by `dokoro export`, or the word `transcripts`.")],
    folder: Annotated[
        Path | None, typer.Argument(help="With `transcripts`: a folder of Claude Code transcripts (*.jsonl).")
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Import without asking.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only show the preview.")] = False,
    path: PathOption = None,
) -> None:
    """Restore a backup: preview counts, skip duplicates, surface conflicting facts (never overwrite).

    `dokoro import transcripts FOLDER` back-fills Claude Code's transcripts of a project instead
    (~/.claude/projects/<project>/): a preview, a progress bar, and nothing added twice.
    """
    if str(file) == "transcripts" and folder is not None:
        raise typer.Exit(0 if _hooks.import_transcripts(path, folder, yes, dry_run) else 1)
    if folder is not None:
        raise typer.BadParameter("a second argument goes with `dokoro import transcripts FOLDER`")
    from dokoro.commands.team import import_backup

    import_backup(path, file, yes, dry_run)


@app.command()
def doctor(
    json: JsonOption = False,
    path: PathOption = None,
    scan_secrets: Annotated[
        bool,
        typer.Option("--scan-secrets", help="Find secrets already stored in rows and files (where, never the secret)."),
    ] = False,
    fix: Annotated[
        bool,
        typer.Option(
            "--fix",
            help="Repair what an earlier version let in (memory rows no file can hold); with --scan-secrets: "
            "redact the secrets found in place and re-index the documents.",
        ),
    ] = False,
) -> None:
    """Which backend, schema, embedder, vector engine and index this store really uses.

    With --scan-secrets: where secrets sit in the store (exit 1 when some are left); --fix redacts them.
    --fix alone repairs memory rows an earlier version let in with an id no file can hold.
    """
    if fix and not scan_secrets:
        from dokoro.commands.doctor import run_repair

        raise typer.Exit(0 if run_repair(path, json) else 1)
    if scan_secrets:
        from dokoro.commands.doctor import run_secret_scan

        raise typer.Exit(0 if run_secret_scan(path, fix, json) else 1)
    from dokoro.commands.doctor import run_doctor

    raise typer.Exit(0 if run_doctor(path, json) else 1)


@app.command("migrate")
def migrate(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only list what would be imported.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Re-import files whose content did not change.")] = False,
    from_original: Annotated[
        Path | None,
        typer.Option(
            "--from-original",
            help="Move in from a store folder the original (TypeScript) dokoro wrote: a preview, then its "
            "sessions, summaries, feedback, coordination, documents, plans and questions.",
        ),
    ] = None,
    from_mcp_memory: Annotated[
        Path | None,
        typer.Option(
            "--from-mcp-memory",
            help="Import the JSONL knowledge graph of the MCP reference memory server (memory.jsonl): "
            "entities as documents and graph entities, relations as graph relations.",
        ),
    ] = None,
    from_notes: Annotated[
        Path | None,
        typer.Option(
            "--from-notes",
            help="Import a folder of markdown notes with front matter (basic-memory, Obsidian): notes as "
            "documents and graph entities, [[links]] and relation lines as relations.",
        ),
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="With --from-*: move in without asking.")] = False,
    path: PathOption = None,
) -> None:
    """Import every markdown file of the dokoro folder as a searchable document (and index it).

    With --from-original FOLDER: move in from the original dokoro's store instead (into this
    folder, converted in place and backed up first, or into the store --path names).
    With --from-mcp-memory FILE or --from-notes FOLDER: import another memory tool's data, with a preview.
    """
    sources = [s for s in (from_original, from_mcp_memory, from_notes) if s is not None]
    if len(sources) > 1:
        raise typer.BadParameter("pass one of --from-original, --from-mcp-memory, --from-notes")
    if from_original is not None:
        from dokoro.commands.original import migrate_from_original

        raise typer.Exit(0 if migrate_from_original(path, from_original, yes, dry_run) else 1)
    if from_mcp_memory is not None or from_notes is not None:
        from dokoro.commands.importers import import_from

        kind = "mcp-memory" if from_mcp_memory is not None else "notes"
        source = from_mcp_memory or from_notes
        assert source is not None
        raise typer.Exit(0 if import_from(path, source, kind, yes, dry_run) else 1)
    from dokoro.commands.index import migrate_markdown

    raise typer.Exit(0 if migrate_markdown(path, dry_run, force) else 1)


@app.command()
def reindex(
    full: Annotated[bool, typer.Option("--full", help="Drop every chunk and vector and rebuild them all.")] = False,
    path: PathOption = None,
) -> None:
    """Bring the search index up to date (only changed documents are re-embedded)."""
    from dokoro.commands.index import reindex_store

    raise typer.Exit(0 if reindex_store(path, full) else 1)


@app.command()
def reembed(
    path: PathOption = None,
    embedder: Annotated[
        str | None,
        typer.Option(
            help="Move the store to this embedder (onnx, static, ollama, hashing); default: DOKORO_EMBEDDER. "
            "Processes left on `auto` follow the new stamp.",
        ),
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Re-embed without asking.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only show what would be re-embedded.")] = False,
) -> None:
    """Rebuild every vector (documents, session summaries) with one embedder, and restamp the index.

    The only command that changes a store's embedder: it shows what it will rebuild and asks first.
    """
    from dokoro.commands.index import reembed_store

    raise typer.Exit(0 if reembed_store(path, embedder, yes=yes, dry_run=dry_run) else 1)


@token_app.command("create")
def token_create(
    agent: Annotated[str, typer.Option("--agent", help="The agent id this token acts as.")],
    label: Annotated[str | None, typer.Option(help="A note: whose machine, which client.")] = None,
    operator: Annotated[
        bool, typer.Option("--operator", help="The operator's token: may also run a full reindex over HTTP.")
    ] = False,
    path: PathOption = None,
) -> None:
    """Create a token (printed once; only its hash is stored)."""
    from dokoro.commands.tokens import create_token

    create_token(path, agent, label, operator=operator)


@token_app.command("list")
def token_list(json: JsonOption = False, path: PathOption = None) -> None:
    """List tokens (ids, agents, state, last use; never the secrets)."""
    from dokoro.commands.tokens import list_tokens

    list_tokens(path, json)


@token_app.command("revoke")
def token_revoke(token_id: Annotated[str, typer.Argument(help="Token id (tok_...).")], path: PathOption = None) -> None:
    """Revoke a token at once."""
    from dokoro.commands.tokens import revoke_token

    revoke_token(path, token_id)


def run() -> None:
    """Run the command line on ``sys.argv``."""
    from dokoro_server.settings import quiet_third_parties

    quiet_third_parties()
    app()
