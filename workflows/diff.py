"""What changed between two versions of a workflow, for the UI, the session notes and the metrics.

Both sides are normalised first (defaults filled in), so spelling out a default is not a change.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from workflows.model import Edge, Node, Workflow
from workflows.validate import normalize

_MAX_VALUE_CHARS = 40


def short(value: Any, limit: int = _MAX_VALUE_CHARS) -> str:
    """A value as a short human string (lists and long text are cut with an ellipsis)."""
    if value is None:
        text = "none"
    elif isinstance(value, str):
        text = value or "none"
    elif isinstance(value, bool):
        text = "yes" if value else "no"
    elif isinstance(value, (list, tuple)):
        text = "[" + ", ".join(short(v, limit) for v in value[:4]) + (", …" if len(value) > 4 else "") + "]"
    else:
        text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _param_lines(p: ParamChange) -> str:
    """``year_min 2005 → 2008``; a dict param (score features, caps) shows only its changed keys:
    ``features.dense 1 → 1.5, features.recency +0.5`` rather than two cut-off dicts."""
    if isinstance(p.before, dict) or isinstance(p.after, dict):
        before, after = p.before if isinstance(p.before, dict) else {}, p.after if isinstance(p.after, dict) else {}
        keys = [k for k in {**before, **after} if before.get(k) != after.get(k)]
        if keys:
            return ", ".join(
                f"{p.name}.{k} "
                + (
                    f"{short(before[k])} → {short(after[k])}"
                    if k in before and k in after
                    else f"+{short(after[k])}"
                    if k in after
                    else "removed"
                )
                for k in keys
            )
    return f"{p.name} {short(p.before)} → {short(p.after)}"


class ParamChange(BaseModel):
    name: str
    before: Any = None
    after: Any = None


class NodeChange(BaseModel):
    node_id: str
    op_before: str
    op_after: str
    params: list[ParamChange] = Field(default_factory=list)
    label_before: str | None = None
    label_after: str | None = None


def _edge_text(e: Edge) -> str:
    return f"{e.source} → {e.target}" + (f".{e.port}" if e.port != "in" else "")


class WorkflowDiff(BaseModel):
    added_nodes: list[Node] = Field(default_factory=list)
    removed_nodes: list[Node] = Field(default_factory=list)
    modified_nodes: list[NodeChange] = Field(default_factory=list)
    added_edges: list[Edge] = Field(default_factory=list)
    removed_edges: list[Edge] = Field(default_factory=list)
    output_before: str | None = None
    output_after: str | None = None

    @property
    def output_changed(self) -> bool:
        return self.output_before != self.output_after

    @property
    def empty(self) -> bool:
        return not (
            self.added_nodes
            or self.removed_nodes
            or self.modified_nodes
            or self.added_edges
            or self.removed_edges
            or self.output_changed
        )

    def counts(self) -> dict[str, int]:
        """Sizes for metrics (e.g. how much a user edited the induced workflow)."""
        return {
            "nodes_added": len(self.added_nodes),
            "nodes_removed": len(self.removed_nodes),
            "nodes_modified": len(self.modified_nodes),
            "params_changed": sum(len(c.params) for c in self.modified_nodes),
            "edges_added": len(self.added_edges),
            "edges_removed": len(self.removed_edges),
            "output_changed": int(self.output_changed),
        }

    def summary(self) -> list[str]:
        """One human line per change, e.g. ``modified filter_year: year_min 2005 → 2008``."""
        lines: list[str] = []
        for n in self.added_nodes:
            params = ", ".join(f"{k}={short(v)}" for k, v in n.params.items())
            lines.append(f"added {n.id} ({n.op}" + (f": {params}" if params else "") + ")")
        for n in self.removed_nodes:
            lines.append(f"removed {n.id} ({n.op})")
        for c in self.modified_nodes:
            parts = []
            if c.op_before != c.op_after:
                parts.append(f"operator {c.op_before} → {c.op_after}")
            parts.extend(_param_lines(p) for p in c.params)
            if c.label_before != c.label_after:
                parts.append(f"label {short(c.label_before)} → {short(c.label_after)}")
            lines.append(f"modified {c.node_id}: " + "; ".join(parts))
        lines.extend(f"connected {_edge_text(e)}" for e in self.added_edges)
        lines.extend(f"disconnected {_edge_text(e)}" for e in self.removed_edges)
        if self.output_changed:
            lines.append(f"output {self.output_before or 'none'} → {self.output_after or 'none'}")
        return lines


def diff(a: Workflow, b: Workflow) -> WorkflowDiff:
    """Changes that turn ``a`` into ``b``. Added / removed nodes keep their params as written (short)."""
    a_raw = {n.id: n for n in a.nodes}
    b_raw = {n.id: n for n in b.nodes}
    a, b = normalize(a), normalize(b)
    a_nodes = {n.id: n for n in a.nodes}
    b_nodes = {n.id: n for n in b.nodes}
    modified = []
    for nid, before in a_nodes.items():
        after = b_nodes.get(nid)
        if after is None:
            continue
        names = list(dict.fromkeys([*before.params, *after.params]))
        params = [
            ParamChange(name=k, before=before.params.get(k), after=after.params.get(k))
            for k in names
            if before.params.get(k) != after.params.get(k)
        ]
        if params or before.op != after.op or before.label != after.label:
            modified.append(
                NodeChange(
                    node_id=nid,
                    op_before=before.op,
                    op_after=after.op,
                    params=params,
                    label_before=before.label,
                    label_after=after.label,
                )
            )

    def key(e: Edge) -> tuple[str, str, str]:
        return (e.source, e.target, e.port)

    a_edges = {key(e) for e in a.edges}
    b_edges = {key(e) for e in b.edges}
    return WorkflowDiff(
        added_nodes=[n for nid, n in b_raw.items() if nid not in a_nodes],
        removed_nodes=[n for nid, n in a_raw.items() if nid not in b_nodes],
        modified_nodes=modified,
        added_edges=[e for e in b.edges if key(e) not in a_edges],
        removed_edges=[e for e in a.edges if key(e) not in b_edges],
        output_before=a.output,
        output_after=b.output,
    )
