"""``pilot emulate s2|aminer``: serve a corpus through an emulator of a remote paper API on loopback.

    pilot emulate s2 --corpus ../shared/corpus/papers.jsonl.gz --port 8765 --rps 1 --latency-ms 300
    pilot emulate s2 --corpus … --pool 100/300 --faults "503:0.05,reset:0.02,slow=4000:0.05"

A development and test tool: the ``emulators`` package is imported only when this command runs, so the
product (app, session, sources) never loads it.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path


def add(sub) -> None:
    p = sub.add_parser(
        "emulate",
        help="serve a corpus as an emulated Semantic Scholar / AMiner API on 127.0.0.1 (development tool)",
        description="Serve a corpus in the shared schema through an emulator of Semantic Scholar (s2) or AMiner, with "
        "their documented limits, rate limiting (429 + Retry-After), latency and injected faults; GET /_stats counts "
        "requests per endpoint and 429s.",
    )
    p.add_argument("api", choices=["s2", "aminer"], help="which API to emulate")
    p.add_argument("--corpus", type=Path, required=True, help="corpus file in the shared schema (.jsonl or .jsonl.gz)")
    p.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (default 8765)")
    p.add_argument("--host", default="127.0.0.1", help="listen address (default 127.0.0.1)")
    rate = p.add_mutually_exclusive_group()
    rate.add_argument("--rps", type=float, default=None, help="requests per second per API key (S2 with a key: 1)")
    rate.add_argument(
        "--pool", default=None, help="N/SECONDS shared by all keyless callers (S2 without a key: 100/300)"
    )
    p.add_argument("--latency-ms", type=float, default=0.0, help="added to every answer (default 0)")
    p.add_argument("--faults", default=None, help='e.g. "503:0.05,reset:0.02,slow=4000:0.05" (KIND:PROBABILITY)')
    p.add_argument("--seed", type=int, default=0, help="seed of the fault dice (default 0)")
    p.add_argument(
        "--cache-dir", type=Path, default=None, help="where the corpus store is built (default PILOT_CACHE_DIR)"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if not args.corpus.is_file():
        print(f"pilot emulate: corpus file not found: {args.corpus}", file=sys.stderr)
        return 2
    from pilot.settings import Settings

    cache_dir = args.cache_dir or Settings().cache_dir
    # lazy on purpose: the emulators are a development tool and stay out of the product's import path
    from emulators.aminer import AMinerEmulator
    from emulators.s2 import S2Emulator
    from emulators.server import serve

    kind = S2Emulator if args.api == "s2" else AMinerEmulator
    try:
        emulator = kind.over_corpus(
            args.corpus, cache_dir, rps=args.rps, pool=args.pool, latency_ms=args.latency_ms, faults=args.faults,
            seed=args.seed,
        )  # fmt: skip
    except ValueError as exc:
        print(f"pilot emulate: {exc}", file=sys.stderr)
        return 2
    base = f"http://{args.host}:{args.port}"
    hint = (
        f"PILOT_S2_BASE_URL={base}/graph/v1 PILOT_S2_RECOMMENDATIONS_URL={base}/recommendations/v1"
        if args.api == "s2"
        else f"PILOT_AMINER_BASE_URL={base}/gateway/open_platform PILOT_AMINER_TOKEN=any"
    )
    limits = emulator.limits
    print(
        f"emulating {args.api} over {args.corpus} ({len(emulator.store)} papers) on {base}\n"
        f"  rate: per key {limits.keyed or 'unlimited'}, keyless {limits.anonymous or 'unlimited'}; "
        f"latency {args.latency_ms:g} ms; faults {args.faults or 'none'}\n"
        f"  point pilot at it: {hint}\n  counters: GET {base}/_stats",
        flush=True,
    )
    serve(emulator, args.host, args.port)
    return 0
