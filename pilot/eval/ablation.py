"""``pilot eval ablate``: what each signal adds — the final workflows of an earlier run, re-run without it.

A signal is a score feature (``ev:author_refs.support``, ``paper_type``, ``dense``…), dropped from every score
node that weighs it, or a node (``facet``, ``author_refs``…), removed with its inputs bridged to its
consumers, or one param set (``facet.facet_weight=0``); ``a+b`` drops several together. Every case's last
workflow version (from ``runs.jsonl``) is re-executed as it was and once per signal without it, against the
same per-case source (hidden edges honoured), and scored like ``pilot eval``; CSFCube pools are ranked by the
ablated workflow too. Nothing is asked again: the dialogue is fixed, so a difference is the signal's alone.

    pilot eval ablate out/multi --cases ../shared/bench/dev/cases.jsonl --corpus … \\
        --drop ev:author_refs.support --drop facet --drop paper_type --out out/ablation
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pilot.eval.harness import (
    CaseOutcome,
    EvalConfig,
    EvalError,
    Harness,
    facet_of,
    load_cases,
    make_runtime,
    score_case,
)
from pilot.eval.metrics import clean_ranking, mean
from pilot.eval.pool import aggregate_pool, pool_metrics, pool_ranking
from pilot.eval.report import SIBLING_SPLITS, _table
from workflows.edit import apply_edit
from workflows.executor import execute
from workflows.model import ModifyNode, RemoveNode, Workflow
from workflows.ops.features import support_node
from workflows.ops.scoring import EV_PREFIX

NONE = "(none)"
# the metrics the ablation table shows per direction
SHOWN = ("ndcg@10", "recall@50")


def without(wf: Workflow, signal: str) -> Workflow:
    """``wf`` without the signal(s) named in ``signal`` (``+``-joined); unknown names change nothing.
    ``node.param=value`` sets one param instead (``facet.facet_weight=0``: sentence matching that ignores
    the facet answer); the value is read as JSON when it parses, else as a string."""
    for name in filter(None, (s.strip() for s in signal.split("+"))):
        target, _, value = name.partition("=")
        node_id, _, param = target.partition(".")
        if value and param and wf.has_node(node_id):
            try:
                parsed = json.loads(value)
            except json.JSONDecodeError:
                parsed = value
            wf = apply_edit(wf, ModifyNode(node_id=node_id, params={param: parsed}))
            continue
        if wf.has_node(name):
            for feature in _features_reading(wf, name):  # its evidence goes with it
                wf = _without_feature(wf, feature)
            wf = apply_edit(wf, RemoveNode(node_id=name, bridge=True))
            continue
        wf = _without_feature(wf, name)
    return wf


def _features_reading(wf: Workflow, node_id: str) -> list[str]:
    """The ``ev:`` score features that read ``node_id``'s evidence."""
    names = {f for n in wf.nodes if n.op == "score" for f in n.params.get("features") or {}}
    return sorted(f for f in names if f.startswith(EV_PREFIX) and support_node(f[len(EV_PREFIX) :]) == node_id)


def _without_feature(wf: Workflow, name: str) -> Workflow:
    for node in wf.nodes:
        features = dict(node.params.get("features") or {})
        if node.op == "score" and name in features:
            del features[name]
            if features:  # a score node needs one feature; with none left the signal was the whole formula
                scale = {
                    k: {f: v for f, v in (node.params.get(k) or {}).items() if f != name} for k in ("caps", "floors")
                }
                wf = apply_edit(wf, ModifyNode(node_id=node.id, params={"features": features, **scale}))
    return wf


async def _one(harness: Harness, case: dict, wf: Workflow) -> dict[str, Any]:
    """Metrics of ``wf`` run on one case (and its pool, for CSFCube cases)."""
    rt = await harness._case_runtime(case)
    failed = False
    try:
        result = await execute(wf, rt.context(), cache=rt.node_cache)
        ranked = clean_ranking([it.paper.id for it in result.output or []], case["anchor_paper_id"])
    except Exception:  # an ablation that breaks the workflow scores like a failed case
        failed, ranked = True, []
    out: dict[str, Any] = {"metrics": score_case(case, CaseOutcome(ranked_ids=ranked), failed)}
    if case.get("pool"):
        outcome = CaseOutcome(versions=[{"workflow": wf.model_dump(mode="json")}])
        order = [] if failed else await harness._pool_order(case, outcome, ranked)
        fallback = await harness._pool_fallback(case)
        out["pool"] = pool_metrics(pool_ranking(order, case["pool"], fallback), case.get("graded") or {})
    return out


def _summary(cases: Sequence[dict], rows: Sequence[dict]) -> dict[str, Any]:
    """Per direction (and CSFCube / AAN sibling split) the shown metrics, plus the pool per facet."""
    groups: dict[str, list[dict]] = {}
    for case, row in zip(cases, rows, strict=True):
        groups.setdefault(case["direction"], []).append(row)
        for key, source in SIBLING_SPLITS.items():
            if case["direction"] == "sibling" and case.get("source") == source:
                groups.setdefault(key, []).append(row)
        groups.setdefault("overall", []).append(row)
    out: dict[str, Any] = {
        g: {m: mean(r["metrics"].get(m, 0.0) for r in rs) for m in SHOWN} for g, rs in groups.items()
    }
    pooled = [(facet_of(c), r["pool"]) for c, r in zip(cases, rows, strict=True) if "pool" in r]
    if pooled:
        out["csfcube_pool"] = aggregate_pool(pooled)
    return out


async def _ablate(harness: Harness, cases: list[dict], flows: dict[str, Workflow], signals: list[str]):
    sem = asyncio.Semaphore(max(1, harness.config.workers))

    async def run(case: dict, wf: Workflow) -> dict:
        async with sem:
            return await _one(harness, case, wf)

    results: dict[str, dict] = {}
    for signal in [NONE, *signals]:
        # only the chosen cases' workflows: a param edit may not fit the others' shapes
        flows_now = {c["case_id"]: flows[c["case_id"]] for c in cases}
        if signal != NONE:
            flows_now = {cid: without(wf, signal) for cid, wf in flows_now.items()}
        rows = await asyncio.gather(*(run(c, flows_now[c["case_id"]]) for c in cases))
        results[signal] = _summary(cases, rows)
    return results


def ablation_table(results: dict[str, dict]) -> str:
    """A row per (group, metric), a column per ablation: the full workflow's value, then each drop's delta."""
    signals = list(results)
    base = results[NONE]
    rows = []
    for group, vals in base.items():
        if group == "csfcube_pool":
            continue
        for m in SHOWN:
            rows.append([group, m, vals[m], *(results[s][group][m] - vals[m] for s in signals[1:])])
    for facet, vals in base.get("csfcube_pool", {}).items():
        for m in ("map", "ndcg%20"):
            rows.append(
                [
                    f"csfcube pool {facet}",
                    m,
                    vals[m],
                    *(results[s]["csfcube_pool"][facet][m] - vals[m] for s in signals[1:]),
                ]
            )
    return _table(["group", "metric", "full", *(f"− {s}" for s in signals[1:])], rows)


def run_ablation(run_dir: Path, config: EvalConfig, signals: list[str]) -> str:
    """Re-run ``run_dir``'s final workflows with and without each signal; write and return the table."""
    runs_file = Path(run_dir) / "runs.jsonl"
    if not runs_file.is_file():
        raise EvalError(f"no runs.jsonl in {run_dir} (run `pilot eval --out {run_dir}` first)")
    flows: dict[str, Workflow] = {}
    for line in runs_file.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line) if line.strip() else None
        if rec and rec.get("versions"):
            flows[rec["case_id"]] = Workflow.model_validate(rec["versions"][-1]["workflow"])
    cases = [c for c in load_cases(config.cases, config.limit, config.case_ids) if c["case_id"] in flows]
    if not cases:
        raise EvalError(f"none of the cases has a workflow in {runs_file}")
    harness = Harness(config, make_runtime(config))
    results = asyncio.run(_ablate(harness, cases, flows, signals))
    table = ablation_table(results)
    config.out.mkdir(parents=True, exist_ok=True)
    (config.out / "ablation.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
    (config.out / "ablation.md").write_text(
        f"# ablation of {run_dir} ({len(cases)} cases)\n\n{table}\n", encoding="utf-8"
    )
    return table
