"""Entity operators on the offline corpus slice, checked against the slice's own rows."""

from __future__ import annotations

import pytest

from pilot.domain import profile
from pilot.models import Answer, Author, Org, Paper, RankedPaper, Venue
from pilot.reading.lexicon import org_matches
from pilot.sources.base import NotFound, NotSupported, Source
from pilot.venues import at_venue
from tests.ops_helpers import at_venue_row, authored, run_op, wrote_at_org_on_topic
from workflows.operator import OperatorError, RunContext
from workflows.ops.entities import topic_matches
from workflows.registry import get_operator

venue_matches = profile().venue_name_matches


# --- matching rules ----------------------------------------------------------------------------------


def test_venue_match_is_whole_word_and_knows_aliases():
    assert venue_matches("ACL", "ACL")
    assert venue_matches("ACL", "COLING-ACL")
    assert not venue_matches("ACL", "NAACL")
    assert not venue_matches("ACL", "HLT-NAACL")
    assert venue_matches("NeurIPS", "NIPS")
    assert venue_matches("acl", "Annual Meeting Of The Association For Computational Linguistics")
    assert venue_matches(None, None) and not venue_matches("ACL", None)


def test_person_matching_is_forgiving_about_first_names_only():
    from workflows.ops.entities import person_matches

    assert person_matches("Chris Manning", "Christopher D. Manning")
    assert person_matches("manning", "Christopher D. Manning")
    assert person_matches("Jan Hajič", "Jan Hajic")
    assert not person_matches("Dan Manning", "Christopher D. Manning")
    assert not person_matches("", "Christopher D. Manning")


def test_topic_and_org_matching():
    p = Paper(id="x", title="Embedding Knowledge Graphs", abstract=None)
    assert topic_matches("knowledge graph", p) and topic_matches("graph embeddings", p)
    assert not topic_matches("knowledge base", p)
    assert org_matches("Tsinghua", "Dept. of Computer Science, Tsinghua University")
    assert not org_matches("MIT", "Smith College")


# --- authors -----------------------------------------------------------------------------------------


async def test_search_author_puts_the_exact_name_first(ctx):
    found = await run_op(ctx, "search_author", dict(name="christopher d manning"))
    assert found and found[0].name == "Christopher D. Manning"
    assert found[0].canonical_url == "corpus://author/author:christopher-d-manning"


class _TwoRecords(Source):
    """One person the source holds as two records it cannot tell are one: a short one under the exact name
    asked (ML venues) and the well-known one with a middle name (NLP venues)."""

    name = "two-records"

    async def search_authors(self, name: str, limit: int = 10) -> list[Author]:
        def rec(n: str, papers: int, venue: str, coauthor: str) -> Author:
            key = n.lower().replace(" ", "-")
            return Author(
                id=f"author:{key}", name=n, url=f"corpus://author/author:{key}", paper_count=papers,
                venues=[venue], coauthors=[coauthor],
            )  # fmt: skip

        return [rec("Michael Collins", 7, "NeurIPS", "Ben Taskar"), rec("Michael John Collins", 35, "ACL", "Terry Koo")]


async def test_search_author_answers_for_the_best_known_record_when_records_are_kept_apart():
    # "Michael Collins's coauthors" answered for a 7-paper record while the note said it was kept apart from
    # the 35-paper one: the note and the answer named different people
    ctx = RunContext(source=_TwoRecords())
    found = await run_op(ctx, "search_author", dict(name="Michael Collins"))
    assert [a.name for a in found] == ["Michael John Collins", "Michael Collins"]
    assert any("kept Michael Collins (7 papers) apart from Michael John Collins" in n for n in ctx.notes)


async def test_institutions_are_counted_once_per_paper_under_one_spelling():
    # "Carnegie Mellon University" and "Carnegie-Mellon University" were two institutions with a paper each;
    # a department and its university were two as well
    def paper(i: int, *affiliations: str) -> RankedPaper:
        authors = [Author(name=f"A{i}{j}", affiliation=a) for j, a in enumerate(affiliations)]
        return RankedPaper(paper=Paper(id=f"t:{i}", title=f"Paper {i}", authors=authors))

    papers = [
        paper(1, "Carnegie Mellon University", "Language Technologies Institute, Carnegie-Mellon University"),
        paper(2, "Carnegie-Mellon University, Pittsburgh, PA"),
        paper(3, "School of Computer Science, Fudan University"),
        paper(4),
    ]
    ctx = RunContext(source=Source())
    groups = await run_op(ctx, "paper_groups", {"by": "org"}, papers=papers)
    assert [(g.name, g.paper_count) for g in groups] == [("Carnegie Mellon University", 2), ("Fudan University", 1)]
    assert any("3 of the 4 papers name their authors' institutions" in n for n in ctx.notes)


async def test_search_author_unknown_name_is_a_named_failure(ctx):
    with pytest.raises(NotFound, match="Zzyzx Qwerty"):
        await run_op(ctx, "search_author", dict(name="Zzyzx Qwerty"))


@pytest.mark.parametrize("name", ["Kishore Zzyzx", "Salim Table", "DROP TABLE"])
async def test_search_author_never_answers_with_someone_of_another_surname(ctx, name):
    with pytest.raises(NotFound, match="no author (?:named|matching)"):
        await run_op(ctx, "search_author", dict(name=name))


async def test_author_papers_filters_by_venue_and_years(ctx, corpus_slice_rows):
    authors = await run_op(ctx, "search_author", dict(name="Christopher D. Manning"))
    got = await run_op(ctx, "author_papers", dict(venue="ACL", year_min=2005, year_max=2010), authors=authors)
    expected = {
        r["id"]
        for r in authored(corpus_slice_rows, "Christopher D. Manning")
        if r["year"] and 2005 <= r["year"] <= 2010 and at_venue_row(r, "ACL")
    }
    assert expected, "the slice has such papers"
    assert {rp.paper.id for rp in got} == expected
    assert all(isinstance(rp, RankedPaper) for rp in got)
    # most cited first
    impacts = [rp.score for rp in got]
    assert impacts == sorted(impacts, reverse=True)


async def test_author_papers_by_explicit_id_and_missing_input(ctx, corpus_slice_rows):
    got = await run_op(ctx, "author_papers", dict(author_id="author:dan-klein"))
    assert {rp.paper.id for rp in got} == {r["id"] for r in authored(corpus_slice_rows, "Dan Klein")}
    with pytest.raises(OperatorError, match="connect search_author"):
        await run_op(ctx, "author_papers", {})


async def test_author_detail_takes_the_author_from_the_edge(ctx, corpus_slice_rows):
    authors = await run_op(ctx, "search_author", dict(name="Dan Klein"))
    [detail] = await run_op(ctx, "author_detail", {}, authors=authors)
    assert detail.name == "Dan Klein"
    assert detail.paper_count == len(authored(corpus_slice_rows, "Dan Klein"))


def test_year_range_must_be_ordered():
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="after year_max"):
        get_operator("author_papers").Params.model_validate({"year_min": 2010, "year_max": 2000})


# --- venues ------------------------------------------------------------------------------------------


async def test_search_venue_prefers_whole_word_matches(ctx):
    found = await run_op(ctx, "search_venue", dict(name="ACL"))
    assert found and venue_matches("ACL", found[0].name)
    [detail] = await run_op(ctx, "venue_detail", {}, venues=found)
    assert detail.name == found[0].name and detail.paper_count


async def test_venue_papers_in_a_year_range(ctx, corpus_slice_rows):
    venues = await run_op(ctx, "search_venue", dict(name="EMNLP", limit=1))
    got = await run_op(ctx, "venue_papers", dict(year_min=2009, year_max=2010, limit=500), venues=venues)
    expected = {r["id"] for r in corpus_slice_rows if r["venue"] == venues[0].name and r["year"] in (2009, 2010)}
    assert expected and {rp.paper.id for rp in got} == expected


async def test_a_cut_venue_list_tells_the_answer_how_many_matched(ctx, corpus_slice_rows):
    venues = await run_op(ctx, "search_venue", dict(name="EMNLP", limit=1))
    everything = await run_op(ctx, "venue_papers", dict(year_min=2009, year_max=2010, limit=500), venues=venues)
    cut = await run_op(ctx, "venue_papers", dict(year_min=2009, year_max=2010, limit=2), venues=venues)
    assert len(everything) > 2 and len(cut) == 2
    answer = await run_op(ctx, "synthesize_answer", dict(template="paper_list"), entities=[venues], papers=[cut])
    assert f"{len(everything)} papers found (the 2 most cited were read)" in answer.answer


async def test_venue_papers_on_a_topic(ctx, corpus_slice_rows):
    got = await run_op(ctx, "venue_papers", dict(venue="EMNLP", topic="translation", limit=500))
    assert got
    for rp in got:
        assert at_venue(rp.paper, "EMNLP") and topic_matches("translation", rp.paper)


# --- organisations -----------------------------------------------------------------------------------


async def test_org_search_detail_and_researchers_on_a_topic(ctx, corpus_slice_rows):
    orgs = await run_op(ctx, "search_org", dict(name="Stanford University"))
    assert orgs[0].name == "Stanford University"
    [detail] = await run_op(ctx, "org_detail", {}, orgs=orgs)
    assert detail.paper_count and detail.author_count
    people = await run_op(ctx, "org_authors", dict(topic="learning", limit=50), orgs=orgs)
    assert people
    for person in people:
        # each has a paper on the topic written while at Stanford, according to the raw rows
        assert wrote_at_org_on_topic(corpus_slice_rows, person.name, "Stanford University", "learning"), person.name


# --- a source that cannot answer ---------------------------------------------------------------------


async def test_unsupported_source_raises_typed_error():
    ctx = RunContext(source=Source())
    with pytest.raises(NotSupported, match="author search"):
        await run_op(ctx, "search_author", dict(name="Ada Lovelace"))


# --- synthesize_answer ---------------------------------------------------------------------------------


def _paper(i: int, **kw) -> Paper:
    return Paper(id=f"t:{i}", title=f"Paper {i}", year=2000 + i, venue="ACL", url=f"https://x.org/{i}", **kw)


async def test_synthesize_template_cites_only_inputs(ctx):
    from pilot.eval.kg_metrics import check_answer_format

    author = Author(id="author:a", name="Ada Lovelace", url="corpus://author/author:a")
    papers = [RankedPaper(paper=_paper(i, citation_count=i)) for i in range(1, 4)]
    ans = await run_op(ctx, "synthesize_answer", dict(template="most_cited"), entities=[[author]], papers=[papers])
    assert isinstance(ans, Answer)
    assert check_answer_format(ans).ok
    assert "Paper 3" in ans.answer and "published at ACL in 2003" in ans.answer
    assert set(ans.reference.values()) == {"corpus://author/author:a", "https://x.org/3"}


async def test_synthesize_rejects_unknown_template():
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="Input should be .auto., .paper_list."):
        get_operator("synthesize_answer").Params.model_validate({"template": "poem"})


@pytest.mark.parametrize(
    "reply, expect",
    [
        # a valid answer is kept as the model wrote it
        ('{"answer": "Ada wrote Paper 1 [1].", "reference": {"[1]": "https://x.org/1"}}', "Ada wrote Paper 1 [1]."),
        # an invented URL is dropped and the rest renumbered
        (
            '{"answer": "See [1] and [2].", "reference": {"[1]": "https://evil.example", "[2]": "https://x.org/2"}}',
            "See and [1].",
        ),
        # grouped citations are split
        (
            '{"answer": "Both [1, 2].", "reference": {"[1]": "https://x.org/1", "[2]": "https://x.org/2"}}',
            "Both [1][2].",
        ),
    ],
)
async def test_synthesize_llm_answer_is_checked_and_repaired(ctx, reply, expect):
    from pilot.eval.kg_metrics import check_answer_format
    from pilot.llm import LLM

    llm_ctx = RunContext(source=ctx.source, llm=LLM("openai/gpt-4o-mini", mock_response=reply))
    papers = [RankedPaper(paper=_paper(i)) for i in (1, 2)]
    ans = await run_op(llm_ctx, "synthesize_answer", dict(question="what did Ada write?"), papers=[papers])
    assert ans.answer == expect
    assert check_answer_format(ans).ok
    assert set(ans.reference.values()) <= {"https://x.org/1", "https://x.org/2"}


async def test_synthesize_llm_garbage_falls_back_to_template(ctx):
    from pilot.llm import LLM

    llm_ctx = RunContext(source=ctx.source, llm=LLM("openai/gpt-4o-mini", mock_response="I think so."))
    papers = [RankedPaper(paper=_paper(1))]
    ans = await run_op(llm_ctx, "synthesize_answer", {}, papers=[papers])
    assert ans.reference == {"[1]": "https://x.org/1"} and "Paper 1" in ans.answer
    assert any("template" in n for n in llm_ctx.notes)


async def test_synthesize_uncited_llm_answer_is_replaced(ctx):
    from pilot.llm import LLM

    reply = '{"answer": "Ada is great.", "reference": {"[1]": "https://made.up/"}}'
    llm_ctx = RunContext(source=ctx.source, llm=LLM("openai/gpt-4o-mini", mock_response=reply))
    venue = Venue(id="venue:acl", name="ACL", url="corpus://venue/venue:acl", paper_count=3)
    ans = await run_op(llm_ctx, "synthesize_answer", {}, entities=[[venue]])
    assert ans.reference == {"[1]": "corpus://venue/venue:acl"} and "ACL [1]" in ans.answer


async def test_synthesize_llm_answer_without_citations_is_replaced(ctx):
    from pilot.llm import LLM

    llm_ctx = RunContext(
        source=ctx.source, llm=LLM("openai/gpt-4o-mini", mock_response='{"answer": "None", "reference": {}}')
    )
    venue = Venue(id="venue:acl", name="ACL", url="corpus://venue/venue:acl", paper_count=3)
    ans = await run_op(llm_ctx, "synthesize_answer", {}, entities=[[venue]])
    assert ans.reference == {"[1]": "corpus://venue/venue:acl"} and "ACL [1]" in ans.answer
    assert any("cites nothing" in n for n in llm_ctx.notes)


async def test_synthesize_with_nothing_found_says_so(ctx):
    org = Org(id="org:x", name="Nowhere Institute", url="corpus://org/org:x")
    ans = await run_op(
        ctx, "synthesize_answer", dict(template="org_researchers", scope="working on telepathy"), entities=[[org], []]
    )
    assert ans.answer.startswith("Researchers at Nowhere Institute [1] working on telepathy: none found")
    assert ans.reference == {"[1]": "corpus://org/org:x"}
