"""The search vocabulary, declared once: the directions a researcher can search in around an anchor paper
and the facets of a sibling search, with the words pilot uses for each.

Every tuple of names is derived from its ``Literal`` (``get_args``), so adding a direction is one edit
here plus its workflow template; the clarifier's buttons, the LLM prompts and the session's messages
all read the words below.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

Direction = Literal["predecessor", "successor", "sibling", "benchmark", "survey"]
DIRECTIONS: tuple[Direction, ...] = get_args(Direction)

Facet = Literal["background", "method", "result"]
FACETS: tuple[Facet, ...] = get_args(Facet)

# What kind of paper it is ("resource" = dataset, corpus, treebank, benchmark, lexical resource, shared task;
# "position" = a paper arguing where a field should go):
# ``pilot.papertype.paper_type`` decides; a request's type words select one ("surveys on …", "datasets for …").
PaperType = Literal["survey", "resource", "method", "position"]
# how a paper was published, as pilot.publication reads it from its venue and ids
PublicationKind = Literal["conference", "workshop", "journal", "preprint", "unknown"]
PAPER_TYPES: tuple[PaperType, ...] = get_args(PaperType)

# A request's type words ("surveys on …", "datasets for …") -> the kind of paper it asks for.
PAPER_TYPE_WORDS: dict[str, PaperType] = {
    **dict.fromkeys(
        "survey surveys review reviews overview overviews tutorial tutorials introduction introductions primer".split(),
        "survey",
    ),
    **dict.fromkeys(
        "dataset datasets data corpus corpora benchmark benchmarks treebank treebanks resource resources lexicon "
        "lexicons testbed testbeds".split(),
        "resource",
    ),
}


def paper_type_named(words: str) -> PaperType | None:
    """The kind of paper a few words name on their own ("surveys", "a dataset", "data sets"), else None."""
    return PAPER_TYPE_WORDS.get(words.lower().removeprefix("a ").removeprefix("an ").replace(" ", ""))


# The button a user clicks to choose a direction (the clarifier's direction question).
DIRECTION_OPTIONS: dict[Direction, str] = {
    "predecessor": "Earlier work it builds on",
    "successor": "Later work that builds on it",
    "sibling": "Papers similar to it",
    "benchmark": "Datasets and benchmarks it uses",
    "survey": "Surveys that cover its area",
}

# What a result list of that direction is, in a sentence ("Found 50 papers — similar papers for …").
DIRECTION_RESULTS: dict[Direction, str] = {
    "predecessor": "earlier work it builds on",
    "successor": "later work that builds on it",
    "sibling": "similar papers",
    "benchmark": "datasets and benchmarks for its problem",
    "survey": "surveys covering its area",
}

# The button for each facet of a sibling search ("similar in which respect?").
FACET_OPTIONS: dict[Facet, str] = {
    "background": "The problem it addresses (background)",
    "method": "Its method or technique",
    "result": "Its results or findings",
}

assert set(DIRECTION_OPTIONS) == set(DIRECTION_RESULTS) == set(DIRECTIONS)
assert set(FACET_OPTIONS) == set(FACETS)


# The order of a result list ("newest first"): the top_k step's ``order``; the same papers either way.
ResultOrder = Literal["score", "newest", "oldest", "most_cited"]
RESULT_ORDER_WORDS: dict[ResultOrder, str] = {
    "score": "best match first",
    "newest": "newest first",
    "oldest": "oldest first",
    "most_cited": "most cited first",
}

# A kind of paper as a plural noun, for "leaving out surveys".
PAPER_TYPE_PLURALS: dict[PaperType, str] = {
    "survey": "surveys",
    "resource": "datasets and other resources",
    "method": "method papers",
    "position": "position papers",
}


def left_out_words(
    exclude_terms: list[str],
    exclude_venues: list[str],
    paper_types: list[PaperType],
    exclude_years: Sequence[tuple[int, int]] = (),
) -> str:
    """ "leaving out “dependency parsing”, ACL papers and surveys": what a request asked to drop, repeated in the
    reply so the user sees it was understood. Empty when nothing is left out; a request for one kind of paper
    ("surveys on X") keeps a kind rather than leaving the others out."""
    parts = [f"“{t}”" for t in exclude_terms] + [f"{v} papers" for v in exclude_venues]
    parts += [
        f"papers from {first}" if first == last else f"papers from {first}–{last}" for first, last in exclude_years
    ]
    if 1 < len(paper_types) < len(PAPER_TYPES):
        parts += [PAPER_TYPE_PLURALS[t] for t in PAPER_TYPES if t not in paper_types]
    if not parts:
        return ""
    return "leaving out " + (", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0])


def kinds_text(kinds: Sequence[PublicationKind]) -> str:
    """ "only journal papers", "leaving out workshop papers" (the kinds a filter keeps, said the short way)."""
    if "unknown" in kinds:
        gone = [k for k in ("journal", "conference", "workshop", "preprint") if k not in kinds]
        return "leaving out " + " and ".join(f"{k} papers" for k in gone) if gone else "any kind of publication"
    return "only " + " and ".join(f"{k} papers" for k in kinds)


def direction_results(direction: Direction | None) -> str:
    """The sentence fragment for a result list; "related papers" when no direction is set."""
    return DIRECTION_RESULTS[direction] if direction else "related papers"
