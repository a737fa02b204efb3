"""A fault proxy: a loopback HTTP proxy in front of an API (the emulator) that misbehaves on request, the way
an SRE tries a service — answers dripping a byte every few seconds, a 200 with the wrong shape, a key echoed in
an error body, a 429 asking for an hour, connections reset or left hanging.

    proxy = FaultProxy("http://127.0.0.1:8765")
    with Running(proxy) as running:                          # running.url is what pilot is pointed at
        proxy.set(Rule("/recommendations/", "drip", interval_s=2.0))
        proxy.set(Rule("/paper/search$", "body", status=200, body={}))
        proxy.set(Rule("", "reset"), Rule("", "echo_key", status=403))
        proxy.clear()                                         # every request passes again
        proxy.counts                                          # requests seen per (path, what was done)

Rules are tried in order; the first whose ``path`` (a regex searched in the request path) matches applies,
for its first ``times`` requests (None: for ever). A request no rule matches is forwarded to the upstream as it
came (method, path, query, headers, body) and its answer returned as it came.

Kinds: ``drip`` (status 200, then the upstream's answer — or ``body`` — one ``chunk`` of bytes every
``interval_s``), ``body`` (``status`` with the JSON ``body``, and ``headers``), ``echo_key`` (``status`` with a
body quoting the request's ``x-api-key`` / ``Authorization``, as some services do for a rejected key),
``reset`` (the connection closed with a TCP reset, no answer), ``stall`` (no answer, ever; the client's
deadline must end it), ``pass`` (forward). Also a development tool: only ``pilot bench faults`` and the tests
load it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

from emulators.server import _reset

KINDS = ("drip", "body", "echo_key", "reset", "stall", "pass")
RESET = "fault proxy: connection reset"


class _QuietResets(logging.Filter):
    """aiohttp logs every handler that raises; a reset the proxy made on purpose is not news."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not (isinstance(exc, ConnectionResetError) and str(exc) == RESET)


logging.getLogger("aiohttp.server").addFilter(_QuietResets())
_HOP = {"host", "content-length", "transfer-encoding", "connection", "keep-alive", "content-encoding"}


@dataclass
class Rule:
    path: str
    kind: str
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    interval_s: float = 2.0
    chunk: int = 1
    times: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown fault {self.kind!r}: one of {', '.join(KINDS)}")
        self._pattern = re.compile(self.path)

    def matches(self, path: str) -> bool:
        return self._pattern.search(path) is not None


class FaultProxy:
    name = "fault-proxy"

    def __init__(self, upstream: str):
        self.upstream = upstream.rstrip("/")
        self.rules: list[Rule] = []
        self.counts: Counter[tuple[str, str]] = Counter()
        self.echoed: list[str] = []  # keys quoted back, so a test can look for them where they must not be
        self._lock = threading.Lock()
        self._session: aiohttp.ClientSession | None = None

    # --- control (any thread) ----------------------------------------------------------------------
    def set(self, *rules: Rule) -> None:
        """Replace the rules."""
        with self._lock:
            self.rules = list(rules)

    def clear(self) -> None:
        self.set()

    def seen(self, path: str, kind: str | None = None) -> int:
        """Requests whose path matched ``path`` (a regex), optionally only those given fault ``kind``."""
        pattern = re.compile(path)
        with self._lock:
            return sum(n for (p, k), n in self.counts.items() if pattern.search(p) and (kind is None or k == kind))

    def warm(self) -> None:
        """(``emulators.server.Running`` calls it; nothing to load here.)"""

    # --- serving ---------------------------------------------------------------------------------
    def _rule(self, path: str) -> Rule | None:
        with self._lock:
            for i, rule in enumerate(self.rules):
                if rule.matches(path):
                    if rule.times is not None:
                        if rule.times <= 0:
                            continue
                        self.rules[i].times = rule.times - 1
                    return rule
        return None

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024**2)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        app.on_cleanup.append(self._close)
        return app

    async def _close(self, app: web.Application) -> None:
        if self._session is not None:
            await self._session.close()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        rule = self._rule(request.path)
        kind = rule.kind if rule is not None else "pass"
        with self._lock:
            self.counts[(request.path, kind)] += 1
        if rule is None or kind == "pass":
            return await self._forward(request)
        if kind == "reset":
            _reset(request)
            raise ConnectionResetError(RESET)
        if kind == "stall":
            await asyncio.sleep(3600)
        if kind == "body":
            return web.json_response(rule.body, status=rule.status, headers=rule.headers)
        if kind == "echo_key":
            key = request.headers.get("x-api-key") or request.headers.get("Authorization") or ""
            with self._lock:
                self.echoed.append(key)
            text = f"Forbidden. API key {key} is not valid for this endpoint; key prefix {key[:10]}…"
            return web.json_response({"message": text, "error": text}, status=rule.status, headers=rule.headers)
        return await self._drip(request, rule)

    async def _upstream(self, request: web.Request) -> tuple[int, dict[str, str], bytes]:
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120))
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
        async with self._session.request(
            request.method,
            self.upstream + request.rel_url.path_qs,
            headers=headers,
            data=await request.read(),
            allow_redirects=False,
        ) as r:
            body = await r.read()
            return r.status, {k: v for k, v in r.headers.items() if k.lower() not in _HOP}, body

    async def _forward(self, request: web.Request) -> web.Response:
        status, headers, body = await self._upstream(request)
        return web.Response(status=status, headers=headers, body=body)

    async def _drip(self, request: web.Request, rule: Rule) -> web.StreamResponse:
        if rule.body is not None:
            body = json.dumps(rule.body).encode()
        else:
            _, _, body = await self._upstream(request)
        response = web.StreamResponse(status=rule.status, headers={"Content-Type": "application/json"})
        response.content_length = len(body)
        await response.prepare(request)
        for start in range(0, len(body), max(1, rule.chunk)):
            await response.write(body[start : start + max(1, rule.chunk)])
            await asyncio.sleep(rule.interval_s)
        await response.write_eof()
        return response
