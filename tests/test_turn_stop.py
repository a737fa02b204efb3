"""A turn past its time is stopped when it is stuck, not when it is slow (``pilot.turnwatch``, issue 32).

On a saturated CPU a search keeps finishing steps, only slowly: it is let finish and its visitor gets the list. A step
that hangs with nothing else moving is stopped at the grace, the turn undone, and the next turn works. Real parts:
the session over the corpus slice; the steps are slowed (a blocking sleep in a worker thread, as CPU work is) or
hung at the executor's call of an operator.
"""

from __future__ import annotations

import asyncio
import time

import pytest

import pilot.session as session_module
import workflows.executor as executor
from pilot.runtime import Runtime
from pilot.session import Session
from pilot.settings import Settings

# the grace is several times a slowed step's time, so a loaded test machine's real work between steps never looks
# stuck (a clean-clone CI run saw more than 3 s of it between two steps with 0.8 s steps and a 4 s grace)
BUDGET_S, GRACE_S = 0.5, 8.0
STEP_S = 1.2  # each of the search's dozen sequential steps: together well past the budget and the grace


@pytest.fixture
def runtime(local_source, tmp_path, monkeypatch) -> Runtime:
    monkeypatch.setattr(session_module, "TURN_GRACE_S", GRACE_S)
    settings = Settings(_env_file=None, cache_dir=tmp_path, max_turns=0, turn_budget_s=BUDGET_S)
    return Runtime.for_source(local_source, settings)


def _slowed(monkeypatch, seconds: float, hang: str | None = None) -> None:
    """Every step takes ``seconds`` longer, computing; with ``hang``, steps of that operator never end."""
    real = executor._run_op

    async def run_op(op_cls, node_id, params, inputs, ctx, timeout_s, on_progress=None):
        if hang and op_cls.name == hang:
            await asyncio.sleep(3600)
        await asyncio.to_thread(time.sleep, seconds)
        return await real(op_cls, node_id, params, inputs, ctx, timeout_s, on_progress)

    monkeypatch.setattr(executor, "_run_op", run_op)


async def test_a_search_that_keeps_moving_past_its_time_is_let_finish(runtime, monkeypatch):
    warm = await Session(runtime).user_says("papers on dependency parsing")  # the sentence model and index loaded
    assert warm.error is None
    s = Session(runtime)
    _slowed(monkeypatch, STEP_S)  # steps not cached by the warm-up: another subject
    started = time.monotonic()
    reply = await s.user_says("papers on machine translation evaluation")
    took = time.monotonic() - started
    assert took > BUDGET_S + GRACE_S, "the steps were not slowed enough to test anything"
    assert reply.error is None and len(reply.results) >= 10


async def test_a_stuck_turn_is_stopped_undone_and_the_next_turn_works(runtime, monkeypatch):
    s = Session(runtime)
    first = await s.user_says("papers on dependency parsing")
    assert first.error is None and first.results
    before = ([r.paper.id for r in s.results], s.workflow.model_dump(), len(s.versions))
    filter_op = next(n.op for n in s.workflow.nodes if n.op == "filter")

    with monkeypatch.context() as m:
        _slowed(m, 0.0, hang=filter_op)
        started = time.monotonic()
        stopped = await s.user_says("only after 2005")
        took = time.monotonic() - started
    assert stopped.error and "took longer than a turn may" in stopped.error
    assert took < BUDGET_S + GRACE_S + 5, "a stuck step held the turn past its grace"
    assert ([r.paper.id for r in s.results], s.workflow.model_dump(), len(s.versions)) == before  # nothing changed

    again = await s.user_says("only after 2005")
    assert again.error is None and again.results
    assert all((r.paper.year or 0) >= 2006 for r in again.results)
