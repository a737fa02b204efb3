"""HTML for the UI panels: results, cited answers, the workflow drawing, versions, the node inspector.

Every string that came from a source (titles, names, venues, snippets, ids, URLs, errors) goes through
``html.escape`` here before it reaches HTML; highlighting wraps matches in ``<mark>`` *after* escaping the
pieces, so a matched term can never smuggle markup in. Only http(s) URLs become links.
"""

from __future__ import annotations

import html
import json
import re
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pilot.citations import count_of
from pilot.models import Answer, Paper, RankedPaper, as_json
from pilot.text import normalize_title
from pilot.ui import dag
from workflows.explain import match_strength, why
from workflows.model import RunTrace, Workflow
from workflows.wording import found_by, step_name

esc = html.escape

# The page's own styles live in a stylesheet of their own, beside this module (package data).
CSS = (Path(__file__).with_name("pilot.css")).read_text(encoding="utf-8")


# Delegated click handlers for gr.HTML (``js_on_load`` runs once; the listener survives value updates).
# They only forward ids that the server rendered; the server checks them again before acting.
RESULTS_JS = """
element.addEventListener('click', (e) => {
  const copy = e.target.closest('[data-copy]');
  if (copy) {
    const text = copy.parentElement.querySelector('.cite-text').innerText;
    const done = () => { copy.querySelector('span').innerText = 'copied'; };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, () => {});
    } else {  // plain http on another host: select the text so Ctrl+C copies it
      const range = document.createRange(); range.selectNodeContents(copy.parentElement.querySelector('.cite-text'));
      const sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(range);
      try { document.execCommand('copy'); done(); } catch (err) {}
    }
    return;
  }
  const b = e.target.closest('[data-act]');
  if (b) { e.preventDefault(); trigger('click', {act: b.dataset.act, id: b.dataset.id}); }
});
"""
VERSIONS_JS = """
element.addEventListener('click', (e) => {
  const b = e.target.closest('[data-version]');
  if (b) { trigger('click', {version: b.dataset.version}); }
});
"""
RECENT_JS = """
element.addEventListener('click', (e) => {
  const b = e.target.closest('[data-recent]');
  if (b) { e.preventDefault(); trigger('click', {recent: b.dataset.recent}); }
});
"""
# Runs in the page before the load event (its value replaces the event's inputs): this tab's conversation id from
# sessionStorage (a reload keeps it; another tab has its own). A duplicated tab starts with a copy of its original's
# sessionStorage, so the id is asked for on a BroadcastChannel first: when another open tab answers for it, this
# tab asks for a copy of that conversation under an id of its own ("fork"), and the two never write one record.
OPEN_JS = """
async (state, library, token, tab) => {
  let mine = '', fork = '';
  try { mine = sessionStorage.getItem('pilot-tab') || ''; } catch (e) {}
  if (mine && 'BroadcastChannel' in window) {
    const taken = await new Promise((done) => {
      const ch = new BroadcastChannel('pilot-tabs');
      const t = setTimeout(() => { ch.close(); done(false); }, 250);
      ch.onmessage = (e) => { if (e.data && e.data.mine === mine) { clearTimeout(t); ch.close(); done(true); } };
      ch.postMessage({who: mine});
    });
    if (taken) { fork = mine; mine = ''; }
  }
  return [state, library, token, JSON.stringify({tab: mine, fork: fork})];
}
"""
# After the load event: keep the id the server settled on, and answer for it when a new tab asks (OPEN_JS).
TAB_JS = """
(tab) => {
  if (!tab) return;
  try { sessionStorage.setItem('pilot-tab', tab); } catch (e) {}
  window.__pilotTab = tab;
  if (!window.__pilotTabs && 'BroadcastChannel' in window) {
    window.__pilotTabs = new BroadcastChannel('pilot-tabs');
    window.__pilotTabs.onmessage = (e) => {
      if (e.data && e.data.who && e.data.who === window.__pilotTab) window.__pilotTabs.postMessage({mine: e.data.who});
    };
  }
}
"""
# The map's card: when a click on the map puts a paper in it and it is out of sight (a narrow screen stacks it
# under the map), it is scrolled into view.
CARD_IN_VIEW_JS = """
new MutationObserver(() => {
  const card = element.querySelector('[data-paper-id]');
  if (!card) return;
  const r = element.getBoundingClientRect();
  if (r.top < 0 || r.bottom > window.innerHeight) element.scrollIntoView({block: 'nearest', behavior: 'smooth'});
}).observe(element, {childList: true, subtree: true});
"""
# Wraps the gr.Plot of the map: a click on a marker sends its paper id (plotly ``customdata``).
MAP_JS = """
const hook = () => {
  element.querySelectorAll('.js-plotly-plot').forEach((gd) => {
    if (gd.__pilotHooked || typeof gd.on !== 'function') return;
    gd.__pilotHooked = true;
    gd.on('plotly_click', (ev) => {
      const pt = ev && ev.points && ev.points[0];
      if (pt && pt.customdata) trigger('click', {paper: String(pt.customdata)});
    });
  });
};
new MutationObserver(hook).observe(element, {childList: true, subtree: true});
setInterval(hook, 1000);
hook();
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


# square brackets open markdown links and images; escaped, a title or recipe name such as
# "![x](http://…)" shows as text and makes the browser fetch nothing
_LINK_SYNTAX = str.maketrans({"[": "\\[", "]": "\\]"})


def chat_text(text: str) -> str:
    """A chat message as safe markdown: markup from sources shows as text, markdown emphasis still works,
    and no link or image can be formed (pilot's own messages use neither)."""
    return esc(text or "", quote=False).translate(_LINK_SYNTAX)


def step_choice(wf: Workflow, node_id: str) -> str:
    """A step as the step picker lists it: its name in words, then its id (plain text)."""
    name = step_name(wf, node_id)
    return f"{name[:1].upper()}{name[1:]} · {node_id}"


def details_html(lines: Sequence[str], summary: str = "details") -> str:
    """The operator-level version of what was just said, folded: one click away, never in the way."""
    if not lines:
        return ""
    body = "<br>".join(f"<code>{esc(line)}</code>" for line in lines)
    return f'<details class="pilot-details"><summary>{esc(summary)}</summary>{body}</details>'


def chat_message(text: str, details: Sequence[str] | None = None) -> str:
    """A chat message as safe markdown (``chat_text``) with its details folded under it."""
    folded = details_html(list(details or []))
    return chat_text(text) + (f"\n\n{folded}" if folded else "")


def _authors(p: Paper, limit: int = 6) -> str:
    """The author line, escaped; "" when the source lists none (the list says so once, not every card)."""
    names = [a.name for a in p.authors if a.name]
    shown = ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")
    return esc(shown)


def missing_note(papers: Sequence[Paper]) -> str:
    """One line for what the source does not say about the listed papers ("no authors for 18 of these 50
    papers"), so that the cards can simply leave those fields out. "" when nothing is missing."""
    gaps = [
        (sum(not any(a.name for a in p.authors) for p in papers), "authors"),
        (sum(not p.venue for p in papers), "venue"),
        (sum(not p.year for p in papers), "year"),
    ]
    said = [f"no {what} for {n}" for n, what in gaps if n]
    if not said:
        return ""
    of = f"of these {len(papers)} papers" if len(papers) > 1 else "of this paper"
    text = (", ".join(said[:-1]) + " and " + said[-1]) if len(said) > 1 else said[0]
    return (
        f'<p class="pilot-missing">The source gives {esc(text)} {of}; their cards leave those out '
        "(and so do the exports).</p>"
    )


def paper_label(rank: int, r: RankedPaper, width: int = 70) -> str:
    """The short text a selector shows for a result (plain text: Gradio renders choices as text)."""
    title = html.unescape(r.paper.title or r.paper.id)
    title = title if len(title) <= width else title[: width - 1] + "…"
    return f"{rank}. {title}" + (f" ({r.paper.year})" if r.paper.year else "")


# Inline SVG icons (Material Design paths): they render the same everywhere, with or without emoji fonts.
_ICONS = {
    "up": "M1 21h4V9H1v12zm22-11c0-1.1-.9-2-2-2h-6.31l.95-4.57.03-.32c0-.41-.17-.79-.44-1.06L14.17 1 7.59 "
    "7.59C7.22 7.95 7 8.45 7 9v10c0 1.1.9 2 2 2h9c.83 0 1.54-.5 1.84-1.22l3.02-7.05c.09-.23.14-.47.14-.73v-2z",
    "down": "M15 3H6c-.83 0-1.54.5-1.84 1.22l-3.02 7.05c-.09.23-.14.47-.14.73v2c0 1.1.9 2 2 2h6.31l-.95 "
    "4.57-.03.32c0 .41.17.79.44 1.06L9.83 23l6.59-6.59c.36-.36.58-.86.58-1.41V5c0-1.1-.9-2-2-2zm4 0v12h4V3h-4z",
    "keep": "M17 3H7c-1.1 0-1.99.9-1.99 2L5 21l7-3 7 3V5c0-1.1-.9-2-2-2z",
    "cite": "M6 17h3l2-4V7H5v6h3zm8 0h3l2-4V7h-6v6h3z",
    "remove": "M6 19c0 1.1.9 2 2 2h8c1.1 0 2-.9 2-2V7H6v12zM19 4h-3.5l-1-1h-5l-1 1H5v2h14V4z",
    "copy": (
        "M16 1H4c-1.1 0-2 .9-2 2v14h2V3h12V1zm3 4H8c-1.1 0-2 .9-2 2v14c0 1.1.9 2 2 2h11"
        "c1.1 0 2-.9 2-2V7c0-1.1-.9-2-2-2zm0 16H8V7h11v14z"
    ),
    "check": "M9 16.17 4.83 12l-1.42 1.41L9 19 21 7l-1.41-1.41z",
    "warn": "M1 21h22L12 2 1 21zm12-3h-2v-2h2v2zm0-4h-2v-4h2v4z",
}


def icon(name: str, size: int = 14) -> str:
    return (
        f'<svg class="icon" width="{size}" height="{size}" viewBox="0 0 24 24" aria-hidden="true">'
        f'<path fill="currentColor" d="{_ICONS[name]}"/></svg>'
    )


def _button(act: str, pid: str, label: str, ico: str, title: str, pressed: bool | None = None) -> str:
    state = "" if pressed is None else f' aria-pressed="{"true" if pressed else "false"}"'
    return (
        f'<button type="button" data-act="{act}" data-id="{pid}" title="{esc(title, quote=True)}"{state}>'
        f"{icon(ico)}<span>{esc(label)}</span></button>"
    )


def _raw_scores(r: RankedPaper) -> str:
    parts = [f"score {r.score:.3f}"] + [f"{k} {v:.3g}" for k, v in r.evidence.scores.items()]
    return " · ".join(parts)


def card_html(
    r: RankedPaper,
    workflow: Workflow | None = None,
    *,
    in_library: bool = False,
    rating: bool | None = None,
    is_new: bool = False,
    citation: str | None = None,
    actions: Sequence[str] = ("up", "down", "keep", "cite"),
    tag: str = "li",
) -> str:
    """One paper as a researcher reads it: title, who/where/when, how well it matches (in words; raw
    scores on hover), why it is there, a snippet with the matched words marked, and its buttons."""
    p, ev = r.paper, r.evidence
    meta = [_authors(p) or None, esc(p.venue) if p.venue else None, str(p.year) if p.year else None]
    meta.append(esc(count_of(p).label()))  # "no count" when no index counted it: unknown is not zero
    badges = []
    if is_new:
        badges.append('<span class="badge new">new</span>')
    if in_library:
        badges.append(f'<span class="kept" title="in your library">{icon("check", 12)} in library</span>')
    if rating is not None:
        badges.append(
            f'<span class="rated-up">{icon("up", 12)} relevant</span>'
            if rating
            else f'<span class="rated-down">{icon("down", 12)} not relevant</span>'
        )
    strength = match_strength(r) if (ev.scores or ev.nodes) else None
    strength_html = (
        f'<span class="strength s-{strength.split()[0]}" title="{esc(_raw_scores(r), quote=True)}">'
        f"{esc(strength)}</span>"
        if strength
        else ""
    )
    snippet = ev.snippet or (p.abstract[:300] + "…" if p.abstract and len(p.abstract) > 300 else p.abstract)
    if snippet and normalize_title(snippet) == normalize_title(p.title):
        snippet = None  # no abstract: the "snippet" would only repeat the title
    snippet_html = f'<div class="snippet">{highlight(snippet, ev.matched_terms)}</div>' if snippet else ""
    phrases = why(workflow, r)
    why_html = f'<div class="why">{strength_html} why: {esc(" · ".join(phrases))}</div>' if phrases else ""
    if not phrases and strength_html:
        why_html = f'<div class="why">{strength_html}</div>'
    found = found_by(workflow, ev.nodes)
    steps = [f"{n} ({workflow.node(n).op})" if workflow and workflow.has_node(n) else n for n in ev.nodes]
    folded = details_html(steps)
    attr = f' title="{esc(ev.reason, quote=True)}"' if ev.reason else ""  # the raw scores, on hover
    pid = esc(p.id, quote=True)
    labels = {
        "up": ("relevant", "up", "more like this: re-rank towards it", rating is True),
        "down": ("not relevant", "down", "drop it and re-run", rating is False),
        "keep": (
            "in library" if in_library else "keep",
            "keep",
            "remove from your library" if in_library else "keep in your library",
            in_library,
        ),
        "cite": ("cite", "cite", "show an APA citation to copy", None),
        "remove": ("remove", "remove", "remove from your library", None),
    }
    acts = "".join(_button(a, pid, *labels[a]) for a in actions if a in labels)
    cite_box = ""
    if citation:
        cite_box = (
            f'<div class="cite-box"><span class="cite-text">{esc(citation)}</span>'
            f'<button type="button" data-copy="1" title="copy to the clipboard">{icon("copy")}'
            "<span>copy</span></button></div>"
        )
    nodes_html = (
        f'<div class="nodes"{attr}><span class="found">found by {esc(found)}</span> {folded}</div>'
        if found
        else (f'<div class="nodes"{attr}>{folded}</div>' if folded else "")
    )
    return (
        f'<{tag} class="card" data-paper-id="{pid}" data-year="{p.year or ""}">'
        f'<div class="title">{link(p.canonical_url, p.title or p.id)} {" ".join(badges)}</div>'
        f'<div class="meta">{" · ".join(m for m in meta if m)}</div>'
        f"{why_html}{snippet_html}"
        f'<div class="acts">{acts}</div>{cite_box}{nodes_html}'
        f"</{tag}>"
    )


def results_html(
    results: Sequence[RankedPaper],
    kept_ids: Iterable[str] = (),
    ratings: dict[str, bool] | None = None,
    workflow: Workflow | None = None,
    *,
    new_ids: Iterable[str] = (),
    removed: Sequence[Paper] = (),
    citation: tuple[str, str] | None = None,
    weak: bool = False,
    about: str = "",
) -> str:
    """The ranked list of cards. ``kept_ids``: papers in the library; ``new_ids`` / ``removed``: what the
    last re-run added and dropped; ``citation``: (paper id, text) of an open "cite" box; ``weak``: show
    the banner that says the matches are weak."""
    if not results:
        if workflow is None:
            return '<div class="pilot-results"><p class="pilot-empty">No results yet.</p></div>'
        # a search ran and nothing is left (a filter, "only the ones by …"): "no results yet" would be wrong
        if not removed:
            return '<div class="pilot-results"><p class="pilot-empty">This search found no papers.</p></div>'
        return (
            '<div class="pilot-results"><p class="pilot-empty">No paper is left in this version of the search. '
            f"The {len(removed)} papers listed before it are not lost: say “undo” in the chat, or pick an "
            "earlier version, to get them back.</p></div>"
        )
    kept, new = set(kept_ids), set(new_ids)
    ratings = ratings or {}
    parts = []
    if weak:
        parts.append(
            f'<div class="pilot-banner" role="status">{icon("warn")} <b>These matches are weak.</b> Few of the top '
            f"papers are close to {esc(about or 'your request')}: the source may cover it thinly. Try the exact "
            "title of a paper you know, other words for the topic, or wider filters.</div>"
        )
    if new or removed:
        gone = "".join(f"<li>{esc(p.title)}{f' ({p.year})' if p.year else ''}</li>" for p in removed[:20])
        more = f"<li>… and {len(removed) - 20} more</li>" if len(removed) > 20 else ""
        dropped = (
            f"<details><summary>{len(removed)} no longer listed</summary><ul>{gone}{more}</ul></details>"
            if removed
            else "<span>none dropped</span>"
        )
        parts.append(f'<div class="pilot-delta"><b>This run:</b> {len(new)} new · {dropped}</div>')
    parts.append(missing_note([r.paper for r in results]))
    items = [
        card_html(
            r,
            workflow,
            in_library=r.paper.id in kept,
            rating=ratings.get(r.paper.id),
            is_new=r.paper.id in new,
            citation=citation[1] if citation and citation[0] == r.paper.id else None,
        )
        for r in results
    ]
    parts.append(f'<ol class="cards">{"".join(items)}</ol>')
    return f'<div class="pilot-results">{"".join(parts)}</div>'


def library_html(
    entries: Sequence[Any], searches: Sequence[tuple[str, str, int]], citation: tuple[str, str] | None = None
) -> str:
    """The library, one group per search the papers were kept from (``entries``: ``LibraryEntry``)."""
    if not entries:
        return (
            '<div class="pilot-results pilot-library"><p class="pilot-empty">Your library is empty. Press '
            "<b>keep</b> on a result to keep it here; it stays across searches and page reloads (stored in this "
            "browser only).</p></div>"
        )
    groups = []
    for sid, label, n in searches:
        cards = "".join(
            card_html(
                RankedPaper(paper=e.paper),
                None,
                actions=("cite", "remove"),
                citation=citation[1] if citation and citation[0] == e.paper.id else None,
            )
            for e in entries
            if e.search_id == sid
        )
        head = esc(label or "kept without a search")
        groups.append(
            f'<section data-search="{esc(sid, quote=True)}"><h4>{head} <small>({n})</small></h4>'
            f'<ul class="cards">{cards}</ul></section>'
        )
    return f'<div class="pilot-results pilot-library">{"".join(groups)}</div>'


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


def versions_html(versions: Sequence[Any], current: int | None = None) -> str:
    """Each workflow version with its reason and diff lines, newest first; ``current`` (an index into
    ``versions``) is marked, and every other version is a button that makes it current again."""
    if not versions:
        return '<p class="pilot-empty">No versions yet.</p>'
    items = []
    current = len(versions) - 1 if current is None else current
    for i, v in reversed(list(enumerate(versions))):
        number = esc(str(getattr(v, "version", i + 1)))
        diff = list(getattr(v, "diff", []) or [])
        said = list(getattr(v, "changes", []) or [])
        changes = (
            '<ul class="changes">' + "".join(f"<li>{esc(line)}</li>" for line in said) + "</ul>"
            if said
            else ("" if diff else '<div class="changes first">the first version</div>')
        )
        is_current = i == current
        mark = '<span class="badge current">current</span>' if is_current else ""
        head = (
            f"<b>v{number}</b>"
            if is_current
            else f'<button type="button" data-version="{number}" title="make v{number} current and re-run">'
            f"v{number}</button>"
        )
        items.append(
            f'<li class="{"current" if is_current else ""}" data-v="{number}">{head} {mark} '
            f"{esc(getattr(v, 'reason', '') or '')}{changes}{details_html(diff)}</li>"
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


def recent_html(entries: Sequence[Any], current: str | None = None, now: float | None = None) -> str:
    """The recent searches (``RecentSearch``, newest first), each a button that reopens it; the one on screen
    is marked instead."""
    if not entries:
        return (
            '<p class="pilot-empty">Your searches will be listed here, to reopen any of the last 20 as you left '
            "it (kept for this browser).</p>"
        )
    items = []
    for e in entries:
        what = "an answer" if e.answer else f"{e.results} result{'s' if e.results != 1 else ''}"
        label = esc(short_text(e.label, 90))
        key = esc(e.key, quote=True)
        mine = e.key == current
        head = (
            f'<span class="on-screen" title="on screen now">{label}</span>'
            if mine
            else f'<button type="button" data-recent="{key}" title="reopen it as you left it">{label}</button>'
        )
        cls = ' class="current"' if mine else ""
        items.append(f'<li data-key="{key}"{cls}>{head}<small>{esc(what)} · {esc(ago(e.saved_at, now))}</small></li>')
    return f'<div class="pilot-recent"><ol>{"".join(items)}</ol></div>'


def short_text(text: str, width: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"


def ago(when: float, now: float | None = None) -> str:
    """ "5 minutes ago", "yesterday", "3 days ago" for a time (seconds since the epoch); "" for none."""
    if not when:
        return ""
    seconds = max(0.0, (time.time() if now is None else now) - when)
    for size, unit in ((86400, "day"), (3600, "hour"), (60, "minute")):
        if seconds >= size:
            n = int(seconds // size)
            return "yesterday" if unit == "day" and n == 1 else f"{n} {unit}{'s' if n != 1 else ''} ago"
    return "just now"


# the Workflow tab's picture and step list live in pilot.ui.dag
DAG_JS = dag.DAG_JS
workflow_html = dag.workflow_html
