"""The ``score`` operator: a declared formula, a weighted sum of named, normalised features.

Every feature's raw value is written to ``Evidence.scores`` so a user can see why a paper ranks where it
does, and an edit to one weight re-ranks without re-fetching anything upstream.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from pydantic import Field, ValidationInfo, field_validator, model_validator

from pilot.models import Paper, RankedPaper
from pilot.papertype import paper_type
from pilot.sources.base import SourceError
from pilot.vocab import PaperType
from workflows.operator import Operator, OperatorInputs, OperatorParams, RunContext, port, register
from workflows.ops.features import (
    bm25,
    citation_value,
    cited_for_era,
    closeness_at_source,
    cosine_to,
    minmax,
    paper_vectors,
    papers_of,
    phrases_in,
    precedence,
    support_node,
    terms_of,
    tokens,
)
from workflows.ports import PortType

FEATURES: dict[str, str] = {
    "lexical": "BM25 overlap of title+abstract (or title) with the text / keywords / anchor title",
    "lexical_source": "BM25 of title+abstract with the text, with the source's own word statistics (document "
    "frequencies over all it holds; the candidates' when it keeps none), params.phrases weighing more",
    "dense": "cosine similarity of the embedding to the text, else to the anchor",
    "citations": "log citation count (external or in-corpus, whichever is larger)",
    "cited_for_era": "citation count as a percentile among the candidates of its era with the same kind of count "
    "(a citation index's or the source's links); unknown = 0.5",
    "recency": "publication year (use a negative weight to prefer older work)",
    "cocitation": "log number of papers citing both the anchor and this paper",
    "coupling": "log number of references shared with the anchor (bibliographic coupling)",
    "coupling_cos": "shared references / sqrt(|anchor refs| * |paper refs|)",
    "graph_distance": "1 / hops from the anchor in the citation graph among the inputs (0 if unconnected)",
    "rrf": "reciprocal-rank fusion score from upstream (or 1/(60+rank) of the input order)",
    "prior": "the score the paper arrived with",
    "title_match": "how many of params.title_terms occur in the title",
    "paper_type": "1 when the paper is of one of params.paper_types (survey / resource / method, by pilot.papertype)",
    "precedence": "how close in meaning the later papers among the 50 strongest candidates (by the rest of the "
    "formula) are to it: what newer work on the request would build on, where no citation links say so",
}
EV_PREFIX = "ev:"  # "ev:<name>" = log(1 + an evidence score recorded upstream, e.g. ev:refs_of_similar.support)
_LOG_FEATURES = {"citations", "cocitation", "coupling"}
_MAX_CITERS = 1000


class ScoreParams(OperatorParams):
    features: dict[str, float] = Field(
        default_factory=lambda: {"dense": 1.0},
        description="feature name -> weight; see FEATURES, or ev:<evidence score>",
    )
    text: str = Field(
        "", max_length=2000, description="query text for lexical/dense (connected text/keywords are added)"
    )
    lexical_field: Literal["text", "title"] = "text"
    phrases: list[str] = Field(
        default_factory=list,
        description="key phrases of the text: their words weigh more in lexical_source",
    )
    dense_to: Literal["auto", "anchor", "text"] = Field(
        "auto", description="auto = the text when given, else the anchor"
    )
    title_terms: list[str] = Field(default_factory=list, description="terms/phrases counted by title_match")
    paper_types: list[PaperType] = Field(
        default_factory=lambda: list[PaperType](["resource"]),
        description="the kinds of paper the paper_type feature rewards",
    )
    normalize: Literal["minmax", "rank", "none"] = "minmax"
    caps: dict[str, float] = Field(
        default_factory=dict,
        description="feature -> raw value at which it saturates; scaled as min(x, cap) / cap instead of normalised",
    )
    floors: dict[str, float] = Field(
        default_factory=dict,
        description="capped feature -> raw value that still counts as nothing (scale from floor to cap)",
    )
    max_lookups: int = Field(
        50, ge=0, le=2000, description="at most this many source calls for unknown reference lists"
    )
    blend_features: dict[str, float] = Field(
        default_factory=dict,
        description="a second formula (feature -> weight), blended with `features` by the evidence score `blend_by`: "
        "weights = b * features + (1 - b) * blend_features",
    )
    blend_by: str | None = Field(
        None,
        max_length=200,
        description="an evidence score in [0, 1] (its largest value among the papers) that weighs `features` against "
        "`blend_features`, e.g. how much of the request the citation graph covers; unset or absent = `features` only",
    )
    keep_top: int = Field(
        0,
        ge=0,
        le=1000,
        description="the first this many papers keep their order and stay on top; only the rest are re-ranked "
        "(a second stage that lets a recall signal reorder the tail without touching the head)",
    )

    @field_validator("features", "blend_features")
    @classmethod
    def _known(cls, v: dict[str, float], info: ValidationInfo) -> dict[str, float]:
        if not v and info.field_name == "features":
            raise ValueError("declare at least one feature")
        for name, w in v.items():
            if name not in FEATURES and not (name.startswith(EV_PREFIX) and len(name) > len(EV_PREFIX)):
                raise ValueError(f"unknown feature {name!r}; known: {', '.join(FEATURES)} or ev:<evidence score>")
            if not -100 <= w <= 100:
                raise ValueError(f"weight of {name!r} must be within [-100, 100]")
        return v

    @field_validator("caps")
    @classmethod
    def _positive(cls, v: dict[str, float]) -> dict[str, float]:
        bad = [k for k, c in v.items() if c <= 0]
        if bad:
            raise ValueError(f"caps must be positive: {', '.join(bad)}")
        return v

    @model_validator(mode="after")
    def _floors_below_caps(self) -> ScoreParams:
        for name, floor in self.floors.items():
            if name not in self.caps or floor >= self.caps[name]:
                raise ValueError(f"floor of {name!r} needs a cap above it")
        return self


class _Graph:
    """Reference lists of the anchor and the candidates, fetched once per run and only when a feature needs them."""

    def __init__(self, ctx: RunContext, max_lookups: int):
        self.ctx = ctx
        self.budget = max_lookups
        self.errors = 0

    async def refs(self, paper: Paper, force: bool = False) -> set[str]:
        if paper.references is not None and not force:
            return set(paper.references)
        if self.budget <= 0:
            return set()
        self.budget -= 1
        try:
            return {p.id for p in await self.ctx.source.references(paper.id, limit=2000)}
        except SourceError:
            self.errors += 1
            return set(paper.references or [])

    async def many_refs(self, papers: list[Paper]) -> list[set[str]]:
        """Reference lists of the candidates: known ones as they are, the first ``max_lookups`` unknown ones
        from the source in one batch call (a remote source answers hundreds per request)."""
        unknown = [p.id for p in papers if p.references is None][: max(0, self.budget)]
        self.budget -= len(unknown)
        got = await self.ctx.source.linked(unknown, "references", 2000) if unknown else None
        if got is not None:
            self.errors += len(got.failed)
        out: list[set[str]] = []
        for p in papers:
            if p.references is not None:
                out.append(set(p.references))
            else:
                out.append({q.id for q in got.found.get(p.id, [])} if got is not None else set())
        return out

    async def anchor_refs(self, anchors: list[Paper]) -> set[str]:
        # Ask the source rather than trusting the record: a benchmark case may hide the anchor's references.
        out: set[str] = set()
        for a in anchors:
            out |= await self.refs(a, force=True)
        return out

    async def anchor_citers(self, anchors: list[Paper]) -> list[Paper]:
        got = await self.ctx.source.linked([a.id for a in anchors], "citations", _MAX_CITERS)
        self.errors += len(got.failed)
        return [p for a in anchors for p in got.found.get(a.id, [])]


def _graph_distance(
    anchor_ids: set[str], anchor_refs: set[str], papers: list[Paper], refs: list[set[str]]
) -> np.ndarray:
    ids = [p.id for p in papers]
    adj: dict[str, set[str]] = {pid: set() for pid in ids}
    for a in anchor_ids:
        adj.setdefault(a, set())
    for pid, rs in list(zip(ids, refs, strict=True)) + [(a, anchor_refs) for a in anchor_ids]:
        for r in rs:
            if r in adj:
                adj[pid].add(r)
                adj[r].add(pid)
    dist = {a: 0 for a in anchor_ids}
    queue = deque(anchor_ids)
    while queue:
        cur = queue.popleft()
        for nb in adj.get(cur, ()):
            if nb not in dist:
                dist[nb] = dist[cur] + 1
                queue.append(nb)
    return np.array([1.0 / dist[pid] if dist.get(pid) else 0.0 for pid in ids], dtype=np.float32)


async def compute_features(
    ctx: RunContext, params: ScoreParams, items: list[RankedPaper], anchors: list[Paper], text: str
) -> dict[str, np.ndarray]:
    """Raw value of every requested feature for every item (same order)."""
    papers = [it.paper for it in items]
    n = len(papers)
    wanted = set(params.features) | set(params.blend_features)
    out: dict[str, np.ndarray] = {}
    graph = _Graph(ctx, params.max_lookups)
    if wanted & {"lexical", "lexical_source"}:
        query = terms_of(text) or terms_of(" ".join(a.title for a in anchors))
        field = (lambda p: p.title) if params.lexical_field == "title" else (lambda p: p.text)
        out["lexical"] = bm25(query, [tokens(field(p)) for p in papers])
    if "lexical_source" in wanted:
        indexed = await _source_lexical(ctx, params, papers, text)
        out["lexical_source"] = indexed if indexed is not None else out["lexical"]
    if "citations" in wanted:
        out["citations"] = np.array([citation_value(p) for p in papers], dtype=np.float32)
    if "cited_for_era" in wanted:
        out["cited_for_era"] = cited_for_era(papers)
    if "recency" in wanted:
        years = [p.year for p in papers]
        floor = min((y for y in years if y), default=0)
        out["recency"] = np.array([y or floor for y in years], dtype=np.float32)
    if wanted & {"coupling", "coupling_cos", "graph_distance"}:
        a_refs = await graph.anchor_refs(anchors)
        c_refs = await graph.many_refs(papers)
        shared = np.array([len(a_refs & r) for r in c_refs], dtype=np.float32)
        out["coupling"] = shared
        denom = np.array([math.sqrt(max(1, len(a_refs)) * max(1, len(r))) for r in c_refs], dtype=np.float32)
        out["coupling_cos"] = shared / denom
        out["graph_distance"] = _graph_distance({a.id for a in anchors}, a_refs, papers, c_refs)
    if "cocitation" in wanted:
        citers = await graph.anchor_citers(anchors)
        citer_refs = await graph.many_refs(citers)
        counts: dict[str, int] = {}
        for rs in citer_refs:
            for r in rs:
                counts[r] = counts.get(r, 0) + 1
        out["cocitation"] = np.array([counts.get(p.id, 0) for p in papers], dtype=np.float32)
    if "rrf" in wanted:
        out["rrf"] = np.array(
            [it.evidence.scores.get("rrf", 1.0 / (60 + i + 1)) for i, it in enumerate(items)], dtype=np.float32
        )
    if "prior" in wanted:
        out["prior"] = np.array([it.score for it in items], dtype=np.float32)
    if "title_match" in wanted:
        out["title_match"] = np.array([len(phrases_in(p.title, params.title_terms)) for p in papers], dtype=np.float32)
    if "paper_type" in wanted:
        kinds = set(params.paper_types)
        out["paper_type"] = np.array([1.0 if paper_type(p) in kinds else 0.0 for p in papers], dtype=np.float32)
    for name in wanted:
        if name.startswith(EV_PREFIX):
            key = name[len(EV_PREFIX) :]
            out[name] = np.array([it.evidence.scores.get(key, 0.0) for it in items], dtype=np.float32)
    if graph.errors:
        ctx.notes.append(f"{graph.errors} citation-graph lookups failed; graph features are partial")
    if "dense" in wanted:
        # Last, so that the other features can choose which candidates to compare. Closeness to the anchors comes
        # from the source's own embeddings when it ships them (the best 500 in one request, no model here).
        # Otherwise a remote source's papers are embedded here, and embedding hundreds of abstracts on a CPU takes
        # longer than the requests: only the ``PILOT_EMBED_AT_MOST`` best by the rest of the formula are embedded
        # (the others get the lowest cosine), within a third of the step's timeout (the step also waits for the
        # model while a preview holds it), so a busy machine ranks with fewer vectors instead of failing the step.
        cap = ctx.settings.embed_at_most
        dense_query = text if params.dense_to != "anchor" else ""
        sims = (
            None if dense_query.strip() else await closeness_at_source(ctx, papers, anchors, _by_total(params, out, n))
        )
        if sims is None:
            order = _by_total(params, out, n) if cap is not None and n > cap else None
            sims = await asyncio.to_thread(  # CPU work off the event loop, so the run's requests keep flowing
                cosine_to, ctx, papers, dense_query, anchors, cap, order, ctx.settings.node_timeout_s / 3
            )
        if sims is None:
            ctx.notes.append("no embeddings available, dense feature is 0")
            sims = np.zeros(n, dtype=np.float32)
        out["dense"] = sims
    if "precedence" in wanted:
        # last: the strongest candidates are those of the rest of the formula, as the run blends it. Vectors as the
        # dense feature gets them: off the event loop, and from a remote source only the best ``embed_at_most`` in
        # that order within a third of the step's timeout (a paper left without one claims no precedence)
        strongest = [
            int(i) for i in np.argsort(-_total(params, out, n, effective_weights(params, items)), kind="stable")
        ]
        vecs = await asyncio.to_thread(
            paper_vectors, ctx, papers, ctx.settings.embed_at_most, strongest, ctx.settings.node_timeout_s / 3
        )
        out["precedence"] = precedence(papers, vecs, strongest) if vecs is not None else np.zeros(n, np.float32)
    return {k: v for k, v in out.items() if k in wanted}


async def _source_lexical(ctx: RunContext, params: ScoreParams, papers: list[Paper], text: str) -> np.ndarray | None:
    """BM25 of the text with the source's own word statistics, when the source keeps an index: over a few hundred
    candidates that all match the request, their own document frequencies say little about which words are rare
    (dev LitSearch questions, BM25 alone: nDCG@10 .39 with the corpus's, .31 with the candidates')."""
    if not text.strip():
        return None
    try:
        got = await asyncio.to_thread(ctx.source.lexical_scores, text, [p.id for p in papers], params.phrases)
    except SourceError:
        return None
    if got is None:
        return None
    return np.array([got.get(p.id, 0.0) for p in papers], dtype=np.float32)


def _by_total(params: ScoreParams, raw: dict[str, np.ndarray], n: int) -> list[int]:
    """Indices by the formula's total over the features computed so far, best first (ties in input order)."""
    total = _total(params, raw, n)
    return sorted(range(n), key=lambda i: -float(total[i]))


def effective_weights(params: ScoreParams, items: Sequence[RankedPaper]) -> dict[str, float]:
    """The formula's weights: ``features``, or its blend with ``blend_features`` by the ``blend_by`` evidence score
    (the largest value in the list, clipped to [0, 1]; ``features`` alone when no paper carries it: the step that
    writes it did not run)."""
    values = [it.evidence.scores[params.blend_by] for it in items if params.blend_by in it.evidence.scores]
    if not params.blend_features or not values:
        return dict(params.features)
    b = min(1.0, max(0.0, max(values)))
    names = dict.fromkeys([*params.features, *params.blend_features])
    return {n: b * params.features.get(n, 0.0) + (1 - b) * params.blend_features.get(n, 0.0) for n in names}


def _total(
    params: ScoreParams, raw: dict[str, np.ndarray], n: int, weights: dict[str, float] | None = None
) -> np.ndarray:
    """The formula: each feature normalised (or scaled between its floor and cap), weighted, summed."""
    total = np.zeros(n, dtype=np.float32)
    for name, weight in (weights if weights is not None else params.features).items():
        if name not in raw or weight == 0:
            continue
        if name in params.caps:
            # an absolute scale: "3 shared references" means the same whatever the other candidates have
            lo, hi = params.floors.get(name, 0.0), params.caps[name]
            total += weight * np.clip((raw[name] - lo) / (hi - lo), 0.0, 1.0)
        else:
            total += weight * _normalise(name, raw[name], params.normalize)
    return total


def _normalise(name: str, values: np.ndarray, how: str) -> np.ndarray:
    if name in _LOG_FEATURES or name.startswith(EV_PREFIX):
        values = np.log1p(np.maximum(values, 0))
    if how == "minmax":
        return minmax(values)
    if how == "rank":
        order = np.argsort(-values, kind="stable")
        ranks = np.empty(len(values), dtype=np.float32)
        ranks[order] = np.arange(len(values), dtype=np.float32)
        return 1.0 - ranks / max(1, len(values))
    return values.astype(np.float32)


@dataclass(kw_only=True)
class ScoreInputs(OperatorInputs):
    papers: list[RankedPaper] = port(PortType.PAPERS, name="in")
    anchor: list[RankedPaper] | None = port(
        PortType.PAPERS, optional=True, description="the paper(s) similarity and graph features refer to"
    )
    text: str | None = port(PortType.TEXT, optional=True)
    keywords: list[str] | None = port(PortType.KEYWORDS, optional=True)


@register
class ScoreOp(Operator[ScoreParams, ScoreInputs]):
    name = "score"
    family = "scoring"
    description = (
        "Rank papers by a declared weighted sum of features (lexical, dense, citations, recency, coupling, …)."
    )
    Params = ScoreParams
    Inputs = ScoreInputs
    output = PortType.RANKED

    @classmethod
    def node_refs(cls, params: ScoreParams) -> list[tuple[str, str]]:
        names = dict.fromkeys([*params.features, *params.blend_features, *params.caps, *params.floors])
        return [
            (f"feature {name!r}", node)
            for name in names
            if name.startswith(EV_PREFIX) and (node := support_node(name[len(EV_PREFIX) :])) is not None
        ]

    async def run(self, ctx: RunContext, params: ScoreParams, inputs: ScoreInputs) -> list[RankedPaper]:
        items = inputs.papers
        if not items:
            return []
        anchors = papers_of(inputs.anchor)
        text = " ".join(x for x in (params.text, inputs.text or "", " ".join(inputs.keywords or [])) if x).strip()
        raw = await compute_features(ctx, params, items, anchors, text)
        weights = effective_weights(params, items)
        total = _total(params, raw, len(items), weights)
        head = min(params.keep_top, len(items))
        # stable: ties keep the input order
        order = [*range(head), *sorted(range(head, len(items)), key=lambda i: -float(total[i]))]
        shown = [float(total[i]) for i in order]
        for j in range(head - 1, -1, -1):  # a kept paper scores at least what ranks below it: scores still descend
            shown[j] = max(shown[j], shown[j + 1]) if j + 1 < len(shown) else shown[j]
        out = []
        for i, value in zip(order, shown, strict=True):
            ev = items[i].evidence.model_copy(deep=True)
            # ev:<name> features are already in the evidence under <name>
            ev.scores.update({name: round(float(raw[name][i]), 4) for name in raw if not name.startswith(EV_PREFIX)})
            out.append(items[i].model_copy(update={"score": round(value, 6), "evidence": ev}))
        return out
