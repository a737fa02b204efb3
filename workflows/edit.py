"""Edits of a workflow (add / modify / remove node, rewire) as pure functions.

``apply_edit`` returns a NEW workflow that passes validation, or raises ``WorkflowError``; the input
object is never touched, so a failed edit can never leave a half-applied change behind. ``apply_edits``
applies a sequence atomically and validates once at the end, so a sequence may pass through invalid
intermediate states (add a node, then wire it) as long as it ends valid.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import TypeAdapter, ValidationError

from workflows.model import AddNode, Edge, Edit, ModifyNode, RemoveNode, Rewire, Workflow
from workflows.operator import AnyOperator
from workflows.ports import PortType, fits
from workflows.registry import operator_or_none
from workflows.validate import (
    BAD_EDIT,
    DUPLICATE_NODE,
    MISSING_NODE,
    NO_OUTPUT,
    TYPE_MISMATCH,
    Problem,
    ProblemKind,
    WorkflowError,
    load_json,
    validate,
)

_EDIT_ADAPTER: TypeAdapter[Any] = TypeAdapter(Edit)
_ACTIONS = ("add", "modify", "remove", "rewire")


def describe_edit(edit: Any) -> str:
    if isinstance(edit, AddNode):
        return f"add {edit.node.id!r} ({edit.node.op})" + (f" after {edit.after!r}" if edit.after else "")
    if isinstance(edit, ModifyNode):
        return f"modify {edit.node_id!r}"
    if isinstance(edit, RemoveNode):
        return f"remove {edit.node_id!r}"
    if isinstance(edit, Rewire):
        return "rewire"
    return "edit"


def _fail(kind: ProblemKind, message: str, node_id: str | None = None) -> WorkflowError:
    return WorkflowError([Problem(node_id, kind, message)])


def _require(wf: Workflow, node_id: str, what: str) -> None:
    if not wf.has_node(node_id):
        known = ", ".join(n.id for n in wf.nodes) or "(none)"
        raise _fail(MISSING_NODE, f"cannot {what}: there is no node {node_id!r} — existing nodes: {known}", node_id)


def _op(wf: Workflow, node_id: str) -> type[AnyOperator] | None:
    return operator_or_none(wf.node(node_id).op)


def _out_type(wf: Workflow, node_id: str) -> PortType | None:
    op_cls = _op(wf, node_id)
    return op_cls.output if op_cls else None


def _port_type(wf: Workflow, node_id: str, port: str) -> tuple[PortType, bool] | None:
    op_cls = _op(wf, node_id)
    if op_cls is None or port not in op_cls.inputs:
        return None
    p = op_cls.inputs[port]
    return p.type, p.many


def _feeds(wf: Workflow, source: str, target: str, port: str) -> bool:
    produced = _out_type(wf, source)
    expected = _port_type(wf, target, port)
    return produced is not None and expected is not None and fits(produced, expected[0])


def _add_edge(edges: list[Edge], edge: Edge) -> None:
    if not any(e.source == edge.source and e.target == edge.target and e.port == edge.port for e in edges):
        edges.append(edge)


def _apply_add(wf: Workflow, edit: AddNode) -> Workflow:
    node = edit.node
    if wf.has_node(node.id):
        raise _fail(DUPLICATE_NODE, f"cannot add node {node.id!r}: that id is taken — choose another id", node.id)
    for e in edit.inputs:
        if e.target != node.id:
            raise _fail(
                BAD_EDIT,
                f"cannot add node {node.id!r}: its input edge from {e.source!r} targets {e.target!r} — "
                f"inputs of an added node must target the node itself",
                node.id,
            )
        _require(wf, e.source, f"add node {node.id!r} with an input from {e.source!r}")
    nodes = [*wf.nodes, node.model_copy(deep=True)]
    edges = [e.model_copy() for e in wf.edges]
    for e in edit.inputs:
        _add_edge(edges, e.model_copy())
    out = wf.output
    new = wf.model_copy(update={"nodes": nodes, "edges": edges}, deep=True)
    if edit.after is None:
        return new

    after = edit.after
    _require(wf, after, f"add node {node.id!r} after {after!r}")
    op_cls = operator_or_none(node.op)
    produced = _out_type(wf, after)
    if op_cls is None or produced is None:
        # validation reports the unknown operator; nothing sensible to wire
        return new
    taken = {e.port for e in edit.inputs}
    port = next(
        (name for name, p in op_cls.inputs.items() if fits(produced, p.type) and (p.many or name not in taken)),
        None,
    )
    if port is None:
        accepts = ", ".join(f"{n} ({p.type.value})" for n, p in op_cls.inputs.items()) or "no inputs"
        raise _fail(
            TYPE_MISMATCH,
            f"cannot add {node.id!r} ({node.op}) after {after!r}: {after!r} produces {produced.value} but "
            f"{node.op} takes {accepts} — insert it after a node of a fitting type",
            node.id,
        )
    _add_edge(new.edges, Edge(source=after, target=node.id, port=port))
    # consumers of `after` move behind the new node where the new node's output fits their port
    for e in list(new.edges):
        if e.source == after and e.target != node.id and _feeds(new, node.id, e.target, e.port):
            new.edges.remove(e)
            _add_edge(new.edges, Edge(source=node.id, target=e.target, port=e.port))
    if out == after and fits(op_cls.output, produced):
        new.output = node.id
    return new


def _apply_modify(wf: Workflow, edit: ModifyNode) -> Workflow:
    _require(wf, edit.node_id, "modify it")
    new = wf.model_copy(deep=True)
    node = new.node(edit.node_id)
    params = dict(node.params)
    if edit.op is not None and edit.op != node.op:
        # old params belong to another operator: keep only the ones the new operator also has
        new_cls = operator_or_none(edit.op)
        keep = set(new_cls.Params.model_fields) if new_cls else set()
        params = {k: v for k, v in params.items() if k in keep}
        node.op = edit.op
        if new_cls is not None:
            _remap_ports(new, edit.node_id, new_cls)
    node.params = dict(edit.params) if edit.replace else {**params, **edit.params}
    return new


def _can_stand_in(produced: PortType | None, removed: PortType) -> bool:
    # as the workflow's result any paper list can replace another (the UI shows papers either way);
    # across kinds (keywords for papers) it cannot
    if produced is None:
        return False
    return fits(produced, removed) or (fits(produced, PortType.PAPERS) and fits(removed, PortType.PAPERS))


def _remap_ports(wf: Workflow, node_id: str, op_cls: type[AnyOperator]) -> None:
    """After an operator swap, move edges on ports the new operator lacks to the first free port whose
    type fits (``in`` → ``papers``, say); edges with no such port stay and validation names them."""
    for e in [e for e in wf.edges if e.target == node_id and e.port not in op_cls.inputs]:
        produced = _out_type(wf, e.source)
        fed = {x.port for x in wf.edges if x.target == node_id and x.port in op_cls.inputs}
        port = next(
            (n for n, p in op_cls.inputs.items() if produced and fits(produced, p.type) and (p.many or n not in fed)),
            None,
        )
        if port is not None:
            e.port = port


def _apply_remove(wf: Workflow, edit: RemoveNode) -> Workflow:
    nid = edit.node_id
    _require(wf, nid, "remove it")
    # a self-loop (possible mid-sequence in apply_edits) goes with the node; it has nothing to bridge
    incoming = [e for e in wf.edges if e.target == nid and e.source != nid]
    # what flows *through* the node (its main "in" port) stands in for it first, before side inputs such as
    # a neighbourhood step's seeds or a re-ranker's anchor
    incoming.sort(key=lambda e: e.port != "in")
    outgoing = [e for e in wf.edges if e.source == nid and e.target != nid]
    new = wf.model_copy(
        update={
            "nodes": [n for n in wf.nodes if n.id != nid],
            "edges": [e for e in wf.edges if nid not in (e.source, e.target)],
        },
        deep=True,
    )
    if edit.bridge:
        for out_e in outgoing:
            expected = _port_type(new, out_e.target, out_e.port)
            if expected is None:
                continue
            for in_e in incoming:
                already = any(e.target == out_e.target and e.port == out_e.port for e in new.edges)
                if already and not expected[1]:
                    break
                if _feeds(new, in_e.source, out_e.target, out_e.port):
                    _add_edge(new.edges, Edge(source=in_e.source, target=out_e.target, port=out_e.port))
    if wf.output == nid:
        removed_type = _out_type(wf, nid)
        heir = next(
            (
                e.source
                for e in incoming
                if removed_type is None or _can_stand_in(_out_type(wf, e.source), removed_type)
            ),
            None,
        )
        if heir is None:
            raise _fail(
                NO_OUTPUT,
                f"cannot remove {nid!r}: it is the workflow's output and none of its inputs produces "
                f"{removed_type.value if removed_type else 'a value'} to take its place — "
                f"set another node as the output first (rewire with output=...)",
                nid,
            )
        new.output = heir
    return new


def _apply_rewire(wf: Workflow, edit: Rewire) -> Workflow:
    new = wf.model_copy(deep=True)
    for r in edit.remove:
        match = [e for e in new.edges if e.source == r.source and e.target == r.target and e.port == r.port]
        if not match:
            raise _fail(
                MISSING_NODE,
                f"cannot remove edge {r.source} → {r.target}.{r.port}: no such edge — check the node ids and port",
                r.target,
            )
        new.edges.remove(match[0])
    for a in edit.add:
        _require(new, a.source, f"add edge {a.source} → {a.target}.{a.port}")
        _require(new, a.target, f"add edge {a.source} → {a.target}.{a.port}")
        _add_edge(new.edges, a.model_copy())
    if edit.output is not None:
        _require(new, edit.output, "make it the output")
        new.output = edit.output
    return new


def _apply_unchecked(wf: Workflow, data: Any) -> Workflow:
    edit = parse_edit(data)
    if isinstance(edit, AddNode):
        return _apply_add(wf, edit)
    if isinstance(edit, ModifyNode):
        return _apply_modify(wf, edit)
    if isinstance(edit, RemoveNode):
        return _apply_remove(wf, edit)
    return _apply_rewire(wf, edit)


def apply_edit(workflow: Workflow, edit: Any) -> Workflow:
    """A new, valid workflow with ``edit`` applied, or ``WorkflowError`` saying why not.

    ``edit`` may be an edit model, a dict or a JSON string.
    """
    parsed = parse_edit(edit)
    context = f"edit '{describe_edit(parsed)}'"
    try:
        new = _apply_unchecked(workflow, parsed)
    except WorkflowError as exc:
        raise WorkflowError(exc.problems, context) from None
    return validate(new, context=f"{context} would leave the workflow invalid")


def apply_edits(workflow: Workflow, edits: Iterable[Any]) -> Workflow:
    """Apply a sequence all-or-nothing; the result must be valid (intermediate states need not be)."""
    new = workflow
    items = list(edits)
    for i, edit in enumerate(items, 1):
        parsed = parse_edit(edit)
        try:
            new = _apply_unchecked(new, parsed)
        except WorkflowError as exc:
            raise WorkflowError(exc.problems, f"edit {i} of {len(items)} '{describe_edit(parsed)}'") from None
    return validate(new, context=f"after {len(items)} edit(s) the workflow would be invalid")


def parse_edit(data: Any) -> AddNode | ModifyNode | RemoveNode | Rewire:
    """An edit from a model, a dict or JSON text; malformed input gives a ``WorkflowError`` saying what to fix."""
    if isinstance(data, (AddNode, ModifyNode, RemoveNode, Rewire)):
        return data
    data = load_json(data, "the edit", BAD_EDIT, dict)
    if data.get("action") not in _ACTIONS:
        raise _fail(
            BAD_EDIT,
            f'an edit needs "action" set to one of {", ".join(_ACTIONS)} (got {data.get("action")!r})',
        )
    try:
        return _EDIT_ADAPTER.validate_python(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = ".".join(str(p) for p in err["loc"][1:]) or "(edit)"  # loc[0] is the union tag
            problems.append(
                Problem(data.get("node_id"), BAD_EDIT, f"{data['action']} edit: field {loc!r}: {err['msg']}")
            )
        raise WorkflowError(problems, "malformed edit") from None


def parse_edits(data: Any) -> list[AddNode | ModifyNode | RemoveNode | Rewire]:
    """A list of edits from a list or JSON array text (a single object is accepted as a one-item list)."""
    data = load_json(data, "the edits", BAD_EDIT, (list, dict))
    if isinstance(data, dict):
        data = [data]
    return [parse_edit(d) for d in data]
