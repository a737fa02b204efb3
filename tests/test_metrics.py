"""Ranking metrics and the CSFCube pool protocol on hand-made rankings with values worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pilot.eval.metrics import (
    GRADED_KEY,
    RANK_KEYS,
    clean_ranking,
    ndcg_binary,
    ndcg_graded,
    ranking_metrics,
    zero_metrics,
)
from pilot.eval.pool import aggregate_pool, average_precision, ndcg_at, pool_metrics, pool_ranking

L3, L4 = math.log2(3), math.log2(4)


def test_anchor_is_removed_and_everything_below_moves_up():
    ranked = ["anchor", "x1", "x2", "x3", "x4", "g1"]
    m = ranking_metrics(ranked, gold=["g1"], anchor_id="anchor")
    assert m["hit@5"] == 1.0  # g1 is 5th once the anchor is gone
    assert m["mrr"] == pytest.approx(1 / 5)
    without_removal = ranking_metrics(ranked, gold=["g1"])
    assert without_removal["hit@5"] == 0.0


def test_anchor_in_gold_never_counts():
    m = ranking_metrics(["anchor", "x"], gold=["anchor"], anchor_id="anchor")
    assert m == zero_metrics()


def test_duplicates_count_once_at_their_first_rank():
    assert clean_ranking(["a", "b", "a", "", "c", "b"]) == ["a", "b", "c"]
    m = ranking_metrics(["g1", "g1", "g1", "x"], gold=["g1", "g2"])
    assert m["recall@50"] == pytest.approx(0.5)
    # ideal for 2 gold papers = 1 + 1/log2(3); the repeats must not add gain
    assert m["ndcg@10"] == pytest.approx(1 / (1 + 1 / L3))


def test_hit_at_k_boundaries():
    ranked = [f"x{i}" for i in range(9)] + ["g"]  # g at rank 10
    m = ranking_metrics(ranked, gold=["g"])
    assert (m["hit@5"], m["hit@10"], m["hit@15"]) == (0.0, 1.0, 1.0)
    assert m["mrr"] == pytest.approx(0.1)


def test_recall_denominator_is_min_of_50_and_gold_size():
    assert ranking_metrics(["g1", "x", "g2"], gold=["g1", "g2", "g3"])["recall@50"] == pytest.approx(2 / 3)
    gold = [f"g{i}" for i in range(60)]
    ranked = gold[:10] + [f"x{i}" for i in range(40)] + gold[10:]
    assert ranking_metrics(ranked, gold)["recall@50"] == pytest.approx(10 / 50)


def test_only_the_top_50_count():
    ranked = [f"x{i}" for i in range(50)] + ["g"]
    m = ranking_metrics(ranked, gold=["g"])
    assert m["mrr"] == 0.0 and m["recall@50"] == 0.0


def test_binary_ndcg_hand_computed():
    # relevant at ranks 1 and 3 of 3 gold: DCG = 1 + 1/log2(4); ideal = 1 + 1/log2(3) + 1/log2(4)
    m = ranking_metrics(["g1", "x", "g2"], gold=["g1", "g2", "g3"])
    expected = (1 + 1 / L4) / (1 + 1 / L3 + 1 / L4)
    assert m["ndcg@10"] == pytest.approx(expected)
    assert m["ndcg@15"] == pytest.approx(expected)


def test_ideal_is_capped_at_k_relevant_papers():
    gold = [f"g{i}" for i in range(20)]
    assert ndcg_binary(gold[:10], set(gold), 10) == pytest.approx(1.0)
    assert ndcg_binary(gold[:10], set(gold), 15) < 1.0  # 15 gold would fit in the top 15


def test_fewer_than_k_results_and_empty_inputs():
    assert ranking_metrics(["g1"], gold=["g1"])["ndcg@10"] == pytest.approx(1.0)
    assert ranking_metrics([], gold=["g1"]) == zero_metrics()
    assert ranking_metrics(["a", "b"], gold=[]) == zero_metrics()
    assert set(zero_metrics()) == set(RANK_KEYS)


def test_graded_ndcg_hand_computed():
    graded = {"a": 3, "b": 2, "c": 1, "d": 0}
    # ranked c, a, z(unjudged): DCG = 1 + 3/log2(3); ideal = 3 + 2/log2(3) + 1/log2(4)
    expected = (1 + 3 / L3) / (3 + 2 / L3 + 1 / L4)
    assert ndcg_graded(["c", "a", "z"], graded, 15) == pytest.approx(expected)
    m = ranking_metrics(["c", "a", "z"], gold=["a", "b"], graded=graded)
    assert m[GRADED_KEY] == pytest.approx(expected)
    assert ndcg_graded(["a", "b", "c"], graded, 15) == pytest.approx(1.0)
    assert ndcg_graded(["a"], {"a": 0}, 15) == 0.0


def test_pool_ranking_puts_unranked_pool_ids_after_in_pool_order():
    pool = ["p1", "p2", "p3", "p4"]
    assert pool_ranking(["x", "p3", "p3", "p1"], pool) == ["p3", "p1", "p2", "p4"]
    assert pool_ranking([], pool) == pool


def test_pool_ranking_fallback_scores_and_ties_keep_pool_order():
    pool = ["p1", "p2", "p3", "p4", "p5"]
    scores = {"p2": 0.5, "p3": 0.9, "p4": 0.5}  # p2 and p4 tie; p5 has no score -> last
    assert pool_ranking(["p1"], pool, scores) == ["p1", "p3", "p2", "p4", "p5"]


def test_average_precision_binarised_at_grade_2():
    assert average_precision([1, 0, 1, 0]) == pytest.approx((1 + 2 / 3) / 2)
    assert average_precision([0, 0]) == 0.0
    m = pool_metrics(["a", "b", "c", "d"], {"a": 3, "b": 1, "c": 2, "d": 0})
    assert m["map"] == pytest.approx((1 + 2 / 3) / 2)  # grade 1 is not relevant


def test_ndcg_percent20_uses_csfcube_discount_and_floored_cutoff():
    ten = [f"p{i}" for i in range(10)]
    # cut-off int(0.2 * 10) = 2; rank_metrics method 0 does not discount rank 2, so (2, 3) == (3, 2)
    graded = {"p0": 2, "p1": 3, "p4": 1}
    assert pool_metrics(ten, graded)["ndcg%20"] == pytest.approx(1.0)
    graded = {"p1": 3, "p2": 2}
    assert pool_metrics(ten, graded)["ndcg%20"] == pytest.approx(3 / 5)
    # a pool of 4 has cut-off 0: CSFCube's script scores 0
    assert pool_metrics(["a", "b", "c", "d"], {"a": 3})["ndcg%20"] == 0.0


def _rank_metrics_ndcg(r, k):
    """rank_metrics.ndcg_at_k (method=0) as CSFCube imports it, written with numpy for cross-checking."""

    def dcg(x):
        x = np.asarray(x, dtype=float)[:k]
        return x[0] + np.sum(x[1:] / np.log2(np.arange(2, x.size + 1))) if x.size else 0.0

    best = dcg(sorted(r, reverse=True))
    return dcg(r) / best if best else 0.0


@given(st.lists(st.integers(min_value=0, max_value=3), max_size=60), st.integers(min_value=0, max_value=70))
def test_ndcg_at_agrees_with_rank_metrics(grades, k):
    assert ndcg_at(grades, k) == pytest.approx(_rank_metrics_ndcg(grades, k))


def test_aggregate_pool_by_facet_and_all():
    agg = aggregate_pool(
        [
            ("method", {"map": 1.0, "ndcg%20": 0.5}),
            ("method", {"map": 0.0, "ndcg%20": 0.5}),
            ("result", {"map": 0.5, "ndcg%20": 1.0}),
        ]
    )
    assert agg["method"] == {"map": 0.5, "ndcg%20": 0.5, "n": 2}
    assert agg["all"]["map"] == pytest.approx(0.5) and agg["all"]["n"] == 3
    assert "background" not in agg
