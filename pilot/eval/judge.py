"""LLM-as-judge for entity answers: correctness, completeness and faithfulness in [0, 1], plus F1-LM.

All judge prompts live in this module. The judge's reply is parsed into ``JudgeScores``; a score outside
[0, 1] (or not a number) is rejected, the model is shown the error once (``LLM.json``'s repair round), and
a second bad reply raises ``LLMError`` — the caller reports the judge as unavailable for that case rather
than inventing a score. Without a configured model there is no judge at all.
"""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic import BaseModel, Field, field_validator

from pilot.llm import LLM, LLMError

SYSTEM_PROMPT = """You grade answers of an academic search assistant about authors, venues, institutions \
and papers. You are strict and literal. Reply with one JSON object and nothing else:
{"correctness": <0..1>, "completeness": <0..1>, "faithfulness": <0..1>, "rationale": "<one sentence>"}
- correctness: share of the answer's claims that agree with the reference answer (1 = every claim agrees).
- completeness: share of the reference answer's facts that the answer states (1 = all of them).
- faithfulness: share of the answer's claims supported by the execution results shown (1 = nothing \
unsupported); a claim the results do not contain is unfaithful even if it happens to be true.
Scores are numbers between 0 and 1 inclusive."""

USER_TEMPLATE = """Question:
{question}

Reference answer:
{gold}

Execution results the assistant had (JSON, truncated):
{evidence}

Assistant's answer:
{answer}"""

EVIDENCE_CHARS = 6000


class JudgeScores(BaseModel):
    correctness: float = Field(ge=0.0, le=1.0)
    completeness: float = Field(ge=0.0, le=1.0)
    faithfulness: float = Field(ge=0.0, le=1.0)
    rationale: str = ""

    @field_validator("correctness", "completeness", "faithfulness", mode="before")
    @classmethod
    def _finite(cls, v: Any) -> Any:
        if isinstance(v, bool):
            raise ValueError("a score is a number in [0, 1], not a boolean")
        if isinstance(v, (int, float)) and not math.isfinite(v):
            raise ValueError("a score must be finite")
        return v

    @property
    def f1_lm(self) -> float:
        """Harmonic mean of correctness (precision-like) and completeness (recall-like)."""
        c, p = self.correctness, self.completeness
        return 2 * c * p / (c + p) if c + p > 0 else 0.0

    def as_metrics(self) -> dict[str, float]:
        return {
            "judge_correctness": self.correctness,
            "judge_completeness": self.completeness,
            "judge_faithfulness": self.faithfulness,
            "f1_lm": self.f1_lm,
        }


def build_messages(question: str, answer: str, gold_answer: str, evidence: Any) -> tuple[str, str]:
    """The (system, user) prompt pair for one judgement."""
    ev = evidence if isinstance(evidence, str) else json.dumps(evidence, ensure_ascii=False, default=str)
    if len(ev) > EVIDENCE_CHARS:
        ev = ev[:EVIDENCE_CHARS] + " …"
    user = USER_TEMPLATE.format(question=question, gold=gold_answer or "(none given)", evidence=ev, answer=answer)
    return SYSTEM_PROMPT, user


async def judge_answer(llm: LLM, question: str, answer: str, gold_answer: str, evidence: Any) -> JudgeScores:
    """Scores for one answer; raises ``pilot.llm.LLMError`` when the model gives no valid verdict."""
    system, user = build_messages(question, answer, gold_answer, evidence)
    return await llm.json(system, user, JudgeScores)


async def judge_metrics(llm: LLM | None, question: str, answer: str, gold_answer: str, evidence: Any) -> dict[str, Any]:
    """Judge scores as metrics for a run record: ``{}`` without a model, ``{"judge_error": …}`` when the
    model gives no valid verdict (a dead judge is reported, never turned into a score)."""
    if llm is None:
        return {}

    try:
        return (await judge_answer(llm, question, answer, gold_answer, evidence)).as_metrics()
    except LLMError as exc:
        return {"judge_error": str(exc)[:300]}
