"""Output operators: evidence for each result (snippet, matched terms, provenance, reason) and the relation graph."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from pydantic import Field

from pilot.models import RankedPaper
from workflows.operator import Operator, OperatorInputs, OperatorParams, RunContext, port, register
from workflows.ops.features import best_sentences, papers_of, support_node
from workflows.ports import PortType, RelationEdge, RelationGraph

# Evidence scores that are bookkeeping rather than a reason to show the user.
_QUIET = {"rrf", "hops", "anchor"}


class EvidenceParams(OperatorParams):
    text: str = Field(
        "", max_length=2000, description="the intent the snippets should support (connected text/keywords added)"
    )
    dense_top: int = Field(
        5, ge=0, le=500, description="pick sentences with embeddings for this many top papers (the rest: term overlap)"
    )
    top_n: int = Field(50, ge=1, le=500, description="write evidence for this many from the top")


def _telling(kv: tuple[str, float]) -> tuple[int, float]:
    """Graph evidence first (it says how the paper relates), then text similarity, then popularity."""
    name, value = kv
    if support_node(name) is not None or name in ("coupling", "cocitation", "coupling_cos", "graph_distance"):
        rank = 0
    elif name in ("dense", "lexical", "title_match", "rerank", "nli", "fine_read"):
        rank = 1
    else:
        rank = 2
    return rank, -abs(value)


def _reason(it: RankedPaper, matched: list[str]) -> str:
    ev = it.evidence
    parts = []
    if ev.nodes:
        parts.append("found by " + ", ".join(ev.nodes))
    shown = sorted(((k, v) for k, v in ev.scores.items() if k not in _QUIET and v), key=_telling)[:3]
    if shown:
        parts.append("; ".join(f"{k}={v:g}" for k, v in shown))
    if matched:
        parts.append("mentions " + ", ".join(matched[:5]))
    return "; ".join(parts) or "in the input list"


@dataclass(kw_only=True)
class EvidenceInputs(OperatorInputs):
    ranked: list[RankedPaper] = port(PortType.RANKED, name="in")
    anchor: list[RankedPaper] | None = port(
        PortType.PAPERS, optional=True, description="used as the intent when there is no text"
    )
    text: str | None = port(PortType.TEXT, optional=True)
    keywords: list[str] | None = port(PortType.KEYWORDS, optional=True)


@register
class ExtractEvidenceOp(Operator[EvidenceParams, EvidenceInputs]):
    name = "extract_evidence"
    family = "output"
    description = (
        "For each paper: the title/abstract sentence that best supports the intent, matched terms and a reason."
    )
    Params = EvidenceParams
    Inputs = EvidenceInputs
    output = PortType.EVIDENCE

    async def run(self, ctx: RunContext, params: EvidenceParams, inputs: EvidenceInputs) -> list[RankedPaper]:
        items = inputs.ranked
        head, tail = items[: params.top_n], items[params.top_n :]
        query = " ".join(x for x in (params.text, inputs.text or "", " ".join(inputs.keywords or [])) if x)
        anchors = papers_of(inputs.anchor)
        papers = [it.paper for it in head]
        # embedding every sentence of 50 abstracts costs seconds on a CPU; the top few get it, the rest overlap
        # sentence embeddings are CPU work: off the event loop, so a running search's requests keep flowing
        best = await asyncio.to_thread(best_sentences, ctx, papers[: params.dense_top], query.strip(), anchors)
        best += best_sentences(ctx, papers[params.dense_top :], query.strip(), anchors, dense=False)
        out = []
        for it, matches in zip(head, best, strict=True):
            sentence, _, matched = matches[0]
            ev = it.evidence.model_copy(deep=True)
            # a passage picked upstream (facet_match's best-matching sentence) says more than term overlap
            ev.snippet = ev.snippet or sentence[:400]
            ev.matched_terms = matched
            ev.reason = ev.reason or _reason(it, matched)
            out.append(it.model_copy(update={"evidence": ev}))
        return out + tail


class GraphParams(OperatorParams):
    min_shared: int = Field(2, ge=1, le=50, description="shared references needed for a 'coupled' edge")
    max_papers: int = Field(100, ge=1, le=500)


@dataclass(kw_only=True)
class GraphInputs(OperatorInputs):
    papers: list[RankedPaper] = port(PortType.PAPERS, name="in")


@register
class BuildGraphOp(Operator[GraphParams, GraphInputs]):
    name = "build_graph"
    family = "output"
    description = "Citation and bibliographic-coupling relations among the result papers, as a graph."
    Params = GraphParams
    Inputs = GraphInputs
    output = PortType.GRAPH

    async def run(self, ctx: RunContext, params: GraphParams, inputs: GraphInputs) -> RelationGraph:
        papers = [it.paper for it in inputs.papers][: params.max_papers]
        ids = {p.id for p in papers}
        edges: list[RelationEdge] = []
        refs = {p.id: set(p.references or []) for p in papers}
        for p in papers:
            edges += [RelationEdge(source=p.id, target=r, kind="cites") for r in sorted(refs[p.id] & ids)]
        for i, a in enumerate(papers):
            for b in papers[i + 1 :]:
                shared = len(refs[a.id] & refs[b.id])
                if shared >= params.min_shared:
                    edges.append(RelationEdge(source=a.id, target=b.id, kind="coupled", weight=float(shared)))
        return RelationGraph(nodes=[p.id for p in papers], edges=edges)
