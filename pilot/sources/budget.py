"""The per-turn budget: remote requests are the scarce resource, so each turn gets a number of them, and a
researcher's time is scarcer, so each turn gets a number of seconds too.

    with budget_scope(settings.request_budget, seconds=60) as budget:   # the session opens one per turn
        ...                                                  # remote sources call spend() per request
    budget.usage        # SourceUsage: requests, cache hits, shared answers, rate waits, 429s, skipped
    budget.seconds_left()                                    # what the turn's time allows a request to take

A scope is carried by a context variable, so every task the turn starts (the executor's node tasks) spends
from the same budget; an inner scope joins the outer one. Outside any scope nothing is capped (usage is
not recorded either). Only requests that would go over the network count: cache hits and answers shared
with an identical request in flight are free.

Deeper pages of a result list are *optional*: they are fetched only while more than a quarter of the
budget is left, so the first page of every search and expansion comes before the second page of any.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from pilot.models import SourceUsage
from pilot.sources.base import BudgetExhausted

_CURRENT: contextvars.ContextVar[RequestBudget | None] = contextvars.ContextVar("pilot_request_budget", default=None)
_OPTIONAL: contextvars.ContextVar[bool] = contextvars.ContextVar("pilot_optional_request", default=False)
_WAITS: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar("pilot_rate_waits", default=None)
_FAILURES: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar("pilot_source_failures", default=None)

BUDGET_HINT = "raise PILOT_REQUEST_BUDGET, or ask again: everything fetched so far is cached and costs nothing"
TIME_HINT = "ask again: everything fetched so far is cached and costs nothing (PILOT_TURN_BUDGET_S sets the time)"


class RequestBudget:
    def __init__(self, limit: int | None, seconds: float | None = None):
        self.usage = SourceUsage(budget=limit if limit is None else max(0, int(limit)))
        self.started = time.perf_counter()
        self.seconds = seconds if seconds and seconds > 0 else None
        self.paused_s = 0.0
        # requests that failed for want of an answer (a timeout, a dead connection) in this turn, by cache key: not
        # sent again in the same turn (a second step asking for the same dripping answer would wait as long again)
        self.failed: dict[str, BaseException] = {}
        self._lock = threading.Lock()

    def seconds_left(self) -> float | None:
        """Seconds the turn may still spend waiting on sources; None when its time is not capped."""
        if self.seconds is None:
            return None
        return self.seconds + self.paused_s - (time.perf_counter() - self.started)

    def pause(self, seconds: float) -> None:
        """``seconds`` of the turn went to something other than its sources (queued for a search slot): not
        counted against its time."""
        self.paused_s += max(0.0, seconds)

    def out_of_time(self, source: str, what: str) -> BudgetExhausted:
        """The error of a request the turn's time no longer allows (``what`` is noted as skipped)."""
        with self._lock:
            self.skip(what)
            self.usage.time_budget_s = self.seconds
        return BudgetExhausted(source, f"the time budget of this turn ({self.seconds:g} s) is spent", TIME_HINT)

    @property
    def limit(self) -> int | None:
        return self.usage.budget

    @property
    def remaining(self) -> int | None:
        return None if self.limit is None else max(0, self.limit - self.usage.requests)

    def reserve(self) -> int:
        return 0 if self.limit is None else max(1, self.limit // 4)

    def spend(self, source: str, what: str) -> None:
        """Count one new request, or raise ``BudgetExhausted`` (and note ``what`` as skipped) when none is left."""
        optional = _OPTIONAL.get()
        with self._lock:
            left = self.remaining
            if left is not None and (left <= 0 or (optional and left <= self.reserve())):
                self.skip(what)
                why = "only a reserve is left for first pages" if optional and left > 0 else "none is left"
                raise BudgetExhausted(
                    source, f"the request budget of this turn ({self.limit} requests) is spent: {why}", BUDGET_HINT
                )
            self.usage.requests += 1

    def retry(self) -> None:
        """A retry of a request already admitted: counted, never refused (the caller is waiting on it)."""
        with self._lock:
            self.usage.requests += 1
            self.usage.retries += 1

    def skip(self, what: str) -> None:
        if what and what not in self.usage.skipped:
            self.usage.skipped.append(what)

    def finish(self) -> SourceUsage:
        self.usage.seconds = round(time.perf_counter() - self.started, 3)
        return self.usage


def current_budget() -> RequestBudget | None:
    return _CURRENT.get()


@contextmanager
def budget_scope(limit: int | None, seconds: float | None = None) -> Iterator[RequestBudget]:
    """A fresh budget for this turn (``seconds``: its time, None = uncapped), or the enclosing turn's when one
    is open."""
    outer = _CURRENT.get()
    if outer is not None:
        yield outer
        return
    budget = RequestBudget(limit, seconds)
    token = _CURRENT.set(budget)
    try:
        yield budget
    finally:
        _CURRENT.reset(token)
        budget.finish()


@contextmanager
def optional_requests() -> Iterator[None]:
    """Requests made inside are deeper pages: they yield to first pages when the budget runs low."""
    token = _OPTIONAL.set(True)
    try:
        yield
    finally:
        _OPTIONAL.reset(token)


def note_wait(seconds: float) -> None:
    """A request of this task waited ``seconds`` for the rate limit (or a server's ``Retry-After``)."""
    box = _WAITS.get()
    if box is not None and seconds > 0:
        box[0] += seconds


def note_failure() -> None:
    """A request of this task failed (the source is down, slow, rate-limiting, answering garbage, or the turn's
    budget refused it): whatever the task makes of the rest is partial, and must not be cached as complete."""
    box = _FAILURES.get()
    if box is not None:
        box[0] += 1


@contextmanager
def _tally(var: contextvars.ContextVar[list[Any] | None], zero: float) -> Iterator[list[Any]]:
    box: list[Any] = [zero]
    token = var.set(box)
    try:
        yield box
    finally:
        var.reset(token)


def counting_waits() -> AbstractContextManager[list[float]]:
    """Tasks created inside add their rate-limit waits to ``box[0]``: a workflow step's timeout leaves out
    the time it only stood in the queue of a rate-limited source."""
    return _tally(_WAITS, 0.0)


def counting_failures() -> AbstractContextManager[list[int]]:
    """Tasks created inside add their failed requests to ``box[0]`` (a workflow step's value is cached only
    when none of its requests failed)."""
    return _tally(_FAILURES, 0)
