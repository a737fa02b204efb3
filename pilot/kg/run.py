"""Execute a knowledge-graph plan and always come back with a readable answer.

When the answer node could not run (a source that cannot do the operation, a name that matches
nobody, an invalid plan), the answer says why in a sentence taken from the failing node. A bug is not a
question's fault: it propagates to the caller's never-raise boundary (the session, the CLI, the UI).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from pilot.kg.classify import KGQuery
from pilot.kg.planner import Plan, make_plan
from pilot.models import Answer
from pilot.runtime import Runtime
from workflows.executor import RunResult, execute
from workflows.model import NodeTrace, RunTrace, Workflow
from workflows.validate import WorkflowError

log = logging.getLogger(__name__)

EMPTY_HINT = (
    "Please ask a question, e.g. “papers by Christopher D. Manning at ACL 2005–2010”, "
    "“researchers at Tsinghua University working on knowledge graphs” or “tell me about EMNLP”."
)


@dataclass
class Asked:
    kind: str
    plan: Workflow
    run: RunResult
    answer: Answer
    notes: list[str] = field(default_factory=list)


def _empty_run() -> RunResult:
    return RunResult(values={}, trace=RunTrace(), output=None, errors={})


def failure_answer(plan: Workflow, run: RunResult) -> Answer:
    """A sentence saying which step failed and why (the first failure in plan order is the root cause)."""
    by_id: dict[str, NodeTrace] = {t.node_id: t for t in run.trace.nodes}
    for node in plan.nodes:
        t = by_id.get(node.id)
        if t is not None and t.status == "failed":
            reason = (t.error or "it failed").strip()
            return Answer(answer=f"I could not answer this: the step “{node.label or node.op}” failed — {reason}.")
    errors = "; ".join(run.errors.values())
    return Answer(answer="I could not answer this" + (f": {errors}." if errors else "."))


async def run_plan(plan: Plan, runtime: Runtime) -> tuple[RunResult, Answer]:
    try:
        run = await execute(plan.workflow, runtime.context(), runtime.node_cache)
    except WorkflowError as exc:  # an invalid plan (an LLM's, say): the user still gets a sentence
        log.warning("KG plan did not run: %s", exc)
        return _empty_run(), Answer(answer=f"I could not run the plan for this question: {exc}")
    if isinstance(run.output, Answer):
        return run, run.output
    return run, failure_answer(plan.workflow, run)


async def ask(text: str, runtime: Runtime, prefer_llm: bool = False, query: KGQuery | None = None) -> Asked:
    """Classify, plan, execute and answer ``text``; never raises for any question text. ``query``: the
    question as the caller already read it (the chat's message reader), so it is not parsed again."""
    text = " ".join((text or "").split())
    if not text:
        return Asked("papers", Workflow(name="empty question"), _empty_run(), Answer(answer=EMPTY_HINT))
    plan = await make_plan(text, runtime.llm, prefer_llm=prefer_llm, query=query)
    run, answer = await run_plan(plan, runtime)
    notes = list(plan.notes) + [n for t in run.trace.nodes if t.note for n in [f"{t.node_id}: {t.note}"]]
    return Asked(plan.kind, plan.workflow, run, answer, notes)


async def answer_question(
    text: str, runtime: Runtime, query: KGQuery | None = None
) -> tuple[Workflow, RunResult, Answer]:
    """The session's entry point: (plan, execution result, cited answer) for an entity question."""
    asked = await ask(text, runtime, query=query)
    return asked.plan, asked.run, asked.answer
