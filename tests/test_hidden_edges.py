"""The benchmark's hiding rules (hidden edges, hidden papers), applied by wrappers around the real local
source (corpus slice)."""

from __future__ import annotations

import pytest

from pilot.sources.base import NotFound
from pilot.sources.hidden import HiddenEdgesSource, HiddenPapersSource
from pilot.store.text import author_id

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


# --- hidden papers (topic cases): the answer key does not exist for the case ---


async def test_a_hidden_paper_is_never_returned_and_its_edges_are_gone(local_source):
    hidden = HiddenPapersSource(local_source, [DRAFT])
    paper = await local_source.get_paper(DRAFT)
    refs = {p.id for p in await local_source.references(DRAFT, limit=1000)}
    citers = {p.id for p in await local_source.citations(DRAFT, limit=1000)}
    assert len(refs) >= 5 and citers
    # not searchable: its own title finds it first in the full source, and not at all here; lists keep their length
    for mode in ("lexical", "dense", "hybrid"):
        assert (await local_source.search_papers(paper.title, limit=10, mode=mode))[0].paper.id == DRAFT
        hits = await hidden.search_papers(paper.title, limit=10, mode=mode)
        assert DRAFT not in {h.paper.id for h in hits} and len(hits) == 10
    assert DRAFT not in {p.id for p in await hidden.match_paper(paper.title)}
    assert DRAFT not in {p.id for p in await hidden.match_paper(DRAFT)}
    assert [p.id for p in await hidden.get_papers([DRAFT, BLEU])] == [BLEU]
    with pytest.raises(NotFound):
        await hidden.get_paper(DRAFT)
    with pytest.raises(NotFound):
        await hidden.references(DRAFT)
    with pytest.raises(NotFound):
        await hidden.citations(DRAFT)
    assert DRAFT not in {p.id for p in await hidden.author_papers(author_id(paper.authors[0].name))}
    assert DRAFT not in {p.id for p in await hidden.recommend(sorted(refs)[:3], limit=100)}
    # every edge from it: its references lose it as a citer and one in-corpus citation
    before, after = await _counts(local_source, refs), await _counts(hidden, refs)
    assert after == {pid: n - 1 for pid, n in before.items()}
    for pid in refs:
        citing = await hidden.citations(pid, limit=1000)
        assert DRAFT not in {p.id for p in citing}
        assert {p.id for p in citing} == {p.id for p in await local_source.citations(pid, limit=1000)} - {DRAFT}
    # every edge to it: its citers no longer list it, whichever call returns them
    for pid in citers:
        assert DRAFT in (await local_source.get_paper(pid)).references
        assert DRAFT not in (await hidden.get_paper(pid)).references
        assert DRAFT not in {p.id for p in await hidden.references(pid, limit=1000)}


async def test_hidden_papers_for_case_and_other_papers_pass_through(local_source):
    hidden = HiddenPapersSource.for_case(local_source, {"hidden_paper_ids": [DRAFT]})
    assert hidden.hidden == {DRAFT} and hidden.stats is local_source.stats
    # a paper with no edge to the hidden one comes out unchanged
    assert await hidden.references(BLEU) == await local_source.references(BLEU)
    assert await hidden.get_papers([BLEU]) == await local_source.get_papers([BLEU])
    with pytest.raises(NotFound):
        await hidden.references("acl:X99-9999")


async def test_hidden_papers_linked_asks_once_and_drops_the_hidden_paper_from_every_list(local_source):
    # ``linked`` is how expansions ask for many papers' lists at once (one batch request on Semantic Scholar):
    # the hidden paper's own list fails as unknown, it is gone from its citers' reference lists and its
    # references' citer lists, and the inner source is asked once, for the visible papers only.
    calls: list[list[str]] = []

    inner_linked = local_source.linked

    async def counted(ids, direction, limit=100, progress=None):
        calls.append(list(ids))
        return await inner_linked(ids, direction, limit, progress)

    refs = sorted(p.id for p in await local_source.references(DRAFT, limit=1000))[:4]
    citers = sorted(p.id for p in await local_source.citations(DRAFT, limit=1000))[:4]
    hidden = HiddenPapersSource(local_source, [DRAFT])
    local_source.linked = counted  # the network edge of this wrapper: what it asks the inner source
    try:
        up = await hidden.linked([DRAFT, *citers], "references", limit=1000)
        down = await hidden.linked([DRAFT, *refs], "citations", limit=1000)
    finally:
        del local_source.linked
    assert calls == [citers, refs]
    assert isinstance(up.failed[DRAFT], NotFound) and isinstance(down.failed[DRAFT], NotFound)
    assert DRAFT not in up.found and DRAFT not in down.found
    for pid in citers:
        full = {p.id for p in await local_source.references(pid, limit=1000)}
        assert DRAFT in full and {p.id for p in up.found[pid]} == full - {DRAFT}
    for pid in refs:
        full = {p.id for p in await local_source.citations(pid, limit=1000)}
        assert DRAFT in full and {p.id for p in down.found[pid]} == full - {DRAFT}
