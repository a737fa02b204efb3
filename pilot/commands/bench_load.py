"""``pilot bench load``: several visitors using one pilot server at once — latency per action, errors, memory.

    pilot bench load --visitors 1,5,20 --corpus ../shared/corpus/papers.jsonl.gz [--json]

For each visitor count N, a fresh server (``pilot app`` on 127.0.0.1, offline corpus, an empty node
cache, the corpus store reused) is started in a process of its own and warmed up by one visitor. Then N
simulated visitors — threads of this process, each a ``gradio_client`` session of its own, as N browsers
would be — each do a whole search at the same moment: a request in their own words (``send``, a dev
benchmark case's query; every visitor a different anchor, so no one is served from another's cache),
``search_now`` (the full search), a result filter (``filter_results``: an edit of the workflow and a
re-run), a node edit (``select_node`` + ``edit_node`` of the first search step) and an export
(``keep_all``, which writes the library's BibTeX / RIS / CSL-JSON, then the BibTeX file downloaded).

Reported per N: p50 / p95 / max seconds per action over all visitors, wall time, errors (an exception,
or a reply that says something failed, each with its words), and the server's peak resident memory (VmHWM).

A soak (``--duration 600``): each visitor does one whole search after another, every one a new browser session,
until the time is up; the server's resident memory (VmRSS) is sampled every ``--sample-s`` seconds, and reported
at the start, its peak, at the end, after ``--idle-s`` seconds of no load, and as a slope (MB per minute by least
squares) over the last five minutes — flat means what a session costs is given back. Also reported: the
temporary folders the server left after it was stopped. ``--out DIR`` writes ``report.json`` and a plot of the
memory over time per visitor count (``rss.png``).

    pilot bench load --visitors 1,10,30 --duration 600 --out out/soak --corpus ../shared/corpus/papers.jsonl.gz
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pilot.settings import get_settings

ACTIONS = ("send", "search_now", "filter", "edit", "export")
FAILED_WORDS = ("Sorry,", "Something went wrong", "failed:", "Could not", "took longer than a turn may")


def add_load(bench_sub) -> None:
    p = bench_sub.add_parser("load", help="N simulated visitors on one server: latency per action, errors, memory")
    p.add_argument("--visitors", default="1,5,20", help="comma list of visitor counts (default 1,5,20)")
    p.add_argument("--corpus", type=Path, default=None, help="corpus file (default: PILOT_CORPUS)")
    p.add_argument(
        "--cache-dir", type=Path, default=None, help="where the corpus store lives (default: PILOT_CACHE_DIR)"
    )
    p.add_argument("--bench-cases", type=Path, default=None, help="requests (default: ../shared/bench/dev/cases.jsonl)")
    p.add_argument("--concurrency", type=int, default=None, help="the server's PILOT_UI_CONCURRENCY (default: its own)")
    p.add_argument(
        "--timeout", type=float, default=600.0, help="seconds one action may take before it counts as failed"
    )
    p.add_argument("--duration", type=float, default=0.0, help="soak: visitors repeat whole searches for S seconds")
    p.add_argument("--sample-s", type=float, default=10.0, help="seconds between memory samples (default 10)")
    p.add_argument("--idle-s", type=float, default=60.0, help="soak: seconds of no load before the idle sample")
    p.add_argument("--out", type=Path, default=None, help="write report.json and rss.png here")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run_load)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _requests(path: Path) -> list[str]:
    """Distinct requests in researchers' words, one per anchor (the dev cases' queries)."""
    seen: set[str] = set()
    out: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        if case.get("anchor_paper_id") in seen or not case.get("user_query"):
            continue
        seen.add(case["anchor_paper_id"])
        out.append(case["user_query"])
    return out


class Server:
    """``pilot app`` in a child process, over a fresh node cache that reuses the built corpus store."""

    def __init__(
        self,
        corpus: Path | None,
        store_cache: Path,
        concurrency: int | None,
        launcher: list[str] | None = None,
        env: dict[str, str] | None = None,
        prepare: Callable[[Path], None] | None = None,
    ):
        """``env``: more settings (``PILOT_*``); ``prepare(cache_dir)`` runs before the server starts (a benchmark
        that damages the cache directory first)."""
        self.tmp = tempfile.TemporaryDirectory(prefix="pilot-bench-load-")
        self.cache = cache = Path(self.tmp.name) / "cache"
        cache.mkdir(mode=0o700)
        for store in store_cache.glob("corpus-*"):  # the store is keyed by the corpus: reusing it is safe
            (cache / store.name).symlink_to(store.resolve())
        if prepare is not None:
            prepare(cache)
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        env = {**os.environ, "PILOT_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1", **(env or {})}
        if corpus is not None:
            env["PILOT_CORPUS"] = str(corpus)
        env.pop("PILOT_AUTH", None)
        if concurrency:
            env["PILOT_UI_CONCURRENCY"] = str(concurrency)
        self.log = open(Path(self.tmp.name) / "server.log", "w")  # noqa: SIM115 - closed in stop()
        # ``launcher``: what runs ``pilot`` (a profiler's hook, say); the app's arguments follow it
        launcher = launcher or [sys.executable, "-c", "from pilot.cli import main; main()"]
        cmd = [*launcher, "app", "--port", str(self.port)]
        self.proc = subprocess.Popen(cmd, env=env, stdout=self.log, stderr=subprocess.STDOUT)

    def wait_ready(self, timeout_s: float = 600.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited ({self.proc.returncode}); see {self.log.name}")
            try:
                with urllib.request.urlopen(self.url + "config", timeout=5):
                    return
            except OSError:
                time.sleep(1.0)
        raise TimeoutError(f"the server did not answer within {timeout_s:.0f} s")

    def log_text(self) -> str:
        """What the server has logged so far (its stdout and stderr)."""
        self.log.flush()
        return Path(self.log.name).read_text(encoding="utf-8", errors="replace")

    def peak_rss_mb(self) -> float | None:
        return memory_mb(self.proc.pid, "VmHWM")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        self.tmp.cleanup()


def _chat_text(outputs: Any) -> str:
    """The last chat message among an action's outputs (the reply to it), as text."""
    for value in outputs if isinstance(outputs, (list, tuple)) else []:
        if isinstance(value, list) and value and isinstance(value[0], dict) and "role" in value[0]:
            content = value[-1].get("content")
            parts = content if isinstance(content, list) else [content]
            return " ".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in parts)
    return ""


def _visit(url: str, request: str, timeout_s: float) -> dict[str, Any]:
    """One visitor's whole search; seconds per action and the errors it met."""
    from gradio_client import Client

    timings: dict[str, float] = {}
    errors: list[str] = []
    try:
        # patient: a page that opens slowly on a saturated server is slow, not an error (its default gives up at 5 s)
        client = Client(url, verbose=False, download_files=False, httpx_kwargs={"timeout": timeout_s})
    except Exception as exc:  # noqa: BLE001 - a visitor who cannot even open the page is an error, counted
        return {"timings": timings, "errors": [f"open: {type(exc).__name__}: {str(exc)[:160]}"]}

    def act(name: str, *calls: tuple[tuple, str]) -> Any:
        started = time.perf_counter()
        outputs: Any = None
        try:
            for args, api in calls:
                outputs = client.submit(*args, api_name=api).result(timeout=timeout_s)
            said = _chat_text(outputs)
            if any(word in said for word in FAILED_WORDS):
                errors.append(f"{name}: {said[:160]}")
        except Exception as exc:  # noqa: BLE001 - counted, reported, and the visit goes on
            errors.append(f"{name}: {type(exc).__name__}: {str(exc)[:160]}")
        timings[name] = time.perf_counter() - started
        return outputs

    act("send", ((request,), "/send"))
    act("search_now", ((), "/search_now"))
    outputs = act("filter", ((2000, None, [], [], None), "/filter_results"))
    # a node edit: the workflow's recipe (one of the downloads) names its steps; the first one with a
    # result limit gets a smaller one, and the workflow re-runs
    recipe = _download(url, outputs, "pilot-workflow.json", timeout_s, errors)
    nodes = json.loads(recipe).get("nodes", []) if recipe else []
    node = next((n for n in nodes if "limit" in n.get("params", {})), nodes[0] if nodes else None)
    if node is not None:
        params = dict(node.get("params", {}))
        if isinstance(params.get("limit"), int):
            params["limit"] = max(10, params["limit"] - 10)
        act("edit", ((node["id"],), "/select_node"), ((json.dumps(params),), "/edit_node"))
    else:
        # what the visitor saw instead (a question, a message), so that the report says why
        errors.append(f"edit: no workflow to edit (asked {request[:60]!r}; pilot said: {_chat_text(outputs)[:160]!r})")
    outputs = act("export", ((), "/keep_all"))
    _download(url, outputs, "pilot-library.bib", timeout_s, errors)  # the library's BibTeX, fetched as a browser would
    client.close()  # the visitor closes the tab
    return {"timings": timings, "errors": errors}


def _download(url: str, outputs: Any, suffix: str, timeout_s: float, errors: list[str]) -> str | None:
    """The text of the first download among an action's outputs whose name ends with ``suffix``."""
    for update in outputs if isinstance(outputs, (list, tuple)) else []:
        value = update.get("value") if isinstance(update, dict) else None  # a download button's file
        path = str(value.get("path") or "") if isinstance(value, dict) else ""
        if path.endswith(suffix) and isinstance(value, dict):
            link = value.get("url") or f"{url}gradio_api/file={path}"
            try:
                with urllib.request.urlopen(link, timeout=timeout_s) as resp:
                    return resp.read().decode("utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                errors.append(f"download {suffix}: {exc}")
                return None
    errors.append(f"download {suffix}: not among the outputs")
    return None


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def memory_mb(pid: int, field: str) -> float | None:
    """A memory figure of a process from /proc (``VmRSS`` now, ``VmHWM`` its peak), in MB; None once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


class RssSampler:
    """The resident memory of a process (VmRSS, MB) every ``every_s`` seconds, in a thread of its own."""

    def __init__(self, pid: int, every_s: float):
        self.pid = pid
        self.every_s = every_s
        self.started = time.perf_counter()
        self.samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)

    def now(self) -> float | None:
        return memory_mb(self.pid, "VmRSS")

    def _run(self) -> None:
        while not self._stop.is_set():
            mb = self.now()
            if mb is not None:
                self.samples.append((round(time.perf_counter() - self.started, 1), mb))
            self._stop.wait(self.every_s)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)


def slope_mb_per_min(samples: list[tuple[float, float]], window_s: float = 300.0) -> float | None:
    """Least-squares slope of the memory over the last ``window_s`` seconds of ``samples`` (or their last half,
    when shorter), in MB per minute."""
    if len(samples) < 3:
        return None
    end = samples[-1][0]
    span = min(window_s, (end - samples[0][0]) / 2)
    pts = [(t, mb) for t, mb in samples if t >= end - span]
    if len(pts) < 3:
        return None
    mt = statistics.fmean(t for t, _ in pts)
    mm = statistics.fmean(mb for _, mb in pts)
    den = sum((t - mt) ** 2 for t, _ in pts)
    return round(60 * sum((t - mt) * (mb - mm) for t, mb in pts) / den, 2) if den else None


def measure(n: int, corpus: Path, store_cache: Path, requests: list[str], args: argparse.Namespace) -> dict:
    server = Server(corpus, store_cache, args.concurrency)
    sampler: RssSampler | None = None
    memory: dict[str, Any] = {}
    try:
        server.wait_ready()
        warm = _visit(server.url, requests[-1], args.timeout)  # loads the model, opens the store: not measured
        sampler = RssSampler(server.proc.pid, args.sample_s)
        memory["start_mb"] = sampler.now()
        sampler.start()
        visits: list[dict] = []
        start = threading.Barrier(n)
        deadline = time.perf_counter() + args.duration if args.duration else None

        def visitor(i: int) -> None:
            start.wait()
            k = 0
            while True:  # one visit, or (a soak) one after another until the time is up
                visits.append(_visit(server.url, requests[(i + k * n) % (len(requests) - 1)], args.timeout))
                k += 1
                if deadline is None or time.perf_counter() >= deadline:
                    return

        t0 = time.perf_counter()
        threads = [threading.Thread(target=visitor, args=(i,), name=f"visitor-{i}") for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
        memory["end_mb"] = sampler.now()
        memory["slope_mb_per_min"] = slope_mb_per_min(sampler.samples)
        if args.duration:
            time.sleep(args.idle_s)  # no load: full collections run, freed memory goes back to the system
            memory["idle_mb"] = sampler.now()
        per_action = {}
        for action in ACTIONS:
            seconds = [v["timings"][action] for v in visits if action in v.get("timings", {})]
            if not seconds:
                continue
            per_action[action] = {
                "p50_s": round(statistics.median(seconds), 2),
                "p95_s": round(_percentile(seconds, 0.95), 2),
                "max_s": round(max(seconds), 2),
                "n": len(seconds),
            }
        errors = [e for v in visits for e in v.get("errors", [])]
        result = {
            "visitors": n,
            "visits": len(visits),
            "wall_s": round(wall, 1),
            "actions": per_action,
            "errors": len(errors),
            "error_examples": errors[:10],
            "warmup_errors": warm["errors"][:3],
            "server_peak_rss_mb": server.peak_rss_mb(),
            "memory": memory,
            "load_avg_1m": round(os.getloadavg()[0], 2),
        }
    finally:
        if sampler is not None:
            sampler.stop()
            memory["samples"] = sampler.samples
        pid = server.proc.pid
        server.stop()
        # what the server left in the temporary directory after it was stopped (its own folder goes at exit)
        memory["temp_folders_left"] = len(list(Path(tempfile.gettempdir()).glob(f"pilot-ui-{pid}-*")))
    return result


def _plot(runs: list[dict], path: Path) -> None:
    """The server's memory over time, one line per visitor count."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for r in runs:
        pts = r["memory"]["samples"]
        ax.plot([t / 60 for t, _ in pts], [mb for _, mb in pts], label=f"{r['visitors']} visitor(s)")
    ax.set_xlabel("minutes of load")
    ax.set_ylabel("server resident memory (MB)")
    ax.set_title("pilot app under simulated visitors (each visit a new session)")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run_load(args: argparse.Namespace) -> int:
    settings = get_settings()
    corpus = args.corpus or settings.corpus
    if corpus is None:
        print("no corpus: pass --corpus or set PILOT_CORPUS", file=sys.stderr)
        return 2
    store_cache = args.cache_dir or settings.cache_dir
    cases = args.bench_cases or Path(corpus).resolve().parent.parent / "bench" / "dev" / "cases.jsonl"
    requests = _requests(cases)
    counts = [int(x) for x in str(args.visitors).split(",") if x.strip()]
    if len(requests) < max(counts) + 1:
        print(f"{cases} has {len(requests)} distinct anchors; {max(counts) + 1} are needed", file=sys.stderr)
        return 2
    # the corpus store is built (once per corpus file) before any server starts: every server reuses it
    from pilot.sources.local import LocalCorpusSource

    LocalCorpusSource.open(Path(corpus), Path(store_cache), progress=False).store.close()
    runs: list[dict[str, Any]] = []
    report = {"corpus": Path(corpus).name, "cores": os.cpu_count(), "duration_s": args.duration, "runs": runs}
    for n in counts:
        result = measure(n, Path(corpus), Path(store_cache), requests, args)
        runs.append(result)
        if not args.json:
            _print(result)
        if args.out is not None:  # written after every count: a long soak's first results survive an interruption
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / "report.json").write_text(json.dumps(report, indent=2))
            _plot(runs, args.out / "rss.png")
    if args.json:
        print(json.dumps(report, indent=2))
    return 0


def _print(r: dict) -> None:
    m = r["memory"]
    print(
        f"\n{r['visitors']} visitor(s): {r['visits']} visits, wall {r['wall_s']} s, errors {r['errors']}, "
        f"server peak memory {r['server_peak_rss_mb']} MB (load {r['load_avg_1m']})"
    )
    print(
        f"  memory: start {m.get('start_mb')} MB, end {m.get('end_mb')} MB, idle {m.get('idle_mb', '-')} MB, "
        f"slope {m.get('slope_mb_per_min')} MB/min; temporary folders left after stop: {m.get('temp_folders_left')}"
    )
    print(f"  {'action':<11} {'p50 s':>7} {'p95 s':>7} {'max s':>7}")
    for action, s in r["actions"].items():
        print(f"  {action:<11} {s['p50_s']:>7} {s['p95_s']:>7} {s['max_s']:>7}")
    for e in r["error_examples"]:
        print(f"  error: {e}")
