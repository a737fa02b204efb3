"""The Workflow tab's picture and step list (HTML), and the script that fits the picture to its panel.

The picture comes from ``workflows.picture`` in a few band widths; ``DAG_JS`` shows the one that fits the
panel at the largest scale that keeps every label at least 11 px, scrolling rather than shrinking further, and
picks again when the panel changes size. Beside it (below it on a narrow screen) the steps are listed in
running order, in words, with what else each one reads; any step there or in the picture opens its form.
"""

from __future__ import annotations

import html
import json

from workflows.model import RunTrace, Workflow
from workflows.picture import FIT_SCALE_MIN, groups, main_port, picture, status_words, steps_in_order
from workflows.wording import step_name

esc = html.escape

DAG_JS = """
const FIT_MIN = __FIT_MIN__;
let zoom = null;  // null: fitted to the panel; else the scale the researcher zoomed to
let drag = null, moved = false;
const view = () => element.querySelector('.dag-view');
function pick() {
  const v = view();
  const all = [...element.querySelectorAll('.dag-variant')].map((d) => ({d, w: +d.dataset.w, h: +d.dataset.h}));
  if (!v || !all.length) return null;
  const W = Math.max(120, v.clientWidth - 4), H = Math.max(240, Math.min(window.innerHeight * 0.72, 700));
  for (const c of all) { c.width = Math.min(1, W / c.w); c.whole = Math.min(c.width, H / c.h); }
  const whole = all.filter((c) => c.whole >= FIT_MIN).sort((a, b) => b.whole - a.whole || a.h - b.h)[0];
  if (whole) return [whole, whole.whole];  // the whole plan in view, every label legible
  const wide = all.filter((c) => c.width >= FIT_MIN).sort((a, b) => a.h * a.width - b.h * b.width)[0];
  if (wide) return [wide, wide.width];  // the full width, scrolling down
  const narrowest = all.sort((a, b) => a.w - b.w)[0];
  return [narrowest, FIT_MIN];  // never below legible: scroll sideways instead
}
function apply() {
  const root = element.querySelector('.pilot-dag');
  if (root) root.classList.toggle('narrow', root.clientWidth < 600);  // the step list goes under the picture
  const chosen = pick(); if (!chosen) return;
  const [c, fit] = chosen, s = zoom === null ? fit : zoom;
  element.querySelectorAll('.dag-variant').forEach((d) => { d.hidden = d !== c.d; });
  const svg = c.d.querySelector('svg');
  svg.style.width = Math.round(c.w * s) + 'px'; svg.style.height = Math.round(c.h * s) + 'px';
  element.dataset.scale = s.toFixed(3); element.dataset.perRow = c.d.dataset.perRow;
  const sel = c.d.querySelector('g.selected');
  const v = view(), now = sel ? sel.dataset.node || sel.dataset.group : null, was = element.__picked;
  element.__picked = now;
  if (sel && v && was !== undefined && now !== was) {  // a newly picked step is scrolled into the picture's view
    const r = sel.getBoundingClientRect(), box = v.getBoundingClientRect();
    if (r.top < box.top || r.bottom > box.bottom) v.scrollTop += r.top - box.top - box.height / 3;
  }
}
element.addEventListener('click', (e) => {
  const z = e.target.closest('[data-zoom]');
  if (z) {
    const chosen = pick(); const now = zoom === null ? (chosen ? chosen[1] : 1) : zoom;
    zoom = z.dataset.zoom === 'fit' ? null : Math.max(0.3, Math.min(3, now * (z.dataset.zoom === 'in' ? 1.25 : 0.8)));
    apply(); return;
  }
  if (moved) return;
  const g = e.target.closest('[data-node]');
  if (g) { trigger('click', {node: g.dataset.node}); return; }
  const grp = e.target.closest('[data-group]');
  if (grp) { trigger('click', {group: grp.dataset.group}); }
});
element.addEventListener('wheel', (e) => {
  if (!(e.ctrlKey || e.metaKey) || !e.target.closest('.dag-view')) return;  // a plain wheel scrolls
  e.preventDefault();
  const chosen = pick(); const now = zoom === null ? (chosen ? chosen[1] : 1) : zoom;
  zoom = Math.max(0.3, Math.min(3, now * (e.deltaY < 0 ? 1.1 : 0.9))); apply();
}, {passive: false});
element.addEventListener('pointerdown', (e) => {
  if (!e.target.closest('.dag-view') || e.target.closest('[data-node],[data-group]')) return;
  drag = {x: e.clientX, y: e.clientY}; moved = false;
});
window.addEventListener('pointermove', (e) => {
  const v = view(); if (!drag || !v) return;
  const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
  if (Math.abs(dx) + Math.abs(dy) > 3) moved = true;
  v.scrollLeft -= dx; v.scrollTop -= dy; drag = {x: e.clientX, y: e.clientY};
});
window.addEventListener('pointerup', () => { drag = null; setTimeout(() => { moved = false; }, 0); });
new MutationObserver(apply).observe(element, {childList: true, subtree: true});
new ResizeObserver(apply).observe(element);
window.addEventListener('resize', apply);
apply();
""".replace("__FIT_MIN__", f"{FIT_SCALE_MIN:.4f}")


def _step_item(wf: Workflow, node_id: str, trace: RunTrace | None, selected: str | None) -> str:
    node = wf.node(node_id)
    name = step_name(wf, node_id)
    t = next((t for t in (trace.nodes if trace else []) if t.node_id == node_id), None)
    css, said = (t.status if t else "none"), status_words(t, final=node_id == wf.output)
    main = main_port(wf, node_id)
    side = [step_name(wf, e.source) for e in wf.inputs_of(node_id) if e.port != main and wf.has_node(e.source)]
    also = f'<small class="uses">also reads: {esc(", ".join(dict.fromkeys(side)))}</small>' if side else ""
    mark = " selected" if node_id == selected else ""
    return (
        f'<li class="step s-{css}{mark}"><button type="button" data-node="{esc(node_id, quote=True)}" '
        f'title="{esc(f"{node.op} ({node.id}): click to edit this step", quote=True)}">'
        f"{esc(name[:1].upper() + name[1:])}</button><small>{esc(said)}</small>{also}</li>"
    )


def steps_html(wf: Workflow, trace: RunTrace | None, selected: str | None, open_groups: list[str]) -> str:
    """The step list: every step in running order, a group's steps under its name (always listed, so each one is
    a click away whether its box in the picture is open or not)."""
    items: list[str] = []
    for group, members in steps_in_order(wf, []):
        if group is None:
            items.extend(_step_item(wf, m, trace, selected) for m in members)
            continue
        inner = "".join(_step_item(wf, m, trace, selected) for m in members)
        branches = sum(1 for e in wf.inputs_of(group) if e.source in members)
        verb = "close it in the picture" if group in open_groups else "open it in the picture"
        items.append(
            f'<li class="group"><button type="button" data-group="{esc(group, quote=True)}" title="{verb}">'
            f"{branches} searches in parallel</button><small>{len(members)} steps</small><ol>{inner}</ol></li>"
        )
    return f'<div class="dag-steps"><h5>Steps, in running order</h5><ol>{"".join(items)}</ol></div>'


def workflow_html(
    workflow: Workflow | None,
    trace: RunTrace | None = None,
    selected: str | None = None,
    open_groups: list[str] | None = None,
) -> str:
    """The picture (in the variants ``DAG_JS`` chooses from), its tools and the step list; should drawing fail,
    an escaped outline of the steps."""
    if workflow is None:
        return '<p class="pilot-empty">No workflow yet — it appears after the first search.</p>'
    try:
        return _drawn(workflow, trace, selected, open_groups)
    except Exception:  # noqa: BLE001 - the outline is always available: a drawing bug must not hide the workflow
        return _workflow_outline(workflow, trace)


def _drawn(workflow: Workflow, trace: RunTrace | None, selected: str | None, open_groups: list[str] | None) -> str:
    opened = [g for g in (open_groups or []) if g in groups(workflow)]
    variants = picture(workflow, trace, selected, opened)
    drawn = "".join(
        f'<div class="dag-variant" data-per-row="{v.per_row}" data-w="{v.width}" data-h="{v.height}"'
        f"{' hidden' if i else ''}>{v.svg}</div>"
        for i, v in enumerate(variants)
    )
    tools = "".join(
        f'<button type="button" data-zoom="{z}" title="{t}">{label}</button>'
        for z, label, t in (("in", "+", "zoom in"), ("out", "&minus;", "zoom out"), ("fit", "fit", "fit the panel"))
    )
    closers = "".join(
        f'<button type="button" class="dag-close" data-group="{esc(g, quote=True)}" title="group these steps again">'
        f"close the {sum(1 for e in workflow.inputs_of(g) if e.source in groups(workflow)[g])} searches</button>"
        for g in opened
    )
    hint = "click a step to edit it · drag to move · Ctrl+wheel or +/&minus; to zoom"
    return (
        f'<div class="pilot-dag"><div class="dag-tools">{tools}{closers}<span class="dag-hint">{hint}</span></div>'
        f'<div class="dag-body"><div class="dag-view">{drawn}</div>'
        f"{steps_html(workflow, trace, selected, opened)}</div></div>"
    )


def _workflow_outline(workflow: Workflow, trace: RunTrace | None) -> str:
    status = {t.node_id: t.status for t in (trace.nodes if trace else [])}
    rows = []
    for n in workflow.nodes:
        ins = ", ".join(f"{e.source}→{e.port}" for e in workflow.inputs_of(n.id)) or "—"
        params = json.dumps(n.params, ensure_ascii=False)
        st = status.get(n.id, "")
        rows.append(
            f"<li><code>{esc(n.id)}</code> {esc(n.op)} <small>{esc(params)}</small> ← {esc(ins)}"
            + (f" <b>[{esc(st)}]</b>" if st else "")
            + "</li>"
        )
    return f'<div class="pilot-dag"><ol>{"".join(rows)}</ol></div>'
