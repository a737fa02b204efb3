"""What grows per visitor session: tracemalloc snapshots of one app process around rounds of whole visits.

    .venv/bin/python scripts/profile_sessions.py --corpus ../shared/corpus/papers.jsonl.gz [--rounds 4] [--visitors 2]

The app (``pilot app``, the offline corpus, a fresh node cache over the built store) runs in a process of its
own with a signal hook: SIGUSR1 starts tracemalloc (first time) and writes a snapshot after a full garbage
collection. One warm-up visit loads the model and the store; a first snapshot is taken after one more round
(so that what every process builds once is in it), then ``--rounds`` rounds of ``--visitors`` visits (each a
``gradio_client`` session doing what ``pilot bench load`` does: request, search, filter, node edit, export),
then a second snapshot. The report lists the allocation sites that grew most between them, the traced bytes
and RSS per visit, and the temp folders the visits left.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))

from pilot.commands.bench_load import Server, _requests, _visit  # noqa: E402

# the server, with the snapshot hook (a development aid: nothing of it is in the product)
_HOOK = """
import gc, signal, sys, threading, tracemalloc
frames, out = int(sys.argv[1]), sys.argv[2]
taken = [0]
def dump(*_):
    def work():
        if not tracemalloc.is_tracing():
            tracemalloc.start(frames)
        gc.collect()
        taken[0] += 1
        tracemalloc.take_snapshot().dump(f"{out}.{taken[0]}")
        open(f"{out}.{taken[0]}.done", "w").close()
    threading.Thread(target=work, daemon=True).start()
signal.signal(signal.SIGUSR1, dump)
from pilot.cli import main
sys.argv = ["pilot", *sys.argv[3:]]
main()
"""


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _snapshot(server: Server, out: Path, n: int) -> tracemalloc.Snapshot:
    os.kill(server.proc.pid, signal.SIGUSR1)
    done = Path(f"{out}.{n}.done")
    while not done.exists():
        time.sleep(0.5)
    return tracemalloc.Snapshot.load(f"{out}.{n}")


def _round(url: str, requests: list[str], visitors: int, r: int) -> list[str]:
    errors: list[str] = []

    def one(i: int) -> None:
        result = _visit(url, requests[(r * visitors + i) % (len(requests) - 1)], 600)
        errors.extend(result["errors"])

    threads = [threading.Thread(target=one, args=(i,)) for i in range(visitors)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--store-cache", type=Path, default=HERE / ".pilot-cache", help="where the built store is")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--warm-rounds", type=int, default=1, help="rounds before the first snapshot (fill the caches)")
    ap.add_argument("--visitors", type=int, default=2)
    ap.add_argument("--frames", type=int, default=15, help="frames kept per allocation (tracemalloc)")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--idle-s", type=float, default=0.0, help="PILOT_SESSION_IDLE_S of the server (0: its default)")
    ap.add_argument("--settle-s", type=float, default=2.0, help="seconds between the last visit and the snapshot")
    args = ap.parse_args()

    requests = _requests(args.corpus.resolve().parent.parent / "bench" / "dev" / "cases.jsonl")
    tmp = Path(tempfile.mkdtemp(prefix="pilot-profile-"))
    out = tmp / "snap"
    server = Server(
        args.corpus, args.store_cache, None, launcher=[sys.executable, "-c", _HOOK, str(args.frames), str(out)]
    )
    try:
        server.wait_ready()
        print(f"serving on {server.url}; warm-up…", flush=True)
        _visit(server.url, requests[-1], 600)
        for r in range(args.warm_rounds):  # what every process builds up to its caps (caches) is in the first snapshot
            _round(server.url, requests, args.visitors, 1000 + r)
        before, rss0 = _snapshot(server, out, 1), _rss_mb(server.proc.pid)
        visits, errors = 0, []
        for r in range(1, args.rounds + 1):
            errors += _round(server.url, requests, args.visitors, r)
            visits += args.visitors
            print(f"round {r}: RSS {_rss_mb(server.proc.pid):.0f} MB", flush=True)
        time.sleep(args.settle_s)  # (with a short --idle-s: the visitors' sessions are let go meanwhile)
        after, rss1 = _snapshot(server, out, 2), _rss_mb(server.proc.pid)
    finally:
        server.stop()
    stats = after.compare_to(before, "traceback")
    grew = sum(s.size_diff for s in stats)
    print(f"\n{visits} visits ({len(errors)} errors): traced +{grew / 2**20:.1f} MB ({grew / visits / 2**20:.2f} MB "
          f"per visit), RSS {rss0:.0f} -> {rss1:.0f} MB ({(rss1 - rss0) / visits:.1f} MB per visit)")  # fmt: skip
    for e in errors[:5]:
        print(f"  error: {e}")
    left = sorted(Path(tempfile.gettempdir()).glob(f"pilot-ui-{server.proc.pid}-*"))
    print(f"this server's temporary folders left after it stopped: {len(left)}")
    print(f"\ntop {args.top} growing allocation sites (innermost frames of pilot / workflows / gradio):")
    for s in stats[: args.top]:
        if s.size_diff <= 0:
            break
        ours = [f for f in s.traceback if any(p in f.filename for p in ("/pilot/", "/workflows/", "/gradio/"))]
        where = " <- ".join(f"{Path(f.filename).parent.name}/{Path(f.filename).name}:{f.lineno}"
                            for f in reversed((ours or list(s.traceback))[-4:]))  # fmt: skip
        print(f"  +{s.size_diff / 2**20:7.2f} MB  {s.count_diff:+8d} blocks  {where}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
