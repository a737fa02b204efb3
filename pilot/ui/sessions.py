"""Idle visitors are let go: their state, their files and what Gradio keeps for them.

    reaper = SessionReaper(demo, idle_s=1800)
    reaper.start()          # a daemon thread; ``sweep()`` does one pass (tests call it)

Gradio keeps, per browser session, our ``UIState`` (the conversation, its results, earlier searches) and a
session object holding a copy of every component's configuration and last value — for up to 10,000 sessions,
and the session object for ever (only a ``gr.State``'s value has a time to live). Visitors who never come back
(a closed laptop, a script's ``gradio_client``) therefore grew the server without bound. A pass removes each
session idle for ``idle_s``, and each session whose page was closed (Gradio saw its heartbeat end) and that has
been idle for ``closed_idle_s``: a reload or a closed tab is a new session anyway, and the minute and a half covers
a dropped connection that comes back. "Closed" means Gradio saw a heartbeat end *and* none is open now
(``HeartbeatWatch`` counts them): Gradio never clears its closed mark when the page reconnects, so one dropped
heartbeat under load would otherwise have made an open page's session go after 90 s of reading. Gradio stamps a
session (``time_last_used``) each time a step of its action runs, so a streaming search stays fresh; a sweep also
notes the sessions it sees busy, so an action that streams nothing for longer than the grace keeps its state.
Its state's delete callback runs (the ``UIState`` closes and its folder of
downloads goes), then Gradio's session object is dropped. A visitor who returns after that starts afresh; their
library lives in their browser and comes back with the page.

This reaches into Gradio's ``StateHolder`` (``session_data``, ``time_last_used``, ``delete_state``); if a Gradio
release changes them, a pass logs one warning and does nothing rather than failing the app.
"""

from __future__ import annotations

import datetime
import logging
import threading
from collections import Counter
from typing import Any

log = logging.getLogger(__name__)

SWEEP_EVERY_S = 30.0
# A closed page cannot come back to its session (a reload is a new one); the grace covers a dropped connection
# that reconnects. At 300 s, the 30-visitor soak held ~70 closed sessions at any time (their results, workflow
# versions and Gradio's copies of every component's value).
CLOSED_IDLE_S = 90.0


class SessionReaper:
    def __init__(self, demo: Any, idle_s: float, every_s: float = SWEEP_EVERY_S, closed_idle_s: float = CLOSED_IDLE_S):
        self.demo = demo
        self.idle_s = float(idle_s)
        self.closed_idle_s = min(float(closed_idle_s), self.idle_s)
        self.every_s = min(every_s, max(1.0, self.closed_idle_s / 2))
        self.evicted = 0
        self._seen_busy: dict[str, datetime.datetime] = {}  # session -> the last sweep that saw an action of it
        self._warned = False
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    def sweep(self) -> int:
        """Drop the sessions idle for longer than ``idle_s``; how many went."""
        holder = getattr(self.demo, "state_holder", None)
        try:
            sessions = holder.session_data  # type: ignore[union-attr]
            last_used = holder.time_last_used  # type: ignore[union-attr]
            now = datetime.datetime.now()
            cutoff = now - datetime.timedelta(seconds=self.idle_s)
            closed_cutoff = now - datetime.timedelta(seconds=self.closed_idle_s)
            busy = _busy_sessions(self.demo)
            seen = {**self._seen_busy, **dict.fromkeys(busy, now)}
            self._seen_busy = {sid: t for sid, t in seen.items() if sid in sessions}
            idle = [
                sid
                for sid, state in list(sessions.items())
                if max(last_used.get(sid, datetime.datetime.min), self._seen_busy.get(sid, datetime.datetime.min))
                < (closed_cutoff if state.is_closed and not page_open(sid) else cutoff)
                and sid not in busy
            ]
            for sid in idle:
                holder.delete_state(sid)  # type: ignore[union-attr]  # runs the states' delete callbacks
                with holder.lock:  # type: ignore[union-attr]
                    sessions.pop(sid, None)
                    last_used.pop(sid, None)
        except Exception as exc:  # noqa: BLE001 - Gradio's internals changed: say so once, keep serving
            if not self._warned:
                log.warning("idle sessions cannot be evicted with this Gradio (%s: %s)", type(exc).__name__, exc)
                self._warned = True
            return 0
        if idle:
            self.evicted += len(idle)
            log.info("evicted %d idle session(s); %d left", len(idle), len(sessions))
        return len(idle)

    def start(self) -> None:
        if self._thread is not None:
            return

        def loop() -> None:
            while not self._stop.wait(self.every_s):
                self.sweep()

        self._thread = threading.Thread(target=loop, name="pilot-session-reaper", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()


def _busy_sessions(demo: Any) -> set[str]:
    """Sessions with an action running or queued: never idle, however long ago the action started (a search that
    runs longer than the closed-page grace, on a page whose heartbeat dropped under load, kept its state)."""
    queue = demo._queue
    running = [e for jobs in queue.active_jobs if jobs for e in jobs]
    waiting = [e for q in queue.event_queue_per_concurrency_id.values() for e in q.queue]
    return {e.session_hash for e in (*running, *waiting) if e.session_hash}


_OPEN_HEARTBEATS: Counter[str] = Counter()  # session hash -> heartbeat streams open now


class HeartbeatWatch:
    """ASGI middleware counting each page's open heartbeat stream (``/heartbeat/<session>``), so that a page whose
    heartbeat dropped and reconnected counts as open (pass to the app: ``Middleware(HeartbeatWatch)``)."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope.get("path", "") if scope.get("type") == "http" else ""
        head, _, sid = path.rstrip("/").rpartition("/")
        if not head.endswith("/heartbeat") or not sid:
            await self.app(scope, receive, send)
            return
        _OPEN_HEARTBEATS[sid] += 1
        try:
            await self.app(scope, receive, send)  # returns when the page goes (the stream ends)
        finally:
            _OPEN_HEARTBEATS[sid] -= 1
            if _OPEN_HEARTBEATS[sid] <= 0:
                del _OPEN_HEARTBEATS[sid]


def page_open(session_hash: str) -> bool:
    """Whether a page of this session holds a heartbeat open now."""
    return _OPEN_HEARTBEATS.get(session_hash, 0) > 0


def held(demo: Any) -> int:
    """Sessions Gradio holds now (for the load benchmark and tests)."""
    holder = getattr(demo, "state_holder", None)
    return len(getattr(holder, "session_data", {}))
