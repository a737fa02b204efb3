"""Text helpers the reader and the searches share."""

from __future__ import annotations

from pilot.text import noun_phrases


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
