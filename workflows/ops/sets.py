"""Set operators over paper lists. Evidence is merged, never dropped: a paper found by two nodes names both.

Pass-through operators (sets, filters, scoring) do not add themselves to ``Evidence.nodes``: that list
says which nodes brought a paper in.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from pilot.models import RankedPaper
from pilot.text import normalize_title
from workflows.operator import InputPort, Operator, RunContext, register
from workflows.ops.features import input_list, merge_evidence
from workflows.ports import PortType

RRF_K = 60


class FuseParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
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


@register
class UnionOp(Operator):
    name = "union"
    family = "sets"
    description = "All papers of all inputs, merged by id, ordered by reciprocal-rank fusion of the input orders."
    Params = FuseParams
    inputs = {"in": InputPort(PortType.PAPERS, many=True, description="paper lists to merge")}
    output = PortType.RANKED

    def keep(self, lists: list[list[RankedPaper]]) -> set[str] | None:
        return None  # everything

    async def run(self, ctx: RunContext, params: FuseParams, inputs: dict[str, Any]) -> list[RankedPaper]:
        lists = [input_list(v) for v in _many(inputs.get("in"))]
        return _fuse(lists, params.rrf_k, keep=self.keep(lists)) if lists else []


@register
class IntersectOp(UnionOp):
    name = "intersect"
    description = "Papers present in every input, with merged evidence, ordered by reciprocal-rank fusion."
    inputs = {"in": InputPort(PortType.PAPERS, many=True, description="paper lists to intersect")}

    def keep(self, lists: list[list[RankedPaper]]) -> set[str] | None:
        return set.intersection(*({it.paper.id for it in items} for items in lists))


class NoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


@register
class DifferenceOp(Operator):
    name = "difference"
    family = "sets"
    description = "Papers of the first input that are not in any 'minus' input (order of the first kept)."
    Params = NoParams
    inputs = {
        "in": InputPort(PortType.PAPERS, description="papers to keep from"),
        "minus": InputPort(PortType.PAPERS, many=True, description="papers to remove"),
    }
    output = PortType.RANKED

    async def run(self, ctx: RunContext, params: NoParams, inputs: dict[str, Any]) -> list[RankedPaper]:
        drop = {it.paper.id for v in _many(inputs.get("minus")) for it in input_list(v)}
        return [it for it in input_list(inputs.get("in")) if it.paper.id not in drop]


class DedupeParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    by_title: bool = Field(True, description="also merge records whose normalised titles are equal")


@register
class DedupeOp(Operator):
    name = "dedupe"
    family = "sets"
    description = "Merge duplicate records (same id or same normalised title), keeping the first and all evidence."
    Params = DedupeParams
    inputs = {"in": InputPort(PortType.PAPERS)}
    output = PortType.RANKED

    async def run(self, ctx: RunContext, params: DedupeParams, inputs: dict[str, Any]) -> list[RankedPaper]:
        out: list[RankedPaper] = []
        index: dict[str, int] = {}
        for it in input_list(inputs.get("in")):
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


def _many(value: Any) -> list[Any]:
    """A many-port's value: a list of lists (one per edge); a single list is accepted as one edge."""
    if not value:
        return []
    if isinstance(value, list) and value and isinstance(value[0], RankedPaper):
        return [value]
    return list(value)
