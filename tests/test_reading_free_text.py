"""Requests as researchers type them, read right: eras instead of years, kinds of publication as constraints,
several venues in one phrase, titles typed in sentence case, and papers called by names their titles do not
contain ("word2vec", "ResNet", "LDA"). The reader's tests need no source; the rest run on a corpus slice with
the named papers added.
"""

from __future__ import annotations

import asyncio
import gzip
import json
from pathlib import Path

import pytest

from clarifier.policy import option_updates
from clarifier.question import Option, Question
from pilot.intent import ParsedRequest
from pilot.kg.classify import KGQuery
from pilot.message import Context, read
from pilot.runtime import Runtime
from pilot.session import Session
from pilot.settings import Settings
from pilot.text import strip_markup

ATTENTION = "s2:13756489"  # "Attention Is All You Need"
LDA = "pc:nips2001:c903a50c05"  # "Latent Dirichlet Allocation"
LDA_2D = "pc:nips2004:5df2fe4f84"  # "Two-Dimensional Linear Discriminant Analysis": its abstract says "(LDA)"
WORD2VEC = ("s2:5959482", "s2:16447573")  # "Efficient Estimation of Word Representations …", "Distributed …"
RESNET = "pc:cvpr2016:Deep Residual Learning for Image Recognition"
COLLINS = ("acl:P97-1003", "acl:J03-4003")  # "Three Generative, Lexicalized Models …", "Head-Driven …"

TIME = Question(
    slot="time",
    text="Which period matters most to you?",
    options=[
        Option(label="Up to 2007", sets={"year_max": 2007}),
        Option(label="2008–2011", sets={"year_min": 2008, "year_max": 2011}),
        Option(label="2012 or later", sets={"year_min": 2012}),
        Option(label="Any time", sets={}),
    ],
)
SUB_AREA = Question(
    slot="topic",
    text="Which sub-area are you most interested in?",
    options=[
        Option(label="multilingual", sets={"topic_terms": ["multilingual"]}),
        Option(label="No particular sub-topic"),
    ],
)


def parse_request(text: str) -> ParsedRequest:
    """A first message's search, as the reader reads it in a fresh conversation."""
    request = read(text, Context()).request
    assert request is not None, f"{text!r} was not read as a search"
    return request


def interpret_answer(q: Question, text: str) -> dict:
    """What an answer to the open question changes, as the session applies it."""
    msg = read(text, Context(phase="clarify", question=q, has_search=True, topic="machine translation"))
    return option_updates(q, msg.option) if msg.option is not None else msg.updates


# --- eras of the field ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "topic", "year_min", "year_max"),
    [
        ("Before deep learning, how did people do named entity recognition?", "named entity recognition", None, 2011),
        ("pre-neural approaches to machine translation", "machine translation", None, 2013),
        ("papers on dependency parsing from the statistical era", "dependency parsing", 1990, 2013),
        ("sentiment analysis in the deep learning era", "sentiment analysis", 2012, None),
        ("what should I read on summarization from the pre-neural era", "summarization", None, 2013),
        ("machine translation before LLMs", "machine translation", None, 2019),
    ],
)
def test_an_era_named_instead_of_years_is_a_period_and_no_part_of_the_topic(text, topic, year_min, year_max):
    msg = read(text, Context())
    assert msg.kind == "new_search" and msg.request is not None
    intent = msg.request.intent
    assert intent.topic == topic
    assert (intent.year_min, intent.year_max) == (year_min, year_max)
    assert msg.request.period_of is None  # no paper called "LLMs" is looked up to date it


def test_the_era_note_says_which_years_were_taken_so_the_researcher_can_correct_them():
    msg = read("named entity recognition before deep learning", Context())
    assert msg.request is not None and msg.request.intent.year_max == 2011
    assert "up to 2011" in msg.era_note and "2012" in msg.era_note


def test_what_came_before_a_field_is_its_predecessors_not_a_period():
    parsed = parse_request("what came before neural machine translation")
    assert parsed.intent.direction == "predecessor"
    assert parsed.intent.year_max is None and parsed.anchor_query == "neural machine translation"


# --- constraints while a question is open ----------------------------------------------------------------


def test_a_kind_of_publication_while_a_question_is_open_is_a_constraint_not_a_topic_search():
    ctx = Context(phase="clarify", question=TIME, has_search=True, topic="neural machine translation")
    msg = read("only journal papers", ctx)
    assert msg.kind != "new_search", msg.why  # was a topic search for "journal"
    assert read("exclude workshop papers", ctx).kind != "new_search"
    assert parse_request("only journal papers on dependency parsing").intent.topic == "dependency parsing"


def test_a_kind_of_publication_answering_the_sub_area_question_names_no_sub_area():
    updates = interpret_answer(SUB_AREA, "exclude workshop papers")
    assert "workshop" not in updates["publication_kinds"]
    assert "topic_terms" not in updates  # was ["exclude", "workshop"]
    assert interpret_answer(SUB_AREA, "word alignment")["topic_terms"] == ["word", "alignment"]


def test_and_after_it_while_a_question_is_open_is_the_papers_later_work():
    ctx = Context(phase="clarify", question=TIME, has_search=True, anchor="Attention Is All You Need")
    msg = read("and after it?", ctx)
    assert (msg.kind, msg.target) == ("new_search", "current")  # was an answer to the period question
    assert msg.request is not None and msg.request.intent.direction == "successor"
    assert read("and before that?", ctx).request.intent.direction == "predecessor"


def test_a_topic_at_several_venues_keeps_them_all_out_of_the_topic():
    msg = read("Give me papers on graph neural networks for recommendation published at KDD or WWW", Context())
    assert (msg.kind, msg.target) == ("new_search", "topic")  # was a question about the venue KDD
    assert msg.request.intent.topic == "graph neural networks for recommendation"  # was "… or WWW"
    assert sorted(msg.request.intent.venues) == ["KDD", "WWW"]
    three = read("what should I read on sentiment analysis at ACL, EMNLP or NAACL", Context()).request.intent
    assert three.topic == "sentiment analysis" and sorted(three.venues) == ["ACL", "EMNLP", "NAACL"]


@pytest.mark.parametrize(
    ("text", "field", "value"),
    [
        ("only ones with more than 50 citations", "min_citations", 51),
        ("only the ones cited more than 20 times", "min_citations", 21),
        ("make it 20 results", "k", 20),
        ("make it 10", "k", 10),
        ("cut it down to 15", "k", 15),
    ],
)
def test_a_count_or_a_citation_floor_is_a_constraint_never_a_paper_called_by_the_number(text, field, value):
    asking = read(text, Context(phase="clarify", question=SUB_AREA, has_search=True, topic="machine translation"))
    assert asking.kind == "refine" and asking.feedback is not None, asking.why  # was a paper called "50"
    assert asking.feedback.updates[field] == value
    shown = read(text, Context(phase="results", has_results=True, has_search=True, listed=50, topic="parsing"))
    assert shown.kind == "refine" and shown.feedback.updates[field] == value


def test_a_citation_floor_set_before_the_results_reaches_the_workflows_filter():
    from workflows.inducer import deterministic

    parsed = parse_request("papers on retrieval-augmented generation with at least 100 citations")
    assert parsed.intent.topic == "retrieval-augmented generation" and parsed.intent.min_citations == 100
    wf = deterministic(parsed.intent, "").workflow
    assert any(n.params.get("min_citations") == 100 for n in wf.nodes), [n.params for n in wf.nodes]


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("papers on deep learning", "deep learning"),  # was "deep"
        ("surveys on reinforcement learning published in the last five years", "reinforcement learning"),
        ("what should I read on machine learning?", "machine learning"),
        ("papers on language understanding", "language understanding"),
    ],
)
def test_a_topic_ending_in_learning_or_understanding_keeps_that_word(text, topic):
    assert read(text, Context()).request.intent.topic == topic


def test_a_topic_at_a_venue_is_a_topic_search_at_that_venue_not_a_venue_question_without_the_topic():
    msg = read("knowledge graph embedding before 2018 at AAAI", Context())
    assert (msg.kind, msg.target) == ("new_search", "topic")  # was "Papers at AAAI until 2017", topic lost
    intent = msg.request.intent
    assert (intent.topic, intent.venues, intent.year_max) == ("knowledge graph embedding", ["AAAI"], 2017)
    at_acl = read("papers on question answering at ACL in 2010", Context())  # a topic at a venue: still a search
    assert at_acl.kind == "new_search" and at_acl.request.intent.venues == ["ACL"]
    assert (at_acl.request.intent.year_min, at_acl.request.intent.year_max) == (2010, 2010)


def test_seminal_work_on_a_field_is_its_literature_and_the_seminal_paper_is_one_paper():
    msg = read("seminal work on active learning", Context())
    assert (msg.target, msg.request.intent.topic, msg.request.intent.recency) == ("topic", "active learning", "seminal")
    assert read("the seminal paper on conditional random fields", Context()).target == "paper"


def test_what_to_cite_for_a_well_known_name_is_that_papers_citation():
    msg = read("what should I cite for dropout?", Context())
    assert (msg.kind, msg.command, msg.request.anchor_query) == ("command", "cite_named", "dropout")
    assert read("what should I cite for parsing?", Context()).kind == "new_search"  # a field's literature


def test_a_period_counted_in_words_is_a_period():
    import datetime as dt

    this_year = dt.date.today().year
    intent = read("papers from the last two years on code generation", Context()).request.intent
    # the current year counts in, as time.json says: "the last two years" in 2026 is 2025-2026
    assert (intent.topic, intent.year_min) == ("code generation", this_year - 1)  # was no period at all
    assert read("work from the past few years on summarization", Context()).request.intent.year_min == this_year - 2


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("How has research on dialogue systems evolved since 2000?", "dialogue systems"),
        (
            "papers on low-resource machine translation, preferably from the last 5 years",
            "low-resource machine translation",
        ),
        ("what are the best known evaluation metrics for summarization?", "evaluation metrics for summarization"),
    ],
)
def test_hedges_and_praise_around_a_topic_are_not_its_words(text, topic):
    assert read(text, Context()).request.intent.topic == topic


def test_a_result_number_with_no_list_on_screen_is_said_so_not_searched_as_a_topic():
    for text in ("remove #2 and #5", "what does #1 cite?", "papers like #3"):
        msg = read(text, Context())
        assert msg.kind == "unclear" and "no numbered list" in msg.hint, (text, msg.why)  # were topic searches


def test_work_that_extends_a_paper_to_a_new_setting_is_its_later_work_not_its_datasets():
    parsed = parse_request("Find me work that extends LDA to multilingual corpora")
    assert parsed.anchor_query == "LDA" and parsed.intent.direction == "successor"  # was "benchmark"
    assert parsed.intent.resource_types == [] and "multilingual" in parsed.intent.topic_terms


RESULTS = Context(phase="results", has_results=True, has_search=True, listed=50)


def test_a_student_introducing_themselves_names_the_topic_not_themselves():
    msg = read("hi! I'm a PhD student working on argument mining. where should I start?", Context())
    assert msg.request.intent.topic == "argument mining"  # was "I'm a PhD student working on argument mining"
    assert msg.request.intent.paper_types == ["survey"]  # "where should I start?" asks for an overview
    other = read("I'm a master's student interested in question answering, what should I read?", Context())
    assert other.request.intent.topic == "question answering"


def test_another_direction_for_the_paper_on_screen_is_a_new_search_not_a_filter():
    on_predecessors = RESULTS.model_copy(update={"direction": "predecessor", "anchor": "Attention Is All You Need"})
    msg = read("ok now papers that cite it from 2016", on_predecessors)
    assert (msg.kind, msg.target) == ("new_search", "current")  # was a year filter on its predecessors
    assert msg.request.intent.direction == "successor" and msg.request.intent.year_min == 2016
    on_successors = RESULTS.model_copy(update={"direction": "successor", "anchor": "Attention Is All You Need"})
    same = read("ok now papers that cite it from 2016", on_successors)
    assert same.kind == "refine" and same.feedback.updates["year_min"] == 2016  # the same direction: narrowed
    assert read("papers it cites", on_successors).request.intent.direction == "predecessor"  # was its citers
    assert read("papers that cite it", on_predecessors).request.intent.direction == "successor"
    assert read("papers it cites", Context()).kind == "unclear"  # nothing on screen for "it" to name


@pytest.mark.parametrize(
    ("text", "updates"),
    [
        ("what about abstractive ones only?", {"topic_terms": ["abstractive"]}),  # was a topic search
        ("just the extractive ones", {"topic_terms": ["extractive"]}),
        ("show me only papers from ACL", {"venues": ["ACL"]}),  # was a question about ACL's papers "on only"
        ("only journal papers", {"publication_kinds": ["journal"]}),
        ("I don't want workshop papers", {"publication_kinds": ["conference", "journal", "preprint", "unknown"]}),
        ("too many old papers", {"recency": "recent"}),  # was a topic search for "many old"
        ("less about speech, more about text", {"exclude_terms": ["speech"], "topic_terms": ["text"]}),
        ("only the ones from Stanford", {"orgs": ["Stanford"]}),  # was a search for a paper called "Stanford"
        ("and the ones from Google?", {"orgs": ["Google"]}),
        ("show me the ones about BERT", {"topic_terms": ["BERT"]}),  # was BERT's paper
        ("drop the ones without citations", {"min_citations": 1}),  # was a topic search
        ("only ones from the University of Edinburgh", {"orgs": ["University of Edinburgh"]}),
    ],
)
def test_narrowing_the_list_in_free_words_refines_it(text, updates):
    msg = read(text, RESULTS)
    assert msg.kind == "refine" and msg.feedback.updates == updates, msg.why


def test_praise_for_a_result_named_by_its_place_is_more_like_it():
    msg = read("the third one looks great, more like that", RESULTS)
    assert msg.kind == "refine" and msg.feedback.refs == [3] and msg.feedback.positive  # was its card


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("which year has the most papers?", "years"),  # was a topic search for "year"
        ("what years are these from?", "years"),
        ("group them by venue", "venues"),  # was "refine these or search anew?"
    ],
)
def test_questions_about_the_list_over_time_and_venues_are_answered_from_it(text, fact):
    msg = read(text, RESULTS)
    assert (msg.kind, msg.command, msg.about) == ("command", "list_fact", fact)


def test_the_years_of_a_list_are_said_with_their_result_numbers():
    from pilot.listfacts import answer
    from pilot.models import Paper, RankedPaper

    papers = [
        RankedPaper(paper=Paper(id=f"p{i}", title=f"Paper {i}", year=y)) for i, y in enumerate([2005, 2007, 2005])
    ]
    said = answer(papers, "years")
    assert "span 2005–2007" in said and "2005 (2: #1, #3)" in said


def test_a_free_text_answer_to_the_sub_area_question_is_an_answer_not_a_new_search():
    asking = Context(phase="clarify", question=SUB_AREA, has_search=True, topic="discourse parsing")
    msg = read("I'm interested in RST mainly", asking)
    assert msg.kind == "answer" and msg.updates["topic_terms"] == ["RST"]  # was a new topic search for "RST"
    assert read("I'm interested in machine translation instead", asking).kind == "new_search"
    shown = RESULTS.model_copy(update={"question": SUB_AREA})
    lifted = read("nah, any venue is fine", shown)
    assert lifted.feedback.any_venue and "topic_terms" not in lifted.updates  # was the sub-area "nah venue fine"


def test_make_that_x_swaps_the_last_part_of_the_topic():
    ctx = Context(phase="clarify", has_search=True, topic="sentiment analysis for Arabic")
    msg = read("actually, make that Chinese", ctx)
    assert (msg.kind, msg.correction) == ("new_search", True)  # was a note on the period question
    assert msg.request.intent.topic == "sentiment analysis for Chinese"
    assert read("switch to machine translation instead", ctx).request.intent.topic == "machine translation"
    assert read("make that BERT", ctx).target == "paper"
    assert read("make it shorter", ctx).kind != "new_search"


def test_a_follow_up_about_the_person_of_a_profile_answer_asks_about_that_person():
    after_profile = Context(phase="answer", asked=KGQuery(shape="author_profile", person="Christopher Manning"))
    msg = read("and his most cited paper?", after_profile)
    assert msg.kind == "entity" and msg.entity.shape == "most_cited"  # was a topic search for "his"
    assert msg.entity.person == "Christopher Manning"
    on_topic = read("which of his papers are about sentiment?", after_profile)
    assert on_topic.entity.shape == "author_papers" and on_topic.entity.topic == "sentiment"


def test_script_code_in_a_message_is_no_part_of_the_request():
    assert strip_markup("<script>alert(1)</script> papers on parsing") == "papers on parsing"
    assert read("<script>alert(1)</script> papers on parsing", Context()).request.intent.topic == "parsing"
    assert strip_markup("<b>parsing</b>") == "parsing"  # what other tags enclose stays


def test_but_exclude_leaves_its_words_out_of_the_topic():
    intent = read("Find papers on reinforcement learning for dialogue but exclude anything about robotics", Context())
    assert intent.request.intent.topic == "reinforcement learning for dialogue"  # was the whole phrase
    assert intent.request.intent.exclude_terms == ["robotics"]


def test_what_builds_on_both_x_and_y_is_later_work_citing_the_two():
    msg = read("what builds on both GloVe and word2vec?", Context())
    assert (msg.kind, msg.target) == ("new_search", "paper")  # was a topic search for "both GloVe and word2vec"
    assert msg.request.anchor_query == "GloVe" and [p.anchor_query for p in msg.also] == ["word2vec"]


# --- on a corpus: titles in sentence case, names no title contains ------------------------------------------


@pytest.fixture(scope="module")
def named_source(shared: Path, corpus_slice_rows: list[dict], tmp_path_factory):
    from pilot.sources.local import LocalCorpusSource
    from tests.conftest import corpus_with_vectors

    wanted = {ATTENTION, LDA, LDA_2D, *WORD2VEC, RESNET, *COLLINS}
    have = {r["id"] for r in corpus_slice_rows}
    with gzip.open(shared / "corpus" / "papers.jsonl.gz", "rt", encoding="utf-8") as fh:
        extra = [r for r in map(json.loads, fh) if r["id"] in wanted - have]
    d = tmp_path_factory.mktemp("named-papers")
    corpus, vectors = corpus_with_vectors(shared, corpus_slice_rows + extra, d)
    return LocalCorpusSource.open(corpus, d / "cache", vectors=vectors, progress=False)


@pytest.fixture(scope="module")
def runtime(named_source) -> Runtime:
    return Runtime.for_source(named_source, Settings(cache_dir=named_source.store.dir.parent, max_turns=4))


async def test_a_title_typed_in_sentence_case_is_that_paper_not_its_first_word(runtime):
    s = Session(runtime)
    await s.user_says("Which benchmarks were used in Attention is all you need")
    assert s.anchor is not None and s.anchor.id == ATTENTION  # was a topic search for "Attention"
    assert s.intent.direction == "benchmark"
    s = Session(runtime)
    await s.user_says("Papers like Attention is all you need")
    assert s.anchor is not None and s.anchor.id == ATTENTION and s.intent.direction == "sibling"
    s = Session(runtime)
    await s.user_says("papers on parsing for my thesis")  # lower-case words after a topic stay a topic
    assert s.anchor is None and s.intent.topic == "parsing"


async def test_a_name_no_title_contains_is_the_paper_it_usually_means_and_the_note_says_so(runtime):
    s = Session(runtime)
    reply = await s.user_says("Papers like LDA")
    assert s.anchor is not None and s.anchor.id == LDA  # was "Two-Dimensional Linear Discriminant Analysis"
    assert any("known as “LDA”" in n for n in reply.notes), reply.notes
    s = Session(runtime)
    reply = await s.user_says("what came before word2vec")
    assert s.anchor is not None and s.anchor.id in WORD2VEC and s.intent.direction == "predecessor"
    other = next(t for i, t in zip(WORD2VEC, ("Efficient", "Distributed"), strict=True) if i != s.anchor.id)
    assert any(other in n for n in reply.notes), reply.notes  # the other paper of the name is offered
    s = Session(runtime)
    await s.user_says("Find papers similar to ResNet but for NLP")
    assert s.anchor is not None and s.anchor.id == RESNET and "nlp" in [t.lower() for t in s.intent.topic_terms]


async def test_a_name_followed_by_what_kind_of_thing_it_is_is_still_that_name(runtime):
    s = Session(runtime)
    await s.user_says("Which paper introduced the BLEU metric?")
    assert s.anchor is not None and s.anchor.id == "acl:P02-1040"  # was "no paper introduces “BLEU metric”"


async def test_a_system_called_by_its_authors_name_is_their_paper(runtime):
    s = Session(runtime)
    reply = await s.user_says("follow-ups of the Collins parser")
    assert s.anchor is not None and s.anchor.id in COLLINS  # was a topic search for "Collins parser"
    assert s.intent.direction == "successor"
    assert s.last_message is not None and s.last_message.target == "paper"
    assert any("Collins parser" in n for n in reply.notes)


async def test_a_venue_the_source_lacks_is_said_to_be_missing_not_swapped_for_another(runtime):
    s = Session(runtime)
    reply = await s.user_says("papers on graph neural networks at KDD")
    text = " ".join([reply.message, *(reply.notes or []), reply.answer.answer if reply.answer else ""])
    assert "Speech And Natural Language" not in text  # KDD's long name once matched that workshop loosely
    assert "KDD" in text


async def test_its_authors_are_the_authors_of_the_paper_on_screen(runtime):
    s = Session(runtime)
    await s.user_says("Papers like LDA")
    reply = await s.user_says("who are its authors?")
    assert reply.answer is not None and "Blei" in reply.answer.answer  # was a topic search for "its authors"
    s = Session(runtime)
    await s.user_says("Papers like LDA")
    reply = await s.user_says("who wrote it?")
    assert reply.answer is not None and "Blei" in reply.answer.answer  # was "Could not look up “it”"


def test_over_semantic_scholar_titles_and_well_known_names_use_its_title_match(named_source, tmp_path):
    import uuid

    import httpx
    from pydantic import SecretStr

    from emulators.s2 import S2Emulator
    from emulators.server import Running
    from pilot.sources.s2 import SemanticScholarSource

    async def talk(runtime: Runtime) -> tuple[str | None, str | None]:
        s = Session(runtime)
        await s.user_says("Which benchmarks were used in Attention is all you need")
        typed = s.anchor.title if s.anchor else None
        s = Session(runtime)
        await s.user_says("Papers like LDA")
        return typed, s.anchor.title if s.anchor else None

    with Running(S2Emulator(named_source)) as running:
        settings = Settings(
            _env_file=None, sources="s2", s2_base_url=f"{running.url}/graph/v1",
            s2_recommendations_url=f"{running.url}/recommendations/v1", s2_api_key=SecretStr(uuid.uuid4().hex),
            s2_rate="20/1", cache_dir=tmp_path / "cache", http_timeout_s=120,
        )  # fmt: skip
        runtime = Runtime.for_source(SemanticScholarSource(settings), settings, embedder=named_source.embedder)
        typed, named = asyncio.run(talk(runtime))
        served = httpx.get(f"{running.url}/_stats").json()["requests"]
    assert typed == "Attention Is All You Need" and named == "Latent Dirichlet Allocation"
    assert served.get("GET /graph/v1/paper/search/match", 0) >= 2, served  # one small request per title


async def test_only_the_ones_from_an_institution_filters_by_affiliation_and_says_how_many_name_one(runtime):
    s = Session(runtime)
    await s.user_says("papers on parsing")
    reply = await s.search_now()
    assert reply.results
    reply = await s.user_says("only the ones from Stanford")
    assert s.last_message.kind == "refine"
    assert [n.params.get("orgs") for n in s.workflow.nodes if n.op == "filter" and n.params.get("orgs")] == [
        ["Stanford"]
    ]  # one filter step keeps to the institution
    kept = reply.results
    assert all(any("stanford" in (a.affiliation or "").lower() for a in r.paper.authors) for r in kept)
    if not kept:  # the slice's older records name few institutions: the reply says so
        assert any("name their authors' institutions" in n for n in reply.notes), reply.notes


def test_short_steering_words_typed_wrong_are_read_as_meant_and_said():
    parsed = parse_request("wat cam befor BERT?")
    assert (parsed.anchor_query, parsed.intent.direction) == ("BERT", "predecessor")  # was a topic search
    assert parsed.respelt == {"wat": "what", "cam": "came", "befor": "before"}  # the reply says so
    assert parse_request("cam papers for saliency").respelt == {}  # kept where it changes nothing


@pytest.mark.parametrize(
    ("text", "topic", "types", "recency"),
    [
        ("关于机器翻译的综述", "machine translation", ["survey"], "any"),  # was "nothing in the source matches"
        ("最新的命名实体识别论文", "named entity recognition", [], "recent"),
        ("情感分析的数据集", "sentiment analysis", ["resource"], "any"),
    ],
)
def test_a_request_typed_in_chinese_searches_its_topic_in_english(text, topic, types, recency):
    msg = read(text, Context())
    assert (msg.kind, msg.target, msg.text) == ("new_search", "topic", text)
    intent = msg.request.intent
    assert (intent.topic, intent.paper_types, intent.recency) == (topic, types, recency)


def test_an_entity_question_in_chinese_keeps_its_people_and_puts_its_topic_in_english():
    msg = read("清华大学研究知识图谱的学者", Context())
    assert msg.kind == "entity" and (msg.entity.org, msg.entity.topic) == ("Tsinghua University", "knowledge graph")


def test_short_and_chinese_names_of_organisations_match_their_affiliations():
    from pilot.kg.classify import parse
    from pilot.reading.lexicon import org_matches

    assert org_matches("CMU", "School of Computer Science, Carnegie Mellon University")
    assert org_matches("清华大学", "Department of Computer Science, Tsinghua University")
    assert not org_matches("MIT", "University of Michigan")
    q = parse("papers from UW on commonsense")
    assert (q.shape, q.org, q.topic) == ("org_papers", "UW", "commonsense")  # was a paper called "UW"
