"""One rate limiter per API key: at most N requests in any S seconds, and a pause when the server asks.

    limiter = rate_limiter("s2", key, rate)          # the same object for every source using that key
    slot = await limiter.acquire()                   # sleeps until this request may go
    await limiter.settle(slot)                       # (a cold request) count it as sent at its answer
    await limiter.penalize(retry_after_s)            # a 429 said "wait": nobody sends before then

A request takes its place in the window at the moment it may go out, and goes out at once: the server
counts arrivals, so a slot booked for later and sent late (a busy event loop, a slow host) would crowd
the next window. A caller that finds the window full sleeps until its oldest request leaves it, then
asks again. A wait longer than ``max_wait_s`` is refused at once with ``RateLimited`` (the pool is spent
for minutes: the turn returns what it has instead of hanging).

In one process the limiter lives in memory. With ``PILOT_REDIS_URL`` the reservations live in Redis, so
every replica using the same key shares one window (``RedisRateLimiter``; Redis's own clock decides).
"""

from __future__ import annotations

import asyncio
import bisect
import hashlib
import logging
import random
import re
import threading
import time
import uuid
import weakref
from dataclasses import dataclass
from typing import Protocol

from cache import REDIS_CONNECT_TIMEOUT_S, REDIS_TIMEOUT_S
from cache.breaker import breaker_for
from pilot.sources.base import RateLimited
from pilot.sources.budget import note_wait
from pilot.text import duration

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Rate:
    """``limit`` requests in any ``period_s`` seconds."""

    limit: int
    period_s: float

    @classmethod
    def parse(cls, text: str) -> Rate:
        """``"1/1"`` (1 per second), ``"100/300"`` (100 per 5 minutes)."""
        m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+(?:\.\d+)?)\s*s?\s*", text or "")
        if not m or int(m.group(1)) < 1 or float(m.group(2)) <= 0:
            raise ValueError(f"a rate is N/SECONDS such as 1/1 or 100/300, not {text!r}")
        return cls(int(m.group(1)), float(m.group(2)))

    @property
    def margin_s(self) -> float:
        # The server counts arrivals, and an earlier request can reach it later than sent (a busy host, a
        # slow network) while the next one arrives on time; a margin keeps them a window apart on its clock.
        return min(0.5, max(0.1, 0.1 * self.period_s / self.limit))

    def __str__(self) -> str:
        return f"{self.limit}/{self.period_s:g}s"


@dataclass
class Slot:
    """One request's place in the window: ``waited`` seconds to get it; ``member`` names it there."""

    waited: float
    member: str


class RateLimiter(Protocol):
    rate: Rate

    async def acquire(self) -> Slot:
        """Wait for this request's slot. ``RateLimited`` when the wait would be too long."""
        ...

    async def settle(self, slot: Slot) -> None:
        """Count the request as sent now, at its answer, not when its slot was taken: for a request whose
        way out took unknown time (a new connection's handshake), so the next window cannot crowd it."""
        ...

    async def penalize(self, seconds: float) -> None:
        """The server answered 429 with ``Retry-After``: no request goes out before that."""
        ...


def _too_long(source: str, wait: float, rate: Rate, hint: str) -> RateLimited:
    """The pool is spent for longer than a turn should wait: said with the wait in words, and ``hint`` (advice
    such as a key to set) after it."""
    again = f"try again in {duration(wait)}"
    return RateLimited(
        source,
        f"the rate limit ({rate}) is used up for the next {duration(wait)}",
        f"{again}, or {hint}" if hint else again,
        retry_after=wait,
    )


class LocalRateLimiter:
    """Sliding window kept in this process. Safe across event loops and threads (a lock, then a sleep).

    Waiters are served first come, first served: a turn's first requests (the anchor's search, its
    recommendations) are the ones the rest builds on, and under a 1 request/s key, waiters that raced for each
    freed slot left some of them waiting until the turn's time ran out while later ones went."""

    def __init__(self, source: str, rate: Rate, max_wait_s: float = 30.0, hint: str = ""):
        self.source = source
        self.rate = rate
        self.max_wait_s = max_wait_s
        self.hint = hint
        # (when it went out, member) of the requests in the current window, oldest first (monotonic clock)
        self._taken: list[tuple[float, str]] = []
        self._blocked_until = 0.0
        self._lock = threading.Lock()
        self._waiting: list[str] = []  # members asking for a slot, in the order they asked

    def _take(self, now: float, member: str) -> float:
        """0 when a request may go now (and it is counted); otherwise the seconds until one might."""
        r = self.rate
        while self._taken and self._taken[0][0] <= now - r.period_s - r.margin_s:
            self._taken.pop(0)
        if now < self._blocked_until:
            return self._blocked_until - now
        if len(self._taken) < r.limit:
            if self._waiting and self._waiting[0] != member:
                return _TURN_CHECK_S  # free, but an earlier waiter is about to take it
            bisect.insort(self._taken, (now, member))
            return 0.0
        return self._taken[0][0] + r.period_s + r.margin_s - now

    async def acquire(self) -> Slot:
        start = time.monotonic()
        member = uuid.uuid4().hex
        with self._lock:
            self._waiting.append(member)
        try:
            while True:
                with self._lock:
                    wait = self._take(time.monotonic(), member)
                if wait <= 0:
                    return Slot(time.monotonic() - start, member)
                if wait > self.max_wait_s:
                    raise _too_long(self.source, wait, self.rate, self.hint)
                await _queue(wait + _jitter())
        finally:  # taken, refused, or its step gave up waiting: out of the line either way
            with self._lock:
                self._waiting.remove(member)

    async def settle(self, slot: Slot) -> None:
        with self._lock:
            for i, (_, member) in enumerate(self._taken):
                if member == slot.member:
                    del self._taken[i]
                    bisect.insort(self._taken, (time.monotonic(), member))
                    break

    async def penalize(self, seconds: float) -> None:
        with self._lock:
            self._blocked_until = max(self._blocked_until, time.monotonic() + max(0.0, seconds))


# Slots given back because this process resumed late, before one is used anyway (the host stays this busy).
_MAX_STALE = 3
# How soon a waiter behind the first in line looks again when a slot is free (the first is waking to take it).
_TURN_CHECK_S = 0.01


async def _queue(seconds: float) -> None:
    """Wait for the window, said beforehand to the step that is waiting: its timeout leaves the queue out."""
    note_wait(seconds)
    await asyncio.sleep(seconds)


def _jitter() -> float:
    # waiters woken by the same expiry spread out a little instead of all asking in the same millisecond
    return random.uniform(0.0, 0.02)


# Take a slot now, atomically on Redis's clock, or say how long until one frees. KEYS: window zset, pause key.
# ARGV: limit, period ms, margin ms, member. Returns ms to wait (0 = taken).
_TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit, period, margin = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - period - margin)
local paused = tonumber(redis.call('GET', KEYS[2]) or '0')
if paused > now then return paused - now end
if redis.call('ZCARD', KEYS[1]) < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[4])
  redis.call('PEXPIRE', KEYS[1], period + margin + 1000)
  return 0
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return math.max(1, tonumber(oldest[2]) + period + margin - now)
"""
# Move a member still in the window to Redis's now. KEYS: window zset. ARGV: member.
_SETTLE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZADD', KEYS[1], 'XX', now, ARGV[1])
"""
# Give a slot back (it was granted during a stall of this process and would go out late). KEYS: window zset.
_RELEASE = "return redis.call('ZREM', KEYS[1], ARGV[1])"
_PAUSE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local until_ms = now + tonumber(ARGV[1])
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
if until_ms > cur then redis.call('SET', KEYS[1], until_ms, 'PX', tonumber(ARGV[1]) + 1000) end
return until_ms
"""


class RedisRateLimiter:
    """The same window, kept in Redis so every process using the key shares it."""

    def __init__(self, source: str, rate: Rate, url: str, name: str, max_wait_s: float = 30.0, hint: str = ""):
        self.source = source
        self.rate = rate
        self.url = url
        self.max_wait_s = max_wait_s
        self.hint = hint
        self._breaker = breaker_for(url)  # shared with the caches on the same server
        self._window_key = f"pilot:rate:{name}:window"
        self._pause_key = f"pilot:rate:{name}:pause"
        self._clients: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # one Redis client per event loop

    def _client(self):
        import redis.asyncio as aioredis

        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            # longer than the caches' deadline: this call runs on a busy event loop, and a spurious timeout would
            # split the replicas' shared window; a frozen Redis has usually opened the breaker through a cache first
            client = aioredis.Redis.from_url(
                self.url, socket_timeout=3 * REDIS_TIMEOUT_S, socket_connect_timeout=REDIS_CONNECT_TIMEOUT_S
            )
            self._clients[loop] = client
        return client

    async def acquire(self) -> Slot:
        from redis.exceptions import RedisError

        start = time.monotonic()
        r = self.rate
        member = uuid.uuid4().hex
        stale = 0
        if not self._breaker.allow():  # Redis is being bypassed: this process's own window meanwhile
            return await _fallback(self).acquire()
        try:
            client = self._client()
            while True:
                asked = time.monotonic()
                wait_ms = int(
                    await client.eval(
                        _TAKE,
                        2,
                        self._window_key,
                        self._pause_key,
                        r.limit,
                        int(r.period_s * 1000),
                        int(r.margin_s * 1000),
                        member,
                    )
                )
                self._breaker.success()
                if wait_ms <= 0:
                    if time.monotonic() - asked <= r.margin_s / 2 or stale >= _MAX_STALE:
                        return Slot(time.monotonic() - start, member)
                    # Redis's clock booked the slot when it answered, but this process resumed late (a busy
                    # host, a long step of another task): sent now, the request would crowd the next window.
                    stale += 1
                    await client.eval(_RELEASE, 1, self._window_key, member)
                    continue
                if wait_ms / 1000 > self.max_wait_s:
                    raise _too_long(self.source, wait_ms / 1000, r, self.hint)
                await _queue(wait_ms / 1000 + _jitter())
        except RedisError as exc:
            # A shared limiter that cannot be reached must not stop searches: fall back to this process's
            # own window (the combined rate of the replicas is then not guaranteed; the breaker logs it).
            self._breaker.failure(exc)
            slot = await _fallback(self).acquire()
            return Slot(slot.waited + (time.monotonic() - start), slot.member)

    async def settle(self, slot: Slot) -> None:
        from redis.exceptions import RedisError

        if not self._breaker.allow():
            await _fallback(self).settle(slot)
            return
        try:
            await self._client().eval(_SETTLE, 1, self._window_key, slot.member)
            self._breaker.success()
        except RedisError as exc:
            self._breaker.failure(exc)
            await _fallback(self).settle(slot)

    async def penalize(self, seconds: float) -> None:
        from redis.exceptions import RedisError

        if not self._breaker.allow():
            await _fallback(self).penalize(seconds)
            return
        try:
            await self._client().eval(_PAUSE, 1, self._pause_key, int(max(0.0, seconds) * 1000))
            self._breaker.success()
        except RedisError as exc:
            self._breaker.failure(exc)
            await _fallback(self).penalize(seconds)


_FALLBACKS: dict[int, LocalRateLimiter] = {}


def _fallback(limiter: RedisRateLimiter) -> LocalRateLimiter:
    key = id(limiter)
    if key not in _FALLBACKS:
        _FALLBACKS[key] = LocalRateLimiter(limiter.source, limiter.rate, limiter.max_wait_s, limiter.hint)
    return _FALLBACKS[key]


_LIMITERS: dict[tuple[str, str], RateLimiter] = {}
_REGISTRY_LOCK = threading.Lock()


def key_id(service: str, key: str | None) -> str:
    """A name for one API key that reveals nothing about it ('anonymous' when there is none)."""
    if not key:
        return f"{service}:anonymous"
    return f"{service}:{hashlib.sha256(key.encode()).hexdigest()[:16]}"


def rate_limiter(
    service: str, key: str | None, rate: Rate, redis_url: str | None = None, max_wait_s: float = 30.0,
    hint: str = "",
) -> RateLimiter:  # fmt: skip
    """The limiter of this service and key (one per process, or one shared through Redis)."""
    name = key_id(service, key)
    registry_key = (name, redis_url or "")
    with _REGISTRY_LOCK:
        limiter = _LIMITERS.get(registry_key)
        if limiter is not None and rate.limit / rate.period_s < limiter.rate.limit / limiter.rate.period_s:
            log.info("rate limiter %s: a stricter rate was configured (%s instead of %s)", name, rate, limiter.rate)
            limiter.rate = rate  # one key, one rate: the strictest any user of the key was given
        if limiter is None:
            if redis_url:
                limiter = RedisRateLimiter(service, rate, redis_url, name, max_wait_s, hint)
            else:
                limiter = LocalRateLimiter(service, rate, max_wait_s, hint)
            _LIMITERS[registry_key] = limiter
        return limiter
