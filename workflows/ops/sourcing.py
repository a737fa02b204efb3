"""Sourcing operators: where papers enter a workflow (anchor, searches, citation graph, recommendations)."""

from __future__ import annotations

import asyncio
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from pilot.models import Paper, RankedPaper, SearchFilters, SearchHit
from pilot.sources.base import BudgetExhausted, GraphDirection, NotFound, SearchMode, SourceError
from pilot.sources.boolean import all_of, any_of
from workflows.operator import (
    NoInputs,
    Operator,
    OperatorError,
    OperatorInputs,
    OperatorParams,
    RunContext,
    port,
    register,
)
from workflows.ops.features import node_score_key, papers_of, ranked, support_key
from workflows.ports import PortType


class AnchorParams(OperatorParams):
    query: str = Field(..., min_length=1, max_length=1000, description="title, DOI, arXiv id, S2 id or corpus id")


@register
class AnchorOp(Operator[AnchorParams, NoInputs]):
    name = "anchor"
    family = "sourcing"
    description = "Resolve what the user typed (title, DOI, arXiv/S2/corpus id) to the one anchor paper."
    Params = AnchorParams
    output = PortType.RANKED

    async def run(self, ctx: RunContext, params: AnchorParams, inputs: NoInputs) -> list[RankedPaper]:
        found = await ctx.source.match_paper(params.query, limit=1)
        if not found:
            raise NotFound(
                ctx.source.name, f"no paper matches {params.query!r}", "check the title or paste its DOI / id"
            )
        return [ranked(found[0], ctx.node_id, 1.0, anchor=1.0)]


class FetchParams(OperatorParams):
    ids: list[str] = Field(..., min_length=1, max_length=1000, description="paper ids of this source")


@register
class FetchOp(Operator[FetchParams, NoInputs]):
    name = "fetch"
    family = "sourcing"
    description = "The papers with the given ids (e.g. ones the user liked, or a candidate pool), in that order."
    Params = FetchParams
    output = PortType.RANKED

    async def run(self, ctx: RunContext, params: FetchParams, inputs: NoInputs) -> list[RankedPaper]:
        papers = await ctx.source.get_papers(list(dict.fromkeys(params.ids)))
        if len(papers) < len(set(params.ids)):
            ctx.notes.append(
                f"{len(set(params.ids)) - len(papers)} of {len(set(params.ids))} ids are unknown to the source"
            )
        n = len(papers)
        return [ranked(p, ctx.node_id, (n - i) / n) for i, p in enumerate(papers)]


class SearchParams(OperatorParams):
    query: str = Field("", max_length=1000, description="search text; joined with any connected inputs")
    limit: int = Field(50, ge=1, le=1000)
    year_min: int | None = Field(None, ge=1000, le=2100)
    year_max: int | None = Field(None, ge=1000, le=2100)
    venue: str | None = None
    exclude_anchor: bool = Field(True, description="drop the connected anchor paper(s) from the hits")


class DenseSearchParams(SearchParams):
    min_similarity: float | None = Field(
        None,
        ge=0,
        le=1,
        description="drop hits whose cosine to the query is below this: a query the encoder does not know (a short "
        "name such as 'ELMo') only has distant hits, and they are noise; over a source whose scores are not "
        "cosines (Semantic Scholar's relevance search) nothing is dropped",
    )


class KeywordSearchParams(SearchParams):
    per_keyword: bool = Field(
        False, description="one search per keyword, fused by reciprocal rank, instead of one query"
    )


@dataclass(kw_only=True)
class SearchInputs(OperatorInputs):
    keywords: list[str] | None = port(PortType.KEYWORDS, optional=True, description="terms added to the query")
    text: str | None = port(PortType.TEXT, optional=True, description="free text added to the query")
    anchor: list[RankedPaper] | None = port(
        PortType.PAPERS, optional=True, description="papers whose text is the query"
    )


class _SearchOp(Operator[SearchParams, SearchInputs]):
    """Shared body of the lexical and dense searches; they differ in mode and in how much anchor text they use."""

    family = "sourcing"
    Inputs = SearchInputs
    output = PortType.RANKED
    mode: SearchMode = "lexical"

    def anchor_text(self, paper: Paper) -> str:
        return paper.title

    def queries(self, params: SearchParams, inputs: SearchInputs) -> list[str]:
        base = [params.query.strip()] if params.query.strip() else []
        if inputs.text:
            base.append(inputs.text.strip())
        base += [self.anchor_text(p) for p in papers_of(inputs.anchor)]
        keywords = [k for k in (inputs.keywords or []) if k and k.strip()]
        if isinstance(params, KeywordSearchParams) and params.per_keyword and keywords:
            prefix = " ".join(base)
            return [f"{prefix} {k}".strip() for k in keywords]
        joined = " ".join(base + keywords).strip()
        return [joined] if joined else []

    async def hit_lists(
        self, ctx: RunContext, params: SearchParams, inputs: SearchInputs, filters: SearchFilters, drop: set[str]
    ) -> list[list[SearchHit]]:
        """One ranked list of hits per query."""
        queries = self.queries(params, inputs)
        if not queries:
            raise OperatorError("nothing to search for — set params.query or connect keywords / text / an anchor")
        return list(
            await asyncio.gather(
                *(
                    ctx.source.search_papers(q, filters=f, limit=params.limit + len(drop), mode=self.mode)
                    for q, f in zip(queries, self.query_filters(params, inputs, filters, len(queries)), strict=True)
                )
            )
        )

    def query_filters(
        self, params: SearchParams, inputs: SearchInputs, filters: SearchFilters, n: int
    ) -> list[SearchFilters]:
        """Each query's filters. A per-keyword search also says what a match is — any of the step's own words
        and the keyword — for a source whose deep results come unranked (one bulk request instead of ten
        pages); its words are alternatives ("survey overview review"), the keyword is what it is about."""
        keywords = [k for k in (inputs.keywords or []) if k and k.strip()]
        if not (isinstance(params, KeywordSearchParams) and params.per_keyword and keywords and len(keywords) == n):
            return [filters] * n
        if inputs.text or papers_of(inputs.anchor):
            return [filters] * n  # a title or a text as the prefix is no list of alternatives
        words = params.query.split()
        return [
            filters.model_copy(update={"deep_match": all_of([any_of(words), any_of([k])]) or None}) for k in keywords
        ]

    async def run(self, ctx: RunContext, params: SearchParams, inputs: SearchInputs) -> list[RankedPaper]:
        filters = SearchFilters(year_min=params.year_min, year_max=params.year_max, venue=params.venue)
        drop = {p.id for p in papers_of(inputs.anchor)} if params.exclude_anchor else set()
        results = await self.hit_lists(ctx, params, inputs, filters, drop)
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
        value = (lambda pid: best[pid][1]) if len(results) == 1 else (lambda pid: fused[pid])
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
    Params = DenseSearchParams
    mode = "dense"

    async def run(self, ctx: RunContext, params: SearchParams, inputs: SearchInputs) -> list[RankedPaper]:
        hits = await super().run(ctx, params, inputs)
        floor = params.min_similarity if isinstance(params, DenseSearchParams) else None
        if floor is None or not ctx.source.searches_by_meaning():
            return hits
        close = [h for h in hits if h.evidence.scores.get(self.name, 0.0) >= floor]
        if len(close) < len(hits):
            best = max((h.evidence.scores.get(self.name, 0.0) for h in hits), default=0.0)
            ctx.notes.append(
                f"{len(hits) - len(close)} of the {len(hits)} dense hits are less similar than {floor:g} to the "
                f"query (the closest is {best:.2f}) and were dropped"
                + ("; the encoder may not know its words, so the word searches decide" if not close else "")
            )
        return close

    def anchor_text(self, paper: Paper) -> str:
        return paper.text

    async def hit_lists(
        self, ctx: RunContext, params: SearchParams, inputs: SearchInputs, filters: SearchFilters, drop: set[str]
    ) -> list[list[SearchHit]]:
        """Over a source without a search by meaning (Semantic Scholar's every search is a relevance search), the
        anchor's neighbours are its recommendations — one request for up to 500 papers, closeness by the
        service's own embeddings — instead of a relevance search with a whole abstract as the query; words of
        the step's own (a query, connected text or keywords) are still searched, and the lists fused."""
        anchors = papers_of(inputs.anchor)
        if not anchors or ctx.source.searches_by_meaning():
            return await super().hit_lists(ctx, params, inputs, filters, drop)
        try:
            papers = await ctx.source.recommend([a.id for a in anchors], limit=min(500, params.limit + len(drop)))
        except BudgetExhausted:
            raise
        except SourceError as exc:
            ctx.notes.append(f"no recommendations for the anchor ({exc.message}): searched with its text instead")
            return await super().hit_lists(ctx, params, inputs, filters, drop)
        near = [p for p in papers if _within(p, filters)]
        lists = [[SearchHit(paper=p, score=1.0 / (1 + i)) for i, p in enumerate(near)]]
        if params.query.strip() or (inputs.text or "").strip() or any(k.strip() for k in inputs.keywords or []):
            lists += await super().hit_lists(ctx, params, inputs, filters, drop)
        return lists


def _within(paper: Paper, filters: SearchFilters) -> bool:
    """The search's own year / venue filters, for lists that come unfiltered (recommendations)."""
    if filters.year_min is not None and (paper.year is None or paper.year < filters.year_min):
        return False
    if filters.year_max is not None and (paper.year is None or paper.year > filters.year_max):
        return False
    return not filters.venue or filters.venue.lower() in (paper.venue or "").lower()


class CitationExpandParams(OperatorParams):
    direction: Literal["references", "citations", "both"] = "references"
    depth: int = Field(1, ge=1, le=2)
    per_paper_limit: int = Field(200, ge=1, le=2000)
    max_seeds: int = Field(50, ge=1, le=500, description="expand at most this many input papers (best first)")
    include_seeds: bool = False
    rank_decay: float | None = Field(
        None,
        gt=0,
        le=10_000,
        description="also score each paper by its seeds' rank-weighted votes (<node>.centrality): the seed at "
        "rank r counts 1 / (1 + r / rank_decay), so the best seeds count most; none = only the count (.support)",
    )
    only_free_graph: bool = Field(
        False,
        description="expand only when the source's citation graph costs nothing (the offline corpus); over a "
        "rate-limited service pass nothing on (a step that only refines an order is not worth the wait)",
    )


@dataclass(kw_only=True)
class SeedInputs(OperatorInputs):
    seeds: list[RankedPaper] = port(PortType.PAPERS, name="in", description="seed papers")


@register
class CitationExpandOp(Operator[CitationExpandParams, SeedInputs]):
    name = "citation_expand"
    family = "sourcing"
    description = "Follow the citation graph from the input papers: references, citations or both, 1-2 hops."
    Params = CitationExpandParams
    Inputs = SeedInputs
    output = PortType.RANKED

    async def run(self, ctx: RunContext, params: CitationExpandParams, inputs: SeedInputs) -> list[RankedPaper]:
        if ctx.skips_paid_graph(params.only_free_graph):
            return []
        # seeds arrive best first; a source that must ration requests expands them in that order
        seeds = [it.paper for it in inputs.seeds][: params.max_seeds]
        seen = {p.id for p in seeds}
        support: dict[str, int] = defaultdict(int)
        # votes of the first hop's seeds weighted by their rank (a close neighbour's references say more
        # about the anchor's foundations than a far one's); later hops have no rank of their own
        centrality: dict[str, float] = defaultdict(float)
        hops: dict[str, int] = {}
        papers: dict[str, Paper] = {}
        directions: list[GraphDirection] = (
            ["references", "citations"] if params.direction == "both" else [params.direction]
        )
        frontier = [p.id for p in seeds]
        calls = 0
        failed: dict[str, SourceError] = {}
        for hop in range(1, params.depth + 1):
            if not frontier:
                break
            calls += len(frontier)
            lists: dict[str, list[Paper]] = defaultdict(list)
            for direction in directions:
                what = f"expanding {direction}" + (f" (hop {hop})" if params.depth > 1 else "")

                def progress(done: int, total: int, what: str = what) -> None:
                    ctx.report(f"{what}: {done} of {total} seeds")

                got = await ctx.source.linked(frontier, direction, params.per_paper_limit, progress=progress)
                for pid in frontier:
                    lists[pid] += got.found.get(pid, [])
                failed.update({pid: exc for pid, exc in got.failed.items() if pid not in got.found})
            nxt: list[str] = []
            for rank, pid in enumerate(frontier):
                for p in {q.id: q for q in lists[pid]}.values():  # one seed counts once per target
                    if p.id in seen and p.id not in papers:
                        continue  # a seed itself
                    support[p.id] += 1
                    if hop == 1 and params.rank_decay is not None:
                        centrality[p.id] += 1.0 / (1.0 + rank / params.rank_decay)
                    if p.id not in papers:
                        papers[p.id] = p
                        hops[p.id] = hop
                        nxt.append(p.id)
            frontier = nxt[: params.max_seeds]
        if failed and len(failed) >= calls and not papers:
            raise next(iter(failed.values()))
        spent = [pid for pid, exc in failed.items() if isinstance(exc, BudgetExhausted)]
        if spent:
            ctx.notes.append(
                f"{len(spent)} of {calls} seeds not expanded: the turn's request budget was spent "
                f"({', '.join(directions)} of the lower-ranked seeds skipped)"
            )
        others = [exc for exc in failed.values() if not isinstance(exc, BudgetExhausted)]
        if others:
            ctx.notes.append(f"{len(others)} of {calls} lookups failed ({others[0].message})")
        key = support_key(ctx.node_id)
        order = sorted(papers, key=lambda pid: (hops[pid], -support[pid]))
        weighted = node_score_key(ctx.node_id, "centrality")

        def scores(pid: str) -> dict[str, float]:
            values: dict[str, float] = {key: support[pid], "hops": hops[pid]}
            if params.rank_decay is not None:
                values[weighted] = round(centrality.get(pid, 0.0), 4)
            return values

        out = [ranked(papers[pid], ctx.node_id, support[pid], **scores(pid)) for pid in order]
        if params.include_seeds:
            out = [ranked(p, ctx.node_id, 0.0, hops=0) for p in seeds] + out
        return out


class RecommendParams(OperatorParams):
    limit: int = Field(50, ge=1, le=500)
    max_seeds: int = Field(20, ge=1, le=100)


@dataclass(kw_only=True)
class RecommendInputs(OperatorInputs):
    positive: list[RankedPaper] = port(PortType.PAPERS, name="in", description="positive seeds")
    negative: list[RankedPaper] | None = port(PortType.PAPERS, optional=True, description="negative seeds")


@register
class RecommendOp(Operator[RecommendParams, RecommendInputs]):
    name = "recommend"
    family = "sourcing"
    description = "Papers the source recommends from positive (and optional negative) seed papers."
    Params = RecommendParams
    Inputs = RecommendInputs
    output = PortType.RANKED

    async def run(self, ctx: RunContext, params: RecommendParams, inputs: RecommendInputs) -> list[RankedPaper]:
        pos = [it.paper.id for it in inputs.positive][: params.max_seeds]
        if not pos:
            return []
        neg = [it.paper.id for it in inputs.negative or []][: params.max_seeds]
        papers = await ctx.source.recommend(pos, neg or None, limit=params.limit)
        drop = set(pos) | set(neg)
        kept = [p for p in papers if p.id not in drop]
        n = len(kept)
        return [ranked(p, ctx.node_id, (n - i) / n, recommend=(n - i) / n) for i, p in enumerate(kept)]


class NamedInParams(OperatorParams):
    max_names: int = Field(8, ge=1, le=30, description="look up at most this many names, in the text's order")
    per_name: int = Field(3, ge=1, le=10, description="papers that introduce one name, best known first")
    years_before: int = Field(15, ge=0, le=100, description="the time window: at most this many years before the paper")


# Names a text mentions: acronyms and coined words ("BLEU", "WMT", "LSTM", "GloVe", "ResNet") and capitalised words
# inside a sentence ("the Transformer", "the Adam optimizer"), which methods and resources go by.
_NAME = re.compile(r"(?<![\w\-])(?:[A-Z][a-z]*[A-Z][\w\-]*|[A-Z]{2,}[\w\-]*|(?<=[a-z,] )[A-Z][a-z]{3,})(?![\w\-])")
_NOT_NAMES = frozenset("English German French Chinese Spanish Japanese However While This These Our We In".split())


def names_in(text: str, limit: int) -> list[str]:
    """The names a text mentions, each once, in order (sentence-initial words and language names left out)."""
    found = [m.group(0).strip("-") for m in _NAME.finditer(text or "")]
    return [n for n in dict.fromkeys(found) if n not in _NOT_NAMES and len(n) > 1][:limit]


@register
class NamedInOp(Operator[NamedInParams, RecommendInputs]):
    name = "named_in"
    family = "sourcing"
    description = (
        'The papers that introduce the methods and resources a paper\'s title and abstract name ("BLEU", "LSTM"), '
        "in its time window: what its text says it builds on, where its reference list is unknown."
    )
    Params = NamedInParams
    Inputs = RecommendInputs
    output = PortType.RANKED

    async def run(self, ctx: RunContext, params: NamedInParams, inputs: RecommendInputs) -> list[RankedPaper]:
        out: dict[str, RankedPaper] = {}
        for it in inputs.positive:
            paper = it.paper
            # a title capitalises every word: only its acronyms and coined words are names there
            coined = [n for n in names_in(paper.title, params.max_names) if not n.istitle()]
            names = list(dict.fromkeys([*coined, *names_in(paper.abstract or "", params.max_names)]))
            names = names[: params.max_names]
            found = await asyncio.gather(*(ctx.source.named_papers(n, limit=params.per_name) for n in names))
            for name, papers in zip(names, found, strict=True):
                for p in papers:
                    if p.id == paper.id or not _in_window(p, paper, params.years_before):
                        continue
                    if p.id in out:
                        ev = out[p.id].evidence
                        ev.scores[support_key(ctx.node_id)] += 1
                        ev.matched_terms.append(name)
                        continue
                    hit = ranked(p, ctx.node_id, 1.0, **{support_key(ctx.node_id): 1.0})
                    hit.evidence.matched_terms.append(name)
                    hit.evidence.reason = f"introduces {name}, which its abstract names"
                    out[p.id] = hit
        return sorted(out.values(), key=lambda r: -r.evidence.scores[support_key(ctx.node_id)])


def _in_window(p: Paper, anchor: Paper, years_before: int) -> bool:
    """Published in the anchor's time window: not after it, not more than ``years_before`` years before."""
    if p.year is None or anchor.year is None:
        return p.year is None or anchor.year is None
    return anchor.year - years_before <= p.year <= anchor.year
