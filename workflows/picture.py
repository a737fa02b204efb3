"""The workflow as the UI draws it: readable at the size of the panel, whatever the number of steps.

``workflows.draw`` lays a workflow out as one long row (or column) of layers, so a 25-step plan shrinks to
labels a few pixels high when it is fitted into a panel. Here:

- the searches that feed one merge (and the steps before them that feed nothing else) are **one box**, "7
  searches in parallel", that opens when clicked (``open_groups``);
- the layers **wrap into bands** that snake down the panel (left to right, then right to left, …); the page is
  sent a few variants (2, 3, 4… layers a band) and shows the one that fits its panel best (``render.DAG_JS``),
  so a wide panel gets few tall bands and a phone many short ones, at the same type size;
- every label is in words (``workflows.wording``) and at least ``MIN_FONT`` px at full size: the page never shows
  a variant below ``FIT_SCALE_MIN`` of that, scrolling instead of shrinking further.

Edges between neighbouring layers of a band are curves, the turn from one band to the next runs down the margin,
and every other edge runs orthogonally in the gaps between columns and in the channel above its target's band,
so no line crosses a box. A side input that skips layers (the anchor paper, which many steps also read) is not
drawn: the step list beside the picture names it for each step. Every string that came from a user, an LLM or a
source is XML-escaped before it reaches the markup.

    variants = picture(workflow, trace, selected="filter", open_groups=[])   # [Variant(per_row, width, height, svg)]
"""

from __future__ import annotations

import html
import textwrap
from dataclasses import dataclass, field

from workflows.draw import SELECTED, STYLE
from workflows.graph import ancestors
from workflows.model import NodeTrace, RunTrace, Workflow
from workflows.registry import operator_or_none
from workflows.wording import step_name

BOX_W = 182
BOX_H = 60
COL_GAP = 32
ROW_GAP = 12
PAD_X = 30  # room for the lines that turn down a band's margin
PAD_Y = 14
LANE = 5  # distance between parallel lines in a gap or a channel
CHANNEL = 18  # the empty height of the channel above a band (more with every line it carries)
NAME_FONT = 14
SUB_FONT = 13
MIN_FONT = min(NAME_FONT, SUB_FONT)
LINE_CHARS = 19  # characters of a 14 px name that fit a box's line
MIN_GROUP = 3  # a group smaller than this is not worth a box of its own
# the page shows a variant no smaller than this, so that 13 px labels stay >= 11 px on screen
FIT_SCALE_MIN = 11 / MIN_FONT


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


# --- groups -------------------------------------------------------------------------------------------------


def groups(wf: Workflow) -> dict[str, list[str]]:
    """Merge step id -> the steps of its parallel branches: the ancestors of a merge that are not upstream of all
    its inputs (the anchor, a shared keyword step) and feed nothing but the merge and each other."""
    out: dict[str, list[str]] = {}
    taken: set[str] = set()
    consumers: dict[str, set[str]] = {}
    for e in wf.edges:
        consumers.setdefault(e.source, set()).add(e.target)
    for node in wf.nodes:
        if node.op not in ("union", "intersect"):
            continue
        inputs = [e.source for e in wf.inputs_of(node.id) if wf.has_node(e.source)]
        if len(inputs) < 2:
            continue
        upstream = [ancestors(wf, i) | {i} for i in inputs]
        common = set.intersection(*upstream)
        members = (set().union(*upstream) - common) - taken
        changed = True
        while changed:  # drop what also feeds a step outside the group, until nothing changes
            changed = False
            for m in list(members):
                if not consumers.get(m, set()) <= members | {node.id}:
                    members.discard(m)
                    changed = True
        if len(members) >= MIN_GROUP:
            order = [n.id for n in wf.nodes if n.id in members]
            out[node.id] = order
            taken |= members
    return out


def main_port(wf: Workflow, node_id: str) -> str:
    """The input a step works on (its first declared port that has an edge: a search's keywords or its anchor, a
    filter's "in"); the others are side inputs (the anchor a filter also reads)."""
    op = operator_or_none(wf.node(node_id).op)
    connected = {e.port for e in wf.inputs_of(node_id)}
    declared = list(op.inputs) if op is not None else ["in"]
    return next((p for p in declared if p in connected), "in")


# --- the view graph -----------------------------------------------------------------------------------------


@dataclass
class Box:
    id: str  # a step id, or "group:<merge id>"
    members: list[str]
    layer: int = 0
    band: int = 0
    col: int = 0
    row: int = 0
    x: int = 0
    y: int = 0

    @property
    def is_group(self) -> bool:
        return self.id.startswith("group:")


@dataclass
class Variant:
    per_row: int
    width: int
    height: int
    svg: str


@dataclass
class _View:
    boxes: dict[str, Box] = field(default_factory=dict)
    edges: list[tuple[str, str, bool]] = field(default_factory=list)  # (from box, to box, main input)


def _view(wf: Workflow, open_groups: list[str]) -> _View:
    grouped = {m: f"group:{g}" for g, members in groups(wf).items() if g not in open_groups for m in members}
    view = _View()
    for node in wf.nodes:
        box = grouped.get(node.id, node.id)
        view.boxes.setdefault(box, Box(id=box, members=[]))
        view.boxes[box].members.append(node.id)
    seen: set[tuple[str, str]] = set()
    for e in wf.edges:
        if not (wf.has_node(e.source) and wf.has_node(e.target)):
            continue
        a, b = grouped.get(e.source, e.source), grouped.get(e.target, e.target)
        if a == b or (a, b) in seen:
            continue
        seen.add((a, b))
        view.edges.append((a, b, e.port == main_port(wf, e.target)))
    _layers(view)
    # a side input that skips layers is listed, not drawn (see the module's docstring)
    view.edges = [(a, b, main) for a, b, main in view.edges if main or view.boxes[b].layer == view.boxes[a].layer + 1]
    return view


def _layers(view: _View) -> None:
    """Longest-path layers; tolerates cycles (a draft) by capping the walk."""
    into: dict[str, list[str]] = {}
    for a, b, _ in view.edges:
        into.setdefault(b, []).append(a)
    depth: dict[str, int] = {}

    def walk(box: str, trail: frozenset[str]) -> int:
        if box in depth:
            return depth[box]
        preds = [p for p in into.get(box, []) if p not in trail]
        d = 1 + max((walk(p, trail | {box}) for p in preds), default=-1)
        depth[box] = d
        return d

    for box in view.boxes:
        view.boxes[box].layer = walk(box, frozenset())


# --- layout ---------------------------------------------------------------------------------------------------


def _place(view: _View, per_row: int) -> tuple[int, int, dict[int, int]]:
    """Positions every box for ``per_row`` layers a band, odd bands running right to left; returns (width,
    height, the top y of each band)."""
    layers: dict[int, list[Box]] = {}
    for box in view.boxes.values():
        layers.setdefault(box.layer, []).append(box)
    order = {b: i for i, b in enumerate(view.boxes)}
    into: dict[str, list[str]] = {}
    for a, b, _ in view.edges:
        into.setdefault(b, []).append(a)
    for layer in sorted(layers):
        members = layers[layer]
        # barycentre of the producers' rows keeps lines short and mostly straight
        members.sort(
            key=lambda bx: (_mean([view.boxes[p].row for p in into.get(bx.id, [])], order[bx.id]), order[bx.id])
        )
        for i, bx in enumerate(members):
            bx.row = i
            bx.band, bx.col = divmod(layer, per_row)
    n_bands = max((b.band for b in view.boxes.values()), default=0) + 1
    rows = {band: 1 for band in range(n_bands)}
    for bx in view.boxes.values():
        rows[bx.band] = max(rows[bx.band], bx.row + 1)
    lanes = {band: 0 for band in range(n_bands)}  # lines carried by the channel above each band
    for a, b, _ in view.edges:
        if _kind(view.boxes[a], view.boxes[b], per_row) == "routed":
            lanes[view.boxes[b].band] += 1
    top: dict[int, int] = {}
    y = PAD_Y
    for band in range(n_bands):
        y += CHANNEL + LANE * lanes[band] if band else LANE * lanes[band]
        top[band] = y
        y += rows[band] * BOX_H + (rows[band] - 1) * ROW_GAP
    height = y + PAD_Y
    cols = min(per_row, max((b.layer for b in view.boxes.values()), default=0) + 1)
    # one layer a band is a column: every line runs down its left margin, which is wider for it
    left = PAD_X + (COL_GAP if per_row == 1 else 0)
    width = left + PAD_X + cols * BOX_W + (cols - 1) * COL_GAP
    for bx in view.boxes.values():
        slot = bx.col if bx.band % 2 == 0 or per_row == 1 else cols - 1 - bx.col
        bx.x = left + slot * (BOX_W + COL_GAP)
        bx.y = top[bx.band] + bx.row * (BOX_H + ROW_GAP)
    return width, height, top


def _mean(values: list[int], default: int) -> float:
    return sum(values) / len(values) if values else float(default)


def _kind(a: Box, b: Box, per_row: int) -> str:
    """How an edge is drawn: "next" (neighbouring layers of a band), "turn" (last layer of a band to the first
    of the next: down the margin) or "routed" (through the gaps and the channel above ``b``'s band)."""
    if b.layer == a.layer + 1 and a.band == b.band:
        return "next"
    if b.layer == a.layer + 1 and b.band == a.band + 1 and a.col == per_row - 1 and b.col == 0:
        return "turn"
    return "routed"


# --- drawing ----------------------------------------------------------------------------------------------------


def _wrap(text: str, lines: int = 2) -> list[str]:
    out = textwrap.wrap(text, LINE_CHARS) or [""]
    if len(out) > lines:
        out = out[:lines]
        out[-1] = out[-1][: LINE_CHARS - 1].rstrip() + "…"
    return out


def status_words(t: NodeTrace | None, final: bool = False) -> str:
    """A step's last run in a few words ("316 found · cached"; the output step: "the list: 50")."""
    if t is None:
        return "the list · not run yet" if final else "not run yet"
    if t.status in ("failed", "skipped"):
        return t.status
    said = f"the list: {t.n_out}" if final else f"{t.n_out} found"
    return f"{said} · cached" if t.status == "cached" else said


def _group_status(members: list[str], traces: dict[str, NodeTrace]) -> str:
    seen = [traces[m].status for m in members if m in traces]
    if not seen:
        return "not run yet"
    if "failed" in seen:
        return f"{seen.count('failed')} failed"
    return "cached" if all(s == "cached" for s in seen) else "ran"


def _sides(box: Box, per_row: int) -> tuple[int, int]:
    """(x where edges leave the box, x where they enter it): a band runs right to left every other time; in a
    single column, lines leave and enter on the left."""
    right, left = box.x + BOX_W, box.x
    if per_row == 1:
        return left, left
    return (right, left) if box.band % 2 == 0 else (left, right)


def _path(a: Box, b: Box, per_row: int, lane_in: dict[int, int], gaps: dict[int, int], top: dict[int, int],
          slot: float) -> str:  # fmt: skip
    out_x, _ = _sides(a, per_row)
    _, in_x = _sides(b, per_row)
    ay, by = a.y + BOX_H // 2, b.y + int(BOX_H * slot)
    kind = _kind(a, b, per_row)
    if kind == "next":
        bend = (COL_GAP // 2 + 4) * (1 if in_x > out_x else -1)
        return f"M{out_x},{ay} C{out_x + bend},{ay} {in_x - bend},{by} {in_x},{by}"
    step_out = COL_GAP // 2 if out_x > a.x else -(COL_GAP // 2)
    step_in = -(COL_GAP // 2) if in_x == b.x else COL_GAP // 2

    def gap_x(x: int, step: int) -> int:
        # parallel lines in one gap sit LANE apart, around its middle
        k = gaps.get(x + step, 0) % 5
        gaps[x + step] = gaps.get(x + step, 0) + 1
        return x + step + ((k + 1) // 2) * LANE * (1 if k % 2 else -1)

    gx_out = gap_x(out_x, step_out)
    if kind == "turn":
        return f"M{out_x},{ay} L{gx_out},{ay} L{gx_out},{by} L{in_x},{by}"
    gx_in = gap_x(in_x, step_in)
    lane = lane_in[b.band]
    lane_in[b.band] += 1
    cy = top[b.band] - CHANNEL // 2 - LANE * lane
    return f"M{out_x},{ay} L{gx_out},{ay} L{gx_out},{cy} L{gx_in},{cy} L{gx_in},{by} L{in_x},{by}"


def _svg(wf: Workflow, view: _View, per_row: int, traces: dict[str, NodeTrace], selected: str | None) -> Variant:
    width, height, top = _place(view, per_row)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="pilot-picture" data-per-row="{per_row}" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'font-family="system-ui, -apple-system, Segoe UI, Roboto, Noto Sans, Liberation Sans, Arial, sans-serif">',
        f"<title>{_esc(wf.name or 'workflow')}</title>",
        f'<defs><marker id="pic-arrow-{per_row}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#666"/></marker></defs>',
    ]
    incoming: dict[str, list[str]] = {}
    for a, b, _ in view.edges:
        incoming.setdefault(b, []).append(a)
    lane_in: dict[int, int] = {band: 0 for band in top}
    gaps: dict[int, int] = {}
    for a, b, main in view.edges:
        ins = incoming[b]
        slot = (ins.index(a) + 1) / (len(ins) + 1)
        d = _path(view.boxes[a], view.boxes[b], per_row, lane_in, gaps, top, slot)
        colour, dash = ("#666", "") if main else ("#b5b5b5", ' stroke-dasharray="5 3"')
        out.append(
            f'<path class="edge" data-source="{_esc(a)}" data-target="{_esc(b)}" d="{d}" fill="none" '
            f'stroke="{colour}" stroke-width="1.4" stroke-linejoin="round"{dash} '
            f'marker-end="url(#pic-arrow-{per_row})"/>'
        )
    for box in view.boxes.values():
        out.append(_box_svg(wf, box, traces, selected))
    out.append("</svg>")
    return Variant(per_row=per_row, width=width, height=height, svg="\n".join(out))


def _box_svg(wf: Workflow, box: Box, traces: dict[str, NodeTrace], selected: str | None) -> str:
    x, y = box.x, box.y
    has_selected = selected in box.members
    parts = []
    if box.is_group:
        merge = box.id.removeprefix("group:")
        branches = [e.source for e in wf.inputs_of(merge) if e.source in box.members]
        sub = f"{len(box.members)} steps · open"
        status = _group_status(box.members, traces)
        fill, stroke, ink, dash = STYLE[None]
        tip = "; ".join(step_name(wf, m) for m in box.members)
        parts.append(f'<g class="group" data-group="{_esc(merge)}"><title>{_esc(tip)} — click to open</title>')
        for off in (6, 3):  # a stack of cards: several steps behind this box
            parts.append(
                f'<rect class="stack" x="{x + off}" y="{y - off}" width="{BOX_W}" height="{BOX_H}" rx="7" '
                'fill="#f4f6fa" stroke="#8a94a6" stroke-width="1"/>'
            )
        lines = [(text, "600", NAME_FONT) for text in _wrap(f"{len(branches)} searches in parallel")]
        lines.append((sub if status == "not run yet" else f"{len(box.members)} steps · {status}", "normal", SUB_FONT))
    else:
        node = wf.node(box.id)
        t = traces.get(node.id)
        fill, stroke, ink, dash = STYLE.get(t.status if t else None, STYLE[None])
        name = step_name(wf, node.id)
        name = name[:1].upper() + name[1:]
        is_out = node.id == wf.output
        tip = f"{name} — {node.op} ({node.id}); click to edit this step"
        if t is not None and t.error:
            tip += f"\n{t.error}"
        classes = "node selected" if has_selected else "node"
        parts.append(f'<g class="{classes}" data-node="{_esc(node.id)}"><title>{_esc(tip)}</title>')
        named = _wrap(name)
        lines = [(text, "600", NAME_FONT) for text in named]
        lines.append((status_words(t, final=is_out), "normal", SUB_FONT))
    if has_selected:
        parts.append(
            f'<rect x="{x - 5}" y="{y - 5}" width="{BOX_W + 10}" height="{BOX_H + 10}" rx="10" fill="#ffe58a" '
            f'fill-opacity="0.55" stroke="{SELECTED}" stroke-width="3"/>'
        )
    dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
    width = 2 if not box.is_group and box.id == wf.output else 1.4
    if box.is_group:
        fill, stroke = "#ffffff", "#5b6578"
    parts.append(
        f'<rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="7" fill="{fill}" stroke="{stroke}" '
        f'stroke-width="{width}"{dash_attr}/>'
    )
    line_h = 17
    first = y + (BOX_H - line_h * len(lines)) // 2 + 13
    for i, (text, weight, size) in enumerate(lines):
        colour = ink if weight == "600" else "#4a4a4a"
        parts.append(
            f'<text x="{x + 9}" y="{first + i * line_h}" fill="{colour}" font-weight="{weight}" '
            f'font-size="{size}">{_esc(text)}</text>'
        )
    parts.append("</g>")
    return "".join(parts)


def per_row_choices(n_layers: int) -> list[int]:
    """How many layers a band holds in each variant the page may choose from."""
    return sorted({p for p in (1, 2, 3, 4, 6) if p < n_layers} | {max(1, n_layers)})


def picture(
    wf: Workflow, trace: RunTrace | None = None, selected: str | None = None, open_groups: list[str] | None = None
) -> list[Variant]:
    """The drawing in a few band widths (see ``per_row_choices``); the page shows the one that fits."""
    view = _view(wf, list(open_groups or []))
    traces = {t.node_id: t for t in trace.nodes} if trace else {}
    n_layers = max((b.layer for b in view.boxes.values()), default=0) + 1
    return [_svg(wf, view, p, traces, selected) for p in per_row_choices(n_layers)]


def steps_in_order(wf: Workflow, open_groups: list[str] | None = None) -> list[tuple[str | None, list[str]]]:
    """The steps as the step list shows them, in running order: (group merge id or None, its steps)."""
    view = _view(wf, list(open_groups or []))
    first = {box: i for i, box in enumerate(view.boxes)}
    ordered = sorted(view.boxes.values(), key=lambda b: (b.layer, first[b.id]))
    return [(b.id.removeprefix("group:") if b.is_group else None, b.members) for b in ordered]
