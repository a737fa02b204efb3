"""Boolean match expressions in Semantic Scholar's bulk-search syntax: what pilot writes and how it reads."""

from __future__ import annotations

import pytest

from pilot.sources.boolean import ExpressionError, all_of, any_of, candidates, exact_from_index, matcher


def test_written_expressions_say_any_of_the_words_and_the_keyword():
    expr = all_of([any_of(["survey", "overview", "review"]), any_of(["dependency parsing"])])
    assert expr == '(survey | overview | review) + "dependency parsing"'
    assert any_of([]) == "" and any_of(['say "hi"']) == '"say hi"' and all_of(["", "x"]) == "x"


@pytest.mark.parametrize(
    "expr, text, hit",
    [
        ("(survey | overview) + parsing", "Surveys of parsing", True),  # stemmed: surveys ~ survey
        ("(survey | overview) + parsing", "An overview of tagging", False),
        ('"dependency parsing"', "Parsing with dependency grammars", False),  # a phrase keeps its order
        ('"dependency parsing"', "Fast dependency parsing", True),
        ("parsing -dependency", "Dependency parsing", False),
        ("pars*", "Parsers for all", True),
        ("fish ladder", "a ladder for fish", True),  # terms are AND-ed
        ("fish | ladder", "a ladder", True),
    ],
)
def test_reading_matches_the_documented_semantics(expr, text, hit):
    assert matcher(expr)(text) is hit


@pytest.mark.parametrize("bad", ["(parsing", "parsing)", '"open', "| parsing", "", "a + | b"])
def test_malformed_expressions_are_refused(bad):
    with pytest.raises(ExpressionError):
        matcher(bad)


def test_candidates_from_a_word_index_are_the_matches_or_a_superset_to_check():
    texts = ["survey of parsing", "review of tagging", "parsing review", "dependency parsing survey", "tagging"]
    index = {w: {i for i, t in enumerate(texts) if w in t.split()} for w in {w for t in texts for w in t.split()}}
    everything = set(range(len(texts)))
    expr = "(survey | review) + parsing -dependency"
    assert exact_from_index(expr)
    assert candidates(expr, lambda w: index.get(w, set()), everything) == {0, 2}
    phrase = '"parsing review"'
    assert not exact_from_index(phrase)
    superset = candidates(phrase, lambda w: index.get(w, set()), everything)
    assert superset == {2} and [i for i in superset if matcher(phrase)(texts[i])] == [2]
