"""``dokoro token``: bearer tokens of the shared HTTP server, one agent each."""

from __future__ import annotations

from pathlib import Path

import typer

from dokoro.commands._open import open_for_command
from dokoro.commands._output import emit_json

__all__ = ["create_token", "list_tokens", "revoke_token"]


def create_token(path: Path | None, agent: str, label: str | None, *, operator: bool = False) -> str:
    store = open_for_command(path)
    try:
        issued = store.tokens.create(agent, label, operator=operator)
    finally:
        store.close()
    role = "operator token" if issued.operator else "Token"
    typer.echo(f"{role.capitalize()} {issued.id} for agent {issued.agent_id} (shown once; only its hash is stored):")
    typer.echo(issued.token)
    return str(issued.token)


def list_tokens(path: Path | None, json: bool = False) -> None:
    from dokoro_store import iso

    store = open_for_command(path)
    try:
        rows = store.tokens.list()
    finally:
        store.close()
    if json:
        emit_json(
            [
                {
                    "id": row.id,
                    "agent_id": row.agent_id,
                    "label": row.label,
                    "operator": row.operator,
                    "created_at": iso(row.created_at),
                    "last_used_at": iso(row.last_used_at) if row.last_used_at else None,
                    "revoked_at": iso(row.revoked_at) if row.revoked_at else None,
                }
                for row in rows
            ]
        )
        return
    if not rows:
        typer.echo("No tokens. Create one with `dokoro token create --agent NAME`.")
    for row in rows:
        state = f"revoked {iso(row.revoked_at)}" if row.revoked_at else "live"
        used = iso(row.last_used_at) if row.last_used_at else "never"
        role = "  operator" if row.operator else ""
        typer.echo(f"{row.id}  agent={row.agent_id}{role}  {state}  created {iso(row.created_at)}  last used {used}")


def revoke_token(path: Path | None, token_id: str) -> None:
    store = open_for_command(path)
    try:
        row = store.tokens.revoke(token_id)
    finally:
        store.close()
    typer.echo(f"Revoked {row.id} (agent {row.agent_id}).")
