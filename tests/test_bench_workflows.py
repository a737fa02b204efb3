"""``pilot bench workflows`` measures what it says: a warm run is all cache hits, an edit of the score node
re-runs only it and what is downstream, and hidden benchmark edges are honoured."""

from __future__ import annotations

import pytest

from pilot.commands.bench_workflows import _case_source, _time_case
from pilot.embed import Embedder


@pytest.fixture(scope="module")
def embedder():
    return Embedder()


async def test_time_case_warm_is_cached_and_edit_reruns_downstream_only(local_source, embedder):
    case = {
        "case_id": "sibling-acl:P03-1054",
        "direction": "sibling",
        "anchor_paper_id": "acl:P03-1054",
        "hidden_edges": None,
    }
    row = await _time_case(local_source, embedder, case)
    assert row["errors"] == {} and row["warm_all_cached"]
    assert sorted(row["edit_reran"]) == ["evidence", "score", "top"]
    assert row["nodes"] == 14 and row["cold_s"] > row["warm_s"] >= 0
    # warm_s is rounded to the millisecond; the overhead is computed before rounding
    assert row["overhead_ms_per_node"] == pytest.approx(1000 * row["warm_s"] / 14, abs=0.5 / 14 + 1e-3)


async def test_case_source_hides_the_anchors_references(local_source):
    case = {"anchor_paper_id": "acl:P03-1054", "hidden_edges": "anchor_outgoing"}
    hidden = _case_source(local_source, case)
    assert await hidden.references("acl:P03-1054") == []
    assert await local_source.references("acl:P03-1054")
    assert _case_source(local_source, {**case, "hidden_edges": None}) is local_source
