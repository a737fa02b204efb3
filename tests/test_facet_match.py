"""facet_match: sentence-by-sentence likeness to the anchor, on the facet the user chose; sentence vectors
come from the embedding cache the second time."""

from __future__ import annotations

import time

import numpy as np
import pytest

from cache import Cache
from pilot.embed import Embedder
from pilot.models import Intent, Paper, RankedPaper
from tests.ops_helpers import as_ranked, ids, run_op
from workflows.explain import why
from workflows.operator import RunContext
from workflows.ops.facets import (
    FACET_TERMS,
    NEAR_REFS,
    calibrated,
    facet_terms,
    facet_text,
    facet_weights,
    match_scores,
)
from workflows.templates import template

ANCHOR = Paper(
    id="a",
    title="Semi-supervised named entity recognition",
    abstract=(
        "Named entity recognition in biomedical text remains a difficult problem because annotated data are scarce. "
        "We propose a conditional random field trained with word clusters learned from unlabelled text. "
        "Experiments show that the model outperforms a supervised baseline by 3% F1."
    ),
)
# same method, another problem / same problem, another method
SAME_METHOD = Paper(
    id="m",
    title="Chunking noisy transcripts",
    abstract=(
        "Spoken transcripts lack punctuation. We train a conditional random field with word clusters induced "
        "from unlabelled text. The approach is evaluated on two call-centre corpora."
    ),
)
SAME_PROBLEM = Paper(
    id="b",
    title="Gazetteers for biomedical entities",
    abstract=(
        "Finding named entities in biomedical text is hard when little annotated data exists. "
        "We compile dictionaries of gene and protein names and match them with hand-written rules. "
        "Coverage is reported on a small test set."
    ),
)


@pytest.fixture(scope="module")
def embedder():
    return Embedder()


def test_facet_weights_favour_the_facets_sentences_but_keep_the_rest():
    sents = [ANCHOR.title, *[s for s in ANCHOR.abstract.split(". ")]]
    even = facet_weights(sents, None, 0.3)
    assert np.allclose(even, 1 / len(sents))
    method = facet_weights(sents, "method", 0.3)
    assert method.sum() == pytest.approx(1.0)
    assert method.argmax() == 2 and method.min() > 0  # "We propose a conditional random field …"
    assert facet_weights(sents, "result", 0.3).argmax() == 3
    assert facet_weights(sents, "background", 0.3).argmax() == 1
    assert np.allclose(facet_weights(sents, "method", 0.0), even)
    assert "conditional random field" in facet_text(ANCHOR, "method", k=1)


@pytest.mark.parametrize("facet, first", [("method", "m"), ("background", "b")])
async def test_the_chosen_facet_decides_which_paper_is_closer(local_source, embedder, facet, first):
    ctx = RunContext(source=local_source, embedder=embedder)
    params = {"facet": facet, "facet_weight": 1.0, "alpha": 0.0}
    out = await run_op(ctx, "facet_match", params, **{"in": as_ranked([SAME_PROBLEM, SAME_METHOD]), "anchor": [ANCHOR]})
    assert ids(out)[0] == first
    assert all("facet_match" in it.evidence.scores for it in out)
    assert out[0].evidence.snippet and out[0].evidence.snippet in out[0].paper.abstract


async def test_optimal_transport_variant_and_cut_off(local_source, embedder):
    ctx = RunContext(source=local_source, embedder=embedder)
    items = as_ranked([SAME_PROBLEM, SAME_METHOD, Paper(id="z", title="Unrelated")])
    out = await run_op(
        ctx,
        "facet_match",
        {"method": "ot", "facet": "method", "alpha": 0.0, "top_n": 2},
        **{"in": items, "anchor": [ANCHOR]},
    )
    assert ids(out)[:2] == ["m", "b"] and ids(out)[2] == "z"  # below top_n: passed through, unscored
    assert "facet_match" not in out[2].evidence.scores


async def test_sentence_vectors_come_from_the_cache_the_second_time(local_source, tmp_path):
    embedder = Embedder(cache=Cache(tmp_path, "embeddings"))
    ctx = RunContext(source=local_source, embedder=embedder)
    inputs = {"in": as_ranked([SAME_PROBLEM, SAME_METHOD]), "anchor": [ANCHOR]}
    first = await run_op(ctx, "facet_match", {"facet": "method"}, **inputs)

    class NoModel:
        def encode(self, *a, **k):
            raise AssertionError("the model was asked again for cached sentences")

    embedder._model = NoModel()
    again = await run_op(ctx, "facet_match", {"facet": "result"}, **inputs)
    assert sorted(ids(again)) == sorted(ids(first))


async def test_no_embedder_keeps_the_order_with_a_note(local_source):
    ctx = RunContext(source=local_source, embedder=None)
    items = as_ranked([SAME_PROBLEM, SAME_METHOD])
    out = await run_op(ctx, "facet_match", {"facet": "method"}, **{"in": items, "anchor": [ANCHOR]})
    assert ids(out) == ["b", "m"] and any("no embeddings" in n for n in ctx.notes)


def test_a_facet_answer_adds_the_sentence_matching_step_to_sibling_search():
    plain = template("sibling", "acl:P03-1054")
    faceted = template("sibling", "acl:P03-1054", Intent(direction="sibling", facet="result"))
    assert not plain.has_node("facet")
    node = faceted.node("facet")
    assert node.op == "facet_match" and node.params["facet"] == "result"
    assert [e.source for e in faceted.inputs_of("top")] == ["facet"]
    assert {e.source for e in faceted.inputs_of("facet")} == {"score", "anchor", "refs"}


def _field(n: int) -> list[Paper]:
    topics = ["parsing", "tagging", "translation", "summarisation", "entity linking", "coreference"]
    return [
        Paper(
            id=f"c{i}",
            title=f"Learning {topics[i % 6]} from unlabelled text, part {i}",
            abstract=(
                f"{topics[i % 6].capitalize()} needs annotated data that are scarce. "
                f"We train a conditional random field with {i + 2} word cluster features. "
                f"Results improve by {i + 1}% over a supervised baseline."
            ),
        )
        for i in range(n)
    ]


async def test_a_busy_machine_cannot_change_the_ranking(local_source, embedder):
    """A recipe saved with a time budget (and a machine slowed down) ranks exactly as an idle one: every
    candidate is still read sentence by sentence."""
    items = as_ranked(_field(12))
    inputs = {"in": items, "anchor": [ANCHOR]}
    idle = RunContext(source=local_source, embedder=embedder)
    fast = await run_op(idle, "facet_match", {"facet": "method"}, **inputs)

    class Busy:
        def encode(self, *a, **k):
            time.sleep(0.3)
            return embedder.model.encode(*a, **k)

    slow_embedder = Embedder()
    slow_embedder._model = Busy()
    busy = RunContext(source=local_source, embedder=slow_embedder)
    slow = await run_op(busy, "facet_match", {"facet": "method", "budget_s": 0.1}, **inputs)
    assert ids(slow) == ids(fast)
    assert [it.evidence.scores["facet_match"] for it in slow] == pytest.approx(
        [it.evidence.scores["facet_match"] for it in fast]
    )
    assert all(it.evidence.snippet for it in slow) and not busy.notes


async def test_the_sentence_cap_is_a_count_of_the_best_ranked_candidates(local_source, embedder):
    field = _field(5)
    ctx = RunContext(source=local_source, embedder=embedder)
    out = await run_op(
        ctx, "facet_match", {"max_sentences": 8, "alpha": 1.0}, **{"in": as_ranked(field), "anchor": [ANCHOR]}
    )
    # title + 3 sentences each: the first two candidates are read sentence by sentence, the rest as a whole
    assert [bool(it.evidence.snippet) for it in out] == [True, True, False, False, False]
    assert any("3 of 5 papers matched by their whole abstract" in n for n in ctx.notes)


def _even(papers: list[Paper]) -> list[RankedPaper]:
    """Candidates the upstream score cannot tell apart, in the given order."""
    return [RankedPaper(paper=p, score=1.0, evidence={"nodes": ["given"]}) for p in papers]


def test_the_words_looked_for_come_from_the_facets_sentences():
    method = facet_terms(ANCHOR, "method")
    assert {"conditional", "random", "field", "clusters"} <= set(method) and "scarce" not in method
    # no abstract to tell the facets apart (a remote record): the title's words
    bare = Paper(id="t", title="Word clusters for tagging")
    assert facet_terms(bare, "method") == ["word", "clusters", "tagging"]
    assert set(facet_terms(ANCHOR, None)) >= {"biomedical", "clusters", "baseline"}


async def test_the_words_of_the_anchors_method_lift_the_paper_that_uses_them(local_source, embedder):
    """Upstream ties, sentence vectors left out (alpha 1): the paper that uses the words of the anchor's method
    sentences ranks first, the card says so, and a candidate with no abstract is scored, not dropped."""
    ctx = RunContext(source=local_source, embedder=embedder)
    bare = Paper(id="t", title="Dictionaries for gene names")
    items = _even([SAME_PROBLEM, bare, SAME_METHOD])
    params = {"facet": "method", "alpha": 1.0, "lexical": 1.0}
    out = await run_op(ctx, "facet_match", params, **{"in": items, "anchor": [ANCHOR]})
    assert ids(out)[0] == "m"
    words = {it.paper.id: it.evidence.scores[FACET_TERMS] for it in out}
    assert words["m"] > words["b"] >= 0 and words["t"] == 0
    wf = template("sibling", "a", Intent(direction="sibling", facet="method"))
    assert any(p.startswith("uses the words of the anchor's method") for p in why(wf, out[0]))
    # off (the default): the words are neither weighed nor shown
    plain = await run_op(ctx, "facet_match", {**params, "lexical": 0.0}, **{"in": items, "anchor": [ANCHOR]})
    assert ids(plain) == ["b", "t", "m"] and all(FACET_TERMS not in it.evidence.scores for it in plain)


def test_calibrated_matching_lets_every_anchor_sentence_rank_on_the_same_scale():
    """Sentence 1's matches spread widely, sentence 2's narrowly. Raw max-sim lets sentence 1 decide (x first);
    standardised per sentence, y — clearly best on sentence 2 and middling on 1 — comes first."""
    anchor = np.eye(2, dtype=np.float32)
    weights = np.array([0.5, 0.5])

    def cand(s1: float, s2: float) -> np.ndarray:
        return np.array([[s1, 0.0], [0.0, s2]], dtype=np.float32)

    cands = [cand(0.9, 0.2), cand(0.5, 0.35), cand(0.1, 0.3)]
    raw, _ = match_scores(anchor, weights, cands, "max")
    assert int(np.argmax(raw)) == 0
    cal = calibrated(anchor, weights, cands)
    assert int(np.argmax(cal)) == 1
    # a sentence all candidates match equally adds nothing (no division by a zero spread)
    same = calibrated(anchor, weights, [cand(0.5, 0.3), cand(0.5, 0.3)])
    assert np.allclose(same, 0.0)


async def test_calibrated_match_shows_the_plain_similarity_on_the_card(local_source, embedder):
    ctx = RunContext(source=local_source, embedder=embedder)
    inputs = {"in": as_ranked([SAME_PROBLEM, SAME_METHOD, Paper(id="t", title="Dictionaries for gene names")]),
              "anchor": [ANCHOR]}  # fmt: skip
    plain = await run_op(ctx, "facet_match", {"facet": "method"}, **inputs)
    cal = await run_op(ctx, "facet_match", {"facet": "method", "calibrate": True}, **inputs)
    shown = {it.paper.id: it.evidence.scores["facet_match"] for it in plain}
    assert {it.paper.id: it.evidence.scores["facet_match"] for it in cal} == pytest.approx(shown)
    assert 0 < max(shown.values()) <= 1


CITED = Paper(
    id="r",
    title="Class-based n-gram models of natural language",
    abstract="We address the problem of predicting a word from previous words. We group words into classes "
    "by their co-occurrence statistics, and the classes improve a language model.",
)
NEAR_CITED = Paper(
    id="n",
    title="Word classes from co-occurrence statistics",
    abstract="Words are grouped into classes by how they co-occur; the classes help a language model.",
)
FAR_FROM_CITED = Paper(
    id="f",
    title="Annotating a corpus of clinical notes",
    abstract="We describe guidelines for annotating diseases in hospital notes and report agreement.",
)


async def test_the_paper_near_what_the_anchor_cites_ranks_first(local_source, embedder):
    """Upstream ties, sentence vectors left out (alpha 1): the candidate close to a paper the anchor cites comes
    first, a candidate that is one of its references counts as closest, and the card says which evidence."""
    ctx = RunContext(source=local_source, embedder=embedder)
    items = _even([FAR_FROM_CITED, NEAR_CITED, CITED])
    params = {"facet": "method", "alpha": 1.0, "near_refs": 1.0}
    out = await run_op(ctx, "facet_match", params, **{"in": items, "anchor": [ANCHOR], "refs": as_ranked([CITED])})
    assert ids(out) == ["r", "n", "f"]
    near = {it.paper.id: it.evidence.scores[NEAR_REFS] for it in out}
    assert near["r"] == 1.0 and near["n"] > near["f"]
    wf = template("sibling", "a", Intent(direction="sibling", facet="method"))
    assert any(p.startswith("close to a paper the anchor cites") for p in why(wf, out[1]))
    assert not any(p.startswith("close to a paper the anchor cites") for p in why(wf, out[0]))


async def test_no_references_of_the_anchor_leaves_the_order_with_a_note(local_source, embedder):
    ctx = RunContext(source=local_source, embedder=embedder)
    items = _even([FAR_FROM_CITED, NEAR_CITED])
    params = {"facet": "method", "alpha": 1.0, "near_refs": 1.0}
    out = await run_op(ctx, "facet_match", params, **{"in": items, "anchor": [ANCHOR], "refs": []})
    assert ids(out) == ["f", "n"] and all(NEAR_REFS not in it.evidence.scores for it in out)
    assert any("no references of the anchor" in n for n in ctx.notes)


def test_faceted_sibling_search_matches_against_the_anchors_references():
    wf = template("sibling", "acl:P03-1054", Intent(direction="sibling", facet="method"))
    assert ("refs", "refs") in [(e.source, e.port) for e in wf.inputs_of("facet")]
    assert wf.node("facet").params["near_refs"] > 0 and wf.node("facet").params["lexical"] > 0
