"""Edits yield a new valid workflow or a clear error (never a half-applied change); diffs read like a changelog."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pilot.models import Intent
from tests.workflow_testops import edit_st, pipeline, wf
from workflows.diff import diff
from workflows.edit import apply_edit, apply_edits, parse_edit, parse_edits
from workflows.model import AddNode, Edge, ModifyNode, Node, RemoveNode, Rewire
from workflows.templates import template, topic_search
from workflows.validate import (
    BAD_EDIT,
    BAD_PARAMS,
    BAD_REFERENCE,
    DUPLICATE_NODE,
    EXTRA_INPUT,
    MISSING_INPUT,
    MISSING_NODE,
    NO_OUTPUT,
    TYPE_MISMATCH,
    UNKNOWN_OPERATOR,
    WorkflowError,
    check,
    errors,
)


def edges_of(w):
    return {(e.source, e.target, e.port) for e in w.edges}


# --- add ---------------------------------------------------------------------------------------


def test_add_after_inserts_between_node_and_its_consumers():
    w = pipeline()
    before = w.model_dump()
    new = apply_edit(w, AddNode(node=Node(id="f0", op="t_filter", params={"drop": ["c"]}), after="union"))
    assert ("union", "f0", "in") in edges_of(new) and ("f0", "filter", "in") in edges_of(new)
    assert ("union", "filter", "in") not in edges_of(new)
    assert new.output == "filter"
    assert w.model_dump() == before  # input never mutated


def test_add_after_the_output_node_moves_the_output():
    new = apply_edit(pipeline(), {"action": "add", "node": {"id": "top", "op": "t_filter"}, "after": "filter"})
    assert new.output == "top" and ("filter", "top", "in") in edges_of(new)


def test_add_after_a_node_of_the_wrong_type_says_which_types():
    w = wf([("k", "t_keywords", {}), ("s", "t_search", {})], [("k", "s")], "s")
    with pytest.raises(WorkflowError) as ei:
        apply_edit(w, AddNode(node=Node(id="f", op="t_filter"), after="k"))
    assert ei.value.kinds == {TYPE_MISMATCH}
    assert "produces keywords" in str(ei.value) and "in (papers)" in str(ei.value)


def test_add_with_explicit_inputs_and_a_taken_id():
    w = pipeline()
    new = apply_edits(
        w,
        [
            AddNode(node=Node(id="f2", op="t_filter"), inputs=[Edge(source="src2", target="f2")]),
            Rewire(add=[Edge(source="f2", target="union")]),
        ],
    )
    assert ("src2", "f2", "in") in edges_of(new) and ("f2", "union", "in") in edges_of(new)
    with pytest.raises(WorkflowError) as ei:
        apply_edit(w, AddNode(node=Node(id="src1", op="t_source")))
    assert ei.value.kinds == {DUPLICATE_NODE}


def test_add_unwired_node_is_refused_with_the_missing_input_named():
    with pytest.raises(WorkflowError) as ei:
        apply_edit(pipeline(), AddNode(node=Node(id="lonely", op="t_filter")))
    assert ei.value.kinds == {MISSING_INPUT} and "'lonely'" in str(ei.value)


# --- modify ------------------------------------------------------------------------------------


def test_modify_merges_params_and_revalidates():
    w = pipeline()
    new = apply_edit(w, ModifyNode(node_id="filter", params={"drop": ["a"]}))
    assert new.node("filter").params == {"k": 5, "drop": ["a"]}
    assert w.node("filter").params == {"k": 5}
    with pytest.raises(WorkflowError) as ei:
        apply_edit(w, ModifyNode(node_id="filter", params={"k": -1}))
    assert ei.value.kinds == {BAD_PARAMS} and "would leave the workflow invalid" in str(ei.value)


def test_modify_replace_and_change_operator_keeps_shared_params():
    w = pipeline()
    assert apply_edit(w, ModifyNode(node_id="filter", params={}, replace=True)).node("filter").params == {}
    new = apply_edit(w, ModifyNode(node_id="src2", op="t_slow", params={"tag": "x"}))
    assert new.node("src2").op == "t_slow" and new.node("src2").params == {"tag": "x"}  # 'ids' dropped
    with pytest.raises(WorkflowError) as ei:
        apply_edit(w, ModifyNode(node_id="filter", op="nope"))
    assert UNKNOWN_OPERATOR in ei.value.kinds


def test_swapping_the_operator_moves_edges_to_fitting_ports():
    w = pipeline()
    new = apply_edit(w, ModifyNode(node_id="filter", op="t_collect"))
    assert ("union", "filter", "papers") in edges_of(new) and new.node("filter").params == {}
    assert ("union", "filter", "in") in edges_of(w)  # the original keeps its wiring


def test_modify_missing_node_lists_existing_ones():
    with pytest.raises(WorkflowError) as ei:
        apply_edit(pipeline(), ModifyNode(node_id="filtre", params={"k": 1}))
    assert ei.value.kinds == {MISSING_NODE} and "src1, src2, union, filter" in str(ei.value)


# --- remove ------------------------------------------------------------------------------------


def test_remove_with_bridge_reconnects_inputs_to_consumers():
    new = apply_edit(pipeline(), RemoveNode(node_id="union"))
    # filter takes one input: only the first fitting producer is bridged; src2 is left dangling (a warning)
    assert ("src1", "filter", "in") in edges_of(new) and not any(e.source == "src2" for e in new.edges)
    assert errors(new) == [] and [p.node_id for p in check(new)] == ["src2"]


def test_remove_bridge_fills_many_port_with_all_inputs():
    w = wf(
        [("s1", "t_source", {}), ("s2", "t_source", {}), ("u1", "t_union", {}), ("u2", "t_union", {})],
        [("s1", "u1"), ("s2", "u1"), ("u1", "u2")],
        "u2",
    )
    new = apply_edit(w, RemoveNode(node_id="u1"))
    assert edges_of(new) == {("s1", "u2", "in"), ("s2", "u2", "in")}


def test_remove_bridges_what_flows_through_not_a_side_input():
    # the predecessor's neighbourhood step takes the anchor's neighbours as seeds and the candidates on "in":
    # removing it hands the candidates on to the score, not the seeds (whatever order the edges were added in)
    for w in (template("predecessor", "acl:N03-1033"), topic_search(Intent(topic="parsing"))):
        features = {f: v for f, v in w.node("score").params["features"].items() if not f.startswith("ev:graph.")}
        new = apply_edits(w, [ModifyNode(node_id="score", params={"features": features}), RemoveNode(node_id="graph")])
        assert ("filter", "score", "in") in edges_of(new), w.name
        assert errors(new) == []


def test_remove_without_bridge_leaves_consumer_unfed():
    with pytest.raises(WorkflowError) as ei:
        apply_edit(pipeline(), RemoveNode(node_id="union", bridge=False))
    assert ei.value.kinds == {MISSING_INPUT}


def test_remove_output_moves_output_to_producer_or_refuses():
    new = apply_edit(pipeline(), RemoveNode(node_id="filter"))
    assert new.output == "union" and not new.has_node("filter")
    lone = wf([("s", "t_source", {})], [], "s")
    with pytest.raises(WorkflowError) as ei:
        apply_edit(lone, RemoveNode(node_id="s"))
    assert ei.value.kinds == {NO_OUTPUT} and "set another node as the output" in str(ei.value)


def test_remove_output_whose_producer_has_another_type_is_refused():
    w = wf([("k", "t_keywords", {}), ("s", "t_search", {})], [("k", "s")], "s")
    with pytest.raises(WorkflowError) as ei:
        apply_edit(w, RemoveNode(node_id="s"))
    assert ei.value.kinds == {NO_OUTPUT} and "papers" in str(ei.value)


# --- rewire ------------------------------------------------------------------------------------


def test_rewire_edges_and_output():
    w = pipeline()
    new = apply_edit(w, Rewire(remove=[Edge(source="src2", target="union")], add=[], output="union"))
    assert ("src2", "union", "in") not in edges_of(new) and new.output == "union"
    with pytest.raises(WorkflowError) as ei:
        apply_edit(w, Rewire(add=[Edge(source="src2", target="filter")]))
    assert ei.value.kinds == {EXTRA_INPUT}
    with pytest.raises(WorkflowError) as ei:
        apply_edit(w, Rewire(remove=[Edge(source="src1", target="filter")]))
    assert "no such edge" in str(ei.value)


def test_apply_edits_is_all_or_nothing_and_names_the_failing_edit():
    w = pipeline()
    before = w.model_dump()
    with pytest.raises(WorkflowError) as ei:
        apply_edits(w, [ModifyNode(node_id="filter", params={"k": 2}), RemoveNode(node_id="ghost")])
    assert "edit 2 of 2 'remove 'ghost''" in str(ei.value)
    assert w.model_dump() == before


# --- parsing -----------------------------------------------------------------------------------


def test_parse_edit_from_json_and_clear_errors():
    e = parse_edit('{"action": "modify", "node_id": "filter", "params": {"k": 3}}')
    assert isinstance(e, ModifyNode) and e.params == {"k": 3}
    cases = {
        "{not json": "not valid JSON",
        "[1, 2]": "must be a JSON object",
        '{"node_id": "x"}': 'needs "action"',
        '{"action": "explode"}': "'explode'",
        '{"action": "remove"}': "'node_id'",
        '{"action": "modify", "node_id": "x", "params": {}, "colour": 1}': "'colour'",
    }
    for text, needle in cases.items():
        with pytest.raises(WorkflowError) as ei:
            parse_edit(text)
        assert ei.value.kinds == {BAD_EDIT} and needle in str(ei.value), text
    assert len(parse_edits('[{"action": "remove", "node_id": "a"}, {"action": "rewire"}]')) == 2


# --- diff --------------------------------------------------------------------------------------


def test_diff_summary_reads_like_a_changelog():
    a = pipeline()
    b = apply_edits(
        a,
        [
            ModifyNode(node_id="filter", params={"k": 8}),
            AddNode(node=Node(id="f0", op="t_filter", params={"drop": ["x"]}), after="union"),
            RemoveNode(node_id="src2"),
        ],
    )
    d = diff(a, b)
    lines = d.summary()
    assert "modified filter: k 5 → 8" in lines
    assert "added f0 (t_filter: drop=[x])" in lines
    assert "removed src2 (t_source)" in lines
    assert "connected union → f0" in lines and "disconnected union → filter" in lines
    assert d.counts() == {
        "nodes_added": 1,
        "nodes_removed": 1,
        "nodes_modified": 1,
        "params_changed": 1,
        "edges_added": 2,
        "edges_removed": 2,
        "output_changed": 0,
    }


def test_diff_ignores_spelled_out_defaults_and_reports_output_and_operator():
    a = pipeline()
    b = apply_edit(a, ModifyNode(node_id="filter", params={"drop": []}))
    assert diff(a, b).empty and diff(a, b).summary() == []
    c = apply_edits(a, [ModifyNode(node_id="src2", op="t_slow"), Rewire(output="union")])
    lines = diff(a, c).summary()
    assert "output filter → union" in lines
    assert any(line.startswith("modified src2: operator t_source → t_slow") for line in lines)


# --- property: random edit sequences never crash ------------------------------------------------


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(edit_st, max_size=6))
def test_random_edit_sequences_yield_valid_workflows_or_workflow_errors(edits):
    w = pipeline()
    snapshot = w.model_dump()
    for edit in edits:
        try:
            new = apply_edit(w, edit)
        except WorkflowError as exc:
            assert exc.problems and all(p.message for p in exc.problems)
            continue
        assert errors(new) == []
        assert new.output is not None and new.has_node(new.output)
        # round-trips through JSON as the UI and the run log store it
        assert type(new).from_json(new.to_json()) == new
        w = new
    assert pipeline().model_dump() == snapshot
    # the whole sequence at once either works or fails cleanly as well
    with contextlib.suppress(WorkflowError):
        apply_edits(pipeline(), [json.loads(e.model_dump_json()) for e in edits])


def test_diff_of_a_dict_param_names_only_the_keys_that_changed():
    """A refinement that re-weighs the score node reads "features.dense 1.0 → 1.5", not two cut-off dicts."""
    from workflows.templates import template

    a = template("successor", "acl:P02-1040")
    b = a.model_copy(deep=True)
    features = b.node("score").params["features"]
    features.update(dense=1.5, recency=0.5)
    del features["citations"]
    b.node("score").params["text"] = "neural networks"
    assert diff(a, b).summary() == [
        "modified score: features.dense 1.0 → 1.5, features.citations removed, features.recency +0.5; "
        "text none → neural networks"
    ]


def test_removing_a_node_with_a_self_loop_mid_sequence_is_an_edit_not_a_crash():
    """Found by the random-edit property test: a self-loop added mid-sequence, then the node removed."""
    edits = [Rewire(add=[Edge(source="src1", target="src1", port="in")]), RemoveNode(node_id="src1", bridge=True)]
    try:
        out = apply_edits(pipeline(), edits)
    except WorkflowError:
        return
    assert not out.has_node("src1")


def test_removing_a_node_a_score_feature_reads_is_refused_with_a_message():
    from workflows.templates import predecessor

    w = predecessor("some anchor")
    with pytest.raises(WorkflowError) as err:
        apply_edit(w, RemoveNode(node_id="cocited"))
    assert err.value.kinds == {BAD_REFERENCE}
    assert "'ev:cocited.support'" in str(err.value) and "remove the feature from 'score'" in str(err.value)
    # dropping the feature and the node together is fine
    features = {k: v for k, v in w.node("score").params["features"].items() if k != "ev:cocited.support"}
    new = apply_edits(w, [RemoveNode(node_id="cocited"), ModifyNode(node_id="score", params={"features": features})])
    assert not new.has_node("cocited")
