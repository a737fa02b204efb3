"""Academic knowledge-graph questions: recognise them, plan entity look-ups, execute, answer with citations.

    kind = classify(text)                                   # "entity" | "papers" | "unsure"
    workflow, run, answer = await answer_question(text, runtime)

``answer_question`` never raises for a question: an empty, absurd or unanswerable one comes back as a
readable ``Answer`` (and a trace saying which node failed, when one did).
"""

from __future__ import annotations

from pilot.kg.classify import KGQuery, classify, parse
from pilot.kg.planner import Plan, make_plan
from pilot.kg.run import answer_question, run_plan

__all__ = ["KGQuery", "Plan", "answer_question", "classify", "make_plan", "parse", "run_plan"]
