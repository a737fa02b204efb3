"""The score formula: each declared feature is computed from the data, recorded, and moves the ranking."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from pilot.embed import Embedder
from pilot.models import Paper
from tests.ops_helpers import ids, run_op
from workflows.operator import RunContext
from workflows.ops.features import precedence
from workflows.registry import get_operator

ANCHOR = "acl:P03-1054"  # Accurate Unlexicalized Parsing


async def _neighbourhood(ctx):
    anchor = await run_op(ctx, "anchor", {"query": ANCHOR})
    refs = await run_op(ctx, "citation_expand", {"direction": "references"}, node_id="refs", **{"in": anchor})
    coupled = await run_op(
        ctx,
        "citation_expand",
        {"direction": "citations", "per_paper_limit": 2000, "max_seeds": 500},
        node_id="coupled",
        **{"in": refs},
    )
    return anchor, refs, [it for it in coupled if it.paper.id != ANCHOR]


async def test_coupling_counts_shared_references(ctx, by_id):
    anchor, _, cands = await _neighbourhood(ctx)
    out = await run_op(ctx, "score", {"features": {"coupling": 1.0}}, **{"in": cands, "anchor": anchor})
    a_refs = set(by_id[ANCHOR]["references"])
    for it in out:
        assert it.evidence.scores["coupling"] == len(a_refs & set(by_id[it.paper.id]["references"]))
    values = [it.evidence.scores["coupling"] for it in out]
    assert values == sorted(values, reverse=True) and values[0] >= 2
    # the evidence a node upstream recorded is kept next to the new features
    assert all("coupled.support" in it.evidence.scores for it in out)


async def test_cocitation_counts_papers_citing_both(ctx, by_id):
    anchor, refs, _ = await _neighbourhood(ctx)
    out = await run_op(ctx, "score", {"features": {"cocitation": 1.0}}, **{"in": refs, "anchor": anchor})
    citers = [pid for pid, r in by_id.items() if ANCHOR in r["references"]]
    for it in out:
        assert it.evidence.scores["cocitation"] == sum(1 for c in citers if it.paper.id in by_id[c]["references"])


async def test_citations_recency_and_title_match(ctx):
    _, refs, _ = await _neighbourhood(ctx)
    out = await run_op(ctx, "score", {"features": {"citations": 1.0}}, **{"in": refs})
    counts = [max(it.paper.citation_count or 0, it.paper.in_corpus_citations or 0) for it in out]
    assert counts == sorted(counts, reverse=True)
    assert out[0].evidence.scores["citations"] == counts[0]
    newest = await run_op(ctx, "score", {"features": {"recency": 1.0}}, **{"in": refs})
    oldest = await run_op(ctx, "score", {"features": {"recency": -1.0}}, **{"in": refs})
    assert newest[0].paper.year == max(it.paper.year for it in refs)
    assert oldest[0].paper.year == min(it.paper.year for it in refs)
    treebank = await run_op(
        ctx, "score", {"features": {"title_match": 1.0}, "title_terms": ["treebank", "corpus"]}, **{"in": refs}
    )
    assert "treebank" in treebank[0].paper.title.lower() or "corpus" in treebank[0].paper.title.lower()
    assert treebank[0].evidence.scores["title_match"] >= 1 and treebank[-1].evidence.scores["title_match"] == 0


async def test_lexical_and_dense_follow_the_text(local_source):
    ctx = RunContext(source=local_source, embedder=Embedder())
    _, refs, _ = await _neighbourhood(ctx)
    lex = await run_op(ctx, "score", {"features": {"lexical": 1.0}, "text": "treebank"}, **{"in": refs})
    assert "treebank" in lex[0].paper.text.lower() and lex[0].evidence.scores["lexical"] > 0
    dense = await run_op(
        ctx, "score", {"features": {"dense": 1.0}, "text": "building an annotated treebank of English"}, **{"in": refs}
    )
    assert "treebank" in dense[0].paper.title.lower()
    assert -1 <= dense[-1].evidence.scores["dense"] < dense[0].evidence.scores["dense"] <= 1


async def test_weighted_sum_and_evidence_feature(ctx):
    anchor, _, cands = await _neighbourhood(ctx)
    out = await run_op(
        ctx, "score", {"features": {"ev:coupled.support": 1.0, "citations": 0.5}}, **{"in": cands, "anchor": anchor}
    )
    top = out[0].evidence.scores
    assert set(top) >= {"coupled.support", "citations"} and "ev:coupled.support" not in top
    assert out[0].score >= out[-1].score
    # a feature with weight 0 is computed and shown but does not rank
    flat = await run_op(ctx, "score", {"features": {"citations": 0.0}}, **{"in": cands})
    assert ids(flat) == ids(cands)


async def test_graph_distance_prefers_direct_neighbours(ctx, by_id):
    anchor, refs, coupled = await _neighbourhood(ctx)
    mixed = coupled[:20] + refs
    out = await run_op(ctx, "score", {"features": {"graph_distance": 1.0}}, **{"in": mixed, "anchor": anchor})
    a_refs = set(by_id[ANCHOR]["references"])
    for it in out:
        direct = it.paper.id in a_refs or ANCHOR in by_id[it.paper.id]["references"]
        assert (it.evidence.scores["graph_distance"] == 1.0) == direct
    assert out[0].evidence.scores["graph_distance"] == 1.0
    assert min(it.evidence.scores["graph_distance"] for it in out) < 1.0  # two hops away via a shared reference


def test_unknown_feature_is_refused():
    params = get_operator("score").Params
    with pytest.raises(ValidationError, match="unknown feature 'popularity'"):
        params.model_validate({"features": {"popularity": 1.0}})
    with pytest.raises(ValidationError):
        params.model_validate({"features": {}})


async def test_caps_and_floors_put_a_feature_on_an_absolute_scale(ctx):
    anchor, _, cands = await _neighbourhood(ctx)
    params = {"features": {"coupling": 1.0}, "caps": {"coupling": 4}, "floors": {"coupling": 1}}
    out = await run_op(ctx, "score", params, **{"in": cands, "anchor": anchor})
    for it in out:
        shared = it.evidence.scores["coupling"]
        assert it.score == pytest.approx(min(max(shared - 1, 0), 3) / 3, abs=1e-5)
    with pytest.raises(ValidationError, match="needs a cap above it"):
        get_operator("score").Params.model_validate({"features": {"coupling": 1}, "floors": {"coupling": 1}})


async def test_candidates_from_a_remote_source_embed_only_the_best_by_the_other_features(ctx, tmp_path):
    # A remote source ships no vectors: embedding every candidate's abstract on a CPU took longer than the
    # requests (and failed the step at its timeout). Only the best few by the rest of the formula are embedded.
    from cache import Cache, fingerprint
    from pilot.embed import MODEL_NAME
    from pilot.settings import Settings
    from pilot.sources.base import Source
    from workflows.ops.features import citation_value

    _, _, refs = await _neighbourhood(ctx)
    refs = refs[:40]
    assert len(refs) > 12
    embedder = Embedder(cache=Cache(tmp_path, "embeddings"))
    remote = RunContext(source=Source(), embedder=embedder, settings=Settings(_env_file=None, embed_at_most=6))
    params = {"features": {"citations": 1.0, "dense": 1.0}, "text": "statistical parsing"}
    out = await run_op(remote, "score", params, **{"in": refs})

    def embedded(it) -> bool:
        return embedder.cache.get(fingerprint(MODEL_NAME, it.paper.text)) is not None

    best = sorted(range(len(refs)), key=lambda i: -citation_value(refs[i].paper))[:6]
    assert {it.paper.id for it in refs if embedded(it)} == {refs[i].paper.id for i in best}
    dense = {it.paper.id: it.evidence.scores["dense"] for it in out}
    floor = min(dense[refs[i].paper.id] for i in best)
    assert all(dense[it.paper.id] == pytest.approx(floor) for it in refs if not embedded(it))
    assert any("were not embedded" in n for n in remote.notes)
    # the offline corpus's stored vectors are not capped: every candidate has its own similarity
    local = RunContext(source=ctx.source, embedder=embedder, settings=Settings(_env_file=None, embed_at_most=6))
    stored = await run_op(local, "score", params, **{"in": refs})
    assert len({it.evidence.scores["dense"] for it in stored}) > 6


async def test_keep_top_reorders_only_the_tail(ctx):
    """A second stage: the head of a ranked list stays as it is, the rest is re-ranked by the new formula."""
    _, _, cands = await _neighbourhood(ctx)
    first = await run_op(ctx, "score", {"features": {"citations": -1.0}}, **{"in": cands})  # least cited first
    second = await run_op(ctx, "score", {"features": {"citations": 1.0}, "keep_top": 3}, **{"in": first})
    assert ids(second)[:3] == ids(first)[:3]
    assert [it.score for it in second] == sorted((it.score for it in second), reverse=True)  # still descending
    tail = [it.evidence.scores["citations"] for it in second[3:]]
    assert tail == sorted(tail, reverse=True) and tail != [it.evidence.scores["citations"] for it in first[3:]]
    whole = await run_op(ctx, "score", {"features": {"citations": 1.0}}, **{"in": first})
    assert ids(whole)[:3] != ids(first)[:3]  # without keep_top the head moves too


def test_precedence_rewards_what_later_close_papers_would_build_on():
    # where no citation links say what newer work builds on: the paper its later, close matches resemble
    def unit(*xs: float) -> list[float]:
        n = sum(x * x for x in xs) ** 0.5
        return [x / n for x in xs]

    papers = [
        Paper(id="orig", title="SimCSE", year=2021),
        Paper(id="follow1", title="DiffCSE", year=2022),
        Paper(id="follow2", title="ESimCSE", year=2022),
        Paper(id="other", title="an older paper on another subject", year=2015),
        Paper(id="undated", title="no year", year=None),
    ]
    vecs = np.array(
        [unit(1, 0.1, 0), unit(1, 0.2, 0), unit(1, 0, 0.2), unit(0, 0, 1), unit(1, 0.1, 0)], dtype=np.float32
    )
    prec = precedence(papers, vecs, [1, 2, 0, 3, 4])
    by_id = dict(zip([p.id for p in papers], prec.tolist(), strict=True))
    assert by_id["orig"] > 0  # two close papers came after it
    assert by_id["follow1"] == by_id["follow2"] == 0  # nothing close came after them
    assert by_id["other"] < by_id["orig"]  # older, but what came later does not resemble it
    assert by_id["undated"] == 0  # no year: no precedence claimed
