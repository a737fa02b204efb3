"""Per-case ranking metrics, exactly as ``shared/bench/README.md`` defines them.

A system returns a ranked list of corpus ids; before scoring, the list is cleaned the way the benchmark
rules require: the anchor never counts (it is removed, so the papers below it move up) and repeated ids
count once, at their first rank. Gold sets are sets of ids.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from pilot.vocab import DIRECTIONS

TOP_N = 50  # the benchmark scores a ranked list of up to 50 ids
# The benchmark's case directions: the search directions around an anchor, and anchor-less topic cases.
TOPIC = "topic"
CASE_DIRECTIONS: tuple[str, ...] = (*DIRECTIONS, TOPIC)
HIT_KS = (5, 10, 15)
NDCG_KS = (10, 15)
RANK_KEYS: tuple[str, ...] = (
    *(f"hit@{k}" for k in HIT_KS),
    "recall@50",
    "mrr",
    *(f"ndcg@{k}" for k in NDCG_KS),
)
GRADED_KEY = "graded_ndcg@15"


def clean_ranking(ranked: Iterable[str], anchor_id: str | None = None, limit: int = TOP_N) -> list[str]:
    """The ranking as the benchmark scores it: no anchor, no repeats, no empty ids, at most ``limit`` long."""
    seen: set[str] = set()
    out: list[str] = []
    for pid in ranked:
        if not pid or pid == anchor_id or pid in seen:
            continue
        seen.add(pid)
        out.append(pid)
        if len(out) >= limit:
            break
    return out


def hit_at(ranked: Sequence[str], gold: set[str], k: int) -> float:
    return 1.0 if any(pid in gold for pid in ranked[:k]) else 0.0


def recall_at(ranked: Sequence[str], gold: set[str], k: int = TOP_N) -> float:
    if not gold:
        return 0.0
    found = sum(1 for pid in ranked[:k] if pid in gold)
    return found / min(k, len(gold))


def reciprocal_rank(ranked: Sequence[str], gold: set[str], k: int = TOP_N) -> float:
    for i, pid in enumerate(ranked[:k], start=1):
        if pid in gold:
            return 1.0 / i
    return 0.0


def dcg(gains: Sequence[float]) -> float:
    """Σ gain_i / log2(i + 1) over ranks i = 1..len(gains) (the benchmark's discount, not CSFCube's)."""
    return sum(g / math.log2(i + 1) for i, g in enumerate(gains, start=1))


def ndcg_binary(ranked: Sequence[str], gold: set[str], k: int) -> float:
    """Binary nDCG@k; the ideal ranking has min(k, |gold|) relevant papers at the top."""
    ideal = dcg([1.0] * min(k, len(gold)))
    if ideal == 0:
        return 0.0
    return dcg([1.0 if pid in gold else 0.0 for pid in ranked[:k]]) / ideal


def ndcg_graded(ranked: Sequence[str], graded: Mapping[str, float], k: int) -> float:
    """Graded nDCG@k: gain = the judged grade (0 when not judged); ideal from the grades sorted decreasingly."""
    ideal = dcg(sorted((float(g) for g in graded.values() if g > 0), reverse=True)[:k])
    if ideal == 0:
        return 0.0
    return dcg([float(graded.get(pid, 0)) for pid in ranked[:k]]) / ideal


def ranking_metrics(
    ranked: Iterable[str],
    gold: Iterable[str],
    anchor_id: str | None = None,
    graded: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """Every per-case metric of the benchmark for one ranked list (``graded_ndcg@15`` only when graded)."""
    gold_set = {g for g in gold if g and g != anchor_id}
    ranking = clean_ranking(ranked, anchor_id)
    out = {f"hit@{k}": hit_at(ranking, gold_set, k) for k in HIT_KS}
    out["recall@50"] = recall_at(ranking, gold_set, TOP_N)
    out["mrr"] = reciprocal_rank(ranking, gold_set, TOP_N)
    for k in NDCG_KS:
        out[f"ndcg@{k}"] = ndcg_binary(ranking, gold_set, k)
    if graded is not None:
        out[GRADED_KEY] = ndcg_graded(ranking, {p: g for p, g in graded.items() if p != anchor_id}, 15)
    return out


def zero_metrics(graded: bool = False) -> dict[str, float]:
    """What a failed case scores: zero everywhere (failed cases are never skipped)."""
    out = {key: 0.0 for key in RANK_KEYS}
    if graded:
        out[GRADED_KEY] = 0.0
    return out


def mean(values: Iterable[float]) -> float:
    vals = list(values)
    return sum(vals) / len(vals) if vals else 0.0
