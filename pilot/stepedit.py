"""Edits of a workflow step said in the chat: "remove the keyword search step", "set k to 20", "set the dense
weight to 2", "rerun the workflow". The words name a step by its id, its operator or its label, and a parameter
by its name (a score feature by "<feature> weight"); what they name must be one step of the workflow on screen,
or the reply lists the steps to choose from. The edit itself goes through the workflow's validated edits, like a
change made in the DAG panel."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel

from workflows.graph import ancestors
from workflows.model import ModifyNode, RemoveNode, Workflow
from workflows.refine import main_node
from workflows.registry import operator_or_none

StepAction = Literal["remove", "set", "rerun", "explain"]


class StepEdit(BaseModel):
    """What a message asks of the workflow's steps, before it is matched to one."""

    action: StepAction
    step: str = ""  # the words naming a step ("keyword search", "citers", "search_kw")
    param: str = ""  # the words naming a parameter ("k", "dense weight", "limit")
    value: str = ""


def _key(words: str) -> str:
    return re.sub(r"[\s.-]+", "_", words.strip().lower())


def find_step(wf: Workflow, words: str) -> list[str]:
    """The steps ``words`` name: by id, else by operator, else by label; several when they are ambiguous."""
    key = _key(re.sub(r"^(?:the|a)\s+", "", words.strip(), flags=re.IGNORECASE))
    key = re.sub(r"(?<=[a-z]{4})(?:er|ing)$", "", key)  # "the reranker", "reranking": the rerank step
    for match in (
        lambda n: _key(n.id) == key,
        lambda n: _key(n.op) in (key, f"{key}_search") or _key(n.op).replace("_", "") == key.replace("_", ""),
        lambda n: bool(n.label) and key.replace("_", " ") in n.label.lower(),
    ):
        found = [n.id for n in wf.nodes if match(n)]
        if found:
            return found
    return []


def _value(text: str) -> Any:
    low = text.lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    if low in ("none", "null"):
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def explain_step(wf: Workflow, words: str) -> str:
    """What the step ``words`` name does and how it is set, or which steps there are."""
    found = find_step(wf, words)
    if len(found) != 1:
        return _which(wf, words, found)
    node = wf.node(found[0])
    op = operator_or_none(node.op)
    does = op.description if op is not None else "an operator this version does not know"
    settings = ", ".join(f"{k} = {v!r}" for k, v in sorted(node.params.items())) or "its defaults"
    feeds = [e.source for e in wf.edges if e.target == node.id]
    fed = f" It reads from {', '.join(dict.fromkeys(feeds))}." if feeds else ""
    how = f"Edit it in the Workflow tab or here, e.g. “set <setting> of {node.id} to …”."
    return f"Step “{node.id}” ({node.op}): {does} Settings: {settings}.{fed} {how}"


def step_edit(wf: Workflow, asked: StepEdit) -> RemoveNode | ModifyNode | str:
    """The workflow edit ``asked`` means on ``wf``, or what to tell the user when it names no single step."""
    if asked.action == "explain":
        return explain_step(wf, asked.step)
    if asked.action == "remove":
        found = find_step(wf, asked.step)
        if len(found) == 1:
            return RemoveNode(node_id=found[0])
        return _which(wf, asked.step, found)
    words = asked.param.lower().split()
    value = _value(asked.value)
    # "the dense weight": a feature of a score step
    if len(words) >= 2 and words[-1] == "weight":
        feature = "_".join(words[:-1])
        scores = [n for n in wf.nodes if n.op == "score" and feature in (n.params.get("features") or {})]
        if len(scores) == 1 and isinstance(value, (int, float)):
            features = {**scores[0].params["features"], feature: value}
            return ModifyNode(node_id=scores[0].id, params={"features": features})
        return f"No single score step weighs “{feature}”; the workflow panel shows each step's weights."
    # "<step> <param>", "<param> of <step>", or a parameter only one step has
    param, step_words = words[-1], " ".join(words[:-1])
    if " of " in f" {asked.param.lower()} ":
        param, _, step_words = asked.param.lower().partition(" of ")
        param = _key(param)
    if "." in param:
        step_words, _, param = param.rpartition(".")
    having = [n.id for n in wf.nodes if (op := operator_or_none(n.op)) is not None and param in op.Params.model_fields]
    if step_words.strip():  # ("the year_min of the filter": find_step drops "the")
        named = set(find_step(wf, step_words))
        having = [h for h in having if h in named]
    if len(having) > 1 and param == "k" and (top := main_node(wf, "top_k")) in having:
        having = [top]  # "set k to 20": how many results, the cut-off nearest the list (as "give me 20" edits it)
    ops = {wf.node(h).op for h in having}
    # steps in a row (a cut-off before the final one): the one nearest the list; side by side (two keyword
    # searches) the user is asked which
    main = main_node(wf, next(iter(ops))) if len(having) > 1 and len(ops) == 1 else None
    if main in having and all(h == main or h in ancestors(wf, main) for h in having):
        having = [main]
    if len(having) == 1:
        return ModifyNode(node_id=having[0], params={param: value})
    if not having:
        return f"No step of this workflow has a setting “{param}”."
    example = f"set {param} of {having[0]} to {asked.value}"
    return f"Several steps have “{param}” ({', '.join(having)}): say which, e.g. “{example}”."


def _which(wf: Workflow, words: str, found: list[str]) -> str:
    steps = ", ".join(f"{n.id} ({n.op})" for n in wf.nodes)
    if found:
        return f"“{words}” could be {', '.join(found)}: name the step by its id. The steps are: {steps}."
    return f"No step of this workflow is “{words}”. The steps are: {steps}."
