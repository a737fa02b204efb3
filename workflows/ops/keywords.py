"""Keyword operators: distinctive terms of papers or text, deterministically or with an LLM."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass
from itertools import pairwise

from pydantic import BaseModel, Field

from pilot.llm import LLMError
from pilot.models import RankedPaper
from pilot.text import QUERY_STOPWORDS, noun_phrases
from workflows.operator import Operator, OperatorInputs, OperatorParams, RunContext, port, register
from workflows.ops.features import tokens
from workflows.ports import PortType


class KeywordParams(OperatorParams):
    text: str = Field("", max_length=4000, description="text to take keywords from (connected text/papers are added)")
    k: int = Field(8, ge=1, le=50)
    bigrams: bool = True
    title_weight: float = Field(2.0, ge=0, le=10, description="a title word counts this many times a body word")


@dataclass(kw_only=True)
class KeywordInputs(OperatorInputs):
    papers: list[RankedPaper] | None = port(
        PortType.PAPERS, optional=True, name="in", description="papers to take keywords from"
    )
    text: str | None = port(PortType.TEXT, optional=True)


def _docs(params: KeywordParams, inputs: KeywordInputs) -> list[tuple[str, str]]:
    """(title-like, body) pairs; free text counts as a body."""
    docs = [(it.paper.title or "", it.paper.abstract or "") for it in inputs.papers or []]
    for t in (params.text, inputs.text or ""):
        if t and t.strip():
            docs.append(("", t))
    return docs


def _grams(text: str, bigrams: bool) -> list[str]:
    words = tokens(text, keep_stop=True)
    out = [w for w in words if len(w) > 2 and w not in QUERY_STOPWORDS and not w.isdigit()]
    if bigrams:
        for a, b in pairwise(words):
            if a in QUERY_STOPWORDS or b in QUERY_STOPWORDS or len(a) < 3 or len(b) < 3 or a.isdigit() or b.isdigit():
                continue
            out.append(f"{a} {b}")
    return out


def distinctive_terms(
    docs: list[tuple[str, str]], k: int, bigrams: bool = True, title_weight: float = 2.0
) -> list[str]:
    """TF-IDF-ish terms: frequent across the inputs' titles/bodies, spread over several of them, not generic.

    Document frequency within the inputs rewards terms many input papers share (their common topic);
    a bigram that beats its own words replaces them so "machine translation" does not also list "machine".
    """
    tf: dict[str, float] = defaultdict(float)
    df: Counter[str] = Counter()
    for title, body in docs:
        seen: set[str] = set()
        for g in _grams(title, bigrams):
            tf[g] += title_weight
            seen.add(g)
        for g in _grams(body, bigrams):
            tf[g] += 1.0
            seen.add(g)
        df.update(seen)
    n = max(1, len(docs))
    score: dict[str, float] = {}
    for g, f in tf.items():
        is_bigram = " " in g
        if is_bigram and f < 2 and n > 1:
            continue  # a bigram seen once in many docs is noise
        spread = df[g] / n
        score[g] = (1 + math.log(f)) * (0.5 + spread) * (1.3 if is_bigram else 1.0)
    ranked = sorted(score, key=lambda g: (-score[g], g))
    out: list[str] = []
    for g in ranked:
        if " " in g:
            out = [w for w in out if w not in g.split()]  # the phrase subsumes its words
        elif any(g in o.split() for o in out if " " in o):
            continue
        out.append(g)
        if len(out) >= k:
            break
    return out[:k]


@register
class KeywordsFromOp(Operator[KeywordParams, KeywordInputs]):
    name = "keywords_from"
    family = "keywords"
    description = "Distinctive terms and bigrams of the input papers' titles/abstracts or of a text (no LLM)."
    Params = KeywordParams
    Inputs = KeywordInputs
    output = PortType.KEYWORDS

    async def run(self, ctx: RunContext, params: KeywordParams, inputs: KeywordInputs) -> list[str]:
        return distinctive_terms(_docs(params, inputs), params.k, params.bigrams, params.title_weight)


class _LLMKeywords(BaseModel):
    keywords: list[str] = Field(..., min_length=1, max_length=50)


_SYSTEM = (
    "You extract search keywords for finding scientific papers. Reply with a JSON object "
    '{"keywords": [...]} listing short noun phrases (1-3 words) naming the topic, task, method and data; '
    "no generic words like 'paper' or 'approach'."
)


@register
class LLMKeywordsOp(Operator[KeywordParams, KeywordInputs]):
    name = "llm_keywords"
    family = "keywords"
    description = "Search keywords proposed by the LLM from papers or text; falls back to keywords_from without one."
    Params = KeywordParams
    Inputs = KeywordInputs
    output = PortType.KEYWORDS

    async def run(self, ctx: RunContext, params: KeywordParams, inputs: KeywordInputs) -> list[str]:
        docs = _docs(params, inputs)
        if ctx.llm is not None and docs:
            text = "\n\n".join(f"{t}\n{b}".strip() for t, b in docs[:10])[:6000]
            try:
                reply = await ctx.llm.json(_SYSTEM, f"Give up to {params.k} keywords for:\n{text}", _LLMKeywords)
                cleaned: list[str] = []
                for kw in reply.keywords:
                    kw = " ".join(kw.split())[:60]
                    if kw and tokens(kw) and kw.lower() not in (c.lower() for c in cleaned):
                        cleaned.append(kw)
                if cleaned:
                    return cleaned[: params.k]
                ctx.notes.append("the LLM gave no usable keywords; used keywords_from")
            except LLMError as exc:
                ctx.notes.append(f"LLM unavailable ({exc}); used keywords_from")
        return distinctive_terms(docs, params.k, params.bigrams, params.title_weight)


class PhrasesParams(OperatorParams):
    text: str = Field("", max_length=2000, description="the request or topic (connected text is added)")
    k: int = Field(6, ge=1, le=20)


@dataclass(kw_only=True)
class PhrasesInputs(OperatorInputs):
    text: str | None = port(PortType.TEXT, optional=True)


@register
class NounPhrasesOp(Operator[PhrasesParams, PhrasesInputs]):
    name = "noun_phrases"
    family = "keywords"
    description = "The text's noun phrases (word runs between function words), e.g. one search per phrase."
    Params = PhrasesParams
    Inputs = PhrasesInputs
    output = PortType.KEYWORDS

    async def run(self, ctx: RunContext, params: PhrasesParams, inputs: PhrasesInputs) -> list[str]:
        text = " ; ".join(t for t in (params.text, inputs.text or "") if t and t.strip())
        return noun_phrases(text, params.k)
