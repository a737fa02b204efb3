"""Sourcing operators: where papers enter a workflow (anchor, searches, citation graph, recommendations)."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from pilot.models import Paper, RankedPaper, SearchFilters
from pilot.sources.base import BadRequest, NotFound, SourceError
from workflows.operator import InputPort, Operator, RunContext, register
from workflows.ops.features import input_list, papers_of, ranked
from workflows.ports import PortType

# How many source calls one node keeps in flight (a remote API would rate-limit more).
_CONCURRENCY = 8


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AnchorParams(_Params):
    query: str = Field(..., min_length=1, max_length=1000, description="title, DOI, arXiv id, S2 id or corpus id")


@register
class AnchorOp(Operator):
    name = "anchor"
    family = "sourcing"
    description = "Resolve what the user typed (title, DOI, arXiv/S2/corpus id) to the one anchor paper."
    Params = AnchorParams
    inputs: dict[str, InputPort] = {}
    output = PortType.RANKED

    async def run(self, ctx: RunContext, params: AnchorParams, inputs: dict[str, Any]) -> list[RankedPaper]:
        found = await ctx.source.match_paper(params.query, limit=1)
        if not found:
            raise NotFound(
                ctx.source.name, f"no paper matches {params.query!r}", "check the title or paste its DOI / id"
            )
        return [ranked(found[0], ctx.node_id, 1.0, anchor=1.0)]


class FetchParams(_Params):
    ids: list[str] = Field(..., min_length=1, max_length=1000, description="paper ids of this source")


@register
class FetchOp(Operator):
    name = "fetch"
    family = "sourcing"
    description = "The papers with the given ids (e.g. ones the user liked, or a candidate pool), in that order."
    Params = FetchParams
    inputs: dict[str, InputPort] = {}
    output = PortType.RANKED

    async def run(self, ctx: RunContext, params: FetchParams, inputs: dict[str, Any]) -> list[RankedPaper]:
        papers = await ctx.source.get_papers(list(dict.fromkeys(params.ids)))
        if len(papers) < len(set(params.ids)):
            ctx.notes.append(
                f"{len(set(params.ids)) - len(papers)} of {len(set(params.ids))} ids are unknown to the source"
            )
        n = len(papers)
        return [ranked(p, ctx.node_id, (n - i) / n) for i, p in enumerate(papers)]


class SearchParams(_Params):
    query: str = Field("", max_length=1000, description="search text; joined with any connected inputs")
    limit: int = Field(50, ge=1, le=1000)
    year_min: int | None = Field(None, ge=1000, le=2100)
    year_max: int | None = Field(None, ge=1000, le=2100)
    venue: str | None = None
    exclude_anchor: bool = Field(True, description="drop the connected anchor paper(s) from the hits")


class KeywordSearchParams(SearchParams):
    per_keyword: bool = Field(
        False, description="one search per keyword, fused by reciprocal rank, instead of one query"
    )


_SEARCH_INPUTS = {
    "keywords": InputPort(PortType.KEYWORDS, optional=True, description="terms added to the query"),
    "text": InputPort(PortType.TEXT, optional=True, description="free text added to the query"),
    "anchor": InputPort(PortType.PAPERS, optional=True, description="papers whose text is the query"),
}


class _SearchOp(Operator):
    """Shared body of the lexical and dense searches; they differ in mode and in how much anchor text they use."""

    family = "sourcing"
    inputs = _SEARCH_INPUTS
    output = PortType.RANKED
    mode: str = "lexical"

    def anchor_text(self, paper: Paper) -> str:
        return paper.title

    def queries(self, params: SearchParams, inputs: dict[str, Any]) -> list[str]:
        base = [params.query.strip()] if params.query.strip() else []
        if inputs.get("text"):
            base.append(str(inputs["text"]).strip())
        base += [self.anchor_text(p) for p in papers_of(inputs.get("anchor"))]
        keywords = [k for k in (inputs.get("keywords") or []) if k and k.strip()]
        if getattr(params, "per_keyword", False) and keywords:
            prefix = " ".join(base)
            return [f"{prefix} {k}".strip() for k in keywords]
        joined = " ".join(base + keywords).strip()
        return [joined] if joined else []

    async def run(self, ctx: RunContext, params: SearchParams, inputs: dict[str, Any]) -> list[RankedPaper]:
        queries = self.queries(params, inputs)
        if not queries:
            raise BadRequest(
                self.name, "nothing to search for", "set params.query or connect keywords / text / an anchor"
            )
        filters = SearchFilters(year_min=params.year_min, year_max=params.year_max, venue=params.venue)
        drop = {p.id for p in papers_of(inputs.get("anchor"))} if params.exclude_anchor else set()
        results = await asyncio.gather(
            *(
                ctx.source.search_papers(q, filters=filters, limit=params.limit + len(drop), mode=self.mode)
                for q in queries
            )
        )
        # reciprocal-rank fusion over the queries (one query = its own order)
        fused: dict[str, float] = defaultdict(float)
        best: dict[str, tuple[Paper, float]] = {}
        for hits in results:
            for rank, hit in enumerate(h for h in hits if h.paper.id not in drop):
                fused[hit.paper.id] += 1.0 / (60 + rank + 1)
                if hit.paper.id not in best or hit.score > best[hit.paper.id][1]:
                    best[hit.paper.id] = (hit.paper, hit.score)
        order = sorted(fused, key=lambda pid: -fused[pid])[: params.limit]
        # one query: the source's own score says more than a rank; several: their fusion
        value = (lambda pid: best[pid][1]) if len(queries) == 1 else (lambda pid: fused[pid])
        return [ranked(best[pid][0], ctx.node_id, value(pid), **{self.name: best[pid][1]}) for pid in order]


@register
class KeywordSearchOp(_SearchOp):
    name = "keyword_search"
    description = "Lexical (BM25-style) search of the source with a query, keywords and/or the anchor's title."
    Params = KeywordSearchParams
    mode = "lexical"


@register
class SemanticSearchOp(_SearchOp):
    name = "semantic_search"
    description = "Dense (embedding) search of the source with a text or the anchor paper's title and abstract."
    Params = SearchParams
    mode = "dense"

    def anchor_text(self, paper: Paper) -> str:
        return paper.text


class CitationExpandParams(_Params):
    direction: Literal["references", "citations", "both"] = "references"
    depth: int = Field(1, ge=1, le=2)
    per_paper_limit: int = Field(200, ge=1, le=2000)
    max_seeds: int = Field(50, ge=1, le=500, description="expand at most this many input papers (best first)")
    include_seeds: bool = False


async def neighbours(ctx: RunContext, pid: str, direction: str, limit: int) -> list[Paper]:
    """References and/or citations of one paper; a direction the source lacks yields nothing, not an error."""
    out: list[Paper] = []
    if direction in ("references", "both"):
        out += await ctx.source.references(pid, limit=limit)
    if direction in ("citations", "both"):
        out += await ctx.source.citations(pid, limit=limit)
    return out


@register
class CitationExpandOp(Operator):
    name = "citation_expand"
    family = "sourcing"
    description = "Follow the citation graph from the input papers: references, citations or both, 1-2 hops."
    Params = CitationExpandParams
    inputs = {"in": InputPort(PortType.PAPERS, description="seed papers")}
    output = PortType.RANKED

    async def run(self, ctx: RunContext, params: CitationExpandParams, inputs: dict[str, Any]) -> list[RankedPaper]:
        seeds = [it.paper for it in input_list(inputs.get("in"))][: params.max_seeds]
        seen = {p.id for p in seeds}
        support: dict[str, int] = defaultdict(int)
        hops: dict[str, int] = {}
        papers: dict[str, Paper] = {}
        errors: list[SourceError] = []
        sem = asyncio.Semaphore(_CONCURRENCY)

        async def one(pid: str) -> list[Paper]:
            async with sem:
                try:
                    return await neighbours(ctx, pid, params.direction, params.per_paper_limit)
                except SourceError as exc:
                    errors.append(exc)
                    return []

        frontier = [p.id for p in seeds]
        calls = 0
        for hop in range(1, params.depth + 1):
            if not frontier:
                break
            calls += len(frontier)
            found = await asyncio.gather(*(one(pid) for pid in frontier))
            nxt: list[str] = []
            for linked in found:
                for p in {q.id: q for q in linked}.values():  # one seed counts once per target
                    if p.id in seen and p.id not in papers:
                        continue  # a seed itself
                    support[p.id] += 1
                    if p.id not in papers:
                        papers[p.id] = p
                        hops[p.id] = hop
                        nxt.append(p.id)
            frontier = nxt[: params.max_seeds]
        if errors and len(errors) >= calls:
            raise errors[0]
        if errors:
            ctx.notes.append(f"{len(errors)} of {calls} lookups failed ({errors[0].message})")
        key = f"{ctx.node_id}.support" if ctx.node_id else "support"
        order = sorted(papers, key=lambda pid: (hops[pid], -support[pid]))
        out = [
            ranked(papers[pid], ctx.node_id, support[pid], **{key: support[pid], "hops": hops[pid]}) for pid in order
        ]
        if params.include_seeds:
            out = [ranked(p, ctx.node_id, 0.0, hops=0) for p in seeds] + out
        return out


class RecommendParams(_Params):
    limit: int = Field(50, ge=1, le=500)
    max_seeds: int = Field(20, ge=1, le=100)


@register
class RecommendOp(Operator):
    name = "recommend"
    family = "sourcing"
    description = "Papers the source recommends from positive (and optional negative) seed papers."
    Params = RecommendParams
    inputs = {
        "in": InputPort(PortType.PAPERS, description="positive seeds"),
        "negative": InputPort(PortType.PAPERS, optional=True, description="negative seeds"),
    }
    output = PortType.RANKED

    async def run(self, ctx: RunContext, params: RecommendParams, inputs: dict[str, Any]) -> list[RankedPaper]:
        pos = [it.paper.id for it in input_list(inputs.get("in"))][: params.max_seeds]
        if not pos:
            return []
        neg = [it.paper.id for it in input_list(inputs.get("negative"))][: params.max_seeds]
        papers = await ctx.source.recommend(pos, neg or None, limit=params.limit)
        drop = set(pos) | set(neg)
        kept = [p for p in papers if p.id not in drop]
        n = len(kept)
        return [ranked(p, ctx.node_id, (n - i) / n, recommend=(n - i) / n) for i, p in enumerate(kept)]
