"""What every emulator shares: rate windows per key, injected faults, latency, ``/_stats``, serving.

One request goes: count it → rate window of its key (429 + ``Retry-After`` when full) → fault dice
(5xx, connection reset, extra delay) → latency → the endpoint. ``GET /_stats`` and ``POST /_faults``
are never counted, limited or delayed.

The rate window here is the emulator's own (a plain sliding log), deliberately not pilot's limiter: a
bug in the client's limiter must show up as 429s here, not be mirrored.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import math
import random
import re
import socket
import struct
import threading
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, Self

from aiohttp import web

from pilot.sources.local import LocalCorpusSource

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


# --- rate windows --------------------------------------------------------------------------------
@dataclass
class Window:
    """At most ``limit`` admitted requests in any ``seconds``-long window."""

    limit: int
    seconds: float
    times: deque = field(default_factory=deque)
    peak: int = 0  # most requests admitted in one window so far (what /_stats reports)

    def admit(self, now: float) -> float | None:
        """None when admitted; otherwise the seconds until a slot frees up."""
        while self.times and now - self.times[0] >= self.seconds:
            self.times.popleft()
        if len(self.times) >= self.limit:
            return self.times[0] + self.seconds - now
        self.times.append(now)
        self.peak = max(self.peak, len(self.times))
        return None


@dataclass(frozen=True)
class RateSpec:
    limit: int
    seconds: float

    def window(self) -> Window:
        return Window(self.limit, self.seconds)

    def __str__(self) -> str:
        return f"{self.limit}/{self.seconds:g}s"


def rps_spec(rps: float) -> RateSpec:
    """``--rps R``: R requests in any second (whole R), or one per 1/R seconds (fractional R)."""
    if rps <= 0:
        raise ValueError("--rps must be positive")
    return RateSpec(int(rps), 1.0) if float(rps).is_integer() else RateSpec(1, 1.0 / rps)


def pool_spec(text: str) -> RateSpec:
    """``--pool 100/300``: 100 requests in any 300 seconds, shared by every caller without a key."""
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+(?:\.\d+)?)\s*", text or "")
    if not m or int(m.group(1)) < 1 or float(m.group(2)) <= 0:
        raise ValueError(f"--pool takes N/SECONDS such as 100/300, not {text!r}")
    return RateSpec(int(m.group(1)), float(m.group(2)))


# --- faults --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Fault:
    kind: str  # "status" | "reset" | "slow"
    probability: float
    status: int = 0
    delay_s: float = 0.0

    def __str__(self) -> str:
        what = {"status": str(self.status), "reset": "reset", "slow": f"slow={self.delay_s * 1000:g}"}[self.kind]
        return f"{what}:{self.probability:g}"


FAULT_HELP = "comma list of KIND:PROBABILITY, KIND = a 5xx status (500, 502, 503, 504), reset, or slow=MS"


def parse_faults(spec: str | None) -> list[Fault]:
    """``"503:0.1,reset:0.05,slow=5000:0.1"`` -> faults rolled independently on every request."""
    out: list[Fault] = []
    for part in (spec or "").split(","):
        part = part.strip()
        if not part:
            continue
        m = re.fullmatch(r"(\d{3}|reset|slow=(\d+(?:\.\d+)?))\s*:\s*(\d*\.?\d+)", part)
        if not m:
            raise ValueError(f"bad fault {part!r}: {FAULT_HELP}")
        prob = float(m.group(3))
        if not 0 < prob <= 1:
            raise ValueError(f"fault probability must be in (0, 1]: {part!r}")
        kind = m.group(1)
        if kind.isdigit():
            if not 500 <= int(kind) <= 599:
                raise ValueError(f"only 5xx statuses are faults: {part!r}")
            out.append(Fault("status", prob, status=int(kind)))
        elif kind == "reset":
            out.append(Fault("reset", prob))
        else:
            out.append(Fault("slow", prob, delay_s=float(m.group(2)) / 1000))
    return out


# --- the shared server ---------------------------------------------------------------------------
@dataclass
class Limits:
    """Rates per caller: ``keyed`` applies to each API key separately, ``anonymous`` to all keyless callers."""

    keyed: RateSpec | None = None
    anonymous: RateSpec | None = None

    @classmethod
    def from_args(cls, rps: float | None, pool: str | None) -> Limits:
        keyed = rps_spec(rps) if rps else None
        return cls(keyed=keyed, anonymous=pool_spec(pool) if pool else keyed)


class Emulator:
    """Base of one emulated API: subclasses add their routes in ``routes`` and say how a caller is keyed."""

    name = "emulator"
    key_header = "x-api-key"

    def __init__(
        self,
        source: Any,
        limits: Limits | None = None,
        latency_ms: float = 0.0,
        faults: str | None = None,
        seed: int = 0,
    ):
        """``source``: an opened ``pilot.sources.local.LocalCorpusSource``; its store answers every endpoint."""
        self.source = source
        self.store = source.store
        self.limits = limits or Limits()
        self.latency_s = max(0.0, latency_ms) / 1000
        self.faults = parse_faults(faults)
        self._rng = random.Random(seed)
        self._windows: dict[str, Window] = {}
        self._lock = threading.Lock()
        self.reset_stats()

    @classmethod
    def over_corpus(
        cls, corpus: Any, cache_dir: Any, rps: float | None = None, pool: str | None = None, **kw: Any
    ) -> Emulator:
        """The emulator over a corpus file (its store is built into ``cache_dir`` once, then reused)."""
        source = LocalCorpusSource.open(corpus, cache_dir, progress=False)
        return cls(source, limits=Limits.from_args(rps, pool), **kw)

    def warm(self) -> None:
        """Load the embedding model and the lexical index before the first request: a probe or a first search must
        not wait for them."""
        try:
            asyncio.run(self.source.search_papers("warm up", limit=1, mode="hybrid"))
        except Exception as exc:  # an emulator without a working embedder still serves lexical answers
            log.warning("warming up the search failed: %s", exc)

    # --- bookkeeping ------------------------------------------------------------------------------
    def reset_stats(self) -> None:
        self.requests: Counter[str] = Counter()
        self.by_key: Counter[str] = Counter()
        self.statuses: Counter[int] = Counter()
        self.fault_counts: Counter[str] = Counter()
        self.rate_limited = 0
        self.started = time.time()
        self.recent: deque = deque(maxlen=200)  # (seconds since start, caller, status): to see a 429's neighbours
        for w in getattr(self, "_windows", {}).values():
            w.peak = len(w.times)

    def stats(self) -> dict[str, Any]:
        return {
            "emulator": self.name,
            "total": sum(self.requests.values()),
            "requests": dict(sorted(self.requests.items())),
            "rate_limited": self.rate_limited,
            "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
            "faults": dict(self.fault_counts),
            "by_key": dict(self.by_key),
            "limits": {"keyed": str(self.limits.keyed or "none"), "anonymous": str(self.limits.anonymous or "none")},
            "peak_in_window": {k: w.peak for k, w in self._windows.items()},
            "latency_ms": self.latency_s * 1000,
            "fault_spec": ",".join(str(f) for f in self.faults),
            "since_s": round(time.time() - self.started, 3),
            "recent": list(self.recent),
        }

    def caller(self, request: web.Request) -> tuple[str, RateSpec | None]:
        """Stats label of the caller (never the key itself) and the rate that applies to it."""
        key = (request.headers.get(self.key_header) or "").strip()
        if key:
            return "key:" + hashlib.sha256(key.encode()).hexdigest()[:8], self.limits.keyed
        return "anonymous", self.limits.anonymous

    def admit(self, label: str, spec: RateSpec | None) -> float | None:
        if spec is None:
            return None
        with self._lock:
            window = self._windows.setdefault(label, spec.window())
            return window.admit(time.monotonic())

    def roll_faults(self) -> list[Fault]:
        with self._lock:
            return [f for f in self.faults if self._rng.random() < f.probability]

    # --- replies subclasses shape -----------------------------------------------------------------
    def too_many(self, wait_s: float) -> web.Response:
        raise NotImplementedError

    def server_error(self, status: int) -> web.Response:
        return web.json_response({"message": "Internal Server Error"}, status=status)

    # --- the app ---------------------------------------------------------------------------------------
    def routes(self, app: web.Application) -> None:
        raise NotImplementedError

    def app(self) -> web.Application:
        @web.middleware
        async def gate(request: web.Request, handler: Handler) -> web.StreamResponse:
            if request.path.startswith("/_"):
                return await handler(request)
            route = request.match_info.route.resource
            endpoint = f"{request.method} {route.canonical if route is not None else request.path}"
            label, spec = self.caller(request)
            self.requests[endpoint] += 1
            self.by_key[label] += 1
            wait = self.admit(label, spec)
            self.recent.append((round(time.time() - self.started, 3), label, 429 if wait is not None else 0))
            if wait is not None:
                self.rate_limited += 1
                self.statuses[429] += 1
                await asyncio.sleep(self.latency_s)
                return self.too_many(wait)
            delay = self.latency_s
            for fault in self.roll_faults():
                self.fault_counts[str(fault).split(":")[0]] += 1
                if fault.kind == "reset":
                    _reset(request)
                    raise ConnectionResetError("emulated connection reset")
                if fault.kind == "status":
                    self.statuses[fault.status] += 1
                    await asyncio.sleep(delay)
                    return self.server_error(fault.status)
                delay += fault.delay_s
            await asyncio.sleep(delay)
            try:
                response = await handler(request)
            except web.HTTPException as exc:
                self.statuses[exc.status] += 1
                raise
            self.statuses[response.status] += 1
            return response

        app = web.Application(middlewares=[gate], client_max_size=64 * 1024**2)
        app.router.add_get("/_stats", self._get_stats)
        app.router.add_delete("/_stats", self._delete_stats)
        app.router.add_post("/_faults", self._set_faults)
        self.routes(app)
        return app

    async def _get_stats(self, request: web.Request) -> web.Response:
        return web.json_response(self.stats())

    async def _delete_stats(self, request: web.Request) -> web.Response:
        self.reset_stats()
        return web.json_response(self.stats())

    async def _set_faults(self, request: web.Request) -> web.Response:
        """Change the faults while running (tests inject them mid-turn): ``{"spec": "503:0.5"}``."""
        try:
            body = await request.json()
            self.faults = parse_faults(str(body.get("spec") or ""))
        except (ValueError, AttributeError) as exc:
            return web.json_response({"error": str(exc)}, status=400)
        return web.json_response({"faults": ",".join(str(f) for f in self.faults)})


def _reset(request: web.Request) -> None:
    """Close the connection with a TCP RST (SO_LINGER 0) instead of an answer."""
    transport = request.transport
    if transport is None:
        return
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()


def json_error(status: int, message: str) -> web.Response:
    """S2's error body: ``{"error": "..."}``."""
    return web.json_response({"error": message}, status=status, dumps=lambda o: json.dumps(o, ensure_ascii=False))


def retry_after(wait_s: float) -> dict[str, str]:
    return {"Retry-After": str(max(1, math.ceil(wait_s)))}


# --- serving -------------------------------------------------------------------------------------
def serve(emulator: Emulator, host: str, port: int) -> None:
    """Serve until interrupted (the ``pilot emulate`` command)."""
    emulator.warm()
    web.run_app(emulator.app(), host=host, port=port, print=None, access_log=None)


class Servable(Protocol):
    """What ``Running`` serves: an emulator, or the fault proxy in front of one."""

    name: str

    def warm(self) -> None: ...

    def app(self) -> web.Application: ...


class Running:
    """An emulator (or the fault proxy) on an ephemeral loopback port in a background thread; a context manager
    for tests and benchmarks."""

    def __init__(self, emulator: Servable, host: str = "127.0.0.1", port: int = 0):
        self.emulator = emulator
        self.host = host
        self.port = port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def __enter__(self) -> Self:
        self.emulator.warm()
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                runner = web.AppRunner(self.emulator.app(), access_log=None)
                loop.run_until_complete(runner.setup())
                site = web.TCPSite(runner, self.host, self.port)
                loop.run_until_complete(site.start())
                self._runner = runner
                self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
            except BaseException as exc:  # noqa: BLE001 - reported to the caller's thread
                failure.append(exc)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(runner.cleanup())
            loop.close()

        self._thread = threading.Thread(target=run, name=f"{self.emulator.name}-emulator", daemon=True)
        self._thread.start()
        ready.wait(60)
        if failure:
            raise failure[0]
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)
