"""CSFCube pool re-ranking: rank every judged candidate of a query, score MAP and NDCG%20.

Conventions follow CSFCube's official ``eval_scripts/ranking_eval.py`` (iesl/CSFCube, ``compute_metrics``
with ``threshold_grade=2``) and the ``rank_metrics`` module it imports (the widely copied bwhite gist):

- relevances are the judged grades in the system's order over the *whole* pool;
- ``ndcg%20`` = ``ndcg_at_k(grades, int(0.20 * len(pool)))``: the cut-off is floored, the gain is the
  grade itself (linear), the discount is rank_metrics' default ``method=0`` (weights 1, 1, 1/log2(3),
  1/log2(4), …: ranks 1 and 2 are both undiscounted), and the ideal DCG comes from the same grades
  sorted decreasingly; a cut-off of 0 or an all-zero pool scores 0;
- ``map`` = average precision over the binarised list (grade >= 2 is relevant): the mean of
  precision@i over the ranks i of the relevant candidates (0 when the pool has none);
- per facet and for ``all``, the mean over queries (the dev split is one fold, so no fold averaging).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from annotated_types import Le

from workflows.graph import ancestors
from workflows.model import Node, Workflow
from workflows.ops.features import support_node
from workflows.ops.scoring import EV_PREFIX
from workflows.registry import get_operator

RELEVANT_GRADE = 2
NDCG_FRACTION = 0.20
FACETS = ("background", "method", "result")
# The best published CSFCube results, all facets (test fold; Mysore et al., Aspire, NAACL 2022), and
# SPECTER: the lines the pool plot draws. Only the best of each metric is kept.
PUBLISHED: dict[str, dict[str, float]] = {
    "best published (tsAspire MAP, otAspire NDCG%20)": {"map": 0.4133, "ndcg%20": 0.6181},
    "SPECTER": {"map": 0.3423, "ndcg%20": 0.5328},
}


def pool_ranking(
    system_ranked: Iterable[str],
    pool: Sequence[str],
    fallback_scores: Mapping[str, float] | None = None,
) -> list[str]:
    """Every pool id exactly once: first in the system's order, then the ones it did not rank.

    Unranked ids follow by ``fallback_scores`` (higher first) when given, else in pool order; ties keep
    pool order so the result is deterministic.
    """
    in_pool = set(pool)
    seen: set[str] = set()
    head: list[str] = []
    for pid in system_ranked:
        if pid in in_pool and pid not in seen:
            seen.add(pid)
            head.append(pid)
    rest = [pid for pid in dict.fromkeys(pool) if pid not in seen]
    if fallback_scores:
        order = {pid: i for i, pid in enumerate(rest)}
        rest.sort(key=lambda pid: (-fallback_scores.get(pid, float("-inf")), order[pid]))
    return head + rest


def _dcg_method0(rels: Sequence[float]) -> float:
    if not rels:
        return 0.0
    return rels[0] + sum(r / math.log2(i) for i, r in enumerate(rels[1:], start=2))


def ndcg_at(rels: Sequence[float], k: int) -> float:
    """rank_metrics.ndcg_at_k(r, k) with method=0 (ideal = the same relevances sorted)."""
    best = _dcg_method0(sorted(rels, reverse=True)[:k])
    if not best:
        return 0.0
    return _dcg_method0(list(rels[:k])) / best


def average_precision(binary: Sequence[int]) -> float:
    """rank_metrics.average_precision: mean precision at each relevant rank, 0 without relevant items."""
    precisions = []
    found = 0
    for i, rel in enumerate(binary, start=1):
        if rel:
            found += 1
            precisions.append(found / i)
    return sum(precisions) / len(precisions) if precisions else 0.0


def pool_metrics(ranked_pool: Sequence[str], graded: Mapping[str, float]) -> dict[str, float]:
    """MAP and NDCG%20 of one query whose whole pool is ranked (unjudged ids get grade 0)."""
    grades = [float(graded.get(pid, 0)) for pid in ranked_pool]
    binary = [1 if g >= RELEVANT_GRADE else 0 for g in grades]
    return {
        "map": average_precision(binary),
        "ndcg%20": ndcg_at(grades, int(NDCG_FRACTION * len(grades))),
    }


def aggregate_pool(per_case: Iterable[tuple[str | None, dict[str, float]]]) -> dict[str, dict[str, float]]:
    """``{facet: {"map", "ndcg%20", "n"}, "all": {...}}`` from (facet, metrics) pairs."""
    groups: dict[str, list[dict[str, float]]] = {}
    for facet, metrics in per_case:
        groups.setdefault(facet or "unknown", []).append(metrics)
        groups.setdefault("all", []).append(metrics)
    out: dict[str, dict[str, float]] = {}
    for name in [*FACETS, "unknown", "all"]:
        rows = groups.get(name)
        if not rows:
            continue
        out[name] = {
            "map": sum(r["map"] for r in rows) / len(rows),
            "ndcg%20": sum(r["ndcg%20"] for r in rows) / len(rows),
            "n": len(rows),
        }
    return out


POOL_NODE = "judged_pool"


def _bound(op: str, param: str) -> float | None:
    """The largest value the operator's params model allows for ``param`` (None: not a param of it)."""
    field = get_operator(op).Params.model_fields.get(param)
    if field is None:
        return None
    return next((float(m.le) for m in field.metadata if isinstance(m, Le)), 10.0**6)  # type: ignore[arg-type]


# score features that read what the replaced union computed: its rank fusion of the searches (on the pool,
# with no fusion, ``rrf`` would fall back to the fetch order — sorted ids — and rank by id)
_UNION_FEATURES = {"rrf"}


def _reads_replaced(feature: str, kept: set[str]) -> bool:
    if feature in _UNION_FEATURES:
        return True
    node = support_node(feature[len(EV_PREFIX) :]) if feature.startswith(EV_PREFIX) else None
    return node is not None and node not in kept


def _forget_replaced(wf: Workflow) -> None:
    """Score steps no longer weigh what the pool replaced: the evidence of expansions that are gone and the
    union's fusion. Those are the same for every pool paper (0), so the ranking keeps its meaning and the
    workflow stays valid (a score step left with no feature keeps its own)."""
    kept = {n.id for n in wf.nodes}
    for node in wf.nodes:
        features = node.params.get("features")
        if node.op != "score" or not isinstance(features, dict):
            continue
        if not any(not _reads_replaced(f, kept) for f in features):
            continue
        for key in ("features", "caps", "floors"):
            table = node.params.get(key) or {}
            node.params[key] = {name: v for name, v in table.items() if not _reads_replaced(name, kept)}


def pool_workflow(wf: Workflow, pool: Sequence[str]) -> Workflow | None:
    """The session's workflow re-pointed at a judged pool, so the system itself ranks every candidate.

    The last ``union`` on the way to the output — where searches and expansions meet — is replaced by a
    ``fetch`` of the pool (ids sorted, so the pool's own order says nothing); everything downstream of it
    (filters, the score formula, re-rankers) ranks the pool, and no cut-off (``top_k``'s k, a re-ranker's
    ``top_n``) is smaller than the pool. Nodes that fed only the replaced union are dropped. ``None`` when
    the workflow has no single such union (a hand-built shape): then the session's own list is used."""
    wf = wf.model_copy(deep=True)
    unions = [n.id for n in wf.nodes if n.op == "union"]
    above = {u: ancestors(wf, u) for u in unions}
    last = [u for u in unions if not any(u in above[v] for v in unions if v != u)]
    if len(last) != 1 or wf.output is None:
        return None
    wf.nodes.append(Node(id=POOL_NODE, op="fetch", params={"ids": sorted(set(pool))}, label="the judged pool"))
    for e in wf.edges:
        if e.source == last[0]:
            e.source = POOL_NODE
    keep = ancestors(wf, wf.output) | {wf.output}
    wf.nodes = [n for n in wf.nodes if n.id in keep]
    wf.edges = [e for e in wf.edges if e.source in keep and e.target in keep]
    _forget_replaced(wf)
    for node in wf.nodes:
        # top_k's k is a cut-off; other ops' k (keywords_from's) is not
        param = "k" if node.op == "top_k" else "top_n"
        bound = _bound(node.op, param)
        if bound is not None:
            node.params[param] = int(min(bound, max(int(node.params.get(param, 0)), len(pool))))
        # every pool paper is read sentence by sentence, not just the first ones
        bound = _bound(node.op, "max_sentences")
        if bound is not None:
            node.params["max_sentences"] = int(bound)
    return wf
