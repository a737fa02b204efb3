"""The map of a result list (a plotly figure for ``gr.Plot``), in the spirit of Connected Papers.

Each paper sits at its year (x, one tick a year or every 2, 5 or 10 years, never a year twice) and, on y:

- for a search by meaning (papers like the anchor, its benchmarks, surveys, a topic): its closeness in meaning
  to the anchor — or to the request when there is no anchor — (the ranking's own MiniLM cosine, so the map agrees
  with the cards; shared wording when no model can run);
- for a citation direction (earlier work it builds on, later work building on it): how many of the papers on the
  map cite it (its *local citation count*, as in Garfield's historiographs and HistCite). Those papers are listed
  because of citation links, not closeness in meaning, so that is what the height shows: the foundations most of
  the lineage builds on, or the follow-ups the later work itself builds on, stand out at the top. When the source
  gives no links among them the map falls back to closeness and says so in its title.

Marker size grows with citations, colour is a topic cluster (k-means over TF-IDF) named by its most distinctive
words, blue lines are citations among the results, grey lines citations to or from the anchor, which is the star.
Every marker carries its paper id in ``customdata``, which the page's click hook (``render.MAP_JS``) sends back so
the UI can open that paper's card beside the map.

    fig = result_map(results, anchor, embedder=runtime.embedder, query=session.request, direction="successor")
"""

from __future__ import annotations

import hashlib
import html
import logging
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from pilot.models import Paper, RankedPaper
from workflows.explain import match_strength
from workflows.ops.features import citation_value

log = logging.getLogger(__name__)

# Colour-blind-safe qualitative palette (Okabe–Ito), anchor in black.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442"]
ANCHOR_COLOUR = "#111111"
MAX_TOPICS = 5


def _text(p: Paper) -> str:
    return html.unescape(p.text)[:2000]


def _jitter(paper_id: str, width: float = 0.36) -> float:
    """A stable horizontal offset per paper, so papers of one year do not sit on one vertical line."""
    h = int(hashlib.sha1(paper_id.encode("utf-8")).hexdigest()[:8], 16) / 0xFFFFFFFF
    return (h - 0.5) * 2 * width


def _tfidf(texts: list[str]) -> np.ndarray:
    from sklearn.feature_extraction.text import TfidfVectorizer

    try:
        return TfidfVectorizer(stop_words="english", sublinear_tf=True).fit_transform(texts).toarray()
    except ValueError:  # nothing but stop words
        return np.zeros((len(texts), 1))


def _closeness(papers: list[RankedPaper], ref_text: str, embedder: Any) -> tuple[list[float], str]:
    """Each paper's closeness to the reference text, and what it measures. The ranking's own cosine to
    the anchor (evidence ``dense``) when every paper has one — so the map agrees with the cards — else
    MiniLM cosines, else (no model) shared wording."""
    dense = [r.evidence.scores.get("dense") for r in papers]
    if all(d is not None for d in dense):
        return [float(d or 0.0) for d in dense], "closeness in meaning"
    texts = [ref_text or _text(papers[0].paper), *(_text(r.paper) for r in papers)]
    if embedder is not None:
        try:
            vecs = np.asarray(embedder.encode(texts), dtype=np.float32)
            vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-9)
            return (vecs[1:] @ vecs[0]).tolist(), "closeness in meaning"
        except Exception:
            log.warning("embedder unavailable for the map; using shared wording", exc_info=True)
    vecs = _tfidf(texts)
    norms = np.maximum(np.linalg.norm(vecs, axis=1), 1e-9)
    return ((vecs[1:] @ vecs[0]) / (norms[1:] * norms[0])).tolist(), "shared wording"


def _topics(texts: list[str]) -> tuple[list[int], list[str]]:
    """A topic cluster per text and a name per cluster (its three most distinctive words)."""
    n = len(texts)
    k = max(1, min(MAX_TOPICS, n // 8))
    vecs = _tfidf(texts)
    if k == 1 or vecs.shape[1] < 2:
        k, labels = 1, [0] * n
    else:
        from sklearn.cluster import KMeans

        labels = KMeans(n_clusters=k, n_init=4, random_state=0).fit_predict(vecs).tolist()
    from sklearn.feature_extraction.text import TfidfVectorizer

    try:
        vec = TfidfVectorizer(stop_words="english", max_features=4000, ngram_range=(1, 1), min_df=1)
        tf = vec.fit_transform(texts).toarray()
        words = np.array(vec.get_feature_names_out())
    except ValueError:  # only stop words
        return labels, [f"topic {c + 1}" for c in range(k)]
    overall = tf.mean(axis=0)
    names = []
    for c in range(k):
        rows = [i for i, lab in enumerate(labels) if lab == c]
        if not rows:
            names.append(f"topic {c + 1}")
            continue
        # distinctive: frequent in the cluster, less so elsewhere
        score = tf[rows].mean(axis=0) - 0.5 * overall
        top = [w for w in words[np.argsort(-score)[:8]] if not w.isdigit()][:3]
        names.append(", ".join(top) or f"topic {c + 1}")
    return labels, names


def _size(p: Paper) -> float:
    return 8 + 7 * math.log10(1 + citation_value(p))


def _hover(p: Paper, strength: str | None, closeness: float, counts: bool = False) -> str:
    e = html.escape
    authors = ", ".join(a.name for a in p.authors[:3]) + (" et al." if len(p.authors) > 3 else "")
    lines = [f"<b>{e(html.unescape(p.title)[:110])}</b>"]
    meta = " · ".join(x for x in (e(authors), e(p.venue or ""), str(p.year or "")) if x)
    if meta:
        lines.append(meta)
    facts = [
        f"{citation_value(p)} citations" if p.citation_count is not None or p.in_corpus_citations else "",
        strength or "",
    ]
    facts.append(f"cited by {round(closeness)} on the map" if counts else f"closeness {closeness:.2f}")
    lines.append(" · ".join(f for f in facts if f))
    lines.append("<i>click for the card</i>")
    return "<br>".join(lines)


CITATION_DIRECTIONS = ("predecessor", "successor")


def year_ticks(years: Sequence[int]) -> list[int]:
    """Whole years for the x axis, one a year or every 2, 5 or 10, so that no year is written twice."""
    lo, hi = min(years), max(years)
    step = next(s for s in (1, 2, 5, 10, 20, 50) if (hi - lo) / s <= 8)
    return list(range(math.ceil(lo / step) * step if hi - lo >= step else lo, hi + 1, step))


def local_citations(papers: Sequence[Paper], anchor: Paper | None) -> dict[str, int]:
    """How many of the other papers on the map (and the anchor) cite each one."""
    on_map = {p.id for p in papers}
    counts = dict.fromkeys(on_map, 0)
    for citing in [*papers, *([anchor] if anchor is not None else [])]:
        for ref in set(citing.references or []):
            if ref in on_map and ref != citing.id:
                counts[ref] += 1
    return counts


def _height(
    placed: list[RankedPaper], anchor: Paper | None, embedder: Any, query: str, direction: str | None
) -> tuple[list[float], str, str]:
    """(y per paper, the axis title, what the title says y is)."""
    what = "the anchor" if anchor is not None else "your request"
    if anchor is not None and direction in CITATION_DIRECTIONS:
        cited = local_citations([r.paper for r in placed], anchor)
        if any(cited.values()):
            ys = [cited[r.paper.id] + _jitter(r.paper.id + "|y", 0.12) for r in placed]  # ties spread apart
            return ys, "cited by how many papers on this map", "local citations (cited by the others)"
    closeness, measure = _closeness(placed, _text(anchor) if anchor is not None else query, embedder)
    said = f"{measure} to {what}"
    if anchor is not None and direction in CITATION_DIRECTIONS:
        said += " (no citation links among them)"
    return closeness, f"{measure} to {what}", said


def result_map(
    results: Sequence[RankedPaper],
    anchor: Paper | None = None,
    embedder: Any = None,
    query: str = "",
    direction: str | None = None,
) -> Any:
    """The plotly figure; an empty, labelled figure when there is nothing to place. ``direction``: the search's
    (a citation direction puts each paper's local citation count on y instead of its closeness)."""
    fig = go.Figure()
    fig.update_layout(
        height=540,
        margin={"l": 56, "r": 16, "t": 40, "b": 48},
        plot_bgcolor="#fbfbfb",
        paper_bgcolor="white",
        hovermode="closest",
        clickmode="event",
        dragmode="pan",
        legend={"orientation": "h", "y": -0.14, "x": 0},
        font={"family": "system-ui, sans-serif", "size": 12},
    )
    placed = [r for r in results if r.paper.year]
    papers = [r.paper for r in placed]
    if not papers:
        fig.add_annotation(text="No results with a year to place yet.", showarrow=False, x=0.5, y=0.5)
        fig.update_xaxes(visible=False)
        fig.update_yaxes(visible=False)
        return fig
    strength = {r.paper.id: match_strength(r) for r in results}
    closeness, axis, measure = _height(placed, anchor, embedder, query, direction)
    counts = axis.startswith("cited by")
    labels, names = _topics([_text(p) for p in papers])
    pos = {p.id: ((p.year or 0) + _jitter(p.id), c) for p, c in zip(papers, closeness, strict=False)}
    top = max(closeness)
    if anchor is not None and anchor.year:
        # the anchor is the reference point: drawn just above the closest paper, not at its own 1.0,
        # which would squeeze every result into the bottom of the plot
        pos[anchor.id] = (float(anchor.year), top + (0.8 if counts else 0.06))

    # citation links first, so markers sit on top of them
    among_x: list[float | None] = []
    among_y: list[float | None] = []
    anchor_x: list[float | None] = []
    anchor_y: list[float | None] = []
    ids = set(pos)
    anchor_refs = set(anchor.references or []) if anchor is not None else set()
    for p in papers:
        for ref in p.references or []:
            if ref in ids and ref != p.id:
                xs, ys = (anchor_x, anchor_y) if anchor is not None and ref == anchor.id else (among_x, among_y)
                xs += [pos[p.id][0], pos[ref][0], None]
                ys += [pos[p.id][1], pos[ref][1], None]
        if anchor is not None and anchor.id in pos and p.id in anchor_refs:
            anchor_x += [pos[anchor.id][0], pos[p.id][0], None]
            anchor_y += [pos[anchor.id][1], pos[p.id][1], None]
    for xs, ys, colour, name in (
        (among_x, among_y, "rgba(29,78,137,0.35)", "cites another result"),
        (anchor_x, anchor_y, "rgba(17,17,17,0.16)", "cites / cited by the anchor"),
    ):
        if xs:
            line = {"color": colour, "width": 1}
            fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line=line, hoverinfo="skip", name=name))

    for c, name in enumerate(names):
        members = [i for i, lab in enumerate(labels) if lab == c]
        if not members:
            continue
        fig.add_trace(
            go.Scatter(
                x=[pos[papers[i].id][0] for i in members],
                y=[pos[papers[i].id][1] for i in members],
                mode="markers",
                marker={
                    "size": [_size(papers[i]) for i in members],
                    "color": PALETTE[c % len(PALETTE)],
                    "opacity": 0.85,
                    "line": {"color": "white", "width": 1},
                },
                customdata=[papers[i].id for i in members],
                hovertext=[_hover(papers[i], strength.get(papers[i].id), closeness[i], counts) for i in members],
                hoverinfo="text",
                name=f"topic: {name}",
            )
        )
    if anchor is not None and anchor.id in pos:
        fig.add_trace(
            go.Scatter(
                x=[pos[anchor.id][0]],
                y=[pos[anchor.id][1]],
                mode="markers+text",
                text=["anchor"],
                textposition="top center",
                customdata=[anchor.id],
                marker={"symbol": "star", "size": max(20, _size(anchor) + 6), "color": ANCHOR_COLOUR},
                hovertext=[f"<b>anchor</b>: {html.escape(html.unescape(anchor.title)[:110])} ({anchor.year})"],
                hoverinfo="text",
                name="the anchor",
            )
        )
    years = [p.year for p in papers if p.year] + ([anchor.year] if anchor is not None and anchor.year else [])
    ticks = year_ticks(years)
    fig.update_xaxes(
        title_text="year",
        tickmode="array",
        tickvals=ticks,
        ticktext=[str(t) for t in ticks],
        range=[min(years) - 0.7, max(years) + 0.7],
        gridcolor="#eeeeee",
        zeroline=False,
    )
    y_axis: dict[str, Any] = {"tickformat": ".2f"}
    if counts:  # whole counts from 0, the anchor's star above them
        y_axis = {"tickformat": "d", "rangemode": "tozero", "range": [-0.5, top + 1.6]}
    fig.update_yaxes(title_text=axis, gridcolor="#eeeeee", zeroline=False, **y_axis)
    title = f"{len(papers)} papers by year and {measure}"
    # the title sits under the plot's tool bar (which shows over the top right corner), not behind it
    fig.update_layout(
        title={"text": title, "x": 0, "y": 1, "yref": "container", "yanchor": "top", "pad": {"t": 34}},
        title_font={"size": 13},
        margin={"t": 66},
    )
    return fig
