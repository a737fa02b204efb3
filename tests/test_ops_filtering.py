"""Filtering operators on real slice papers: each constraint really removes what it should, and only that."""

from __future__ import annotations

import re

import pytest
from pydantic import ValidationError

from tests.ops_helpers import as_ranked, ids, run_op
from workflows.registry import get_operator


@pytest.fixture()
async def citers(ctx):
    """Papers citing the Penn Treebank paper: many years and venues."""
    anchor = await run_op(ctx, "anchor", {"query": "acl:J93-2004"})
    return anchor, await run_op(
        ctx, "citation_expand", {"direction": "citations", "per_paper_limit": 2000}, **{"in": anchor}
    )


async def test_filter_year_range_removes_out_of_range(ctx, citers):
    _, papers = citers
    out = await run_op(ctx, "filter", {"year_min": 2003, "year_max": 2005}, **{"in": papers})
    assert out and all(2003 <= it.paper.year <= 2005 for it in out)
    assert len(out) == sum(1 for it in papers if it.paper.year and 2003 <= it.paper.year <= 2005)


async def test_a_period_left_out_drops_only_its_years(ctx, citers):
    # "not from the 2000s" once kept ONLY the 2000s: a left-out period is its own list of periods
    _, papers = citers
    out = await run_op(ctx, "filter", {"exclude_years": [[2000, 2009], [2015, 2015]]}, **{"in": papers})
    kept = [it for it in papers if not (it.paper.year and (2000 <= it.paper.year <= 2009 or it.paper.year == 2015))]
    assert out and ids(out) == ids(kept) and len(out) < len(papers)


async def test_top_k_orders_the_same_papers_it_keeps(ctx, citers):
    # "newest first" re-orders the list on screen; sorting before the cut would swap in merely new papers
    _, papers = citers
    by_score = await run_op(ctx, "top_k", {"k": 20}, **{"in": papers})
    newest = await run_op(ctx, "top_k", {"k": 20, "order": "newest"}, **{"in": papers})
    oldest = await run_op(ctx, "top_k", {"k": 20, "order": "oldest"}, **{"in": papers})
    cited = await run_op(ctx, "top_k", {"k": 20, "order": "most_cited"}, **{"in": papers})
    assert set(ids(newest)) == set(ids(oldest)) == set(ids(cited)) == set(ids(by_score))
    years = [it.paper.year or 0 for it in newest]
    assert years == sorted(years, reverse=True) and years != [it.paper.year or 0 for it in by_score]
    assert [it.paper.year or 0 for it in oldest] == sorted(years)
    counts = [max(it.paper.citation_count or 0, it.paper.in_corpus_citations or 0) for it in cited]
    assert counts == sorted(counts, reverse=True)


async def test_filter_relative_to_anchor_and_exclude_anchor(ctx, citers):
    anchor, papers = citers
    pool = anchor + papers
    older = await run_op(ctx, "filter", {"relative_to_anchor": "before"}, **{"in": pool, "anchor": anchor})
    assert all(it.paper.year <= 1993 for it in older) and "acl:J93-2004" not in ids(older)
    newer = await run_op(ctx, "filter", {"relative_to_anchor": "after"}, **{"in": pool, "anchor": anchor})
    assert len(newer) == len(papers)  # citers are newer; only the anchor itself is dropped
    kept = await run_op(ctx, "filter", {"exclude_anchor": False}, **{"in": pool, "anchor": anchor})
    assert "acl:J93-2004" in ids(kept)


async def test_filter_venue_uses_the_anthology_id_prefix(ctx, citers):
    _, papers = citers
    out = await run_op(ctx, "filter", {"venues": ["EMNLP"]}, **{"in": papers})
    assert out and all(it.paper.id.startswith("acl:D") for it in out)
    acl = await run_op(ctx, "filter", {"venues": ["ACL"]}, **{"in": papers})
    assert acl and all(it.paper.id.startswith("acl:P") for it in acl)  # not EACL / NAACL / COLING-ACL by name


async def test_filter_leaves_out_a_venue_and_keeps_everything_else(ctx, citers):
    _, papers = citers
    emnlp = await run_op(ctx, "filter", {"venues": ["EMNLP"]}, **{"in": papers})
    rest = await run_op(ctx, "filter", {"exclude_venues": ["EMNLP"]}, **{"in": papers})
    assert emnlp and rest and not set(ids(emnlp)) & set(ids(rest))
    assert len(emnlp) + len(rest) == len(papers)
    both = await run_op(ctx, "filter", {"venues": ["ACL", "EMNLP"], "exclude_venues": ["EMNLP"]}, **{"in": papers})
    assert both and all(it.paper.id.startswith("acl:P") for it in both)


async def test_filter_keeps_a_persons_papers_by_whole_words_of_their_name(ctx, citers):
    _, papers = citers
    names = [a.name for it in papers for a in it.paper.authors if len(a.name.split()) >= 2]
    full = max(set(names), key=names.count)  # the author with the most papers among the citers
    surname = full.split()[-1]
    theirs = await run_op(ctx, "filter", {"authors": [surname]}, **{"in": papers})
    assert theirs and all(any(surname in a.name.split() for a in it.paper.authors) for it in theirs)
    assert len(theirs) == sum(1 for it in papers if any(surname in a.name.split() for a in it.paper.authors))
    exact = await run_op(ctx, "filter", {"authors": [full]}, **{"in": papers})
    assert exact and set(ids(exact)) <= set(ids(theirs))
    cut = surname[:-1]  # part of a name is no name: "Mannin" keeps no paper of Manning's
    partial = await run_op(ctx, "filter", {"authors": [cut]}, **{"in": papers})
    assert all(any(cut in a.name.split() for a in it.paper.authors) for it in partial)
    assert not set(ids(partial)) & set(ids(exact))


async def test_filter_terms_and_ids(ctx, citers):
    _, papers = citers
    parsing = await run_op(ctx, "filter", {"include_terms": ["parsing"], "terms_in": "title"}, **{"in": papers})
    assert parsing and all("parsing" in it.paper.title.lower() for it in parsing)
    rest = await run_op(ctx, "filter", {"exclude_terms": ["parser"], "terms_in": "title"}, **{"in": papers})
    assert not any(re.search(r"\bparsers?\b", it.paper.title, re.I) for it in rest)
    gone = await run_op(ctx, "filter", {"exclude_ids": ids(papers)[:3]}, **{"in": papers})
    assert ids(gone) == ids(papers)[3:]


async def test_leaving_out_a_term_leaves_out_its_other_forms(ctx, citers):
    # "not dependency parsing" kept "… Dependency Parsers" and "… Dependency Parse Trees" (one form only matched)
    _, papers = citers
    form = re.compile(r"\bdependency (pars(?:e|es|ing|er|ers))\b", re.I)
    have = [it for it in papers if form.search(it.paper.title)]
    assert len({form.search(it.paper.title).group(1).lower() for it in have}) >= 2  # the titles use several forms
    rest = await run_op(ctx, "filter", {"exclude_terms": ["dependency parsing"], "terms_in": "title"}, **{"in": papers})
    assert not any(form.search(it.paper.title) for it in rest)
    kept = set(ids(rest))
    gone = [it.paper.title for it in papers if it.paper.id not in kept]
    assert all(re.search(r"\bdependency\W+pars\w*", t, re.I) for t in gone)  # and nothing else


def _cited(it) -> int:
    return max(it.paper.citation_count or 0, it.paper.in_corpus_citations or 0)


async def test_filter_min_citations_and_abstract(ctx, citers):
    _, papers = citers
    # unknown is not zero: a paper no index counted stays (its citing papers in the corpus are only a lower
    # bound), and the step says how many it kept so; with no_count "drop" only papers known to pass remain
    cited = await run_op(ctx, "filter", {"min_citations": 20}, **{"in": papers})
    uncounted = [it for it in cited if it.paper.citation_count is None and _cited(it) < 20]
    assert cited and all(_cited(it) >= 20 for it in cited if it not in uncounted)
    assert uncounted and any(f"{len(uncounted)} papers have no citation count" in n for n in ctx.notes)
    known = await run_op(ctx, "filter", {"min_citations": 20, "no_count": "drop"}, **{"in": papers})
    assert known and all(_cited(it) >= 20 for it in known)
    assert len(known) == len(cited) - len(uncounted)
    with_abs = await run_op(ctx, "filter", {"has_abstract": True}, **{"in": papers})
    assert all(it.paper.abstract for it in with_abs)


def test_filter_params_are_checked():
    params = get_operator("filter").Params
    with pytest.raises(ValidationError, match="after year_max"):
        params.model_validate({"year_min": 2010, "year_max": 2000})
    with pytest.raises(ValidationError):
        params.model_validate({"year": 2000})


async def test_top_k_and_above(ctx):
    papers = as_ranked(await ctx.source.get_papers(["acl:P02-1040", "acl:P03-1054", "acl:J93-2004"]))
    assert ids(await run_op(ctx, "top_k", {"k": 2}, **{"in": papers})) == ids(papers)[:2]
    assert ids(await run_op(ctx, "above", {"threshold": 0.5}, **{"in": papers})) == ids(papers)[:2]
    papers[2].evidence.scores["coupling"] = 3.0
    assert ids(await run_op(ctx, "above", {"threshold": 1, "feature": "coupling"}, **{"in": papers})) == [
        "acl:J93-2004"
    ]


async def test_top_k_folds_two_records_of_one_work_into_the_first(ctx):
    """The corpus holds some papers twice (e.g. Brill's tagger at ANLP and at the Speech and NL workshop,
    1992); a researcher should see one entry that names both, and lose no other paper."""
    from pilot.models import Author, Evidence, Paper, RankedPaper

    def item(pid, title, first, venue, node):
        paper = Paper(id=pid, title=title, year=1992, venue=venue, authors=[Author(name=first)])
        return RankedPaper(paper=paper, evidence=Evidence(nodes=[node]))

    papers = [
        item("a:1", "A Simple Rule-Based Part Of Speech Tagger", "Brill, Eric", "ANLP", "coupled"),
        item("b:2", "Another paper", "Eric Brill", "ANLP", "coupled"),
        item("a:3", "A simple rule-based part-of-speech tagger", "Eric Brill", "Workshop On Speech", "cocited"),
        item(
            "c:4", "A Simple Rule-Based Part Of Speech Tagger", "Someone Else", "ACL", "coupled"
        ),  # same title, not the same work
    ]
    out = await run_op(ctx, "top_k", {"k": 10}, **{"in": papers})
    assert ids(out) == ["a:1", "b:2", "c:4"]
    assert (
        out[0].evidence.nodes == ["coupled", "cocited"]
        and "also recorded as a:3 (Workshop On Speech, 1992)" in out[0].evidence.reason
    )
    assert ids(await run_op(ctx, "top_k", {"k": 10, "merge_same_work": False}, **{"in": papers})) == [
        "a:1",
        "b:2",
        "a:3",
        "c:4",
    ]


async def test_the_kind_of_publication_is_read_from_the_venue_and_the_anthology_id(ctx):
    from pilot.models import Paper

    papers = as_ranked(
        [
            Paper(id="acl:J93-2004", title="A treebank", venue="Computational Linguistics", year=1993),
            Paper(id="acl:P05-1012", title="A parser", venue="ACL", year=2005),
            Paper(id="acl:W06-2920", title="A shared task", venue="CoNLL Workshop", year=2006),
            Paper(id="s2:1", title="No venue", year=2019),
        ]
    )
    journal = await run_op(ctx, "filter", {"publication_kinds": ["journal"]}, **{"in": papers})
    assert ids(journal) == ["acl:J93-2004"]
    no_workshops = ["journal", "conference", "preprint", "unknown"]
    out = await run_op(ctx, "filter", {"publication_kinds": no_workshops}, **{"in": papers})
    assert ids(out) == ["acl:J93-2004", "acl:P05-1012", "s2:1"]  # "no workshop papers" keeps the unknown one
