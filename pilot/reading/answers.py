"""An answer to the open question: a number, an ordinal or a letter first; then the option whose words (and the
cue words of what it sets) the answer is most like; a value outside the options sets that value; words that
chose an option set nothing else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import takewhile
from typing import Any

from pilot.reading.cues import CueHit, cue_hits, items_of, lemma, votes
from pilot.reading.lexicon import lexicon
from pilot.reading.model import QuestionState, Span, State
from pilot.reading.spans import NUMBER_WORDS, Extracted, extract, word_set, word_table
from pilot.reading.timegrammar import periods, periods_together
from pilot.reading.tokens import tokenize
from pilot.text import ENGLISH_STOPWORDS

_LETTERS = "abcde"
_ORDINAL_WORDS = {
    "first": 0, "1st": 0, "second": 1, "2nd": 1, "third": 2, "3rd": 2, "fourth": 3, "4th": 3, "fifth": 4, "5th": 4,
    "last": -1, "former": 0,
}  # fmt: skip
_NUMBER_WORDS = {"one": 0, "two": 1, "three": 2, "four": 3, "five": 4}
# what an option sets, as the cue labels that say the same in other words
_CUE_OF_SET = {
    ("direction", "predecessor"): "dir:predecessor", ("direction", "successor"): "dir:successor",
    ("direction", "sibling"): "dir:sibling", ("direction", "benchmark"): "dir:benchmark",
    ("direction", "survey"): "dir:survey", ("recency", "recent"): "refine:recent",
    ("recency", "seminal"): "refine:seminal",
}  # fmt: skip
# an option that leaves the question's setting open ("Any time", "No preference", "No particular sub-topic")
_WAY_OUT = re.compile(r"^(?:any|no |none|all |either|overall|no preference|whatever)", re.I)
_ABOUT_IT = frozenset("i am me my about the to for by we our us have has got i've ive in on".split())
_HEDGES = frozenset("hmm hm um maybe perhaps not sure unsure".split())
# words that pick nothing
NO_PREFERENCE_WORDS = frozenset(
    """dunno whatever any anything either all none neither skip pass nope no idea clue sure care mind matter matters
    preference important fine ok okay really honestly don't dont do not know up to you decide choose pick surprise
    me doesn't doesnt is it of them these those everything works good equally both strong feelings feeling opinion
    opinions either way at happy with fussed fussy picky bothered whenever wherever cannot can't cant torn between
    undecided or""".split()
)
DEGREE_WORDS = frozenset("really much that so too very particularly all honestly terribly greatly especially".split())
_NO_PREFERENCE_CORE = (
    "don't know", "dont know", "do not know", "no idea", "no preference", "no clue", "doesn't matter",
    "does not matter", "doesnt matter", "don't care", "dont care", "do not care", "don't mind", "dont mind",
    "do not mind", "not fussed", "not fussy", "not picky", "not bothered", "no opinion", "either way", "happy with any",
    "not important", "up to you",
    "you decide", "you choose", "you pick", "surprise me", "whatever", "either", "any", "all of it", "all of them",
    "no particular", "not sure", "dunno", "skip", "pass", "none", "neither", "nope", "either is fine", "no strong",
    "whichever", "all good", "everything", "do not matter", "don't matter", "dont matter",
    "can't decide", "cannot decide", "can not decide", "cant decide",
    "torn between", "undecided", "no limit", "no limits", "no restriction", "no restrictions", "no cutoff",
    "no cut-off", "no constraint", "no constraints", "unrestricted", "open-ended",
)  # fmt: skip


@dataclass
class Answer:
    option: int | None = None
    options: list[int] = field(default_factory=list)
    no_preference: bool = False
    updates: dict[str, Any] = field(default_factory=dict)
    confidence: float = 0.0
    why: str = ""


def _words(text: str) -> list[str]:
    """Folded words, compounds split ("low-resource" is "low" and "resource")."""
    return [w for t in tokenize(text) if t.is_word for w in t.low.split("-") if w]


def _content(words: list[str]) -> set[str]:
    stop = ENGLISH_STOPWORDS | {"one", "ones", "stuff", "things", "papers", "paper", "work", "please", "really"}
    return {lemma(w) for w in words if w not in stop and len(w) > 1}


def _same_stem(a: str, b: str) -> bool:
    """ "molecules" and "molecular", "extractive" and "extraction": five letters and more in common at the start; or
    four, all of the shorter word but its last letter ("scale" and "scalability", "noisy" and "noise")."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n >= 5 or (n >= 4 and n >= min(len(a), len(b)) - 1)


def _said_as(word: str, words: set[str]) -> bool:
    """Whether ``word`` is among ``words``, or is one of them with another ending ("scale" for "scalability")."""
    return word in words or any(_same_stem(word, x) for x in words)


def _stem_shared(said: set[str], label: set[str]) -> set[str]:
    """The label's words said, or said with another ending."""
    return {w for w in label if _said_as(w, said)}


def real_options(question: QuestionState) -> list[int]:
    """The options that choose something, not a way out ("Any time", "None of these")."""
    return [i for i, o in enumerate(question.options) if not _WAY_OUT.match(o)]


def _placed_options(question: QuestionState) -> list[int]:
    """The options counted by place: every button shown ("Any time" is the last of four), except a way back to the
    user's own words ("None of these — search by my words"), which is no answer to the question."""
    return [i for i, o in enumerate(question.options) if not o.lower().startswith("none of these")]


def _counted_options(words: list[str], question: QuestionState) -> list[int]:
    """The options a place word counts: "the middle period" the periods, "the last one" every option shown."""
    of_slot = any(w in word_table("slot_nouns").get(question.slot, ()) for w in words)
    return (real_options(question) if of_slot else _placed_options(question)) or list(range(len(question.options)))


def _picked_number(words: list[str], question: QuestionState) -> list[int] | None:
    """ "2", "#2", "option b", "the second one", "1 and 3", "the last one", "the middle one", "the first two",
    "either of the last two": the options named by place (None: none named), counted as shown."""
    real = _counted_options(words, question)
    picks: list[int] = []
    if words in (["one"], ["ones"]):
        return [0]
    fillers = {
        "ones", "the", "one", "option", "number", "no", "choice", "please", "and", "&", "or", "i", "pick", "choose",
        "take", "go", "with", "want", "prefer", "answer", "is", "it's", "its", "that", "s", "let's", "lets", "mean",
        "meant", "paper", "papers", "either", "of", "both", "options", "choices", "sorry", "actually",
        "guess", "think", "suppose", "probably", "reckon", "say", "ok", "okay", "then", "well", "i'd", "i'll", "would",
        "fine", "good", "great", "works",
    }  # fmt: skip
    counted = {"two": 2, "three": 3}
    for k, w in enumerate(words):
        core = w.lstrip("#").rstrip(")").rstrip(".")
        if core in ("first", "last") and k + 1 < len(words) and words[k + 1] in counted:
            n = counted[words[k + 1]]
            picks.extend(real[:n] if core == "first" else real[-n:])  # "the first two", "the last two"
            return picks
        if core.isdigit() and len(core) >= 4:
            return None  # "the 2021 one": a year, no option's number
        if m := re.fullmatch(r"(\d{1,2})(?:st|nd|rd|th)", core):
            picks.append(int(m.group(1)) - 1)  # "the 6th one": its number, there or not
            continue
        if core.isdigit():
            picks.append(int(core) - 1)
        elif core == "middle":
            if len(real) % 2 == 0:
                return [-1]  # of an even number of options none is in the middle
            picks.append(real[len(real) // 2])
        elif core in ("last", "bottom", "final", "latter"):
            picks.append(real[-1])
        elif core in _ORDINAL_WORDS:
            picks.append(_ORDINAL_WORDS[core])
        elif core in fillers:
            continue
        elif core in _NUMBER_WORDS and len(words) <= 3:
            picks.append(_NUMBER_WORDS[core])
        elif len(core) == 1 and core in _LETTERS and len(words) <= 3 and (core != "a" or len(words) == 1):
            picks.append(_LETTERS.index(core))  # "b", "option c" ("a" alone only: it is mostly an article)
        elif core not in fillers:
            return None
    return picks or None


def _together(question: QuestionState, picked: list[int]) -> dict[str, Any]:
    """What several options set together: the span of their periods (the years between them left out), or the
    venues they name."""
    if question.slot == "venue":
        return {"venues": [question.options[i] for i in picked]}
    return periods_together([r for i in picked if (r := option_range(question.options[i]))])


def option_range(label: str) -> tuple[int | None, int | None] | None:
    """The years a time option's label stands for ("2013–2017", "Up to 2012", "2018 or later")."""
    ps = periods(tokenize(label.replace("–", " - ").replace("-", " - ")))
    if not ps:
        return None
    kept = ps[0].kept()
    return kept.get("year_min"), kept.get("year_max")


def read_answer(ex: Extracted, question: QuestionState, hits: list[CueHit], subject: bool = False) -> Answer | None:
    """The answer the message gives, or None when it does not read as one (it may be a new request)."""
    words = _not_any(_words(ex.text))
    n = len(question.options)
    if not words:
        return None
    # (to "search papers about X instead?", a title is a new request too; naming the paper is an answer only to
    # "which paper did you mean?")
    naming = ex.of("person", "title", "id", *(("paper",) if question.slot == "fallback" else ()))
    if question.slot != "anchor" and naming and len(words) > 3:
        return None  # "Which papers did Diane Litman publish at NAACL?": a request of its own, not an option
    if question.slot == "topic" and _kind_on_a_subject(ex):
        return None  # "surveys on automatic summarization": a request of its own, not a sub-area
    said_back = " " + " ".join(words) + " "
    if any(f" {p} " in said_back for p in word_set("asks_back")):
        return Answer(confidence=0.0, why="asks what pilot would choose")  # "not sure, what do you think?"
    if ex.text.rstrip().endswith("?") and set(words) & _HEDGES and set(words) <= NO_PREFERENCE_WORDS | _HEDGES:
        return Answer(confidence=0.0, why="unsure, and asks")  # "hmm not sure, maybe?"
    if {"both", "all"} & set(words) and {"neither", "none"} & set(words):
        return Answer(confidence=0.0, why="all of the options and none of them")  # "both, but also neither"
    if any(f" {p} " in said_back for p in word_set("conversation_refs")) and not ex.of("venue", "time", "person"):
        # "the one you mentioned earlier": something said before, named by nothing here
        return Answer(confidence=0.0, why="points at something said before, and names nothing")
    if (exact := _option_said(words, question)) is not None:
        return Answer(option=exact, confidence=1.0, why=f"says option {exact + 1} in its words")  # "both please"
    picked = _picked_number(words, question)
    if picked is None and (named := _option_named(words, question)) is not None:
        # "the third option, and EMNLP if possible": the option, and what else the words set
        return Answer(option=named, updates=_besides(ex, question), confidence=0.95, why=f"names option {named + 1}")
    if picked is not None:
        if any(not 0 <= p < n for p in picked):
            return Answer(confidence=0.0, why="names an option that is not there")
        if len(picked) == 1:
            return Answer(option=picked[0], confidence=1.0, why=f"names option {picked[0] + 1}")
        together = sorted(set(picked))
        if _undecided(words, ex.text, question.slot):
            return Answer(confidence=0.0, why="one option or another, undecided (which one?)")  # "either 1 or 2"
        way_outs = {i for i, o in enumerate(question.options) if _WAY_OUT.match(o)}
        if question.slot not in ("time", "venue"):
            return Answer(confidence=0.0, why="names options that do not go together")
        if way_outs & set(together):  # "2 and 4" with "Any time" among them: no limit
            return Answer(no_preference=True, confidence=0.8, why="several options, one of them any")
        return Answer(options=together, updates=_together(question, together), confidence=0.9, why="options together")
    low = " ".join(words)
    plain = {"stuff", "the", "ones", "one", "work", "papers", "please", "most", "range", "period", "years", "era",
             "bucket", "option", "choice", "band", "window", "group", "bin", "category"}  # fmt: skip
    said_of_time = set(words) - plain
    real = real_options(question)
    # "the most recent range please", "the early days, when it all started": the first or the last period offered
    ends = word_table("period_ends")
    told = {w: end for end, ws in ends.items() for w in ws}
    said_ends = {told[w] for w in said_of_time if w in told}
    only_ends = said_of_time <= set(told) | word_set("period_end_fillers")
    if question.slot == "time" and real and len(said_ends) == 1 and only_ends and not ex.of("time"):
        which = said_ends.pop()
        return Answer(option=real[0 if which == "earliest" else -1], confidence=0.9, why=f"the {which} period offered")
    if (initialled := _initialled(ex, words, question)) is not None:
        return Answer(option=initialled, updates=_besides(ex, question), confidence=0.9,
                      why="the initials of an option")  # "KBQA", "the GNN kind"  # fmt: skip
    if not ex.of("time", "count", "cites") and (preferred := _preferred_part(words)) is not None:
        # ("nothing older than 2015" compares years: a period, read by the time grammar)
        # "impact matters more to me than recency": the option the preferred side says, the other side none
        side = extract(" ".join(preferred), State())
        chosen = _option_like(preferred, question, cue_hits(items_of(side)), _kind_cues(side))
        if chosen is not None and chosen.option is not None:
            return chosen
    if (said := _yes_or_no(words, question)) is not None:
        return Answer(option=said, confidence=0.95, why="yes or no to the question")
    if set(words) & _DISMISSING and set(words) <= _DISMISSING | NO_PREFERENCE_WORDS | _ABOUT_THE_OPTIONS:
        way_out = next((i for i, o in enumerate(question.options) if _WAY_OUT.match(o)), None)
        if way_out is None:  # "neither" to "which direction?": none of them is wanted, and no option says so
            return Answer(confidence=0.0, why="none of the options, and none of them is 'none'")
        return Answer(option=way_out, confidence=0.9, why="none of the options")
    if low in ("both", "all three", "the two of them", "all of them", "every one", "all options", "each of them"):
        return Answer(confidence=0.0, why="names several options of a one-choice question")
    way_out = next((i for i, o in enumerate(question.options) if _WAY_OUT.match(o)), None)
    # values the words set (a period, a venue): an answer in its own terms
    # "I don't mind where it's published": the words that restate what the question asks are no preference either
    restating = _RESTATING | set(word_table("slot_nouns").get(question.slot, ()))
    # "doesn't matter, but only ACL stuff": the venue or period said beside is no word against indifference
    said_beside = {w for s in ex.spans if s.kind in ("venue", "time") for w in _words(s.text)}
    rest = (
        set(words) - NO_PREFERENCE_WORDS - restating - said_beside - {"but", "only", "just", "stuff", "does", "though"}
    )
    rest -= _ABOUT_IT  # "I'm not picky about the conference": who is indifferent, and to what, is no other wish
    # "doesn't really matter", "don't much care": an adverb inside the phrase changes nothing
    without_degree = " ".join(w for w in low.split() if w not in DEGREE_WORDS)
    # "I have no venue preference": the question's own noun inside the phrase changes nothing either
    plain_said = " ".join(w for w in without_degree.split() if w not in restating)
    indifferent = any(core in low or core in without_degree or core in plain_said for core in _NO_PREFERENCE_CORE)
    # "whichever you think is more useful": the choice handed back is no preference, whatever else is said
    delegated = any(f" {p} " in f" {low} " for p in word_set("delegating"))
    indifferent = (indifferent and len(rest) <= 2) or delegated
    times = [s for s in ex.spans if s.kind == "time"]
    length_said = False
    if question.slot == "time" and not times and (lengths := periods(tokenize("the last " + ex.text))):
        # to "how far back?", a length alone ("half a decade", "a decade is fine") counts back from now
        times = [Span(kind="time", text=ex.text, start=0, end=len(ex.text), value=lengths[0].kept(), source="length")]
        length_said = True
    # the answer's clauses: "newest please, the field moves fast"
    first, *clauses = [_words(p) for p in re.split(r"[,;]", ex.text)]
    if subject and not indifferent and not length_said and not _in_option_terms(words, question):
        # "newest please, the field moves fast": an answer, then why; otherwise a new request ("find me work on
        # sentiment analysis, not older than 2012")
        chosen = _option_like(first, question, hits) if len(first) < len(words) else None
        if chosen is not None and chosen.option is not None:
            return chosen
        # "the loss function side of it, the technique": a subject, then a short clause that names the option
        for clause in clauses:
            chosen = _option_like(clause, question, hits) if 0 < len(clause) <= _NAMING_CLAUSE else None
            if chosen is not None and chosen.option is not None:
                return chosen
        return None
    if question.slot == "time" and times:
        value = {k: v for k, v in times[0].value.items() if k in ("year_min", "year_max", "exclude_years")}
        for i, label in enumerate(question.options):
            rng = option_range(label)
            if rng and rng == (value.get("year_min"), value.get("year_max")):
                # the years said are kept beside the option they match: both say the same
                return Answer(
                    option=i,
                    updates={**_besides(ex, question), **value},
                    confidence=0.95,
                    why=f"the years of option {i + 1}",
                )
        return Answer(option=_own_value_option(question), updates={**_besides(ex, question), **value},
                      confidence=0.9, why="a period of its own")  # fmt: skip
    if question.slot == "venue" and (venues := [s for s in ex.spans if s.kind == "venue"]):
        # an option is matched by the venue it stands for ("NIPS" is the option "NeurIPS", and the other way)
        labels = [str((lexicon().venue(o) or {}).get("label", o)).lower() for o in question.options]
        names = [str(s.value) for s in venues]
        beside = _besides(ex, question)  # "NAACL, and nothing before 2016"
        if len(names) == 1 and names[0].lower() in labels:
            return Answer(
                option=labels.index(names[0].lower()), updates=beside, confidence=0.95, why="names a venue offered"
            )
        if len(names) > 1 and _undecided(words, ex.text, question.slot):
            return Answer(confidence=0.0, why="one venue or another, undecided (which one?)")  # "ACL or EMNLP?"
        return Answer(option=_own_value_option(question), updates={**beside, "venues": names}, confidence=0.9,
                      why="names venues of its own")  # fmt: skip
    if (said := _yes_or_no(words, question)) is not None:
        return Answer(option=said, confidence=0.95, why="yes or no to the question")
    chosen = _option_like(words, question, hits, _kind_cues(ex), ex.text)
    # (to "which sub-area?", a list of one's own is no option; "spoken input, like recorded lectures" — the rest an
    # example of the first — may be)
    examples = all(p[0] in word_set("example_leads") for p in clauses if p)
    if chosen is None and 0 < len(first) < len(words) and (question.slot != "topic" or examples):
        # "stuff that's kind of like it, doesn't need to cite it": the option said first, then what it need not be
        chosen = _option_like(first, question, hits, _kind_cues(ex))
    if chosen is not None:
        chosen.updates = {**_besides(ex, question), **chosen.updates}  # "later stuff, but mainly from ACL"
        return chosen
    if _names_another_slot(words, question.slot):
        return None  # "any venue is fine" while the question is about the sub-area: no answer to it
    if indifferent:
        if way_out is not None:  # "doesn't matter, but only ACL stuff": no preference here, a venue beside
            return Answer(option=way_out, no_preference=True, updates=_besides(ex, question), confidence=0.9,
                          why="no preference")  # fmt: skip
        return Answer(no_preference=True, confidence=0.9, why="no preference")
    return None


_NAMING_CLAUSE = 5  # words: "…, so the technique" names an option; a longer clause says more than that
_DISMISSING = frozenset("irrelevant wrong useless none neither nothing".split())
_RESTATING = frozenset("i we where when which what published publish appeared appear came come comes out from".split())
# the words around a dismissal that point at the options ("none of these are what I want")
_ABOUT_THE_OPTIONS = frozenset("these this those what i want are is".split())
_YES = frozenset("yes yeah yep yup ya sure ok okay please go ahead do it sounds good why not".split())
_NO = frozenset("no nope nah not really don't thanks neither".split())


def _not_any(words: list[str]) -> list[str]:
    """ "not any of these", "not a single one": none of them (never the indifferent "any of these")."""
    out: list[str] = []
    for w in words:
        if out and out[-1] == "not" and w in ("any", "one", "single"):
            out[-1] = "none"
            continue
        out.append(w)
    return out


def _yes_or_no(words: list[str], question: QuestionState) -> int | None:
    """The option a bare yes or no picks, when one option starts with "Yes" and one with "No"."""
    labels = [o.lower() for o in question.options]
    yes = [i for i, lab in enumerate(labels) if lab.startswith("yes")]
    no = [i for i, lab in enumerate(labels) if lab.startswith(("no,", "no "))]
    if len(yes) != 1 or len(no) != 1 or len(words) > 4:
        return None
    if set(words) <= _YES:
        return yes[0]
    if set(words) <= _NO | {"thank", "you"}:
        return no[0]
    return None


_UNDECIDED = frozenset("unsure maybe perhaps decide sure hmm hm um torn".split())
_EITHER_FINE = frozenset("fine ok okay whichever both any works good".split())


def _undecided(words: list[str], text: str, slot: str) -> bool:
    """Options joined by "or", not yet chosen: with a word of indecision or asked ("ACL or EMNLP, not sure which",
    "ICML or ICLR?"), or "either … or" where one value is set ("either the first or the second" period). "ACL or
    EMNLP" and "either 1 or 4" to a venue question are both venues; "1 or 2, either is fine" is both."""
    said = set(words)
    if "or" not in said or said & _EITHER_FINE:
        return False
    return bool(said & _UNDECIDED) or text.rstrip().endswith("?") or (slot != "venue" and "either" in said)


def _own_value_option(question: QuestionState) -> int | None:
    """The option that stands for a value of the user's own ("Custom range", "Other venue"), chosen when the
    answer gives such a value."""
    own = word_set("own_value_options")
    hits = [i for i, o in enumerate(question.options) if set(_words(o)) & own]
    return hits[0] if len(hits) == 1 else None


def _initialled(ex: Extracted, words: list[str], question: QuestionState) -> int | None:
    """An option named by its initials: the answer's one word, or a word in capitals among a few ("GNNs", "the KG
    one"); a plural's s is no initial."""
    said = [words[0]] if len(words) == 1 else []
    if len(words) <= 5:
        said += [t.low for t in ex.tokens if t.is_word and len(t.text) >= 2 and t.text.rstrip("s").isupper()]
    labels = {o.lower() for o in question.options}
    hits = {
        hit
        for word in said
        if word not in labels  # "ICML" said is the option itself, read as such
        for form in (word, word[:-1] if word.endswith("s") and len(word) > 2 else "")
        if form and (hit := _by_initials(form, question)) is not None
    }
    return hits.pop() if len(hits) == 1 else None


def _preferred_part(words: list[str]) -> list[str] | None:
    """The side a comparison prefers ("impact matters more than recency", "recency over citations", "rather new
    than cited", "I prefer influence to novelty"): its words, or None without a comparison. "less … than" turns it."""
    table = word_table("preference_markers")  # marker -> the side preferred: "before" or "after" it
    for k in range(len(words)):
        marker = next((m for m in table if words[k : k + len(m.split())] == m.split()), None)
        if marker is None or k == 0 or (marker == "to" and "prefer" not in words[:k]):
            continue
        before, after = words[:k], words[k + len(marker.split()) :]
        side = table[marker]
        if "less" in before or "fewer" in before:
            side = "after" if side == "before" else "before"
        if "prefer" in before and marker == "to":
            before = before[before.index("prefer") + 1 :]
        part = before if side == "before" else after
        return part or None
    return None


def _by_initials(word: str, question: QuestionState) -> int | None:
    """The one option whose words' initials spell ``word`` ("KBQA": "Knowledge base QA"; a word in capitals counts
    whole)."""

    def initials(label: str) -> str:
        return "".join(w if w.isupper() and len(w) > 1 else w[:1] for w in re.findall(r"[\w']+", label)).lower()

    hits = [i for i, label in enumerate(question.options) if len(word) >= 2 and initials(label) == word]
    if len(hits) > 1:  # "RL" offered as "robot learning" and "reinforcement learning": the field's own acronym
        meant = word_table("acronym_expansions").get(word)
        hits = [i for i in hits if question.options[i].lower() == meant]
    return hits[0] if len(hits) == 1 else None


_POLITE = frozenset("please thanks thank you ok okay just the option choice one ones".split())


def _option_said(words: list[str], question: QuestionState) -> int | None:
    """The option whose label the answer says, politeness aside ("both please", "last five years")."""

    def core(ws: list[str]) -> list[str]:
        # "the five year one" says "Last 5 years": a unit said in the singular is the same unit
        return [lemma(str(NUMBER_WORDS.get(w, w))) for w in ws if w not in _POLITE]

    said = core(words)
    # the question's own unit, and a relative period's "last", may go unsaid: "last five" and "5 yrs" are "Last 5
    # years" on the time question
    units = set(word_table("slot_nouns").get(question.slot, ()))
    unsaid = units | ({"last", "past"} if question.slot == "time" else set())

    def says(label: list[str]) -> bool:
        if said == label:
            return True
        # a number alone is an option's number ("5"), never a part of a label
        return (
            len(said) >= 2
            and set(said) <= set(label)
            and set(label) - set(said) <= unsaid
            and any(w.isdigit() or w not in unsaid for w in said)
        )

    named = [i for i, label in enumerate(question.options) if says(core(_words(label)))]
    return named[0] if len(named) == 1 else None


def _option_named(words: list[str], question: QuestionState) -> int | None:
    """An option named by its place next to "option" / "choice" or the question's own noun, among other words ("the
    third option, and …", "the middle period, CVPR if possible")."""
    # "3 years" is how long, not the third period: a unit of the time question numbers nothing
    units = {"year", "years"} if question.slot == "time" else set()
    nouns = {"option", "choice", "one", *word_table("slot_nouns").get(question.slot, ())} - units
    # "the middle period" counts the periods; "the last option" every option shown
    real = _counted_options(words, question)
    places = {
        **_ORDINAL_WORDS, **_NUMBER_WORDS, "last": real[-1], "bottom": real[-1], "final": real[-1], "top": 0,
        **({"middle": real[len(real) // 2]} if len(real) % 2 else {}),
    }  # fmt: skip
    for k, w in enumerate(words):
        if w not in nouns:
            continue
        for near in (words[k - 1] if k else "", words[k + 1] if k + 1 < len(words) else ""):
            core = near.lstrip("#")
            n = places.get(core, int(core) - 1 if core.isdigit() and len(core) < 3 else None)
            if n is not None and -len(question.options) <= n < len(question.options):
                return n % len(question.options)
    return None


def _besides(ex: Extracted, question: QuestionState) -> dict[str, Any]:
    """Venues or a period said beside the option chosen, when the question is about something else."""
    out: dict[str, Any] = {}
    if question.slot != "venue" and (venues := [str(s.value) for s in ex.of("venue")]):
        out["venues"] = venues
    if question.slot != "time" and (times := ex.of("time")):
        out.update({k: v for k, v in times[0].value.items() if k in ("year_min", "year_max") and v is not None})
    return out


def _kind_cues(ex: Extracted) -> dict[str, float]:
    """A kind of paper named in an answer to the direction question ("a review article would help") votes for the
    option that searches that kind."""
    kinds = {str(s.value) for s in ex.of("type")}
    return {label: 1.0 for kind, label in (("survey", "dir:survey"), ("resource", "dir:benchmark")) if kind in kinds}


_SUBJECT_AFTER_KIND = frozenset("on about for of covering".split())


def _kind_on_a_subject(ex: Extracted) -> bool:
    """A kind of paper, then a subject ("surveys on X", "datasets for X", "a review of X")."""
    kinds = ex.of("type")
    return bool(kinds) and any(
        t.low in _SUBJECT_AFTER_KIND and t.start >= kinds[0].end and t.start - kinds[0].end <= 2 for t in ex.tokens
    )


def _label_words(label: str, question: QuestionState) -> set[str]:
    """An option's content words; a venue's also its long name's ("the European one": ECCV's long name says so)."""
    words = _content(_words(label))
    if question.slot == "venue" and (row := lexicon().venue(label)) is not None:
        words |= _content(_words(" ".join(row.get("names", ()))))
    # "ML venues (NeurIPS, ICML, ICLR)" is "the machine learning conferences": a field's acronym in its words
    spelt = word_table("acronym_expansions")
    words |= {x for w in list(words) if w in spelt for x in _content(_words(spelt[w]))}
    return words


def _in_option_terms(words: list[str], question: QuestionState) -> bool:
    """Most of the answer's words are the options' own or the words people choose them with ("papers tackling the
    task it tackles": the problem option's words, no subject of a new request)."""
    said = _content(_cared_about(words))
    # "how people evaluate it" is the option "Evaluation methodology": a word of an option's stem is its word
    terms = option_terms(question)
    shared = sum(1 for w in said if is_option_word(w, terms))
    return bool(said) and shared * 2 >= len(said)


def is_option_word(word: str, terms: set[str]) -> bool:
    """Whether a word is one of the options' terms, or a synonym or a stem of one ("measure" is the option
    "evaluation")."""
    return _said_as(word_table("synonyms").get(word, word), terms)


def option_terms(question: QuestionState) -> set[str]:
    """The options' words, read through the field's synonyms, and the words people choose each by."""
    senses = word_table("option_senses")
    synonyms = word_table("synonyms")
    terms = {synonyms.get(w, w) for label in question.options for w in _label_words(label, question)}
    terms |= {lemma(w) for sets in question.option_sets for k, v in sets.items() for w in senses.get(f"{k}:{v}", ())}
    return terms


_WHATEVER = frozenset("whatever regardless irrespective any matter not".split())  # ("the technique, not the task")


def _cared_about(words: list[str]) -> list[str]:
    """The words without what they say does not matter ("the task it tackles, whatever their approach": the
    approach is no choice of the method option)."""
    out, skip = [], 0
    for w in words:
        if w in _WHATEVER:
            skip = 3
            continue
        if skip:
            skip -= 1
            continue
        out.append(w)
    return out


def _option_like(
    words: list[str],
    question: QuestionState,
    hits: list[CueHit],
    extra: dict[str, float] | None = None,
    text: str = "",
) -> Answer | None:
    """The option whose words, or whose setting's cue words, the answer shares (read through the field's synonyms:
    "predicting missing edges" is "Link prediction")."""
    synonyms = word_table("synonyms")
    said = {synonyms.get(w, w) for w in _content(_cared_about(words))}
    cue = {**votes(hits), **(extra or {})}
    senses = word_table("option_senses")
    best, best_score, second = None, 0.0, 0.0
    # a word that one option has and no other, said first, the rest an example of it ("3D stuff, like on lidar
    # point clouds"): that option; a list of subjects of one's own ("similarity, corpus, sense annotation") is not
    parts = [_words(p) for p in re.split(r"[,;]", text.lower())] if text else [words]
    # "corpus construction and sense …": the first subject, up to the first "and" / "or"
    first = _content(list(takewhile(lambda w: w not in ("and", "or"), parts[0])))
    examples = all(p[0] in word_set("example_leads") for p in parts[1:] if p)
    shared = [_stem_shared(_content(_words(label)), first) for label in question.options] if examples else []
    only = [i for i, s in enumerate(shared) if s]
    opts = []
    for label in question.options:
        # (a label of function words only, "both", is its words)
        opts.append({synonyms.get(w, w) for w in _label_words(label, question) or set(_words(label))})
    # a word several options share tells them apart less ("built on" is in "Earlier work it builds on" and in
    # "Later work that builds on it": the cue "it was built on" decides)
    shared_by = {w: sum(w in o for o in opts) for o in opts for w in o}
    # a short answer whose words touch one option only ("how people measure whether it works": evaluation)
    touched = [i for i, o in enumerate(opts) if _stem_shared(said, o)]
    # (to "which sub-area?", words of one's own are a sub-area of one's own, and a list is several)
    # (nor is a venue's long name, "… Applications of Computer Vision", touched by a word of a new request)
    own_words = question.slot in ("topic", "venue") or "," in text or text.rstrip().endswith("?")
    alone = touched[0] if len(touched) == 1 and len(words) <= 8 and not own_words else None
    for i, label in enumerate(question.options):
        opt = opts[i]
        overlap = sum(1 / shared_by[w] for w in said & opt) / max(1, len(said)) if said else 0.0
        stems = [sum(any(_same_stem(w, x) for x in o) for o in opts) for w in said]
        prefix = sum(1 / n for w, n in zip(said, stems, strict=True) if n and any(_same_stem(w, o) for o in opt)) / max(
            1, len(said)
        )
        score = max(overlap, 0.8 * prefix)
        if alone == i and not _WAY_OUT.match(label):
            score = max(score, 0.55)
        if opt and opt <= said and len(opt) <= 2 and all(shared_by[w] == 1 for w in opt):
            score = max(score, 0.8)  # every word of a short label said ("a mix of old and new": "both")
        if only == [i] and not _WAY_OUT.match(label):
            score = max(score, 0.6)
        sets = question.option_sets[i] if i < len(question.option_sets) else {}
        # what the option means, in the words people answer with ("how they did it" is the method)
        meant = [f"{k}:{v}" for k, v in sets.items()] or (["any"] if _WAY_OUT.match(label) else [])
        for key in meant:
            n = len(set(_cared_about(words)) & set(senses.get(key, ())))
            if n:
                score = max(score, 0.55 + 0.1 * n)
        label_cues = [c for kv in sets.items() if (c := _CUE_OF_SET.get((kv[0], str(kv[1]))))] or _meant_by(label)
        for label_cue in label_cues:
            if label_cue in cue:
                score = max(score, 0.6 + 0.1 * cue[label_cue])
            # ("impact", "recency": the words people rank by, for the option that ranks that way)
            if n := len(set(_cared_about(words)) & set(senses.get(label_cue, ()))):
                score = max(score, 0.55 + 0.1 * n)
        if score > best_score:
            best, best_score, second = i, score, best_score
        elif score > second:
            second = score
    # "earlier or later, can't decide": a word of one option and a word of another, joined by "or"
    own = [_content(_words(label)) for label in question.options]
    distinct = {i for i, o in enumerate(own) for w in said & o if sum(w in other for other in own) == 1}
    if len(distinct) >= 2 and {"or", "either", "decide", "between"} & set(words) and len(words) <= 12:
        return Answer(confidence=0.0, why="its words are two options' (which one?)")
    if best is not None and best_score >= 0.5 and best_score - second >= 0.15 and len(words) <= 12:
        return Answer(option=best, confidence=min(1.0, best_score), why=f"its words are option {best + 1}'s")
    if best is not None and second >= 0.6 and len(words) <= 12:
        return Answer(confidence=0.0, why="its words are two options' (which one?)")  # "earlier or later, can't decide"
    return None


@lru_cache(maxsize=256)
def _meant_by(label: str) -> list[str]:
    """What an option whose setting is not known says, as the cue labels its words vote for ("most recent",
    "classics", "earlier work"): an option worded by someone else (the LLM's questions) read as its words."""
    ex = extract(label, State())
    # a kind of paper in the label says its direction too ("Surveys that cover it": a review is that option)
    found = {**votes(cue_hits(items_of(ex))), **_kind_cues(ex)}
    # a label in the words people answer with ("established", "recent"): what those words mean
    said = set(_words(label))
    found.update({c: 1.0 for c, ws in word_table("option_senses").items() if said & set(ws)})
    return [c for c in found if c in _CUE_OF_SET.values()]


def _names_another_slot(words: list[str], slot: str) -> bool:
    """The message names what another question would ask about (words.json's slot_nouns)."""
    said = set(words)
    return any(other != slot and said & set(nouns) for other, nouns in word_table("slot_nouns").items())
