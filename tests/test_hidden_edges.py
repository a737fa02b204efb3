"""The benchmark's hidden-edges rule, applied by a wrapper around the real local source (corpus slice)."""

from __future__ import annotations

import pytest

from pilot.sources.base import NotFound
from pilot.sources.hidden import HiddenEdgesSource

DRAFT = "acl:D08-1048"  # 10 in-slice references and some citers
BLEU = "acl:P02-1040"  # many in-slice citers


async def _counts(source, ids):
    return {p.id: p.in_corpus_citations for p in await source.get_papers(sorted(ids))}


async def test_anchor_outgoing_hides_the_anchors_references(local_source):
    hidden = HiddenEdgesSource(local_source, DRAFT, "anchor_outgoing")
    refs = {p.id for p in await local_source.references(DRAFT, limit=1000)}
    assert len(refs) >= 5
    assert await hidden.references(DRAFT) == []
    assert (await hidden.get_paper(DRAFT)).references == []
    before, after = await _counts(local_source, refs), await _counts(hidden, refs)
    assert after == {pid: n - 1 for pid, n in before.items()}
    for pid in refs:
        assert DRAFT in {p.id for p in await local_source.citations(pid, limit=1000)}
        citing = await hidden.citations(pid, limit=1000)
        assert DRAFT not in {p.id for p in citing}
        assert [p.in_corpus_citations for p in citing] == sorted((p.in_corpus_citations for p in citing), reverse=True)
    # the counts are patched on every path a paper can come out of
    ref_title = (await local_source.get_paper(next(iter(refs)))).title
    hit = next(h for h in await hidden.search_papers(ref_title, limit=5, mode="lexical") if h.paper.id in refs)
    assert hit.paper.in_corpus_citations == before[hit.paper.id] - 1
    listed = {p.id: p.in_corpus_citations for p in await hidden.match_paper(ref_title)}
    assert listed[hit.paper.id] == before[hit.paper.id] - 1


async def test_anchor_outgoing_keeps_edges_into_the_anchor(local_source):
    hidden = HiddenEdgesSource(local_source, DRAFT, "anchor_outgoing")
    citers = [p.id for p in await local_source.citations(DRAFT, limit=1000)]
    assert citers
    assert [p.id for p in await hidden.citations(DRAFT, limit=1000)] == citers
    assert (await hidden.get_paper(DRAFT)).in_corpus_citations == (
        await local_source.get_paper(DRAFT)
    ).in_corpus_citations
    assert DRAFT in (await hidden.get_paper(citers[0])).references


async def test_anchor_incoming_hides_who_cites_the_anchor(local_source):
    hidden = HiddenEdgesSource(local_source, BLEU, "anchor_incoming")
    citers = {p.id for p in await local_source.citations(BLEU, limit=10_000)}
    assert len(citers) >= 20
    assert await hidden.citations(BLEU) == []
    full = (await local_source.get_paper(BLEU)).in_corpus_citations
    assert (await hidden.get_paper(BLEU)).in_corpus_citations == max(0, full - len(citers))
    for pid in sorted(citers)[:10]:
        assert BLEU in (await local_source.get_paper(pid)).references
        assert BLEU not in (await hidden.get_paper(pid)).references
        assert BLEU not in {p.id for p in await hidden.references(pid, limit=1000)}
    # the anchor's own references are untouched
    assert await hidden.references(BLEU) == await local_source.references(BLEU)


async def test_no_hidden_edges_and_unknown_anchor_pass_through(local_source):
    for wrapper in (
        HiddenEdgesSource(local_source, DRAFT, None),
        HiddenEdgesSource(local_source, "acl:X99-9999", "anchor_outgoing"),
    ):
        assert await wrapper.references(DRAFT) == await local_source.references(DRAFT)
        assert await wrapper.get_papers([DRAFT, BLEU]) == await local_source.get_papers([DRAFT, BLEU])
    with pytest.raises(NotFound):
        await HiddenEdgesSource(local_source, DRAFT, "anchor_outgoing").references("acl:X99-9999")
    with pytest.raises(ValueError, match="anchor_outgoing"):
        HiddenEdgesSource(local_source, DRAFT, "both")


async def test_for_case_reads_anchor_and_mode_from_a_benchmark_case(local_source, bench_cases):
    case = next(c for c in bench_cases if c["hidden_edges"] == "anchor_outgoing")
    wrapper = HiddenEdgesSource.for_case(local_source, case)
    assert (wrapper.anchor_id, wrapper.mode) == (case["anchor_paper_id"], "anchor_outgoing")
    assert wrapper.stats is local_source.stats  # source-specific extras stay reachable
