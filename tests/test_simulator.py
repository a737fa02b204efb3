"""The simulated user: answers from the latent intent only, and never leaks gold titles or authors."""

from __future__ import annotations

from clarifier.policy import direction_question, facet_question
from clarifier.question import Option, Question
from clarifier.simulator import GENERIC_ANSWER, LeakCheck, SimulatedUser
from pilot.llm import LLM
from pilot.message import Context, read


def _q(slot, *opts):
    return Question(slot=slot, text="?", options=[Option(label=label, sets=s) for label, s in opts])


VENUES = _q(
    "venue",
    ("ACL", {"venues": ["ACL"]}),
    ("EMNLP", {"venues": ["EMNLP"]}),
    ("COLING", {"venues": ["COLING"]}),
    ("Any venue", {}),
)
TIMES = _q(
    "time",
    ("Up to 2002", {"year_max": 2002}),
    ("2003–2006", {"year_min": 2003, "year_max": 2006}),
    ("2007 or later", {"year_min": 2007}),
    ("Any time", {}),
)


def test_picks_the_option_matching_the_latent_venue():
    user = SimulatedUser({"direction": "successor", "latent_intent": {"venue": "EMNLP"}})
    assert user.answer(VENUES) == ("option", 1)
    assert user.answer(TIMES) == ("option", 3)  # no year preference -> "Any time"


def test_free_text_when_no_option_fits_and_it_parses_back_into_the_intent():
    user = SimulatedUser(
        {"direction": "successor", "latent_intent": {"venue": "EACL", "year_min": 1995, "year_max": 2011}}
    )
    kind, text = user.answer(VENUES)
    assert kind == "text" and _read_back(VENUES, text, ["EACL"]) == {"venues": ["EACL"]}
    kind, text = user.answer(TIMES)  # 1995–2011 straddles every window
    assert kind == "text" and _read_back(TIMES, text) == {"year_min": 1995, "year_max": 2011}


def _read_back(question: Question, text: str, venues: list[str] | None = None) -> dict[str, object]:
    """What pilot's reader takes from a typed answer to ``question``."""
    msg = read(text, Context(phase="clarify", question=question, known_venues=venues or []))
    assert msg.kind == "answer", (text, msg)
    return msg.updates


def test_time_option_chosen_when_the_window_mostly_matches():
    user = SimulatedUser({"latent_intent": {"year_min": 2007, "year_max": 2011}})
    assert user.answer(TIMES) == ("option", 2)


def test_direction_facet_anchor_and_topic_answers():
    case = {
        "direction": "sibling",
        "anchor_paper_id": "acl:X2",
        "latent_intent": {"facet": "method", "topic_terms": ["parsing", "dependency", "hebrew"]},
    }
    user = SimulatedUser(case)
    assert user.answer(direction_question()) == ("option", 2)
    assert user.answer(facet_question()) == ("option", 1)
    anchor = _q("anchor", ("A", {"anchor_id": "acl:X1"}), ("B", {"anchor_id": "acl:X2"}), ("None of these", {}))
    assert user.answer(anchor) == ("option", 1)
    topics = _q(
        "topic",
        ("semantic, role, labeling", {"topic_terms": ["semantic", "role", "labeling"]}),
        ("parsing, dependency, shallow", {"topic_terms": ["parsing", "dependency", "shallow"]}),
        ("No particular sub-topic", {}),
    )
    assert user.answer(topics) == ("option", 1)


def test_leak_check_catches_titles_ngrams_and_authors():
    check = LeakCheck(
        ["Statistical Phrase-Based Translation", "A Simple Approach To Unsupervised Word Alignment"], ["Philipp Koehn"]
    )
    assert check.leaks("I want statistical phrase-based translation papers") == "contains a gold title"
    assert check.leaks("something like an approach to unsupervised word models") is not None  # 4-gram of a title
    assert check.leaks("unsupervised word alignment") is None  # 3 words are a topic, not a title
    assert check.leaks("papers by philipp koehn") == "names a gold author"
    assert check.leaks("Mostly about translation, statistical.") is None


def test_leaking_answer_is_regenerated_then_replaced_by_a_generic_one():
    gold = ["Parsing Dependency Hebrew Morphology Jointly"]
    case = {"latent_intent": {"topic_terms": ["parsing", "dependency", "hebrew", "morphology"]}, "golden_titles": gold}
    topics = _q("topic", ("a", {"topic_terms": ["x"]}), ("b", {"topic_terms": ["y"]}), ("c", {"topic_terms": ["z"]}))
    user = SimulatedUser(case)
    kind, text = user.answer(topics)
    # the 4-term answer repeats 4 consecutive gold-title words; the shorter one does not
    assert (kind, text) == ("text", "Mostly about parsing.")
    assert any("rejected" in e for e in user.log)
    user2 = SimulatedUser({"latent_intent": {"topic_terms": ["parsing"]}, "golden_titles": ["Parsing"]})
    assert user2.answer(topics) == ("text", GENERIC_ANSWER)


def test_answers_never_contain_gold_titles_on_the_benchmark(bench_cases):
    qs = [
        direction_question(),
        facet_question(),
        VENUES,
        TIMES,
        _q("topic", ("a", {"topic_terms": ["qqq"]}), ("b", {"topic_terms": ["rrr"]}), ("c", {"topic_terms": ["sss"]})),
        _q(
            "resource",
            ("Treebank", {"resource_types": ["treebank"]}),
            ("Lexicon", {"resource_types": ["lexical resource"]}),
            ("Any", {}),
        ),
    ]
    for case in bench_cases:
        user = SimulatedUser(case)
        for q in qs:
            kind, value = user.answer(q)
            if kind == "text":
                assert user.check.leaks(value) is None, (case["case_id"], value)


async def test_llm_leak_checker_vetoes_and_a_dead_checker_does_not_block():
    case = {"latent_intent": {"venue": "EACL"}, "golden_titles": ["Some Title"]}
    vetoing = SimulatedUser(
        case, llm=LLM("openai/x", mock_response='{"leaks": true, "reason": "names the venue of a gold paper"}')
    )
    assert await vetoing.answer_async(VENUES) == ("text", GENERIC_ANSWER)
    dead = SimulatedUser(case, llm=LLM("openai/x", num_retries=0, mock_response="litellm.RateLimitError"))
    kind, text = await dead.answer_async(VENUES)
    assert kind == "text" and "EACL" in text
    assert any("unavailable" in str(e.get("llm_leak_check", "")) for e in dead.log)
