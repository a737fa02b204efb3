"""Intent -> workflow: the template path, and the LLM path with validation, repair and fallback."""

from __future__ import annotations

import json

import pytest

from pilot.llm import LLM
from pilot.models import Intent
from workflows.inducer import MAX_REPAIRS, deterministic, induce, registry_description, workflow_problems
from workflows.validate import validate

ANCHOR = "acl:P02-1040"

GOOD = {
    "name": "llm successor",
    "nodes": [
        {"id": "anchor", "op": "anchor", "params": {"query": ANCHOR}},
        {"id": "citers", "op": "citation_expand", "params": {"direction": "citations"}},
        {"id": "filter", "op": "filter", "params": {"year_min": 2005}},
        {"id": "top", "op": "top_k", "params": {"k": 20}},
    ],
    "edges": [
        {"source": "anchor", "target": "citers", "port": "in"},
        {"source": "citers", "target": "filter", "port": "in"},
        {"source": "anchor", "target": "filter", "port": "anchor"},
        {"source": "filter", "target": "top", "port": "in"},
    ],
    "output": "top",
}
BAD = {**GOOD, "nodes": [*GOOD["nodes"][:3], {"id": "top", "op": "magic_rank", "params": {}}]}
CYCLIC = {**GOOD, "edges": [*GOOD["edges"], {"source": "top", "target": "citers", "port": "in"}]}


class RecordingLLM(LLM):
    """The real wrapper; it only remembers the messages it sent (what the repair prompt said)."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.sent: list[list[dict]] = []

    async def complete(self, messages, schema=None, **extra):
        self.sent.append(list(messages))
        return await super().complete(messages, schema=schema, **extra)


def test_deterministic_path_is_the_direction_template_with_the_intent():
    ind = deterministic(Intent(direction="successor", year_min=2009, venues=["EMNLP"], k=15), ANCHOR)
    wf = validate(ind.workflow)
    assert ind.origin == "template" and wf.name == "successor"
    assert wf.node("filter").params["year_min"] == 2009 and wf.node("filter").params["venues"] == ["EMNLP"]
    assert wf.node("top").params["k"] == 15
    generic = deterministic(Intent(request="word alignment for low resource languages"), "")
    assert generic.origin == "generic" and validate(generic.workflow)


def test_registry_description_has_every_paper_operator_with_params():
    ops = {o["name"]: o for o in registry_description()}
    assert {"anchor", "filter", "score", "top_k", "citation_expand"} <= set(ops)
    assert "search_author" not in ops  # entity operators belong to the KG planner
    assert "year_min" in ops["filter"]["params"] and ops["filter"]["output"] == "ranked"


def test_workflow_problems_name_what_is_wrong():
    from workflows.model import Workflow

    assert workflow_problems(Workflow.model_validate(GOOD), ANCHOR) == []
    assert any("magic_rank" in p for p in workflow_problems(Workflow.model_validate(BAD), ANCHOR))
    assert workflow_problems(Workflow.model_validate(CYCLIC), ANCHOR)


async def test_llm_valid_workflow_is_used():
    llm = RecordingLLM("openai/x", mock_response=json.dumps(GOOD))
    ind = await induce(Intent(direction="successor"), ANCHOR, llm)
    assert ind.origin == "llm" and ind.workflow.name == "llm successor" and ind.notes == []
    prompt = json.loads(llm.sent[0][1]["content"])
    assert prompt["example_workflow_for_this_direction"]["name"] == "successor"  # the template as the example
    assert any(o["name"] == "filter" for o in prompt["operators"])


async def test_papers_citing_several_papers_keep_the_exact_intersection_with_an_llm_configured():
    # the model's plan (GOOD: the anchor's citers only) dropped "that also cite Y"
    llm = RecordingLLM("openai/x", mock_response=json.dumps(GOOD))
    ind = await induce(Intent(direction="successor", also_cites=["acl:J93-2004"]), ANCHOR, llm)
    wf = validate(ind.workflow)
    assert ind.origin != "llm" and llm.sent == []
    assert wf.node("merge").op == "intersect" and wf.node("also_1").params["query"] == "acl:J93-2004"


async def test_compact_prompt_shows_params_as_values_at_a_third_of_the_size():
    """For small local models (PILOT_LLM_PROMPT=compact): no schemas to copy into the workflow, fewer tokens."""
    full, compact = registry_description(), registry_description(compact=True)
    assert [o["name"] for o in compact] == [o["name"] for o in full]
    assert len(json.dumps(compact)) < 0.5 * len(json.dumps(full))
    ops = {o["name"]: o for o in compact}
    assert ops["top_k"]["params"]["k"] == 50 and ops["filter"]["params"]["venues"] == []  # defaults, not schemas
    assert ops["anchor"]["required"] == ["query"] and ops["filter"]["inputs"]["anchor"] == "papers?"
    llm = RecordingLLM("openai/x", mock_response=json.dumps(GOOD))
    ind = await induce(Intent(direction="successor"), ANCHOR, llm, compact_prompt=True)
    assert ind.origin == "llm"
    assert json.loads(llm.sent[0][1]["content"])["operators"] == compact


async def test_llm_invalid_then_repaired_gets_the_problems_fed_back():
    llm = RecordingLLM("openai/x", mock_response=[json.dumps(BAD), json.dumps(GOOD)])
    ind = await induce(Intent(direction="successor"), ANCHOR, llm)
    assert ind.origin == "llm" and len(llm.sent) == 2
    assert "magic_rank" in llm.sent[1][-1]["content"]  # the validation problem went back to the model


@pytest.mark.parametrize(
    "replies",
    [
        ["this is not json at all", "{broken", "nope"],  # garbage
        [json.dumps(BAD), json.dumps(CYCLIC), json.dumps(BAD)],  # invalid every time
    ],
)
async def test_llm_never_yields_an_invalid_workflow(replies):
    llm = RecordingLLM("openai/x", mock_response=list(replies))
    ind = await induce(Intent(direction="successor"), ANCHOR, llm)
    assert ind.origin == "template" and validate(ind.workflow)
    assert len(llm.sent) == MAX_REPAIRS + 1
    assert ind.notes and "used the template workflow" in ind.notes[0]


async def test_rate_limited_model_falls_back_with_the_reason():
    llm = LLM("openai/x", mock_response="litellm.RateLimitError", num_retries=2, backoff_s=0.01)
    ind = await induce(Intent(direction="predecessor"), ANCHOR, llm)
    assert ind.origin == "template" and "RateLimitError" in ind.notes[0]
    assert llm.calls == 3  # first try + 2 retries on the rate limit


def test_sibling_facet_matches_the_anchor_sentence_by_sentence_on_that_aspect():
    from pilot.models import Paper

    anchor = Paper(
        id="x",
        title="t",
        abstract=(
            "Named entity recognition is an important task for many applications. We propose a semi-supervised CRF "
            "model using word clusters. Experiments show that our method outperforms the baseline by 3% F1."
        ),
    )
    ind = deterministic(Intent(direction="sibling", facet="method"), "x", anchor=anchor)
    node = validate(ind.workflow).node("facet")
    assert node.op == "facet_match" and node.params["facet"] == "method" and ind.notes == []
    assert [e.source for e in ind.workflow.inputs_of("top")] == ["facet"]
    # no abstract: the title is all there is to match, and the user is told why
    plain = deterministic(Intent(direction="sibling", facet="method"), "x", anchor=Paper(id="x", title="t"))
    assert plain.workflow.has_node("facet") and "no abstract" in plain.notes[0]
