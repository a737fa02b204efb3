"""Issue 15's signals as a user meets them in the DAG: the anchor's authors' earlier references for
predecessors, resources before methods for benchmarks, a judged pool ranked by the workflow itself, and
the ablation that drops one signal."""

from __future__ import annotations

import pytest

from pilot.embed import Embedder
from pilot.eval.ablation import without
from pilot.eval.pool import POOL_NODE, pool_workflow
from pilot.models import Intent, Paper, RankedPaper
from pilot.sources.hidden import HiddenEdgesSource
from tests.ops_helpers import as_ranked, ids, run_op
from workflows.executor import execute
from workflows.explain import why
from workflows.operator import RunContext
from workflows.templates import generic_workflow, template
from workflows.validate import check

TREEBANK, PARSER = (
    "acl:J93-2004",
    "acl:P03-1054",
)  # "Building a large annotated corpus…", "Accurate unlexicalized parsing"


@pytest.fixture(scope="module")
def embedder():
    return Embedder()


async def test_paper_type_feature_puts_the_resource_above_the_method(local_source):
    papers = as_ranked(await local_source.get_papers([PARSER, TREEBANK]))
    ctx = RunContext(source=local_source)
    out = await run_op(ctx, "score", {"features": {"paper_type": 1.0}, "paper_types": ["resource"]}, **{"in": papers})
    assert ids(out) == [TREEBANK, PARSER]
    assert out[0].evidence.scores["paper_type"] == 1.0 and out[1].evidence.scores["paper_type"] == 0.0
    methods = await run_op(ctx, "score", {"features": {"paper_type": 1.0}, "paper_types": ["method"]}, **{"in": papers})
    assert ids(methods) == [PARSER, TREEBANK]


def test_benchmark_and_predecessor_templates_show_their_new_signals():
    bench = template("benchmark", PARSER, Intent(direction="benchmark"))
    pred = template("predecessor", PARSER, Intent(direction="predecessor"))
    assert check(bench) == [] and check(pred) == []
    bf = bench.node("score").params["features"]
    assert bf["paper_type"] > sum(w for k, w in bf.items() if k != "paper_type")  # resources first, then relevance
    for wf in (bench, pred):
        assert wf.node("authors_earlier").params == {"relative_to_anchor": "before"}
        assert {e.source for e in wf.inputs_of("merge")} >= {"author_refs", "authors_earlier"}
        assert "ev:author_refs.support" in wf.node("score").params["features"]


async def test_predecessors_of_a_draft_come_from_its_authors_earlier_references(local_source, embedder, by_id):
    """With the anchor's reference list hidden (an unpublished draft), what its authors cited before is
    a source of candidates, and each such result says so."""
    anchor = "acl:N03-1033"  # a tagger paper whose authors' earlier work is in the test slice
    hidden = HiddenEdgesSource(local_source, anchor, "anchor_outgoing")
    ctx = RunContext(source=hidden, embedder=embedder)
    wf = template("predecessor", anchor, Intent(direction="predecessor", k=200))
    result = await execute(wf, ctx)
    assert result.errors == {}
    truth = set(by_id[anchor]["references"]) & set(by_id)
    earlier = {it.paper.id for it in result.values["authors_earlier"]}
    year = by_id[anchor]["year"]
    assert earlier and all(by_id[p]["year"] <= year for p in earlier)
    from_authors = {it.paper.id for it in result.values["author_refs"]}
    assert from_authors & truth  # the hidden references are reachable through the authors' earlier papers
    hit = next(it for it in result.output if it.paper.id in from_authors & truth)
    assert any("the anchor's authors' earlier papers" in p for p in why(wf, hit))


def test_pool_workflow_replaces_candidate_gathering_and_lifts_every_cut_off():
    pool = [f"acl:X{i:02d}" for i in range(120)][::-1]
    wf = template("sibling", PARSER, Intent(direction="sibling", facet="method", k=20))
    pw = pool_workflow(wf, pool)
    assert pw is not None and check(pw) == []
    assert pw.node(POOL_NODE).params["ids"] == sorted(pool)  # the pool's own order carries no signal
    assert not pw.has_node("merge") and not pw.has_node("search_dense") and not pw.has_node("search_kw")
    assert pw.node("top").params["k"] == 120 and pw.node("facet").params["top_n"] == 120
    assert pw.node("facet").params["max_sentences"] >= 10_000  # every pool paper sentence by sentence
    assert wf.has_node("merge") and wf.node("top").params["k"] == 20  # the session's workflow is untouched
    generic = pool_workflow(generic_workflow(PARSER, "similar papers"), pool)
    assert generic is not None and generic.node("rerank").params["top_n"] == 120
    # rrf fused the replaced union's searches; on the pool it would rank by the fetch order, i.e. by id
    assert "rrf" in generic_workflow(PARSER, "similar papers").node("score").params["features"]
    assert "rrf" not in generic.node("score").params["features"]
    assert "rrf" not in pw.node("score").params["features"] and "rrf" in wf.node("score").params["features"]
    no_union = template("sibling", PARSER).model_copy(deep=True)
    no_union.nodes = [n for n in no_union.nodes if n.op != "union"]
    assert pool_workflow(no_union, pool) is None


async def test_pool_workflow_ranks_every_pool_paper(local_source, embedder, corpus_slice_rows):
    pool = [r["id"] for r in corpus_slice_rows[:60] if r["id"] != PARSER]
    wf = pool_workflow(template("sibling", PARSER, Intent(direction="sibling", facet="result")), pool)
    result = await execute(wf, RunContext(source=local_source, embedder=embedder))
    got = [it.paper.id for it in result.output]
    assert set(got) <= set(pool) and len(got) >= len(pool) - 5  # only filters (citers, no year) may drop some


def test_ablation_drops_a_feature_or_a_node_and_keeps_the_workflow_valid():
    wf = template("sibling", PARSER, Intent(direction="sibling", facet="method"))
    no_facet = without(wf, "facet")
    assert not no_facet.has_node("facet") and [e.source for e in no_facet.inputs_of("top")] == ["score"]
    no_dense = without(wf, "dense")
    assert "dense" not in no_dense.node("score").params["features"]
    both = without(template("predecessor", PARSER), "ev:author_refs.support+author_refs")
    assert not both.has_node("author_refs") and "ev:author_refs.support" not in both.node("score").params["features"]
    assert check(both) == [] and without(wf, "no_such_signal") == wf
    node_only = without(template("predecessor", PARSER), "author_refs")  # its evidence feature goes with it
    assert "ev:author_refs.support" not in node_only.node("score").params["features"] and check(node_only) == []
    uncoupled = without(template("sibling", PARSER), "coupled")  # a capped feature: its cap and floor go too
    assert not {"ev:coupled.support"} & {*uncoupled.node("score").params.get("caps", {})} and check(uncoupled) == []
    even = without(wf, "facet.facet_weight=0+facet.method=ot")
    assert even.node("facet").params["facet_weight"] == 0 and even.node("facet").params["method"] == "ot"


def test_each_result_says_which_new_evidence_it_rests_on():
    from pilot.models import Evidence, Paper, RankedPaper

    bench = template("benchmark", PARSER, Intent(direction="benchmark"))
    treebank = RankedPaper(
        paper=Paper(id="t", title="Building a Large Annotated Corpus of English: The Penn Treebank"),
        evidence=Evidence(nodes=["author_refs"], scores={"paper_type": 1.0, "author_refs.support": 2.0}),
    )
    said = why(bench, treebank)
    assert "cited by 2 of the anchor's authors' earlier papers" in said
    assert any(p.startswith("a data resource: title") for p in said)
    parser = RankedPaper(paper=Paper(id="p", title="Accurate Unlexicalized Parsing"), evidence=Evidence())
    assert not any("resource" in p for p in why(bench, parser))
    sib = template("sibling", PARSER, Intent(direction="sibling", facet="method"))
    match = RankedPaper(paper=Paper(id="m", title="x"), evidence=Evidence(scores={"facet_match": 0.612}))
    assert "matches the anchor's method sentence by sentence (0.61)" in why(sib, match)


async def test_an_anchor_listed_without_authors_leaves_the_authors_step_empty_not_failed(local_source):
    """A paper the source lists without authors (common in old proceedings) has no earlier papers by
    them: the predecessor search's authors branch is empty and says nothing is wrong."""
    paper = (await local_source.get_papers([PARSER]))[0].model_copy(update={"authors": []})
    ctx = RunContext(source=local_source)
    authors = await run_op(ctx, "paper_authors", {"limit": 10}, papers=as_ranked([paper]))
    assert authors == []
    assert await run_op(ctx, "author_papers", {"top": 10}, authors=authors) == []


async def test_benchmark_prefers_the_resource_made_for_the_anchors_problem(embedder):
    """Two resources the anchor's neighbours cite about as often: the generic one arrives first from the score
    step (more cited), but the one whose sentences say what the anchor's say is the benchmark the user means."""
    wf = template("benchmark", PARSER, Intent(direction="benchmark"))
    match = wf.node("match")
    assert match.op == "facet_match" and [e.source for e in wf.inputs_of("top")] == ["match"]
    anchor = Paper(
        id="a",
        title="Parsing Chinese with a lexicalized statistical parser",
        abstract="We parse Chinese sentences with a lexicalized PCFG. Chinese word segmentation errors hurt "
        "parsing accuracy. We evaluate on the Penn Chinese Treebank and reach 80% F-measure.",
    )
    generic = Paper(
        id="g",
        title="WordNet: a lexical database for English",
        abstract="WordNet groups English nouns, verbs and adjectives into sets of synonyms. It is widely used.",
    )
    chinese = Paper(
        id="c",
        title="The Penn Chinese Treebank: phrase structure annotation of a large corpus",
        abstract="We describe the annotation of Chinese sentences with phrase structure trees. The treebank "
        "supports training statistical parsers for Chinese.",
    )
    speech = Paper(id="s", title="Acoustic models for speech recognition", abstract="We train hidden Markov models.")
    ranked = [RankedPaper(paper=p, score=v) for p, v in ((generic, 1.0), (chinese, 0.95), (speech, 0.0))]
    ctx = RunContext(source=None, embedder=embedder)  # type: ignore[arg-type]
    out = await run_op(
        ctx, "facet_match", match.params, node_id="match", **{"in": ranked, "anchor": as_ranked([anchor])}
    )
    assert ids(out) == ["c", "g", "s"]
    assert "matches the anchor sentence by sentence" in " ".join(why(wf, out[0]))


async def test_predecessor_feedback_lifts_what_is_cited_alongside_the_best_candidates(local_source, embedder, by_id):
    """The anchor's reference list hidden (a draft): papers that later work cites together with the best-ranked
    candidates move up below them, the head of the list stays, and each says why."""
    anchor = PARSER
    truth = set(by_id[anchor]["references"]) & set(by_id)
    src = HiddenEdgesSource(local_source, anchor, "anchor_outgoing")
    ctx = RunContext(source=src, embedder=embedder)
    wf = template("predecessor", anchor, Intent(direction="predecessor", k=200))
    assert wf.node("rescore").params["keep_top"] == wf.node("best").params["k"]
    result = await execute(wf, ctx)
    assert result.errors == {}
    before, after = result.values["score"], result.values["rescore"]
    head = wf.node("best").params["k"]
    assert ids(after)[:head] == ids(before)[:head]

    def found(ranked: list[RankedPaper], k: int = 50) -> int:
        return len(set(ids(ranked)[:k]) & truth)

    assert found(after) >= found(before)
    lifted = [it for it in after[head:50] if it.paper.id not in set(ids(before)[:50])]
    assert lifted and all(it.evidence.scores.get("feedback.cocitation", 0) > 0 for it in lifted)
    said = [p for it in lifted for p in why(wf, it)]
    assert any("co-cited with the 10 best-ranked candidates" in p for p in said)
