"""The ``neighbourhood`` operator: how central each candidate is to the citation neighbourhood of a seed set.

A field's literature is a citation neighbourhood. Given the strongest text matches for a topic (the seeds),
the papers that matter to the topic are the ones many seeds cite (centrality: each seed's vote weighted by
its rank, so the best matches count most), the ones cited alongside the seeds by later work (co-citation),
and the ones whose references overlap the seeds' (bibliographic coupling). The raw counts go into the
evidence, where the ``score`` operator reads them as ``ev:<node>.centrality`` and so on, and where the user
sees them ("cited by 7 of the 30 strongest matches").
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from pydantic import Field

from pilot.models import Paper, RankedPaper
from pilot.sources.base import SourceError
from workflows.operator import Operator, OperatorInputs, OperatorParams, RunContext, port, register
from workflows.ops.features import COVERAGE, NEIGHBOURHOOD_SCORES, node_score_key
from workflows.ports import PortType


class NeighbourhoodParams(OperatorParams):
    max_seeds: int = Field(30, ge=1, le=500, description="use this many seeds, best first")
    rank_decay: float = Field(
        10.0, gt=0, le=10_000, description="the seed at rank r votes 1 / (1 + r / rank_decay); large = equal votes"
    )
    max_lookups: int = Field(
        60,
        ge=0,
        le=2000,
        description="at most this many source calls for seeds / citers whose reference lists are unknown",
    )
    per_paper_limit: int = Field(
        200, ge=1, le=2000, description="references per lookup (citation_expand's default: its cached calls are reused)"
    )
    full_coverage: float = Field(
        1.0,
        gt=0,
        le=1,
        description="the (rank-weighted) share of the pool with citation links from which the graph covers the "
        "request fully",
    )
    no_coverage: float = Field(
        0.0,
        ge=0,
        lt=1,
        description="the share up to which the graph does not cover the request at all: <node>.coverage = "
        "(share - no_coverage) / (full_coverage - no_coverage), clipped to [0, 1]",
    )
    only_free_graph: bool = Field(
        False,
        description="look anything up only when the source's citation graph costs nothing (the offline corpus); "
        "over a rate-limited service pass the papers on unscored",
    )


class _References:
    """Reference lists: the record's own when the source gave one, else looked up within the budget — the
    unknown lists of one call to ``many`` in one ``linked`` request, which a remote source batches (Semantic
    Scholar answers up to 500 papers per request) instead of one rate-limited request per paper."""

    def __init__(self, ctx: RunContext, budget: int, limit: int):
        self.ctx = ctx
        self.budget = budget
        self.limit = limit
        self.failed = 0

    async def many(self, papers: list[Paper]) -> list[set[str]]:
        unknown = list(dict.fromkeys(p.id for p in papers if p.references is None))[: max(0, self.budget)]
        self.budget -= len(unknown)
        found: dict[str, list[Paper]] = {}
        if unknown:
            try:
                got = await self.ctx.source.linked(unknown, "references", self.limit)
                found, self.failed = got.found, self.failed + len(got.failed)
            except SourceError:
                self.failed += len(unknown)
        return [set(p.references) if p.references is not None else {q.id for q in found.get(p.id, [])} for p in papers]


@dataclass(kw_only=True)
class NeighbourhoodInputs(OperatorInputs):
    papers: list[RankedPaper] = port(PortType.PAPERS, name="in", description="the candidates to score")
    seeds: list[RankedPaper] = port(PortType.PAPERS, description="the strongest matches, best first")
    citers: list[RankedPaper] | None = port(
        PortType.PAPERS, optional=True, description="papers citing the seeds (for co-citation)"
    )
    pool: list[RankedPaper] | None = port(
        PortType.PAPERS,
        optional=True,
        description="the strongest matches the seeds were taken from: the share of them with known citation links "
        "is the graph's coverage of the request (<node>.coverage), by which a score step can weigh the graph's votes",
    )


def link_coverage(papers: list[Paper], rank_decay: float = 10_000.0) -> float:
    """The share of papers whose citation links the source holds, each weighed by its rank like a seed's vote
    (the best matches count most): a reference list that is unknown (a remote service's search records) may hold
    links, one known to be empty (a record outside the source's graph) does not."""
    weights = [1.0 / (1.0 + rank / rank_decay) for rank in range(len(papers))]
    linked = [p.references is None or bool(p.references) or bool(p.in_corpus_citations) for p in papers]
    return sum(w for w, ok in zip(weights, linked, strict=True) if ok) / sum(weights) if papers else 0.0


@register
class NeighbourhoodOp(Operator[NeighbourhoodParams, NeighbourhoodInputs]):
    name = "neighbourhood"
    reorders_only = True
    family = "scoring"
    description = (
        "Score papers by their place in the seeds' citation neighbourhood: cited by many seeds (centrality, "
        "rank-weighted), cited alongside them (co-citation), sharing their references (coupling)."
    )
    Params = NeighbourhoodParams
    Inputs = NeighbourhoodInputs
    output = PortType.RANKED

    async def run(self, ctx: RunContext, params: NeighbourhoodParams, inputs: NeighbourhoodInputs) -> list[RankedPaper]:
        items = inputs.papers
        seeds = [it.paper for it in inputs.seeds][: params.max_seeds]
        citers = [it.paper for it in inputs.citers or []]
        if not items:
            return []
        if ctx.skips_paid_graph(params.only_free_graph):
            return list(items)
        refs = _References(ctx, params.max_lookups, params.per_paper_limit)
        centrality: dict[str, float] = defaultdict(float)
        seeds_citing: dict[str, int] = defaultdict(int)
        seed_refs: set[str] = set()
        for rank, cited in enumerate(await refs.many(seeds)):
            for pid in cited:
                centrality[pid] += 1.0 / (1.0 + rank / params.rank_decay)
                seeds_citing[pid] += 1
            seed_refs |= cited
        seed_ids = {p.id for p in seeds}
        cocitation: dict[str, int] = defaultdict(int)
        for cited in await refs.many([p for p in citers if p.id not in seed_ids]):
            for pid in cited:
                cocitation[pid] += 1
        # unknown lists only while the budget lasts; a paper never counts as sharing a reference to itself
        listed = await refs.many([it.paper for it in items])
        own = [cited - {it.paper.id} for it, cited in zip(items, listed, strict=True)]
        if refs.failed:
            ctx.notes.append(f"{refs.failed} reference lookups failed; neighbourhood scores are partial")
        share = link_coverage([it.paper for it in inputs.pool or []], params.rank_decay)
        span = max(1e-9, params.full_coverage - params.no_coverage)
        coverage = min(1.0, max(0.0, (share - params.no_coverage) / span))
        if inputs.pool is not None and coverage < 1:
            ctx.notes.append(
                f"few of the strongest matches have citation links in the source ({share:.0%}, the best-ranked "
                f"counting most): the citation graph's votes weigh {coverage:.0%} of their usual"
            )
        out = []
        for it, cited in zip(items, own, strict=True):
            pid = it.paper.id
            counts = (
                centrality.get(pid, 0.0),
                seeds_citing.get(pid, 0),
                cocitation.get(pid, 0),
                len(cited & seed_refs),
            )
            values: dict[str, float] = dict(zip(NEIGHBOURHOOD_SCORES, counts, strict=True))
            if inputs.pool is not None:
                values[COVERAGE] = coverage
            ev = it.evidence.model_copy(deep=True)
            ev.scores.update({node_score_key(ctx.node_id, k): round(float(v), 4) for k, v in values.items()})
            out.append(it.model_copy(update={"evidence": ev}))
        return out
