"""How many searches run at once in this process, and a fair queue for the rest that can say where one stands.

    gate = SearchGate(slots=4)
    async with gate.slot(on_wait=lambda ahead: say(f"{ahead} searches ahead of yours")):
        ...                                   # a workflow run

A search (a workflow run: sourcing, scoring, ranking) is what costs this machine's CPU and memory; reading a
message, a greeting, a click on the library cost almost nothing. The app's actions run on worker threads with an
event loop each (``pilot.ui.worker``), so the gate is shared across threads and loops: slots are handed over
first come, first served; a waiter is told how many searches are ahead of it (running plus queued before it)
whenever that changes, and leaves the queue when it is cancelled (its visitor went away). A task already
holding a slot (a turn running a second workflow) does not queue behind itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

_HOLDING: contextvars.ContextVar[bool] = contextvars.ContextVar("pilot_search_slot", default=False)
POLL_S = 0.5  # how often a waiter looks at its place in the queue (to tell its visitor)


@dataclass(eq=False)
class _Ticket:
    loop: asyncio.AbstractEventLoop
    granted: asyncio.Future = field(repr=False)
    handed: bool = False  # the slot was passed to it (set under the gate's lock)


class SearchGate:
    def __init__(self, slots: int):
        self.slots = max(1, int(slots))
        self._lock = threading.Lock()
        self._running = 0
        self._queue: deque[_Ticket] = deque()

    @property
    def running(self) -> int:
        return self._running

    @property
    def waiting(self) -> int:
        return len(self._queue)

    @contextlib.asynccontextmanager
    async def slot(self, on_wait: Callable[[int], None] | None = None) -> AsyncIterator[None]:
        """Hold one of the slots for the body; ``on_wait(ahead)`` while queued (never when a slot is free)."""
        if _HOLDING.get():
            yield
            return
        ticket = self._enter()
        holding = ticket is None
        try:
            if ticket is not None:
                await self._wait(ticket, on_wait)
                holding = True
            token = _HOLDING.set(True)
            try:
                yield
            finally:
                _HOLDING.reset(token)
        finally:
            if holding:
                self._release()
            else:
                self._abandon(ticket)

    def _enter(self) -> _Ticket | None:
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._running < self.slots and not self._queue:
                self._running += 1
                return None
            ticket = _Ticket(loop, loop.create_future())
            self._queue.append(ticket)
            return ticket

    def _ahead(self, ticket: _Ticket) -> int:
        with self._lock:
            try:
                return self._running + self._queue.index(ticket)
            except ValueError:
                return 0  # handed a slot a moment ago

    async def _wait(self, ticket: _Ticket, on_wait: Callable[[int], None] | None) -> None:
        told = None
        while True:
            ahead = self._ahead(ticket)
            if on_wait is not None and ahead != told and not ticket.granted.done():
                on_wait(ahead)
                told = ahead
            try:
                await asyncio.wait_for(asyncio.shield(ticket.granted), POLL_S)
                return
            except TimeoutError:
                continue

    def _release(self) -> None:
        """Pass this slot to the first waiter still waiting, or free it."""
        with self._lock:
            while self._queue:
                ticket = self._queue.popleft()
                try:
                    ticket.loop.call_soon_threadsafe(_grant, ticket.granted)
                except RuntimeError:  # its loop is closed: that waiter is gone
                    continue
                ticket.handed = True
                return
            self._running -= 1

    def _abandon(self, ticket: _Ticket | None) -> None:
        """A waiter cancelled while queued: out of the queue, or — handed a slot meanwhile — the slot passed on."""
        with self._lock:
            handed = ticket is not None and ticket.handed
            if ticket is not None and not handed:
                with contextlib.suppress(ValueError):
                    self._queue.remove(ticket)
        if handed:
            self._release()


def _grant(future: asyncio.Future) -> None:
    if not future.done():
        future.set_result(True)
