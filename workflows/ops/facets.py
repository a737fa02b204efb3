"""``facet_match``: compare the anchor with each candidate sentence by sentence, on one facet if asked.

One vector per abstract averages a paper's problem, method and results into one point, so "similar in
its method" cannot be told from "similar in its topic". Aspire (Mysore et al., NAACL 2022) compares
papers sentence by sentence instead: each of the query's sentences looks for its best match among the
candidate's sentences (tsAspire), or the two sentence sets are aligned by optimal transport (otAspire).
This operator does both with the shipped MiniLM and no training: the anchor's title and abstract
sentences against every candidate's, each anchor sentence weighted by how much it speaks of the chosen
facet (CSFCube's background / method / result: cue words and where in the abstract it stands), mixed
with equal weights by ``facet_weight`` so a misread sentence cannot take over the ranking.

Sentence vectors go through the embedder's per-text cache: a candidate seen in an earlier search, or
in an earlier run of this node with other params, costs nothing the second time.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from pydantic import Field, model_validator

from pilot.models import Paper, RankedPaper
from pilot.vocab import Facet
from workflows.operator import Operator, OperatorInputs, OperatorParams, RunContext, port, register
from workflows.ops.features import blend, bm25, encode, paper_vectors, papers_of, sentences, terms_of, tokens
from workflows.ports import PortType

# Cue words of abstract sentences per facet. A sentence's weight for a facet = its cue count (scaled to
# the anchor's best) plus a position prior: abstracts open with the problem, describe the method in the
# middle and end with the findings.
FACET_CUES: dict[str, str] = {
    "background": r"\b(?:problem|task|challeng\w*|important|difficult|need|motivat\w*|goal|aim|address\w*|issue|"
    r"question|widely|increasing\w*)\b",
    "method": r"\b(?:we (?:propose|present|introduce|describe|develop|use|train|apply)|approach|model\w*|algorithm\w*|"
    r"method\w*|framework|technique\w*|based on|using|architecture|learn\w*)\b",
    "result": r"\b(?:results?|show\w*|outperform\w*|improv\w*|achiev\w*|accura\w*|experiment\w*|demonstrat\w*|"
    r"significant\w*|evaluat\w*|perform\w*|state[- ]of[- ]the[- ]art|\d+(?:\.\d+)?\s?%)",
}


def facet_weights(sents: list[str], facet: str | None, mix: float) -> np.ndarray:
    """Weights (summing to 1) of a paper's sentences (title first) for matching on ``facet``.

    ``mix`` = the share of the facet weighting; the rest is spread evenly over all sentences (the title
    counts as one of them). Without a facet, or with nothing to tell sentences apart, all weigh the same."""
    n = len(sents)
    even = np.full(n, 1.0 / max(1, n))
    if facet not in FACET_CUES or n < 3 or mix <= 0:
        return even
    body = np.arange(1, n)
    pos = (np.arange(len(body)) + 0.5) / len(body)
    prior = {"background": 1.0 - pos, "method": 1.0 - np.abs(pos - 0.5) * 2.0, "result": pos}[facet]
    cues = np.array([len(re.findall(FACET_CUES[facet], s.lower())) for s in sents[1:]], dtype=np.float64)
    w = np.zeros(n)
    w[body] = prior + (cues / cues.max() if cues.max() > 0 else 0.0)
    if w.sum() <= 0:
        return even
    return (1.0 - mix) * even + mix * w / w.sum()


def facet_text(anchor: Paper, facet: str, k: int = 3) -> str:
    """The anchor's ``k`` abstract sentences that speak most of ``facet``, in text order (for labels and
    explanations; the operator itself weighs every sentence)."""
    sents = sentences(anchor)
    if len(sents) < 2 or facet not in FACET_CUES:
        return ""
    w = facet_weights(sents, facet, 1.0)[1:]
    top = sorted(np.argsort(-w, kind="stable")[:k].tolist())
    return " ".join(sents[1 + i] for i in top)[:1500]


# The anchor's sentences whose words the ``lexical`` signal looks for: the two that speak most of the facet
# (three let the facet's words drown in the rest on dev CSFCube; one is too few words).
FACET_TERM_SENTENCES = 2


def facet_terms(anchor: Paper, facet: str | None) -> list[str]:
    """The words of the anchor's sentences about ``facet`` (without a facet, or without an abstract to tell the
    facets apart: its title and abstract), the query of the ``lexical`` signal."""
    text = facet_text(anchor, facet, FACET_TERM_SENTENCES) if facet else ""
    return terms_of(text or anchor.text)


def sinkhorn(sim: np.ndarray, a: np.ndarray, b: np.ndarray, eps: float = 0.05, iters: int = 60) -> np.ndarray:
    """Entropy-regularised optimal transport plan between sentence sets with masses ``a`` and ``b``,
    maximising total similarity (the plan otAspire scores with)."""
    k = np.exp((sim - sim.max()) / eps)
    u, v = np.ones_like(a), np.ones_like(b)
    for _ in range(iters):
        u = a / (k @ v + 1e-30)
        v = b / (k.T @ u + 1e-30)
    return u[:, None] * k * v[None, :]


def match_scores(
    anchor: np.ndarray, weights: np.ndarray, candidates: list[np.ndarray], method: str
) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """Similarity of the anchor's sentence vectors to each candidate's, and for each candidate the
    (anchor sentence, candidate sentence) pair that contributes most."""
    out = np.zeros(len(candidates), dtype=np.float32)
    best: list[tuple[int, int]] = []
    for i, cand in enumerate(candidates):
        if len(cand) == 0:
            best.append((0, 0))
            continue
        sim = anchor @ cand.T
        if method == "ot":
            plan = sinkhorn(sim, weights + 1e-9, np.full(len(cand), 1.0 / len(cand)))
            contrib = plan * sim
            out[i] = float(contrib.sum())
        else:
            contrib = np.zeros_like(sim)
            cols = sim.argmax(axis=1)
            contrib[np.arange(len(sim)), cols] = weights * sim[np.arange(len(sim)), cols]
            out[i] = float(contrib.sum())
        r, c = np.unravel_index(int(contrib.argmax()), contrib.shape)
        best.append((int(r), int(c)))
    return out, best


def calibrated(anchor: np.ndarray, weights: np.ndarray, candidates: list[np.ndarray]) -> np.ndarray:
    """Max-sim with each anchor sentence's best-match similarity z-scored over the candidates: a sentence
    every candidate matches about as well ("Experiments show improvements") tells them apart by noise, and
    one that only some match decides."""
    best = np.zeros((len(candidates), len(anchor)), dtype=np.float32)
    for i, cand in enumerate(candidates):
        if len(cand):
            best[i] = (anchor @ cand.T).max(axis=1)
    spread = best.std(axis=0)
    z = (best - best.mean(axis=0)) / np.where(spread > 1e-6, spread, 1.0)
    return (z @ weights).astype(np.float32)


# evidence keys of the ``lexical`` and ``near_refs`` signals (workflows.explain names them on the result cards)
FACET_TERMS = "facet_terms"
NEAR_REFS = "near_refs"
# the anchor's references compared at most (reference lists past it are rare; each costs one vector)
NEAR_REFS_AT_MOST = 100
# over a remote source every reference's vector is computed on this machine (about 5 s a faceted turn for 100
# through the S2 emulator): the first 25 of the anchor's references, a count so the ranking does not depend on load
NEAR_REFS_REMOTE_AT_MOST = 25


class FacetMatchParams(OperatorParams):
    facet: Facet | None = Field(None, description="the anchor's aspect to match on; none = the whole abstract")
    facet_weight: float = Field(
        0.3, ge=0.0, le=1.0, description="share of the facet's sentences in the anchor's weights (rest: all equally)"
    )
    method: Literal["max", "ot"] = Field(
        "max", description="max = each anchor sentence's best match (tsAspire); ot = optimal transport (otAspire)"
    )
    alpha: float = Field(0.5, ge=0.0, le=1.0, description="weight of the upstream score vs the sentence similarity")
    calibrate: bool = Field(
        False,
        description="max only: each anchor sentence's best match counts relative to the other candidates' (z-score), "
        "so a sentence they all match equally weighs nothing",
    )
    lexical: float = Field(
        0.0,
        ge=0.0,
        le=1.0,
        description="weight of the words of the anchor's facet sentences in the candidate's title and abstract "
        "(BM25 over the matched papers), added to the blend; 0 = sentence vectors only",
    )
    near_refs: float = Field(
        0.0,
        ge=0.0,
        le=1.0,
        description="weight of the closeness to the nearest of the papers the anchor cites (the refs input; a paper "
        "it cites is closest), added to the blend; 0 = off",
    )
    top_n: int = Field(100, ge=1, le=1000, description="match this many from the top; the rest keep their order below")
    max_sentences: int = Field(
        800,
        ge=1,
        le=100_000,
        description="candidate sentences embedded at most, best-ranked candidates first; the candidates past "
        "it are matched by their whole-abstract vector instead",
    )

    @model_validator(mode="before")
    @classmethod
    def _drop_time_budget(cls, data: Any) -> Any:
        # recipes saved before the count existed carry a time budget, which made the ranking depend on the
        # machine's load; the count replaces it
        if isinstance(data, dict) and "budget_s" in data:
            data = {k: v for k, v in data.items() if k != "budget_s"}
        return data


@dataclass(kw_only=True)
class FacetMatchInputs(OperatorInputs):
    ranked: list[RankedPaper] = port(PortType.RANKED, name="in")
    anchor: list[RankedPaper] = port(PortType.PAPERS, description="the paper whose sentences are matched")
    refs: list[RankedPaper] | None = port(
        PortType.PAPERS, optional=True, description="the papers the anchor cites (for near_refs)"
    )


def near_refs(ctx: RunContext, papers: list[Paper], refs: list[Paper]) -> np.ndarray | None:
    """Each paper's cosine to the closest of ``refs`` (1 for a paper among them); None without vectors. Papers
    left unembedded (a busy remote turn) get the lowest value of the others."""
    budget = ctx.settings.node_timeout_s / 3
    cand = paper_vectors(ctx, papers, within_s=budget)
    cited = paper_vectors(ctx, refs, within_s=budget)
    if cand is None or cited is None or not len(cited):
        return None
    cited = cited[np.isfinite(cited).all(axis=1) & cited.any(axis=1)]
    if not len(cited):
        return None
    sims = np.nan_to_num(cand, nan=0.0) @ cited.T
    near = sims.max(axis=1).astype(np.float32)
    ids = {p.id for p in refs}
    near[[i for i, p in enumerate(papers) if p.id in ids]] = 1.0
    unknown = ~np.isfinite(cand).all(axis=1) | ~cand.any(axis=1)
    if unknown.any():
        near[unknown] = float(near[~unknown].min()) if (~unknown).any() else 0.0
    return near


@register
class FacetMatchOp(Operator[FacetMatchParams, FacetMatchInputs]):
    name = "facet_match"
    reorders_only = True
    family = "reranking"
    description = (
        "Re-rank by sentence-level similarity to the anchor (each anchor sentence's best match), "
        "optionally on one facet: background, method or result."
    )
    Params = FacetMatchParams
    Inputs = FacetMatchInputs
    output = PortType.RANKED

    async def run(self, ctx: RunContext, params: FacetMatchParams, inputs: FacetMatchInputs) -> list[RankedPaper]:
        items = inputs.ranked or []
        head, tail = items[: params.top_n], items[params.top_n :]
        anchors = papers_of(inputs.anchor)
        if not head or not anchors:
            return items
        if ctx.embedder is None:
            ctx.notes.append("no embeddings; order kept")
            return items
        refs: list[Paper] = []
        if params.near_refs > 0:
            at_most = NEAR_REFS_AT_MOST if ctx.source.free_graph() else NEAR_REFS_REMOTE_AT_MOST
            refs = papers_of(inputs.refs)[:at_most]
        return await asyncio.to_thread(self._rerank, ctx, params, head, anchors[0], refs) + tail

    def _rerank(
        self, ctx: RunContext, params: FacetMatchParams, head: list[RankedPaper], anchor: Paper, refs: list[Paper]
    ) -> list[RankedPaper]:
        a_sents = sentences(anchor) or [anchor.title]
        c_sents = [sentences(it.paper) or [it.paper.title] for it in head]
        a_vecs = encode(ctx.embedder, a_sents)
        cands = self._candidate_vectors(ctx, params, head, c_sents, a_vecs.shape[1])
        weights = facet_weights(a_sents, params.facet, params.facet_weight)
        sims, pairs = match_scores(a_vecs, weights, cands, params.method)
        # the card keeps the plain similarity (a cosine a reader can judge); the ranking uses the calibrated one
        ranking = calibrated(a_vecs, weights, cands) if params.calibrate and params.method == "max" else None
        # the candidate sentence that matches the anchor best is the passage that shows the likeness
        snippets = [
            sents[c][:400] if len(v) == len(sents) else None
            for sents, v, (_, c) in zip(c_sents, cands, pairs, strict=True)
        ]
        # MiniLM's sentence vectors blur the words that name a method or a task ("multi-class", "word
        # clusters"); the same words in the candidate are evidence of the same facet
        extra = {}
        if params.lexical > 0:
            query = facet_terms(anchor, params.facet)
            extra[FACET_TERMS] = (params.lexical, bm25(query, [tokens(it.paper.text) for it in head]))
        # papers like the anchor on an aspect sit near the work it builds on: closeness to the nearest paper
        # it cites (soft bibliographic coupling, which needs no shared reference list — CSFCube's pool papers
        # have about one reference each in the corpus)
        near = near_refs(ctx, [it.paper for it in head], refs) if refs else None
        if near is not None:
            extra[NEAR_REFS] = (params.near_refs, near)
        elif params.near_refs > 0:
            ctx.notes.append("no references of the anchor to compare with; near_refs left out")
        return blend(head, sims, params.alpha, "facet_match", snippets, extra, ranking)

    @staticmethod
    def _candidate_vectors(
        ctx: RunContext, params: FacetMatchParams, head: list[RankedPaper], c_sents: list[list[str]], dim: int
    ) -> list[np.ndarray]:
        """Sentence vectors per candidate, best-ranked first, while their sentences fit in ``max_sentences``;
        a candidate past it counts as one sentence, its abstract. The cut is by count, never by time, so a
        busy machine cannot change the ranking (only how long it takes)."""
        out: list[np.ndarray] = [np.zeros((0, dim), dtype=np.float32)] * len(head)
        sizes = np.cumsum([len(s) for s in c_sents])
        reached = int(np.searchsorted(sizes, params.max_sentences, side="right"))
        reached = max(reached, 1)  # the best candidate is always read sentence by sentence
        for lo in range(0, reached, 8):
            idx = range(lo, min(lo + 8, reached))
            vecs = encode(ctx.embedder, [s for i in idx for s in c_sents[i]])
            pos = 0
            for i in idx:
                out[i] = vecs[pos : pos + len(c_sents[i])]
                pos += len(c_sents[i])
        late = list(range(reached, len(head)))
        whole = paper_vectors(ctx, [head[i].paper for i in late]) if late else None
        if late:
            for j, i in enumerate(late):
                if whole is not None:
                    out[i] = whole[j : j + 1]
            ctx.notes.append(
                f"{len(late)} of {len(head)} papers matched by their whole abstract: their sentences are past "
                f"the first {params.max_sentences}"
            )
        return out
