"""Recognising entity questions and reading their slots (English and Chinese), and the plans they get."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pilot.kg.classify import classify, parse
from pilot.kg.planner import plan_for
from workflows.validate import validate


def named(paper: str | None) -> str:
    """A paper's name as the resolver looks it up: no quotes, no leading article."""
    return (paper or "").strip('"“”').removeprefix("the ").removeprefix("The ")


@pytest.mark.parametrize(
    "text, shape, slots",
    [
        # a decade is ten years (was its first year alone); "co-authored by" names two people (was a topic)
        ("Jurafsky's papers from the 2000s", "author_papers", dict(person="Jurafsky", year_min=2000, year_max=2009)),
        ("papers co-authored by Manning and Jurafsky", "author_papers", dict(person="Manning", coauthor="Jurafsky")),
        (
            "papers by Jian Pei at KDD 2010–2020",
            "author_papers",
            dict(person="Jian Pei", venue="KDD", year_min=2010, year_max=2020),
        ),
        (
            "What are the papers of Christopher D. Manning at ACL between 2005 and 2010?",
            "author_papers",
            dict(person="Christopher D. Manning", venue="ACL", year_min=2005, year_max=2010),
        ),
        (
            "Which papers did Kevin Knight publish at ACL before 2000?",
            "author_papers",
            dict(person="Kevin Knight", venue="ACL", year_max=1999, year_min=None),
        ),
        ("Daniel Jurafsky's papers since 2005", "author_papers", dict(person="Daniel Jurafsky", year_min=2005)),
        ("papers by Dan Klein on parsing", "author_papers", dict(person="Dan Klein", topic="parsing")),
        ("which venue published Yoshua Bengio's most cited paper", "most_cited", dict(person="Yoshua Bengio")),
        ("What is the most cited paper of Michael I. Jordan?", "most_cited", dict(person="Michael I. Jordan")),
        ("Who does Luc Van Gool collaborate with?", "coauthors", dict(person="Luc Van Gool")),
        ("coauthors of Eduard Hovy", "coauthors", dict(person="Eduard Hovy")),
        ("What does Sergey Levine work on?", "author_topics", dict(person="Sergey Levine")),
        ("research interests of Li Fei-Fei", "author_topics", dict(person="Li Fei-Fei")),
        ("Who is Raquel Urtasun?", "author_profile", dict(person="Raquel Urtasun")),
        (
            "researchers at Tsinghua working on knowledge graphs",
            "org_researchers",
            dict(org="Tsinghua", topic="knowledge graphs"),
        ),
        (
            "Researchers from Google Research working on reinforcement learning",
            "org_researchers",
            dict(org="Google Research", topic="reinforcement learning"),
        ),
        ("Tell me about Stanford University", "org_profile", dict(org="Stanford University")),
        ("who works on dependency parsing?", "topic_researchers", dict(topic="dependency parsing")),
        # were topic searches for "top researchers in parsing" / "author in parsing"
        ("who are the top researchers in parsing?", "topic_researchers", dict(topic="parsing")),
        (
            "who is the most cited author in machine translation?",
            "topic_researchers",
            dict(topic="machine translation"),
        ),
        (
            "Who is working on question answering since 2020?",
            "topic_researchers",
            dict(topic="question answering", year_min=2020),
        ),
        ("papers at ACL in 2005", "venue_papers", dict(venue="ACL", year_min=2005, year_max=2005)),
        (
            "papers on machine translation at COLING 2000-2004",
            "venue_papers",
            dict(venue="COLING", topic="machine translation", year_min=2000, year_max=2004),
        ),
        ("Tell me about EMNLP", "venue_profile", dict(venue="EMNLP")),
        ("What is NAACL?", "venue_profile", dict(venue="NAACL")),
        (
            "Show me what Shai Shalev-Shwartz published in COLT, 2011 to 2014",
            "author_papers",
            dict(person="Shai Shalev-Shwartz", venue="COLT", year_min=2011, year_max=2014),
        ),
        ("Eugene Charniak: most highly cited work?", "most_cited", dict(person="Eugene Charniak")),
        # capitalised research words are a topic, not a person
        ("Knowledge Graph papers at ACL 2010", "venue_papers", dict(person=None, topic="Knowledge Graph", venue="ACL")),
        (
            "Tsinghua University researchers studying knowledge graph embedding",
            "org_researchers",
            dict(org="Tsinghua University", topic="knowledge graph embedding"),
        ),
        ("Mark Johnson h-index", "author_profile", dict(person="Mark Johnson")),
        # misses of the fourth held-out set, fixed after it was scored
        ("Tell me who Percy Liang is", "author_profile", dict(person="Percy Liang")),
        ("What kind of venue is AISTATS?", "venue_profile", dict(venue="AISTATS")),
        ("What is Sergey Levine's research about?", "author_topics", dict(person="Sergey Levine")),
        ("Sergey Levine's work on robotics", "author_papers", dict(person="Sergey Levine", topic="robotics")),
        # a name in Chinese script inside an English question is the person, not dropped
        ("papers by 山田太郎 at ACL", "author_papers", dict(person="山田太郎", venue="ACL")),
        ("Describe Tsinghua University", "org_profile", dict(org="Tsinghua University")),
        (
            "Carnegie Mellon University研究dueling bandits的学者",
            "org_researchers",
            dict(org="Carnegie Mellon University", topic="dueling bandits"),
        ),
        # joint papers of two people
        ("papers by Dan Klein with Chris Manning", "author_papers", dict(person="Dan Klein", coauthor="Chris Manning")),
        (
            "papers Dan Klein wrote with Chris Manning at ACL",
            "author_papers",
            dict(person="Dan Klein", coauthor="Chris Manning", venue="ACL"),
        ),
        (
            "Dan Klein和Christopher Manning合作的论文",
            "author_papers",
            dict(person="Dan Klein", coauthor="Christopher Manning"),
        ),
        ("Who did Dan Klein work with?", "coauthors", dict(person="Dan Klein", coauthor=None)),
        # Chinese: names and organisations pass through unchanged
        ("周杰在CVPR 2020发表的论文", "author_papers", dict(person="周杰", venue="CVPR", year_min=2020, year_max=2020)),
        ("Yoshua Bengio在NeurIPS上发表的论文", "author_papers", dict(person="Yoshua Bengio", venue="NeurIPS")),
        ("Manning的论文", "author_papers", dict(person="Manning")),
        ("李飞飞的研究方向", "author_topics", dict(person="李飞飞")),
        ("谁是李飞飞", "author_profile", dict(person="李飞飞")),
        ("谁是Eiichiro Sumita", "author_profile", dict(person="Eiichiro Sumita")),
        ("介绍一下Stanford University", "org_profile", dict(org="Stanford University", person=None)),
        # an organisation and a field the lexicon knows are looked up by their English names
        (
            "清华大学有哪些研究知识图谱的学者？",
            "org_researchers",
            dict(org="Tsinghua University", topic="knowledge graph"),
        ),
        ("介绍一下清华大学", "org_profile", dict(org="Tsinghua University")),
        ("介绍一下ACL", "venue_profile", dict(venue="ACL")),
        ("2015年以来ACL的论文", "venue_papers", dict(venue="ACL", year_min=2015)),
        ("研究知识图谱的学者有哪些？", "topic_researchers", dict(topic="knowledge graph")),
    ],
)
def test_parse_reads_shape_and_slots(text, shape, slots):
    q = parse(text)
    assert q is not None, text
    assert q.shape == shape
    for k, v in slots.items():
        assert getattr(q, k) == v, (k, getattr(q, k))
    assert classify(text) == "entity"
    # every shape's plan is a valid workflow ending in the answer node
    wf = validate(plan_for(q, text))
    assert wf.output == "answer" and wf.node("answer").op == "synthesize_answer"


@pytest.mark.parametrize(
    "text, kind",
    [
        ("papers that cite BLEU", "papers"),
        ("follow-up work to Attention Is All You Need", "papers"),
        ("find papers on graph neural networks", "papers"),
        ("graph neural networks for molecules", "papers"),
        ("关于知识图谱的论文", "papers"),
        ("Jian Pei", "entity"),  # a name alone: that person's profile
        ("KDD", "entity"),  # a venue alone: its profile
        ("", "unsure"),
        ("???", "unsure"),
        ("12345", "unsure"),
        ("who works on dependency parsing?", "entity"),
    ],
)
def test_classify(text, kind):
    assert classify(text) == kind


def test_years_relative_words():
    assert (
        parse("papers by Ada Lovelace after 2010").year_min,
        parse("papers by Ada Lovelace after 2010").year_max,
    ) == (2011, None)
    q = parse("papers by Ada Lovelace from 2012 to 2008")
    assert (q.year_min, q.year_max) == (2008, 2012)
    q = parse("Ada Lovelace在2010年之前的论文")
    assert q.person == "Ada Lovelace" and q.year_max == 2009


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_any_text_is_classified_without_crashing(text):
    assert classify(text) in ("entity", "papers", "unsure")
    q = parse(text)
    if q is not None:
        validate(plan_for(q, text))


def test_recent_years_count_back_from_this_year():
    import datetime as dt

    this_year = dt.date.today().year
    assert parse("papers by Dan Klein in the last 5 years").year_min == this_year - 4
    q = parse("近三年ACL的论文")
    assert (q.shape, q.venue, q.year_min) == ("venue_papers", "ACL", this_year - 2)


@pytest.mark.parametrize(
    "text, query",
    [
        ("find papers on graph neural networks?", "graph neural networks"),
        ("papers about BLEU", "BLEU"),
        ("关于知识图谱的论文", "知识图谱"),
        ("graph neural nets", "graph neural nets"),
        ("papers", "papers"),  # nothing left after the request words: keep the text
    ],
)
def test_paper_requests_search_their_topic(text, query):
    from pilot.kg.planner import papers_plan

    assert papers_plan(text).node("search").params["query"] == query


def test_benchmark_paper_searches_are_not_taken_for_entity_questions(bench_cases):
    # "Who has built on "X"?" names a paper and a direction: a paper search, not a question about people
    for case in bench_cases:
        assert classify(case["user_query"]) == "papers", case["user_query"]
        assert classify(f"{case['user_query']} [{case['anchor_paper_id']}]") == "papers", case["user_query"]


@pytest.mark.parametrize(
    "text, person",
    [
        ("What did Mikolov publish in 2013?", "Mikolov"),
        ("papers by Manning at ACL", "Manning"),
        ("Hinton's papers on deep learning", "Hinton"),
    ],  # fmt: skip
)
def test_a_surname_alone_is_a_person_where_the_verb_leaves_no_doubt(text, person):
    q = parse(text)
    assert q is not None and q.shape == "author_papers" and q.person == person


@pytest.mark.parametrize("text", ["papers by Transformer", "What did BERT use?", "Which papers did GloVe cite?"])
def test_a_capitalised_system_name_is_not_taken_for_a_surname(text):
    q = parse(text)
    assert q is None or q.person is None


@pytest.mark.parametrize(
    "text, shape, topic",
    [
        ("Which venues publish the most on dialogue systems?", "topic_venues", "dialogue systems"),
        ("Where is work on sarcasm detection published?", "topic_venues", "sarcasm detection"),
        ("Which institutions work on machine translation?", "topic_orgs", "machine translation"),
        ("which universities do research on question answering since 2018?", "topic_orgs", "question answering"),
        ("Who works on dependency parsing?", "topic_researchers", "dependency parsing"),
    ],
)
def test_where_a_topic_is_published_and_which_institutions_work_on_it(text, shape, topic):
    q = parse(text)
    assert q is not None and (q.shape, q.topic) == (shape, topic)
    assert validate(plan_for(q, text)).output == "answer"  # raises when the plan cannot run


@pytest.mark.parametrize(
    "text, paper",
    [
        ("who wrote the Penn Treebank paper?", "the Penn Treebank"),
        ("Who are the authors of BLEU?", "BLEU"),
        ('authors of "Attention Is All You Need"', '"Attention Is All You Need"'),
        # where and when a paper appeared: its record (venue, year, authors); were topic searches
        ("where was BERT published?", "BERT"),
        ("when did the GloVe paper come out?", "the GloVe"),
        ("in which venue was the transformer paper published?", "the transformer"),
    ],
)
def test_who_wrote_a_paper_asks_for_its_authors(text, paper):
    q = parse(text)
    assert q is not None and (q.shape, named(q.paper), q.person) == ("paper_authors", named(paper), None)
    plan = validate(plan_for(q, text))
    assert [n.op for n in plan.nodes] == ["anchor", "paper_authors", "synthesize_answer"]


@pytest.mark.parametrize(
    "text", ["who wrote papers on parsing?", "Who wrote with Tomas Mikolov?", "where is parsing published?"]
)
def test_who_wrote_about_a_topic_or_with_someone_is_not_one_papers_authors(text):
    q = parse(text)
    assert q is None or q.shape != "paper_authors"


@pytest.mark.parametrize(
    "text, shape, slots",
    [
        # people typed in lower case where only a person can stand
        ("papers by manning on parsing", "author_papers", dict(person="Manning", topic="parsing")),
        (
            "what did chris manning and dan klein write together?",
            "author_papers",
            dict(person="Chris Manning", coauthor="Dan Klein"),
        ),
        ("papers by chris manning with dan klein", "author_papers", dict(person="Chris Manning", coauthor="Dan Klein")),
        ("What did Dan Klein write?", "author_papers", dict(person="Dan Klein")),
        # the words after "with"/"using" are a method when they name no one: a topic, not a co-author
        ("papers by manning with neural networks", "author_papers", dict(person="Manning", topic="neural networks")),
        (
            "Papers by Christopher Manning using recursive neural networks since 2010",
            "author_papers",
            dict(person="Christopher Manning", topic="recursive neural networks", year_min=2010, coauthor=None),
        ),
        # a venue's most cited paper: a ranking, not a topic called "most cited"
        ("most cited papers at ACL 2010", "most_cited", dict(venue="ACL", year_min=2010, topic=None, person=None)),
        ("What is the most cited paper at EMNLP?", "most_cited", dict(venue="EMNLP", topic=None, person=None)),
    ],
)
def test_lower_case_people_and_a_venues_most_cited_paper(text, shape, slots):
    q = parse(text)
    assert q is not None and q.shape == shape
    assert {k: getattr(q, k) for k in slots} == slots
    assert validate(plan_for(q, text)).output == "answer"


@pytest.mark.parametrize("text", ["papers by the team at google", "find papers by topic modeling experts"])
def test_lower_case_words_after_by_that_are_no_one_stay_a_paper_search(text):
    q = parse(text)
    assert q is None or q.person is None


@pytest.mark.parametrize(
    ("text", "paper"),
    [("what else did the authors of GloVe write?", "GloVe"),  # a topic search for "else did the authors of …"
     ("other papers by the authors of Moses", "Moses"), ("which other papers did the authors of BLEU publish?", "BLEU"),
     ("what else did the authors of the Penn Treebank paper write?", "the Penn Treebank")],
)  # fmt: skip
def test_the_other_work_of_a_papers_authors_is_asked_of_that_paper(text, paper):
    q = parse(text)
    assert q is not None and (q.shape, named(q.paper)) == ("paper_authors_papers", named(paper))


@pytest.mark.parametrize(
    ("text", "shape", "slots"),
    [("where does Noah Smith work?", "author_profile", {"person": "Noah Smith"}),  # was their papers
     ("which conferences does Kathleen McKeown publish at?", "author_profile", {"person": "Kathleen McKeown"}),
     ("who proposed BLEU?", "paper_authors", {"paper": "BLEU"}),  # a search for a paper called BLEU
     ("who invented the transformer?", "paper_authors", {"paper": "the transformer"}),  # a topic search
     ("how many papers were published at NAACL 2012?", "venue_papers", {"venue": "NAACL", "topic": None}),
     ("what are the main topics at COLING?", "venue_profile", {"venue": "COLING"}),  # a topic search for "topics"
     ("papers by Manning and Klein", "author_papers", {"person": "Manning", "coauthor": "Klein"}),  # a paper
     ("what did Stanford publish on parsing?", "org_papers", {"org": "Stanford", "topic": "parsing"}),
     ("papers from Edinburgh on machine translation", "org_papers", {"org": "Edinburgh"}),
     # a venue's frequent authors (was a topic search for "prolific authors")
     ("Who are the most prolific authors at COLT?", "venue_profile", {"venue": "COLT", "topic": None}),
     ("who publishes most at ACL?", "venue_profile", {"venue": "ACL"})],
)  # fmt: skip
def test_questions_about_people_venues_and_organisations_as_researchers_ask_them(text, shape, slots):
    q = parse(text)
    assert q is not None and q.shape == shape and {k: getattr(q, k) for k in slots} == slots
