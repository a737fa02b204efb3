"""Conversations the way researchers have them, on a corpus slice with named papers and real people added:
new searches after results, papers called by their names, topics, few questions, honest coverage, and
authors and venues under their many spellings. Papers, people and topics are others than the issue's.
"""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from pilot.models import Paper
from pilot.people import variant
from pilot.runtime import Runtime
from pilot.session import Session
from pilot.settings import Settings
from pilot.venues import at_venue

MAMBA = "pc:colm2024:tEYskw1VY2"  # "Mamba: Linear-Time Sequence Modeling …" (2024, well cited)
MAMBA_OTHER = "pc:aaai2021:02620"  # "MAMBA: Multi-level Aggregation via Memory Bank …" (2021, uncited)
CCNET = "pc:iccv2019:CCNet: Criss-Cross Attention for Semantic Segmentation"
CCNET_OTHER = "pc:acml2018:c0f6090d00"
SALICON = ("pc:cvpr2015:56e0bc4139", "pc:iccv2015:fee80fd955")  # two papers named SALICON, both well known
PARSING = "acl:P03-1054"  # "Accurate Unlexicalized Parsing" (in the slice, with its neighbourhood)
TAGGING = "acl:N03-1033"  # "Feature-Rich Part-of-Speech Tagging with a Cyclic Dependency Network"
HOMONYM_ROWS = ("pc:cvpr2016:16032bd672", "pc:cvpr2016:1d7e17299a", "pc:cvpr2016:319cd49659")


def _is_litman(name: str) -> bool:
    from pilot.store.text import display_name

    return variant(display_name(name), "Diane Litman")


@pytest.fixture(scope="module")
def named_rows(shared: Path, corpus_slice_rows: list[dict]) -> list[dict]:
    """The slice, plus named papers, every paper of Diane (J.) Litman, and a synthetic homonym: three
    computer-vision papers whose first author is renamed "D. Litman" (another person, same initial)."""
    wanted = {MAMBA, MAMBA_OTHER, CCNET, CCNET_OTHER, *SALICON, *HOMONYM_ROWS}
    extra = []
    with gzip.open(shared / "corpus" / "papers.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            if r["id"] in wanted or any(_is_litman(a["name"]) for a in r["authors"]):
                extra.append(r)
    have = {r["id"] for r in corpus_slice_rows}
    rows = corpus_slice_rows + [r for r in extra if r["id"] not in have]
    out = []
    for r in rows:
        if r["id"] in HOMONYM_ROWS:
            r = {**r, "authors": [{**r["authors"][0], "name": "D. Litman"}, *r["authors"][1:]]}
        out.append(r)
    return out


@pytest.fixture(scope="module")
def runtime(shared: Path, named_rows: list[dict], tmp_path_factory) -> Runtime:
    from pilot.sources.local import LocalCorpusSource
    from tests.conftest import corpus_with_vectors

    d = tmp_path_factory.mktemp("named-corpus")
    corpus, vectors = corpus_with_vectors(shared, named_rows, d)
    source = LocalCorpusSource.open(corpus, d / "cache", vectors=vectors, progress=False)
    return Runtime.for_source(source, Settings(cache_dir=d / "cache", max_turns=4))


async def _settle(s: Session, reply, limit: int = 6):
    """Answer every question before the first results with "no preference"; (reply, questions answered)."""
    n = 0
    while reply.question is not None and not reply.results and n < limit:
        reply = await s.choose(len(reply.question.options) - 1)
        n += 1
    return reply, n


# --- a new request is a new search ------------------------------------------------------------------


async def test_a_new_request_after_results_starts_a_new_search(runtime):
    s = Session(runtime)
    reply, _ = await _settle(s, await s.user_says(f"Who has built on {PARSING}?"))
    assert reply.results and s.anchor.id == PARSING
    reply = await s.user_says("Papers that build on CCNet after 2020")
    assert s.last_message.kind == "new_search" and s.anchor.id == CCNET
    assert s.intent.direction == "successor" and s.intent.year_min == 2021
    assert len(s.versions) <= 1  # a new search, not version 2 of the old one
    reply = await s.user_says("Which papers did Diane Litman publish at NAACL?")
    assert s.last_message.kind == "entity" and reply.answer is not None and s.anchor is None


# --- papers named as researchers name them --------------------------------------------------------------


async def test_a_name_one_paper_clearly_introduced_is_taken_and_said(runtime):
    s = Session(runtime)
    reply = await s.user_says("What came before Mamba?")
    assert s.anchor is not None and s.anchor.id == MAMBA
    assert s.intent.direction == "predecessor"  # "came before" is the direction, never part of the name
    assert any("introduced Mamba" in n and "1 other paper" in n for n in reply.notes), reply.notes


async def test_the_paper_of_the_same_name_from_another_year_replaces_the_one_taken(runtime):
    # "I mean the 2021 one" was searched as the topic "2021 one", and the direction chosen was lost
    s = Session(runtime)
    reply, _ = await _settle(s, await s.user_says("What came before Mamba?"))
    assert reply.results and s.anchor.id == MAMBA
    reply = await s.user_says("no, I mean the 2021 one")
    assert s.last_message.kind == "new_search" and s.anchor is not None and s.anchor.id == MAMBA_OTHER
    assert s.intent.direction == "predecessor" and any("the one from 2021" in n for n in reply.notes)
    # a year no paper of that name is from: said, and the search on screen stays
    before = [r.paper.id for r in s.results] if s.results else None
    reply = await s.user_says("sorry, the 2019 paper")
    assert "No paper called “Mamba” from 2019" in reply.message and "2021, 2024" in reply.message
    assert s.anchor.id == MAMBA_OTHER and ([r.paper.id for r in s.results] if s.results else None) == before
    # the year of the paper already searched: nothing to switch to
    await s.user_says("the one from 2021")
    assert s.anchor.id == MAMBA_OTHER and "already" in s.history[-1]["content"]
    reply = await s.user_says("the 2024 one")
    assert s.anchor.id == MAMBA and s.intent.direction == "predecessor"


async def test_a_name_two_papers_carry_equally_is_asked_with_the_better_known_first(runtime):
    s = Session(runtime)
    reply = await s.user_says("papers similar to SALICON")
    assert reply.question is not None and reply.question.slot == "anchor"
    ids = [o.sets.get("anchor_id") for o in reply.question.options if o.sets]
    assert set(ids) == set(SALICON) and ids[0] == SALICON[0]  # 907 vs 729 citations


# --- honest coverage ----------------------------------------------------------------------------------


async def test_a_title_the_source_does_not_hold_is_said_to_be_missing(runtime):
    s = Session(runtime)
    reply = await s.user_says('What came after "Dropout: A Simple Way to Prevent Neural Networks from Overfitting"?')
    assert "not in the source" in reply.message and "papers from" in reply.message  # and what the source holds
    assert reply.candidates == [] and s.anchor is None and not reply.results
    assert reply.question is not None and reply.question.slot == "fallback"
    reply, _ = await _settle(s, await s.choose(0))  # "yes, search papers about its words"
    assert s.anchor is None and s.intent.topic and reply.results


async def test_an_unquoted_title_the_source_lacks_is_said_missing_before_near_misses_are_offered(runtime):
    # typed as a title (long, capitalised) but held by no paper: say so, then offer the near misses as
    # what they are — other papers sharing its words — never as if they were the paper
    s = Session(runtime)
    reply = await s.user_says(
        "What came after Feature-Rich Part-of-Speech Tagging with Bidirectional Dependency Networks?"
    )
    assert "not in the source under that title" in reply.message and s.anchor is None and not reply.results
    assert reply.question is not None and reply.question.slot == "anchor"
    assert TAGGING in [o.sets.get("anchor_id") for o in reply.question.options]
    # picking the near miss is still possible: the user may have misremembered the title
    pick = next(i for i, o in enumerate(reply.question.options) if o.sets.get("anchor_id") == TAGGING)
    await _settle(s, await s.choose(pick))
    assert s.anchor is not None and s.anchor.id == TAGGING


async def test_gibberish_is_asked_about_not_searched_and_not_a_list(runtime):
    s = Session(runtime)
    reply = await s.user_says("blorft quazzle wimbix")  # no word of it is known: keys pressed, not a subject
    assert "Nothing in the source matches" in reply.message and not reply.results and reply.question is None
    reply = await s.user_says("blorft parsing")  # one known word: searched as written
    assert "Nothing in the source matches" not in reply.message


async def test_an_anchor_without_references_says_what_the_search_falls_back_on(runtime):
    s = Session(runtime)
    reply, _ = await _settle(s, await s.user_says("What came before CCNet?"))
    assert s.anchor.id == CCNET and reply.results
    note = next((n for n in reply.notes if "no reference list" in n), None)
    assert note is not None and "rest on" in note, reply.notes


def test_weak_best_matches_are_flagged():
    from pilot.coverage import coverage_notes
    from pilot.models import Evidence, Intent, RankedPaper
    from workflows.model import Workflow

    weak = [
        RankedPaper(paper=Paper(id=f"x:{i}", title="t"), evidence=Evidence(scores={"dense": 0.2})) for i in range(5)
    ]
    strong = [weak[0].model_copy(update={"evidence": Evidence(scores={"dense": 0.7})}), *weak[1:]]
    intent = Intent(topic="sea shanties")
    assert any("loosely related" in n for n in coverage_notes(Workflow(), None, None, intent, weak))
    assert not coverage_notes(Workflow(), None, None, intent, strong)


# --- fewer, better questions -----------------------------------------------------------------------------


async def test_an_explicit_request_reaches_results_within_two_questions_and_offers_the_rest(runtime):
    s = Session(runtime)
    reply = await s.user_says(f"What later work builds on {TAGGING}?")
    reply, asked = await _settle(s, reply)
    assert reply.results and asked <= 2
    if reply.question is not None:  # a remaining question comes with the results, to refine them
        versions = len(s.versions)
        reply = await s.choose(0)
        assert reply.results and len(s.versions) == versions + 1 and s.versions[-1].reason.startswith("your answer")


async def test_what_the_request_said_is_never_asked(runtime):
    s = Session(runtime)
    reply = await s.user_says(f"Papers at NAACL after 2005 that build on {TAGGING}")
    slots = []
    while reply.question is not None and len(slots) < 6:
        slots.append(reply.question.slot)
        reply = await s.choose(len(reply.question.options) - 1)
    assert s.intent.venues == ["NAACL"] and s.intent.year_min == 2006
    assert "venue" not in slots and "time" not in slots, slots


async def test_the_datasets_of_a_paper_get_no_period_question_and_topics_read_as_phrases(runtime):
    s = Session(runtime)
    reply = await s.user_says(f"Which datasets and benchmarks does {PARSING} use?")
    slots, labels = [], []
    while reply.question is not None and len(slots) < 6:
        slots.append(reply.question.slot)
        if reply.question.slot == "topic":
            labels = [o.label for o in reply.question.options[:-1]]
        reply = await s.choose(len(reply.question.options) - 1)
    assert s.intent.direction == "benchmark" and "time" not in slots, slots
    for label in labels:  # "a phrase — e.g. “an example title”", not three keywords
        assert " — e.g. “" in label and not re.fullmatch(r"\w+, \w+, \w+", label.split(" — ")[0]), label


async def test_a_constraint_typed_instead_of_an_answer_narrows_the_search_and_moves_on(runtime):
    s = Session(runtime)
    reply = await s.user_says(f"Which later papers build on {TAGGING}?")
    assert reply.question is not None and reply.question.slot == "venue", reply.question
    reply = await s.user_says("only after 2005")  # not a venue: a period for the search being set up
    assert s.last_message.kind == "refine" and reply.error is None
    assert s.intent.year_min == 2006 and any("narrows the search" in n for n in reply.notes)
    assert reply.question is None or reply.question.slot != "venue"  # the skipped question is not asked again
    reply, _ = await _settle(s, reply)
    assert reply.results and all((r.paper.year or 0) >= 2006 for r in reply.results)


async def test_just_search_skips_every_question(runtime):
    s = Session(runtime)
    reply = await s.user_says(f"papers similar to {TAGGING}")
    assert reply.question is not None
    reply = await s.user_says("just search")
    assert s.last_message.kind == "command" and reply.results and reply.question is None


async def test_a_bare_topic_over_results_is_asked_once_then_followed(runtime):
    s = Session(runtime)
    await _settle(s, await s.user_says(f"Who has built on {PARSING}?"))
    await s.search_now()  # no question left open (one offered about sub-areas would take the words as its answer)
    reply = await s.user_says("semantic role labeling")
    assert reply.question is not None and reply.question.slot == "scope" and reply.results
    new = next(i for i, o in enumerate(reply.question.options) if o.label.startswith("Start a new search"))
    await s.choose(new)
    assert s.anchor is None and s.intent.topic == "semantic role labeling"


# --- entities under their many spellings --------------------------------------------------------------------


async def test_an_author_under_several_spellings_is_one_person_and_a_homonym_stays_apart(runtime, named_rows):
    s = Session(runtime)
    reply = await s.user_says("Which papers did Diane Litman publish at NAACL?")
    expected = {
        r["id"]
        for r in named_rows
        if r["id"] not in HOMONYM_ROWS
        and any(_is_litman(a["name"]) for a in r["authors"])
        and at_venue(Paper.model_validate(r), "NAACL")
    }
    assert len(expected) >= 5
    assert {r.paper.id for r in reply.results} == expected
    assert f"{len(expected)} papers found" in reply.answer.answer
    notes = " ".join(s.last_run.trace.notes if hasattr(s.last_run.trace, "notes") else []) + " ".join(
        t.note or "" for t in s.last_run.trace.nodes
    )
    assert "also appears as" in notes and "kept D. Litman" not in notes  # 3 papers: apart, said only above 1
    assert not set(HOMONYM_ROWS) & {r.paper.id for r in reply.results}


async def test_findings_are_not_the_main_conference(runtime):
    s = Session(runtime)
    main = await s.user_says("Which papers did Diane Litman publish at EMNLP?")
    assert not any("findings" in r.paper.id for r in main.results)
    findings = await s.user_says("Which papers did Diane Litman publish at Findings of EMNLP?")
    assert findings.results and all("findings" in r.paper.id for r in findings.results)


async def test_every_paper_an_answer_counts_can_be_listed(runtime):
    s = Session(runtime)
    reply = await s.user_says("papers by Diane J. Litman")
    n = int(re.search(r"(\d+) papers found", reply.answer.answer).group(1))
    assert n > 10 and "more" in reply.answer.answer
    assert len(reply.results) == n and len({r.paper.id for r in reply.results}) == n


async def test_a_near_miss_name_gets_did_you_mean(runtime):
    s = Session(runtime)
    reply = await s.user_says("papers by Dianne Litmann")
    assert "did you mean" in reply.answer.answer and "Litman" in reply.answer.answer


async def test_an_answer_is_narrowed_by_a_follow_up_and_its_papers_start_new_searches(runtime):
    """After "papers by X": "only after 2005" asks the same question for that period; "papers like the second
    one" searches from that paper, not for a paper called "second"."""
    s = Session(runtime)
    first = await s.user_says("papers by Diane J. Litman")
    reply = await s.user_says("only after 2005")
    assert s.last_message.kind == "refine" and reply.answer is not None and reply.error is None
    assert s.entity_query.person and s.entity_query.year_min == 2006
    assert reply.results and all(r.paper.year >= 2006 for r in reply.results)
    assert len(reply.results) < len(first.results)
    second = reply.results[1].paper
    reply = await s.user_says("papers like the second one")
    assert s.last_message.target == "result" and s.anchor is not None and s.anchor.id == second.id
    assert s.intent.direction == "sibling" and reply.error is None
    reply = await s.user_says("what came before #40?")  # an answer has no #40 now: it is the search's list, or none
    assert reply.error is None or "#40" in reply.error


async def test_a_surname_with_a_publishing_verb_is_a_person(runtime, named_rows):
    years = Counter(r["year"] for r in named_rows if any(_is_litman(a["name"]) for a in r["authors"]))
    year = years.most_common(1)[0][0]
    s = Session(runtime)
    reply = await s.user_says(f"What did Litman publish in {year}?")
    assert s.last_message.kind == "entity" and reply.answer is not None and "Litman" in reply.answer.answer
    assert reply.results and all(r.paper.year == year for r in reply.results)


async def test_an_answer_about_a_topic_continues_with_its_venues_and_institutions(runtime):
    s = Session(runtime)
    await s.user_says("Who works on dependency parsing?")
    reply = await s.user_says("and which venues?")
    assert s.last_message.kind == "entity" and s.entity_query.shape == "topic_venues"
    assert s.entity_query.topic == "dependency parsing" and reply.answer.answer.startswith("Venues publishing on")
    reply = await s.user_says("what about institutions?")
    assert s.entity_query.shape == "topic_orgs" and reply.error is None
