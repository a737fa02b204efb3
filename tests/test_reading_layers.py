"""The reader's layers one at a time: the time grammar against its own example corpus (positive and negative rows),
the spans a message yields (and does not), the state's precedence and the ask band."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pilot.reading import read
from pilot.reading.model import QuestionState, State
from pilot.reading.spans import extract
from pilot.reading.timegrammar import this_year

EXAMPLES = Path(__file__).resolve().parents[1] / "pilot" / "reading" / "data" / "time_examples.jsonl"
ROWS = [json.loads(line) for line in EXAMPLES.read_text(encoding="utf-8").splitlines() if line.strip()]


def _year(v: object) -> object:
    """ "now-2" in the example corpus is two years before this one."""
    if isinstance(v, str) and v.startswith("now"):
        return this_year() - int(v[4:] or 0) if "-" in v else this_year()
    return v


@pytest.mark.parametrize("row", ROWS, ids=[r["text"] for r in ROWS])
def test_the_time_grammar_reads_its_example_corpus(row):
    times = extract(row["text"], State()).of("time")
    if row.get("none"):
        assert not times, row["text"]  # a number that is no year, a field's name: no period
        return
    got: dict = {}
    for s in times:
        for key in ("year_min", "year_max"):
            if s.value.get(key) is not None:
                got[key] = s.value[key]
        if s.value.get("exclude_years"):
            got.setdefault("exclude_years", []).extend([list(x) for x in s.value["exclude_years"]])
    for key in ("year_min", "year_max", "exclude_years"):
        if key in row:
            want = _year(row[key]) if key != "exclude_years" else row[key]
            assert got.get(key) == want, (row["text"], got)


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [("what cites 10.18653/v1/P19-1001?", "id", "10.18653/v1/P19-1001"), ("more like #3", "ref", [3]),
     ("papers by Christopher Manning", "person", "Christopher Manning"), ("ACL papers on parsing", "venue", "ACL"),
     ("surveys on entity linking", "type", "survey"), ("who at Tsinghua works on graphs", "org", None)],
)  # fmt: skip
def test_a_span_is_found_with_its_value(text, kind, value):
    spans = extract(text, State(phase="results", listed=10)).of(kind)
    assert spans, (text, kind)
    if value is not None:
        assert spans[0].value == value


@pytest.mark.parametrize(
    ("text", "kind"),
    [("BERT 2 is not a year", "time"), ("papers on Python programming education", "person"),
     ("papers on GPUs and LLMs", "name"), ("the 2019 paper", "name")],
)  # fmt: skip
def test_words_that_only_look_like_a_span_are_none(text, kind):
    assert not extract(text, State()).of(kind), (text, kind)


def test_an_answer_only_while_a_question_is_open():
    question = QuestionState(slot="time", text="When?", options=["Up to 2000", "2001 or later", "Any time"])
    assert read("2", State(phase="question", question=question)).act == "answer"
    assert read("2", State()).act != "answer"  # nothing asked: no option to pick


def test_a_refinement_only_while_a_list_is_on_screen():
    assert read("only after 2015", State(phase="results", listed=10)).act == "refine"
    assert read("only after 2015", State()).act == "ask"  # nothing to narrow yet: asked, not guessed


@pytest.mark.parametrize(
    ("text", "state"),
    [("speech", State(phase="results", listed=10, topic="machine translation")),  # narrow or new search?
     ("", State()), ("?!", State()), ("remove #2", State())],  # nothing on screen to remove from
)  # fmt: skip
def test_below_the_threshold_the_reader_asks(text, state):
    r = read(text, state)
    assert r.act == "ask", (text, r.act, r.why)
