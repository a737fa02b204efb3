"""A circuit breaker for a shared service pilot can do without (Redis): after a failure, stop asking for a
while, then try again.

    breaker = breaker_for(url)
    if breaker.allow():            # closed, or the one trial call after a pause
        try: …; breaker.success()
        except RedisError as exc: breaker.failure(exc)
    else: …                        # bypassed: the caller's fallback (a miss, this process's own rate window)

A frozen Redis (SIGSTOP, a full swap) accepts connections and never answers, so each call costs its whole
socket timeout; without the breaker a turn with a hundred cache look-ups waited a hundred timeouts. With it,
``THRESHOLD`` failures in a row open the breaker (one alone may be this process's own stall on a loaded machine,
and bypassing Redis also splits the replicas' shared rate window) and every other call is bypassed at once for
``cooldown_s``; then one call tries again (half-open): an answer closes the breaker, another failure doubles
the pause (up to ``max_cooldown_s``). Opening and closing are logged once and shown in the status line
(``cache.health``).
"""

from __future__ import annotations

import logging
import threading
import time
from urllib.parse import urlsplit

from cache import health

log = logging.getLogger(__name__)

COOLDOWN_S = 10.0
MAX_COOLDOWN_S = 60.0
THRESHOLD = 2  # failures in a row that open the breaker


class Breaker:
    def __init__(self, name: str, cooldown_s: float | None = None, max_cooldown_s: float | None = None):
        self.name = name
        self.cooldown_s = COOLDOWN_S if cooldown_s is None else cooldown_s
        self.max_cooldown_s = max(self.cooldown_s, MAX_COOLDOWN_S if max_cooldown_s is None else max_cooldown_s)
        self._pause = self.cooldown_s
        self._open_until = 0.0  # 0 = closed
        self._since = 0.0
        self._trial = False  # a half-open trial call is out
        self._failures = 0  # in a row, while closed
        self._lock = threading.Lock()

    @property
    def is_open(self) -> bool:
        return self._open_until > 0

    def allow(self) -> bool:
        with self._lock:
            if not self._open_until:
                return True
            if self._trial or time.monotonic() < self._open_until:
                return False
            self._trial = True  # this caller tries; the others keep bypassing until it reports
            return True

    def success(self) -> None:
        with self._lock:
            was_open = bool(self._open_until)
            self._open_until, self._trial, self._pause, self._failures = 0.0, False, self.cooldown_s, 0
        if was_open:
            log.warning("%s answers again after %.0f s: no longer bypassed", self.name, time.time() - self._since)
            health.clear(f"breaker:{self.name}")

    def failure(self, exc: BaseException) -> None:
        with self._lock:
            if not self._open_until:
                self._failures += 1
                if self._failures < THRESHOLD:
                    return
            first = not self._open_until
            if not first and self._trial:
                self._pause = min(self.max_cooldown_s, self._pause * 2)
            self._open_until, self._trial = time.monotonic() + self._pause, False
            if first:
                self._since = time.time()
        if first:
            log.warning(
                "%s failed (%s: %s); bypassed, tried again every %.0f s",
                self.name,
                type(exc).__name__,
                exc,
                self._pause,
            )
            since = time.strftime("%H:%M:%S", time.localtime(self._since))
            health.note(
                f"breaker:{self.name}",
                f"{self.name} is not answering ({type(exc).__name__}) since {since}: bypassed (caches miss, the rate "
                f"limit is this process's own) and tried again every {self.cooldown_s:.0f}–{self.max_cooldown_s:.0f} s",
            )


_BREAKERS: dict[str, Breaker] = {}
_LOCK = threading.Lock()


def breaker_for(url: str) -> Breaker:
    """One breaker per server (every cache namespace and the rate limiter on it share it); named without any
    password the URL holds."""
    parts = urlsplit(url)
    name = f"Redis at {parts.hostname or '?'}:{parts.port or 6379}"
    with _LOCK:
        breaker = _BREAKERS.get(name)
        if breaker is None:
            breaker = _BREAKERS[name] = Breaker(name)
        return breaker


def reset() -> None:
    """Forget every breaker (tests)."""
    with _LOCK:
        _BREAKERS.clear()
