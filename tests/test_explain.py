"""Why a paper is in the results, in words built from the workflow that found it."""

from __future__ import annotations

import pytest

from pilot.models import Evidence, Paper, RankedPaper
from workflows.explain import describe_set, why
from workflows.model import Edge, Node, Workflow
from workflows.templates import template


def _item(nodes: list[str], **scores: float) -> RankedPaper:
    return RankedPaper(paper=Paper(id="p", title="t"), evidence=Evidence(nodes=nodes, scores=scores))


@pytest.mark.parametrize(
    "direction, node, support, says",
    [
        ("successor", "citers", 1, "cites the anchor"),
        ("predecessor", "refs", 1, "cited by the anchor"),
        ("predecessor", "cocited", 4, "cited by 4 papers citing the anchor"),
        ("predecessor", "cocited", 1, "cited by a paper citing the anchor"),
        ("predecessor", "similar_refs", 2, "cited by 2 papers similar to the anchor"),
        ("sibling", "coupled", 3, "cites 3 of the anchor's references"),
        ("sibling", "coupled", 1, "cites one of the anchor's references"),
        ("survey", "search_kw", 0, "matches the search keywords"),
    ],
)
def test_each_template_node_reads_as_a_relation_to_the_anchor(direction, node, support, says):
    wf = template(direction, "acl:P02-1040")
    assert why(wf, _item([node], **{f"{node}.support": support})) == [says]


def test_graph_relations_come_first_then_text_then_terms():
    wf = template("predecessor", "acl:P02-1040")
    item = _item(["search_dense", "refs"], dense=0.6)
    item.evidence.matched_terms = ["bleu", "n-gram"]
    assert why(wf, item) == ["cited by the anchor", "close in meaning to the anchor (0.60)", "mentions bleu, n-gram"]


def test_an_edited_workflow_is_described_as_it_now_is():
    wf = template("successor", "acl:P02-1040")
    # the user turns "citers" into a references step: the same node id now means the opposite
    wf.node("citers").params["direction"] = "references"
    assert why(wf, _item(["citers"])) == ["cited by the anchor"]


def test_user_nodes_unknown_nodes_and_no_workflow():
    wf = Workflow(
        nodes=[Node(id="a", op="anchor", params={"query": "x"}), Node(id="mine", op="rerank", label="my reranker"),
               Node(id="liked", op="fetch", params={"ids": ["p"]}, label="papers you liked"),
               Node(id="more", op="recommend")],
        edges=[Edge(source="a", target="mine"), Edge(source="liked", target="more")],
        output="mine",
    )  # fmt: skip
    assert why(wf, _item(["mine", "gone", "liked", "more"])) == [
        "found by my reranker",
        "in papers you liked",
        "recommended from papers you liked",
    ]
    assert describe_set(wf, "a") == "the anchor"
    assert why(None, _item(["mine"])) == []


def test_a_benchmark_result_says_which_resource_words_its_title_names():
    wf = template("benchmark", "acl:P03-1054")
    item = RankedPaper(
        paper=Paper(id="p", title="Building A Large Annotated Corpus Of English: The Penn Treebank"),
        evidence=Evidence(nodes=["cocited"], scores={"cocited.support": 28.0}),
    )
    assert why(wf, item) == ["cited by 28 papers citing the anchor", "title names corpus, treebank, annotated"]
