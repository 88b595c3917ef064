"""Agents answering one question at once, from separate processes: one answer wins, none is lost."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from dokoro_store import Store

pytestmark = pytest.mark.slow  # many processes at once

_ANSWER = """
import sys
from pathlib import Path
from dokoro_store import InvalidArgumentError, Store
with Store.open(Path(sys.argv[1]), database_url=sys.argv[2] or None) as store:
    try:
        store.working.questions.answer(f"answer from {sys.argv[4]}", sys.argv[3])
    except InvalidArgumentError:
        print("refused")
    else:
        print("answered")
"""


def test_one_question_answered_by_many_processes_keeps_exactly_one_answer(
    tmp_path: Path, database_url: str | None
) -> None:
    root = tmp_path / "dokoro"
    with Store.open(root, database_url=database_url) as store:
        question = store.working.questions.add("Which cache?").question
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _ANSWER, str(root), database_url or "", question.id, f"p{n}"],
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(6)
    ]
    outcomes = [proc.communicate(timeout=120)[0].strip() for proc in procs]
    assert outcomes.count("answered") == 1, outcomes
    assert outcomes.count("refused") == 5, outcomes
    with Store.open(root, database_url=database_url) as store:
        (row,) = store.working.questions.list("all")
    winner = outcomes.index("answered")
    assert row.answer == f"answer from p{winner}"
