"""Check a workflow before anything runs it, and report every problem with the node it concerns.

``check`` returns all problems (errors and warnings); ``validate`` raises ``WorkflowError`` when any of
them is an error. Every message names the node and says what to do, because the UI shows it verbatim
and the LLM refiner reads it to repair its own edit.

Severity policy:
  * error   — the workflow cannot run or its result would be meaningless (unknown operator, bad params,
              duplicate id, dangling edge, unknown port, cycle, missing / extra input, type mismatch,
              missing output, empty workflow, newer schema version, a param naming a node that does
              not exist or does not feed the node — e.g. a score feature ``ev:cocited.support`` — or a size
              over the limits of ``pilot.limits``: too many nodes / edges, an id, label, list or string too
              long, params nested too deep, a number that is not finite).
  * warning — ``unreachable``: a node whose value never reaches the output. It is harmless to run (the
              executor still runs it and the UI can inspect its value), and it is a normal intermediate
              state while a user edits the graph, so it must not block edits; but it is usually a
              forgotten wire, so it is reported.
"""

from __future__ import annotations

import contextlib
import json
import math
from dataclasses import dataclass
from typing import Any, Final, Literal, get_args

from pydantic import BaseModel, ValidationError

from pilot import limits
from pilot.limits import quote
from workflows.graph import ancestors, cycles
from workflows.model import SCHEMA_VERSION, Workflow
from workflows.operator import AnyOperator, UnknownOperator
from workflows.ports import PortType, fits
from workflows.registry import operator_or_none

Severity = Literal["error", "warning"]

# Problem kinds: stable strings that tests, the UI and the refiner match on. The constants below are the
# names code uses; ``ProblemKind`` is their type, so a misspelt kind is a type error, not a silent miss.
ProblemKind = Literal[
    "unknown_operator",
    "bad_params",
    "duplicate_node",
    "bad_id",
    "duplicate_edge",
    "missing_node",
    "unknown_port",
    "cycle",
    "missing_input",
    "extra_input",
    "type_mismatch",
    "no_output",
    "unreachable",
    "empty",
    "schema_version",
    "bad_edit",
    "bad_workflow",
    "bad_reference",
    "too_big",
]
UNKNOWN_OPERATOR: Final = "unknown_operator"
BAD_PARAMS: Final = "bad_params"
DUPLICATE_NODE: Final = "duplicate_node"
BAD_ID: Final = "bad_id"
DUPLICATE_EDGE: Final = "duplicate_edge"
MISSING_NODE: Final = "missing_node"
UNKNOWN_PORT: Final = "unknown_port"
CYCLE: Final = "cycle"
MISSING_INPUT: Final = "missing_input"
EXTRA_INPUT: Final = "extra_input"
TYPE_MISMATCH: Final = "type_mismatch"
NO_OUTPUT: Final = "no_output"
UNREACHABLE: Final = "unreachable"
EMPTY: Final = "empty"
SCHEMA: Final = "schema_version"
BAD_EDIT: Final = "bad_edit"
BAD_WORKFLOW: Final = "bad_workflow"
BAD_REFERENCE: Final = "bad_reference"  # a param names a node that does not exist or does not feed this one
TOO_BIG: Final = "too_big"  # a size over pilot.limits
assert {UNKNOWN_OPERATOR, BAD_PARAMS, DUPLICATE_NODE, BAD_ID, DUPLICATE_EDGE, MISSING_NODE, UNKNOWN_PORT, CYCLE,
        MISSING_INPUT, EXTRA_INPUT, TYPE_MISMATCH, NO_OUTPUT, UNREACHABLE, EMPTY, SCHEMA, BAD_EDIT, BAD_WORKFLOW,
        BAD_REFERENCE, TOO_BIG} == set(get_args(ProblemKind))  # fmt: skip


@dataclass(frozen=True)
class Problem:
    node_id: str | None
    kind: ProblemKind
    message: str
    severity: Severity = "error"

    def __str__(self) -> str:
        return self.message


LISTED_PROBLEMS = 3  # problems a WorkflowError's message lists; each can name every param of its operator


class WorkflowError(Exception):
    """A workflow (or an edit of one) is invalid. ``problems`` lists every reason, each naming its node."""

    def __init__(self, problems: list[Problem], context: str | None = None):
        self.problems = list(problems)
        self.context = context
        lines = [p.message for p in self.problems] or ["invalid workflow"]
        head = f"{context}: " if context else ""
        if len(lines) == 1:
            text = head + lines[0]
        else:
            # a recipe with a hundred bad items gets a message a person reads (``problems`` keeps them all)
            listed = lines[:LISTED_PROBLEMS]
            more = f"\n- … and {len(lines) - len(listed)} more like these" if len(lines) > len(listed) else ""
            text = head + f"{len(lines)} problems:\n" + "\n".join(f"- {line}" for line in listed) + more
        super().__init__(text)

    @property
    def kinds(self) -> set[ProblemKind]:
        return {p.kind for p in self.problems}


def _describe(node_id: str, op: str | None = None) -> str:
    return f"node {node_id!r}" + (f" ({op})" if op else "")


def param_problems(node_id: str, op_cls: type[AnyOperator], params: dict) -> list[Problem]:
    try:
        op_cls.Params.model_validate(params)
        return []
    except ValidationError as exc:
        allowed = ", ".join(op_cls.Params.model_fields) or "none"
        out = []
        for err in exc.errors():
            field = ".".join(str(p) for p in err["loc"]) or "(params)"
            given = f" (got {quote(err['input'])})" if err["type"] != "missing" and field in params else ""
            out.append(
                Problem(
                    node_id,
                    BAD_PARAMS,
                    f"{_describe(node_id, op_cls.name)}: param {field!r}: {err['msg']}{given} — "
                    f"fix or remove it; this operator takes: {allowed}",
                )
            )
        return out


def check(workflow: Workflow) -> list[Problem]:
    """Every problem of the workflow, errors and warnings, in a stable order (by node, then kind)."""
    problems = size_problems(workflow)
    if problems:  # nothing else is checked (or drawn, or run) on a workflow over the limits
        return problems
    if workflow.schema_version < 1:
        problems.append(
            Problem(
                None,
                SCHEMA,
                f"the workflow's schema version {quote(workflow.schema_version)} is not a version — versions "
                f"start at 1; this pilot writes {SCHEMA_VERSION}",
            )
        )
    if workflow.schema_version > SCHEMA_VERSION:
        problems.append(
            Problem(
                None,
                SCHEMA,
                f"the workflow uses schema version {workflow.schema_version}, this pilot reads up to "
                f"{SCHEMA_VERSION} — upgrade pilot or re-export the workflow",
            )
        )
    if not workflow.nodes:
        problems.append(Problem(None, EMPTY, "the workflow has no nodes — add a sourcing node (e.g. keyword_search)"))
        return problems

    ops: dict[str, type[AnyOperator] | None] = {}
    seen_ids: set[str] = set()
    for node in workflow.nodes:
        if not node.id.strip() or node.id != node.id.strip():
            problems.append(
                Problem(
                    node.id,
                    BAD_ID,
                    f"the {node.op} node has the id {node.id!r} — give it a short name without surrounding spaces",
                )
            )
        if node.id in seen_ids:
            problems.append(
                Problem(node.id, DUPLICATE_NODE, f"node id {node.id!r} is used twice — give each node a unique id")
            )
            continue
        seen_ids.add(node.id)
        op_cls = operator_or_none(node.op)
        ops[node.id] = op_cls
        if op_cls is None:
            problems.append(Problem(node.id, UNKNOWN_OPERATOR, f"{_describe(node.id)}: {UnknownOperator(node.op)}"))
        else:
            problems.extend(param_problems(node.id, op_cls, node.params))

    # edges: endpoints, ports, types; count inputs per (node, port)
    fed: dict[tuple[str, str], list[str]] = {}
    seen_edges: set[tuple[str, str, str]] = set()
    succ: dict[str, list[str]] = {}
    for e in workflow.edges:
        key = (e.source, e.target, e.port)
        where = f"edge {e.source} → {e.target}.{e.port}"
        if key in seen_edges:
            problems.append(Problem(e.target, DUPLICATE_EDGE, f"{where} appears twice — remove the copy"))
            continue
        seen_edges.add(key)
        missing = [n for n in (e.source, e.target) if n not in seen_ids]
        for n in missing:
            # attach the problem to the endpoint that exists, so the UI can highlight something
            anchor = e.target if n == e.source and e.target in seen_ids else e.source if e.source in seen_ids else n
            problems.append(
                Problem(
                    anchor,
                    MISSING_NODE,
                    f"{where} refers to node {n!r}, which does not exist — remove the edge or add the node",
                )
            )
        if missing:
            continue
        succ.setdefault(e.source, []).append(e.target)
        consumer = ops.get(e.target)
        producer = ops.get(e.source)
        if consumer is None:
            continue
        port = consumer.inputs.get(e.port)
        if port is None:
            ports = ", ".join(consumer.inputs) or "none — it is a sourcing node and takes no inputs"
            problems.append(
                Problem(
                    e.target,
                    UNKNOWN_PORT,
                    f"{_describe(e.target, consumer.name)} has no input port {e.port!r} (edge from {e.source!r}) — "
                    f"its ports are: {ports}",
                )
            )
            continue
        fed.setdefault((e.target, e.port), []).append(e.source)
        if producer is not None and not fits(producer.output, port.type):
            problems.append(
                Problem(
                    e.target,
                    TYPE_MISMATCH,
                    f"{_describe(e.target, consumer.name)}: port {e.port!r} expects {port.type.value} but "
                    f"{e.source!r} ({producer.name}) produces {producer.output.value} — connect a node that "
                    f"produces {port.type.value}",
                )
            )

    for node in workflow.nodes:
        op_cls = ops.get(node.id)
        if op_cls is None:
            continue
        for name, port in op_cls.inputs.items():
            sources = fed.get((node.id, name), [])
            if not sources and not port.optional:
                problems.append(
                    Problem(
                        node.id,
                        MISSING_INPUT,
                        f"{_describe(node.id, op_cls.name)}: required input {name!r} ({port.type.value}) is not "
                        f"connected — add an edge from a node that produces {port.type.value}",
                    )
                )
            elif len(sources) > 1 and not port.many:
                problems.append(
                    Problem(
                        node.id,
                        EXTRA_INPUT,
                        f"{_describe(node.id, op_cls.name)}: input {name!r} takes one edge but has "
                        f"{len(sources)} (from {', '.join(sources)}) — keep one, or merge them with a union node first",
                    )
                )

    problems.extend(_reference_problems(workflow, ops, seen_ids))

    for comp in cycles([n.id for n in workflow.nodes if n.id in ops], succ):
        path = " → ".join(comp + [comp[0]])
        problems.append(
            Problem(comp[0], CYCLE, f"nodes {path} form a cycle — remove one of these edges so data flows one way")
        )

    out = workflow.output
    if out is None:
        problems.append(
            Problem(
                None, NO_OUTPUT, "the workflow has no output node — set `output` to the node whose value is the result"
            )
        )
    elif out not in seen_ids:
        problems.append(
            Problem(
                out, NO_OUTPUT, f"the output node {out!r} does not exist — set `output` to one of the workflow's nodes"
            )
        )
    else:
        feeding = ancestors(workflow, out) | {out}
        for node in workflow.nodes:
            if node.id not in feeding:
                problems.append(
                    Problem(
                        node.id,
                        UNREACHABLE,
                        f"node {node.id!r} ({node.op}) does not feed the output {out!r} — connect it or remove it",
                        severity="warning",
                    )
                )
    return problems


def size_problems(workflow: Workflow) -> list[Problem]:
    """The workflow's sizes against ``pilot.limits``: counted before anything else looks at it, so an
    oversized recipe costs one pass over its data and never reaches the (super-linear) checks, the drawing
    or the executor. Each problem says which limit, on which node."""
    out: list[Problem] = []

    def too_long(what: str, text: str | None, limit: int, node_id: str | None = None) -> None:
        if text is not None and len(text) > limit:
            out.append(
                Problem(node_id, TOO_BIG, f"{what} is {len(text):,} characters long; at most {limit:,} are allowed")
            )

    n_nodes, n_edges = len(workflow.nodes), len(workflow.edges)
    if n_nodes > limits.MAX_NODES:
        out.append(
            Problem(
                None, TOO_BIG, f"the workflow has {n_nodes:,} nodes; at most {limits.MAX_NODES} are allowed — split it"
            )
        )
    if n_edges > limits.MAX_EDGES:
        out.append(
            Problem(None, TOO_BIG, f"the workflow has {n_edges:,} edges; at most {limits.MAX_EDGES} are allowed")
        )
    if out:
        return out
    too_long("the workflow's name", workflow.name, limits.MAX_LABEL_CHARS)
    too_long("the workflow's description", workflow.description, limits.MAX_DESCRIPTION_CHARS)
    too_long("the output id", workflow.output, limits.MAX_ID_CHARS)
    for i, node in enumerate(workflow.nodes):
        if len(node.id) > limits.MAX_ID_CHARS:
            too_long(f"the id of node #{i + 1} ({quote(node.id, 24)})", node.id, limits.MAX_ID_CHARS)
            continue
        too_long(f"node {node.id!r}: its operator name", node.op, limits.MAX_ID_CHARS, node.id)
        too_long(f"node {node.id!r}: its label", node.label, limits.MAX_LABEL_CHARS, node.id)
        problem = _params_problem(node.params)
        if problem:
            out.append(Problem(node.id, TOO_BIG, f"node {node.id!r}: {problem}"))
    for i, e in enumerate(workflow.edges):
        for what, text in (("source", e.source), ("target", e.target), ("port", e.port)):
            too_long(f"edge #{i + 1}: its {what}", text, limits.MAX_ID_CHARS)
    return out


def _params_problem(params: dict[str, Any]) -> str | None:
    """Why a node's params are over the limits (or hold a number that is not finite), else None.

    One iterative pass over the values, stopping at the first problem: deep nesting cannot recurse, and
    the JSON size is summed as it goes instead of serialising megabytes first."""
    size = 0
    todo: list[tuple[str, Any, int]] = [(repr(k)[: limits.QUOTE_CHARS], v, 1) for k, v in params.items()]
    for key in params:
        size += len(key) + 4
        if len(key) > limits.MAX_ID_CHARS:
            return f"a param name is {len(key):,} characters long; at most {limits.MAX_ID_CHARS} are allowed"
    while todo:
        where, value, depth = todo.pop()
        if depth > limits.MAX_PARAM_DEPTH:
            return f"param {where} is nested more than {limits.MAX_PARAM_DEPTH} levels deep"
        if isinstance(value, str):
            if len(value) > limits.MAX_STRING_CHARS:
                return (
                    f"param {where} holds a text of {len(value):,} characters; at most "
                    f"{limits.MAX_STRING_CHARS:,} are allowed"
                )
            size += len(value) + 2
        elif isinstance(value, float):
            if not math.isfinite(value):
                return f"param {where} must be a finite number, got {value}"
            size += 8
        elif isinstance(value, (list, tuple, dict)):
            if len(value) > limits.MAX_LIST_ITEMS:
                return (
                    f"param {where} has {len(value):,} items; at most {limits.MAX_LIST_ITEMS} are allowed — "
                    f"keep the ones that matter"
                )
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for k, v in items:
                if isinstance(k, str):
                    if len(k) > limits.MAX_STRING_CHARS:
                        return f"param {where} has a key of {len(k):,} characters"
                    size += len(k) + 4
                todo.append((where, v, depth + 1))
            size += 2
        else:
            size += 8
        if size > limits.MAX_PARAMS_BYTES:
            return f"the params are larger than {limits.MAX_PARAMS_BYTES // 1024} KB of JSON — keep them short"
    return None


def _reference_problems(
    workflow: Workflow, ops: dict[str, type[AnyOperator] | None], node_ids: set[str]
) -> list[Problem]:
    """Node ids named inside params (a score feature ``ev:cocited.support`` reads node ``cocited``'s
    evidence): each must exist and feed the node, or the feature silently reads nothing."""
    out: list[Problem] = []
    for node in workflow.nodes:
        op_cls = ops.get(node.id)
        if op_cls is None:
            continue
        try:
            params = op_cls.Params.model_validate(node.params)
        except ValidationError:
            continue  # reported as bad params
        for where, ref in op_cls.node_refs(params):
            head = f"{_describe(node.id, op_cls.name)}: {where} reads the evidence of node {ref!r}"
            if ref not in node_ids:
                out.append(
                    Problem(
                        node.id,
                        BAD_REFERENCE,
                        f"{head}, which does not exist — remove the feature from {node.id!r} or add {ref!r} back",
                    )
                )
            elif ref not in ancestors(workflow, node.id):
                out.append(
                    Problem(
                        node.id,
                        BAD_REFERENCE,
                        f"{head}, which does not feed {node.id!r}, so it would always be 0 — connect {ref!r} "
                        f"upstream of {node.id!r} or remove the feature",
                    )
                )
    return out


def errors(workflow: Workflow) -> list[Problem]:
    return [p for p in check(workflow) if p.severity == "error"]


def validate(workflow: Workflow, context: str | None = None) -> Workflow:
    """Return the workflow unchanged if it can run; raise ``WorkflowError`` listing every error otherwise."""
    errs = errors(workflow)
    if errs:
        raise WorkflowError(errs, context)
    return workflow


def output_type(workflow: Workflow, node_id: str) -> PortType | None:
    op_cls = operator_or_none(workflow.node(node_id).op)
    return op_cls.output if op_cls else None


def normalized_params(op_cls: type[AnyOperator], params: dict) -> dict:
    """Params with every default filled in (JSON form), so equal settings give equal keys and no diff."""
    model: BaseModel = op_cls.Params.model_validate(params)
    return model.model_dump(mode="json")


def normalize(workflow: Workflow) -> Workflow:
    """A copy whose node params include every default. Nodes with unknown ops / invalid params are kept as is."""
    nodes = []
    for node in workflow.nodes:
        op_cls = operator_or_none(node.op)
        params = node.params
        if op_cls is not None:
            with contextlib.suppress(ValidationError):
                params = normalized_params(op_cls, node.params)
        nodes.append(node.model_copy(update={"params": params}, deep=True))
    return workflow.model_copy(update={"nodes": nodes}, deep=True)


def load_json(data: Any, what: str, kind: ProblemKind, expected: type | tuple[type, ...]) -> Any:
    """``data`` decoded from JSON text if it is text, checked to be of the ``expected`` type."""
    if isinstance(data, (str, bytes)):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as exc:
            raise WorkflowError(
                [Problem(None, kind, f"{what} is not valid JSON ({exc.msg} at position {exc.pos})")]
            ) from None
    if not isinstance(data, expected):
        shape = "a JSON object" if expected is dict else "a JSON array or object"
        raise WorkflowError([Problem(None, kind, f"{what} must be {shape}, got {type(data).__name__}")])
    return data


def parse_workflow(data: Any) -> Workflow:
    """A workflow from JSON text, bytes or a dict (an imported recipe, an LLM's draft), or a
    ``WorkflowError`` saying which field is malformed. Parsing only: call ``validate`` to check it runs."""
    if isinstance(data, Workflow):
        return data
    data = load_json(data, "the workflow", BAD_WORKFLOW, dict)
    try:
        return Workflow.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = err["loc"]
            node_id = None
            if len(loc) >= 2 and loc[0] == "nodes" and isinstance(loc[1], int):
                nodes = data.get("nodes") or []
                if loc[1] < len(nodes) and isinstance(nodes[loc[1]], dict):
                    node_id = nodes[loc[1]].get("id")
            where = ".".join(str(p) for p in loc) or "(workflow)"
            problems.append(Problem(node_id, BAD_WORKFLOW, f"workflow field {where!r}: {err['msg']}"))
        raise WorkflowError(problems, "malformed workflow") from None
