"""Split-half check of the topic workflow's score weights: do weights tuned on half the cases beat the
shipped defaults on the other half? If not, the defaults are not fitted to the dev cases.

    .venv/bin/python scripts/topic_split_half.py --runs out/topic/multi/runs.jsonl \
        --cases ../shared/bench/dev/topic_cases.jsonl --corpus ../shared/corpus/papers.jsonl.gz --out out/topic/split

It replays each case's final workflow from an earlier ``pilot eval`` run (so the simulated user's answers are
the same), computes every score feature once per case and neighbourhood setting, and evaluates a grid of
settings (how many seeds vote, how fast their votes fade, the score weights) on each half: the fixed split
(cases in id order, alternating) and ``--random`` seeded random splits.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import itertools
import json
import os
import random
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from pilot.eval.harness import EvalConfig, Harness, load_cases, make_runtime
from pilot.eval.metrics import mean, ranking_metrics
from workflows.executor import execute
from workflows.model import Workflow
from workflows.ops.neighbourhood import NeighbourhoodInputs, NeighbourhoodOp, NeighbourhoodParams
from workflows.ops.scoring import ScoreParams, _normalise, compute_features

GRID = {
    "ev:graph.centrality": (0.5, 1.0, 2.0),
    "ev:graph.cocitation": (0.0, 0.5, 1.0),
    "dense": (0.5, 1.0, 2.0),
    "lexical": (0.0, 0.3, 1.0),
    "citations": (0.0, 0.3, 0.6),
}
# the neighbourhood step's own knobs: how many seeds vote, and how fast a lower-ranked seed's vote fades
NEIGHBOURHOOD = {"max_seeds": (10, 20, 30), "rank_decay": (5.0, 10.0, 10_000.0)}
METRICS = ("ndcg@10", "recall@50", "hit@10")


async def case_features(harness: Harness, case: dict, wf: Workflow) -> dict:
    """Normalised feature values of the score node's candidates for every neighbourhood setting, plus what
    the workflow was set to."""
    rt = await harness._case_runtime(case)
    ctx = rt.context()
    score, graph = wf.node("score"), wf.node("graph")
    run = await execute(Workflow(nodes=wf.nodes, edges=wf.edges, output="graph"), ctx, rt.node_cache, 120)
    inputs = NeighbourhoodInputs.of({e.port: run.values[e.source] for e in wf.inputs_of("graph")})
    params = ScoreParams.model_validate({**score.params, "features": {k: 1.0 for k in GRID}})
    variants = {}
    for max_seeds, decay in itertools.product(*NEIGHBOURHOOD.values()):
        knobs = NeighbourhoodParams.model_validate({**graph.params, "max_seeds": max_seeds, "rank_decay": decay})
        items = await NeighbourhoodOp().run(dataclasses.replace(ctx, node_id="graph"), knobs, inputs)
        raw = await compute_features(ctx, params, items, [], params.text)
        variants[(max_seeds, decay)] = {k: _normalise(k, v, params.normalize) for k, v in raw.items()}
    default_knobs = NeighbourhoodParams.model_validate(graph.params)
    return {
        "ids": [it.paper.id for it in inputs.papers],
        "variants": variants,
        "default": ((default_knobs.max_seeds, default_knobs.rank_decay), dict(score.params["features"])),
        "gold": case["golden_paper_ids"],
    }


def metrics_for(data: dict, knobs: tuple, weights: dict[str, float]) -> dict[str, float]:
    features = data["variants"][knobs]
    total = np.zeros(len(data["ids"]), dtype=np.float32)
    for name, w in weights.items():
        if name in features:
            total += w * features[name]
    order = sorted(range(len(total)), key=lambda i: -float(total[i]))[:50]
    return ranking_metrics([data["ids"][i] for i in order], data["gold"])


Key = Any  # a (neighbourhood knobs, score weights) setting, or "default"


def score_half(per_case: dict[str, dict[Key, dict[str, float]]], ids: list[str], key: Key) -> dict[str, float]:
    return {m: mean(per_case[c][key][m] for c in ids) for m in METRICS}


def _row(label: str, r: dict) -> str:
    test = [" / ".join(f"{r[side][m]:.3f}" for m in METRICS) for side in ("test_default", "test_tuned")]
    return (
        f"| {label} | {r['tune_default']['ndcg@10']:.3f} → {r['tune_tuned']['ndcg@10']:.3f} | {test[0]} | {test[1]} |"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=Path, required=True, help="runs.jsonl of a pilot eval run on the topic cases")
    ap.add_argument("--cases", type=Path, required=True)
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--random", type=int, default=20, help="random half splits besides the fixed one")
    args = ap.parse_args()

    cases = {c["case_id"]: c for c in load_cases(args.cases)}
    runs = [json.loads(line) for line in args.runs.read_text().splitlines() if line.strip()]
    config = EvalConfig(cases=args.cases, mode="single", out=args.out, corpus=args.corpus, progress=False)
    harness = Harness(config, make_runtime(config))

    async def collect() -> dict[str, dict]:
        out = {}
        for r in runs:
            wf = Workflow.model_validate(r["versions"][-1]["workflow"])
            if wf.has_node("score") and r["case_id"] in cases:
                out[r["case_id"]] = await case_features(harness, cases[r["case_id"]], wf)
        return out

    data = asyncio.run(collect())
    ids = sorted(data)
    combos = [dict(zip(GRID, values, strict=True)) for values in itertools.product(*GRID.values())]
    keys = [(knobs, tuple(sorted(c.items()))) for knobs in itertools.product(*NEIGHBOURHOOD.values()) for c in combos]
    per_case: dict[str, dict[Key, dict[str, float]]] = {
        cid: {k: metrics_for(data[cid], k[0], dict(k[1])) for k in keys} for cid in ids
    }
    for cid in ids:
        knobs, weights = data[cid]["default"]
        per_case[cid]["default"] = metrics_for(data[cid], knobs, weights)

    def best_on(half: list[str]) -> tuple:
        return max(keys, key=lambda k: (score_half(per_case, half, k)["ndcg@10"], k))

    splits = [(ids[0::2], ids[1::2])]
    rng = random.Random(0)
    for _ in range(args.random):
        shuffled = ids[:]
        rng.shuffle(shuffled)
        splits.append((shuffled[: len(ids) // 2], shuffled[len(ids) // 2 :]))
    rows: list[dict[str, Any]] = []
    for i, (a, b) in enumerate(splits):
        for tune, test in ((a, b), (b, a)):
            best = best_on(tune)
            rows.append(
                {
                    "split": "fixed" if i == 0 else f"random{i}",
                    "n_tune": len(tune),
                    "n_test": len(test),
                    "tuned": {"max_seeds": best[0][0], "rank_decay": best[0][1], "weights": dict(best[1])},
                    "tune_default": score_half(per_case, tune, "default"),
                    "tune_tuned": score_half(per_case, tune, best),
                    "test_default": score_half(per_case, test, "default"),
                    "test_tuned": score_half(per_case, test, best),
                }
            )
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "split_half.json").write_text(json.dumps(rows, indent=2))
    lines = [
        (
            "| split | tune half: default → tuned nDCG@10 | test half: default nDCG@10 / R@50 / Hit@10 | "
            "test half: tuned nDCG@10 / R@50 / Hit@10 |"
        ),
        "|---|---|---|---|",
    ]
    avg = {
        side: {m: mean(r[side][m] for r in rows) for m in METRICS}
        for side in ("tune_default", "tune_tuned", "test_default", "test_tuned")
    }
    for label, r in [(f"{r['split']} ({r['n_tune']}/{r['n_test']})", r) for r in rows[:2]] + [
        (f"mean of all {len(rows)} (tune, test) pairs", avg)
    ]:
        lines.append(_row(label, r))
    whole = {m: mean(per_case[c]["default"][m] for c in ids) for m in METRICS}
    lines.append(
        f"\nall {len(ids)} cases, default weights: "
        + ", ".join(f"{m} {whole[m]:.3f}" for m in METRICS)
        + f"; grid of {len(keys)} settings (neighbourhood seeds x rank decay x score weights)"
    )
    text = "\n".join(lines)
    (args.out / "split_half.md").write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
