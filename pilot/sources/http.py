"""The HTTP plumbing the remote sources share: one pooled client per event loop, the order a request
goes through (response cache → identical request already in flight → the turn's request budget → the
key's rate limiter → the network, with bounded retries that honour ``Retry-After``), and HTTP failures
turned into the protocol's typed errors.

Nothing here logs headers, so API keys and tokens never reach a log line.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import logging
import random
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from pilot.sources.base import BadRequest, NotFound, RateLimited, SourceError, SourceUnavailable
from pilot.sources.budget import RequestBudget, current_budget, note_failure, note_wait
from pilot.sources.ratelimit import RateLimiter
from pilot.sources.shapes import InvalidAnswer
from pilot.text import duration

log = logging.getLogger(__name__)

OFFLINE_HINT = "check the network, or work offline with PILOT_SOURCES=local and PILOT_CORPUS=/path/to/papers.jsonl.gz"


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 3
    backoff_s: float = 1.0
    # A server asking for a longer pause than this gets a RateLimited at once instead of a hung turn.
    max_wait_s: float = 30.0
    # One attempt's whole time: connect, send, and every read of the answer. httpx's own timeouts are per
    # read, so an answer dripping one byte a second would never end; this one does (PILOT_HTTP_TIMEOUT_S).
    deadline_s: float = 20.0


def retry_after_s(response: httpx.Response) -> float | None:
    """Seconds the server asked us to wait (``Retry-After`` as seconds or an HTTP date)."""
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def error_text(response: httpx.Response) -> str:
    """The server's own error sentence when it sent one (S2: ``error``/``message``; AMiner: ``msg``)."""
    try:
        data = response.json()
        if isinstance(data, dict):
            return str(data.get("error") or data.get("message") or data.get("msg") or data)
    except ValueError:
        pass
    return response.text[:200] or f"HTTP {response.status_code}"


# httpx keeps idle connections for 5 s: a request after a longer pause (or the first one) opens a new one
_KEEPALIVE_S = 4.0
_LAST_ANSWER: weakref.WeakKeyDictionary[httpx.AsyncClient, float] = weakref.WeakKeyDictionary()


def cold_connection(client: httpx.AsyncClient) -> bool:
    """Will this request open a new connection (a handshake first, so it reaches the server later than sent)?
    True until the client has had an answer, and again after an idle pause."""
    return time.monotonic() - _LAST_ANSWER.get(client, -1e9) > _KEEPALIVE_S


class LoopClient:
    """An httpx.AsyncClient per event loop: a client belongs to the loop it first ran on, the app runs one loop
    per worker thread, and callers that use ``asyncio.run()`` per call would otherwise hit "event loop is
    closed". Each loop keeps its own client (and its pooled connections) for as long as the loop lives; one
    client shared by turns would be replaced, unclosed, at every change of thread."""

    def __init__(self, timeout: httpx.Timeout):
        self._timeout = timeout
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = (
            weakref.WeakKeyDictionary()
        )

    def get(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None or client.is_closed:
            client = self._clients[loop] = httpx.AsyncClient(timeout=self._timeout)
        return client

    async def aclose(self) -> None:
        """Close this loop's client (the others belong to loops this call cannot run on; they go with them)."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None and not client.is_closed:
            with contextlib.suppress(RuntimeError):  # its loop is already gone; nothing left to release
                await client.aclose()


async def send(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    *,
    source: str,
    label: str,
    policy: RetryPolicy,
    auth_hint: str,
    what: str = "",
    rate_hint: str | None = None,
    params: Any = None,
    json: Any = None,
    headers: dict[str, str] | None = None,
    limiter: RateLimiter | None = None,
    budget: RequestBudget | None = None,
) -> httpx.Response:
    """One request with retries on 429/5xx; a 2xx response, or a typed error naming ``label``.

    Every attempt ends within ``policy.deadline_s`` (connect and all reads), and nothing — rate-limit waits,
    back-offs, attempts — outlasts the turn's time (``budget.seconds_left()``): past it the request is
    ``BudgetExhausted`` and ``what`` is noted as skipped. ``limiter``: waited on before every attempt, and told
    about a 429's ``Retry-After`` so that every request with this key pauses, not just this one. ``budget``:
    retries are counted in its usage. ``rate_hint``: advice added to a rate-limit error (e.g. a key to set)."""
    attempt = 0
    while True:
        log.debug("%s %s %s (attempt %d)", source, method, url, attempt + 1)
        turn_left = budget.seconds_left() if budget is not None else None
        if budget is not None and turn_left is not None and turn_left <= 0:
            raise budget.out_of_time(source, what)
        if attempt and budget is not None:
            budget.retry()
        turn = asyncio.timeout(turn_left)
        attempt_deadline: asyncio.Timeout | None = None
        try:
            async with turn:
                slot = None
                cold = False
                if limiter is not None:
                    cold = cold_connection(client)
                    slot = await limiter.acquire()
                    if budget is not None:
                        budget.usage.rate_wait_s = round(budget.usage.rate_wait_s + slot.waited, 3)
                attempt_deadline = asyncio.timeout(policy.deadline_s)
                async with attempt_deadline:
                    r = await client.request(method, url, params=params, json=json, headers=headers)
                _LAST_ANSWER[client] = time.monotonic()
                if limiter is not None and slot is not None and cold:
                    await limiter.settle(slot)
        except TimeoutError:
            if attempt_deadline is not None and attempt_deadline.expired():
                raise SourceUnavailable(
                    source,
                    f"{label} did not answer in time (no whole answer within {policy.deadline_s:g} s)",
                    OFFLINE_HINT,
                ) from None
            assert budget is not None  # only the turn's deadline is left to have expired
            raise budget.out_of_time(source, what) from None
        except httpx.TimeoutException as exc:
            raise SourceUnavailable(
                source, f"{label} did not answer in time ({type(exc).__name__})", OFFLINE_HINT
            ) from None
        except httpx.TransportError as exc:
            raise SourceUnavailable(source, f"cannot reach {label} ({type(exc).__name__})", OFFLINE_HINT) from None
        status = r.status_code
        if 200 <= status < 300:
            return r
        if status == 400:
            raise BadRequest(source, f"{label} rejected the request: {error_text(r)}")
        if status in (401, 403):
            raise SourceUnavailable(source, f"{label} refused the request (HTTP {status})", auth_hint)
        if status == 404:
            raise NotFound(source, error_text(r))
        if status != 429 and status < 500:
            raise SourceUnavailable(source, f"unexpected HTTP {status} from {label}: {error_text(r)}")
        asked = retry_after_s(r)
        if status == 429 and budget is not None:
            budget.usage.rate_limited += 1
        wait = asked if asked is not None else policy.backoff_s * (2**attempt) * (1 + random.random() / 4)
        left = budget.seconds_left() if budget is not None else None
        if attempt >= policy.max_retries or wait > policy.max_wait_s or (left is not None and wait >= left):
            tries = f"after {attempt + 1} {'try' if attempt == 0 else 'tries'}"
            if status == 429:
                raise rate_limited(source, label, asked, f"HTTP 429 {tries}", rate_hint)
            raise SourceUnavailable(source, f"{label} is failing (HTTP {status} {tries})", "try again later")
        log.info("%s: HTTP %d from %s; retrying in %.1fs", source, status, label, wait)
        if status == 429 and limiter is not None:
            await limiter.penalize(wait)  # the limiter holds back this and every other request with the key
        else:
            note_wait(wait)
            await asyncio.sleep(wait)
        attempt += 1


def rate_limited(source: str, label: str, asked_s: float | None, detail: str, advice: str | None) -> RateLimited:
    """A rate-limit error that says the wait the server asked for, in words ("about 1 hour", not "a minute")."""
    if asked_s is None:
        message = f"{label} is rate-limiting us ({detail}) and did not say for how long"
        hint = "try again in a minute"
    else:
        message = f"{label} is rate-limiting us ({detail}) and asks us to wait {duration(asked_s)}"
        hint = f"try again in {duration(asked_s)}"
    return RateLimited(source, message, f"{hint}, or {advice}" if advice else hint, retry_after=asked_s)


def _passes(check: Callable[[Any], Any], data: Any) -> bool:
    try:
        check(data)
    except SourceError:
        return False
    return True


def json_body(response: httpx.Response, source: str, label: str) -> Any:
    try:
        return response.json()
    except ValueError:
        raise SourceUnavailable(source, f"{label} sent a response that is not JSON") from None


class Remote:
    """How one remote source spends requests: every call goes through ``fetch``.

    Order: the response cache (free) → an identical request already in flight in this event loop (its
    answer is shared, free) → the turn's request budget (``BudgetExhausted`` when spent) → the key's rate
    limiter → the network with retries. A successful answer is cached for every later caller (and every
    replica, when the cache is Redis)."""

    def __init__(
        self,
        source: str,
        label: str,
        timeout: httpx.Timeout,
        policy: RetryPolicy,
        cache: Any = None,
        limiter: RateLimiter | None = None,
    ):
        self.source = source
        self.label = label
        self.http = LoopClient(timeout)
        self.policy = policy
        self.cache = cache
        self.limiter = limiter
        self._inflight: dict[tuple[int, str], asyncio.Future] = {}

    async def aclose(self) -> None:
        await self.http.aclose()

    def cached(self, key: str) -> Any:
        """The cached answer for ``key`` (None when absent); counts as a cache hit of the turn."""
        if self.cache is None:
            return None
        data = self.cache.get(key)
        if data is not None and (budget := current_budget()) is not None:
            budget.usage.cache_hits += 1
        return data

    # Cache reads and writes are disk (or Redis) I/O plus decoding: off the event loop, so one session's cached
    # 500-paper batch does not hold up every other session's turn.
    async def cached_many(self, keys: list[str]) -> list[Any]:
        """``cached`` of each key, read in a worker thread."""
        if self.cache is None or not keys:
            return [None] * len(keys)
        return await asyncio.to_thread(lambda: [self.cached(k) for k in keys])

    async def store(self, items: list[tuple[str, Any]]) -> None:
        """Cache each (key, answer), written in a worker thread."""
        if self.cache is not None and items:
            await asyncio.to_thread(lambda: [self.cache.set(k, v) for k, v in items])

    async def fetch(
        self,
        method: str,
        url: str,
        *,
        key: str,
        what: str,
        check: Callable[[Any], Any] | None = None,
        decode: Callable[[Any], Any] | None = None,
        **kw: Any,
    ) -> Any:
        """The JSON answer of one request. ``check`` raises (``shapes.InvalidAnswer``) when the answer is not the
        endpoint's shape: then nothing is cached and the request fails; a cached entry it rejects (written before
        answers were checked) is asked again. ``decode`` turns a good answer into the value cached and returned.
        ``what`` names the request in the turn's list of skipped work when the budget refuses it."""
        (data,) = await self.cached_many([key])
        if data is not None and (check is None or decode is not None or _passes(check, data)):
            return data
        budget = current_budget()
        if budget is not None and (failed := budget.failed.get(key)) is not None:
            note_failure()
            raise failed  # it failed for want of an answer earlier in this turn: not waited for twice
        loop = asyncio.get_running_loop()
        slot = (id(loop), key)
        shared = self._inflight.get(slot)
        if shared is not None:
            if budget is not None:
                budget.usage.shared += 1
            left = budget.seconds_left() if budget is not None else None
            try:
                async with asyncio.timeout(left):  # the other caller's deadline may be later than this turn's
                    return await asyncio.shield(shared)
            except TimeoutError:
                assert budget is not None
                note_failure()
                raise budget.out_of_time(self.source, what) from None
            except SourceError as exc:
                if not isinstance(exc, (NotFound, BadRequest)):
                    note_failure()
                raise
        future: asyncio.Future = loop.create_future()
        self._inflight[slot] = future
        try:
            if budget is not None:
                budget.spend(self.source, what)
            r = await send(
                self.http.get(), method, url, source=self.source, label=self.label, policy=self.policy,
                limiter=self.limiter, budget=budget, what=what, **kw,
            )  # fmt: skip
            data = json_body(r, self.source, self.label)
            if check is not None:
                check(data)
            if decode is not None:
                data = decode(data)
            if data is not None:
                await self.store([(key, data)])
            future.set_result(data)
            return data
        except BaseException as exc:
            if isinstance(exc, Exception):
                if not isinstance(exc, (NotFound, BadRequest)):
                    note_failure()  # what the caller makes of the rest is partial: not to be cached as whole
                if budget is not None and isinstance(exc, SourceUnavailable) and not isinstance(exc, InvalidAnswer):
                    budget.failed[key] = exc
                future.set_exception(exc)
                future.exception()  # retrieved here: sharers re-raise it, nobody else needs to
            else:
                future.cancel()
            raise
        finally:
            self._inflight.pop(slot, None)
