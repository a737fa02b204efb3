"""Topic requests read from a researcher's words: the topic alone is searched, type words choose the kind
of paper, and requests about a paper, a person or a direction are left alone."""

from __future__ import annotations

import pytest

from pilot.topic import noun_phrases, read_topic

INSTRUCTION_WORDS = {
    "find", "literature", "papers", "read", "should", "key", "main", "work", "covering", "surveys", "published",
    "what", "give", "me", "essential", "which", "starting", "reviews", "corpora", "exist", "guide",
}  # fmt: skip


@pytest.mark.parametrize(
    ("request_text", "topic", "types"),
    [
        ("What should I read on semantic role labeling?", "semantic role labeling", []),
        ("Find the literature on cross-document coreference.", "cross-document coreference", []),
        ("I'm new to coreference resolution - which papers are essential?", "coreference resolution", []),
        ("I'm starting to work on sarcasm detection - what are the key papers?", "sarcasm detection", []),
        ("Give me the main work on morphological segmentation", "morphological segmentation", []),
        ("reviews of grammatical error correction", "grammatical error correction", ["survey"]),
        ("any tutorials about conditional random fields?", "conditional random fields", ["survey"]),
        ("Which corpora exist for sentiment analysis of tweets?", "sentiment analysis of tweets", ["resource"]),
        ("a guide to topic modelling", "topic modelling", []),
        ("papers about preference grammars: softening constraints", "preference grammars: softening constraints", []),
        (
            "I'm writing a paper on neural machine translation for low-resource languages - what should I cite?",
            "neural machine translation for low-resource languages",
            [],
        ),
        ("show me the datasets people use for named entity recognition", "named entity recognition", ["resource"]),
        ("I am working on working memory models", "working memory models", []),
    ],
)
def test_the_topic_is_the_subject_without_instruction_or_type_words(request_text, topic, types):
    req = read_topic(request_text)
    assert req is not None
    assert req.topic == topic and req.paper_types == types
    assert not {w.lower() for w in req.topic.replace(":", " ").split()} & INSTRUCTION_WORDS


def test_recency_and_period_words_become_constraints_not_search_terms():
    seminal = read_topic("seminal papers about statistical parsing")
    assert (seminal.topic, seminal.updates) == ("statistical parsing", {"recency": "seminal"})
    recent = read_topic("latest work on neural summarization")
    assert recent.updates == {"recency": "recent"}
    dated = read_topic("papers on named entity recognition published after 2012")
    assert dated.topic == "named entity recognition" and dated.updates == {"year_min": 2013}
    decade = read_topic("literature on chart parsing in the 1980s")
    assert decade.topic == "chart parsing" and decade.updates == {"year_min": 1980, "year_max": 1989}
    assert read_topic("I'm new to information extraction").updates == {}  # a newcomer, not "recent work"
    news = read_topic("What's new in coreference resolution?")
    assert (news.topic, news.updates) == ("coreference resolution", {"recency": "recent"})
    negated = read_topic("find me work on sentiment analysis of tweets, not older than 2012")
    assert (negated.topic, negated.updates) == ("sentiment analysis of tweets", {"year_min": 2012})
    venue = read_topic("literature on chunking at CoNLL 2000")
    assert venue.topic == "chunking" and venue.updates == {"venues": ["CoNLL"], "year_min": 2000, "year_max": 2000}
    assert read_topic("papers on SemEval tasks for sarcasm").topic == "SemEval tasks for sarcasm"  # part of the topic


@pytest.mark.parametrize(
    "request_text",
    [
        "papers that cite the ROUGE paper",
        "papers similar to statistical phrase-based translation",
        "Who works on question answering at Google?",
        "What came before ELMo?",
        "papers by Jane Doe",
        '"Accurate Unlexicalized Parsing"',
        "",
    ],
)
def test_requests_about_a_paper_a_person_or_a_direction_are_not_topic_requests(request_text):
    assert read_topic(request_text) is None


def test_noun_phrases_name_each_part_of_the_topic():
    phrases = noun_phrases("semi-supervised learning of named entity recognizers from unlabeled text")
    assert phrases[:3] == ["semi-supervised learning", "named entity recognizers", "unlabeled text"]
    assert noun_phrases("tree kernels for relation extraction: a study") == [
        "tree kernels",
        "relation extraction",
        "study",
    ]
    assert noun_phrases("the CCG parsing of Twitter") == ["ccg parsing", "twitter"]
    assert noun_phrases("") == []


def test_a_pasted_abstract_is_the_topic_not_the_words_that_introduce_it():
    req = read_topic("Find related work for my abstract: We induce part-of-speech tags with a Bayesian HMM.")
    assert req is not None and req.topic.startswith("We induce part-of-speech tags")


@pytest.mark.parametrize(
    "request_text, topic, left_out, types",
    [
        ("papers on summarization but not extractive summarization", "summarization", ["extractive summarization"], []),
        ("what should I read on parsing, no surveys", "parsing", [], ["resource", "method", "position"]),
        # a method's name, not a leaving-out
        ("key papers on learning without forgetting", "learning without forgetting", [], []),
    ],
)
def test_what_a_topic_request_leaves_out_is_neither_searched_nor_asked_for(request_text, topic, left_out, types):
    # "no surveys" once asked for surveys only, and "but not X" searched for X
    req = read_topic(request_text)
    assert req is not None and req.topic == topic
    assert req.updates.get("exclude_terms", []) == left_out and req.paper_types == types
