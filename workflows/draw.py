"""A workflow as a picture for the UI: Mermaid text, a self-contained SVG, or Graphviz DOT.

The SVG is laid out here in Python (layers left to right by longest path from a source, rows ordered by
the barycentre of their producers) so the UI needs no JavaScript or external tool. A run trace colours
the nodes: failed red, cached blue and dashed, skipped grey. Every string that came from a user, an LLM
or a source (ids, params, errors) is XML-escaped before it goes into the markup.
"""

from __future__ import annotations

import html
import json
from itertools import accumulate, pairwise

from workflows.diff import short
from workflows.graph import depths
from workflows.model import Node, NodeTrace, RunTrace, Workflow
from workflows.registry import operator_or_none

NODE_W = 196
NODE_H = 78
GAP_X = 72
GAP_Y = 26
PAD = 16
LINE_H = 15
_PARAMS_CHARS = 30

BUS_W = 28  # width of a lane that only carries long edges (vertical layout)
SELECTED = "#b8860b"  # the selected node's halo (dark goldenrod), distinct from every status colour
STYLE = {  # status -> (fill, stroke, text colour, dash)
    None: ("#ffffff", "#555555", "#222222", ""),
    "ok": ("#edf7ee", "#2e7d32", "#1b3d1f", ""),
    "cached": ("#eaf1fb", "#3b6fb6", "#1a3559", "5 3"),
    "failed": ("#fde2e2", "#c62828", "#6d1212", ""),
    "skipped": ("#eeeeee", "#9e9e9e", "#6b6b6b", "2 3"),
}


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _by_node(trace: RunTrace | None) -> dict[str, NodeTrace]:
    return {t.node_id: t for t in trace.nodes} if trace else {}


def params_label(node: Node, limit: int = _PARAMS_CHARS) -> str:
    """The node's explicitly set params, shortened for a box."""
    text = ", ".join(f"{k}={short(v, 16)}" for k, v in node.params.items())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def status_label(t: NodeTrace | None) -> str:
    if t is None:
        return ""
    if t.status in ("failed", "skipped"):
        return t.status
    return f"{t.status} · {t.seconds:.2f}s · {t.n_in}→{t.n_out}"


def _layout(workflow: Workflow) -> tuple[dict[str, tuple[int, int]], dict[int, list[tuple[int, int]]]]:
    """(column, row) per node, and for each edge spanning several columns the empty slots it runs through.

    Long edges get virtual nodes in the columns they cross (as in a Sugiyama layout), so they never pass
    behind a box and look like they enter it. Tolerates cycles and dangling edges so drafts can be drawn.
    Linear in nodes + edges + virtual nodes: every step reads adjacency maps, never scans all links.
    """
    ids = [n.id for n in workflow.nodes]
    known = set(ids)
    edges = [
        (i, e.source, e.target)
        for i, e in enumerate(workflow.edges)
        if e.source in known and e.target in known and e.source != e.target
    ]
    depth = depths(workflow)
    # chain of (virtual) nodes per edge; virtual nodes are tuples, so they cannot collide with node ids
    chains: dict[int, list] = {}
    col_of: dict = dict(depth)
    links: dict[tuple, None] = {}  # ordered set of (from, to) pairs: linear de-duplication
    for i, s, t in edges:
        if depth[t] > depth[s] + 1:
            # one virtual chain per source ("bus"): long edges from the same node share their path until
            # they branch off, so an anchor feeding five later steps costs one row, not five
            virtual = [("via", s, c) for c in range(depth[s] + 1, depth[t])]
            for v in virtual:
                col_of[v] = v[2]
            chain = [s, *virtual, t]
            chains[i] = virtual
        else:
            chain = [s, t]
        links.update(dict.fromkeys(pairwise(chain)))
    into: dict = {}  # node -> the (virtual) nodes linked into it, so each node reads only its own links
    for a, b in links:
        into.setdefault(b, []).append(a)
    columns: dict[int, list] = {}
    for n in col_of:
        columns.setdefault(col_of[n], []).append(n)
    order = {n: k for k, n in enumerate(col_of)}
    row: dict = {}
    for col in sorted(columns):
        members = columns[col]
        for i, n in enumerate(members):
            preds = [row[a] for a in into.get(n, ()) if a in row]
            row[n] = sum(preds) / len(preds) if preds else float(i)
        members.sort(key=lambda n: (row[n], order[n]))
        for i, n in enumerate(members):
            row[n] = float(i)
    pos = {n: (depth[n], int(row[n])) for n in ids}
    routes = {i: [(v[2], int(row[v])) for v in virtual] for i, virtual in chains.items()}
    return pos, routes


def layout(workflow: Workflow) -> dict[str, tuple[int, int]]:
    """(column, row) of each node in the drawing."""
    return _layout(workflow)[0]


def to_svg(
    workflow: Workflow, trace: RunTrace | None = None, selected: str | None = None, vertical: bool = False
) -> str:
    """The DAG as SVG. ``vertical`` lays the steps out top to bottom (a narrow panel fits a long plan
    that way: its width is the widest layer, not the number of steps); ``selected`` is drawn highlighted."""
    pos, routes = _layout(workflow)
    traces = _by_node(trace)
    slots = [*pos.values(), *(p for r in routes.values() for p in r)]
    n_cols = max((c for c, _ in slots), default=0) + 1
    n_rows = max((r for _, r in slots), default=0) + 1
    gap_x, gap_y = (GAP_Y + 10, GAP_X - 24) if vertical else (GAP_X, GAP_Y)
    across, down = (n_rows, n_cols) if vertical else (n_cols, n_rows)
    # top to bottom, a lane that only long edges pass through is as narrow as a line, not a box wide
    real = {r for _, r in pos.values()}
    lane_w = [NODE_W if not vertical or r in real else BUS_W for r in range(across)]
    lane_x = [PAD + before + r * gap_x for r, before in enumerate(accumulate(lane_w, initial=0))][:across]
    width = PAD * 2 + sum(lane_w) + (across - 1) * gap_x
    height = PAD * 2 + down * NODE_H + (down - 1) * gap_y

    def at(c: int, r: int) -> tuple[int, int]:
        if vertical:
            return lane_x[r], PAD + c * (NODE_H + gap_y)
        return PAD + c * (NODE_W + gap_x), PAD + r * (NODE_H + gap_y)

    def mid(c: int, r: int) -> int:
        """x of the centre line of a (virtual) slot in the vertical layout."""
        return at(c, r)[0] + lane_w[r] // 2

    def xy(nid: str) -> tuple[int, int]:
        return at(*pos[nid])

    def curve(ax: int, ay: int, bx: int, by: int) -> str:
        if vertical:
            bend = max(18, (by - ay) // 2)
            return f"C{ax},{ay + bend} {bx},{by - bend} {bx},{by}"
        bend = max(24, (bx - ax) // 2)
        return f"C{ax + bend},{ay} {bx - bend},{by} {bx},{by}"

    def exit_point(x: int, y: int) -> tuple[int, int]:
        return (x + NODE_W // 2, y + NODE_H) if vertical else (x + NODE_W, y + NODE_H // 2)

    def entry_point(x: int, y: int, slot: int, of: int) -> tuple[int, int]:
        if vertical:
            return x + slot * NODE_W // (of + 1), y
        return x, y + slot * NODE_H // (of + 1)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="pilot-workflow" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="system-ui, sans-serif" font-size="12">',
        f"<title>{_esc(workflow.name or 'workflow')}</title>",
        '<defs><marker id="pilot-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#666"/></marker></defs>',
    ]
    drawn = [(i, e) for i, e in enumerate(workflow.edges) if e.source in pos and e.target in pos]
    incoming: dict[str, list] = {}
    slot_of: dict[int, int] = {}  # edge index -> its place among the target's inputs (1-based)
    for i, e in drawn:
        incoming.setdefault(e.target, []).append(e)
        slot_of[i] = len(incoming[e.target])
    for i, e in drawn:
        # spread a node's inputs along its entry side (in edge order) so ports stay readable
        siblings = incoming[e.target]
        sx, sy = exit_point(*xy(e.source))
        tx, ty = entry_point(*xy(e.target), slot_of[i], len(siblings))
        d = [f"M{sx},{sy}"]
        for c, r in routes.get(i, []):  # through the empty slots of the layers it crosses
            vx, vy = at(c, r)
            if vertical:
                d += [curve(sx, sy, mid(c, r), vy), f"L{mid(c, r)},{vy + NODE_H}"]
                sx, sy = mid(c, r), vy + NODE_H
            else:
                d += [curve(sx, sy, vx, vy + NODE_H // 2), f"L{vx + NODE_W},{vy + NODE_H // 2}"]
                sx, sy = vx + NODE_W, vy + NODE_H // 2
        d.append(curve(sx, sy, tx, ty))
        src_trace = traces.get(e.source)
        src_status = src_trace.status if src_trace is not None else None
        dash = ' stroke-dasharray="4 3"' if src_status in ("failed", "skipped") else ""
        out.append(
            f'<path class="edge" data-source="{_esc(e.source)}" data-target="{_esc(e.target)}" '
            f'd="{" ".join(d)}" fill="none" stroke="#666" '
            f'stroke-width="1.4"{dash} marker-end="url(#pilot-arrow)"/>'
        )
        if e.port != "in":
            lx, ly, anchor = (tx + 4, ty - 4, "start") if vertical else (tx - 6, ty - 6, "end")
            out.append(
                f'<text x="{lx}" y="{ly}" text-anchor="{anchor}" fill="#555" font-size="10">{_esc(e.port)}</text>'
            )
    for node in workflow.nodes:
        if node.id not in pos:
            continue
        x, y = xy(node.id)
        t = traces.get(node.id)
        status = t.status if t else None
        fill, stroke, ink, dash = STYLE.get(status, STYLE[None])
        is_out = node.id == workflow.output
        is_selected = node.id == selected
        op_cls = operator_or_none(node.op)
        what = op_cls.description if op_cls else "unknown operator"
        tip = [f"{node.id} ({node.op}): {what}", json.dumps(node.params, ensure_ascii=False, default=str)]
        if t is not None:
            tip += [x for x in (status_label(t), t.error, t.note) if x]
        classes = f"node status-{status or 'none'}" + (" selected" if is_selected else "")
        out.append(f'<g class="{classes}" data-node="{_esc(node.id)}">')
        out.append(f"<title>{_esc(chr(10).join(tip))}</title>")
        if is_selected:
            out.append(
                f'<rect x="{x - 6}" y="{y - 6}" width="{NODE_W + 12}" height="{NODE_H + 12}" rx="11" '
                f'fill="#ffe58a" fill-opacity="0.55" stroke="{SELECTED}" stroke-width="3"/>'
            )
        elif is_out:
            out.append(
                f'<rect x="{x - 3}" y="{y - 3}" width="{NODE_W + 6}" height="{NODE_H + 6}" rx="9" fill="none" '
                f'stroke="{stroke}" stroke-width="1"/>'
            )
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(
            f'<rect x="{x}" y="{y}" width="{NODE_W}" height="{NODE_H}" rx="7" fill="{fill}" stroke="{stroke}" '
            f'stroke-width="{2 if is_out else 1.4}"{dash_attr}/>'
        )
        lines = [
            (f"{node.label or node.id}" + ("  ⇒ output" if is_out else ""), "bold", 12),
            (node.op, "normal", 11),
            (params_label(node), "normal", 10),
            (status_label(t), "normal", 10),
        ]
        for i, (text, weight, size) in enumerate(lines):
            if text:
                out.append(
                    f'<text x="{x + 9}" y="{y + 17 + i * LINE_H}" fill="{ink}" font-weight="{weight}" '
                    f'font-size="{size}">{_esc(short(text, 32))}</text>'
                )
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out)


def _mermaid_text(text: str) -> str:
    # Mermaid entity codes (#NNN;) for anything that could end a label or open markup
    return "".join(c if c.isalnum() or c in " _.,:=-/+*·→" else f"#{ord(c)};" for c in text)


def to_mermaid(workflow: Workflow, trace: RunTrace | None = None) -> str:
    traces = _by_node(trace)
    ids = {n.id: f"n{i}" for i, n in enumerate(workflow.nodes)}
    lines = ["flowchart LR"]
    for node in workflow.nodes:
        parts = [node.label or node.id, node.op, params_label(node), status_label(traces.get(node.id))]
        label = "<br/>".join(_mermaid_text(p) for p in parts if p)
        shape = ('(["', '"])') if node.id == workflow.output else ('["', '"]')
        lines.append(f"    {ids[node.id]}{shape[0]}{label}{shape[1]}")
    for e in workflow.edges:
        if e.source in ids and e.target in ids:
            arrow = f"-->|{_mermaid_text(e.port)}|" if e.port != "in" else "-->"
            lines.append(f"    {ids[e.source]} {arrow} {ids[e.target]}")
    lines += [
        "    classDef failed fill:#fde2e2,stroke:#c62828,color:#6d1212",
        "    classDef cached fill:#eaf1fb,stroke:#3b6fb6,stroke-dasharray:5 3",
        "    classDef skipped fill:#eeeeee,stroke:#9e9e9e,color:#6b6b6b",
        "    classDef ok fill:#edf7ee,stroke:#2e7d32",
    ]
    for nid, t in traces.items():
        if nid in ids:
            lines.append(f"    class {ids[nid]} {t.status}")
    return "\n".join(lines)


def to_dot(workflow: Workflow, trace: RunTrace | None = None) -> str:
    traces = _by_node(trace)

    def q(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'

    lines = ["digraph workflow {", "  rankdir=LR;", "  node [shape=box, style=rounded];"]
    for node in workflow.nodes:
        t = traces.get(node.id)
        fill, stroke, _, _ = STYLE.get(t.status if t else None, STYLE[None])
        label = "\n".join(p for p in (node.id, node.op, params_label(node), status_label(t)) if p)
        periph = ", peripheries=2" if node.id == workflow.output else ""
        lines.append(
            f'  {q(node.id)} [label={q(label)}, style="rounded,filled", fillcolor="{fill}", color="{stroke}"{periph}];'
        )
    for e in workflow.edges:
        lab = f" [label={q(e.port)}]" if e.port != "in" else ""
        lines.append(f"  {q(e.source)} -> {q(e.target)}{lab};")
    lines.append("}")
    return "\n".join(lines)
