"""Shared block tools: named texts agents rewrite safely with compare-and-set versions."""

from __future__ import annotations

from typing import Annotated

from dokoro_server import AppState, ToolSpec, acting_agent, result, state
from dokoro_server.bounds import Version
from dokoro_store.results.coordination import BlockList, BlockRead, BlockWrite
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field

__all__ = ["TOOLS"]


def dokoro_block_write(
    ctx: Context[AppState],
    block_key: Annotated[str, Field(min_length=1, max_length=200, description="Name of the block.")],
    content: Annotated[str, Field(max_length=100000, description="The block's whole new text.")],
    agent_id: Annotated[
        str | None, Field(max_length=200, description="You; default: DOKORO_AGENT_ID or your token's agent.")
    ] = None,
    expected_version: Annotated[
        Version | None,
        Field(
            ge=0,
            description="The version you read (0 = create only if new). The write fails if the block moved on; "
            "omit it to overwrite whatever is there.",
        ),
    ] = None,
) -> Annotated[CallToolResult, BlockWrite]:
    """Create or replace a shared block. Pass expected_version (from dokoro_block_read) so a
    concurrent edit by another agent is refused instead of silently lost."""
    written = state(ctx).store.coord.blocks.write(
        block_key, content, acting_agent(ctx, agent_id), expected_version=expected_version
    )
    block = written.block
    verb = "created at" if written.created else "updated to"
    return result(f"block '{block.block_key}' {verb} version {block.version} by {block.updated_by}", written)


def dokoro_block_read(
    ctx: Context[AppState],
    block_key: Annotated[str, Field(min_length=1, max_length=200, description="Name of the block.")],
) -> Annotated[CallToolResult, BlockRead]:
    """Read a shared block and its version (pass the version to dokoro_block_write)."""
    from dokoro_store import iso

    block = state(ctx).store.coord.blocks.read(block_key)
    if block is None:
        return result(f"(no block '{block_key.strip()}')", BlockRead(found=False))
    text = (
        f"block '{block.block_key}' — version {block.version} (by {block.updated_by} @ {iso(block.updated_at)})"
        f"\n\n{block.content}"
    )
    return result(text, BlockRead(found=True, block=block))


def dokoro_block_list(ctx: Context[AppState]) -> Annotated[CallToolResult, BlockList]:
    """List the shared blocks, most recently updated first."""
    from dokoro_store import iso

    blocks = state(ctx).store.coord.blocks.list()
    if not blocks:
        return result("(no shared blocks)", BlockList(blocks=[]))
    lines = [f"{b.block_key}  v{b.version}  by {b.updated_by}  @ {iso(b.updated_at)}" for b in blocks]
    return result("\n".join(lines), BlockList(blocks=blocks))


TOOLS = [
    ToolSpec(dokoro_block_write, "Write a shared block", destructive=True),  # replaces the block
    ToolSpec(dokoro_block_read, "Read a shared block", read_only=True, idempotent=True),
    ToolSpec(dokoro_block_list, "List shared blocks", read_only=True, idempotent=True),
]
