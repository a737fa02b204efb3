"""Keyword extraction and the output operators (evidence snippets, relation graph) on slice papers."""

from __future__ import annotations

import json

from pilot.embed import Embedder
from pilot.llm import LLM
from pilot.text import QUERY_STOPWORDS
from tests.ops_helpers import as_ranked, ids, run_op
from workflows.operator import RunContext
from workflows.ports import RelationGraph


async def _citers(ctx, pid: str):
    anchor = await run_op(ctx, "anchor", {"query": pid})
    return await run_op(ctx, "citation_expand", {"direction": "citations", "per_paper_limit": 2000}, **{"in": anchor})


async def test_keywords_from_papers_are_their_shared_topic(ctx):
    citers = await _citers(ctx, "acl:P02-1040")  # papers citing BLEU are about machine translation
    kws = await run_op(ctx, "keywords_from", {"k": 8}, **{"in": citers})
    assert len(kws) == 8
    assert "machine translation" in kws or "translation" in kws
    assert not any(k in QUERY_STOPWORDS for k in kws)
    assert not ("machine translation" in kws and "machine" in kws)  # a phrase subsumes its words


async def test_keywords_from_text_and_title(ctx):
    kws = await run_op(
        ctx, "keywords_from", {"text": "Accurate unlexicalized parsing of the Penn treebank with a PCFG", "k": 5}
    )
    assert {"unlexicalized", "treebank", "pcfg"} <= {w for k in kws for w in k.split()}
    assert "the" not in kws and "with" not in kws


async def test_llm_keywords_with_and_without_a_model(local_source):
    text = "Bleu: a method for automatic evaluation of machine translation"
    llm = LLM(
        "openai/gpt-4o-mini",
        api_key="sk-test",
        mock_response=[json.dumps({"keywords": ["BLEU", "MT evaluation", "bleu", " "]})],
    )
    ctx = RunContext(source=local_source, llm=llm)
    assert await run_op(ctx, "llm_keywords", {"text": text}) == ["BLEU", "MT evaluation"]
    plain = RunContext(source=local_source)
    fallback = await run_op(plain, "llm_keywords", {"text": text, "k": 4})
    assert fallback == await run_op(plain, "keywords_from", {"text": text, "k": 4})
    broken = RunContext(
        source=local_source, llm=LLM("openai/x", api_key="k", mock_response=["nope", "nope"], num_retries=0)
    )
    assert await run_op(broken, "llm_keywords", {"text": text, "k": 4}) == fallback
    assert any("used keywords_from" in n for n in broken.notes)


async def test_extract_evidence_snippets_contain_matched_terms(local_source):
    ctx = RunContext(source=local_source, embedder=Embedder())
    papers = [it for it in await _citers(ctx, "acl:P02-1040") if it.paper.abstract][:8]
    papers[0].evidence.scores["dense"] = 0.61
    out = await run_op(ctx, "extract_evidence", {"text": "translation quality evaluation"}, **{"in": papers})
    assert ids(out) == ids(papers)
    for it in out:
        ev = it.evidence
        assert ev.snippet and (ev.snippet in it.paper.abstract or ev.snippet == it.paper.title)
        assert all(t in ev.snippet.lower() for t in ev.matched_terms)
        assert ev.nodes == ["citation_expand"] and "found by citation_expand" in ev.reason
    assert any(it.evidence.matched_terms for it in out)
    assert "dense=0.61" in out[0].evidence.reason


async def test_extract_evidence_lexical_only_without_embedder(ctx):
    papers = as_ranked(await ctx.source.get_papers(["acl:J93-2004"]))
    out = await run_op(ctx, "extract_evidence", {"text": "annotated treebank", "dense_top": 0}, **{"in": papers})
    assert out[0].evidence.matched_terms == ["annotated", "treebank"]


async def test_build_graph_edges_match_the_file(ctx, corpus_slice_rows):
    by_id = {r["id"]: r for r in corpus_slice_rows}
    anchor = await run_op(ctx, "anchor", {"query": "acl:P03-1054"})
    refs = await run_op(ctx, "citation_expand", {"direction": "both", "per_paper_limit": 30}, **{"in": anchor})
    items = anchor + refs
    graph = await run_op(ctx, "build_graph", {"min_shared": 2}, **{"in": items})
    assert isinstance(graph, RelationGraph) and set(graph.nodes) == set(ids(items))
    cites = {(e.source, e.target) for e in graph.edges if e.kind == "cites"}
    expected = {(a, b) for a in ids(items) for b in by_id[a]["references"] if b in set(ids(items))}
    assert cites == expected and cites
    for e in (e for e in graph.edges if e.kind == "coupled"):
        assert e.weight == len(set(by_id[e.source]["references"]) & set(by_id[e.target]["references"])) >= 2
