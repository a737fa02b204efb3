"""Set operators: membership, order and that evidence from every input survives."""

from __future__ import annotations

from pilot.models import Paper, RankedPaper
from tests.ops_helpers import as_ranked, ids, run_op


def _p(pid: str, title: str | None = None) -> Paper:
    return Paper(id=pid, title=title or f"Paper {pid} on some topic")


async def test_union_merges_evidence_and_fuses_ranks(ctx):
    a = as_ranked([_p("1"), _p("2"), _p("3")], node="search_kw")
    b = as_ranked([_p("3"), _p("4")], node="refs")
    b[0].evidence.scores["refs.support"] = 2.0
    out = await run_op(ctx, "union", node_id="merge", **{"in": [a, b]})
    assert sorted(ids(out)) == ["1", "2", "3", "4"]
    three = next(it for it in out if it.paper.id == "3")
    assert three.evidence.nodes == ["search_kw", "refs"]
    assert three.evidence.scores["refs.support"] == 2.0
    assert ids(out)[0] == "3"  # found by both lists: the highest fused rank
    assert all(it.evidence.scores["rrf"] > 0 for it in out)


async def test_union_does_not_mutate_its_inputs(ctx):
    a = as_ranked([_p("1")], node="x")
    b = as_ranked([_p("1")], node="y")
    await run_op(ctx, "union", **{"in": [a, b]})
    assert a[0].evidence.nodes == ["x"] and "rrf" not in a[0].evidence.scores


async def test_intersect_keeps_common_papers(ctx):
    a = as_ranked([_p("1"), _p("2"), _p("3")], node="a")
    b = as_ranked([_p("3"), _p("2"), _p("9")], node="b")
    out = await run_op(ctx, "intersect", **{"in": [a, b]})
    assert sorted(ids(out)) == ["2", "3"]
    assert all(it.evidence.nodes == ["a", "b"] for it in out)


async def test_difference_removes_and_keeps_order(ctx):
    a = as_ranked([_p("1"), _p("2"), _p("3"), _p("4")])
    out = await run_op(ctx, "difference", **{"in": a, "minus": [as_ranked([_p("2")]), as_ranked([_p("4")])]})
    assert ids(out) == ["1", "3"]


async def test_dedupe_merges_ids_and_near_duplicate_titles(ctx):
    items = [
        RankedPaper(paper=_p("acl:1", "Accurate Unlexicalized Parsing"), score=0.5, evidence={"nodes": ["a"]}),
        RankedPaper(paper=_p("s2:9", "Accurate unlexicalized parsing."), score=0.9, evidence={"nodes": ["b"]}),
        RankedPaper(paper=_p("acl:1", "Accurate Unlexicalized Parsing"), score=0.1, evidence={"nodes": ["c"]}),
        RankedPaper(paper=_p("x:2", "Something Else Entirely Here"), score=0.2),
    ]
    out = await run_op(ctx, "dedupe", **{"in": items})
    assert ids(out) == ["acl:1", "x:2"]
    assert out[0].evidence.nodes == ["a", "b", "c"] and out[0].score == 0.9
    kept = await run_op(ctx, "dedupe", {"by_title": False}, **{"in": items})
    assert ids(kept) == ["acl:1", "s2:9", "x:2"]
