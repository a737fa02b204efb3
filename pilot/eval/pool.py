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

RELEVANT_GRADE = 2
NDCG_FRACTION = 0.20
FACETS = ("background", "method", "result")


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
