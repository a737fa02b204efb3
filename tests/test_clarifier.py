"""Request parsing and the deterministic question policy, on the benchmark's requests and the corpus slice."""

from __future__ import annotations

import pytest

from clarifier.policy import (
    MIN_GAIN,
    entropy,
    next_question,
    option_updates,
    propose,
    topic_clusters,
)
from clarifier.question import Option, Question
from pilot.domain import profile
from pilot.intent import ParsedRequest, apply_updates
from pilot.message import Context, read
from pilot.models import Intent, Paper


def parse_request(text: str) -> ParsedRequest:
    """A first message's search, as the reader reads it in a fresh conversation."""
    request = read(text, Context()).request
    assert request is not None, f"{text!r} was not read as a search"
    return request


def parse_constraints(text: str) -> dict:
    """What a message says about which papers (years, venues, types), said with results on screen."""
    ctx = Context(phase="results", has_results=True, has_search=True, listed=10, topic="parsing")
    return read(text, ctx).constraints


def interpret_answer(q: Question | None, text: str, known_venues: list[str] | None = None) -> dict:
    """What an answer to the open question changes (the option it picks, or what its words say), as the session
    applies it."""
    ctx = Context(phase="clarify" if q else "results", question=q, has_search=True, has_results=q is None,
                  listed=0 if q else 10, known_venues=known_venues or [], topic="machine translation")  # fmt: skip
    msg = read(text, ctx)
    if q is not None and msg.option is not None:
        return option_updates(q, msg.option)
    return msg.updates or msg.constraints


def match_option(q: Question, text: str) -> int | None:
    """The one option an answer picks, or None."""
    msg = read(text, Context(phase="clarify", question=q, has_search=True, topic="machine translation"))
    return msg.option if msg.kind == "answer" else None


def test_every_benchmark_request_yields_its_direction_and_anchor_title(bench_cases):
    # the system side reads only user_query; direction/anchor_title are compared as the expected answer
    wrong = []
    for case in bench_cases:
        parsed = parse_request(case["user_query"])
        if parsed.intent.direction != case["direction"] or parsed.anchor_query.replace("'", '"') != case[
            "anchor_title"
        ].replace("'", '"'):
            wrong.append((case["user_query"], parsed.intent.direction, parsed.anchor_query))
    assert wrong == []


@pytest.mark.parametrize(
    "text, direction",
    [
        ('papers that build on "Bleu: a method for automatic evaluation of machine translation"', "successor"),
        ("what builds on acl:P02-1040", "successor"),
        ('what did "Bleu: a method for automatic evaluation" build on?', "predecessor"),
        ('Which work does "Bleu: a method for automatic evaluation" build on', "predecessor"),
    ],
)
def test_build_on_reads_by_what_follows(text, direction):
    assert parse_request(text).intent.direction == direction


def test_constraints_inside_the_title_are_not_read_as_filters():
    parsed = parse_request(
        'Find papers similar to "Parsing the WSJ Using CCG and Log-Linear Models in 2004" from EMNLP'
    )
    assert parsed.anchor_query.endswith("in 2004")
    assert parsed.intent.year_min is None and parsed.intent.year_max is None
    assert parsed.intent.venues == ["EMNLP"]


@pytest.mark.parametrize(
    "text,expected",
    [
        ("only after 2008", {"year_min": 2009}),
        ("since 2008", {"year_min": 2008}),
        ("before 2010", {"year_max": 2009}),
        ("between 2003 and 2007", {"year_min": 2003, "year_max": 2007}),
        ("the 1990s", {"year_min": 1990, "year_max": 1999}),
        ("only EMNLP", {"venues": ["EMNLP"]}),
        ("top 10 please", {"k": 10}),
        ("similar in method", {"facet": "method"}),
        ("the seminal ones", {"recency": "seminal"}),
        ("exclude speech, thanks", {"exclude_terms": ["speech"]}),
    ],
)
def test_free_text_constraints(text, expected):
    assert parse_constraints(text) == expected


def test_identifiers_are_recognised_as_anchors():
    assert parse_request("10.18653/v1/P19-1001").anchor_kind == "doi"
    p = parse_request("papers similar to arXiv:1706.03762 after 2018")
    assert (p.anchor_query, p.anchor_kind, p.intent.direction, p.intent.year_min) == (
        "1706.03762",
        "arxiv",
        "sibling",
        2019,
    )
    assert parse_request("what cites acl:P02-1040?").anchor_query == "acl:P02-1040"
    free = parse_request("find follow-ups of BLEU a method for automatic evaluation of machine translation since 2005")
    assert free.anchor_kind in ("name", "topic") and free.anchor_query.startswith("BLEU")
    assert free.intent.direction == "successor" and free.intent.year_min == 2005


def test_contradicting_year_bound_replaces_the_old_one():
    i = apply_updates(Intent(year_min=2005, year_max=2008), {"year_min": 2010})
    assert (i.year_min, i.year_max) == (2010, None)


@pytest.fixture(scope="module")
def citers(corpus_slice_rows) -> list[Paper]:
    # the successor candidate set of BLEU: every slice paper that cites it
    return [Paper.model_validate(r) for r in corpus_slice_rows if "acl:P02-1040" in r["references"]]


@pytest.fixture(scope="module")
def bleu(corpus_slice_rows) -> Paper:
    return next(Paper.model_validate(r) for r in corpus_slice_rows if r["id"] == "acl:P02-1040")


def _valid_sets(q: Question):
    for o in q.options:
        Intent.model_validate({**Intent().model_dump(), **o.sets})  # every option sets real intent fields


def test_unknown_direction_is_asked_first(citers, bleu):
    d = next_question(Intent(), citers, anchor=bleu)
    assert d.question.slot == "direction" and len(d.question.options) == 5
    _valid_sets(d.question)


def test_successor_question_splits_the_citers_and_its_options_filter_them(citers, bleu):
    assert len(citers) > 30
    intent = Intent(direction="successor")
    d = next_question(intent, citers, anchor=bleu)
    q = d.question
    assert q is not None and 3 <= len(q.options) <= 5
    _valid_sets(q)
    assert q.slot in d.scores and d.scores[q.slot] == max(d.scores.values())
    if q.slot == "time":
        # each window keeps a real share of the citers: the question splits them
        for i in range(len(q.options) - 1):
            f = apply_updates(intent, option_updates(q, i)).filters()
            kept = [p for p in citers if f.accepts(p)]
            assert 0 < len(kept) < len(citers)


def test_all_question_kinds_have_data_driven_options(citers, bleu):
    props = {p.question.slot: p for p in propose(Intent(direction="successor"), citers, anchor=bleu)}
    assert {"time", "venue", "topic"} <= set(props)
    venue_labels = [o.label for o in props["venue"].question.options[:-1]]
    counts = {v: sum(1 for p in citers if profile().venue_label(p) == v) for v in venue_labels}
    assert "ACL" in venue_labels  # anthology venues by acronym, not by one of their many long spellings
    assert sorted(counts.values(), reverse=True) == list(counts.values())  # most frequent venues first
    # topic labels do not repeat the anchor's own title words
    for o in props["topic"].question.options[:-1]:
        assert not set(o.sets["topic_terms"]) & {"bleu", "automatic", "evaluation", "machine", "translation"}
    # the data-driven questions pass the same checks the LLM's must (their words say what they set)
    for p in props.values():
        assert option_problems(p.question) == [], p.question


def test_topic_clusters_cover_the_candidates(citers, bleu):
    clusters = topic_clusters(citers, k=3, anchor=bleu)
    assert len(clusters) >= 2
    members = [i for _, m in clusters for i in m]
    assert len(members) == len(set(members)) and len(members) >= len(citers) - 4


def test_policy_stops_when_nothing_would_change_and_at_the_turn_limit(citers, bleu):
    same = [Paper(id=f"x{i}", title=f"Paper {i}", year=2005, venue="ACL") for i in range(20)]
    d = next_question(Intent(direction="successor"), same, anchor=bleu)
    assert d.question is None
    assert next_question(Intent(direction="successor"), citers, turns=4, max_turns=4).question is None
    asked = [p.question.slot for p in propose(Intent(direction="successor"), citers, anchor=bleu)]
    d = next_question(Intent(direction="successor"), citers, asked=asked, anchor=bleu)
    assert d.question is None and "nothing left" in d.reason


def test_sibling_search_asks_for_the_facet(citers, bleu):
    assert next_question(Intent(direction="sibling"), citers, anchor=bleu).question.slot == "facet"


def test_entropy():
    assert entropy([1, 1, 2, 2]) == pytest.approx(1.0)
    assert entropy(["a"] * 5) == 0.0 < MIN_GAIN


def test_free_text_answers_become_intent_updates():
    q = Question(
        slot="time",
        text="When?",
        options=[
            Option(label="Up to 2000", sets={"year_max": 2000}),
            Option(label="2001 or later", sets={"year_min": 2001}),
            Option(label="Any time", sets={}),
        ],
    )
    assert interpret_answer(q, "2") == {"year_min": 2001}
    assert interpret_answer(q, "any time") == {}
    assert interpret_answer(q, "only after 2008") == {"year_min": 2009}
    topic = Question(
        slot="topic", text="Which?", options=[Option(label=x, sets={"topic_terms": [x]}) for x in ("a b", "c d", "e f")]
    )
    assert interpret_answer(topic, "a method for word alignment")["topic_terms"] == ["method", "word", "alignment"]
    assert "facet" not in interpret_answer(topic, "a method for word alignment")
    assert interpret_answer(None, "Only papers published at COLING.", known_venues=["COLING"]) == {"venues": ["COLING"]}


# --- the LLM path of the clarifier (litellm's mock_response at the network edge) -----------------------

import json  # noqa: E402

from clarifier.llm_questions import llm_question, option_problems  # noqa: E402
from pilot.llm import LLM  # noqa: E402

_FALLBACK = Question(
    slot="time",
    text="Which period?",
    options=[
        Option(label="Up to 2000", sets={"year_max": 2000}),
        Option(label="2001 or later", sets={"year_min": 2001}),
        Option(label="Any time", sets={}),
    ],
)
_LLM_Q = {
    "slot": "time",
    "text": "Older or newer follow-ups?",
    "options": [
        {"label": "The first wave (to 2005)", "sets": {"year_max": 2005}},
        {"label": "Recent (2006 on)", "sets": {"year_min": 2006}},
        {"label": "Both", "sets": {}},
    ],
}


async def test_llm_question_valid():
    q, notes = await llm_question(
        LLM("openai/x", mock_response=json.dumps(_LLM_Q)), Intent(direction="successor"), None, [], _FALLBACK
    )
    assert q.text == "Older or newer follow-ups?" and notes == []


async def test_llm_question_invalid_then_repaired():
    two_options = {**_LLM_Q, "options": _LLM_Q["options"][:2]}
    q, notes = await llm_question(
        LLM("openai/x", mock_response=[json.dumps(two_options), json.dumps(_LLM_Q)]), Intent(), None, [], _FALLBACK
    )
    assert q.text == "Older or newer follow-ups?" and notes == []


@pytest.mark.parametrize(
    "replies",
    [
        ["not json", "still not"],
        [
            json.dumps(
                {
                    **_LLM_Q,
                    "options": [
                        {"label": "A", "sets": {"year_min": "soon"}},
                        {"label": "B", "sets": {"colour": 1}},
                        {"label": "C", "sets": {}},
                    ],
                }
            )
        ]
        * 2,
        [json.dumps({**_LLM_Q, "slot": "venue"})] * 2,
        [json.dumps({**_LLM_Q, "options": [*_LLM_Q["options"][:2], {"label": "word, alignments}, {", "sets": {}}]})]
        * 2,
    ],
)
async def test_llm_question_garbage_or_invalid_sets_fall_back(replies):
    q, notes = await llm_question(LLM("openai/x", mock_response=list(replies)), Intent(), None, [], _FALLBACK)
    assert q == _FALLBACK and "data-driven question" in notes[0]


async def test_llm_question_rate_limited_falls_back():
    llm = LLM("openai/x", mock_response="litellm.RateLimitError", num_retries=1, backoff_s=0.01)
    q, notes = await llm_question(llm, Intent(), None, [], _FALLBACK)
    assert q == _FALLBACK and "RateLimitError" in notes[0] and llm.calls == 2


def test_option_problems():
    bad = Question(
        slot="time",
        text="?",
        options=[
            Option(label="a", sets={"year_min": "x"}),
            Option(label="b", sets={"anchor_id": "y"}),
            Option(label="c", sets={}),
        ],
    )
    assert len(option_problems(bad)) == 2 and option_problems(_FALLBACK, "time") == []


@pytest.mark.parametrize(
    "label, sets, ok",
    [
        ("After 2015", {"year_min": 2016}, True),  # "after" read as the next year is fine
        ("2010 to 2015", {"year_min": 2010, "year_max": 2015}, True),
        ("Recent (2006 on)", {"year_min": 2006}, True),
        ("Only EMNLP", {"venues": ["EMNLP"]}, True),
        ("No preference", {}, True),
        ("After 2015", {"year_min": 2010}, False),  # the button says one thing, the search does another
        ("Papers from 2020", {}, False),
        ("The recent ones", {"year_min": 2019}, False),
        ("Only ACL", {"venues": ["EMNLP"]}, False),
    ],
)
def test_an_option_must_set_what_its_label_says(label, sets, ok):
    q = Question(slot="time", text="Which?", options=[Option(label=label, sets=sets), Option(label="x y", sets={}),
                                                      Option(label="z w", sets={})])  # fmt: skip
    assert (option_problems(q) == []) is ok, option_problems(q)


async def test_an_llm_option_whose_words_and_sets_disagree_is_repaired_or_replaced():
    lying = {**_LLM_Q, "options": [{"label": "After 2015", "sets": {"year_min": 2001}}, *_LLM_Q["options"][1:]]}
    q, notes = await llm_question(LLM("openai/x", mock_response=[json.dumps(lying)] * 2), Intent(), None, [], _FALLBACK)
    assert q == _FALLBACK and "data-driven question" in notes[0]


def test_a_topic_option_searches_for_the_phrase_its_label_shows(monkeypatch):
    """A person picks the sub-area by the phrase they read; the option must search for that phrase, not only
    for the cluster's TF-IDF words (which can be other words: "statistical machine" vs "minimum bayes-risk")."""
    import clarifier.policy as policy

    titles = [
        "Statistical Machine Translation with Minimum Bayes-Risk Decoding",
        "Efficient Statistical Machine Translation Lattices",
        "Statistical Machine Translation by Consensus",
        "Syntax Based Forest Rescoring",
        "Syntax Based Tree Transducers",
        "Syntax Based Reordering Rules",
    ]
    cands = [Paper(id=f"x:{i}", title=t, year=2008) for i, t in enumerate(titles)]
    clusters = [(["minimum", "bayes-risk"], [0, 1, 2]), (["forest", "transducers"], [3, 4, 5])]
    monkeypatch.setattr(policy, "topic_clusters", lambda *a, **k: clusters)
    prop = policy._topic(Intent(direction="successor"), cands, None)
    assert prop is not None
    phrases = [o.label.split(" — e.g. ")[0] for o in prop.question.options[:-1]]
    assert phrases[0] == "statistical machine translation"
    for phrase, option in zip(phrases, prop.question.options, strict=False):
        assert set(phrase.split()) <= set(option.sets["topic_terms"]), option


def test_a_paper_id_in_the_request_is_not_a_venue_to_filter_by():
    # A request naming its paper by an id ("[ACL:2024.naacl-long.131]", how an ACL Anthology paper is named to
    # Semantic Scholar) restricted the results to the venue ACL; the venue typed as a word still counts.
    assert "venues" not in parse_constraints('Is there a survey covering "POLYIE"? [ACL:2024.naacl-long.131]')
    assert "venues" not in parse_constraints("Which older papers does acl:P02-1040 build on?")
    assert parse_constraints("Papers like [ACL:P02-1040] published at EMNLP")["venues"] == ["EMNLP"]
    assert parse_constraints("ACL papers like arXiv:1706.03762")["venues"] == ["ACL"]


@pytest.mark.parametrize(
    ("text", "anchor", "constraint"),
    [
        ("papers similar to BERT but only from EMNLP", "BERT", {"venues": ["EMNLP"]}),
        ("papers like GloVe, but only after 2016", "GloVe", {"year_min": 2017}),
    ],
)
def test_a_but_before_a_constraint_is_not_part_of_the_paper_name(text, anchor, constraint):
    parsed = parse_request(text)
    assert parsed.anchor_query == anchor and parsed.anchor_kind == "name"
    assert parsed.constraints == constraint


def test_several_options_picked_together_span_their_periods_and_join_their_lists():
    from clarifier.policy import merged_updates

    spans = {"Up to 2006": {"year_max": 2006}, "2007–2008": {"year_min": 2007, "year_max": 2008}}
    spans |= {"2009 or later": {"year_min": 2009}, "Any time": {}}
    when = Question(slot="time", text="When?", options=[Option(label=k, sets=v) for k, v in spans.items()])
    assert interpret_answer(when, "both 1 and 2") == {"year_max": 2008}
    assert interpret_answer(when, "the first two") == {"year_max": 2008}
    assert interpret_answer(when, "1 and 3") == {"exclude_years": [(2007, 2008)]}
    assert interpret_answer(when, "2 and 4") == {}  # with "any time": any time
    assert match_option(when, "2") == 1 and interpret_answer(when, "1 and 9") == {}
    where = Question(
        slot="venue",
        text="Where?",
        options=[Option(label="ACL", sets={"venues": ["ACL"]}), Option(label="EMNLP", sets={"venues": ["EMNLP"]})],
    )
    assert interpret_answer(where, "1 and 2") == {"venues": ["ACL", "EMNLP"]}
    assert merged_updates(where, [0, 1]) == {"venues": ["ACL", "EMNLP"]}


def test_an_option_named_by_its_letter_its_middle_or_its_age():
    spans = {"Up to 2006": {"year_max": 2006}, "2007–2008": {"year_min": 2007, "year_max": 2008}}
    spans |= {"2009 or later": {"year_min": 2009}, "Any time": {}}
    when = Question(slot="time", text="When?", options=[Option(label=k, sets=v) for k, v in spans.items()])
    # were words that set nothing, or a topic search for "middle one"
    assert [match_option(when, t) for t in ("b", "option c", "(a)", "e")] == [1, 2, 0, None]
    # places count the options shown ("Any time" is the fourth of four: no middle); "the middle period" the periods
    assert match_option(when, "the middle one") is None and match_option(when, "the middle period") == 1
    assert match_option(when, "the last one") == 3 and match_option(when, "the last period") == 2
    assert match_option(when, "older stuff") == 0 and match_option(when, "the oldest") == 0
    assert interpret_answer(when, "either of the first two") == {"year_max": 2008}
    two = Question(slot="time", text="When?", options=[Option(label=k, sets=v) for k, v in list(spans.items())[1:]])
    assert match_option(two, "the middle one") == 1  # of three shown, the second
    assert match_option(two, "the middle period") is None  # of two periods there is no middle
