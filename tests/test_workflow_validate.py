"""Validation reports every problem of a workflow with the node it concerns and what to do about it."""

from __future__ import annotations

import pytest

from tests.workflow_testops import pipeline, wf
from workflows.model import SCHEMA_VERSION, Node, Workflow
from workflows.validate import (
    BAD_ID,
    BAD_PARAMS,
    BAD_REFERENCE,
    CYCLE,
    DUPLICATE_EDGE,
    DUPLICATE_NODE,
    EMPTY,
    EXTRA_INPUT,
    MISSING_INPUT,
    MISSING_NODE,
    NO_OUTPUT,
    SCHEMA,
    TYPE_MISMATCH,
    UNKNOWN_OPERATOR,
    UNKNOWN_PORT,
    UNREACHABLE,
    WorkflowError,
    check,
    normalize,
    validate,
)


def only(problems, kind):
    found = [p for p in problems if p.kind == kind]
    assert found, f"no {kind} problem in {[p.message for p in problems]}"
    return found


def test_valid_pipeline_has_no_problems():
    w = pipeline()
    assert check(w) == []
    assert validate(w) is w


def test_empty_workflow():
    p = only(check(Workflow()), EMPTY)[0]
    assert "add a sourcing node" in p.message


def test_newer_schema_version_is_refused():
    w = pipeline().model_copy(update={"schema_version": SCHEMA_VERSION + 1})
    assert "upgrade pilot" in only(check(w), SCHEMA)[0].message


def test_unknown_operator_names_node_and_lists_known_ones():
    w = pipeline()
    w.nodes[3] = Node(id="filter", op="filtr")
    p = only(check(w), UNKNOWN_OPERATOR)[0]
    assert p.node_id == "filter"
    assert "'filtr'" in p.message and "t_filter" in p.message


def test_bad_param_type_names_the_field_and_the_allowed_params():
    w = pipeline()
    w.nodes[3].params = {"k": "many"}
    p = only(check(w), BAD_PARAMS)[0]
    assert p.node_id == "filter"
    assert "'k'" in p.message and "'many'" in p.message and "takes: k, drop" in p.message


def test_unknown_param_and_out_of_range_param_are_both_reported():
    w = pipeline()
    w.nodes[3].params = {"k": 0, "yaer_min": 2005}
    msgs = [p.message for p in only(check(w), BAD_PARAMS)]
    assert len(msgs) == 2
    assert any("'k'" in m and "greater than or equal to 1" in m for m in msgs)
    assert any("'yaer_min'" in m for m in msgs)


def test_duplicate_node_id():
    w = pipeline()
    w.nodes.append(Node(id="src1", op="t_source"))
    p = only(check(w), DUPLICATE_NODE)[0]
    assert p.node_id == "src1" and "unique id" in p.message


def test_blank_or_padded_node_id():
    w = pipeline()
    w.nodes.append(Node(id=" ", op="t_source"))
    w.nodes.append(Node(id="x ", op="t_source"))
    probs = only(check(w), BAD_ID)
    assert len(probs) == 2 and "the t_source node has the id ' '" in probs[0].message


def test_edge_to_and_from_missing_nodes():
    w = pipeline()
    w.edges += wf([], [("ghost", "union"), ("filter", "nowhere")], None).edges
    probs = only(check(w), MISSING_NODE)
    assert {p.node_id for p in probs} == {"union", "filter"}  # attached to the endpoint that exists
    assert any("'ghost'" in p.message for p in probs) and any("'nowhere'" in p.message for p in probs)


def test_duplicate_edge():
    w = pipeline()
    w.edges.append(w.edges[0].model_copy())
    assert "appears twice" in only(check(w), DUPLICATE_EDGE)[0].message


def test_unknown_input_port_lists_real_ports():
    w = pipeline()
    w.edges[2].port = "papers"
    probs = check(w)
    p = only(probs, UNKNOWN_PORT)[0]
    assert p.node_id == "filter" and "'papers'" in p.message and "ports are: in" in p.message
    # the mis-named edge also leaves the real port unfed
    assert only(probs, MISSING_INPUT)[0].node_id == "filter"


def test_edge_into_a_sourcing_node_is_an_unknown_port():
    w = pipeline()
    w.edges.append(wf([], [("src2", "src1")], None).edges[0])
    assert "takes no inputs" in only(check(w), UNKNOWN_PORT)[0].message


def test_cycle_names_every_node_on_it():
    w = wf(
        [("s", "t_source", {}), ("u", "t_union", {}), ("f", "t_filter", {}), ("g", "t_filter", {})],
        [("s", "u"), ("u", "f"), ("f", "g"), ("g", "u")],
        "g",
    )
    p = only(check(w), CYCLE)[0]
    assert all(f"{n}" in p.message for n in ("u", "f", "g")) and "cycle" in p.message
    assert "'s'" not in p.message and "s →" not in p.message


def test_self_loop_is_a_cycle():
    w = wf([("u", "t_union", {})], [("u", "u")], "u")
    assert "u → u" in only(check(w), CYCLE)[0].message


def test_missing_required_input_but_not_optional_one():
    w = wf([("k", "t_keywords", {}), ("s", "t_search", {})], [("k", "s")], "s")
    assert check(w) == []  # 'seeds' is optional
    w.edges.clear()
    p = only(check(w), MISSING_INPUT)[0]
    assert p.node_id == "s" and "'in'" in p.message and "keywords" in p.message


def test_many_port_with_no_edges_is_missing():
    w = wf([("u", "t_union", {})], [], "u")
    assert only(check(w), MISSING_INPUT)[0].node_id == "u"


def test_extra_input_into_single_port_suggests_union():
    w = pipeline()
    w.edges.append(wf([], [("src1", "filter")], None).edges[0])
    p = only(check(w), EXTRA_INPUT)[0]
    assert p.node_id == "filter" and "union" in p.message and "src1" in p.message


def test_type_mismatch_names_both_types():
    # t_answer wants a ranked list; an unranked paper set does not fit
    w = wf([("s", "t_source", {}), ("a", "t_answer", {})], [("s", "a")], "a")
    p = only(check(w), TYPE_MISMATCH)[0]
    assert p.node_id == "a" and "expects ranked" in p.message and "produces papers" in p.message


def test_ranked_fits_a_paper_port():
    w = wf([("s", "t_source", {}), ("f", "t_filter", {}), ("g", "t_filter", {})], [("s", "f"), ("f", "g")], "g")
    assert check(w) == []


def test_output_unset_or_missing():
    w = pipeline().model_copy(update={"output": None})
    assert "set `output`" in only(check(w), NO_OUTPUT)[0].message
    w = pipeline().model_copy(update={"output": "nope"})
    assert only(check(w), NO_OUTPUT)[0].node_id == "nope"


def test_unreachable_node_is_a_warning_that_does_not_block():
    w = pipeline()
    w.nodes.append(Node(id="stray", op="t_source"))
    p = only(check(w), UNREACHABLE)[0]
    assert p.node_id == "stray" and p.severity == "warning" and "does not feed the output" in p.message
    assert validate(w) is w


def test_validate_raises_with_every_error_listed():
    w = pipeline()
    w.nodes[0].params = {"ids": "not-a-list"}
    w.nodes[3] = Node(id="filter", op="nope")
    with pytest.raises(WorkflowError) as ei:
        validate(w)
    assert ei.value.kinds == {BAD_PARAMS, UNKNOWN_OPERATOR}
    assert "2 problems" in str(ei.value) and "src1" in str(ei.value) and "filter" in str(ei.value)


def test_normalize_fills_defaults_and_keeps_invalid_nodes():
    w = pipeline()
    w.nodes.append(Node(id="x", op="nope", params={"a": 1}))
    n = normalize(w)
    assert n.node("filter").params == {"k": 5, "drop": []}
    assert n.node("x").params == {"a": 1}
    assert w.node("filter").params == {"k": 5}  # input untouched


def test_parse_workflow_round_trip_and_clear_errors():
    from workflows.validate import BAD_WORKFLOW, parse_workflow

    w = pipeline()
    assert parse_workflow(w.to_json()) == w
    cases = {
        "{oops": "not valid JSON",
        "[]": "must be a JSON object",
        '{"nodes": [{"id": "a"}]}': "'nodes.0.op'",
        '{"nodes": [], "colour": "red"}': "'colour'",
    }
    for text, needle in cases.items():
        with pytest.raises(WorkflowError) as ei:
            parse_workflow(text)
        assert ei.value.kinds == {BAD_WORKFLOW} and needle in str(ei.value), text
    with pytest.raises(WorkflowError) as ei:
        parse_workflow({"nodes": [{"id": "flt", "op": "t_filter", "params": 3}]})
    assert ei.value.problems[0].node_id == "flt"


# --- references inside params: a score feature names a node ----------------------------------------


def test_a_feature_naming_a_missing_node_is_an_error_that_names_it():
    from workflows.templates import predecessor

    w = predecessor("some anchor")
    w.node("score").params["features"]["ev:cocitd.support"] = 1.0  # a typo of "cocited"
    problems = [p for p in check(w) if p.kind == BAD_REFERENCE]
    assert [p.node_id for p in problems] == ["score"]
    assert "'ev:cocitd.support'" in problems[0].message and "'cocitd', which does not exist" in problems[0].message
    with pytest.raises(WorkflowError, match="cocitd"):
        validate(w)


def test_a_feature_reading_a_node_that_does_not_feed_it_is_an_error():
    from workflows.templates import predecessor

    w = predecessor("some anchor")
    w.edges = [e for e in w.edges if not (e.source == "cocited" and e.target == "merge")]
    problems = [p for p in check(w) if p.kind == BAD_REFERENCE]
    assert len(problems) == 1 and "does not feed 'score'" in problems[0].message
