"""Intent -> workflow. Deterministic: the direction's template, parameterised by the intent. With an LLM:
the model writes the workflow JSON from the operator registry (names, descriptions, ports, params
schemas) with the template as a worked example; the result is validated and repaired (at most 2
corrective rounds, each fed the validation problems), else the template is used.

Invariant: ``induce`` only ever returns a workflow that passed ``workflows.validate`` — a turn never
runs an invalid workflow.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from pilot.llm import LLM, LLMError
from pilot.models import Intent, Paper
from workflows.model import Workflow
from workflows.ports import PortType
from workflows.registry import all_operators
from workflows.templates import generic_workflow, template, topic_search
from workflows.validate import errors, output_type

MAX_REPAIRS = 2
RESULT_TYPES = {PortType.RANKED, PortType.EVIDENCE, PortType.PAPERS}


@dataclass
class Induction:
    workflow: Workflow
    origin: Literal["template", "generic", "llm"]
    notes: list[str] = field(default_factory=list)


def deterministic(intent: Intent, anchor_query: str, request_text: str = "", anchor: Paper | None = None) -> Induction:
    """The direction's template; with no anchor but a topic, the topic search; else the generic workflow."""
    if intent.direction and anchor_query.strip():
        notes = []
        if intent.direction == "sibling" and intent.facet and anchor is not None and not anchor.abstract:
            notes.append(f"the anchor has no abstract to tell its {intent.facet} apart; matched on its title")
        return Induction(template(intent.direction, anchor_query, intent), "template", notes)
    if not anchor_query.strip() and intent.topic:
        return Induction(topic_search(intent), "template")
    return Induction(generic_workflow(anchor_query, request_text or intent.request, intent), "generic")


def _params_schema(model) -> dict[str, Any]:
    """A compact view of a params model for the prompt: name -> type/default/enum/range."""
    schema = model.model_json_schema()
    defs = schema.get("$defs", {})
    out: dict[str, Any] = {}
    for name, prop in schema.get("properties", {}).items():
        if "$ref" in prop:
            prop = defs.get(prop["$ref"].split("/")[-1], prop)
        entry = {k: prop[k] for k in ("type", "enum", "default", "minimum", "maximum") if k in prop}
        if "anyOf" in prop:
            entry["type"] = "|".join(str(a.get("type", "?")) for a in prop["anyOf"])
        if prop.get("description"):
            entry["description"] = prop["description"][:120]
        out[name] = entry
    return out


def _compact(op) -> dict[str, Any]:
    """One operator in a few tokens, params as *values* (their defaults): a small model shown a schema tends
    to copy the schema into the workflow ({"query": {"type": "string"}}), as SmolLM2 did in the trial."""
    ports = {
        p: port.type.value + ("*" if port.many else "") + ("?" if port.optional else "")
        for p, port in op.inputs.items()
    }
    fields = op.Params.model_fields
    defaults = {
        name: None if f.is_required() else f.get_default(call_default_factory=True) for name, f in fields.items()
    }
    out = {
        "name": op.name,
        "does": op.description,
        "inputs": ports,
        "output": op.output.value,
        "params": json.loads(json.dumps(defaults, default=str)),
    }
    required = [name for name, f in fields.items() if f.is_required()]
    return {**out, "required": required} if required else out


def registry_description(families: tuple[str, ...] | None = None, compact: bool = False) -> list[dict[str, Any]]:
    """The operator registry as the LLM sees it (paper-search operators unless ``families`` says otherwise);
    ``compact``: names, ports and param defaults only (a third of the size, for small local models)."""
    ops = []
    for name, op in sorted(all_operators().items()):
        if families is not None and op.family not in families:
            continue
        if families is None and op.family == "entities":
            continue  # entity questions are planned by pilot.kg, not induced here
        if compact:
            ops.append(_compact(op))
            continue
        ops.append(
            {
                "name": name,
                "description": op.description,
                "inputs": {
                    p: {"type": port.type.value, "many": port.many, "optional": port.optional}
                    for p, port in op.inputs.items()
                },
                "output": op.output.value,
                "params": _params_schema(op.Params),
            }
        )
    return ops


def workflow_problems(wf: Workflow, anchor_query: str = "") -> list[str]:
    """Everything that stops ``wf`` from being run as a paper search (validation errors + result type)."""
    problems = [p.message for p in errors(wf)]
    if problems:
        return problems
    if wf.output is None or output_type(wf, wf.output) not in RESULT_TYPES:
        return [f"the output node must produce a paper list (ranked/evidence), got {wf.output!r}"]
    if anchor_query.strip() and not any(n.op == "anchor" for n in wf.nodes):
        return ["the workflow must start from an 'anchor' node whose params.query is the anchor paper"]
    return []


SYSTEM = (
    "You design literature-search workflows: a DAG of operators. Reply with only a JSON object "
    '{"name", "description", "nodes": [{"id", "op", "params", "label"}],'
    ' "edges": [{"source", "target", "port"}], "output"}. '
    "Use only the listed operators and params; connect every required input port; an edge's port is the "
    "target's input port name; output is the id of the final paper-list node. No cycles."
)


async def llm_workflow(
    llm: LLM, intent: Intent, anchor_query: str, example: Workflow, repairs: int = MAX_REPAIRS, compact: bool = False
) -> Workflow:
    """The model's workflow, validated; raises ``LLMError`` when even the repairs are invalid."""
    user = json.dumps(
        {
            "anchor_query": anchor_query,
            "request": intent.request,
            "intent": intent.model_dump(exclude_defaults=True, exclude={"request", "notes"}),
            "operators": registry_description(compact=compact),
            "example_workflow_for_this_direction": json.loads(example.model_dump_json()),
        },
        ensure_ascii=False,
    )
    return await llm.json(SYSTEM, user, Workflow, repair=repairs, check=lambda wf: workflow_problems(wf, anchor_query))


async def induce(
    intent: Intent,
    anchor_query: str,
    llm: LLM | None = None,
    request_text: str = "",
    anchor: Paper | None = None,
    compact_prompt: bool = False,
) -> Induction:
    """The workflow for this intent: the LLM's when a model is configured and it passes validation,
    else the deterministic one (with a note saying why)."""
    base = deterministic(intent, anchor_query, request_text, anchor)
    if llm is None:
        return base
    if intent.also_cites:
        # "papers citing both X and Y" is the exact intersection of citer lists: a model's plan could only lose it
        base.notes.append("papers citing all the named papers: their citer lists intersected (no LLM plan needed)")
        return base
    try:
        wf = await llm_workflow(llm, intent, anchor_query, base.workflow, compact=compact_prompt)
    except LLMError as exc:
        base.notes.append(f"LLM workflow not usable ({exc}); used the {base.origin} workflow")
        return base
    return Induction(wf, "llm")
