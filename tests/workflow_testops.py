"""Tiny test-only operators (names start with ``t_``) for the workflow machinery tests.

The real operator library is tested on its own; these keep validation / edit / executor tests about the
machinery, with behaviour the tests control exactly (sleeps, failures, call logs).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from hypothesis import strategies as st
from pydantic import Field

from pilot.models import Evidence, Paper, RankedPaper
from pilot.sources.base import NotSupported
from workflows.model import AddNode, Edge, ModifyNode, Node, RemoveNode, Rewire, Workflow
from workflows.operator import REGISTRY, Operator, OperatorInputs, OperatorParams, port, register
from workflows.ports import PortType

# every run of a t_ operator: (op name, node id, params dict, perf_counter start, perf_counter end)
CALLS: list[tuple[str, str, dict, float, float]] = []


def ranked(ids: list[str], node_id: str = "", score: float = 1.0) -> list[RankedPaper]:
    return [
        RankedPaper(paper=Paper(id=i, title=f"Paper {i}"), score=score, evidence=Evidence(nodes=[node_id])) for i in ids
    ]


@dataclass(kw_only=True)
class PapersIn(OperatorInputs):
    papers: list[RankedPaper] = port(PortType.PAPERS, name="in")


@dataclass(kw_only=True)
class ListsIn(OperatorInputs):
    lists: list[list[RankedPaper]] = port(PortType.PAPERS, many=True, name="in")


@dataclass(kw_only=True)
class SearchIn(OperatorInputs):
    keywords: list[str] = port(PortType.KEYWORDS, name="in")
    seeds: list[RankedPaper] | None = port(PortType.PAPERS, optional=True)


@dataclass(kw_only=True)
class RankedIn(OperatorInputs):
    ranked: list[RankedPaper] = port(PortType.RANKED, name="in")


@dataclass(kw_only=True)
class CollectIn(OperatorInputs):
    papers: list[list[RankedPaper]] | None = port(PortType.PAPERS, many=True, optional=True)
    keywords: list[str] | None = port(PortType.KEYWORDS, optional=True)


class _Logged(Operator):
    async def run(self, ctx, params, inputs):
        start = time.perf_counter()
        try:
            return await self.body(ctx, params, inputs)
        finally:
            CALLS.append((self.name, ctx.node_id, params.model_dump(), start, time.perf_counter()))

    async def body(self, ctx, params, inputs):  # pragma: no cover
        raise NotImplementedError


class SourceParams(OperatorParams):
    ids: list[str] = Field(default_factory=lambda: ["a", "b"])
    score: float = 1.0
    delay: float = 0.0


class TSource(_Logged):
    name = "t_source"
    family = "sourcing"
    description = "test: a fixed list of papers"
    Params = SourceParams
    output = PortType.PAPERS

    async def body(self, ctx, params, inputs):
        if params.delay:
            await asyncio.sleep(params.delay)
        return ranked(params.ids, ctx.node_id, params.score)


class KeywordParams(OperatorParams):
    terms: list[str] = Field(default_factory=lambda: ["parsing"])


class TKeywords(_Logged):
    name = "t_keywords"
    family = "keywords"
    description = "test: fixed keywords"
    Params = KeywordParams
    output = PortType.KEYWORDS

    async def body(self, ctx, params, inputs):
        return list(params.terms)


class FilterParams(OperatorParams):
    k: int = Field(10, ge=1)
    drop: list[str] = Field(default_factory=list)


class TFilter(_Logged):
    name = "t_filter"
    family = "filtering"
    description = "test: drop ids, keep the top k, rank"
    Params = FilterParams
    Inputs = PapersIn
    output = PortType.RANKED

    async def body(self, ctx, params, inputs):
        kept = [r for r in inputs.papers if r.paper.id not in params.drop][: params.k]
        for r in kept:
            r.evidence.nodes.append(ctx.node_id)  # mutates its input copy on purpose (see executor._isolate)
        return kept


class TUnion(_Logged):
    name = "t_union"
    family = "sets"
    description = "test: union of paper lists"
    Inputs = ListsIn
    output = PortType.PAPERS

    async def body(self, ctx, params, inputs):
        seen: dict[str, RankedPaper] = {}
        for lst in inputs.lists:
            for r in lst:
                seen.setdefault(r.paper.id, r)
        return list(seen.values())


class TSearch(_Logged):
    name = "t_search"
    family = "sourcing"
    description = "test: papers named after keywords, plus optional seeds"
    Inputs = SearchIn
    output = PortType.PAPERS

    async def body(self, ctx, params, inputs):
        seeds = inputs.seeds or []
        return ranked([f"kw-{t}" for t in inputs.keywords], ctx.node_id) + list(seeds)


class TAnswer(_Logged):
    name = "t_answer"
    family = "output"
    description = "test: text summary of a ranked list"
    Inputs = RankedIn
    output = PortType.TEXT

    async def body(self, ctx, params, inputs):
        return ", ".join(r.paper.id for r in inputs.ranked)


class SlowParams(OperatorParams):
    seconds: float = 0.2
    tag: str = ""


class TSlow(_Logged):
    name = "t_slow"
    family = "sourcing"
    description = "test: sleeps, then returns one paper named by its tag"
    Params = SlowParams
    output = PortType.PAPERS

    async def body(self, ctx, params, inputs):
        await asyncio.sleep(params.seconds)
        return ranked([params.tag or ctx.node_id], ctx.node_id)


class TReorder(_Logged):
    name = "t_reorder"
    family = "reranking"
    description = "test: sleeps, then reverses its list (a step that only re-orders)"
    Params = SlowParams
    Inputs = RankedIn
    output = PortType.RANKED
    reorders_only = True

    async def body(self, ctx, params, inputs):
        await asyncio.sleep(params.seconds)
        return list(reversed(inputs.ranked))


class FailParams(OperatorParams):
    kind: str = "source"


class TFail(_Logged):
    name = "t_fail"
    family = "sourcing"
    description = "test: always fails"
    Params = FailParams
    output = PortType.PAPERS

    async def body(self, ctx, params, inputs):
        if params.kind == "source":
            raise NotSupported(
                "testsrc", "citations are not available offline", "set PILOT_S2_API_KEY or use the corpus"
            )
        raise RuntimeError("boom")


class TNote(_Logged):
    name = "t_note"
    family = "reranking"
    description = "test: passes papers through and leaves a note"
    Inputs = PapersIn
    output = PortType.RANKED

    async def body(self, ctx, params, inputs):
        ctx.notes.append("LLM unavailable, used embedding fallback")
        return inputs.papers


class TCollect(_Logged):
    name = "t_collect"
    family = "output"
    description = "test: describes whatever optional inputs arrived"
    Inputs = CollectIn
    output = PortType.TEXT

    async def body(self, ctx, params, inputs):
        given = sorted(name for name, v in (("papers", inputs.papers), ("keywords", inputs.keywords)) if v is not None)
        return f"{given} {sum(len(x) for x in inputs.papers or [])}"


for _cls in (TSource, TKeywords, TFilter, TUnion, TSearch, TAnswer, TSlow, TReorder, TFail, TNote, TCollect):
    if REGISTRY.get(_cls.name) is not _cls:
        REGISTRY.pop(_cls.name, None)
        register(_cls)


def wf(nodes: list[tuple[str, str, dict]], edges: list[tuple[str, str] | tuple[str, str, str]], output: str | None):
    """A workflow from compact tuples: nodes (id, op, params), edges (source, target[, port])."""
    return Workflow(
        nodes=[Node(id=i, op=op, params=p) for i, op, p in nodes],
        edges=[Edge(source=e[0], target=e[1], port=e[2] if len(e) > 2 else "in") for e in edges],
        output=output,
    )


def pipeline() -> Workflow:
    """src1, src2 → union → filter (→ output); a valid workflow most tests start from."""
    return wf(
        [
            ("src1", "t_source", {"ids": ["a", "b"]}),
            ("src2", "t_source", {"ids": ["c"]}),
            ("union", "t_union", {}),
            ("filter", "t_filter", {"k": 5}),
        ],
        [("src1", "union"), ("src2", "union"), ("union", "filter")],
        "filter",
    )


# --- hypothesis: random edits (valid and invalid) over the pipeline's ids and the t_ operators ---------

NODE_IDS = ["src1", "src2", "union", "filter", "n1", "n2", "ghost"]
OPS = ["t_source", "t_filter", "t_union", "t_keywords", "t_search", "t_answer", "t_fail", "t_note", "nope"]
PORTS = ["in", "seeds", "bogus"]

edges_st = st.builds(
    Edge, source=st.sampled_from(NODE_IDS), target=st.sampled_from(NODE_IDS), port=st.sampled_from(PORTS)
)
params_st = st.dictionaries(
    st.sampled_from(["k", "drop", "ids", "terms", "junk"]),
    st.one_of(st.integers(-2, 5), st.lists(st.sampled_from(["a", "b", "c"]), max_size=2), st.text(max_size=3)),
    max_size=2,
)
maybe_params_st = st.one_of(st.just({}), params_st)


@st.composite
def add_st(draw):
    node = draw(st.builds(Node, id=st.sampled_from(NODE_IDS), op=st.sampled_from(OPS), params=maybe_params_st))
    # mostly well-formed inputs (targeting the new node), sometimes not
    inputs = draw(st.lists(st.builds(Edge, source=st.sampled_from(NODE_IDS), target=st.just(node.id)), max_size=1))
    if draw(st.integers(0, 4)) == 0:
        inputs += draw(st.lists(edges_st, max_size=1))
    return AddNode(node=node, inputs=inputs, after=draw(st.one_of(st.none(), st.sampled_from(NODE_IDS))))


edit_st = st.one_of(
    add_st(),
    st.builds(
        ModifyNode,
        node_id=st.sampled_from(NODE_IDS),
        params=maybe_params_st,
        replace=st.booleans(),
        op=st.one_of(st.none(), st.sampled_from(OPS)),
    ),
    st.builds(RemoveNode, node_id=st.sampled_from(NODE_IDS), bridge=st.booleans()),
    st.builds(
        Rewire,
        add=st.lists(edges_st, max_size=2),
        remove=st.lists(edges_st, max_size=1),
        output=st.one_of(st.none(), st.sampled_from(NODE_IDS)),
    ),
)
