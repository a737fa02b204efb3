"""The reader against every phrasing row (tests/data/reading/phrasings.jsonl), graded by the reading cases' own
scorer (``score.py`` beside them in the shared data). Rows it still misreads are listed in known_misses.tsv and
expected to fail, strictly: a row that starts to pass must leave that list, so the count of misses only goes down.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

from pilot.reading import read
from pilot.reading.neutral import neutral, state_of
from tests.prereq import shared_dir

DATA = Path(__file__).parent / "data" / "reading"
ROWS = [json.loads(line) for line in (DATA / "phrasings.jsonl").read_text(encoding="utf-8").splitlines() if line]
KNOWN = {
    line.split("\t", 1)[0]: line.split("\t", 1)[1]
    for line in (DATA / "known_misses.tsv").read_text(encoding="utf-8").splitlines()
    if line and not line.startswith("#")
}


def _scorer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("reading_score", shared_dir() / "reading" / "score.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def grade():
    return _scorer().grade


def _param(row: dict) -> object:
    marks = [pytest.mark.xfail(strict=True, reason=KNOWN[row["id"]])] if row["id"] in KNOWN else []
    return pytest.param(row, id=row["id"], marks=marks)


@pytest.mark.parametrize("row", [_param(r) for r in ROWS])
def test_a_phrasing_reads_as_its_row_says(row, grade):
    state = state_of(row["context"])
    got = neutral(read(row["message"], state), state)
    problems = grade(row["expect"], got)
    assert not problems, (row["message"], problems, got)


def test_the_known_misses_are_rows_of_the_file():
    assert set(KNOWN) <= {r["id"] for r in ROWS}
