"""How long reading a node's cached output holds up the event loop (every session of a server shares it).

    python scripts/cache_stall.py [--corpus ../shared/corpus/papers.jsonl.gz] [--papers 1000] [--reads 5]

A node output of ``--papers`` ranked papers (the corpus's first ones) is written to a fresh disk cache, then
read ``--reads`` times in a row, first on the event loop, then the way the executor reads it (a worker
thread). A 1 ms ticker on the loop records the longest time it was held up in each mode.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import tempfile
import time
from pathlib import Path

from cache import open_cache
from pilot.models import Paper, RankedPaper


async def _ticker(box: list[float]) -> None:
    while True:
        before = time.perf_counter()
        await asyncio.sleep(0.001)
        box[0] = max(box[0], time.perf_counter() - before - 0.001)


async def _measure(cache, reads: int) -> dict[str, dict[str, float]]:
    out = {}
    for mode in ("on the loop", "in a thread"):
        box = [0.0]
        ticker = asyncio.ensure_future(_ticker(box))
        await asyncio.sleep(0.01)
        box[0] = 0.0
        started = time.perf_counter()
        for _ in range(reads):
            if mode == "on the loop":
                cache.get("node")
            else:
                await asyncio.to_thread(cache.get, "node")
        per_read = (time.perf_counter() - started) / reads
        await asyncio.sleep(0.01)
        ticker.cancel()
        out[mode] = {"ms_per_read": round(per_read * 1000, 1), "longest_hold_up_ms": round(box[0] * 1000, 1)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=Path("../shared/corpus/papers.jsonl.gz"))
    ap.add_argument("--papers", type=int, default=1000)
    ap.add_argument("--reads", type=int, default=5)
    args = ap.parse_args()
    papers = []
    with gzip.open(args.corpus, "rt", encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            paper = Paper(id=r["id"], title=r["title"], abstract=r.get("abstract"), year=r.get("year"))
            papers.append(RankedPaper(paper=paper, score=1.0))
            if len(papers) >= args.papers:
                break
    with tempfile.TemporaryDirectory() as d:
        cache = open_cache(Path(d), "nodes", ttl_s=3600, size_mb=512)
        cache.set("node", (papers, [], "fingerprint"))
        print(json.dumps(asyncio.run(_measure(cache, args.reads)), indent=1))


if __name__ == "__main__":
    main()
