"""Reranking and reading operators: the LLM when one is configured, embeddings otherwise.

LLM replies are parsed into pydantic models and checked against the list they talk about (indexes in
range, no duplicates); anything unusable falls back to the embedding path with a note in the trace.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeVar

from pydantic import BaseModel, Field

from pilot.llm import LLM, LLMError
from pilot.models import Paper, RankedPaper
from workflows.operator import Operator, OperatorInputs, OperatorParams, RunContext, port, register
from workflows.ops.features import best_sentences, blend, cosine_to, papers_of
from workflows.ports import PortType


@dataclass(kw_only=True)
class ReadInputs(OperatorInputs):
    ranked: list[RankedPaper] = port(PortType.RANKED, name="in")
    anchor: list[RankedPaper] | None = port(
        PortType.PAPERS, optional=True, description="the paper the judgement is relative to"
    )
    text: str | None = port(PortType.TEXT, optional=True)


class ReadParams(OperatorParams):
    """What every reading operator's params have: which path, how many from the top."""

    method: Literal["auto", "dense", "embedding", "llm"] = "auto"
    top_n: int = Field(50, ge=1, le=200)

    def query(self) -> str:
        """The params' own text of what to read for (``text`` or ``question``)."""
        return ""


RP = TypeVar("RP", bound=ReadParams)


def _listing(papers: list[Paper], abstract_chars: int = 300) -> str:
    lines = []
    for i, p in enumerate(papers, 1):
        abstract = (p.abstract or "")[:abstract_chars]
        year = f" ({p.year})" if p.year else ""
        lines.append(f"[{i}] {p.title}{year}" + (f" — {abstract}" if abstract else ""))
    return "\n".join(lines)


def _about(query: str, anchors: list[Paper]) -> str:
    parts = [query] if query else []
    parts += [f'the anchor paper "{a.title}"' + (f": {a.abstract[:500]}" if a.abstract else "") for a in anchors]
    return "; ".join(parts) or "the user's request"


class _ReadingOp(Operator[RP, ReadInputs]):
    """Shared run: the top ``top_n`` papers go to the LLM when configured, else (or when its reply is
    unusable) to the embedding path; the papers below pass through unchanged."""

    Inputs = ReadInputs
    output = PortType.RANKED
    family = "reranking"
    fallback = "embeddings"

    async def run(self, ctx: RunContext, params: RP, inputs: ReadInputs) -> list[RankedPaper]:
        items = inputs.ranked
        head, tail = items[: params.top_n], items[params.top_n :]
        if not head:
            return items
        anchors = papers_of(inputs.anchor)
        query = " ".join(x for x in (params.query(), inputs.text or "") if x).strip()
        if params.method in ("auto", "llm") and ctx.llm is not None:
            try:
                return await self.with_llm(ctx.llm, params, head, query, anchors) + tail
            except LLMError as exc:
                ctx.notes.append(f"the LLM's answer was unusable ({exc}); used {self.fallback}")
        elif params.method == "llm":
            ctx.notes.append(f"no LLM configured; used {self.fallback}")
        return self.without_llm(ctx, params, head, query, anchors) + tail

    async def with_llm(
        self, llm: LLM, params: RP, head: list[RankedPaper], query: str, anchors: list[Paper]
    ) -> list[RankedPaper]:
        raise NotImplementedError

    def without_llm(
        self, ctx: RunContext, params: RP, head: list[RankedPaper], query: str, anchors: list[Paper]
    ) -> list[RankedPaper]:
        raise NotImplementedError


# --- rerank -------------------------------------------------------------------------------------


class RerankParams(ReadParams):
    text: str = Field("", max_length=2000, description="what to rank against; default: the anchor")
    method: Literal["auto", "dense", "llm"] = Field("auto", description="auto = LLM when configured, else dense")
    top_n: int = Field(50, ge=1, le=200, description="rerank this many from the top; the rest keep their order below")
    alpha: float = Field(0.5, ge=0.0, le=1.0, description="dense: weight of the upstream score vs the similarity")

    def query(self) -> str:
        return self.text


class _Order(BaseModel):
    order: list[int] = Field(..., description="1-based indexes of the listed papers, most relevant first")


@register
class RerankOp(_ReadingOp[RerankParams]):
    name = "rerank"
    reorders_only = True
    description = "Re-order the top of a ranked list by relevance to a text/the anchor (LLM listwise, or embeddings)."
    Params = RerankParams

    async def with_llm(
        self, llm: LLM, params: RerankParams, head: list[RankedPaper], query: str, anchors: list[Paper]
    ) -> list[RankedPaper]:
        system = 'You rank scientific papers by relevance. Reply with JSON {"order": [indexes, most relevant first]}.'
        user = f"Rank these papers by relevance to {_about(query, anchors)}.\n\n{_listing([it.paper for it in head])}"
        reply = await llm.json(system, user, _Order)
        seen: list[int] = []
        for i in reply.order:
            if 1 <= i <= len(head) and i - 1 not in seen:
                seen.append(i - 1)
        if len(seen) < max(1, len(head) // 2):
            raise LLMError(f"the ranking names only {len(seen)} of {len(head)} papers")
        order = seen + [i for i in range(len(head)) if i not in seen]  # unranked ones keep their order at the end
        out = []
        for rank, i in enumerate(order):
            ev = head[i].evidence.model_copy(deep=True)
            ev.scores["rerank"] = round(1.0 - rank / len(order), 4)
            out.append(head[i].model_copy(update={"score": ev.scores["rerank"], "evidence": ev}))
        return out

    def without_llm(
        self, ctx: RunContext, params: RerankParams, head: list[RankedPaper], query: str, anchors: list[Paper]
    ) -> list[RankedPaper]:
        sims = cosine_to(ctx, [it.paper for it in head], query, anchors)
        if sims is None:
            ctx.notes.append("no embeddings and no LLM; order kept")
            return head
        return blend(head, sims, params.alpha, "rerank")


# --- nli_filter ---------------------------------------------------------------------------------


class NLIParams(ReadParams):
    relation: str = Field(..., min_length=3, max_length=500, description='e.g. "uses the same method as the anchor"')
    method: Literal["auto", "embedding", "llm"] = "auto"
    threshold: float = Field(0.35, ge=-1.0, le=1.0, description="embedding fallback: minimum cosine to keep")
    top_n: int = Field(40, ge=1, le=200, description="judge this many from the top; the rest pass unjudged")
    keep_min: int = Field(0, ge=0, le=200, description="never keep fewer than this many (the most similar)")


class _Keep(BaseModel):
    keep: list[int] = Field(..., description="1-based indexes of the papers that satisfy the relation")


@register
class NLIFilterOp(_ReadingOp[NLIParams]):
    name = "nli_filter"
    description = "Keep papers that satisfy a stated relation to the anchor (LLM yes/no, else embedding similarity)."
    Params = NLIParams
    fallback = "embedding similarity"

    async def run(self, ctx: RunContext, params: NLIParams, inputs: ReadInputs) -> list[RankedPaper]:
        unjudged = len(inputs.ranked) - params.top_n
        if unjudged > 0:
            ctx.notes.append(f"{unjudged} papers below the first {params.top_n} passed unjudged")
        return await super().run(ctx, params, inputs)

    async def with_llm(
        self, llm: LLM, params: NLIParams, head: list[RankedPaper], query: str, anchors: list[Paper]
    ) -> list[RankedPaper]:
        system = 'You judge relations between scientific papers. Reply with JSON {"keep": [indexes]}.'
        user = (
            f"Relation: the paper {params.relation}.\nReference: {_about(query, anchors)}\n\n"
            f"Which papers satisfy it?\n{_listing([it.paper for it in head])}"
        )
        reply = await llm.json(system, user, _Keep)
        keep = {i - 1 for i in reply.keep if 1 <= i <= len(head)}
        return [self._mark(it, 1.0) for i, it in enumerate(head) if i in keep]

    def without_llm(
        self, ctx: RunContext, params: NLIParams, head: list[RankedPaper], query: str, anchors: list[Paper]
    ) -> list[RankedPaper]:
        # Similarity to the anchor stands in for the relation; without an anchor, to the relation's words.
        sims = cosine_to(ctx, [it.paper for it in head], "" if anchors else f"{params.relation}. {query}", anchors)
        if sims is None:
            ctx.notes.append("no embeddings and no LLM; nothing was filtered")
            return head
        order = sorted(range(len(head)), key=lambda i: -float(sims[i]))
        keep = {i for i in order if sims[i] >= params.threshold} | set(order[: params.keep_min])
        return [self._mark(it, float(sims[i])) for i, it in enumerate(head) if i in keep]

    @staticmethod
    def _mark(it: RankedPaper, value: float) -> RankedPaper:
        ev = it.evidence.model_copy(deep=True)
        ev.scores["nli"] = round(value, 4)
        return it.model_copy(update={"evidence": ev})


# --- fine_read ----------------------------------------------------------------------------------


class FineReadParams(ReadParams):
    question: str = Field(
        "", max_length=1000, description="what to judge each paper on; default: relevance to the anchor"
    )
    method: Literal["auto", "embedding", "llm"] = "auto"
    top_n: int = Field(20, ge=1, le=100, description="read this many from the top")

    def query(self) -> str:
        return self.question


class _Judgement(BaseModel):
    i: int
    relevant: bool
    why: str = Field(..., max_length=400)


class _Judgements(BaseModel):
    judgements: list[_Judgement]


@register
class FineReadOp(_ReadingOp[FineReadParams]):
    name = "fine_read"
    description = "Read each top paper's abstract and write a short judgement of how it answers the question."
    Params = FineReadParams
    fallback = "sentence similarity"

    def without_llm(
        self, ctx: RunContext, params: FineReadParams, head: list[RankedPaper], query: str, anchors: list[Paper]
    ) -> list[RankedPaper]:
        best = best_sentences(ctx, [it.paper for it in head], query, anchors)
        out = []
        for it, matches in zip(head, best, strict=True):
            sentence, value, _ = matches[0]
            ev = it.evidence.model_copy(deep=True)
            ev.scores["fine_read"] = value
            ev.reason = f"closest passage: “{sentence[:240]}”"
            out.append(it.model_copy(update={"evidence": ev}))
        return out

    async def with_llm(
        self, llm: LLM, params: FineReadParams, head: list[RankedPaper], question: str, anchors: list[Paper]
    ) -> list[RankedPaper]:
        system = (
            "You read paper abstracts and judge them. Reply with JSON "
            '{"judgements": [{"i": index, "relevant": true|false, "why": "one short sentence"}]}.'
        )
        user = f"Judge each paper for: {_about(question, anchors)}\n\n{_listing([it.paper for it in head], 800)}"
        reply = await llm.json(system, user, _Judgements)
        by_index = {j.i - 1: j for j in reply.judgements if 1 <= j.i <= len(head)}
        if not by_index:
            raise LLMError("the reply judged none of the listed papers")
        out = []
        for i, it in enumerate(head):
            j = by_index.get(i)
            ev = it.evidence.model_copy(deep=True)
            if j is not None:
                ev.scores["fine_read"] = 1.0 if j.relevant else 0.0
                ev.reason = j.why.strip()
            out.append(it.model_copy(update={"evidence": ev}))
        return out
