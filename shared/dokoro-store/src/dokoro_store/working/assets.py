"""Assets of the workspace: images and files copied under ``assets/`` (reference §2.4)."""

from __future__ import annotations

import base64
import binascii
import contextlib
import logging
import re
from pathlib import Path, PurePosixPath

from dokoro_store.clock import Clock
from dokoro_store.errors import InvalidArgumentError, NotFoundError
from dokoro_store.paths import StorePaths
from dokoro_store.results.working import AssetListing, SavedAsset
from dokoro_store.walls.containment import inside, is_inside, read_source
from dokoro_store.walls.files import atomic_write_bytes, redact_bytes
from dokoro_store.walls.secrets import redact
from dokoro_store.working.current.file import CurrentFile

log = logging.getLogger("dokoro.store")

__all__ = ["ASSET_CATEGORIES", "AssetService"]

ASSET_CATEGORIES = ("images", "documents", "code", "data", "other")
FILE_CATEGORIES = ("documents", "code", "data", "other")
_DATA_URL = re.compile(r"^data:image/([a-zA-Z0-9.+-]+);base64,(.*)$", re.DOTALL)
_BASE64 = re.compile(r"^[A-Za-z0-9+/\s]+=*\s*$")


def _safe_name(name: str, what: str) -> str:
    cleaned = name.strip()
    if not cleaned or cleaned in (".", "..") or "/" in cleaned or "\\" in cleaned or "\0" in cleaned:
        raise InvalidArgumentError(f"{what} must be a plain file name without folders; got {name!r}")
    return cleaned


def _safe_subfolder(subfolder: str) -> PurePosixPath:
    cleaned = subfolder.replace("\\", "/").strip()
    parts = PurePosixPath(cleaned.strip("/")).parts
    if cleaned.startswith("/") or not parts or any(part in ("", ".", "..") for part in parts):
        raise InvalidArgumentError(f"subfolder must be a relative folder inside assets/images; got {subfolder!r}")
    return PurePosixPath(*parts)


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:  # e.g. a long base64 string is "File name too long", not a file
        return False


_NO_PATHS = (
    "file paths are not accepted on the shared HTTP server (they would read the server's disk); "
    "send the image inline as base64 or a data:image/...;base64, URL"
)
_IMAGE_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"BM", b"<svg", b"<?xml")


def _looks_like_image(data: bytes) -> bool:
    head = data[:64].lstrip()
    return head.startswith(_IMAGE_MAGIC) or (data[:4] == b"RIFF" and data[8:12] == b"WEBP")


def _write_unique(target: Path, data: bytes, *, within: Path) -> Path:
    """Write ``data`` atomically at ``target`` inside ``within``; an existing different file is
    never overwritten: the new one becomes ``name-2.ext`` (an identical file is simply reused). A
    symlink in the way is neither read nor written through: the name counts as taken. A text file
    is compared as it is stored: redacted of secrets."""
    inside(within, target.parent, what="asset folder")
    data = redact_bytes(data)
    candidate, counter = target, 2
    while candidate.is_symlink() or candidate.exists():
        if not candidate.is_symlink() and candidate.is_file() and candidate.read_bytes() == data:
            return candidate
        candidate = target.with_name(f"{target.stem}-{counter}{target.suffix}")
        counter += 1
    atomic_write_bytes(candidate, data, within=within)
    return candidate


class AssetService:
    """Images and files kept with the project's memory; each save is logged to current.md."""

    def __init__(self, paths: StorePaths, clock: Clock, current: CurrentFile) -> None:
        self._paths = paths
        self._clock = clock
        self._current = current

    @staticmethod
    def _source_path(source: str, cwd: Path) -> Path:
        path = Path(source)
        with contextlib.suppress(RuntimeError):  # "~someone" with no such user stays literal
            path = path.expanduser()
        return path if path.is_absolute() else cwd / path

    def _read_source(self, source: str, cwd: Path, *, image: bool = False) -> tuple[Path, bytes]:
        """The file ``source`` names and its bytes: a regular file of the project (``cwd``, where
        the server was started), symlinks followed only if they stay in it (:mod:`dokoro_store.walls.containment`)."""
        if not source:
            raise InvalidArgumentError("source must be a file path (absolute or relative to the server's cwd)")
        path = self._source_path(source, cwd)
        if not path.is_symlink() and not _is_file(path) and not path.exists():
            accepted = ", base64 data, or a data:image/...;base64, URL" if image else ""
            raise NotFoundError(
                f"Source not found: {path}. Pass an existing file path (absolute or relative to {cwd}){accepted}."
            )
        return read_source(path, cwd)

    def save_image(
        self,
        source: str,
        *,
        name: str | None = None,
        subfolder: str | None = None,
        description: str | None = None,
        cwd: Path,
        allow_paths: bool = True,
        agent: str | None = None,
    ) -> SavedAsset:
        """Save an image from a file path, bare base64 or a data URL.

        ``allow_paths=False`` (the shared HTTP server) accepts only inline data: a remote agent
        must not copy files from the server's disk.
        """
        source = source.strip()
        if not source:
            raise InvalidArgumentError("source must be a file path, base64 data or a data:image URL")
        if not allow_paths and not _DATA_URL.match(source) and not _BASE64.match(source):
            raise InvalidArgumentError(_NO_PATHS)
        target_dir = self._paths.assets_dir / "images"
        if subfolder:
            target_dir = target_dir.joinpath(*_safe_subfolder(subfolder).parts)
        millis = int(self._clock.now().timestamp() * 1000)
        data_url = _DATA_URL.match(source)
        # A file name can be valid base64 too ("screenshot"): an existing file wins, looked up
        # relative to the agent's cwd like every other relative source path.
        is_file = allow_paths and not data_url and _is_file(self._source_path(source, cwd))
        if data_url or (not is_file and len(source) >= 8 and _BASE64.match(source)):
            ext = "png"
            payload = source
            if data_url:
                ext = data_url.group(1).lower().replace("jpeg", "jpg").split("+")[0]
                payload = data_url.group(2)
            try:
                data = base64.b64decode("".join(payload.split()), validate=True)
            except (binascii.Error, ValueError):
                raise InvalidArgumentError("source looks like base64 but does not decode; check the data") from None
            if not data:
                raise InvalidArgumentError("source decodes to an empty image")
            if not data_url and not _looks_like_image(data):
                # "diagram1" is valid base64 too: bare base64 must decode to a real image.
                raise InvalidArgumentError(
                    f"source is neither an existing file (looked in {cwd}) nor base64 of an image "
                    "(PNG, JPEG, GIF, WebP, BMP, SVG); pass a path, base64 image data or a data:image URL"
                )
            filename = _safe_name(name, "name") if name else f"image-{millis}.{ext}"
            target = _write_unique(target_dir / filename, data, within=self._paths.root)
            origin = "base64 data"
        else:
            path, content = self._read_source(source, cwd, image=True)
            filename = _safe_name(name, "name") if name else f"image-{millis}{path.suffix}"
            target = _write_unique(target_dir / filename, content, within=self._paths.root)
            origin = str(path)
        relative = self._paths.relative(target)
        saved = SavedAsset(
            path=str(target),
            relative=relative,
            markdown=f"![{redact(description).text if description else 'image'}]({relative})",
            source=origin,
        )
        self._current.log_line("🖼️", f"IMAGE SAVED: {saved.relative}\n   {saved.markdown}", agent=agent)
        return saved

    def save_file(
        self,
        source: str,
        *,
        category: str = "other",
        name: str | None = None,
        description: str | None = None,
        cwd: Path,
        allow_paths: bool = True,
        agent: str | None = None,
    ) -> SavedAsset:
        if category not in FILE_CATEGORIES:
            raise InvalidArgumentError(f"category must be one of {', '.join(FILE_CATEGORIES)}; got {category!r}")
        if not allow_paths:
            raise InvalidArgumentError(_NO_PATHS)
        path, content = self._read_source(source.strip(), cwd)
        filename = _safe_name(name, "name") if name else path.name
        target = _write_unique(self._paths.assets_dir / category / filename, content, within=self._paths.root)
        relative = self._paths.relative(target)
        link = f"[{target.name}]({relative})"
        saved = SavedAsset(path=str(target), relative=relative, markdown=link, source=str(path))
        description = redact(description).text if description else description
        note = f" — {description}" if description else ""
        self._current.log_line("📎", f"FILE SAVED: {saved.relative}{note}", agent=agent)
        return saved

    def list(self, category: str = "all") -> AssetListing:
        """Direct entries of each category folder, as workspace-relative paths."""
        if category != "all" and category not in ASSET_CATEGORIES:
            raise InvalidArgumentError(
                f"category must be 'all' or one of {', '.join(ASSET_CATEGORIES)}; got {category!r}"
            )
        wanted = ASSET_CATEGORIES if category == "all" else (category,)
        listing: dict[str, list[str]] = {}
        for cat in wanted:
            folder = self._paths.assets_dir / cat
            if folder.is_symlink() or not is_inside(self._paths.root, folder):
                log.warning("dokoro: skipped the symlinked asset folder %s (never followed)", folder)
                continue
            if folder.is_dir():
                entries = []
                for entry in sorted(p for p in folder.iterdir() if not p.name.startswith(".")):
                    if entry.is_symlink():
                        log.warning("dokoro: skipped the symlink %s (never followed)", entry)
                        continue
                    entries.append(entry.relative_to(self._paths.root).as_posix())
                if entries:
                    listing[cat] = entries
        return AssetListing(assets=listing)
