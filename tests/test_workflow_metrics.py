"""Workflow-level similarity on hand-made workflows."""

from __future__ import annotations

import pytest

from pilot.eval.workflow_metrics import edit_counts, jaccard, tfidf_cosine, workflow_similarity, workflow_views
from workflows.model import Edge, Node, Workflow


def _wf(*nodes: Node, edges: tuple[Edge, ...] = (), output: str | None = None) -> Workflow:
    return Workflow(nodes=list(nodes), edges=list(edges), output=output)


REF = _wf(
    Node(id="seed", op="resolve_paper", params={"query": "BLEU machine translation"}),
    Node(id="refs", op="references", params={}),
    Node(id="years", op="filter_papers", params={"year_min": 1995, "year_max": 2002}),
    Node(id="rank", op="rerank_embedding", params={"query": "BLEU machine translation", "k": 50}),
    edges=(
        Edge(source="seed", target="refs"),
        Edge(source="refs", target="years"),
        Edge(source="years", target="rank"),
    ),
    output="rank",
)


def test_identical_workflows_score_one_and_need_no_edits():
    m = workflow_similarity(REF, REF.model_copy(deep=True))
    for view in ("whole", "query", "filters", "signatures"):
        assert m[f"tfidf_{view}"] == pytest.approx(1.0)
    assert m["node_jaccard"] == 1.0 and m["op_jaccard"] == 1.0
    assert (m["edits_add"], m["edits_remove"], m["edits_modify"]) == (0.0, 0.0, 0.0)


def test_changed_filter_moves_the_filter_view_but_not_the_signatures():
    cand = REF.model_copy(deep=True)
    cand.nodes[2] = Node(id="years", op="filter_papers", params={"year_min": 2005, "year_max": 2010})
    m = workflow_similarity(REF, cand)
    assert m["tfidf_signatures"] == pytest.approx(1.0)
    assert m["tfidf_query"] == pytest.approx(1.0)
    assert m["tfidf_filters"] < 1.0
    assert m["edits_modify"] == 1.0 and m["edits_add"] == 0.0 and m["edits_edges_add"] == 0.0


def test_views_pick_params_by_key():
    views = workflow_views(REF)
    assert "BLEU" in views["query"] and "1995" not in views["query"]
    assert "1995" in views["filters"] and "BLEU" not in views["filters"]
    assert "filter_papers(year_max,year_min)" in views["signatures"].split()


def test_added_removed_and_rewired_nodes():
    cand = _wf(
        Node(id="seed", op="resolve_paper", params={"query": "BLEU machine translation"}),
        Node(id="cites", op="citations", params={}),
        Node(id="rank", op="rerank_embedding", params={"query": "BLEU machine translation", "k": 50}),
        edges=(Edge(source="seed", target="cites"), Edge(source="cites", target="rank")),
    )
    counts = edit_counts(REF, cand)
    # cites added; refs and years removed; rank keeps its params but is now fed by cites
    assert counts == {"add": 1, "remove": 2, "modify": 0, "edges_add": 2, "edges_remove": 3}
    m = workflow_similarity(REF, cand)
    assert m["node_jaccard"] == pytest.approx(2 / 5)  # {seed, rank} of {seed, refs, years, rank, cites}
    assert m["op_jaccard"] == pytest.approx(2 / 5)


def test_tfidf_edge_cases():
    assert tfidf_cosine("", "") == 1.0
    assert tfidf_cosine("a b", "") == 0.0
    assert tfidf_cosine("alpha beta", "gamma delta") == 0.0
    assert jaccard(set(), set()) == 1.0


def test_empty_candidate_against_reference():
    m = workflow_similarity(REF, Workflow())
    assert m["node_jaccard"] == 0.0 and m["edits_remove"] == 4.0 and m["tfidf_signatures"] == 0.0


def test_spelling_out_a_default_is_not_an_edit():
    bare = _wf(Node(id="f", op="filter", params={"year_min": 2000}))
    explicit = _wf(Node(id="f", op="filter", params={"year_min": 2000, "year_max": None}))
    assert edit_counts(bare, explicit)["modify"] == 0
    assert edit_counts(bare, _wf(Node(id="f", op="filter", params={"year_min": 2001})))["modify"] == 1
