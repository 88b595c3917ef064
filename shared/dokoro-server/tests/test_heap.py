"""The long-lived heap is frozen out of the cyclic collector once per stage per process
once an entry point installed it (``dokoro_server/heap.py``); each case runs in a fresh process,
whose freeze count starts at 0."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _run(code: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_settle_freezes_what_is_alive_once_per_stage() -> None:
    out = _run(
        """
        import gc
        from dokoro_server.heap import install, settle, settled
        install()
        kept = [[i] for i in range(5000)]
        before = gc.get_freeze_count()
        first = settle("open")
        frozen = gc.get_freeze_count()
        more = [[i] for i in range(5000)]
        again = settle("open")
        print(before, first, frozen - before >= 5000, again, gc.get_freeze_count() == frozen, settled("open"),
              settled("other"), settle("other"), gc.get_freeze_count() - frozen >= 5000)
        """
    )
    assert out == ["0", "True", "True", "False", "True", "True", "False", "True", "True"]


def test_a_background_steps_first_run_freezes_what_it_imported() -> None:
    out = _run(
        """
        import gc, threading
        from types import SimpleNamespace
        from dokoro_server.heap import install, settled, store_opened
        from dokoro_store.background.steps import Background
        steps = Background()
        install()
        store_opened(SimpleNamespace(background=steps))
        cache = []
        ran = threading.Event()
        def step():
            cache.extend([i] for i in range(20000))  # what a first run imports, alive from now on
            ran.set()
        background = steps.step(step, name="test-step", failure="failed")
        background.schedule(0.0)
        assert ran.wait(30)
        for _ in range(300):
            if settled("test-step"):
                break
            threading.Event().wait(0.01)
        print(settled("test-step"), gc.get_freeze_count() >= 20000)
        background.close()
        """
    )
    assert out == ["True", "True"]


def test_a_failing_first_run_still_settles_and_the_next_run_retries() -> None:
    out = _run(
        """
        import threading
        from types import SimpleNamespace
        from dokoro_server.heap import install, settled, store_opened
        from dokoro_store.background.steps import Background
        steps = Background()
        install()
        store_opened(SimpleNamespace(background=steps))
        runs = []
        second = threading.Event()
        def step():
            runs.append(1)
            if len(runs) == 1:
                raise RuntimeError("first run fails")
            second.set()
        background = steps.step(step, name="failing-step", failure="failed")
        background.schedule(0.0)
        for _ in range(300):
            if settled("failing-step"):
                break
            threading.Event().wait(0.01)
        background.schedule(0.0)
        print(settled("failing-step"), second.wait(30), len(runs))
        background.close()
        """
    )
    assert out == ["True", "True", "2"]


def test_nothing_is_frozen_until_an_entry_point_installs_it() -> None:
    out = _run(
        """
        import gc, threading
        from dokoro_server.heap import settle, settled
        from dokoro_store.background.steps import Background
        ran = threading.Event()
        background = Background().step(ran.set, name="library-step", failure="failed")
        background.schedule(0.0)
        assert ran.wait(30)
        threading.Event().wait(0.2)
        print(settle("open"), settled("open"), settled("library-step"), gc.get_freeze_count())
        background.close()
        """
    )
    assert out == ["False", "False", "False", "0"]
