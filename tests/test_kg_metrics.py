"""KG metrics on hand-made plans and answers with known scores, and the LLM judge's validation."""

from __future__ import annotations

import json

import pytest

from pilot.eval.judge import JudgeScores, build_messages, judge_answer, judge_metrics
from pilot.eval.kg_metrics import (
    api_sequence_distance,
    check_answer_format,
    execution_success,
    fuzzy_parameter_f1,
    kg_case_metrics,
    parameter_accuracy,
    partial_completion,
    url_precision_recall,
)
from pilot.llm import LLM, LLMError
from pilot.models import Answer
from workflows.model import Edge, Node, NodeTrace, RunTrace, Workflow

GOLD = [
    {"op": "search_author", "params": {"name": "Jian Pei"}},
    {"op": "author_papers", "params": {"venues": ["KDD"], "year_min": 2010, "year_max": 2020}},
]


def _plan(*steps: tuple[str, dict]) -> Workflow:
    nodes = [Node(id=f"n{i}", op=op, params=p) for i, (op, p) in enumerate(steps)]
    edges = [Edge(source=f"n{i}", target=f"n{i + 1}") for i in range(len(nodes) - 1)]
    return Workflow(nodes=nodes, edges=edges, output=nodes[-1].id if nodes else None)


# --- URLs and format ---


def test_url_precision_recall():
    m = url_precision_recall(["https://a/1", "https://a/2/", "https://x"], ["https://a/1", "https://a/2", "https://b"])
    assert m["precision"] == pytest.approx(2 / 3) and m["recall"] == pytest.approx(2 / 3)
    assert url_precision_recall([], ["u"]) == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    assert url_precision_recall([], [])["f1"] == 1.0


def test_well_formed_answer_passes():
    ans = Answer(answer="Jian Pei [1] published X [2] and Y [2].", reference={"[1]": "u1", "[2]": "u2"})
    assert check_answer_format(ans).ok
    assert check_answer_format(json.dumps(ans.model_dump())).ok


@pytest.mark.parametrize(
    "data, problem",
    [
        ({"answer": "a [1] b [3]", "reference": {"[1]": "u", "[3]": "v"}}, "without gaps"),
        ({"answer": "a [1] b [2]", "reference": {"[1]": "u"}}, "cited but not in reference: [2]"),
        ({"answer": "a [1]", "reference": {"[1]": "u", "[2]": "v"}}, "never cited: [2]"),
        ({"answer": "a [1]", "reference": {"[1]": " "}}, "empty URL"),
        ({"answer": "a [1]", "reference": {"1": "u"}}, "not of the form [n]"),
        ({"answer": "a"}, "missing key"),
        ({"answer": 3, "reference": {}}, "not a string"),
        ("{not json", "not JSON"),
        ([1, 2], "not a JSON object"),
    ],
)
def test_format_violations_are_named(data, problem):
    report = check_answer_format(data)
    assert not report.ok
    assert any(problem in p for p in report.problems), report.problems


def test_answer_without_citations_and_without_references_is_well_formed():
    assert check_answer_format({"answer": "No such author in the sources.", "reference": {}}).ok


# --- plans ---


def test_api_sequence_distance():
    assert api_sequence_distance(GOLD, GOLD) == 0.0
    # one substituted step of two
    assert api_sequence_distance([{"op": "search_author"}, {"op": "author_detail"}], GOLD) == pytest.approx(0.5)
    # one extra step: distance 1 over length 3
    pred = _plan(("search_author", {}), ("author_detail", {}), ("author_papers", {}))
    assert api_sequence_distance(pred, GOLD) == pytest.approx(1 / 3)
    assert api_sequence_distance([], GOLD) == 1.0
    assert api_sequence_distance([], []) == 0.0


def test_parameter_accuracy_scalar_list_and_missing_steps():
    assert parameter_accuracy(GOLD, GOLD) == 1.0
    pred = [
        {"op": "search_author", "params": {"name": "jian  PEI"}},  # case/space-insensitive exact
        {"op": "author_papers", "params": {"venues": ["KDD", "ICDM"], "year_min": 2010, "year_max": 2019}},
    ]
    # step 1: 1.0; step 2: venues 1/2, year_min 1, year_max 0 -> 0.5; mean over 2 steps
    assert parameter_accuracy(pred, GOLD) == pytest.approx((1.0 + 0.5) / 2)
    # the second step is missing: it scores 0 and counts
    assert parameter_accuracy(pred[:1], GOLD) == pytest.approx(1.0 / 2)
    # an extra step scores 0 and counts too
    extra = GOLD + [{"op": "paper_detail", "params": {"id": "p"}}]
    assert parameter_accuracy(extra, GOLD) == pytest.approx(2 / 3)
    # params the gold does not mention (planner defaults) are not judged
    with_default = [{"op": "search_author", "params": {"name": "Jian Pei", "limit": 5}}, GOLD[1]]
    assert parameter_accuracy(with_default, GOLD) == 1.0


def test_fuzzy_parameter_f1():
    assert fuzzy_parameter_f1(GOLD, GOLD)["f1"] == pytest.approx(1.0)
    pred = [
        {"op": "search_author", "params": {"name": "Jian Pe", "limit": 5}},  # near-miss name, extra param
        {"op": "author_papers", "params": {"venues": ["KDD"], "year_min": 2010, "year_max": 2020}},
    ]
    m = fuzzy_parameter_f1(pred, GOLD)
    # matched mass 4 (the name passes the 0.8 similarity bar); 5 predicted params, 4 gold params
    assert m["precision"] == pytest.approx(4 / 5) and m["recall"] == pytest.approx(1.0)
    far = [{"op": "search_author", "params": {"name": "Zhang"}}]
    m = fuzzy_parameter_f1(far, GOLD)
    assert 0 <= m["recall"] < 0.25 and m["precision"] < 0.5


def test_execution_success_and_partial_completion():
    plan = _plan(("search_author", {}), ("author_papers", {}), ("paper_detail", {}))
    trace = RunTrace(
        nodes=[
            NodeTrace(node_id="n0", op="search_author"),
            NodeTrace(node_id="n1", op="author_papers", status="cached"),
            NodeTrace(node_id="n2", op="paper_detail", status="failed", error="404"),
        ]
    )
    assert execution_success(trace) == 0.0
    assert partial_completion(trace, plan) == pytest.approx(2 / 3)
    ok = RunTrace(nodes=trace.nodes[:2])
    assert execution_success(ok) == 1.0
    assert partial_completion(ok, plan) == pytest.approx(2 / 3)  # n2 never ran
    assert execution_success(RunTrace()) == 0.0 and partial_completion(None) == 0.0


def test_kg_case_metrics_bundle():
    plan = _plan(
        ("search_author", {"name": "Jian Pei"}),
        ("author_papers", {"venues": ["KDD"], "year_min": 2010, "year_max": 2020}),
    )
    trace = RunTrace(nodes=[NodeTrace(node_id="n0", op="search_author"), NodeTrace(node_id="n1", op="author_papers")])
    ans = {"answer": "Papers: A [1], B [2].", "reference": {"[1]": "corpus://paper/a", "[2]": "corpus://paper/b"}}
    m = kg_case_metrics(plan=plan, gold_plan=GOLD, answer=ans, gold_urls=["corpus://paper/a"], trace=trace)
    assert m["format_ok"] == 1.0 and m["execution_success"] == 1.0 and m["partial_completion"] == 1.0
    assert m["url_precision"] == 0.5 and m["url_recall"] == 1.0
    assert m["api_sequence_distance"] == 0.0 and m["parameter_accuracy"] == 1.0 and m["param_f1"] == pytest.approx(1.0)
    failed = kg_case_metrics(plan=None, gold_plan=GOLD, answer=None, gold_urls=["u"], trace=None)
    assert failed["format_ok"] == 0.0 and failed["api_sequence_distance"] == 1.0 and failed["parameter_accuracy"] == 0.0


# --- the judge ---


def test_judge_scores_and_f1_lm():
    s = JudgeScores(correctness=0.8, completeness=0.4, faithfulness=1.0)
    assert s.f1_lm == pytest.approx(2 * 0.8 * 0.4 / 1.2)
    assert JudgeScores(correctness=0, completeness=0, faithfulness=0).f1_lm == 0.0
    for bad in (1.5, -0.1, float("nan"), True):
        with pytest.raises(ValueError):
            JudgeScores(correctness=bad, completeness=0.5, faithfulness=0.5)


def test_judge_prompt_carries_question_gold_evidence_and_answer():
    system, user = build_messages("Who is X?", "X is Y [1].", "X is Y.", {"results": ["a" * 10000]})
    assert "faithfulness" in system
    assert "Who is X?" in user and "X is Y [1]." in user and user.count("a") < 7000  # evidence truncated


async def test_judge_through_litellm_mock():
    reply = json.dumps({"correctness": 1, "completeness": 0.5, "faithfulness": 0.9, "rationale": "ok"})
    scores = await judge_answer(LLM("gpt-4o-mini", mock_response=reply), "q", "a", "g", [])
    assert scores.as_metrics()["f1_lm"] == pytest.approx(2 / 3)


async def test_judge_out_of_range_is_repaired_once_then_rejected():
    bad = json.dumps({"correctness": 7, "completeness": 0.5, "faithfulness": 0.9})
    good = json.dumps({"correctness": 0.7, "completeness": 0.5, "faithfulness": 0.9})
    scores = await judge_answer(LLM("gpt-4o-mini", mock_response=[bad, good]), "q", "a", "g", [])
    assert scores.correctness == pytest.approx(0.7)
    with pytest.raises(LLMError):
        await judge_answer(LLM("gpt-4o-mini", mock_response=[bad, bad]), "q", "a", "g", [])


async def test_judge_metrics_never_raises():
    assert await judge_metrics(None, "q", "a", "g", []) == {}
    ok = json.dumps({"correctness": 0.5, "completeness": 0.5, "faithfulness": 1})
    assert (await judge_metrics(LLM("gpt-4o-mini", mock_response=ok), "q", "a", "g", []))["f1_lm"] == pytest.approx(0.5)
    dead = await judge_metrics(
        LLM("gpt-4o-mini", mock_response="litellm.RateLimitError", num_retries=0), "q", "a", "g", []
    )
    assert set(dead) == {"judge_error"}
