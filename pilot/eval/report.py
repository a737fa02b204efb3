"""From per-case results to ``metrics.json``, ``report.md`` and ``report.png``, and side-by-side comparisons.

A per-case result is the dict the harness writes to ``runs.jsonl``; only these keys are read here:
``direction``, ``source``, ``facet``, ``metrics`` (the ranking metrics), ``failed``, ``turns``,
``latency_s`` and, for CSFCube cases, ``pool_metrics`` / ``pool_metrics_dense``; ``workflow_metrics`` when a
reference workflow was given.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from pilot.eval.metrics import CASE_DIRECTIONS, GRADED_KEY, RANK_KEYS, mean
from pilot.eval.pool import PUBLISHED, aggregate_pool

RUN_KEYS = ("workflow_error_rate", "mean_turns", "mean_questions_before_results", "mean_latency_s")
BLOCK_KEYS: tuple[str, ...] = (*RANK_KEYS, *RUN_KEYS)
# The sibling direction mixes two kinds of gold (human CSFCube judgements, AAN co-citation); report both.
SIBLING_SPLITS = {"sibling_csfcube": "csfcube", "sibling_aan": "aan"}
PLOT_METRICS = ("hit@10", "mrr", "ndcg@10", "recall@50")


def block(cases: Sequence[dict]) -> dict[str, float]:
    """Mean of every metric over ``cases`` (failed cases carry zeros, so they pull the means down)."""
    out = {key: mean(c["metrics"].get(key, 0.0) for c in cases) for key in RANK_KEYS}
    graded = [c["metrics"][GRADED_KEY] for c in cases if GRADED_KEY in c["metrics"]]
    if graded:
        out[GRADED_KEY] = mean(graded)
    out["workflow_error_rate"] = mean(1.0 if c["failed"] else 0.0 for c in cases)
    out["node_failure_rate"] = mean(1.0 if c.get("node_failures") else 0.0 for c in cases)
    out["mean_turns"] = mean(float(c["turns"]) for c in cases)
    # runs from before this field existed showed results only after every question
    out["mean_questions_before_results"] = mean(float(c.get("questions_before_results", c["turns"])) for c in cases)
    out["mean_latency_s"] = mean(float(c["latency_s"]) for c in cases)
    out["n"] = len(cases)
    return out


def _spread(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)

    def q(p: float) -> float:  # nearest-rank percentile
        return float(ordered[min(len(ordered) - 1, max(0, int(round(p * len(ordered) + 0.5)) - 1))])

    return {"median": q(0.5), "p95": q(0.95), "mean": round(sum(values) / len(values), 3), "max": ordered[-1]}


def _search_turn(case: dict) -> dict | None:
    """The turn in which the user waited for the search: the first one that came back with results."""
    return next((t for t in case.get("source_usage") or [] if t.get("results")), None)


def _gave_up_on_rate(case: dict) -> bool:
    """The case lost something to a rate limit it could not wait out (a step failed or work was skipped)."""
    texts = [n.get("error") or "" for n in (case.get("trace") or {}).get("nodes", [])] + list(case.get("notes") or [])
    return any("rate-limiting" in t or "rate limit" in t for t in texts)


def _usage_block(rows: Sequence[dict]) -> dict[str, Any]:
    per_search = [float(sum(t.get("requests", 0) for t in c["source_usage"])) for c in rows]
    searched = [t for t in (_search_turn(c) for c in rows) if t is not None]
    seen = int(sum(t.get("rate_limited", 0) for c in rows for t in c["source_usage"]))
    return {
        "searches": len(rows),
        "requests_per_search": _spread(per_search),
        "first_results_s": _spread([t["first_results_s"] for t in searched if t.get("first_results_s") is not None]),
        "search_turn_s": _spread([float(t.get("seconds", 0.0)) for t in searched]),
        # every turn that answered with results (follow-up answers re-run the workflow, mostly from the cache)
        "turn_with_results_s": _spread(
            [float(t.get("seconds", 0.0)) for c in rows for t in c["source_usage"] if t.get("results")]
        ),
        "rate_limited_429": seen,
        "searches_losing_work_to_429": sum(1 for c in rows if _gave_up_on_rate(c)),
        "retries": int(sum(t.get("retries", 0) for c in rows for t in c["source_usage"])),
        "rate_wait_s": round(sum(t.get("rate_wait_s", 0.0) for c in rows for t in c["source_usage"]), 1),
        "searches_with_skipped_work": sum(1 for c in rows if any(t.get("skipped") for t in c["source_usage"])),
        "harness_requests": int(sum((c.get("harness_usage") or {}).get("requests", 0) for c in rows)),
    }


def source_summary(cases: Sequence[dict]) -> dict[str, Any]:
    """What the runs spent at remote sources, per search (one case = one search, all its turns): requests,
    seconds to the first previewed results and to the end of the turn that searched (the first turn with
    results), 429s and retries, skipped work; overall and per direction.
    Empty when no case recorded usage (offline runs send no request)."""
    rows = [c for c in cases if c.get("source_usage")]
    if not rows or not any(t.get("requests") or t.get("cache_hits") for c in rows for t in c["source_usage"]):
        return {}
    out = _usage_block(rows)
    directions = dict.fromkeys(c["direction"] for c in rows)
    out["by_direction"] = {d: _usage_block([c for c in rows if c["direction"] == d]) for d in directions}
    return out


def aggregate(mode: str, cases: Sequence[dict], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``metrics.json`` object for one mode."""
    by_direction: dict[str, dict[str, float]] = {}
    for direction in CASE_DIRECTIONS:
        rows = [c for c in cases if c["direction"] == direction]
        if rows:
            by_direction[direction] = block(rows)
    for key, source in SIBLING_SPLITS.items():
        rows = [c for c in cases if c["direction"] == "sibling" and c.get("source") == source]
        if rows:
            by_direction[key] = block(rows)
    out: dict[str, Any] = {"mode": mode, "n_cases": len(cases), "overall": block(cases) if cases else {}}
    out["by_direction"] = by_direction
    compared = [c["workflow_metrics"] for c in cases if c.get("workflow_metrics")]
    if compared:
        out["workflow_similarity"] = {k: mean(m[k] for m in compared) for k in compared[0]} | {"n": len(compared)}
    for key, field in (
        ("csfcube_pool", "pool_metrics"),
        ("csfcube_pool_list", "pool_metrics_list"),
        ("csfcube_pool_dense_only", "pool_metrics_dense"),
    ):
        pooled = [(c.get("facet"), c[field]) for c in cases if c.get(field)]
        if pooled:
            out[key] = aggregate_pool(pooled)
    usage = source_summary(cases)
    if usage:
        out["source_usage"] = usage
    if extra:
        out.update(extra)
    return out


# --- text tables ---------------------------------------------------------------------------------


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.3f}"
    return "" if v is None else str(v)


def _table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _groups(m: dict) -> list[tuple[str, dict]]:
    return [*m.get("by_direction", {}).items(), ("overall", m.get("overall", {}))]


def mode_table(m: dict) -> str:
    """One mode: a row per direction (and overall), a column per metric."""
    keys = [*BLOCK_KEYS, "n"]
    rows = [[name, *(blk.get(k) for k in keys)] for name, blk in _groups(m)]
    return _table(["direction", *keys], rows)


def pool_table(runs: Sequence[dict]) -> str:
    """MAP / NDCG%20 per facet; the dense-only row is the pool ordered by anchor cosine alone."""
    rows = []
    for m in runs:
        dense = m.get("csfcube_pool_dense_only", {})
        listed = m.get("csfcube_pool_list", {})
        for facet, vals in m.get("csfcube_pool", {}).items():
            floor, lst = dense.get(facet, {}), listed.get(facet, {})
            rows.append(
                [run_name(m), facet, vals["map"], vals["ndcg%20"], lst.get("map"), lst.get("ndcg%20"),
                 floor.get("map"), floor.get("ndcg%20"), vals["n"]]
            )  # fmt: skip
    header = [
        "mode", "facet", "MAP", "NDCG%20", "MAP list", "NDCG%20 list", "MAP dense-only", "NDCG%20 dense-only", "n",
    ]  # fmt: skip
    return _table(header, rows) if rows else ""


def run_name(metrics: dict) -> str:
    """What a run is called in tables and legends: its label (``pilot eval compare`` names runs of one mode by
    their folders), else its mode."""
    return str(metrics.get("label") or metrics["mode"])


def compare_table(runs: Sequence[dict], keys: Sequence[str] = BLOCK_KEYS) -> str:
    """Several modes side by side: a row per (direction, metric), a column per run."""
    names = [run_name(m) for m in runs]
    directions: list[str] = []
    for m in runs:
        for name, _ in _groups(m):
            if name not in directions:
                directions.append(name)
    rows = []
    for d in directions:
        for k in keys:
            vals = [dict(_groups(m)).get(d, {}).get(k) for m in runs]
            if any(v is not None for v in vals):
                rows.append([d, k, *vals])
    return _table(["direction", "metric", *names], rows)


CONVENTIONS = (
    "Metrics as in `shared/bench/README.md`: the anchor and repeated ids are removed before scoring; a failed "
    "case (exception, timeout or session error) scores 0 and counts in `workflow_error_rate`; "
    "`node_failure_rate` = cases with a failed node that still returned results (scored as returned). "
    "`graded_ndcg@15` is the mean over CSFCube cases only. `sibling_csfcube` / `sibling_aan` split the sibling "
    "direction by where its gold comes from. CSFCube pool: the session's final workflow ranks the whole pool "
    "(its candidate gathering replaced by the pool), papers it filters out follow by MiniLM cosine to the anchor; "
    "`list` = the session's own top list first, then the rest by that cosine (the protocol before); MAP "
    "(grade >= 2) and NDCG%20 as CSFCube's `ranking_eval.py`; `dense-only` = the pool ordered by that cosine alone."
)


USAGE_HEADER = [
    "run", "direction", "searches", "requests median", "p95", "max", "first results s median", "p95",
    "search turn s median", "p95", "429s", "lost to 429", "rate wait s", "skipped work",
]  # fmt: skip


def usage_table(usage: Sequence[tuple[str, dict]]) -> str:
    """Requests, seconds and 429s per search, overall and per direction (one case = one search)."""

    def row(name: str, direction: str, u: dict) -> list[Any]:
        req, first, turn = u["requests_per_search"], u.get("first_results_s") or {}, u.get("search_turn_s") or {}
        return [
            name, direction, u["searches"], req.get("median"), req.get("p95"), req.get("max"), first.get("median"),
            first.get("p95"), turn.get("median"), turn.get("p95"), u["rate_limited_429"],
            u.get("searches_losing_work_to_429", 0), u["rate_wait_s"], u["searches_with_skipped_work"],
        ]  # fmt: skip

    rows = []
    for name, u in usage:
        rows.append(row(name, "overall", u))
        rows += [row(name, d, b) for d, b in (u.get("by_direction") or {}).items()]
    return _table(USAGE_HEADER, rows)


def markdown_report(runs: Sequence[dict]) -> str:
    parts = ["# pilot evaluation", "", CONVENTIONS, ""]
    for m in runs:
        parts += [f"## mode `{m['mode']}` ({m['n_cases']} cases)", ""]
        if "wall_s" in m:
            parts += [
                f"wall time {m['wall_s']:.1f} s with {m.get('workers', 1)} worker(s); LLM: {m.get('llm') or 'none'}",
                "",
            ]
        parts += [mode_table(m), ""]
    if len(runs) > 1:
        parts += ["## modes side by side", "", compare_table(runs), ""]
    pool = pool_table(runs)
    if pool:
        parts += ["## CSFCube pool re-ranking (fold1_dev protocol)", "", pool, ""]
    usage = [(run_name(m), m["source_usage"]) for m in runs if m.get("source_usage")]
    if usage:
        parts += ["## source usage per search (remote sources)", "", usage_table(usage), ""]
    sims = [(run_name(m), m["workflow_similarity"]) for m in runs if m.get("workflow_similarity")]
    if sims:
        keys = list(sims[0][1])
        parts += [
            "## final workflow vs the reference workflow (means over cases)",
            "",
            _table(["mode", *keys], [[mode, *(s.get(k) for k in keys)] for mode, s in sims]),
            "",
        ]
    return "\n".join(parts)


# --- plot ----------------------------------------------------------------------------------------


def plot(runs: Sequence[dict], path: Path, metrics: Sequence[str] = PLOT_METRICS) -> Path:
    """Grouped bars: one panel per metric, directions on the x axis, one bar per mode."""
    import matplotlib  # heavy (about a second): only a run that writes its report needs it

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = [name for name, _ in _groups(runs[0])] if runs else []
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 4.0), squeeze=False)
    width = 0.8 / max(1, len(runs))
    for ax, metric in zip(axes[0], metrics, strict=True):
        for i, m in enumerate(runs):
            blocks = dict(_groups(m))
            vals = [blocks.get(g, {}).get(metric, 0.0) for g in groups]
            ax.bar([x + i * width for x in range(len(groups))], vals, width, label=run_name(m))
        ax.set_title(metric)
        ax.set_ylim(0, 1)
        ax.set_xticks([x + width * (len(runs) - 1) / 2 for x in range(len(groups))])
        ax.set_xticklabels(groups, rotation=40, ha="right", fontsize=8)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=max(1, len(runs)), fontsize=9, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 0.92))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def pool_plot(runs: Sequence[dict], path: Path) -> Path | None:
    """CSFCube pool MAP and NDCG%20 per facet, one bar per mode (and the dense-only floor of the first run),
    with the published results as dashed lines on the "all" group. None when no run has pool metrics."""
    runs = [m for m in runs if m.get("csfcube_pool")]
    if not runs:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bars = [(run_name(m), m["csfcube_pool"]) for m in runs]
    bars.append(("dense only", runs[0].get("csfcube_pool_dense_only", {})))
    groups = [g for g in ("background", "method", "result", "all") if any(g in vals for _, vals in bars)]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.0), squeeze=False)
    width = 0.8 / len(bars)
    for ax, metric, title in zip(axes[0], ("map", "ndcg%20"), ("MAP", "NDCG%20"), strict=True):
        for i, (name, vals) in enumerate(bars):
            ys = [vals.get(g, {}).get(metric, 0.0) for g in groups]
            ax.bar([x + i * width for x in range(len(groups))], ys, width, label=name)
        if "all" in groups:
            x0 = groups.index("all") - 0.1
            for (label, ref), style in zip(PUBLISHED.items(), ("--", ":"), strict=False):
                ax.hlines(ref[metric], x0, x0 + 1.0, colors="black", linestyles=style, label=label)
        ax.set_title(f"CSFCube pool {title}")
        ax.set_ylim(0, 1)
        ax.set_xticks([x + width * (len(bars) - 1) / 2 for x in range(len(groups))])
        ax.set_xticklabels(groups, fontsize=9)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=min(6, len(labels)), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 0.88))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def rate_bars(
    groups: dict[str, dict[str, Any]], keys: Sequence[str], path: Path, title: str, label: Callable[[str], str]
) -> Path:
    """One panel of rates in [0, 1]: ``keys`` on the x axis, one bar per group (``label(name)`` in the legend)."""
    import matplotlib  # heavy (about a second): only a run that writes its report needs it

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(groups)
    fig, ax = plt.subplots(figsize=(1.5 + 0.75 * len(keys), 3.8))
    width = 0.8 / max(1, len(names))
    for i, name in enumerate(names):
        vals = [groups[name].get(k, 0.0) for k in keys]
        ax.bar([x + i * width for x in range(len(keys))], vals, width, label=label(name))
    ax.set_xticks([x + width * (len(names) - 1) / 2 for x in range(len(keys))])
    ax.set_xticklabels([k.replace("check_", "") for k in keys], rotation=35, ha="right", fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_title(title)
    ax.legend(fontsize=8, frameon=False, loc="lower left")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def load_metrics(directory: Path) -> dict:
    f = Path(directory) / "metrics.json"
    if not f.is_file():
        raise FileNotFoundError(f"{f} does not exist: is {directory} the --out folder of a `pilot eval` run?")
    return json.loads(f.read_text(encoding="utf-8"))


def load_runs(directory: Path) -> list[dict]:
    """The per-case records of a run (empty when ``runs.jsonl`` is missing)."""
    f = Path(directory) / "runs.jsonl"
    if not f.is_file():
        return []
    return [json.loads(line) for line in f.read_text(encoding="utf-8").splitlines() if line.strip()]


def paired_table(names: Sequence[str], runs: Sequence[Sequence[dict]], metric: str = "mrr") -> str:
    """Per direction, how many cases each run wins / ties / loses on ``metric`` against the run before it
    (cases matched by id): where a change helps, and where it hurts, rather than only the means."""
    rows = []
    for i in range(1, len(runs)):
        before = {r["case_id"]: r for r in runs[i - 1]}
        pairs = [(before[r["case_id"]], r) for r in runs[i] if r["case_id"] in before]
        groups: dict[str, list[tuple[dict, dict]]] = {}
        for a, b in pairs:
            groups.setdefault(a["direction"], []).append((a, b))
            if a["direction"] == "sibling" and a.get("source") in SIBLING_SPLITS.values():
                groups.setdefault(f"sibling_{a['source']}", []).append((a, b))
            groups.setdefault("overall", []).append((a, b))
        order = [*CASE_DIRECTIONS, *SIBLING_SPLITS, "overall"]
        for d, ps in sorted(groups.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)):
            delta = [b["metrics"].get(metric, 0.0) - a["metrics"].get(metric, 0.0) for a, b in ps]
            wins = sum(1 for x in delta if x > 1e-9)
            losses = sum(1 for x in delta if x < -1e-9)
            rows.append([f"{names[i]} vs {names[i - 1]}", d, wins, len(ps) - wins - losses, losses, mean(delta)])
    return _table(["pair", "direction", "wins", "ties", "losses", f"mean Δ{metric}"], rows) if rows else ""


def write_outputs(directory: Path, metrics: dict) -> None:
    """``metrics.json``, ``report.md`` and ``report.png`` of one run (the harness writes ``runs.jsonl``)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "metrics.json").write_text(json.dumps(metrics, indent=2), encoding="utf-8")
    (directory / "report.md").write_text(markdown_report([metrics]), encoding="utf-8")
    plot([metrics], directory / "report.png")
    runs_file = directory / "runs.jsonl"
    if metrics.get("source_usage") and runs_file.is_file():
        timing_plot(load_runs(directory), directory / "report-sources.png")


def timing_plot(cases: Sequence[dict], path: Path) -> Path | None:
    """Per search, sorted: seconds to the first results and to the end of the search turn, with the requests
    it sent (right axis), against the goal lines of 3 s and 20 s."""
    turns = sorted(
        ((c, t) for c in cases if (t := _search_turn(c)) is not None), key=lambda ct: float(ct[1].get("seconds", 0))
    )
    if not turns:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = range(len(turns))
    fig, ax = plt.subplots(figsize=(max(6.0, 0.28 * len(turns)), 4.0))
    ax.bar(xs, [float(t.get("seconds", 0)) for _, t in turns], color="#9ecae1", label="search turn (s)")
    ax.bar(xs, [float(t.get("first_results_s") or 0) for _, t in turns], width=0.4, color="#08519c",
           label="first results (s)")  # fmt: skip
    for y, style in ((3, ":"), (20, "--")):
        ax.axhline(y, color="grey", linestyle=style, linewidth=1)
    ax.set_ylabel("seconds")
    ax.set_xticks(list(xs))
    ax.set_xticklabels([c["direction"][:4] for c, _ in turns], rotation=90, fontsize=7)
    right = ax.twinx()
    right.plot(list(xs), [sum(t.get("requests", 0) for t in c["source_usage"]) for c, _ in turns], "o", color="#d94801",
               markersize=3, label="requests per search")  # fmt: skip
    right.set_ylabel("requests")
    (h1, l1), (h2, l2) = ax.get_legend_handles_labels(), right.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, loc="upper left", fontsize=8, frameon=False)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
