"""Feedback -> edits: each kind of feedback changes the node it should, with a readable diff."""

from __future__ import annotations

import json

import pytest

from pilot.llm import LLM
from pilot.message import Context, read
from pilot.models import Intent, Paper, RankedPaper
from workflows.diff import diff
from workflows.model import Workflow
from workflows.refine import (
    Feedback,
    ResultFilters,
    current_filters,
    filter_results,
    rate,
    refine,
    refine_llm,
)
from workflows.templates import template
from workflows.validate import validate

INTENT = Intent(direction="successor")
RESULTS = [RankedPaper(paper=Paper(id=f"acl:P{i}", title=f"Paper {i}", year=2000 + i)) for i in range(10)]


def said(text: str) -> Feedback:
    """What the reader takes from ``text`` typed under the ten results above."""
    msg = read(text, Context(phase="results", has_results=True, has_search=True, listed=len(RESULTS)))
    assert msg.feedback is not None, (text, msg.kind, msg.command)
    return msg.feedback


@pytest.fixture
def wf() -> Workflow:
    return template("successor", "acl:P02-1040", INTENT)


@pytest.mark.parametrize(
    "feedback,node,param,value",
    [
        ("only after 2015", "filter", "year_min", 2016),
        ("before 2010", "filter", "year_max", 2009),
        ("only EMNLP", "filter", "venues", ["EMNLP"]),
        # a venue to leave out is never the only venue kept ("not from EMNLP" once kept EMNLP alone)
        ("not from EMNLP", "filter", "exclude_venues", ["EMNLP"]),
        ("drop anything from NAACL", "filter", "exclude_venues", ["NAACL"]),
        ("no COLING papers please", "filter", "exclude_venues", ["COLING"]),
        ("exclude speech", "filter", "exclude_terms", ["speech"]),
        ("not #2", "filter", "exclude_ids", ["acl:P1"]),
        ("not this one", "filter", "exclude_ids", ["acl:P0"]),
        ("fewer", "top", "k", 25),
        ("more", "top", "k", 100),
        ("show me 10 more", "top", "k", 60),
        ("top 10", "top", "k", 10),
        ("too broad", "top", "k", 25),
        # an order is the same papers listed otherwise, not a preference in the score
        ("sort by year", "top", "order", "newest"),
        ("newest first", "top", "order", "newest"),
        ("list them chronologically", "top", "order", "oldest"),
        ("most cited first", "top", "order", "most_cited"),
        # a period to leave out ("not from the 2000s" once kept the 2000s alone)
        ("not from the 2000s", "filter", "exclude_years", [(2000, 2009)]),
        ("fewer from the 90s", "filter", "exclude_years", [(1990, 1999)]),
        ("no papers from 2019 please", "filter", "exclude_years", [(2019, 2019)]),
        ("exclude 2010 to 2015", "filter", "exclude_years", [(2010, 2015)]),
        # kinds of paper, on the list on screen
        ("no surveys", "filter", "paper_types", ["resource", "method", "position"]),
        ("only surveys", "filter", "paper_types", ["survey"]),
    ],
)
def test_feedback_modifies_the_right_node(wf, feedback, node, param, value):
    ref = refine(wf, INTENT, said(feedback), RESULTS)
    assert ref.changed and validate(ref.workflow)
    assert ref.workflow.node(node).params[param] == value
    lines = diff(wf, ref.workflow).summary()
    assert any(line.startswith(f"modified {node}:") and param in line for line in lines)
    assert feedback in ref.intent.notes


def test_an_order_or_a_left_out_period_adds_to_what_the_list_had(wf):
    first = refine(wf, INTENT, said("not from the 2000s"), RESULTS)
    second = refine(first.workflow, first.intent, said("not from 2021"), RESULTS)
    assert second.workflow.node("filter").params["exclude_years"] == [(2000, 2009), (2021, 2021)]
    assert second.intent.exclude_years == [(2000, 2009), (2021, 2021)] and second.reason == "leaving out 2021"
    ordered = refine(second.workflow, second.intent, said("sort by year"), RESULTS)
    assert ordered.intent.order == "newest" and ordered.intent.recency == "any"  # no preference for new work
    back = refine(ordered.workflow, ordered.intent, said("back to relevance"), RESULTS)
    assert back.workflow.node("top").params["order"] == "score" and back.reason == "best match first"


def test_more_like_adds_a_rerank_towards_the_liked_paper(wf):
    ref = refine(wf, INTENT, said("more like #3"), RESULTS)
    w = ref.workflow
    assert w.node("like").params["query"] == "acl:P2" and ref.intent.liked_ids == ["acl:P2"]
    rerank = w.node("more_like")
    assert rerank.op == "rerank"
    assert {(e.source, e.port) for e in w.inputs_of("more_like")} == {("score", "in"), ("liked", "anchor")}
    assert [e.source for e in w.inputs_of("top")] == ["more_like"]
    # a second like joins the same set instead of stacking reranks
    again = rate(w, ref.intent, "acl:P5", up=True)
    assert again.workflow.node("like_2").params["query"] == "acl:P5"
    assert {e.source for e in again.workflow.inputs_of("liked")} == {"like", "like_2"}
    assert sum(1 for n in again.workflow.nodes if n.op == "rerank") == 1


def test_thumbs_down_excludes(wf):
    ref = rate(wf, INTENT, "acl:P7", up=False)
    assert ref.workflow.node("filter").params["exclude_ids"] == ["acl:P7"] and ref.intent.disliked_ids == ["acl:P7"]


def test_soft_preferences_change_the_score(wf):
    ref = refine(wf, INTENT, said("recent work, mostly about paraphrase"), RESULTS)
    score = ref.workflow.node("score").params
    assert score["features"]["recency"] > 0 and "paraphrase" in score["text"] and score["features"]["lexical"] >= 1.0
    assert ref.intent.recency == "recent" and ref.intent.topic_terms == ["paraphrase"]


def test_missing_filter_is_inserted_before_scoring():
    wf = Workflow.model_validate(
        {
            "nodes": [
                {"id": "anchor", "op": "anchor", "params": {"query": "x"}},
                {"id": "sim", "op": "semantic_search", "params": {}},
                {"id": "top", "op": "top_k", "params": {"k": 10}},
            ],
            "edges": [
                {"source": "anchor", "target": "sim", "port": "anchor"},
                {"source": "sim", "target": "top", "port": "in"},
            ],
            "output": "top",
        }
    )
    ref = refine(wf, INTENT, said("only after 2008"), [])
    assert ref.workflow.node("filter").params["year_min"] == 2009
    assert [e.source for e in ref.workflow.inputs_of("top")] == ["filter"]


def test_unactionable_feedback_changes_nothing_and_says_what_works(wf):
    ref = refine(wf, INTENT, Feedback(text="hmm, interesting"), RESULTS)
    assert not ref.changed and ref.workflow == wf and "only after 2010" in ref.notes[0]
    # a result that is not on the list is asked about, not refined
    beyond = read("not #40", Context(phase="results", has_results=True, has_search=True, listed=len(RESULTS)))
    assert beyond.kind == "unclear" and "10" in beyond.hint


async def test_llm_refinement_valid_invalid_and_fallback(wf):
    good = json.dumps(
        {"edits": [{"action": "modify", "node_id": "filter", "params": {"year_min": 2012}}], "reason": "after 2011"}
    )
    bad = json.dumps({"edits": [{"action": "modify", "node_id": "nope", "params": {}}]})
    ref = await refine_llm(LLM("openai/x", mock_response=[bad, good]), wf, INTENT, said("only the newer ones"), RESULTS)
    assert ref.workflow.node("filter").params["year_min"] == 2012 and ref.reason == "after 2011"
    ref = await refine_llm(LLM("openai/x", mock_response=["garbage"] * 3), wf, INTENT, said("only after 2015"), RESULTS)
    assert ref.workflow.node("filter").params["year_min"] == 2016  # the rule-based edits
    assert "LLM refinement not usable" in ref.notes[-1]


def test_result_filters_are_one_edit_of_the_filter_step():
    wf = template("successor", "acl:P02-1040")
    ref = filter_results(wf, Intent(), ResultFilters(year_min=2005, venues=["EMNLP"], min_citations=3))
    assert len(ref.edits) == 1 and ref.reason == "filters: years from 2005; venues EMNLP; at least 3 citations"
    params = ref.workflow.node("filter").params
    assert params["year_min"] == 2005 and params["venues"] == ["EMNLP"] and params["min_citations"] == 3
    assert params["relative_to_anchor"] == "after"  # the search's own constraint stays
    assert current_filters(ref.workflow) == ResultFilters(year_min=2005, venues=["EMNLP"], min_citations=3)
    (change,) = diff(wf, ref.workflow).modified_nodes
    assert change.node_id == "filter" and {p.name for p in change.params} == {"year_min", "venues", "min_citations"}
    assert ref.intent.year_min == 2005 and ref.intent.venues == ["EMNLP"]
    # an empty control removes its constraint; the same filters again change nothing
    cleared = filter_results(ref.workflow, ref.intent, ResultFilters(venues=["EMNLP"]))
    assert "year_min" not in cleared.workflow.node("filter").params
    assert not filter_results(ref.workflow, ref.intent, current_filters(ref.workflow)).edits
    assert "empty" in filter_results(wf, Intent(), ResultFilters(year_min=2010, year_max=2001)).notes[0]
    # paper types go to the filter step's ``paper_types`` (the seam with the topic searches)
    typed = filter_results(wf, Intent(), ResultFilters(paper_types=["survey"]))
    assert typed.workflow.node("filter").params["paper_types"] == ["survey"]
    assert current_filters(typed.workflow).paper_types == ["survey"]


def test_a_venue_left_out_is_dropped_from_the_venues_kept_and_never_filtered_in(wf):
    ref = refine(wf, INTENT, said("only ACL and EMNLP"), RESULTS)
    ref = refine(ref.workflow, ref.intent, said("actually not EMNLP"), RESULTS)
    params = ref.workflow.node("filter").params
    assert params["venues"] == ["ACL"] and params["exclude_venues"] == ["EMNLP"]
    assert ref.intent.venues == ["ACL"] and ref.intent.exclude_venues == ["EMNLP"]
    assert not ref.intent.exclude_terms  # the venue's name is not a phrase to drop from texts


def test_constraints_said_in_the_chat_are_filters_too_and_are_described():
    wf = template("successor", "acl:P02-1040")
    said = ResultFilters(exclude_years=[(2000, 2009)], authors=["Nivre"], exclude_venues=["arXiv"])
    ref = filter_results(wf, Intent(), said)
    assert ref.workflow.node("filter").params["exclude_years"] == [[2000, 2009]]
    assert current_filters(ref.workflow) == said and current_filters(ref.workflow).said_in_chat() == said
    assert ref.reason == "filters: leaving out 2000–2009; only papers by Nivre; not from arXiv"
    assert ref.intent.exclude_years == [(2000, 2009)] and ref.intent.exclude_venues == ["arXiv"]
    cleared = filter_results(ref.workflow, ref.intent, ResultFilters())
    assert "exclude_years" not in cleared.workflow.node("filter").params and not cleared.intent.exclude_years


@pytest.mark.parametrize(
    "feedback, liked, dropped",
    [("more like #4 and #6, less like #2", ["acl:P3", "acl:P5"], ["acl:P1"]),
     ("#3 is great but drop #5", ["acl:P2"], ["acl:P4"])],
)  # fmt: skip
def test_a_mixed_message_likes_some_results_and_drops_others(wf, feedback, liked, dropped):
    # "more like #4 and #6, less like #2" once liked all three and halved the list
    ref = refine(wf, INTENT, said(feedback), RESULTS)
    assert ref.intent.liked_ids == liked and ref.intent.disliked_ids == dropped
    assert ref.workflow.node("filter").params["exclude_ids"] == dropped
    assert ref.workflow.node("top").params["k"] == wf.node("top").params["k"]  # the list is not shortened


def test_results_already_known_are_left_out(wf):
    ref = refine(wf, INTENT, said("I already know #1, #2 and #5"), RESULTS)
    assert ref.workflow.node("filter").params["exclude_ids"] == ["acl:P0", "acl:P1", "acl:P4"]


@pytest.mark.parametrize("text", ["all paper types again", "any kind of paper is fine", "drop the type filter"])
def test_all_kinds_of_paper_again_lifts_the_type_filter(text):
    wf = template("successor", "acl:P02-1040")
    only = refine(wf, Intent(), said("only surveys"), RESULTS)
    assert only.workflow.node("filter").params["paper_types"] == ["survey"]
    back = refine(only.workflow, only.intent, said(text), RESULTS)
    assert back.changed and back.workflow.node("filter").params["paper_types"] == [] and back.intent.paper_types == []
