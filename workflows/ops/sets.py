"""Set operators over paper lists. Evidence is merged, never dropped: a paper found by two nodes names both.

Pass-through operators (sets, filters, scoring) do not add themselves to ``Evidence.nodes``: that list
says which nodes brought a paper in.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from pydantic import Field

from pilot.models import RankedPaper
from pilot.text import normalize_title
from workflows.operator import NoParams, Operator, OperatorInputs, OperatorParams, RunContext, port, register
from workflows.ops.features import merge_evidence
from workflows.ports import PortType

RRF_K = 60


class FuseParams(OperatorParams):
    rrf_k: int = Field(RRF_K, ge=1, le=1000, description="reciprocal-rank-fusion constant")


def _fuse(lists: list[list[RankedPaper]], rrf_k: int, keep: set[str] | None = None) -> list[RankedPaper]:
    """Merge lists by paper id; the fused order is reciprocal-rank fusion of the input orders."""
    rrf: dict[str, float] = defaultdict(float)
    merged: dict[str, RankedPaper] = {}
    for items in lists:
        for rank, it in enumerate(items):
            pid = it.paper.id
            if keep is not None and pid not in keep:
                continue
            rrf[pid] += 1.0 / (rrf_k + rank + 1)
            if pid in merged:
                merged[pid] = merged[pid].model_copy(
                    update={"evidence": merge_evidence(merged[pid].evidence, it.evidence)}
                )
            else:
                merged[pid] = it
    out = []
    for pid in sorted(merged, key=lambda p: -rrf[p]):
        ev = merged[pid].evidence.model_copy(deep=True)
        ev.scores["rrf"] = round(rrf[pid], 6)
        out.append(merged[pid].model_copy(update={"score": rrf[pid], "evidence": ev}))
    return out


@dataclass(kw_only=True)
class ListsInputs(OperatorInputs):
    lists: list[list[RankedPaper]] = port(PortType.PAPERS, many=True, name="in", description="paper lists to merge")


@register
class UnionOp(Operator[FuseParams, ListsInputs]):
    name = "union"
    family = "sets"
    description = "All papers of all inputs, merged by id, ordered by reciprocal-rank fusion of the input orders."
    Params = FuseParams
    Inputs = ListsInputs
    output = PortType.RANKED

    def keep(self, lists: list[list[RankedPaper]]) -> set[str] | None:
        return None  # everything

    async def run(self, ctx: RunContext, params: FuseParams, inputs: ListsInputs) -> list[RankedPaper]:
        return _fuse(inputs.lists, params.rrf_k, keep=self.keep(inputs.lists)) if inputs.lists else []


@register
class IntersectOp(UnionOp):
    name = "intersect"
    description = "Papers present in every input, with merged evidence, ordered by reciprocal-rank fusion."

    def keep(self, lists: list[list[RankedPaper]]) -> set[str] | None:
        return set.intersection(*({it.paper.id for it in items} for items in lists))


@dataclass(kw_only=True)
class DifferenceInputs(OperatorInputs):
    papers: list[RankedPaper] = port(PortType.PAPERS, name="in", description="papers to keep from")
    minus: list[list[RankedPaper]] = port(PortType.PAPERS, many=True, description="papers to remove")


@register
class DifferenceOp(Operator[NoParams, DifferenceInputs]):
    name = "difference"
    family = "sets"
    description = "Papers of the first input that are not in any 'minus' input (order of the first kept)."
    Inputs = DifferenceInputs
    output = PortType.RANKED

    async def run(self, ctx: RunContext, params: NoParams, inputs: DifferenceInputs) -> list[RankedPaper]:
        drop = {it.paper.id for items in inputs.minus for it in items}
        return [it for it in inputs.papers if it.paper.id not in drop]


class DedupeParams(OperatorParams):
    by_title: bool = Field(True, description="also merge records whose normalised titles are equal")


@dataclass(kw_only=True)
class PapersInputs(OperatorInputs):
    papers: list[RankedPaper] = port(PortType.PAPERS, name="in")


@register
class DedupeOp(Operator[DedupeParams, PapersInputs]):
    name = "dedupe"
    family = "sets"
    description = "Merge duplicate records (same id or same normalised title), keeping the first and all evidence."
    Params = DedupeParams
    Inputs = PapersInputs
    output = PortType.RANKED

    async def run(self, ctx: RunContext, params: DedupeParams, inputs: PapersInputs) -> list[RankedPaper]:
        out: list[RankedPaper] = []
        index: dict[str, int] = {}
        for it in inputs.papers:
            keys = [("id", it.paper.id)]
            title = normalize_title(it.paper.title)
            if params.by_title and len(title) > 10:  # very short titles ("Introduction") are not identities
                keys.append(("title", title))
            hit = next((index[k] for k in map(str, keys) if k in index), None)
            if hit is None:
                index.update({str(k): len(out) for k in keys})
                out.append(it)
            else:
                kept = out[hit]
                out[hit] = kept.model_copy(
                    update={"score": max(kept.score, it.score), "evidence": merge_evidence(kept.evidence, it.evidence)}
                )
                index.update({str(k): hit for k in keys})
        return out
