"""Steps of the workflow edited in the chat's words, resolved against the workflow on screen."""

from __future__ import annotations

import pytest

from pilot.message import Context, read
from pilot.models import Intent
from pilot.stepedit import StepEdit, step_edit
from workflows.model import ModifyNode, RemoveNode, Workflow
from workflows.templates import topic_search


def asked(wf: Workflow, text: str) -> StepEdit | None:
    """The step edit a message asks for, read by the reader with this workflow on screen."""
    steps = [n.id for n in wf.nodes] + [n.op for n in wf.nodes]
    ctx = Context(phase="results", has_results=True, has_search=True, listed=10, steps=steps)
    return read(text, ctx).step_edit


def edit_of(wf: Workflow, text: str) -> RemoveNode | ModifyNode | str:
    said = asked(wf, text)
    assert said is not None, f"{text!r} was not read as a step edit"
    return step_edit(wf, said)


@pytest.fixture
def wf():
    return topic_search(Intent(topic="dependency parsing"))


@pytest.mark.parametrize(
    ("text", "node", "params"),
    [("set k to 20", "top", {"k": 20}),  # five steps have a "k": the results' cut-off is meant
     ("set k of kw to 5", "kw", {"k": 5}), ("set the limit of search_kw to 100", "search_kw", {"limit": 100}),
     ("set search_kw.limit = 100", "search_kw", {"limit": 100})],
)  # fmt: skip
def test_a_setting_is_set_on_the_one_step_it_names(wf, text, node, params):
    assert edit_of(wf, text) == ModifyNode(node_id=node, params=params)


def test_a_weight_is_a_feature_of_the_score_step_and_the_others_stay(wf):
    edit = edit_of(wf, "set the dense weight to 2")
    before = wf.node("score").params["features"]
    assert isinstance(edit, ModifyNode) and edit.params["features"] == {**before, "dense": 2}


def test_a_step_is_removed_by_its_id_and_words_that_name_two_or_none_are_told_the_steps(wf):
    assert edit_of(wf, "drop the citers node") == RemoveNode(node_id="citers")
    assert edit_of(wf, "remove `search_kw`") == RemoveNode(node_id="search_kw")
    said = edit_of(wf, "remove the keyword search step")  # two keyword searches
    assert isinstance(said, str) and "search_kw, search_phrases" in said and "name the step by its id" in said
    said = edit_of(wf, "remove the magic step")
    assert isinstance(said, str) and said.startswith("No step of this workflow is “magic”")
    assert edit_of(wf, "set the colour to red") == "No step of this workflow has a setting “colour”."
    assert asked(wf, "remove the surveys") is None  # papers, not a step


def test_verbs_only_steps_take_name_a_step_without_the_word_step():
    from workflows.templates import generic_workflow

    generic = generic_workflow("acl:P02-1040", "")
    rerank = next(n.id for n in generic.nodes if n.op == "rerank")
    assert edit_of(generic, "turn off the reranker") == RemoveNode(node_id=rerank)
    assert (asked(generic, "skip the citation expansion") or StepEdit(action="explain")).action == "remove"


def test_what_a_step_does_is_said_with_its_settings_and_inputs(wf):
    said = edit_of(wf, "what does the score step do?")
    assert isinstance(said, str) and said.startswith("Step “score” (score): Rank papers")
    assert "features = " in said and "It reads from graph" in said


def test_side_by_side_steps_of_one_kind_are_asked_about_not_picked(wf):
    said = edit_of(wf, "increase the limit of the keyword search to 200")
    assert isinstance(said, str) and "search_kw, search_phrases" in said  # was search_phrases, picked silently
    assert edit_of(wf, "increase the limit of search_kw to 200") == ModifyNode(
        node_id="search_kw", params={"limit": 200}
    )
