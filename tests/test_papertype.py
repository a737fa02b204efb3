"""What kind of paper a record is (survey / resource / method), and the filter that keeps one kind."""

from __future__ import annotations

import pytest

from pilot.models import Paper
from pilot.papertype import paper_type, paper_type_reason
from tests.ops_helpers import as_ranked, ids, run_op


def _paper(title: str, abstract: str | None = None, pid: str = "x") -> Paper:
    return Paper(id=pid, title=title, abstract=abstract)


@pytest.mark.parametrize(
    ("title", "kind"),
    [
        ("Word Sense Disambiguation: A Survey", "survey"),
        ("A Review of Relation Extraction Methods", "survey"),
        ("A Tutorial on Hidden Markov Models and Selected Applications", "survey"),
        ("Coreference Resolution: An Overview", "survey"),
        ("Recent Advances in Semantic Parsing", "survey"),
        ("The Penn Discourse Treebank 2.0", "resource"),
        ("A Large Annotated Corpus for Learning Natural Language Inference", "resource"),
        ("Introduction to the CoNLL-2003 Shared Task: Language-Independent Named Entity Recognition", "resource"),
        ("An Overview of the SENSEVAL-2 Evaluation", "resource"),  # an evaluation campaign, not a survey
        ("Building a Sentiment Lexicon for Social Judgement Mining", "resource"),
        # the subtitle says what the named thing is, whatever it was made from
        ("CCGbank: A Corpus of CCG Derivations and Dependency Structures Extracted from the Penn Treebank", "resource"),
        ("KHANQ: A Dataset for Generating Deep Questions in Education", "resource"),
        ("TD3: Tucker Decomposition Based Dataset Distillation Method for Sequential Recommendation", "method"),
        ("Parsing the Web: Learning with a Treebank of Tweets", "method"),
        ("Corpus-Based Induction of Syntactic Structure", "method"),  # uses data, does not provide it
        ("Unsupervised Parsing with a Treebank Grammar", "method"),
        ("An Overview of the MITRE Question Answering System", "method"),  # describes one system
        ("Exploring User Satisfaction in a Tutorial Dialogue System", "method"),
        ("Thumbs Up? Sentiment Classification Using Machine Learning on Movie Reviews", "method"),
        ("Low-Resource Named Entity Recognition with Cross-Lingual Transfer", "method"),
    ],
)
def test_paper_type_from_the_title(title, kind):
    assert paper_type(_paper(title)) == kind


def test_the_abstract_decides_when_the_title_does_not_say():
    tweets = _paper("Sarcasm in the Wild", "We present a new corpus of 10,000 annotated tweets. We also train models.")
    assert paper_type_reason(tweets) == ("resource", "abstract says 'We present a new corpus'")
    survey = _paper("Language Models", "This article surveys the work on language modelling since 1990.")
    assert paper_type(survey) == "survey"
    method = _paper("Parsing Tweets", "We present a corpus-based parser. It is fast.")
    assert paper_type(method) == "method"


async def test_the_filter_keeps_the_asked_paper_types(ctx):
    papers = as_ranked(
        [
            _paper("Dialogue Systems: A Survey", pid="a"),
            _paper("A New Corpus of Task-Oriented Dialogues", pid="b"),
            _paper("Learning Dialogue Policies with Reinforcement Learning", pid="c"),
        ]
    )
    assert ids(await run_op(ctx, "filter", {"paper_types": ["survey"]}, **{"in": papers})) == ["a"]
    assert ids(await run_op(ctx, "filter", {"paper_types": ["resource", "method"]}, **{"in": papers})) == ["b", "c"]
    assert ids(await run_op(ctx, "filter", {}, **{"in": papers})) == ["a", "b", "c"]
    with pytest.raises(ValueError):
        await run_op(ctx, "filter", {"paper_types": ["thesis"]}, **{"in": papers})


async def test_has_references_drops_only_papers_known_to_cite_nothing(ctx):
    papers = as_ranked(
        [
            Paper(id="cites", title="t1", references=["z"]),
            Paper(id="none", title="t2", references=[]),
            Paper(id="unknown", title="t3"),
        ]
    )
    assert ids(await run_op(ctx, "filter", {"has_references": True}, **{"in": papers})) == ["cites", "unknown"]
