"""Changes, steps and "found by" lines in a researcher's words (``workflows.wording``), with the operator names one
click away: every refinement a researcher can say reads without an operator or param name."""

from __future__ import annotations

import re

import pytest

from pilot.message import Context, read
from pilot.models import Intent, Paper, RankedPaper
from workflows import templates
from workflows.diff import diff
from workflows.edit import apply_edit
from workflows.model import ModifyNode
from workflows.refine import Feedback, ResultFilters, filter_results, rate, refine
from workflows.registry import all_operators
from workflows.wording import changes, found_by, step_name

RESULTS = [RankedPaper(paper=Paper(id=f"p{i}", title=f"Paper {i}")) for i in range(1, 6)]
# operator names and params as the details spell them ("top_k", "year_min", "features.recency")


def heard(text: str) -> Feedback:
    """What the reader takes from ``text`` typed under the five results above."""
    msg = read(text, Context(phase="results", has_results=True, has_search=True, listed=len(RESULTS)))
    assert msg.feedback is not None, (text, msg.kind, msg.command)
    return msg.feedback


JARGON = re.compile(r"\b(?:" + "|".join(sorted(all_operators(), key=len, reverse=True)) + r")\b|\w+_\w+|\w+\.\w+")


@pytest.mark.parametrize("direction", ["predecessor", "successor", "sibling", "benchmark", "survey"])
@pytest.mark.parametrize(
    "said",
    ["more like #3", "not #2", "only after 2015", "before 2010", "only ACL", "not from EMNLP", "recent work please",
     "seminal work", "give me 10", "fewer", "too broad", "newest first", "most cited first", "no surveys",
     "only surveys", "exclude speech", "more than 50 citations"],
)  # fmt: skip
def test_every_refinement_is_said_without_operator_names(direction, said):
    wf = templates.template(direction, "acl:P02-1040")
    ref = refine(wf, Intent(), heard(said), RESULTS)
    assert ref.changed, said
    plain = changes(wf, ref.workflow)
    assert plain, said
    assert not [line for line in plain if JARGON.search(line)], plain
    assert all(line[0].isupper() for line in plain)
    assert diff(wf, ref.workflow).summary()  # the details still name every operator and param


def test_the_changes_a_researcher_reads():
    wf = templates.template("successor", "acl:P02-1040")
    said = {
        "recent work please": ["Now favouring recent work"],
        "only after 2015": ["Only papers from 2016 on"],
        "give me 10": ["Showing 10 papers instead of 50"],
        "no surveys": ["Leaving out surveys"],
        "not #2": ["Left out 1 paper(s) you marked not relevant"],
        "more like #3": ["Now favouring papers like the one you liked", "Added a step: closer to the papers you liked"],
    }
    # seminal work weighs the year below zero: older first, never "now favouring recent work" beside it
    seminal = changes(wf, refine(wf, Intent(), heard("seminal work"), RESULTS).workflow)
    assert "Older work first" in seminal and "Now favouring recent work" not in seminal, seminal
    for text, expected in said.items():
        assert changes(wf, refine(wf, Intent(), heard(text), RESULTS).workflow) == expected, text
    last5 = apply_edit(wf, ModifyNode(node_id="filter", params={"newest_years": 5}))
    assert changes(wf, last5) == ["Now favouring work from the last 5 years: older papers are left out"]
    assert changes(last5, wf) == ["Older work is back: no limit to the last few years"]
    filtered = filter_results(wf, Intent(), ResultFilters(year_min=2008, venues=["ACL", "EMNLP"])).workflow
    assert changes(wf, filtered) == ["Only papers from 2008 on", "Only papers from ACL and EMNLP"]
    assert changes(None, wf) == []  # a first version changed nothing
    liked = rate(wf, Intent(), "p1", up=True).workflow
    assert changes(liked, wf) == [
        "Removed the step “a paper you liked”",
        "Removed the step “papers you liked”",
        "Removed the step “closer to the papers you liked”",
    ]


def test_found_by_reads_as_a_sentence_and_steps_have_plain_names():
    topic = templates.topic_search(Intent(topic="word alignment"))
    assert found_by(topic, ["search_kw", "search_phrases", "citers"]) == (
        "keyword search and by the citations of the best matches"
    )
    pred = templates.template("predecessor", "acl:P02-1040")
    assert found_by(pred, ["refs", "search_dense"]) == (
        "the anchor's reference list and by closeness in meaning to the anchor"
    )
    assert found_by(None, ["refs"]) == ""  # no workflow: only the details (the step ids) can be shown
    names = {n.id: step_name(pred, n.id) for n in pred.nodes}
    assert names["citers"] == "papers citing the anchor" and names["top"] == "keep the best 50"
    assert names["filter"] == "filter: before the anchor"
    assert not [n for n in names.values() if "_" in n], names
