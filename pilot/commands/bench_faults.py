"""``pilot bench faults``: each fault of issue 32, reproduced against the S2 emulator behind a fault proxy on
loopback, and what pilot did about it.

    pilot bench faults --corpus ../shared/corpus/papers.jsonl.gz [--only drip,shape,...] [--json]

The emulator (``pilot emulate s2`` over the corpus) runs in a process of its own; the fault proxy
(``emulators.faultproxy``) runs in this one, in front of it; ``pilot app`` servers (Semantic Scholar only, through
the proxy, a canary API key, no clarifying questions) run in processes of their own and are driven by
``gradio_client`` visitors, as browsers would. Each fault is bounded in time (every wait has a deadline) and in
requests (the proxy counts them), and reports: how long the turn took to end, what the visitor saw, what was
cached (whether the same request went upstream again once the fault was gone), whether the next turn worked,
and the issue's target with whether it was met.

Faults: ``drip`` (recommendations dripping a byte every 2 s under four searches; a fifth visitor says hello and
clears), ``shape`` (``200 {}`` on /paper/search and /paper/batch), ``probe`` (connections reset while the server
starts), ``key`` (the canary key echoed in 400/403 bodies: searched for in every reply and the server's log),
``ratelimit`` (a 429 asking for an hour), ``redis`` (Redis frozen with SIGSTOP; needs ``redis-server``),
``damaged`` (a damaged response cache and an empty ``ui-storage-secret`` at start).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pilot.commands.bench_load import Server, _chat_text, _free_port
from pilot.settings import get_settings

KEY = "sk-canary-bench-7d1e5a93c04b2f68"
TURN_BUDGET_S = 20.0  # PILOT_TURN_BUDGET_S of the servers here (60 by default): the dripping turns end by then
HTTP_TIMEOUT_S = 15.0  # PILOT_HTTP_TIMEOUT_S here (20 by default)
FAULTS = ("drip", "shape", "probe", "key", "ratelimit", "redis", "damaged")
ANCHORS = ("acl:P02-1040", "acl:J93-2004", "acl:N03-1033", "acl:P03-1054", "acl:D08-1048")
# four more dev-case anchors: the drip's searches without the fault, the work a turn does besides waiting
BASELINE = ("acl:D08-1052", "acl:D09-1115", "acl:P04-1023", "acl:P08-1083")
ACTION_TIMEOUT_S = 180.0


def add_faults(bench_sub) -> None:
    p = bench_sub.add_parser("faults", help="each upstream fault of issue 32 against the emulator behind a fault proxy")
    p.add_argument("--corpus", type=Path, default=None, help="corpus file (default: PILOT_CORPUS)")
    p.add_argument("--cache-dir", type=Path, default=None, help="where the corpus store is (default: PILOT_CACHE_DIR)")
    p.add_argument("--only", default=",".join(FAULTS), help=f"comma list of faults (default all: {','.join(FAULTS)})")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run_faults)


@dataclass
class Row:
    """What one fault did."""

    fault: str
    target: str
    met: bool = False
    turn_s: float | None = None  # how long the faulty turn took to end
    saw: str = ""  # what the visitor saw (the reply, shortened)
    cached: str = ""  # what was cached of the faulty answers
    next_ok: bool | None = None  # whether the next turn (fault gone) worked
    requests: int = 0  # requests the proxy saw during this fault
    details: dict[str, Any] = field(default_factory=dict)


# --- the parts --------------------------------------------------------------------------------------------------
@contextmanager
def emulator(corpus: Path, cache_dir: Path) -> Iterator[str]:
    """``pilot emulate s2`` over the corpus in a process of its own; its base URL."""
    import httpx

    port = _free_port()
    log = tempfile.TemporaryFile()  # noqa: SIM115 - read on failure, closed below
    cmd = [sys.executable, "-c", "from pilot.cli import main; main()", "emulate", "s2", "--corpus", str(corpus),
           "--port", str(port), "--cache-dir", str(cache_dir)]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 600
        while True:
            if proc.poll() is not None:
                log.seek(0)
                raise RuntimeError(f"the emulator exited: {log.read().decode(errors='replace')[-1500:]}")
            try:
                httpx.get(f"{url}/_stats", timeout=2)
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline:
                    raise TimeoutError("the emulator did not start within 600 s") from None
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        proc.wait(30)
        log.close()


def _server_env(proxy_url: str, **extra: str) -> dict[str, str]:
    return {
        "PILOT_SOURCES": "s2",
        "PILOT_S2_BASE_URL": f"{proxy_url}/graph/v1",
        "PILOT_S2_RECOMMENDATIONS_URL": f"{proxy_url}/recommendations/v1",
        "PILOT_S2_API_KEY": KEY,
        "PILOT_S2_RATE": "50/1",  # the emulator is not rate-limited here: faults, not the rate, are measured
        "PILOT_MAX_TURNS": "0",  # search at once, no clarifying questions
        "PILOT_TURN_BUDGET_S": str(TURN_BUDGET_S),
        "PILOT_HTTP_TIMEOUT_S": str(HTTP_TIMEOUT_S),
        "PILOT_CONNECT_TIMEOUT_S": "3",
        **extra,
    }


@contextmanager
def app_server(store_cache: Path, env: dict[str, str], prepare: Callable[[Path], None] | None = None,
               concurrency: int = 4) -> Iterator[Server]:  # fmt: skip
    server = Server(None, store_cache, concurrency, env=env, prepare=prepare)
    try:
        server.wait_ready(600)
        # the page is served while the start-up still opens the sources and loads the reader's model (on a fresh
        # cache, ~10 s encoding its examples): a first message waits for all of it, so that the faults' turns are
        # timed on a started server, as a deployment's are after its first start
        Visitor(server.url).act("hello", api="/send")
        yield server
    finally:
        server.stop()


@contextmanager
def serving(proxy: Any, store_cache: Path, row: Row, prepare: Callable[[Path], None] | None = None,
            **env: str) -> Iterator[tuple[Server, Visitor]]:  # fmt: skip
    """A server for one fault (through the proxy, ``env`` added) and a first visitor; the requests the proxy saw
    meanwhile are the row's."""
    before = sum(proxy.counts.values())
    try:
        with app_server(store_cache, _server_env(proxy.url, **env), prepare) as server:
            yield server, Visitor(server.url)
    finally:
        row.requests = sum(proxy.counts.values()) - before


class Visitor:
    """One browser session (a ``gradio_client``); each action timed, its last chat message and status kept."""

    def __init__(self, url: str):
        from gradio_client import Client

        self.client = Client(url, verbose=False, download_files=False)

    def act(self, *args: Any, api: str) -> tuple[float, str, str]:
        """(seconds, the last chat message, the status line)."""
        started = time.perf_counter()
        out = self.client.submit(*args, api_name=api).result(timeout=ACTION_TIMEOUT_S)
        return time.perf_counter() - started, _chat_text(out), str(out[-1]) if out else ""

    def search(self, text: str) -> tuple[float, str, int]:
        """(seconds, what the visitor saw, results on the list)."""
        seconds, said, _ = self.act(text, api="/send")
        return seconds, said, _found(said)


def _found(said: str) -> int:
    """The number of papers a reply says it found ("Found 37 papers …"), 0 when it found none."""
    import re

    m = re.search(r"Found (\d+) paper", said)
    return int(m.group(1)) if m else 0


def _short(text: str, n: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


# --- the faults ---------------------------------------------------------------------------------------------------
def _together(visitors: list[Visitor], anchors: tuple[str, ...]) -> tuple[list[threading.Thread], list]:
    """One "papers similar to" search per visitor, all at once, in threads; (the threads, their results)."""
    results: list[tuple[float, str, int] | None] = [None] * len(visitors)

    def search(i: int) -> None:
        results[i] = visitors[i].search(f"Papers similar to [{anchors[i]}]")

    threads = [threading.Thread(target=search, args=(i,)) for i in range(len(visitors))]
    for t in threads:
        t.start()
    return threads, results


def fault_drip(proxy: Any, store_cache: Path) -> Row:
    from emulators.faultproxy import Rule

    row = Row("drip", "another visitor's hello and clear ≤ 2 s; the dripping turns end within their budget "
              f"({TURN_BUDGET_S:g} s here) plus the work the same searches take without the fault; the next turn "
              "works")  # fmt: skip
    with serving(proxy, store_cache, row) as (server, first):
        searchers = [first, *(Visitor(server.url) for _ in range(3))]
        threads, base = _together(searchers, BASELINE)  # the same four searches at once, without the fault
        for t in threads:
            t.join(ACTION_TIMEOUT_S)
        baseline = [r[0] for r in base if r is not None]
        proxy.set(Rule("/recommendations/", "drip", interval_s=2.0))
        threads, results = _together(searchers, ANCHORS[:4])
        deadline = time.monotonic() + 120
        while proxy.seen("/recommendations/", "drip") < 4 and time.monotonic() < deadline:
            time.sleep(0.2)
        other = Visitor(server.url)
        hello_s, hello_said, _ = other.act("hello", api="/send")
        clear_s, _, _ = other.act(api="/clear_chat")
        stuck = sum(t.is_alive() for t in threads)
        for t in threads:
            t.join(ACTION_TIMEOUT_S)
        turns = [r[0] for r in results if r is not None]
        proxy.clear()
        drips = proxy.seen("/recommendations/", "drip")
        again_s, again_said, found = searchers[0].search(f"Papers similar to [{ANCHORS[0]}]")
        asked_again = proxy.seen("/recommendations/", "pass") > 0
    row.turn_s = round(max(turns), 1) if turns else None
    row.saw = _short(results[0][1] if results[0] else "")
    row.cached = "nothing of the drip: the next identical search asked for the recommendations again" if asked_again \
        else "the recommendations were not asked again (served from a cache)"  # fmt: skip
    row.next_ok = found > 0
    allowed = TURN_BUDGET_S + (max(baseline) if baseline else 0.0)
    row.details = {
        "hello_s": round(hello_s, 2), "clear_s": round(clear_s, 2), "searches_still_running_at_hello": stuck,
        "dripping_requests": drips, "search_turns_s": [round(t, 1) for t in turns],
        "same_searches_without_fault_s": [round(t, 1) for t in baseline], "allowed_s": round(allowed, 1),
        "hello_reply": _short(hello_said), "next_turn_s": round(again_s, 1), "next_turn": _short(again_said),
    }  # fmt: skip
    row.met = hello_s <= 2 and clear_s <= 2 and bool(turns) and max(turns) <= allowed and bool(row.next_ok)
    return row


def fault_shape(proxy: Any, store_cache: Path) -> Row:
    from emulators.faultproxy import Rule

    row = Row("shape", "a 200 with the wrong JSON shape is an error, never cached; the next turn works")
    with serving(proxy, store_cache, row) as (server, v):
        proxy.set(Rule("/paper/search$", "body", status=200, body={}))
        topic = "surveys on dependency parsing"
        turn_s, said, found = v.search(topic)
        proxy.set(Rule("/paper/batch$", "body", status=200, body={}))
        batch_s, batch_said, batch_found = v.search(f"Which papers came after [{ANCHORS[1]}]?")
        wrong = {"search": proxy.seen("/paper/search$", "body"), "batch": proxy.seen("/paper/batch$", "body")}
        proxy.clear()
        sent = proxy.seen("/paper/search$", "pass"), proxy.seen("/paper/batch$", "pass")
        again_s, again_said, again_found = v.search(topic)
        batch_again = v.search(f"Which papers came after [{ANCHORS[1]}]?")
        resent = proxy.seen("/paper/search$", "pass") > sent[0], proxy.seen("/paper/batch$", "pass") > sent[1]
    row.turn_s = round(max(turn_s, batch_s), 1)
    row.saw = _short(said) + " | " + _short(batch_said)
    row.cached = (
        "nothing: the same search and batch went upstream again once the fault was gone"
        if all(resent)
        else f"not asked again (search {resent[0]}, batch {resent[1]}): served from a cache"
    )
    row.next_ok = again_found > 0 and batch_again[2] > 0
    row.details = {"wrong_shaped_answers": wrong, "found_while_faulty": [found, batch_found],
                   "found_after": [again_found, batch_again[2]], "said_after": _short(again_said)}  # fmt: skip
    row.met = all(resent) and bool(row.next_ok) and "Nothing in the source matches" not in said
    return row


def fault_probe(proxy: Any, store_cache: Path) -> Row:
    from emulators.faultproxy import Rule

    row = Row("probe", "a start-up probe failure clears within 60 s of recovery, without a restart")
    proxy.set(Rule("", "reset"))  # every connection reset while the server starts
    with serving(proxy, store_cache, row) as (server, v):
        _, first_said, status = v.act("hello", api="/send")
        down = "unreachable" in status
        proxy.clear()
        healed = time.monotonic()
        back_s = None
        while time.monotonic() - healed < 120:
            _, _, status = v.act("hello", api="/send")
            if "is back" in status:
                back_s = time.monotonic() - healed
                break
            time.sleep(2)
        turn_s, said, found = v.search(f"Papers similar to [{ANCHORS[2]}]")
    row.turn_s = round(turn_s, 1)
    row.saw = _short(first_said) + " | status: " + _short(status, 200)
    row.cached = "'unreachable' is kept 30 s on disk and re-probed every 15 s by the server"
    row.next_ok = found > 0
    row.details = {
        "status_said_unreachable": down,
        "back_after_recovery_s": None if back_s is None else round(back_s, 1),
    }
    row.met = down and back_s is not None and back_s <= 60 and bool(row.next_ok)
    return row


def fault_key(proxy: Any, store_cache: Path) -> Row:
    from emulators.faultproxy import Rule

    row = Row("key", "no key (whole or its first 10 characters) in any reply or in the server's log")
    with serving(proxy, store_cache, row) as (server, v):
        proxy.set(
            Rule("/paper/search$", "echo_key", status=403),
            Rule("/paper/batch$", "echo_key", status=400),
            Rule("/paper/", "echo_key", status=404),
            Rule("/recommendations/", "echo_key", status=400),
        )
        said = []
        for text in ("surveys on machine translation", f"Papers similar to [{ANCHORS[3]}]",
                     f"Which papers came after [{ANCHORS[4]}]?"):  # fmt: skip
            turn_s, reply, _ = v.search(text)
            said.append(reply)
        proxy.clear()
        _, after, found = v.search(f"Papers similar to [{ANCHORS[3]}]")
        log = server.log_text()
    shown = "\n".join(said + [after])
    leaks = {"replies": shown.count(KEY) + shown.count(KEY[:10]), "log": log.count(KEY) + log.count(KEY[:10])}
    row.turn_s = round(turn_s, 1)
    row.saw = _short(said[0])
    row.cached = "errors are never cached"
    row.next_ok = found > 0
    row.details = {"echoed_by_upstream": len(proxy.echoed), "leaks": leaks, "redacted_in_log": log.count("[redacted]")}
    row.met = len(proxy.echoed) > 0 and leaks == {"replies": 0, "log": 0}
    return row


def fault_ratelimit(proxy: Any, store_cache: Path) -> Row:
    from emulators.faultproxy import Rule

    row = Row("ratelimit", "a 429 asking for an hour says so (not 'wait a minute') and does not hold the turn")
    with serving(proxy, store_cache, row) as (server, v):
        proxy.set(Rule("/paper/search$", "body", status=429, body={"message": "Too Many Requests"},
                       headers={"Retry-After": "3600"}))  # fmt: skip
        turn_s, said, _ = v.search("surveys on sentiment analysis")
        proxy.clear()
        _, _, found = v.search("surveys on sentiment analysis")
    row.turn_s = round(turn_s, 1)
    row.saw = _short(said, 300)
    row.cached = "errors are never cached"
    row.next_ok = found > 0
    row.met = "about 1 hour" in said and "a minute" not in said and turn_s < 10
    return row


def fault_redis(proxy: Any, store_cache: Path) -> Row:
    row = Row("redis", "a frozen Redis costs a turn ≤ 5 s and never empties it; the next turn works")
    exe = shutil.which("redis-server")
    if exe is None:
        row.saw = "not measured: redis-server is not installed (scripts/ensure-redis.sh installs it)"
        return row
    with _redis(exe) as (url, pid), serving(proxy, store_cache, row, PILOT_REDIS_URL=url) as (server, v):
        v.search(f"Papers similar to [{ANCHORS[0]}]")  # warms the model, the caches
        base_s, _, base_found = v.search(f"Papers similar to [{ANCHORS[1]}]")
        os.kill(pid, signal.SIGSTOP)
        try:
            frozen_s, said, found = Visitor(server.url).search(f"Papers similar to [{ANCHORS[2]}]")
        finally:
            os.kill(pid, signal.SIGCONT)
        time.sleep(1)
        next_s, _, next_found = v.search(f"Papers similar to [{ANCHORS[3]}]")
    row.turn_s = round(frozen_s, 1)
    row.saw = _short(said)
    row.cached = "while frozen, caches miss and the rate limit is the process's own (circuit breaker)"
    row.next_ok = next_found > 0
    cost = frozen_s - base_s
    row.details = {"turn_without_freeze_s": round(base_s, 1), "extra_s": round(cost, 1), "found_frozen": found,
                   "found_before": base_found, "next_turn_s": round(next_s, 1)}  # fmt: skip
    row.met = found > 0 and cost <= 5 and bool(row.next_ok)
    return row


@contextmanager
def _redis(exe: str) -> Iterator[tuple[str, int]]:
    import redis

    port = _free_port()
    workdir = tempfile.TemporaryDirectory(prefix="pilot-bench-redis-")
    proc = subprocess.Popen([exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", workdir.name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    url = f"redis://127.0.0.1:{port}/0"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                redis.Redis.from_url(url).ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield url, proc.pid
    finally:
        os.kill(proc.pid, signal.SIGCONT)
        proc.terminate()
        proc.wait(10)
        workdir.cleanup()


def fault_damaged(proxy: Any, store_cache: Path) -> Row:
    row = Row("damaged", "a damaged cache is moved aside, rebuilt and said in the status line; an empty "
              "ui-storage-secret is replaced with a warning")  # fmt: skip

    def damage(cache: Path) -> None:
        (cache / "api").mkdir(mode=0o700)
        (cache / "api" / "cache.db").write_bytes(b"not a database " * 400)
        (cache / "ui-storage-secret").write_bytes(b"")  # what a start on a full disk left

    with serving(proxy, store_cache, row, damage) as (server, v):
        _, _, status = v.act("hello", api="/send")
        topic = "surveys on question answering"
        turn_s, said, found = v.search(topic)
        sent = proxy.seen("/paper/search$")
        again_s, _, again_found = v.search(topic)
        cached = proxy.seen("/paper/search$") == sent
        secret = (server.cache / "ui-storage-secret").read_text()
        log = server.log_text()
        moved = [p.name for p in server.cache.glob("*.damaged-*")]
    row.turn_s = round(turn_s, 1)
    row.saw = "status: " + _short(status, 240)
    row.cached = "the rebuilt cache works: the same search was served from it" if cached else "the cache is not used"
    row.next_ok = again_found > 0
    row.details = {"moved_aside": moved, "secret_length": len(secret), "warned": "ui-storage-secret" in log}
    row.met = "damaged" in status and cached and len(secret) >= 24 and row.details["warned"] and found > 0
    return row


RUNS: dict[str, Callable[[Any, Path], Row]] = {
    "drip": fault_drip, "shape": fault_shape, "probe": fault_probe, "key": fault_key, "ratelimit": fault_ratelimit,
    "redis": fault_redis, "damaged": fault_damaged,
}  # fmt: skip


def run_faults(args: argparse.Namespace) -> int:
    settings = get_settings()
    corpus = args.corpus or settings.corpus
    if corpus is None or not Path(corpus).is_file():
        print("pilot bench faults: no corpus: pass --corpus or set PILOT_CORPUS", file=sys.stderr)
        return 2
    wanted = [f.strip() for f in args.only.split(",") if f.strip()]
    unknown = [f for f in wanted if f not in RUNS]
    if unknown:
        print(f"pilot bench faults: unknown fault(s) {', '.join(unknown)}: one of {', '.join(FAULTS)}", file=sys.stderr)
        return 2
    store_cache = Path(args.cache_dir or settings.cache_dir)
    # lazy on purpose: the emulators (and the fault proxy) are a development tool outside the product's imports
    from emulators.faultproxy import FaultProxy
    from emulators.server import Running

    rows: list[Row] = []
    started = time.monotonic()
    with emulator(Path(corpus), store_cache) as upstream:
        proxy = FaultProxy(upstream)
        with Running(proxy) as running:
            proxy.url = running.url  # type: ignore[attr-defined]
            for name in wanted:
                proxy.clear()
                t0 = time.monotonic()
                try:
                    row = RUNS[name](proxy, store_cache)
                except Exception as exc:  # noqa: BLE001 - one fault's harness failing is a row, not the end
                    row = Row(name, "", saw=f"the benchmark failed: {type(exc).__name__}: {exc}")
                row.details["wall_s"] = round(time.monotonic() - t0, 1)
                rows.append(row)
                if not args.json:
                    _print(row)
    report = {
        "settings": {"PILOT_TURN_BUDGET_S": TURN_BUDGET_S, "PILOT_HTTP_TIMEOUT_S": HTTP_TIMEOUT_S},
        "cores": os.cpu_count(),
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "wall_s": round(time.monotonic() - started, 1),
        "faults": [asdict(r) for r in rows],
        "met": sum(r.met for r in rows),
    }
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print(f"\n{report['met']} of {len(rows)} targets met in {report['wall_s']} s "
              f"(load {report['load_avg_1m']} on {report['cores']} cores)")  # fmt: skip
    return 0 if all(r.met for r in rows) else 1


def _print(r: Row) -> None:
    print(f"\n[{'met' if r.met else 'MISSED'}] {r.fault}: {r.target}")
    print(f"  turn ended after {r.turn_s} s; next turn worked: {r.next_ok}; requests through the proxy: {r.requests}")
    print(f"  saw: {r.saw}")
    print(f"  cached: {r.cached}")
    for k, v in r.details.items():
        print(f"  {k}: {v}")
