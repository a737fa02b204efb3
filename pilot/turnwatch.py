"""When a turn that outlasts its time is stopped: when it is stuck, not when it is slow.

A turn's requests end at its time budget (``PILOT_TURN_BUDGET_S``), so what runs past it is this machine's own work.
On a saturated CPU (30 visitors on 2 cores) a search keeps finishing steps, only slowly; stopping it at a fixed
wall-clock grace undid the visitor's search while its worker threads went on computing anyway (issue 32's soak: every
error of the run was such a stop). So the stop watches for movement: a turn past its budget and the grace is stopped
once no step has started, reported progress or finished for the grace (each step ends by ``node_timeout_s``, so a
live run moves at least that often), and in any case at the cap. Time queued for a search slot is not the turn's.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import TypeVar, cast

from workflows.executor import DeadlinePassed, until

T = TypeVar("T")

# After its budget a turn may go on this long while steps keep moving, whatever the load: a bound for a run that
# moves forever (a bug), so a visitor is never kept waiting without end
TURN_CAP_S = 300.0


class TurnStopped(Exception):
    """The turn was stopped: past its time and stuck (or past the cap)."""


class TurnWatch:
    """The turn's clock: ``moved()`` on every sign of progress, ``queued(s)`` for time spent waiting for a slot."""

    def __init__(self, budget_s: float, grace_s: float, cap_s: float = TURN_CAP_S):
        now = time.monotonic()
        self.grace_s = grace_s
        self._deadline = now + budget_s + grace_s
        self._cap = now + budget_s + max(cap_s, grace_s)
        self._moved = now

    def moved(self) -> None:
        # a float assignment: safe from the worker threads that report a step's progress
        self._moved = time.monotonic()

    def queued(self, seconds: float) -> None:
        self._deadline += seconds
        self._cap += seconds
        self.moved()

    def left(self) -> float:
        """Seconds until the turn is stopped if nothing moves; 0 when it is to be stopped now."""
        now = time.monotonic()
        if now >= self._cap:
            return 0.0
        return max(0.0, min(self._cap, max(self._deadline, self._moved + self.grace_s)) - now)


async def watched(work: Awaitable[T], watch: TurnWatch) -> T:
    """``work``'s value, or ``TurnStopped`` (the work cancelled) when ``watch`` says the turn is to be stopped."""
    try:
        return cast(T, await until(asyncio.ensure_future(work), watch.left))  # the task takes the turn's context
    except DeadlinePassed:
        raise TurnStopped from None
