"""Where a search's CPU goes: a sampling profile of whole searches over the offline corpus, every thread.

    .venv/bin/python scripts/profile_search.py --corpus ../shared/corpus/papers.jsonl.gz [--searches 8]

Each search is what a visitor of ``pilot bench load`` does first (a dev case's request, "Search now", then
"only after 2000"), on a fresh session over one runtime (a fresh node cache over the built store), after one
warm-up search. A thread samples the stacks of all threads every ``--every-ms`` and counts, for each function of
pilot (and of the libraries it calls), the samples it was running in (inclusive) and on top of (exclusive). A
deterministic profiler (cProfile) is no good here: its overhead inflates pure-Python code (a deep copy looked like
a quarter of the time, and is 1 %), and it sees one thread. Reported: process CPU seconds per search, and the top
functions by inclusive samples among those that ran while a search was busy (idle threads are left out).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from types import FrameType

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))

IDLE = ("wait", "select", "poll", "sleep", "_worker", "get", "acquire", "_wait_for_tstate_lock")


class Sampler:
    def __init__(self, every_s: float):
        self.every_s = every_s
        self.inclusive: Counter[str] = Counter()
        self.exclusive: Counter[str] = Counter()
        self.samples = 0
        self._stop = threading.Event()
        self._me = threading.get_ident()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            for tid, frame in sys._current_frames().items():
                if tid == self._me or tid == self._thread.ident:
                    continue
                names = []
                f: FrameType | None = frame
                while f is not None:
                    code = f.f_code
                    names.append(f"{Path(code.co_filename).parent.name}/{Path(code.co_filename).name}:{code.co_name}")
                    f = f.f_back
                if not names or frame.f_code.co_name in IDLE:
                    continue  # a thread waiting for work or I/O
                self.samples += 1
                self.exclusive[names[0]] += 1
                for name in set(names):
                    self.inclusive[name] += 1
            time.sleep(self.every_s)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--store-cache", type=Path, default=HERE / ".pilot-cache")
    ap.add_argument("--searches", type=int, default=8)
    ap.add_argument("--every-ms", type=float, default=2.0)
    ap.add_argument("--top", type=int, default=30)
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    from pilot.commands.bench_load import _requests
    from pilot.runtime import Runtime
    from pilot.session import Session
    from pilot.settings import Settings

    cache = Path(tempfile.mkdtemp(prefix="pilot-profile-"))
    for store in args.store_cache.glob("corpus-*"):
        (cache / store.name).symlink_to(store.resolve())
    rt = Runtime.from_settings(Settings(corpus=args.corpus, cache_dir=cache))
    requests = _requests(args.corpus.resolve().parent.parent / "bench" / "dev" / "cases.jsonl")

    async def search(text: str) -> int:
        s = Session(rt)
        await s.user_says(text)
        reply = await s.search_now()
        await s.user_says("only after 2000")
        return len(reply.results)

    asyncio.run(search(requests[-1]))  # the model, the store's pages: not measured
    cpu, wall = time.process_time(), time.perf_counter()
    with Sampler(args.every_ms / 1000) as sampler:
        found = [asyncio.run(search(t)) for t in requests[: args.searches]]
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    n = args.searches
    print(f"{n} searches ({sum(found)} results): {cpu / n:.2f} s CPU and {wall / n:.2f} s wall per search "
          f"(load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores); {sampler.samples} busy samples")  # fmt: skip
    print(f"\ntop {args.top} by inclusive share of busy samples (exclusive share after it):")
    for name, k in sampler.inclusive.most_common(args.top):
        print(f"  {100 * k / sampler.samples:5.1f} %  {100 * sampler.exclusive[name] / sampler.samples:5.1f} %  {name}")
    print(f"\ntop {args.top} by exclusive share:")
    for name, k in sampler.exclusive.most_common(args.top):
        print(f"  {100 * k / sampler.samples:5.1f} %  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
