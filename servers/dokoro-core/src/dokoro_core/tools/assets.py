"""Asset tools: keep images and files with the project's memory under assets/."""

from __future__ import annotations

from typing import Annotated, Literal

from dokoro_server import AppState, ToolSpec, acting_agent, authenticated_agent, card, result, state
from dokoro_server.bounds import Note, PathOrData, PathText
from dokoro_store.results.working import AssetListing, SavedAsset
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field

__all__ = ["TOOLS"]


def dokoro_save_image(
    ctx: Context[AppState],
    source: Annotated[
        PathOrData,
        Field(
            description="Image file path (absolute or relative to the server's cwd), base64, "
            "or data:image/..;base64,..."
        ),
    ],
    name: Annotated[PathText | None, Field(description="File name to save as (no folders).")] = None,
    subfolder: Annotated[PathText | None, Field(description="Folder under assets/images/.")] = None,
    description: Annotated[Note | None, Field(description="Alt text / what the image shows.")] = None,
) -> Annotated[CallToolResult, SavedAsset]:
    """Save an image (screenshot, diagram) under assets/images/ and get a markdown reference."""
    app = state(ctx)
    saved = app.store.working.assets.save_image(
        source,
        name=name,
        subfolder=subfolder,
        description=description,
        cwd=app.cwd,
        allow_paths=authenticated_agent() is None,
        agent=acting_agent(ctx),
    )
    text = card(
        "Image Saved",
        "",
        {
            "Location": saved.path,
            "Relative path": saved.relative,
            "Markdown ref": saved.markdown,
            "From": saved.source,
        },
    )
    return result(text, saved)


def dokoro_save_file(
    ctx: Context[AppState],
    source: Annotated[
        PathText, Field(description="A regular file of the project (absolute, or relative to the server's cwd).")
    ],
    category: Annotated[
        Literal["documents", "code", "data", "other"], Field(description="Folder under assets/.")
    ] = "other",
    name: Annotated[PathText | None, Field(description="File name to save as (no folders).")] = None,
    description: Annotated[Note | None, Field(description="What the file is.")] = None,
) -> Annotated[CallToolResult, SavedAsset]:
    """Copy a file of the project into assets/<category>/ so it stays with the project's memory (files
    outside the project the server was started in, symlinks leading out and special files are refused)."""
    app = state(ctx)
    saved = app.store.working.assets.save_file(
        source,
        category=category,
        name=name,
        description=description,
        cwd=app.cwd,
        allow_paths=authenticated_agent() is None,
        agent=acting_agent(ctx),
    )
    text = card("File Saved", "", {"Location": saved.path, "Relative path": saved.relative, "From": saved.source})
    return result(text, saved)


def dokoro_list_assets(
    ctx: Context[AppState],
    category: Annotated[
        Literal["images", "documents", "code", "data", "other", "all"], Field(description="Which folder to list.")
    ] = "all",
) -> Annotated[CallToolResult, AssetListing]:
    """List saved assets by category."""
    listing = state(ctx).store.working.assets.list(category)
    if not listing.assets:
        return result(card("No Assets", "Nothing saved yet.", status="info"), listing)
    lines = ["## Dokoro Assets"]
    for cat, files in listing.assets.items():
        lines += ["", f"### {cat.capitalize()} ({len(files)})"]
        lines += [f"- `{f}`" for f in files]
    return result("\n".join(lines), listing)


TOOLS = [
    ToolSpec(dokoro_save_image, "Save an image"),
    ToolSpec(dokoro_save_file, "Save a file"),
    ToolSpec(dokoro_list_assets, "List assets", read_only=True, idempotent=True),
]
