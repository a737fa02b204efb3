"""Which paper introduced a name: the one that made it, not one that named a combination built on it."""

from __future__ import annotations

from pilot.models import Paper
from pilot.names import ABSTRACT, introduces


def _paper(abstract: str) -> Paper:
    return Paper(id="t:1", title="Sentiment Analysis with Neural Networks", abstract=abstract, year=2015)


def test_a_combination_named_after_a_system_does_not_introduce_it():
    uses = _paper("In this paper, we propose a framework called Word2vec + Convolutional Neural Network (CNN).")
    assert introduces(uses, "word2vec") == 0


def test_a_name_the_abstract_defines_is_introduced():
    assert introduces(_paper("We propose a new model called ELMo, which learns deep representations."), "ELMo")
    assert introduces(_paper("We introduce GloVe and show that it outperforms others."), "GloVe") == ABSTRACT


def test_a_short_first_name_is_the_same_person():
    from pilot.people import variant

    assert variant("Chris Manning", "Christopher D. Manning") and variant("Mike Collins", "Michael Collins")
    assert not variant("Chris Manning", "Daniel Manning") and not variant("Jo Smith", "John Smith")
