"""Rerank / nli_filter / fine_read: the embedding path, the LLM path (litellm's mock at the network edge),
and the fallback when the model's reply is unusable."""

from __future__ import annotations

import json

import pytest

from pilot.embed import Embedder
from pilot.llm import LLM
from tests.ops_helpers import as_ranked, ids, run_op
from workflows.operator import RunContext

PAPERS = ["acl:P03-1054", "acl:P02-1040", "acl:J93-2004", "acl:N03-1033"]  # parsing, BLEU, treebank, tagging


@pytest.fixture(scope="module")
def embedder():
    return Embedder()


@pytest.fixture()
async def papers(local_source):
    return as_ranked(await local_source.get_papers(PAPERS))


def _llm(*replies: str) -> LLM:
    return LLM("openai/gpt-4o-mini", api_key="sk-test", mock_response=list(replies), num_retries=0)


async def test_rerank_dense_puts_the_closest_first(local_source, embedder, papers):
    ctx = RunContext(source=local_source, embedder=embedder)
    out = await run_op(
        ctx, "rerank", {"text": "automatic evaluation of machine translation output", "alpha": 0.0}, **{"in": papers}
    )
    assert ids(out)[0] == "acl:P02-1040"
    assert sorted(ids(out)) == sorted(PAPERS) and "rerank" in out[0].evidence.scores


async def test_rerank_llm_order_is_applied(local_source, embedder, papers):
    ctx = RunContext(source=local_source, embedder=embedder, llm=_llm(json.dumps({"order": [3, 1, 9, 3]})))
    out = await run_op(ctx, "rerank", {"text": "treebanks"}, **{"in": papers})
    # 3 then 1 as the model said; the out-of-range 9 and the repeated 3 are ignored; the rest keep their order
    assert ids(out) == ["acl:J93-2004", "acl:P03-1054", "acl:P02-1040", "acl:N03-1033"]


async def test_rerank_bad_llm_reply_falls_back_with_a_note(local_source, embedder, papers):
    ctx = RunContext(source=local_source, embedder=embedder, llm=_llm("not json", "still not json"))
    out = await run_op(
        ctx, "rerank", {"text": "automatic evaluation of machine translation", "alpha": 0.0}, **{"in": papers}
    )
    assert ids(out)[0] == "acl:P02-1040"
    assert any("unusable" in n and "used embeddings" in n for n in ctx.notes)


async def test_nli_filter_embedding_threshold(local_source, embedder, papers):
    ctx = RunContext(source=local_source, embedder=embedder)
    anchor = as_ranked(await local_source.get_papers(["acl:P97-1003"]))  # Three generative lexicalised parsing models
    out = await run_op(
        ctx,
        "nli_filter",
        {"relation": "addresses the same task as the anchor", "threshold": 0.45},
        **{"in": papers, "anchor": anchor},
    )
    assert "acl:P03-1054" in ids(out) and "acl:P02-1040" not in ids(out)
    assert all(it.evidence.scores["nli"] >= 0.45 for it in out)
    keep_one = await run_op(
        ctx,
        "nli_filter",
        {"relation": "same task", "threshold": 0.99, "keep_min": 1},
        **{"in": papers, "anchor": anchor},
    )
    assert ids(keep_one) == ["acl:P03-1054"]


async def test_nli_filter_llm_keeps_what_the_model_says(local_source, papers):
    ctx = RunContext(source=local_source, llm=_llm(json.dumps({"keep": [2, 4]})))
    out = await run_op(ctx, "nli_filter", {"relation": "is about evaluation"}, **{"in": papers})
    assert ids(out) == ["acl:P02-1040", "acl:N03-1033"]


async def test_fine_read_writes_a_judgement(local_source, embedder, papers):
    ctx = RunContext(source=local_source, embedder=embedder)
    out = await run_op(
        ctx, "fine_read", {"question": "n-gram precision against reference translations"}, **{"in": papers}
    )
    bleu = next(it for it in out if it.paper.id == "acl:P02-1040")
    assert bleu.evidence.reason.startswith("closest passage") and bleu.evidence.scores["fine_read"] > 0
    assert ids(out) == ids(papers)  # reading annotates; it does not reorder
    reply = {
        "judgements": [
            {"i": 2, "relevant": True, "why": "Defines BLEU."},
            {"i": 1, "relevant": False, "why": "Parsing."},
        ]
    }
    ctx = RunContext(source=local_source, llm=_llm(json.dumps(reply)))
    out = await run_op(ctx, "fine_read", {"question": "MT evaluation"}, **{"in": papers})
    assert out[1].evidence.reason == "Defines BLEU." and out[1].evidence.scores["fine_read"] == 1.0
    assert out[0].evidence.scores["fine_read"] == 0.0 and out[2].evidence.reason is None


async def test_asking_for_the_llm_without_one_says_so(local_source, papers):
    ctx = RunContext(source=local_source)  # neither an LLM nor an embedder
    out = await run_op(ctx, "nli_filter", {"relation": "same task", "method": "llm", "top_n": 2}, **{"in": papers})
    assert ids(out) == ids(papers)
    assert any("no LLM configured" in n for n in ctx.notes) and any("nothing was filtered" in n for n in ctx.notes)
    assert any("2 papers below the first 2 passed unjudged" in n for n in ctx.notes)
