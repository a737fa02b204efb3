"""Sourcing operators on the corpus slice: what comes in, and that each paper names the node that brought it."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from tests.ops_helpers import as_ranked, ids, run_op
from workflows.operator import OperatorError, RunContext
from workflows.registry import get_operator

ANCHOR = "acl:N03-1033"  # Feature-Rich Part-Of-Speech Tagging With A Cyclic Dependency Network


async def test_anchor_resolves_title_and_id(ctx):
    by_title = await run_op(
        ctx, "anchor", {"query": "Feature-Rich Part-Of-Speech Tagging With A Cyclic Dependency Network"}
    )
    by_id = await run_op(ctx, "anchor", {"query": ANCHOR})
    assert ids(by_title) == ids(by_id) == [ANCHOR]
    assert by_id[0].evidence.nodes == ["anchor"]


def test_anchor_needs_a_query():
    with pytest.raises(ValidationError):
        get_operator("anchor").Params.model_validate({"query": ""})
    with pytest.raises(ValidationError):
        get_operator("anchor").Params.model_validate({"query": "x", "limit": 3})  # extra params are refused


async def test_citation_expand_references_match_the_file(ctx, by_id):
    anchor = await run_op(ctx, "anchor", {"query": ANCHOR})
    out = await run_op(ctx, "citation_expand", {"direction": "references"}, node_id="refs", **{"in": anchor})
    expected = {r for r in by_id[ANCHOR]["references"] if r in by_id}
    assert set(ids(out)) == expected and expected
    assert all(it.evidence.nodes == ["refs"] and it.evidence.scores["refs.support"] == 1 for it in out)


async def test_citation_expand_citations_and_both(ctx, by_id):
    anchor = await run_op(ctx, "anchor", {"query": ANCHOR})
    citers = {pid for pid, r in by_id.items() if ANCHOR in r["references"]}
    out = await run_op(ctx, "citation_expand", {"direction": "citations", "per_paper_limit": 2000}, **{"in": anchor})
    assert set(ids(out)) == citers
    both = await run_op(ctx, "citation_expand", {"direction": "both", "per_paper_limit": 2000}, **{"in": anchor})
    assert set(ids(both)) == citers | {r for r in by_id[ANCHOR]["references"] if r in by_id}


async def test_citation_expand_support_counts_seeds(ctx, by_id):
    # the references of the citers of the anchor: support = how many citers cite each paper
    anchor = await run_op(ctx, "anchor", {"query": ANCHOR})
    citers = await run_op(ctx, "citation_expand", {"direction": "citations", "per_paper_limit": 2000}, **{"in": anchor})
    out = await run_op(
        ctx, "citation_expand", {"direction": "references", "max_seeds": 500}, node_id="cocited", **{"in": citers}
    )
    expected: dict[str, int] = {}
    for c in ids(citers):
        for r in set(by_id[c]["references"]):
            if r in by_id and r not in ids(citers):
                expected[r] = expected.get(r, 0) + 1
    got = {it.paper.id: it.evidence.scores["cocited.support"] for it in out}
    assert got == expected
    assert got[ANCHOR] == len(citers)  # every citer cites the anchor
    assert [it.evidence.scores["cocited.support"] for it in out] == sorted(got.values(), reverse=True)


async def test_citation_expand_rank_decay_weighs_the_best_seeds_most(ctx, by_id):
    # a predecessor's foundations as its closest papers see them: a reference of the best-ranked seed
    # outweighs one cited only by a far seed, while .support still counts seeds
    anchor = await run_op(ctx, "anchor", {"query": ANCHOR})
    citers = await run_op(ctx, "citation_expand", {"direction": "citations", "per_paper_limit": 2000}, **{"in": anchor})
    seeds = ids(citers)
    out = await run_op(
        ctx,
        "citation_expand",
        {"direction": "references", "max_seeds": 500, "rank_decay": 2.0},
        node_id="sim",
        **{"in": citers},
    )
    expected: dict[str, float] = {}
    for rank, c in enumerate(seeds):
        for r in set(by_id[c]["references"]):
            if r in by_id and r not in seeds:
                expected[r] = expected.get(r, 0.0) + 1.0 / (1.0 + rank / 2.0)
    got = {it.paper.id: it.evidence.scores["sim.centrality"] for it in out}
    assert got == pytest.approx(expected, abs=1e-3)
    assert got[ANCHOR] > max(v for pid, v in got.items() if pid != ANCHOR) or len(got) == 1
    first_only = set(by_id[seeds[0]]["references"]) - set().union(*(by_id[c]["references"] for c in seeds[1:]))
    last_only = set(by_id[seeds[-1]]["references"]) - set().union(*(by_id[c]["references"] for c in seeds[:-1]))
    a = next((got[r] for r in first_only if r in got), None)
    b = next((got[r] for r in last_only if r in got), None)
    if a is not None and b is not None:
        assert a > b
    # without the param only the count is written
    plain = await run_op(ctx, "citation_expand", {"direction": "references"}, node_id="sim", **{"in": citers})
    assert all("sim.centrality" not in it.evidence.scores for it in plain)


async def test_citation_expand_depth_two_reaches_further(ctx):
    anchor = await run_op(ctx, "anchor", {"query": ANCHOR})
    one = await run_op(ctx, "citation_expand", {"direction": "references"}, **{"in": anchor})
    two = await run_op(ctx, "citation_expand", {"direction": "references", "depth": 2}, **{"in": anchor})
    assert set(ids(one)) < set(ids(two))
    assert {it.evidence.scores["hops"] for it in two} == {1, 2}


async def test_keyword_search_uses_keywords_port(ctx):
    out = await run_op(ctx, "keyword_search", {"limit": 10}, node_id="search_kw", keywords=["treebank"])
    assert out and all(it.evidence.nodes == ["search_kw"] for it in out)
    assert "treebank" in out[0].paper.text.lower()


async def test_keyword_search_per_keyword_fuses_several_queries(ctx):
    out = await run_op(ctx, "keyword_search", {"limit": 20, "per_keyword": True}, keywords=["treebank", "bleu"])
    texts = [it.paper.text.lower() for it in out]
    assert any("treebank" in t for t in texts) and any("bleu" in t for t in texts)


async def test_search_without_a_query_is_a_clear_error(ctx):
    with pytest.raises(OperatorError, match="nothing to search for"):
        await run_op(ctx, "keyword_search", {})


async def test_semantic_search_from_anchor_excludes_it(ctx, local_source):
    from pilot.embed import Embedder

    ctx = RunContext(source=local_source, embedder=Embedder())
    anchor = await run_op(ctx, "anchor", {"query": "acl:P02-1040"})
    out = await run_op(ctx, "semantic_search", {"limit": 10}, anchor=anchor)
    assert len(out) == 10 and "acl:P02-1040" not in ids(out)
    assert any("translation" in it.paper.text.lower() for it in out[:3])


async def test_recommend_drops_seeds(ctx):
    seeds = as_ranked(await ctx.source.get_papers(["acl:P02-1040", "acl:P03-1054"]))
    out = await run_op(ctx, "recommend", {"limit": 5}, **{"in": seeds})
    assert len(out) == 5 and not set(ids(out)) & {"acl:P02-1040", "acl:P03-1054"}
    assert out[0].evidence.nodes == ["recommend"]


async def test_citation_expand_survives_some_failed_lookups(ctx):
    from pilot.models import Paper

    seeds = as_ranked(await ctx.source.get_papers([ANCHOR]) + [Paper(id="acl:Z99-9999", title="Not in the corpus")])
    out = await run_op(ctx, "citation_expand", {"direction": "references"}, **{"in": seeds})
    assert out  # the anchor's references still came back
    assert any("1 of 2 lookups failed" in n for n in ctx.notes)


async def test_citation_expand_on_a_source_without_a_graph_raises_its_error():
    from pilot.models import Paper
    from pilot.sources.base import NotSupported, Source

    ctx = RunContext(source=Source())  # the protocol's defaults: nothing supported
    with pytest.raises(NotSupported, match="references is not available"):
        await run_op(ctx, "citation_expand", {}, **{"in": as_ranked([Paper(id="x:1", title="T")])})


async def test_fetch_returns_known_ids_in_order_and_notes_unknown(ctx):
    out = await run_op(
        ctx, "fetch", {"ids": ["acl:P03-1054", "acl:Z99-9999", "acl:P02-1040", "acl:P03-1054"]}, node_id="liked"
    )
    assert ids(out) == ["acl:P03-1054", "acl:P02-1040"] and out[0].evidence.nodes == ["liked"]
    assert any("1 of 3 ids are unknown" in n for n in ctx.notes)
