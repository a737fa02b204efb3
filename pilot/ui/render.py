"""HTML for the UI panels: results, cited answers, the workflow drawing, versions, the node inspector.

Every string that came from a source (titles, names, venues, snippets, ids, URLs, errors) goes through
``html.escape`` here before it reaches HTML; highlighting wraps matches in ``<mark>`` *after* escaping the
pieces, so a matched term can never smuggle markup in. Only http(s) URLs become links.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from pilot.models import Answer, RankedPaper, as_json
from workflows.draw import to_svg
from workflows.explain import why
from workflows.model import RunTrace, Workflow

esc = html.escape

CSS = """
.pilot-results ol { padding-left: 1.6em; margin: 0; }
.pilot-results li { margin-bottom: 0.9em; }
.pilot-results .title { font-weight: 600; }
.pilot-results .meta, .pilot-results .nodes { color: #555; font-size: 0.9em; }
.pilot-results .why { font-size: 0.9em; color: #1d4e89; }
.pilot-results .snippet { font-size: 0.92em; margin-top: 0.2em; }
.pilot-results mark { background: #fff3a3; padding: 0 1px; }
.pilot-results .kept { color: #0a7a2f; font-weight: 600; }
.pilot-results .rated-up { color: #0a7a2f; } .pilot-results .rated-down { color: #b00020; }
.pilot-answer .refs { font-size: 0.9em; }
.pilot-answer a { padding: 0; }  /* gradio pads links 2px 8px, which splits "…(ICML, 2016) [2];" apart */
.pilot-inspector pre, .pilot-versions pre {
  white-space: pre-wrap; font-size: 0.85em; max-height: 22em; overflow: auto; }
.pilot-empty { color: #777; font-style: italic; }
.pilot-results .acts button { font-size: 0.8em; margin-right: 0.3em; padding: 0 0.5em; border: 1px solid #ccc;
  border-radius: 4px; background: #f7f7f7; cursor: pointer; }
.pilot-dag g.node { cursor: pointer; }
.pilot-dag { overflow-x: auto; max-width: 100%; }
.pilot-dag svg { max-width: none; }
.pilot-dag::-webkit-scrollbar { height: 10px; }
.pilot-dag::-webkit-scrollbar-thumb { background: #bbb; border-radius: 5px; }
"""


# Delegated click handlers for gr.HTML (``js_on_load`` runs once; the listener survives value updates).
# They only forward ids that the server rendered; the server checks them again before acting.
RESULTS_JS = """
element.addEventListener('click', (e) => {
  const b = e.target.closest('[data-act]');
  if (b) { e.preventDefault(); trigger('click', {act: b.dataset.act, id: b.dataset.id}); }
});
"""
DAG_JS = """
element.addEventListener('click', (e) => {
  const g = e.target.closest('[data-node]');
  if (g) { trigger('click', {node: g.dataset.node}); }
});
"""


def safe_url(url: str | None) -> str | None:
    """The URL if a browser may follow it (http/https), else None; ``corpus://`` ids are not links."""
    if url and re.match(r"^https?://[^\s<>\"']+$", url.strip(), flags=re.IGNORECASE):
        return url.strip()
    return None


def link(url: str | None, text: str) -> str:
    href = safe_url(url)
    if href is None:
        return esc(text)
    return f'<a href="{esc(href, quote=True)}" target="_blank" rel="noopener noreferrer">{esc(text)}</a>'


def highlight(text: str, terms: Iterable[str]) -> str:
    """``text`` escaped, with every case-insensitive occurrence of ``terms`` wrapped in ``<mark>``.

    Matches are found in the raw text and each piece is escaped on its own, so terms such as ``amp`` or
    ``lt`` never match inside the entities escaping produces.
    """
    words = sorted({t.strip() for t in terms if t and t.strip()}, key=len, reverse=True)
    if not text:
        return ""
    if not words:
        return esc(text)
    # word-ish boundaries: a term must not start or end in the middle of a word
    pattern = re.compile(r"(?<!\w)(?:" + "|".join(re.escape(w) for w in words) + r")(?!\w)", re.IGNORECASE)
    out, pos = [], 0
    for m in pattern.finditer(text):
        out.append(esc(text[pos : m.start()]))
        out.append(f"<mark>{esc(m.group(0))}</mark>")
        pos = m.end()
    out.append(esc(text[pos:]))
    return "".join(out)


def chat_text(text: str) -> str:
    """A chat message as safe markdown: markup from sources shows as text, markdown emphasis still works."""
    return esc(text or "", quote=False)


def _authors(r: RankedPaper, limit: int = 6) -> str:
    names = [a.name for a in r.paper.authors if a.name]
    shown = ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")
    return esc(shown) if shown else "unknown authors"


def paper_label(rank: int, r: RankedPaper, width: int = 70) -> str:
    """The short text a selector shows for a result (plain text: Gradio renders choices as text)."""
    title = html.unescape(r.paper.title or r.paper.id)
    title = title if len(title) <= width else title[: width - 1] + "…"
    return f"{rank}. {title}" + (f" ({r.paper.year})" if r.paper.year else "")


def results_html(
    results: Sequence[RankedPaper],
    kept_ids: Iterable[str] = (),
    ratings: dict[str, bool] | None = None,
    workflow: Workflow | None = None,
) -> str:
    """The ranked list; with the workflow that produced it, each paper also says why it is there in words."""
    if not results:
        return '<div class="pilot-results"><p class="pilot-empty">No results yet.</p></div>'
    kept = set(kept_ids)
    ratings = ratings or {}
    items = []
    for r in results:
        p, ev = r.paper, r.evidence
        meta = [esc(p.venue) if p.venue else None, str(p.year) if p.year else None]
        if p.citation_count is not None:
            meta.append(f"{p.citation_count} citations")
        meta.append(f"score {r.score:.3f}")
        marks = []
        if p.id in kept:
            marks.append('<span class="kept" title="kept for export">✔ kept</span>')
        if p.id in ratings:
            marks.append('<span class="rated-up">👍</span>' if ratings[p.id] else '<span class="rated-down">👎</span>')
        snippet = ev.snippet or (p.abstract[:300] + "…" if p.abstract and len(p.abstract) > 300 else p.abstract)
        snippet_html = f'<div class="snippet">{highlight(snippet, ev.matched_terms)}</div>' if snippet else ""
        nodes = ", ".join(f"<code>{esc(n)}</code>" for n in ev.nodes) or "—"
        phrases = why(workflow, r)
        why_html = f'<div class="why">why: {esc(" · ".join(phrases))}</div>' if phrases else ""
        if phrases:  # the raw scores stay one hover away for whoever tunes the workflow
            attr, reason = (f' title="{esc(ev.reason, quote=True)}"' if ev.reason else ""), ""
        else:
            attr, reason = "", (f" — {esc(ev.reason)}" if ev.reason else "")
        pid = esc(p.id, quote=True)
        acts = (
            f'<span class="acts"><button type="button" data-act="up" data-id="{pid}" title="relevant">👍</button>'
            f'<button type="button" data-act="down" data-id="{pid}" title="not relevant">👎</button>'
            f'<button type="button" data-act="keep" data-id="{pid}">'
            f"{'unkeep' if p.id in kept else 'keep'}</button></span>"
        )
        items.append(
            f'<li data-paper-id="{pid}">'
            f'<div class="title">{link(p.canonical_url, p.title or p.id)} {" ".join(marks)}</div>'
            f"{acts}"
            f'<div class="meta">{_authors(r)} · {" · ".join(m for m in meta if m)}</div>'
            f"{snippet_html}{why_html}"
            f'<div class="nodes"{attr}>found by: {nodes}{reason}</div>'
            "</li>"
        )
    return f'<div class="pilot-results"><ol>{"".join(items)}</ol></div>'


def answer_html(answer: Answer | None) -> str:
    """A cited answer: each ``[n]`` becomes a link to the entity URL it cites (when it is a web page)."""
    if answer is None:
        return ""

    def cite(m: re.Match) -> str:
        key = m.group(1)
        url = answer.reference.get(key) or answer.reference.get(f"[{key}]")
        if url is None:
            return esc(m.group(0))
        href = safe_url(url)
        label = esc(f"[{key}]")
        return (
            f'<a href="{esc(href, quote=True)}" target="_blank" rel="noopener noreferrer">{label}</a>'
            if href
            else label
        )

    body = []
    pos = 0
    for m in re.finditer(r"\[(\w+)\]", answer.answer):
        body.append(esc(answer.answer[pos : m.start()]))
        body.append(cite(m))
        pos = m.end()
    body.append(esc(answer.answer[pos:]))
    # reference keys come as "1" or "[1]" depending on the synthesiser; show them one way
    refs = "".join(f"<li>[{esc(k.strip('[]'))}] {link(v, v)}</li>" for k, v in answer.reference.items())
    text = "".join(body).replace("\n", "<br>")
    return f'<div class="pilot-answer"><p>{text}</p><ol class="refs" style="list-style:none">{refs}</ol></div>'


def workflow_html(workflow: Workflow | None, trace: RunTrace | None = None) -> str:
    """The DAG drawing from ``workflows.draw`` (which escapes its labels), or an escaped text outline."""
    if workflow is None:
        return '<p class="pilot-empty">No workflow yet — it appears after the first search.</p>'
    try:
        # wide DAGs scroll sideways rather than shrink: node labels stay readable
        return f'<div class="pilot-dag" style="overflow-x:auto;max-width:100%">{to_svg(workflow, trace)}</div>'
    except Exception:  # noqa: BLE001 - the outline below is always available, a drawing bug must not hide the DAG
        return _workflow_outline(workflow, trace)


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


def versions_html(versions: Sequence[Any]) -> str:
    """Each workflow version with its reason and diff lines, newest first."""
    if not versions:
        return '<p class="pilot-empty">No versions yet.</p>'
    items = []
    for v in reversed(list(versions)):
        diff = "\n".join(getattr(v, "diff", []) or []) or "(first version)"
        items.append(
            f"<li><b>v{esc(str(getattr(v, 'version', '?')))}</b> {esc(getattr(v, 'reason', '') or '')}"
            f"<pre>{esc(diff)}</pre></li>"
        )
    return f'<div class="pilot-versions"><ul>{"".join(items)}</ul></div>'


def _preview(value: Any, limit: int = 5) -> str:
    def cut(data: Any) -> Any:
        if isinstance(data, list) and len(data) > limit:
            return data[:limit] + [f"… {len(data) - limit} more"]
        return data

    data = cut(as_json(value))
    if isinstance(data, dict):  # inputs arrive per port: {"in": [...], "anchor": [...]}
        data = {k: cut(v) for k, v in data.items()}
    return json.dumps(data, indent=1, ensure_ascii=False, default=str)[:6000]


def inspector_html(node_id: str | None, workflow: Workflow | None, trace: RunTrace | None, node_run: Any = None) -> str:
    """What the inspector shows for a node: params, last run status/timing/cache/error, and — after
    "run this node" — its inputs and the first items of its raw output."""
    if not node_id or workflow is None or not workflow.has_node(node_id):
        return '<p class="pilot-empty">Select a node to inspect it.</p>'
    node = workflow.node(node_id)
    parts = [f"<h4><code>{esc(node.id)}</code> — {esc(node.op)}</h4>"]
    parts.append(f"<div>params: <pre>{esc(json.dumps(node.params, indent=1, ensure_ascii=False))}</pre></div>")
    nt = next((t for t in (trace.nodes if trace else []) if t.node_id == node_id), None)
    if nt is not None:
        cache = "yes" if nt.status == "cached" else "no"
        parts.append(
            f"<div>last run: <b>{esc(nt.status)}</b> · {nt.seconds:.3f}s · cache hit: {cache} · "
            f"{nt.n_in} in → {nt.n_out} out</div>"
        )
        if nt.error:
            parts.append(f'<div style="color:#b00020">error: {esc(nt.error)}</div>')
        if nt.note:
            parts.append(f"<div>note: {esc(nt.note)}</div>")
    if node_run is not None:
        data = as_json(node_run)
        if isinstance(data, dict):
            parts.append("<h5>run alone just now</h5>")
            for key in ("status", "seconds", "cache_hit", "n_out", "error", "note"):
                if key in data and data[key] not in (None, ""):
                    value = (
                        f"{data[key]:.3f}s"
                        if key == "seconds" and isinstance(data[key], (int, float))
                        else str(data[key])
                    )
                    parts.append(f"<div>{esc(key)}: {esc(value)}</div>")
            for key in ("inputs", "output", "output_preview", "preview"):
                if key in data:
                    parts.append(f"<div>{esc(key)}:<pre>{esc(_preview(data[key]))}</pre></div>")
        else:
            parts.append(f"<pre>{esc(_preview(data))}</pre>")
    return f'<div class="pilot-inspector">{"".join(parts)}</div>'
