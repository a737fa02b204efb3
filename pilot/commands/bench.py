"""``pilot bench <what>``: performance benchmarks. Each benchmark is a sub-command registered by an
``add_<what>(bench_sub)`` function: ``corpus`` here, others in ``pilot/commands/bench_<what>.py``.

    pilot bench corpus --corpus ../shared/corpus/papers.jsonl.gz [--json] [--fresh]

``corpus`` reports, for the offline corpus store: build time, warm start, on-disk size, peak memory and
search latency (p50/p95 over N deterministic queries) in lexical, dense and hybrid mode. The build runs
in a child process so its time and memory are its own; without ``--fresh`` an existing store is reused
and its recorded build time reported (``build_measured: "recorded"``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pilot.commands.bench_faults import add_faults
from pilot.commands.bench_load import add_load
from pilot.commands.bench_workflows import add_workflows
from pilot.embed import Embedder
from pilot.settings import get_settings
from pilot.sources.base import SourceError
from pilot.sources.local import LocalCorpusSource

MODES = ("lexical", "dense", "hybrid")


def add(sub) -> None:
    benchmarks = {"corpus": add_corpus, "workflows": add_workflows, "load": add_load, "faults": add_faults}
    p = sub.add_parser("bench", help="performance benchmarks (bench corpus, …)", description="Performance benchmarks.")
    bench_sub = p.add_subparsers(dest="bench_command", required=True, metavar="{" + ",".join(benchmarks) + "}")
    for add_one in benchmarks.values():
        add_one(bench_sub)


def add_corpus(bench_sub) -> None:
    p = bench_sub.add_parser("corpus", help="build / warm-start / query latency of the offline corpus store")
    p.add_argument("--corpus", type=Path, default=None, help="corpus file (default: PILOT_CORPUS)")
    p.add_argument("--cache-dir", type=Path, default=None, help="where the store lives (default: PILOT_CACHE_DIR)")
    p.add_argument("--vectors", type=Path, default=None, help="precomputed vectors (default: beside the corpus)")
    p.add_argument("--queries", type=int, default=1000, help="queries per search mode (default 1000)")
    p.add_argument("--fresh", action="store_true", help="time a build from scratch in a temporary cache dir")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run_corpus)


def _cold_import_s(module: str) -> float:
    """Seconds a fresh interpreter takes to import ``module`` (this process has imported it long ago)."""
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def _rss_mb(who: int = resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024  # Linux reports KiB


def _dir_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


def _build_in_child(corpus: Path, cache_dir: Path, vectors: Path | None, quiet: bool) -> dict:
    """Open (building if needed) in a fresh interpreter; returns its stats and peak RSS."""
    code = (
        "import json, resource, sys\n"
        "from pathlib import Path\n"
        "from pilot.sources.local import LocalCorpusSource\n"
        "a = json.loads(sys.argv[1])\n"
        "s = LocalCorpusSource.open(Path(a['corpus']), Path(a['cache']), Path(a['vectors']) if a['vectors'] else None,"
        " progress=not a['quiet'])\n"
        "print(json.dumps({**s.stats, 'rss_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))\n"
    )
    args = json.dumps(
        {"corpus": str(corpus), "cache": str(cache_dir), "vectors": str(vectors) if vectors else None, "quiet": quiet}
    )
    done = subprocess.run([sys.executable, "-c", code, args], stdout=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"building the store failed (exit {done.returncode})")
    return json.loads(done.stdout.strip().splitlines()[-1])


def sample_queries(store, n: int, seed: int = 0) -> list[str]:
    """Deterministic queries: corpus titles, and 6-12-word snippets of abstracts (every other query)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    rows = rng.choice(len(store), size=min(n, len(store)), replace=False)
    out: list[str] = []
    for i, paper in enumerate(store.papers(rows)):
        words = (paper.abstract or "").split()
        if i % 2 and len(words) >= 12:
            start = int(rng.integers(0, len(words) - 11))
            out.append(" ".join(words[start : start + int(rng.integers(6, 13))]))
        else:
            out.append(paper.title)
    return out


async def _latencies(source, queries: list[str], mode: str) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU milliseconds per query. On a shared machine the wall clock includes waiting
    for a core; the process CPU time (all threads) is what the query costs on an idle one."""
    wall, cpu = [], []
    for q in queries:
        t0, c0 = time.perf_counter(), time.process_time()
        await source.search_papers(q, limit=50, mode=mode)
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    return wall, cpu


def _percentiles(wall: list[float], cpu: list[float]) -> dict:
    import numpy as np

    def pct(xs: list[float], q: int) -> float:
        return round(float(np.percentile(xs, q)), 2)

    return {"p50_ms": pct(wall, 50), "p95_ms": pct(wall, 95), "cpu_p50_ms": pct(cpu, 50), "cpu_p95_ms": pct(cpu, 95)}


def run_corpus(args: argparse.Namespace) -> int:

    settings = get_settings()
    corpus = args.corpus or settings.corpus
    cache_dir = args.cache_dir or settings.cache_dir
    vectors = args.vectors or settings.corpus_vectors
    if corpus is None or not Path(corpus).is_file():
        print(
            f"pilot bench corpus: corpus file not found: {corpus} — pass --corpus or set PILOT_CORPUS", file=sys.stderr
        )
        return 2
    if args.fresh:  # inside the cache dir: same disk as a real build, and never in the project tree
        Path(cache_dir).mkdir(parents=True, exist_ok=True)
    tmp = tempfile.TemporaryDirectory(prefix="bench-", dir=cache_dir) if args.fresh else None
    try:
        build_cache = Path(tmp.name) if tmp else Path(cache_dir)
        built = _build_in_child(Path(corpus), build_cache, vectors, quiet=args.json)
        measured = "fresh" if built["built"] else "recorded"

        import_s = _cold_import_s("pilot.sources.local")

        # no embedding cache: every query is embedded, as a new query would be
        embedder = Embedder(cache=None)
        t0 = time.perf_counter()
        source = LocalCorpusSource.open(Path(corpus), build_cache, vectors, embedder=embedder, progress=False)
        warm_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        embedder.encode_one("warm up the model")
        model_s = time.perf_counter() - t0

        queries = sample_queries(source.store, args.queries)
        latency = {}
        for mode in MODES:
            asyncio.run(_latencies(source, queries[:5], mode))  # first calls fault pages in
            latency[mode] = _percentiles(*asyncio.run(_latencies(source, queries, mode)))
        result = {
            "build_s": built["build_s"],
            "build_measured": measured,
            "warm_start_s": round(warm_s, 3),
            "import_s": round(import_s, 3),
            "model_load_s": round(model_s, 3),
            "disk_mb": round(_dir_mb(Path(source.stats["store"])), 1),
            "peak_rss_mb": round(max(_rss_mb(), built["rss_mb"]), 1),
            "build_peak_rss_mb": round(built["rss_mb"], 1),
            "query_peak_rss_mb": round(_rss_mb(), 1),
            "papers": source.stats["papers"],
            "malformed": source.stats["malformed"],
            "vectors": source.stats["vectors"],
            "queries": len(queries),
            "load_avg_1m": round(os.getloadavg()[0], 2),  # other processes competing for the cores
            **latency,
        }
        asyncio.run(source.aclose())
    except SourceError as exc:
        print(f"pilot bench corpus: {exc}", file=sys.stderr)
        return 2
    finally:
        if tmp:
            tmp.cleanup()
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"corpus store: {result['papers']} papers, {result['malformed']} malformed lines,"
            f" vectors {result['vectors']}"
        )
        print(f"build           {result['build_s']:.1f} s ({measured}), peak RSS {result['build_peak_rss_mb']:.0f} MB")
        print(
            f"warm start      {result['warm_start_s']:.2f} s "
            f"(+ imports {result['import_s']:.2f} s, model {result['model_load_s']:.2f} s)"
        )
        print(f"on disk         {result['disk_mb']:.0f} MB")
        print(f"peak RSS        {result['peak_rss_mb']:.0f} MB")
        for mode in MODES:
            lat = latency[mode]
            print(
                f"{mode:<8}        p50 {lat['p50_ms']:.1f} ms   p95 {lat['p95_ms']:.1f} ms   "
                f"(CPU p50 {lat['cpu_p50_ms']:.1f} ms, p95 {lat['cpu_p95_ms']:.1f} ms; {len(queries)} queries)"
            )
        print(f"load average    {result['load_avg_1m']:.1f} (1 min) on {os.cpu_count()} cores")
    return 0
