"""Rules of the layout that a reviewer should not have to check by hand."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PERSISTENCE = {"sqlmodel", "sqlalchemy", "sqlite3", "alembic", "lancedb", "psycopg", "psycopg2", "pyarrow"}
HEAVY = ["lancedb", "pyarrow", "scipy", "ollama", "model2vec", "torch", "numpy"]


def _imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def _source_files() -> list[Path]:
    files: list[Path] = []
    for folder in ("servers", "packages", "shared/dokoro-server"):
        files += [p for p in (ROOT / folder).rglob("*.py") if "/tests/" not in p.as_posix()]
    return files


def test_no_persistence_library_is_imported_outside_dokoro_store() -> None:
    breaches = {
        str(path.relative_to(ROOT)): sorted(_imported_roots(path) & PERSISTENCE)
        for path in _source_files()
        if _imported_roots(path) & PERSISTENCE
    }
    assert breaches == {}


def test_the_scan_sees_the_server_sources() -> None:
    # Guard against the boundary test passing because it scanned nothing.
    names = {p.name for p in _source_files()}
    assert {"server.py", "toolkit.py"} <= names


def test_no_server_imports_another_servers_private_modules() -> None:
    breaches = []
    for path in _source_files():
        own = path.relative_to(ROOT).parts[3]  # <group>/<dist>/src/<package>/...
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                parts = node.module.split(".")
                private = any(part.startswith("_") and part != "__main__" for part in parts[1:])
                if private and parts[0] != own:
                    breaches.append(f"{path.relative_to(ROOT)}: {node.module}")
    assert breaches == []


_PROBE = """
import json, sys, tempfile, anyio
from pathlib import Path
from mcp import Client
from {module} import {factory}
from dokoro_server import DokoroSettings

async def main():
    tmp = Path(tempfile.mkdtemp())
    server = {factory}(DokoroSettings(path=tmp / "dokoro"), cwd=tmp)
    async with Client(server) as client:
        await client.list_tools()
        for name, arguments in {calls!r}:
            await client.call_tool(name, arguments)
    print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)))

anyio.run(main)
"""


_CORE_CALLS = [("dokoro_workspace_claim", {"task": "probe"}), ("dokoro_session_recall", {"query": "probe"})]


def _heavy_modules_loaded(
    module: str, factory: str, calls: list[tuple[str, dict[str, str]]] = _CORE_CALLS
) -> list[str]:
    code = _PROBE.format(module=module, factory=factory, heavy=HEAVY, calls=calls)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_building_and_using_the_core_server_imports_no_heavy_library() -> None:
    assert _heavy_modules_loaded("dokoro_core.server", "create_server") == []


def test_starting_the_search_server_imports_no_heavy_library() -> None:
    calls = [("search_status", {}), ("search_dokoros", {"query": "probe"})]
    assert _heavy_modules_loaded("dokoro_search.server", "create_server", calls) == []


def test_importing_the_core_server_module_does_not_open_a_database() -> None:
    code = "import sys, dokoro_core.server; print('sqlalchemy' in sys.modules, 'alembic' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False"]


def _server_packages() -> dict[str, Path]:
    return {
        src.name: src
        for dist in (ROOT / "servers").iterdir()
        if (dist / "src").is_dir()
        for src in (dist / "src").iterdir()
        if src.is_dir() and (src / "__init__.py").exists()
    }


def test_no_server_imports_another_server() -> None:
    servers = _server_packages()
    assert {"dokoro_core", "dokoro_search", "dokoro_planning"} <= set(servers)
    breaches = [
        f"{path.relative_to(ROOT)} imports {other}"
        for own, src in servers.items()
        for path in src.rglob("*.py")
        for other in sorted((_imported_roots(path) & set(servers)) - {own})
    ]
    assert breaches == []


def test_using_the_tracking_and_analytics_servers_imports_no_heavy_library() -> None:
    tracking = [("dokoro_issue_add", {"title": "probe"}), ("dokoro_task_track", {"action": "start", "title": "p"})]
    assert _heavy_modules_loaded("dokoro_tracking.server", "create_server", tracking) == []
    assert _heavy_modules_loaded("dokoro_analytics.server", "create_server", [("dokoro_pending", {})]) == []
