"""``read(text, state) -> Reading``: the one place that looks at a user's words.

Precedence, declared once (also in DESIGN.md):

1. **Hard spans and exact forms.** An id, a quoted title or a result number is what it is; an empty message or
   one that is only markup is unclear. A quotation written in sentences is no title but pasted text (an abstract,
   a draft's paragraph): unless a question is open, it is searched as a document, whatever the words around it ask.
2. **The state.** An answer only while a question is open (a number, an ordinal, an option's words or a value of
   the slot it asks); a refinement only while a list is on screen; "it" only while a search is being made.
3. **The act classifier and the cue lexicon**, voting together, over the labels the state allows. The winner
   must clear a threshold and beat the runner-up of another act by a margin; otherwise the reader **asks**:
   the two best readings come back as options of a question.

The parts of the act are then read from the spans: the anchor is the paper span the words point at, the topic
is what is left once cue, constraint and asking words are removed (never leftover function words), constraints
are the time, venue, person, type and count spans, kept or left out as the words around them say.
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from functools import lru_cache
from itertools import takewhile
from typing import Any, cast

from pilot.query import ASKING_WORDS
from pilot.reading import acts as acts_mod
from pilot.reading.answers import (
    DEGREE_WORDS,
    NO_PREFERENCE_WORDS,
    is_option_word,
    option_terms,
    read_answer,
    real_options,
)
from pilot.reading.cues import CueHit, Item, best, covered_tokens, cue_hits, items_of, lemma, votes
from pilot.reading.lexicon import data_json, lexicon, shared_surnames, surnames
from pilot.reading.model import (
    Act,
    Alternative,
    Anchor,
    Constraints,
    EntityAsk,
    EntityKind,
    QuestionState,
    Reading,
    Refinement,
    Span,
    SpanKind,
    State,
)
from pilot.reading.spans import (
    Extracted,
    american,
    corpus_words,
    extract,
    prose_quotes,
    term_partners,
    vocabulary,
    word_set,
    word_table,
)
from pilot.reading.timegrammar import spelled_years
from pilot.reading.tokens import by_length, edit_distance_one, normalise, respell, tokenize, without_possessive
from pilot.text import ENGLISH_STOPWORDS, strip_markup
from pilot.vocab import Direction

log = logging.getLogger(__name__)

THRESHOLD = 0.2  # below this, no reading is sure enough to act on
MARGIN = 0.03  # the winning act must beat the best other act by this much
COMMAND_UNCUED = 0.3  # below this, a command none of whose cue words were said is asked about, not done
CUE_SHARE = 0.08  # what one unit of cue vote adds to a label's score
ASKING_PART_SURE = 0.4  # a message's asking sentence alone decides its act from this classifier score

_DIRECTION_OF = {
    "dir:predecessor": "predecessor", "dir:successor": "successor", "dir:sibling": "sibling",
    "dir:benchmark": "benchmark", "dir:survey": "survey",
}  # fmt: skip
_LABEL_DIRECTION: dict[str, Direction] = {
    "search.predecessor": "predecessor", "search.successor": "successor", "search.sibling": "sibling",
    "search.benchmark": "benchmark", "search.survey": "survey",
}  # fmt: skip
_REVERSED: dict[str, Direction] = {"predecessor": "successor", "successor": "predecessor"}
_PAPER_KINDS: tuple[SpanKind, ...] = ("id", "title", "paper", "name", "cited")
_CLAUSE = frozenset('.,;:!?()[]"')
_DROP_VERBS = word_set("leave_out")
_EXCLUDING = _DROP_VERBS | frozenset("no not nothing none without except minus avoid less".split())
_FLIP = frozenset("flip reverse opposite round backwards".split())
# cue labels that speak for each act label
_CUE_FOR: dict[str, tuple[str, ...]] = {
    "command.list_fact": ("fact:most_cited", "fact:oldest", "fact:newest", "fact:authors", "fact:venues",
                          "fact:years", "fact:overview", "fact:best"),
    "command.step_edit": ("step:remove", "step:set", "step:explain", "step:rerun"),
    "command.earlier": ("cmd:earlier",), "command.version": ("cmd:version",),
    "command.clear_filters": ("cmd:clear_filters",), "command.changes": ("cmd:changes",),
    "command.count": ("list:count",), "command.kinds": ("list:kinds",), "command.on_list": ("cmd:on_list",),
    "command.which_cite": ("cmd:which_cite",), "command.compare": ("cmd:compare",),
    "search.predecessor": ("dir:predecessor",), "search.successor": ("dir:successor",),
    "search.sibling": ("dir:sibling",), "search.benchmark": ("dir:benchmark",), "search.survey": ("dir:survey",),
    "refine.drop": ("ref:drop",), "refine.keep": ("ref:keep",), "refine.more_like": ("ref:more_like",),
    "refine.less_like": ("ref:less_like",), "refine.focus": ("refine:focus",),
    "refine.exclude_topic": ("refine:exclude",), "refine.sort": ("refine:sort_newest", "refine:sort_oldest",
    "refine:sort_cited", "refine:sort_relevance"),
    "refine.size": ("refine:fewer", "refine:more", "refine:broader", "refine:narrower"),
    "refine.weights": ("refine:weights",), "refine.filter": ("refine:author", "refine:keep_only", "refine:exclude"),
    "refine.any": ("refine:any_year", "refine:any_venue", "refine:any_type"),
    "refine.recency": ("refine:recent", "refine:seminal"),
    "command.export": ("cmd:export",), "command.show_workflow": ("cmd:show_workflow",), "command.undo": ("cmd:undo",),
    "command.start_over": ("cmd:start_over",), "command.save": ("ref:save",), "command.explain": ("ref:explain",),
    "command.cite": ("ref:cite",), "command.cite_named": ("cmd:cite_named",), "command.search_now": ("cmd:search_now",),
    "command.help": ("cmd:help",), "command.library": ("cmd:library",),
    "entity.papers": ("ent:papers",), "entity.most_cited": ("ent:most_cited",), "entity.count": ("ent:count",),
    "entity.coauthors": ("ent:coauthors",), "entity.topics": ("ent:topics",),
    # "and which venues?" after an answer about a topic: its venues (the classifier tells which of the three)
    "entity.venues": ("ent:venues", "ent:follow_group"),
    "entity.institutions": ("ent:institutions", "ent:follow_group"),
    "entity.researchers": ("ent:researchers", "ent:follow_group"),
    "entity.authors": ("ent:authors",), "entity.profile": ("ent:profile",),
    "search.same_for": ("search:same_for", "search:correction"),
    "search.topic": ("search:new", "search:correction"), "search.other_year": ("search:other_year",),
    "search.paper": ("search:paper",),
    "ask.smalltalk": ("ask:smalltalk",),
}  # fmt: skip


# --- preparing the text -----------------------------------------------------------------------------------------


def _prepare(raw: str, keep: frozenset[str] = frozenset()) -> tuple[str, str | None, dict[str, str]]:
    """The text as the reader reads it: markup gone, quotes plain, Chinese in English words, typos of steering
    words put right (never the words in ``keep``: the workflow's step names). Returns (text, the English reading
    of a Chinese message, respelt words)."""
    text = normalise(strip_markup(raw))
    english, changed = lexicon().in_english(text)
    translated = english if changed else None
    text = _without_acknowledgements(english)
    text = _without_spelt_acronyms(text)
    text = spelled_years(text)
    for short, meant in _slashed_typos():
        text = short.sub(meant, text)
    text = _HYPHENED.sub(_name_then_likeness, text)
    text = _KIND_SUFFIX.sub(_kind_word, text)
    text = _kind_said_after(text)
    vocabulary = _steering_words()
    known = _known_words()
    quoted = [(m.start(), m.end()) for m in re.finditer(r"[\"“«][^\"“”«»]*[\"”»]", text)]
    respelt: dict[str, str] = {}
    out, pos = [], 0
    toks = tokenize(text)
    for k, t in enumerate(toks):
        if not t.is_word or any(a <= t.start < b for a, b in quoted):
            continue  # a quoted word: as written
        opening = k == 0 or toks[k - 1].text in (".", "!", "?")
        if (
            t.text[:1].isupper()
            and t.low not in word_table("contractions")
            and t.low not in ("i'm", "im")
            and not (opening and t.low in word_table("typos"))  # "Waht came after …": a typo that opens a sentence
        ):
            continue  # a name or a title's word: as written
        if t.low in keep:
            continue
        if (fixed := _typo(t.low, vocabulary, known) or _typo_in_term(toks, k, known)) is not None:
            out.append(text[pos : t.start])
            out.append(fixed)
            pos = t.end
            respelt[t.text] = fixed
    out.append(text[pos:])
    return "".join(out), translated, respelt


# "differential privacy (DP) in federated learning": an acronym in brackets after the words it spells is their short
# form, said twice — read once (it is no paper's name). Found by its brackets, then the few words before it are
# looked at: linear on any paste.
_BRACKETED_ACRONYM = re.compile(r"\(([A-Z][A-Za-z]{1,7})\)")


def _without_spelt_acronyms(text: str) -> str:
    out, pos = [], 0
    for m in _BRACKETED_ACRONYM.finditer(text):
        acronym = m.group(1).lower().rstrip("s")
        initials = ""
        for w in reversed(text[max(pos, m.start() - 80) : m.start()].split()[-6:]):
            initials = "".join(p[:1] for p in re.split(r"[^\w]+", w.lower()) if p) + initials
            if initials == acronym:
                out.append(text[pos : m.start()].rstrip())
                pos = m.end()
                break
    out.append(text[pos:])
    return "".join(out)


_PRAISE = frozenset(
    "thanks thank you thx cheers great perfect nice good cool awesome excellent helpful useful these are this is "
    "they look looks those that was very so much a lot really".split()
)


_FRESH_START = re.compile(
    r"^\W*(?:forget (?:it|that|this)|never ?mind|scratch that|ok(?:ay)?)\s*[,;:.!—–-]+\s*(?=\w)", re.I
)


def _without_acknowledgements(text: str) -> str:
    """ "Thanks, these are great. Separately, could you …": sentences that only thank or praise are no request;
    "forget it, show me …" starts afresh."""
    text = _FRESH_START.sub("", text)
    parts = re.split(r"(?<=[.!?])\s+", text)
    while len(parts) > 1:
        # ("3, 5 and 9 look great." praises results it names: no acknowledgement to drop)
        words = re.findall(r"[a-z0-9'#]+", parts[0].lower())
        if not words or not set(words) <= (_PRAISE | word_set("reactions")):
            break
        parts = parts[1:]
    return " ".join(parts)


# "BERT-like", "GAN-style", "word2vec-esque": a name, then likeness (the tokenizer would keep one word); a field's
# lower-case compound ("human-like text") stays whole. One word at a time: linear on any paste.
_HYPHENED = re.compile(r"(?<![\w.+-])[\w.+]+(?:-[\w.+]+)+")
_LIKE_SUFFIXES = ("-like", "-style", "-esque")


def _name_then_likeness(m: re.Match[str]) -> str:
    word = m.group(0)
    stem = next((word[: -len(x)] for x in _LIKE_SUFFIXES if word.lower().endswith(x)), None)
    if not stem or not any(c.isupper() or c.isdigit() for c in stem):
        return word
    return f"{stem} like"


# "the survey-type ones", "dataset-style papers", "survey-ish": a kind of paper with a suffix of likeness is that kind
_KIND_SUFFIX = re.compile(r"\b([a-z]+)-(?:type|style|ish|kind|like|esque)\b", re.I)


@lru_cache(maxsize=1)
def _one_word_kinds() -> frozenset[str]:
    return frozenset(e.phrase[0] for e in lexicon().entries if e.kind == "type" and len(e.phrase) == 1)


def _kind_word(m: re.Match[str]) -> str:
    return m.group(1) if m.group(1).lower() in _one_word_kinds() else m.group(0)


@lru_cache(maxsize=1)
def _kind_after() -> re.Pattern[str]:
    kinds = "|".join(sorted(word_set("kind_nouns")))
    # starts only where a run of separators starts: linear on a paste of dashes or blanks
    return re.compile(
        rf"(?<![,;:-])[,;:-]+ ?(?:(?:specifically|particularly|mainly|especially|just|only) )?the "
        rf"(?P<mod>[\w-]+(?: [\w-]+)?) (?:{kinds})\b",
        re.I,
    )


def _kind_said_after(text: str) -> str:
    """ "object tracking, the multi-object kind": the kind said after the subject is a word of it ("multi-object
    object tracking"), put before the subject's words (back to the first request word before them)."""
    m = _kind_after().search(text)
    if m is None:
        return text
    before = text[: m.start()].rstrip()
    words = [t for t in tokenize(before) if t.is_word]
    request = word_set("request_words")
    k = len(words)
    while k > 0 and words[k - 1].low not in request:
        k -= 1
    if k == len(words):
        return text  # "papers, the survey kind": no subject before it
    at = words[k].start
    return f"{before[:at]}{m.group('mod')} {before[at:]}{text[m.end() :]}"


@lru_cache(maxsize=1)
def _slashed_typos() -> list[tuple[re.Pattern[str], str]]:
    """The typos table's rows with a slash ("w/", "w/o", "b/c"): a slash is no word boundary to the tokenizer, so they
    are put right in the text before it is tokenized."""
    return [
        (re.compile(rf"(?<![\w/]){re.escape(short)}(?![\w/])", re.I), meant)
        for short, meant in word_table("typos").items()
        if "/" in short
    ]


def _typo(word: str, vocabulary: frozenset[str], known: frozenset[str]) -> str | None:
    table = word_table("typos")
    if word in table:
        return table[word]
    contractions = word_table("contractions")
    if word in contractions:
        return contractions[word]
    if _inflected(word, known):
        return None  # "leans" is "lean" with an ending, not a typo of "leads"
    fixed = respell(word, vocabulary, known)
    if (
        fixed is None
        and len(word) >= 8
        and word not in known
        and word.isalpha()
        and word.capitalize() not in surnames()
        and word not in lexicon().words
    ):
        # a long subject word one letter off the one corpus word it can be ("reinforcment", "classifcation")
        near = [w for w in by_length(known, len(word)) if len(w) >= 8 and edit_distance_one(word, w)]
        fixed = near[0] if len(near) == 1 else None
    return fixed


_INFLECTIONS = (("ies", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ed", "e"), ("ing", ""), ("ing", "e"), ("ly", ""))


def _typo_in_term(toks: list[Any], k: int, known: frozenset[str]) -> str | None:
    """An unknown word one letter off the one word that makes a term of the field with its neighbour ("federated
    learing" is "federated learning", though "learing" is one letter from "leaning" and "bearing" too)."""
    word = toks[k].low
    if len(word) < 5 or not word.isalpha() or word in known or _inflected(word, known):
        return None
    before = toks[k - 1].low if k > 0 and toks[k - 1].is_word else None
    after = toks[k + 1].low if k + 1 < len(toks) and toks[k + 1].is_word else None
    near = {w for w in term_partners(before, after) if w in known and edit_distance_one(word, w)}
    return near.pop() if len(near) == 1 else None


def _inflected(word: str, known: frozenset[str]) -> bool:
    """A known word with an ending of English ("factories": "factory"): a word, not a typo."""
    return any(word.endswith(end) and word[: -len(end)] + base in known for end, base in _INFLECTIONS)


_STEERING: frozenset[str] | None = None


def _steering_words() -> frozenset[str]:
    global _STEERING
    if _STEERING is None:
        from pilot.reading.cues import _table

        words = set(acts_mod._asking_words()) | set(word_set("request_words")) | set(_table()[0])
        words |= set(
            "between before after since until inclusive earlier later older newer explain results result second third "
            "fourth fifth first please similar references bibtex export download undo understand survey surveys "
            "dataset datasets benchmark benchmarks predecessors successors citations citing onwards onward coauthored "
            "authored".split()
        )
        _STEERING = frozenset(w for w in words if len(w) >= 4 and w.isalpha())
    return _STEERING


@lru_cache(maxsize=1)
def _known_words() -> frozenset[str]:
    """Words that are right as they are, though one letter from a steering word ("form", "latent", "glove"), and
    the words of the lexicon's names ("preprint" is rare in the corpus's abstracts, but no typo of "preparing")."""
    # the words an answer's indifference is said in are the reader's own ("picky" is no typo of "pick")
    return vocabulary() | {w for w in lexicon().words if w.isalpha()} | NO_PREFERENCE_WORDS


# --- the acts --------------------------------------------------------------------------------------------------


def _longest(hits: list[CueHit]) -> list[CueHit]:
    """Words read by a longer cue about a result are that cue's: "more" in "more like #4" asks for no more results,
    "like #4" in it is no similar-papers search (the longest match wins, as in a gazetteer)."""
    asks = {f"ent:{k}" for k in _ENTITY_PRECEDENCE}  # "most cited author in": who, not which paper
    longer = [
        frozenset(h.items)
        for h in hits
        if (h.label.startswith(("ref:", "ent:")) and (h.slots or (len(h.items) >= 3 and h.label in asks)))
        or (h.label.startswith("fact:") and len(h.items) >= 3)  # "who are the main authors here": of the list
    ]
    out = [h for h in hits if not any(set(h.items) < r for r in longer)]
    # "what it was inspired by": inside the longer direction phrase, "it … inspired" is no other direction
    ways = [(frozenset(h.items), h.label) for h in out if h.label.startswith("dir:")]
    out = [h for h in out if not any(h.label.startswith("dir:") and lab != h.label and set(h.items) < r
                                     for r, lab in ways)]  # fmt: skip
    # "more about X" is a focus, its "more" no bigger list; "newest first" an order, its "newest" no preference
    phrases = [frozenset(h.items) for h in out if h.label.startswith("refine:") and len(h.items) > 1]
    inner = ("refine:more", "refine:fewer", "refine:recent", "refine:seminal")  # words of size and age
    return [h for h in out if not (h.label in inner and any(set(h.items) < r for r in phrases))]


_KIND_DIRECTION = {"survey": "dir:survey", "resource": "dir:benchmark"}  # the direction a kind of paper says


def resolve_typed(hits: list[CueHit], items: list[Item], ex: Extracted) -> list[CueHit]:
    """A kind of paper said of a paper ("surveys covering BERT", "the datasets GloVe used") is a direction: the
    survey or benchmark one, by the kind the span names."""
    out = []
    for h in _longest(hits):
        first = items[min(h.items)].first_token
        if h.label.startswith("ent:") and first > 0 and ex.tokens[first - 1].low in ("my", "our"):
            continue  # "my lab is working on …", "our group": the asker, not a question about labs or groups
        if h.label != "dir:typed":
            out.append(h)
            continue
        kinds = [ex.spans[items[p].span_index].value for p in h.slots if items[p].word == "T"]  # type: ignore[index]
        label = _KIND_DIRECTION.get(str(kinds[0]) if kinds else "")
        if label is not None:
            out.append(replace(h, label=label))
    if not any(h.label.startswith("dir:") for h in out) and (far := _kind_then_paper(items, ex)) is not None:
        out.append(far)
    return out


def _kind_then_paper(items: list[Item], ex: Extracted) -> CueHit | None:
    """ "overview articles that would put Neural Discrete Representation Learning in context": a kind of paper and
    then a paper in one clause, no direction said in between — that kind of paper about it (a weak vote: any cue
    that says more wins)."""
    for t, it in enumerate(items):
        k = it.span_index
        if not (it.slot and it.word == "T" and k is not None and str(ex.spans[k].value) in _KIND_DIRECTION):
            continue
        kind = str(ex.spans[k].value)
        for p in range(t + 1, min(len(items), t + 8)):
            if not items[p].slot and items[p].word in _CLAUSE:
                break
            if items[p].slot and items[p].word == "P" and ex.spans[items[p].span_index or 0].kind != "it":
                return CueHit(_KIND_DIRECTION[kind], "T … P", 1.0, (t, p), (t, p))
    return None


_ENTITY_SPANS: tuple[SpanKind, ...] = ("person", "venue", "org")
# when several entity cues speak, the more specific question wins ("how many papers …" is a count of papers)
_ENTITY_PRECEDENCE: tuple[EntityKind, ...] = (
    "authors_papers",
    "count",
    "most_cited",
    "coauthors",
    "topics",
    "profile",
    "institutions",
    "researchers",
    "venues",
    "authors",
    "papers",
)


def _directed_paper(cue: dict[str, float], ex: Extracted) -> bool:
    """A paper named (or described: "the parsing paper by Collins") with a search direction is a paper search."""
    strong = [s for s in ex.of(*_PAPER_KINDS) if not is_weak(s) and s.kind != "name"]
    named = strong or ex.of("name")
    described = bool(ex.of("person")) and any(t.low in ("one", "paper", "work", "article") for t in ex.tokens)
    return bool(named or described) and any(k in cue for k in ("dir:predecessor", "dir:successor", "dir:sibling"))


_STORING = frozenset("stash put add save store file pop stick throw drop dump".split())
_FIELD_NOUNS = frozenset("area field topic subject domain line direction".split())


def _field_pointed(ex: Extracted, pointers: tuple[str, ...] = ("this", "that", "its")) -> list[int]:
    """Where a field noun is pointed at ("this area", "that field"): the search's own subject, not words of one."""
    low = [t.low for t in ex.tokens]
    return [i for i, w in enumerate(low) if w in _FIELD_NOUNS and i > 0 and low[i - 1] in pointers]


def _allowed(label: str, state: State, ex: Extracted, cue: dict[str, float], subject: int) -> bool:
    act, _, sub = label.partition(".")
    if label == "ask.smalltalk":
        # small talk speaks to pilot ("how's the weather?", "what's your name"); a bare phrase is a subject
        # small talk has no subject of its own: a long question about dense retrieval is a request
        return ("ask:smalltalk" in cue or any(t.low in ("you", "your", "?") for t in ex.tokens)) and subject < 2
    if label == "ask.unclear":
        return subject < 2  # a message with a subject of its own is about it (small talk is ask.smalltalk)
    if label == "search.topic":
        return subject > 0
    if label == "command.library" and {t.low for t in ex.tokens} & _STORING:
        return False  # "stash all of these in my library": into it (save), not a look at it
    if label == "command.kinds" and _field_pointed(ex, ("this", "that", "the", "its")):
        return False  # "are there review papers on this area": about the subject, not the list on screen
    if label in ("command.cite_named", "command.compare", "command.on_list", "command.which_cite"):
        # "which of these cite X" asks about the list on screen; with none, "which papers cite X" is a search
        points = any(t.low in word_set("deictic") or t.low in ("list", "results", "shown") for t in ex.tokens)
        return bool(ex.of(*_PAPER_KINDS)) and (label != "command.which_cite" or state.has_list and points)
    if label in ("entity.authors", "entity.authors_papers"):
        # whose authors: a paper named, pointed at ("it", "#3"), on screen or asked about before
        asked_paper = bool((state.asked or {}).get("paper"))
        if sub == "authors_papers" and not any(t.low in ("author", "authors", "writers") for t in ex.tokens):
            return asked_paper  # "papers by Transformer" names no authors to look up the other work of
        return bool(ex.of(*_PAPER_KINDS, "it", "ref")) or state.anchor is not None or asked_paper
    if act == "entity" and state.has_list and any(k.startswith("list:") for k in cue):
        return False  # "how many are by Manning?", "which of these are from ACL?": about the list on screen
    if act == "entity" and state.has_list and "refine:exclude" in cue:
        return False  # "take out papers by LeCun": a question never leaves anything out; the list does
    if act == "entity" and sub not in ("authors", "authors_papers") and _directed_paper(cue, ex):
        return False  # a named paper with a search direction is a paper search ("later work by Manning on GloVe")
    if (
        act == "entity"
        and not ex.of(*_ENTITY_SPANS)
        and set(k for k in cue if k.startswith("ent:")) <= {"ent:most_cited", "ent:count", "ent:papers"}
    ):
        return False  # "the most cited papers on parsing": a topic's seminal papers, a search
    if act == "entity":
        # an entity question names a person, a venue or an organisation, or asks for people, venues or
        # institutions in words ("who works on X?")
        asks = any(k.startswith("ent:") for k in cue)
        if not asks and subject > 0 and not ex.of("person", "org"):
            return False  # "sarcasm detection in tweets at ACL or EMNLP": a subject at venues, a search
        return (
            asks or bool(ex.of(*_ENTITY_SPANS)) or (sub in ("authors", "authors_papers") and bool(ex.of(*_PAPER_KINDS)))
        )
    if act == "refine" and ex.of("format"):
        return False  # "bibtex entries for 2, 4 and 7 only": a file format asks for an export, not a narrower list
    if act == "refine":
        if state.phase == "entity_answer" and sub in ("focus", "exclude_topic"):
            return False  # after an answer about people or venues, words on a subject ask anew
        return state.has_list or (state.phase == "question" and sub == "filter")
    if (
        label in ("search.predecessor", "search.successor", "search.sibling")
        and state.has_list
        and not state.anchor
        and subject == 0
        and not ex.of(*_PAPER_KINDS, "it", "ref")
    ):
        return False  # "newer papers only" under a topic's results: no paper to go before or after, an age
    if label == "search.benchmark" and not ex.of(*_PAPER_KINDS, "it") and not state.anchor:
        # "annotation artifacts in QA benchmarks": what the papers study, not datasets asked for
        types = ex.of("type")
        return not types or not all(_kind_in_subject(ex, s) for s in types)
    if label in ("search.current", "search.other_year"):
        return state.has_search
    if label == "search.same_for":
        return state.has_search and bool(ex.of(*_PAPER_KINDS))
    if act == "command" and sub in ("explain", "save", "cite", "kinds", "count", "list_fact", "on_list",
                                     "which_cite", "changes", "clear_filters"):  # fmt: skip
        return state.has_list
    if label == "command.search_now":
        return state.phase in ("question", "results")
    if act == "command" and sub in ("show_workflow", "undo", "version"):
        return state.has_search  # before any search there is no workflow or step to show or take back
    if label == "command.step_edit":
        # "skip the preprints", "drop the ACL ones": a kind of paper, a venue or a period is what the list holds;
        # a workflow step is named as one ("the rerank step", `top_n`)
        of_the_list = ex.of("type", "pubkind", "venue", "time")
        named_step = ex.of("step") or any(t.low in _STEP_NOUNS for t in ex.tokens)
        return state.phase == "results" and (bool(named_step) or not of_the_list)
    return True


def _scores(ex: Extracted, items: list[Item], hits: list[CueHit], state: State) -> dict[str, float]:
    raw = acts_mod.classifier().scores(acts_mod.typed_text(ex))
    if (part := _the_asking_part(ex)) is not ex:
        # the asking sentence decides when it is clear on its own ("Can you pull that together?" is not)
        asked = acts_mod.classifier().scores(acts_mod.typed_text(part))
        if max(asked.values(), default=0.0) >= ASKING_PART_SURE:
            raw = asked
    cue = votes(hits)
    subject = _subject_words(ex, items, hits)
    out = {}
    for label, score in raw.items():
        if not _allowed(label, state, ex, cue, subject):
            continue
        boost = max((cue.get(c, 0.0) for c in _CUE_FOR.get(label, ())), default=0.0)
        out[label] = score + CUE_SHARE * min(boost, 4.0)
    return out


def _the_asking_part(ex: Extracted) -> Extracted:
    """The message from its first sentence that asks, when sentences that ask nothing come before it ("We export
    everything to Zotero anyway. Any papers on citation recommendation?"): what the message asks is said there, and
    the story before it is no request of its own to the classifier."""
    sentences = _sentences(ex)
    first = next((n for n, (a, b) in enumerate(sentences) if _asks(ex, a, b)), 0)
    told = sentences[:first]
    # "What is the most cited paper of Michael I. Jordan?": a name's initial is no sentence told before a question
    if first == 0 or any(b - a < 3 or ex.tokens[a].low in _OPENERS for a, b in told):
        return ex
    cut = ex.tokens[sentences[first][0]].start
    spans = [sp.model_copy(update={"start": sp.start - cut, "end": sp.end - cut}) for sp in ex.spans if sp.start >= cut]
    return Extracted(ex.text[cut:], [], spans)


def _rank(scores: dict[str, float]) -> list[tuple[str, float]]:
    return sorted(scores.items(), key=lambda kv: kv[1], reverse=True)


# --- the topic: what is left -----------------------------------------------------------------------------------


_SUBJECT_NOUNS_TOO = frozenset(
    "recommendations suggestions resources sources materials information insights insight".split()
)


@lru_cache(maxsize=1)
def _edge_words() -> frozenset[str]:
    # data files read once: this set is asked for per word of every message
    return (
        word_set("request_words")
        # the query's own words of asking ("a paper that discusses …"): one list for both, but for its nouns that
        # also end a subject ("explanation generation for recommendations", "information extraction")
        | (ASKING_WORDS - _SUBJECT_NOUNS_TOO)
        | word_set("reactions")
        | ENGLISH_STOPWORDS
        | frozenset(
            "papers paper work works stuff things reads read got get gets whats what's im i'm id i'd ive i've lit "
            "review reviews survey surveys overview overviews mostly mainly especially particularly specifically only "
            "just the ones one narrow focus please thanks thank".split()
        )
    )


_JOINING = frozenset("on of for in with to".split())


def _subject_on_both_sides(
    toks: list[Any], i: int, removed: set[int], protected: set[int], edge: frozenset[str]
) -> bool:
    def subject(k: int) -> bool:
        return (
            0 <= k < len(toks)
            and toks[k].is_word
            and (k in protected or (k not in removed and toks[k].low not in edge))
        )

    return subject(i - 1) and subject(i + 1)


def topic_chunks(ex: Extracted, removed: set[int]) -> list[tuple[int, int, str]]:
    """Runs of the message's words that are left (clause marks and removed words split them), trimmed of
    asking words at both ends: (first token, last token, words)."""
    toks = ex.tokens
    edge = _edge_words()
    field = word_set("field_words")
    modifiers = word_set("cue_modifiers")
    # the words of a term or a field's name are the subject's whole: never trimmed, never cut
    # (a field's name taken whole as the paper searched from, "BatchNorm's roots", is no subject's word)
    protected = {
        i
        for s in ex.spans
        if s.kind == "term" or (is_weak(s) and not _span_tokens(ex, s) <= removed)
        for i in _span_tokens(ex, s)
    }
    protected |= _documents_as_object(toks, removed, edge)
    chunks: list[tuple[int, int]] = []
    start = None
    for i, t in enumerate(toks):
        leaves_out = t.low in _EXCLUDING or (t.low == "but" and i + 1 < len(toks) and toks[i + 1].low in _EXCLUDING)
        cut = i in removed or t.text in _CLAUSE or t.text == "-" or not (t.is_word or t.text in "+/&'")
        cut = (cut or leaves_out) and i not in protected
        if cut and i in removed and t.low in _JOINING and _subject_on_both_sides(toks, i, removed, protected, edge):
            cut = False  # "adversarial attacks on text classifiers": a preposition between two subject words
        if cut:
            if start is not None:
                chunks.append((start, i - 1))
            start = None
        elif start is None:
            start = i
    if start is not None:
        chunks.append((start, len(toks) - 1))
    out = []
    for a, b in chunks:

        def trim_word(k: int, nxt: int) -> bool:
            if k in protected:
                return False
            w = toks[k].low
            if w not in edge and lemma(w) not in edge:
                return False
            # "reading comprehension", "machine learning": a field's word next to a subject's is part of it
            if w in field and 0 <= nxt < len(toks) and nxt not in removed and toks[nxt].low not in edge:
                return False
            # "citation recommendation": a cue word naming the task its field word ends
            return not (w in modifiers and nxt == k + 1 < len(toks) and toks[nxt].low in field)

        while a <= b and trim_word(a, a + 1):
            a += 1
        while b >= a and trim_word(b, b - 1):
            b -= 1
        a = _after_asking_prefix(toks, a, b, edge)
        if a <= b:
            words = ex.text[toks[a].start : toks[b].end]
            out.append((a, b, words))
    return out


def _documents_as_object(toks: list[Any], removed: set[int], edge: frozenset[str]) -> set[int]:
    """ "summarisation of scientific articles", "keyphrase extraction from research papers": papers of a kind,
    after a preposition that follows the subject, are what the subject works on — its words, not words of asking."""
    kinds, nouns = word_set("document_modifiers"), word_set("document_nouns")
    out: set[int] = set()
    for i in range(3, len(toks)):
        if toks[i].low not in nouns or toks[i - 1].low not in kinds or toks[i - 2].low not in _OBJECT_PREPOSITIONS:
            continue
        before = toks[i - 3]
        if before.is_word and i - 3 not in removed and before.low not in edge:
            out |= {i - 2, i - 1, i}
    return out


_OBJECT_PREPOSITIONS = frozenset("of from for in across on".split())


_REQUEST_VERBS = frozenset(
    "retrieve find get show give list fetch pull search look preparing prepare writing write need want like love "
    "recommend suggest point compile collect gather cite read student researcher engineer working interested "
    "postdoc professor phd project thesis dissertation starting started lab group team trying try tries plan plans "
    "planning hoping hope aim aiming wants reading readings pointers".split()
)


def _after_asking_prefix(toks: list[Any], a: int, b: int, edge: frozenset[str]) -> int:
    """Where the subject starts when a chunk opens with a request in words of its own ("would like you to retrieve
    publications concerning X"): after the last subject-introducing word that follows a request verb."""
    intros = word_set("topic_intros")
    low = [t.low for t in toks]
    for k in range(a + 1, b - 1):
        # "phd student from brazil and my topic is fake news detection …": the subject follows its own name
        if low[k] in ("my", "our") and low[k + 1] in _SUBJECT_NOUNS and low[k + 2] in ("is", "was", "are"):
            after = k + 3
            while after <= b and (low[after] in edge or low[after] in intros):
                after += 1
            if after <= b:
                return after
    verb_at = next((k for k in range(a, b + 1) if low[k] in _REQUEST_VERBS or lemma(low[k]) in _REQUEST_VERBS), None)
    if verb_at is None:
        return a
    cut = None
    for k in range(verb_at + 1, b):
        if low[k] == "to" and low[k + 1] in word_set("aim_verbs"):
            cut = k + 2
            break  # "we'd like to do medication extraction", "trying to build X": what they want to do is the subject
        if low[k] in intros and low[k] not in ("to", "with", "using", "for", "of", "in"):
            cut = k + 1
            break  # "look into X on Y": the subject's own words may hold "on", "about"
        if low[k] in _DONE_VERBS and "how" in low[verb_at:k]:
            cut = k + 1
            break  # "see how others have done crop yield prediction": what they did is the subject
    if cut is None:
        return a
    while cut <= b and low[cut] in edge:
        cut += 1
    return cut if cut <= b else a


def _content_count(words: str) -> int:
    edge = _edge_words()
    return sum(1 for w in re.findall(r"[\w'+-]+", words.lower()) if w not in edge)


def _headline(ex: Extracted, chunks: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """A research told in sentences names its subject first ("Paper idea: streaming speech translation with low
    latency. Cascaded pipelines … We propose a policy …"): the chunks of the first sentence that has a subject of
    two words or more, unless a later one asks for it in words ("… I need papers on X")."""
    sentences = _told_in_sentences(ex)
    if not sentences:
        return chunks
    asked_for = [
        c for c in chunks if _introduced(ex, c[0]) and _content_count(c[2]) >= 2 and any(
            f <= c[0] <= la and _asks(ex, f, la) for f, la in sentences)
    ]  # fmt: skip
    if asked_for:
        # "… I need papers on X": the subject asked for, in the last sentence that asks (the story before it may
        # "build search for legal documents")
        last = max(next(f for f, la in sentences if f <= c[0] <= la) for c in asked_for)
        return [c for c in chunks if c[0] >= last]
    for first, last in sentences:
        if _about_the_asker(ex, first, last):
            continue  # "Hi, I'm a sociologist moving into computational methods."
        inside = [c for c in chunks if first <= c[0] <= last]
        if any(_content_count(c[2]) >= 2 for c in inside):
            return inside
    return chunks


_WORKING_ON = frozenset("working work works researching research studying study focusing focus thesis project".split())


def _about_the_asker(ex: Extracted, first: int, last: int) -> bool:
    """A sentence that says who the asker is ("Hi, I'm a sociologist …", "I am a PhD student in …")."""
    low = [t.low for t in ex.tokens[first : last + 1] if t.is_word and t.low not in ("hi", "hello", "hey", "dear")]
    said = " ".join(low[:4]) + " "
    roles = word_set("asker_roles")
    if set(low) & _WORKING_ON:
        return False  # "I'm a PhD student working on document-level MT": the subject is said here
    return said.startswith(tuple(f"{o} " for o in word_set("asker_openers"))) or any(
        low[: len(o.split())] == o.split() and len(low) > len(o.split()) and low[len(o.split())] in roles
        for o in ("i'm", "im", "i am", "we are")
    )


def _choose_topic(
    chunks: list[tuple[int, int, str]], ex: Extracted, excluded_after: set[int]
) -> tuple[str | None, list[str]]:
    """The chunk that is the subject, and the chunks the words leave out ("… but not about robotics")."""
    kept: list[tuple[int, int, str]] = []
    left_out: list[tuple[int, int, str]] = []
    for a, b, words in chunks:
        (left_out if a in excluded_after else kept).append((a, b, words))
    if not kept:
        return None, [w for _, _, w in left_out]
    # a subject introduced as what is asked for ("papers on X") wins over the story around it, however long
    kept = [_introduced_tail(ex, c) for c in kept]
    kept = _headline(ex, kept)
    # "I manage a small data team; we want to forecast …": who the asker is is no subject while another is said
    mine = [(f, la) for f, la in _sentences(ex) if _about_the_asker(ex, f, la)]
    others = [c for c in kept if not any(f <= c[0] <= la for f, la in mine)]
    if mine and others and any(_content_count(c[2]) >= 2 for c in others):
        kept = others
    best_chunk = max(kept, key=lambda c: (_introduced(ex, c[0]), _content_count(c[2]), -c[0]))
    if _content_count(best_chunk[2]) == 0:
        return None, [w for _, _, w in left_out]
    words = _before_description(ex, best_chunk)
    first = words.split(" ", 1)[0]
    rest_lower = not any(w[:1].isupper() for w in words.split()[1:])  # "Knowledge Graph" is written as a name
    if best_chunk[0] == 0 and first[1:].islower() and rest_lower and first.lower() in corpus_words():
        words = first.lower() + words[len(first) :]  # "Question answering papers …": capital of the sentence only
    return words, [w for _, _, w in left_out]


_RELATIVES = frozenset("that which who whose where".split())
LONG_MESSAGE = 20  # words: a research described at length, whose subject is its head, not every clause after it


def _before_description(ex: Extracted, chunk: tuple[int, int, str]) -> str:
    """In a long message, a subject up to the clause that describes it ("a text to SQL parser that maps natural
    language questions onto multi table databases, using …" is about "text to SQL parser"): a short message's
    "networks that scale to billions of nodes" keeps what it asks for."""
    a, b, words = chunk
    if sum(t.is_word for t in ex.tokens) < LONG_MESSAGE:
        return words
    for k in range(a + 1, b):
        if ex.tokens[k].low in _RELATIVES and _content_count(ex.text[ex.tokens[a].start : ex.tokens[k - 1].end]) >= 2:
            return ex.text[ex.tokens[a].start : ex.tokens[k - 1].end]
    return words


_ASKING_NOUNS = frozenset(
    "papers paper work works research literature studies study stuff anything something articles publications reading "
    "reads read find found looked look searching search pointers references "
    "exists exist there done published written worked looking".split()  # "what exists on X", "has anyone worked on X"
    + "surveys reviews overviews tutorials learn know".split()  # "surveys on X", "learn about X"
)


# what a researcher's own subject is called ("my thesis is about X", "our project is on X", "the question is …")
_WORK_KINDS = frozenset("approaches methods techniques ideas solutions".split())
_WANTS_OF_WORK = frozenset("want need any some find recommend suggest".split())
_SUBJECT_NOUNS = frozenset(
    "topic project thesis dissertation focus area field interest interests subject work question problem".split()
)
_DONE_VERBS = frozenset("done approached tackled handled solved addressed attacked modelled modeled".split())
_WONDERING = frozenset("whether if how we you one can could i to".split())


def _introduced_tail(ex: Extracted, chunk: tuple[int, int, str]) -> tuple[int, int, str]:
    """The part of a chunk that its own words introduce as what is asked for ("… ML literature has on generative
    models for antibody design", "… and the big question is whether you can predict disease status from …"): from
    the last introduction inside it on, when that part has a subject of two words or more; else the chunk."""
    a, b, _ = chunk
    edge = _edge_words()
    # ("neural architecture search for efficient mobile models": a term of the field before it is the subject's head)
    termed = {i for s in ex.of("term") for i in _span_tokens(ex, s)}
    for k in range(b - 1, a, -1):
        start = k + 1
        while start <= b and ex.tokens[start].low in edge:
            start += 1
        if start > b or start == a or not ex.tokens[start].is_word or not _introduced(ex, start):
            continue
        # (a term before the asker's own clause, "I teach high school physics and I'm curious about …", is not)
        own = [i for i in range(a, start) if ex.tokens[i].low in ("i", "we")]  # (contractions are spelt out)
        if termed & set(range(own[-1] if own else a, start)):
            return chunk
        words = ex.text[ex.tokens[start].start : ex.tokens[b].end]
        if _content_count(words) >= 2:
            return start, b, words
    return chunk


def _cites_the_quoted(ex: Extracted, s: Span) -> bool:
    """ "Koehn et al. 2003, "Statistical Phrase-Based Translation"": authors and year right before or after a quoted
    title cite that paper; the title names it."""
    if s.kind != "cited":
        return False
    quoted = [t for t in ex.spans if t.kind == "title" and t.source == "quoted"]
    gaps = [ex.text[s.end : t.start] if s.end <= t.start else ex.text[t.end : s.start] for t in quoted]
    return any(_ONLY_PUNCTUATION.fullmatch(gap) is not None for gap in gaps)


_ONLY_PUNCTUATION = re.compile(r"[\s,:;()\[\]\-–—\"'“”‘’]*")


def _introduced(ex: Extracted, first: int) -> bool:
    """A chunk introduced as the subject of a request ("find papers on X", "has anyone looked at X", "work on X"),
    rather than said about the asker ("I'm a PhD student in robotics")."""
    low = [t.low for t in ex.tokens]
    k = first - 1
    while k >= 0 and low[k] in ("the", "a", "an", "some", "any"):
        k -= 1
    asked = k
    while asked >= 0 and first - asked <= 4 and low[asked] in _WONDERING:
        asked -= 1  # "the big question is whether you can predict X"
    if asked >= 1 and low[asked] in ("is", "was") and low[asked - 1] in _SUBJECT_NOUNS:
        return True  # "my topic is fake news detection", "our project was about …"
    if k >= 1 and low[k] in _DONE_VERBS and "how" in low[max(0, k - 4) : k]:
        return True  # "how others have done crop yield prediction"
    if k >= 1 and low[k] in _ASKING_NOUNS and low[k - 1] in ("which", "what", "any"):
        return True  # "which papers predict poverty from satellite imagery?"
    if k >= 1 and low[k - 1] in word_set("interest_words") and low[k] in (*word_set("topic_intros"), "by"):
        return True  # "I teach high school physics and I'm curious about X", "fascinated by X"
    if k < 0 or low[k] not in word_set("topic_intros"):
        return False
    if k >= 2 and low[k - 1] in _WORK_KINDS and low[k - 2] in _WANTS_OF_WORK:
        return True  # "I want methods for X", "any approaches to X" (not "stats methods for X": a subject)
    # "papers on X", "what the literature has on X" — not "topic modeling for X" (a noun of the subject's own)
    edge = _edge_words()
    return any(
        low[j] in _ASKING_NOUNS | _SUBJECT_NOUNS and all(low[m] in edge for m in range(j + 1, k))
        for j in range(max(0, k - 3), k)
    )


def _excluded_starts(ex: Extracted, items: list[Item]) -> set[int]:
    """First tokens of chunks that a leaving-out word governs ("but exclude anything about robotics")."""
    out = set()
    low = [t.low for t in ex.tokens]
    for i, w in enumerate(low):
        if w in _EXCLUDING or (w == "rid" and i > 0 and low[i - 1] == "get"):
            j = i + 1
            while j < len(low) and j - i <= 4 and (low[j] in _edge_words() or low[j] in _EXCLUDING):
                j += 1
            out.add(j)
    return out


# --- assembling the parts -----------------------------------------------------------------------------------


def _welcome_too(ex: Extracted, s: Span) -> bool:
    """ "preprints ok too", "surveys welcome as well": a kind allowed beside the others, no filter to that kind."""
    j = _token_at(ex, s.end)
    after = [t.low for t in ex.tokens[j : j + 4]]
    before = [t.low for t in ex.tokens[max(0, _token_at(ex, s.start) - 2) : _token_at(ex, s.start)]]
    return bool(set(after) & word_set("allowing")) and not {"only", "just"} & set(before)


def _constraints(
    ex: Extracted, used: set[int], state: State, *, refine: bool, leaving: set[int] | None = None
) -> Constraints:
    """Time, venue, person, type, publication kind, count and citation-floor spans, kept or left out (``leaving``:
    the tokens of the cues that leave something out, "I don't want …", "get rid of …")."""
    c = Constraints()
    low = [t.low for t in ex.tokens]
    leaving = leaving or set()

    def excluded_before(span: Span, reach: int = 5) -> bool:
        i = _token_at(ex, span.start)
        for j in range(i - 1, max(-1, i - reach - 1), -1):
            if ex.tokens[j].text in ".;!?":
                return False
            if (
                low[j] in _EXCLUDING
                or j in leaving
                or (low[j] == "rid" and j > 0 and low[j - 1] == "get")
                or (low[j] == "out" and j > 0 and low[j - 1] in ("take", "leave", "filter", "throw", "cut"))
            ):
                return True
            if low[j] in ("only", "just", "keep", "but") and not (j > 0 and low[j - 1] in _COPULAS):
                return False  # ("that's just a preprint": merely, no keeping)
        return False

    for n, s in enumerate(ex.spans):
        if n in used:
            continue
        if s.kind == "time":
            v = s.value
            for key in ("year_min", "year_max"):
                if v.get(key) is not None:
                    setattr(c, key, v[key])
            if v.get("exclude_years"):
                c.exclude_years.extend(tuple(x) for x in v["exclude_years"])
            if v.get("note"):
                c.era_note = v["note"]
        elif s.kind == "venue":
            j = _token_at(ex, s.end)
            if j < len(ex.tokens) and ex.tokens[j].is_word and ex.tokens[j].low in ("task", "tasks", "shared"):
                continue  # "SemEval tasks for sarcasm": the subject's words
            (c.exclude_venues if excluded_before(s) else c.venues).append(str(s.value))
        elif s.kind == "type":
            kind = s.value
            if _kind_in_subject(ex, s) or _welcome_too(ex, s):
                continue  # "spurious correlations in NLI datasets": the subject's noun, no filter
            kinds = c.exclude_types if excluded_before(s, reach=7) else c.paper_types
            if kind not in kinds:  # "essays and commentaries": one kind
                kinds.append(kind)
        elif s.kind == "pubkind":
            kind = s.value
            if kind == "peer_reviewed":
                c.publication_kinds.extend(["journal", "conference", "workshop"])
            elif _welcome_too(ex, s):
                continue  # "preprints ok too": allowed beside the rest, no filter
            elif excluded_before(s, reach=7):  # "leave out anything that's just a preprint"
                c.exclude_kinds.append(kind)
            else:
                c.publication_kinds.append(kind)
        elif s.kind == "cites":
            c.min_citations = int(s.value)
        elif s.kind == "count" and "k" in s.value:
            i = _token_at(ex, s.start)
            if {"rather", "instead"} & set(low[max(0, i - 3) : i]):
                continue  # "50 of them rather than just ten": the size it replaces
            c.k = int(s.value["k"])  # the last said wins ("10 is too many, give me 4")
        elif s.kind == "person" and (refine or _after_by(ex, s)):
            # a person in a refinement is an author to keep or leave out; in a search, one its words say wrote it
            (c.exclude_authors if excluded_before(s, reach=7) else c.authors).append(str(s.value))
        elif s.kind == "org" and refine:
            v = s.value
            c.orgs.append(s.text if isinstance(v, dict) else str(v))
    # several closed periods kept ("the 90s and 2000s"): the years from the first to the last
    kept = [sp.value for sp in ex.spans if sp.kind == "time" and not sp.value.get("excluded")]
    closed = [v for v in kept if v.get("year_min") is not None and v.get("year_max") is not None]
    if len(closed) > 1:
        c.year_min = min(v["year_min"] for v in closed)
        c.year_max = max(v["year_max"] for v in closed)
    return c


def _nothing_to_search(r: Reading, state: State) -> bool:
    """A search that names nothing to search for (no paper, topic, person, venue or institution) in a conversation
    that has no search of its own to lend it one."""
    if state.has_search or state.has_list:
        return False
    if r.act == "entity" and r.entity is not None:
        # "who else works on this?" before anything is on screen: no one, no place, no subject to ask about
        e = r.entity
        return not (e.person or e.coauthor or e.venue or e.org or e.topic or e.paper or e.year_min or e.year_max)
    if r.act != "search":
        return False
    c = r.constraints
    # "look up the author": words that stand for a thing of the conversation name nothing in it
    # ("what's the state of the art?": a topic of asking words only, hyphened ones said with spaces, names nothing)
    topic_words = (r.topic or "").lower().split()
    # ("references for a grant application due Friday", "the opposite direction": what it is for, or a turn of a
    # search that is not there, names no subject either)
    stand_ins = _STAND_INS | word_set("purpose_words") | word_set("direction_words")
    vacant = not r.topic or set(topic_words) <= stand_ins or not _said_beyond_asking(topic_words)
    # ("show me the must-read papers": a word of asking written like a name is no paper's name)
    a = r.anchor
    one_word = a is not None and a.kind == "name" and not a.authors and len(a.text.split()) == 1
    no_paper = a is None or (one_word and not _said_beyond_asking([a.text.lower()]))
    return no_paper and vacant and not (c.authors or c.venues or c.orgs)


_STAND_INS = frozenset(
    "author authors writer writers paper papers article articles topic topics thing things stuff one ones work "
    "guy person people".split()
)


def _same_search(r: Reading, state: State) -> bool:
    """A search for the paper on screen in the direction on screen, with only constraints new: a narrowing."""
    c = r.constraints
    said = c.model_dump(exclude_defaults=True, exclude={"era_note"})
    return (
        r.act == "search" and r.sub != "search.other_year" and state.has_list and r.anchor is not None
        and r.anchor.kind == "current"
        and r.anchor.year is None and r.direction is not None and r.direction == state.direction
        and not r.topic and not r.focus and not r.also_cites and bool(said)
    )  # fmt: skip


def _leaving(items: list[Item], hits: list[CueHit]) -> set[int]:
    """The tokens of the cues that leave something out (cues.json's refine:exclude rows)."""
    return covered_tokens(items, [h for h in hits if h.label == "refine:exclude"])


_WROTE = frozenset("wrote authored co-wrote coauthored co-authored penned".split())


_AUTHOR_NOUNS = frozenset("author authors co-author coauthor co-authors coauthors".split())


def _after_by(ex: Extracted, s: Span, listed: bool = True) -> bool:
    """ "written by Kaiming He", "papers by Manning", "papers from Kaiming He": the person wrote them; so did the
    people listed with one who did ("with Percy Liang or Tatsunori Hashimoto among the authors")."""
    if listed:
        people = ex.of("person")
        k = people.index(s) if s in people else -1
        for other in (people[k - 1] if k > 0 else None, people[k + 1] if 0 <= k < len(people) - 1 else None):
            if other is None:
                continue
            a, b = (other, s) if other.start < s.start else (s, other)
            joiners = [t.low for t in ex.tokens[_token_at(ex, a.end) : _token_at(ex, b.start)]]
            if joiners and set(joiners) <= {"or", "and", ",", "&"} and _after_by(ex, other, listed=False):
                return True
    if s.source.startswith("after 'by'"):
        return True
    i = _token_at(ex, s.start)
    before = [t.low for t in ex.tokens[max(0, i - 2) : i]]
    j = _token_at(ex, s.end)
    if j < len(ex.tokens) and ex.tokens[j].low in _WROTE:
        return True  # "only ones Bordes wrote": the person wrote them
    if {t.low for t in ex.tokens[j : j + 4]} & _AUTHOR_NOUNS:
        return True  # "with Kaiming He as an author", "that Carion is an author on"
    return any(w in ("by", "authored", "author", "authors") for w in before) or before[-2:] in (
        ["papers", "from"],
        ["work", "from"],
        ["paper", "from"],
        ["stuff", "from"],
        ["anything", "from"],
    )


def _token_at(ex: Extracted, offset: int) -> int:
    return next((i for i, t in enumerate(ex.tokens) if t.start >= offset), len(ex.tokens))


def _span_tokens(ex: Extracted, s: Span) -> set[int]:
    return {i for i, t in enumerate(ex.tokens) if s.start <= t.start and t.end <= s.end}


def _named_before_citation(ex: Extracted, chunks: list[tuple[int, int, str]], cited: Anchor) -> str | None:
    """The words right before a bracketed citation ("deep sets (Zaheer 2017)"), when they are a chunk of their own."""
    span = next((s for s in ex.of("cited") if s.text == cited.text), None)
    if span is None:
        return None
    i = _token_at(ex, span.start)
    if i < 2 or ex.tokens[i - 1].text != "(":
        return None
    return next((w for a, b, w in chunks if b == i - 2 and _content_count(w)), None)


def _names_current(anchor: Anchor, state: State) -> bool:
    """The paper named is the one the search on screen is about: its title, the name before the title's colon
    ("BERT" for "BERT: Pre-training of …"), or a name the lexicon gives that title."""
    if not state.anchor or anchor.kind not in ("name", "paper", "title"):
        return False
    said, current = normalise(anchor.text).lower(), normalise(state.anchor).lower()
    named = {normalise(t).lower() for t in anchor.titles}
    return bool(said) and (said == current or current.startswith(said + ":") or current in named)


def _anchor_of(s: Span) -> Anchor:
    if s.kind == "id":
        return Anchor(text=str(s.value), kind="id", value=str(s.value))
    if s.kind == "title":
        return Anchor(text=str(s.value), kind="title", value=str(s.value))
    if s.kind == "paper":
        v = s.value  # ("BatchNorm's roots": the paper is BatchNorm)
        return Anchor(
            text=without_possessive(s.text),
            kind="paper",
            value=(v["titles"] or [None])[0],
            titles=list(v["titles"]),
        )
    if s.kind == "cited":
        return Anchor(text=s.text, kind="cited", authors=list(s.value["authors"]), year=s.value["year"])
    return Anchor(text=str(s.value if isinstance(s.value, str) else s.text), kind="name")


def _direction(hits: list[CueHit], label: str) -> tuple[Direction | None, float]:
    top, vote, second = best(hits, "dir:")
    if label in _LABEL_DIRECTION:  # the decision weighed the cues with the examples: it names the direction
        return _LABEL_DIRECTION[label], max(vote, 0.5)
    if top is not None and vote > second:
        return _DIRECTION_OF[top], vote  # type: ignore[return-value]
    if top is not None:
        return _DIRECTION_OF[top], vote  # type: ignore[return-value]
    return None, 0.0


_PASSAGE_WORDS = 40  # a message this long, in sentences, is a pasted passage (an abstract): a document query
_INTRO_VERBS = frozenset(
    "introduce introduces present presents propose proposes study studies describe describes investigate "
    "investigates address addresses release releases report reports explore explores examine examines develop "
    "develops consider considers tackle tackles focus focuses".split()
)
_NP_END = frozenset(
    "is are was were be been has have had can could will would should may might do does did which that who whose "
    "where when while because although though but and or with using via by through to we our it its this these "
    "show shows shown achieve achieves achieved outperform outperforms usually often typically remain remains "
    "struggle struggles suffer suffers lack lacks require requires rely relies".split()
)


_HEADLINE_LABEL = 8  # words before the colon of "Paper idea: …", "Research description for a grant: …"
_HEADLINE_ENDS = frozenset("with for in on that which using via by from where while whose to".split())
_TELLING = frozenset("i we my our they it this these is are was were".split())


def _labelled_headline(ex: Extracted) -> str | None:
    """The subject a description opens with after a label ("Paper idea: streaming speech translation with very low
    latency for live lectures. …"): a phrase with no one doing anything in it, up to its first qualifier."""
    toks = ex.tokens
    colon = next((k for k, t in enumerate(toks[: _HEADLINE_LABEL + 1]) if t.text == ":"), None)
    if colon is None or not {t.low for t in toks[:colon]} & word_set("headline_labels"):
        return None  # "Abstract: Large pretrained models often produce …" opens a passage, not a headline
    end = next((k for k in range(colon + 1, len(toks)) if toks[k].text in (".", "!", "?", ";")), len(toks))
    words = toks[colon + 1 : end]
    if not words or any(t.low in _TELLING for t in words):
        return None  # "Abstract draft: We address …": a sentence, read as the passage it opens
    cut = next((k for k, t in enumerate(words) if t.low in _HEADLINE_ENDS or t.text == ","), len(words))
    phrase = words[:cut]
    if _content_count(" ".join(t.text for t in phrase)) < 2:
        return None
    return ex.text[phrase[0].start : phrase[-1].end]


def _passage_topic(ex: Extracted) -> str | None:
    """A pasted abstract's subject: its most repeated phrase with its most repeated other words, or else the noun
    phrase its first sentence introduces."""
    if (headline := _labelled_headline(ex)) is not None:
        return headline
    start, end = _passage_bounds(ex)
    toks = [t for t in ex.tokens[start:end] if t.is_word]
    stop = (
        ENGLISH_STOPWORDS
        | _NP_END
        | _INTRO_VERBS
        | frozenset("paper work approach method results new propose proposed".split())
    )
    counts: dict[str, int] = {}
    for t in toks:
        if t.low not in stop and not t.low.isdigit():
            counts[lemma(t.low)] = counts.get(lemma(t.low), 0) + 1
    best_phrase, best_score = None, 0.0
    for n in (3, 2):
        for i in range(len(toks) - n + 1):
            words = [t.low for t in toks[i : i + n]]
            if any(w in stop or w.isdigit() for w in words):
                continue
            freq = sum(1 for k in range(len(toks) - n + 1) if [t.low for t in toks[k : k + n]] == words)
            if freq < 2:
                continue
            score = freq * n + sum(counts.get(lemma(w), 0) for w in words) / n
            if score > best_score:
                best_phrase, best_score = " ".join(t.text for t in toks[i : i + n]), score
    introduced = _introduced_phrase(ex)
    if best_phrase is None:
        return introduced
    inside = {lemma(w.lower()) for w in best_phrase.split()}
    if introduced and inside <= {lemma(w.lower()) for w in introduced.split()}:
        return introduced  # "We propose … for code-switched speech recognition" says more than its repeated words
    extra = [w for w, k in sorted(counts.items(), key=lambda kv: -kv[1]) if k >= 2 and w not in inside][:1]
    return " ".join([*extra, best_phrase]) if extra else best_phrase


_GENERIC_HEADS = frozenset(
    "method methods approach approaches framework model models technique system algorithm".split()
)


def _passage_bounds(ex: Extracted) -> tuple[int, int]:
    """The pasted passage's first and past-last tokens: its sentences without the asker's own around them ("here is
    my abstract, what should I cite?" … "what's the related work?"), from after "Abstract:" or an opening quote."""
    low = [t.low for t in ex.tokens]
    # a quoted passage is the quote, whatever the sentence it opens in ("Here is my abstract: "We present …"")
    opening = next((i for i, w in enumerate(low) if w in ('"', "“")), None)
    if opening is not None:
        closing = max((i for i, w in enumerate(low) if w in ('"', "”") and i > opening), default=None)
        if closing is not None and closing - opening > 8:
            return opening + 1, closing
    sentences: list[tuple[int, int]] = []
    first = 0
    for i, w in enumerate(low):
        if w in (".", "!", "?") or i == len(low) - 1:
            sentences.append((first, i + 1))
            first = i + 1
    asker = frozenset("here here's i i'm my me you your please".split())

    def the_askers(s: tuple[int, int]) -> bool:
        words = low[s[0] : s[1]]
        return words[-1:] == ["?"] or bool(asker & set(words))

    while len(sentences) > 1 and the_askers(sentences[0]):
        sentences.pop(0)
    while len(sentences) > 1 and the_askers(sentences[-1]):
        sentences.pop()
    start, end = (sentences[0][0], sentences[-1][1]) if sentences else (0, len(low))
    for i in range(start, min(end, start + 40)):
        if low[i] == "abstract" and i + 1 < end and low[i + 1] in (":", ".", "-"):
            return i + 2, end
        if low[i] in ('"', "“", "'", "‘"):
            return i + 1, end
    return start, end


def _introduced_phrase(ex: Extracted) -> str | None:
    """A pasted abstract's subject: the noun phrase its first sentence introduces ("We introduce a named entity
    recognition benchmark covering 20 African languages" -> "named entity recognition benchmark covering African
    languages"), or the phrase it opens with ("Coreference resolution systems are …")."""
    words = list(ex.tokens)
    low = [t.low for t in words]
    start, end = _passage_bounds(ex)
    sentences: list[list[int]] = [[]]
    for i in range(start, end):
        if low[i] in (".", "!", "?") and sentences[-1]:
            sentences.append([])
        elif words[i].is_word:
            sentences[-1].append(i)
    # the sentence that says what the paper does ("We present a method for …") before the one that sets the scene
    introducing = [s for s in sentences if any(low[i] in _INTRO_VERBS for i in s[:12])]
    for sent in [*introducing, *(s for s in sentences if s not in introducing)]:
        if len(sent) < 6:
            continue
        idx = [i for i in sent]
        k = next((n for n, i in enumerate(idx[:12]) if low[i] in _INTRO_VERBS), None)
        body = idx[k + 1 :] if k is not None else idx
        while body and low[body[0]] in ("a", "an", "the", "new", "novel", "first", "large", "simple"):
            body = body[1:]
        if len(body) > 2 and low[body[0]] in _GENERIC_HEADS and low[body[1]] in ("for", "to", "of"):
            body = body[2:]  # "a method for clinical abbreviation disambiguation": what it is for
        phrase: list[str] = []
        for i in body:
            if low[i] in _NP_END or len(phrase) >= 8:
                break
            if not low[i].isdigit() and not re.fullmatch(r"\d+k?", low[i]):
                phrase.append(words[i].text)
        if phrase:
            return " ".join(phrase)
    return None


_PASSAGE_SIGNS = re.compile(
    r"\babstract\b|\bwe (?:propose|introduce|present|study|show|describe)\b|\b(?:in )?this (?:paper|work)\b", re.I
)


_REF_SUBS = ("drop", "keep", "more_like", "less_like")  # refinements that say which shown papers


def _is_passage(ex: Extracted) -> bool:
    """A pasted passage: long, in sentences, written as a paper is ("We propose …", "Abstract.")."""
    n_words = sum(1 for t in ex.tokens if t.is_word)
    sentences = sum(1 for t in ex.tokens if t.text in ".!?")
    if sentences >= 2 and (n_words >= 80 or (n_words >= 25 and bool(_PASSAGE_SIGNS.search(ex.text)))):
        return True
    # a quoted passage ("related work for this: 'We propose …'"), however short the words around it
    return any(len(q.split()) >= 10 for q in prose_quotes(ex.text))


def _objects_as_words(ex: Extracted) -> Extracted:
    """A paper's short name after a verb of the subject ("compressing BERT with knowledge distillation", "probing
    BERT for syntax") or before a noun it qualifies ("hallucination detection for RAG pipelines", "bias in word2vec
    embeddings": a kind of system, not that paper) is a word of the subject, as a field's name is (read as weak),
    not a paper to search around."""
    edge = _edge_words()
    spans = []
    for s in ex.spans:
        i = _token_at(ex, s.start)
        verb = ex.tokens[i - 1].low if i > 0 else ""
        j = _token_at(ex, s.end)
        noun = ex.tokens[j].low if j < len(ex.tokens) and ex.tokens[j].is_word else ""
        # "the BERT model" is that paper; "smaller BERT models" a kind of model
        qualifies = bool(noun) and noun not in edge and (verb != "the" or noun not in word_set("name_nouns"))
        if s.kind == "paper" and isinstance(s.value, dict) and (verb.endswith("ing") and verb not in edge or qualifies):
            s = s.model_copy(update={"value": {**s.value, "weak": True}})
        spans.append(s)
    return Extracted(ex.text, ex.tokens, spans)


def _outside_passage(ex: Extracted) -> Extracted:
    """The message without its pasted passage: the asker's own words around it ("…, 2019 onwards")."""
    start, end = _passage_bounds(ex)
    lo = ex.tokens[start].start if start < len(ex.tokens) else len(ex.text)
    hi = ex.tokens[end - 1].end if 0 < end <= len(ex.tokens) else len(ex.text)
    return Extracted(ex.text, ex.tokens, [s for s in ex.spans if s.end <= lo or s.start >= hi])


def _passage_search(ex: Extracted, around: Extracted, state: State) -> Reading:
    """A pasted passage searched as a document; what the asker says ``around`` it (years, venues) still holds."""
    constraints = _constraints(around, set(), state, refine=False)
    return Reading(text=ex.text, act="search", sub="search.topic", topic=_passage_topic(ex), query=ex.text,
                   constraints=constraints, why="a pasted passage: searched as a document")  # fmt: skip


def _search(ex: Extracted, items: list[Item], hits: list[CueHit], label: str, state: State) -> Reading:
    if label == "search.other_year":
        years = [s.value.get("year_min") for s in ex.of("time") if s.value.get("year_min")]
        if state.anchor and years:  # "I mean the 2014 one": the paper of that name from that year
            this_year = Anchor(text=state.anchor, kind="current", year=int(years[0]))
            return Reading(text=ex.text, act="search", sub=label, anchor=this_year, direction=state.direction,
                           correction=True)  # fmt: skip
        hint = (
            "This search is about a topic, not one paper, so there is no other year's paper to switch to. Name the "
            "paper (its title or short name), or keep the results of that year with “only papers published in "
            f"{years[0] if years else 'that year'}”."
        )
        return Reading(text=ex.text, act="ask", sub="ask.topic_year", hint=hint, why="another year of a topic")
    # "forget ELMo for a sec — …": the paper set aside is no anchor of the new search
    set_aside = {items[p].span_index for h in hits if h.label == "search:new" for p in h.slots}
    direction, _ = _direction(hits, label)
    if direction is None:
        ex = _objects_as_words(ex)
    papers = [(n, s) for n, s in enumerate(ex.spans) if s.kind in _PAPER_KINDS and n not in set_aside]
    papers = [(n, s) for n, s in papers if not _cites_the_quoted(ex, s)]
    its = [(n, s) for n, s in enumerate(ex.spans) if s.kind == "it"]
    cue_tokens = covered_tokens(items, hits)
    used: set[int] = set()
    anchor: Anchor | None = None
    also: list[Anchor] = []
    period_of = None
    low = [t.low for t in ex.tokens]
    # a paper after "after/since/before" in a request with a subject of its own dates the subject
    pointed = _pointed_at(ex, items, hits)
    for n, s in papers:  # "post-BERT summarization", "pre-Transformer parsing": a period named by a paper
        head, _, name = s.text.partition("-")
        if head.lower() in ("post", "pre") and name and period_of is None:
            period_of = ("after" if head.lower() == "post" else "before", name)
            used.add(n)
    # words of a subject besides the papers named ("question answering after BERT")
    besides = Extracted(ex.text, ex.tokens, [s for s in ex.spans if s.kind not in _PAPER_KINDS])
    paper_tokens = {i for _, s in papers for i in _span_tokens(ex, s)}
    chunks = topic_chunks(besides, _not_subject(besides, items, hits) | paper_tokens)
    subject_besides = bool(_choose_topic(chunks, besides, set())[0])
    told_at_length = sum(t.is_word for t in ex.tokens) >= LONG_MESSAGE
    for n, s in papers:
        i = _token_at(ex, s.start)
        rel = low[i - 1] if i > 0 else ""
        quoted = s.kind == "title" and s.source == "quoted"  # a title in quotes is what is asked about, no date
        if (
            rel in ("after", "since", "before", "pre", "post")
            and not quoted
            and (subject_besides or direction != _dir_of(rel))
        ):
            named_twice = sum(1 for _, o in papers if o.text.lower() == s.text.lower()) > 1
            if not subject_besides and named_twice and direction in ("predecessor", "successor"):
                # "what BERT builds on, but only papers published after BERT": what a paper builds on is older
                # than it, what builds on it newer
                way = "builds on" if direction == "predecessor" else "came after"
                return Reading(text=ex.text, act="ask", sub="ask.contradiction", confidence=0.0,
                               why=f"work {s.text} {way} cannot be dated {rel} it",
                               hint=f"What {s.text} {way} cannot be from {rel} {s.text}. Which did you mean: "
                                    f"what it {way}, or papers from {rel} it?")  # fmt: skip
            if subject_besides and period_of is None:
                if direction == _dir_of(rel):
                    direction = None  # the relation dated the subject; it asked for no direction
                # "question answering after BERT": the paper dates the subject
                period_of = ({"pre": "before", "post": "after"}.get(rel, rel), s.text.removeprefix("the "))
                used.add(n)
            continue
        if is_weak(s) and n not in pointed:
            continue  # "surveys on knowledge distillation": the field, not the paper of that name
        if told_at_length and direction is None and subject_besides and n not in pointed:
            continue  # "my thesis is on X; … tried fine tuning a seq2seq model …": a paper said in passing
        if (
            anchor is None
            and _also(ex, s, both=False)
            and label != "search.same_for"  # "do that for Transformer-XL too": that search, for another paper
            and state.anchor
            and state.direction == "successor"
            and state.has_list
        ):
            # "only the ones that also cite X" under a paper's citers: those citers, citing X too
            anchor = Anchor(text=state.anchor, kind="current")
            also.append(_anchor_of(s))
            used.add(n)
            continue
        if anchor is None:
            anchor = _anchor_of(s)
            if _names_current(anchor, state):  # "what BERT itself cites" while BERT's citers are on screen
                anchor = Anchor(text=state.anchor or anchor.text, kind="current")
            used.add(n)
        elif _also(ex, s):
            also.append(_anchor_of(s))
            used.add(n)
    # "cite both BLEU and the zzqx frobnicator": the words after "and" name the second paper, known or not
    unnamed: set[int] = set()
    if anchor is not None and not also and "both" in low and (second := _second_of_both(ex, low)) is not None:
        words, unnamed = second
        also.append(Anchor(text=words, kind="name"))
    elif anchor is not None and not also and "both" in low and (pair := _both_in_one(anchor)) is not None:
        anchor, also = pair[0], [pair[1]]  # "cite both Grad-CAM and Axiomatic Attribution …" read as one title
    # "'Trusting Your Evidence' (NAACL 2024)": a venue and a year in brackets after the paper name which one it is
    if anchor is not None and (cited := _bracketed_after(ex, used)):
        used |= cited
        years = [ex.spans[k].value.get("year_min") for k in cited if ex.spans[k].kind == "time"]
        years += [ex.spans[k].value["year"] for k in cited if ex.spans[k].kind == "cited"]
        if years and years[0] and anchor.year is None and anchor.kind in ("title", "paper", "name"):
            anchor.year = int(years[0])
        for k in cited:
            if ex.spans[k].kind == "cited" and not anchor.authors:
                anchor.authors = list(ex.spans[k].value["authors"])
    # a person named with "by" in a paper search is who wrote the work; a possessive person is the anchor's author
    removed = set(cue_tokens) | unnamed
    for n in used:
        removed |= _span_tokens(ex, ex.spans[n])
    constraints = _constraints(ex, used, state, refine=False, leaving=_leaving(items, hits))
    removed |= _not_subject(ex, items, [])
    if anchor is None and state.listed and direction is not None:
        # "who cites #2?", "what does the first one cite?": a search from that result
        pointed_refs = [items[p].span_index for h in hits if h.label.startswith("dir:") for p in h.slots
                        if items[p].word == "N"]  # fmt: skip
        ref = next((ex.spans[k] for k in pointed_refs if k is not None), None)
        if ref is not None and ref.value:
            anchor = Anchor(text=ref.text, kind="result", ref=int(ref.value[0]))
    alone = not _subject_words(ex, items, hits)
    target_current = label in ("search.current",) or (
        anchor is None and state.has_search and direction is not None and (bool(its) or alone)
    )
    chunks = topic_chunks(ex, removed)
    topic, left_out = _choose_topic(chunks, ex, _excluded_starts(ex, items))
    if left_out:
        constraints.exclude_terms.extend(left_out)
    # a topic search for a field: the type words choose the kind of paper
    if anchor is None and target_current and state.anchor:
        anchor = Anchor(text=state.anchor, kind="current")
        flipped = any(w in _FLIP for w in low) or ("other" in low and "direction" in low)
        if flipped and state.direction not in _REVERSED:
            # "now the other direction" after similar papers: of three others, which?
            return Reading(text=ex.text, act="ask", sub="ask.which_direction", confidence=0.0,
                           why=f"the other direction of {state.direction or 'this search'}: which one?")  # fmt: skip
        if direction is None or flipped:
            direction = _REVERSED.get(state.direction or "", direction)
        topic = None
    elif anchor is None and target_current and state.topic and not topic:
        topic = state.topic  # "what about surveys?" after a topic's results: the same topic
    if anchor is None and topic and direction == "predecessor" and _only_literature(hits):
        direction = None  # "relevant prior work please" on a subject: its literature, not what some paper built on
    if label == "search.same_for" and anchor is not None and direction is None:
        direction = state.direction
    correction = state.has_search and (
        any(h.label in ("search:correction", "search:same_for") for h in hits) or label == "search.same_for"
    )
    if correction and len(papers) > 1 and anchor is not None and any(t.low == "instead" for t in ex.tokens):
        # "instead of BLEU, use ROUGE": the paper named last replaces the one named first
        anchor, also = _anchor_of(papers[-1][1]), []
    if correction and anchor is None and topic and state.topic:
        topic = _swapped(state.topic, topic)  # "actually, make that Chinese": the topic's last part swapped
    people = [s for s in ex.of("person") if _after_by(ex, s) or s.text.endswith("'s") or s.source == "name"]
    described = any(t.low in ("one", "paper", "work", "article") for t in ex.tokens) and people and topic
    if anchor is None and described and direction is not None:
        # "the paper on sentence compression by Knight and Marcu": one paper, by what it is about and who wrote it
        surnames = [w for s in people for w in str(s.value).replace(" and ", ",").split(",") if w.strip()]
        anchor = Anchor(text=topic, kind="described", authors=[w.strip().split()[-1] for w in surnames])
        topic = None
        constraints.authors = []
    if anchor is None and topic and any(h.label == "intro:paper" for h in hits):
        anchor, topic = Anchor(text=topic, kind="name"), None  # "the paper that introduced CRFs": found by that name
    if anchor is None and topic and direction in ("predecessor", "successor", "sibling") and _title_like(topic):
        anchor, topic = Anchor(text=topic, kind="title"), None  # "papers like Attention is all you need"
    if (
        anchor is None
        and topic
        and direction in ("predecessor", "successor", "sibling", "benchmark")
        and (_looks_named(topic))
    ):
        anchor = Anchor(text=topic, kind="name")
        topic = None
    if anchor is not None and anchor.kind == "cited" and (named := _named_before_citation(ex, chunks, anchor)):
        # "stuff similar to deep sets (zaheer 2017)": the words before the bracket are the paper, the bracket
        # says who wrote it and when
        anchor = Anchor(text=named, kind="name", authors=anchor.authors, year=anchor.year)
        topic = None
    focus = None
    if anchor is not None and topic and anchor.kind != "current":
        # words beside a named paper are a focus, not a second subject ("BERT for biomedical text")
        focus = topic if _content_count(topic) > 0 and topic.lower() != anchor.text.lower() else None
    if any(h.label == "focus:criticism" for h in hits):
        focus, direction = "criticism", direction or "successor"  # "limitations of BLEU": the papers criticising it
    if anchor is not None:
        # the type words of an anchored search are its direction ("surveys covering BERT")
        if direction is None and constraints.paper_types:
            direction = "survey" if "survey" in constraints.paper_types else "benchmark"
        if direction in ("survey", "benchmark"):
            constraints.paper_types = []
    elif anchor is None:
        if direction in ("survey",) and not constraints.paper_types:
            constraints.paper_types = ["survey"]
        if direction in ("benchmark",) and not constraints.paper_types:
            constraints.paper_types = ["resource"]
        _types_point(ex, constraints)
        if any(h.label == "newcomer" for h in hits) and not constraints.paper_types:
            constraints.paper_types = ["survey"]  # "… where should I start?": the overviews first
        explicit = any(h.label in ("dir:predecessor", "dir:successor") for h in hits) and period_of is None
        if not explicit:
            direction = None if not state.anchor or label != "search.current" else direction
    _search_preferences(hits, constraints)
    return Reading(
        text=ex.text, act="search", sub=label, anchor=anchor, topic=topic if anchor is None else None,
        direction=direction, also_cites=also, constraints=constraints, period_of=period_of, focus=focus,
        query=_query(ex, removed) if anchor is None else None, correction=correction,
        about="citation_count" if any(h.label == "ask:citation_count" for h in hits) else "",
    )  # fmt: skip


_COPULAS = frozenset("is are was were be that's it's they're 's".split())
_DENYING = frozenset("no not nothing none too".split())


def _affirmed(hits: list[CueHit], items: list[Item], ex: Extracted) -> list[CueHit]:
    """The recency cues not denied by the word before them ("cut it off at 2005, nothing newer" wants no recent
    work: "newer" is what it rules out)."""

    def denied(h: CueHit) -> bool:
        first = items[h.items[0]].first_token
        return h.label in ("refine:recent", "refine:seminal") and first > 0 and ex.tokens[first - 1].low in _DENYING

    kept = [h for h in hits if not denied(h)]

    # "not the papers it cites, the ones that cite it", "doesn't need to cite it", "rather than ones citing it": a
    # direction ruled out, when another is asked for
    def ruled(h: CueHit) -> bool:
        first, last = items[h.items[0]].first_token, items[h.items[-1]].last_token
        # (or the negation inside the phrase: "they need not cite it")
        return _ruled_out(ex, first) or any(t.low in _RULING_OUT for t in ex.tokens[first:last])

    ruled_out = [h for h in kept if h.label.startswith("dir:") and ruled(h)]
    if ruled_out and any(h.label.startswith("dir:") and h.label not in {r.label for r in ruled_out} for h in kept):
        kept = [h for h in kept if h not in ruled_out]
    return kept


_RULING_OUT = frozenset("not never without".split())
_NOT_RULING = frozenset("sure certain know remember clear only just".split())  # "not sure what it builds on"


def _ruled_out(ex: Extracted, first: int, reach: int = 3) -> bool:
    """A negation ("not", "rather than", "instead of") within a few words before, in the same clause."""
    toks = ex.tokens
    for k in range(first - 1, max(-1, first - reach - 2), -1):
        t = toks[k]
        if not t.is_word:
            return False
        if t.low in _RULING_OUT:
            return k + 1 >= len(toks) or toks[k + 1].low not in _NOT_RULING
        if t.low == "than" and k > 0 and toks[k - 1].low == "rather":
            return True
        if t.low == "of" and k > 0 and toks[k - 1].low == "instead":
            return True
    return False


def _search_preferences(hits: list[CueHit], c: Constraints) -> None:
    """How the results are listed and which are preferred, said with a request ("… newest first", "recent
    follow-ups", "the classics")."""
    cue = votes(hits)
    if c.sort is None:
        c.sort = _sort(cue)
    if c.recency is None and c.year_min is None and (cue.get("refine:recent") or cue.get("refine:seminal")):
        c.recency = "seminal" if cue.get("refine:seminal", 0) > cue.get("refine:recent", 0) else "recent"


def _swapped(before: str, said: str) -> str:
    """ "make that Chinese" on "sentiment analysis for Arabic": one word swaps the topic's last part."""
    words = before.split()
    if len(said.split()) == 1 and len(words) >= 3 and words[-2].lower() in ("for", "in", "on", "of", "with"):
        return " ".join([*words[:-1], said])
    return said


def _title_like(words: str) -> bool:
    """A title typed in sentence case: a capital, then at least three words ("Attention is all you need")."""
    ws = words.split()
    return len(ws) >= 4 and ws[0][:1].isupper() and not all(w[:1].isupper() for w in ws)


def is_weak(s: Span) -> bool:
    """A paper's name that is also a field's: listed so in the lexicon ("dropout"), or several words typed in
    lower case ("retrieval-augmented generation", "natural questions"); a name with a number ("deep speech 2")
    names no field."""
    if s.kind != "paper":
        return False
    typed_as_phrase = len(s.text.split()) > 1 and s.text == s.text.lower() and not any(c.isdigit() for c in s.text)
    return bool(s.value.get("weak")) or typed_as_phrase


def _demoted(ex: Extracted, items: list[Item], hits: list[CueHit]) -> set[int]:
    """Paper spans that are words of a subject: a field's name nothing points at as one paper ("music generation
    with transformers"), or a word written like a name inside a phrase of subject words ("PAC-Bayes
    generalization bounds", "single-cell RNA-seq clustering")."""
    pointed = _pointed_at(ex, items, hits)
    edge = _edge_words()
    cue_tokens = covered_tokens(items, hits)
    out: set[int] = set()
    long_question = sum(1 for t in ex.tokens if t.is_word) >= _LONG_QUESTION
    stop = _edge_words() | cue_tokens_words(ex, cue_tokens)
    parts = word_set("paper_parts")
    named = _named_with_authors(ex)
    for n, s in enumerate(ex.spans):
        if n in named:
            continue
        if (
            s.kind == "title"
            and s.source == "title case"
            and (_inside_phrase(ex, s, stop) or any(ex.spans[k].source == "title case" for k in out))
        ):
            out.add(n)  # "published on predicting Thread Discourse Structure over …": a phrase typed half in capitals
            continue
        if long_question and s.kind == "name" and s.source not in _NAMED_AS_PAPER and n not in pointed:
            # a long question describes its subject; a word that only looks like a name ("CCG", "downsize", "the
            # fine-tuning of language models") is part of it, unless it is called a paper ("the GloVe paper")
            out.add(n)
            continue
        if s.kind in ("paper", "name") and _an_example(ex, s, listed_too=n not in pointed):
            out.add(n)  # "metrics like BLEU, METEOR and chrF++": examples in the subject, not the paper searched from
            continue
        if n in pointed:
            continue
        if is_weak(s):
            out.add(n)
            continue
        if s.kind == "name" and s.source == "written as a name":
            i = _token_at(ex, s.start)
            j = i + len(tokenize(s.text)) - 1
            beside = [k for k in (i - 1, j + 1) if 0 <= k < len(ex.tokens)]
            if any(
                ex.tokens[k].is_word and ex.tokens[k].low not in edge and k not in cue_tokens
                and ex.covered(k) is None
                for k in beside
            ):  # fmt: skip
                out.add(n)
        elif s.kind == "paper" and s.text[:1].isupper():
            # "the induction of FrameNet lexical units": a paper's name modifying the subject's nouns is no paper
            # ("which benchmarks was YOLO evaluated against": after "was" it is what the clause is about)
            k = _token_at(ex, s.start) + len(tokenize(s.text))
            asked_of = k - len(tokenize(s.text)) > 0 and ex.tokens[k - len(tokenize(s.text)) - 1].low in _AUXILIARIES
            after = ex.covered(k) if k < len(ex.tokens) else None
            if not asked_of and k < len(ex.tokens) and ex.tokens[k].is_word and ex.tokens[k].text.islower() and (
                ex.tokens[k].low not in edge and k not in cue_tokens and (after is None or after.kind == "term")
                and ex.tokens[k].low not in ENGLISH_STOPWORDS and ex.tokens[k].low not in parts
            ):  # fmt: skip
                out.add(n)  # ... but "the Mask R-CNN experiments" are that paper's experiments: it stays a paper
    return out


def cue_tokens_words(ex: Extracted, cue_tokens: set[int]) -> frozenset[str]:
    return frozenset(ex.tokens[i].low for i in cue_tokens)


def _inside_phrase(ex: Extracted, s: Span, stop: frozenset[str]) -> bool:
    """A Title-Case run whose phrase starts in lower case just before it ("unsupervised Learning of Narrative Event
    Chains"): the words are one subject, not a paper's title."""
    i = _token_at(ex, s.start)
    if i == 0:
        return False
    before = ex.tokens[i - 1]
    return before.is_word and before.text.islower() and before.low not in stop and ex.covered(i - 1) is None


_AUXILIARIES = frozenset("was is were are did does do has have had".split())
_POINTED_TYPE_WORDS = 12  # words: in a shorter request a kind of paper is what it asks for ("sentiment datasets")
_LONG_QUESTION = 16  # words: a question this long describes its subject (a LitSearch question has 20-30)
_NAMED_AS_PAPER = frozenset({"the X paper", "the X papers", "the X article", "the X work"})
_EXAMPLE_HEADS = frozenset(
    "papers paper work works something anything more ones stuff research articles article studies study".split()
)


def _an_example(ex: Extracted, s: Span, listed_too: bool = True) -> bool:
    """A paper's name given as an example of something ("metrics like BLEU", "models such as BERT and ELMo"), or
    (``listed_too``) one of three or more names listed together."""
    i = _token_at(ex, s.start)
    low = [t.low for t in ex.tokens]
    k = i - 1
    while k >= 0 and (low[k] in (",", "and", "or") or ex.covered(k) is not None):
        k -= 1  # back over the names listed before it
    if k >= 1 and low[k] == "like" and ex.tokens[k - 1].is_word and low[k - 1] not in _EXAMPLE_HEADS:
        return low[k - 1] not in _edge_words()
    if k >= 1 and (low[k] == "including" or (low[k] == "as" and low[k - 1] == "such")):
        return True
    listed = sum(1 for x in ex.spans if x.kind in ("paper", "name", "title"))
    return listed_too and listed >= 3 and any(t.text == "," for t in ex.tokens)


def _pointed_at(ex: Extracted, items: list[Item], hits: list[CueHit]) -> set[int]:
    """Spans the words point at as one paper: the paper slot of a direction cue (a kind of paper said of a field's
    name in lower case is the field: "surveys on knowledge distillation"), "the X paper", or a message that is
    nothing but the name."""
    out: set[int | None] = set()
    for h in hits:
        if not h.label.startswith(("dir:", "ent:authors")):
            continue
        for p in h.slots:
            index = items[p].span_index
            if items[p].word != "P" or index is None:
                continue
            span = ex.spans[index]
            typed_in_capitals = any(c.isupper() for c in span.text)
            if h.label in ("dir:predecessor", "dir:successor", "dir:sibling", "ent:authors") or typed_in_capitals:
                out.add(items[p].span_index)
    # a field's name typed like a model's ("CLIP", "Batch Normalization") in a message that asks for a direction
    if any(h.label in ("dir:predecessor", "dir:successor", "dir:sibling") for h in hits):
        out.update(n for n, s in enumerate(ex.spans) if s.kind == "paper" and any(c.isupper() for c in s.text))
    low = [t.low for t in ex.tokens]
    out |= _named_with_authors(ex)
    for n, s in enumerate(ex.spans):
        i = _token_at(ex, s.start)
        j = i + len(tokenize(s.text))
        after_the = (i > 0 and low[i - 1] == "the") or s.text.lower().startswith("the ")
        if after_the and j < len(low) and low[j] in word_set("name_nouns"):
            out.add(n)  # "the transformer paper", "the BLEU metric"
    words = [t for t in ex.tokens if t.is_word]
    named = {i for s in ex.spans if s.kind == "paper" for i in _span_tokens(ex, s)}
    # ... with no subject words beside it ("RLHF reward modelling" is a subject that names RLHF)
    others = [t.low for i, t in enumerate(ex.tokens) if t.is_word and i not in named]
    plain = all(w in _edge_words() or w in word_set("name_nouns") for w in others)
    if len(words) <= 3 and plain:
        # ("knowledge distillation papers": a field's name with a plural is the field's papers)
        of_a_field = any(t.low in ("papers", "works", "literature", "research", "studies", "articles") for t in words)
        out.update(n for n, s in enumerate(ex.spans) if s.kind == "paper" and not (of_a_field and is_weak(s)))
    return {n for n in out if n is not None}


def _named_with_authors(ex: Extracted) -> set[int]:
    """Spans right before their authors in brackets, "Graph Attention Networks (Veličković et al.)": named as papers
    are cited, so a paper, whatever else the words could be."""
    cited_at = {_token_at(ex, s.start) for s in ex.of("cited")}
    out = set()
    for n, s in enumerate(ex.spans):
        j = _token_at(ex, s.start) + len(tokenize(s.text))
        if s.kind != "cited" and j + 1 < len(ex.tokens) and ex.tokens[j].text == "(" and j + 1 in cited_at:
            out.add(n)
    return out


def _dir_of(word: str) -> str | None:
    return {"after": "successor", "since": "successor", "post": "successor", "before": "predecessor",
            "pre": "predecessor"}.get(word)  # fmt: skip


def _both_in_one(anchor: Anchor) -> tuple[Anchor, Anchor] | None:
    """Two papers one span took for a title ("both Grad-CAM and Axiomatic Attribution for Deep Networks"): split at
    its last "and" when each side is a name of its own (a capital or a digit first)."""
    if anchor.kind not in ("name", "title", "paper"):
        return None
    left, sep, right = anchor.text.rpartition(" and ")
    if not sep or not left.strip() or not right.strip():
        return None
    if not all(side.strip()[0].isupper() or side.strip()[0].isdigit() for side in (left, right)):
        return None
    return Anchor(text=left.strip(), kind="name"), Anchor(text=right.strip(), kind="name")


def _second_of_both(ex: Extracted, low: list[str]) -> tuple[str, set[int]] | None:
    """The words naming the second paper of "both X and Y" when no span names it: up to the clause's end."""
    b = low.index("both")
    a = next((k for k in range(b + 1, len(low)) if low[k] == "and"), None)
    if a is None:
        return None
    k = a + 1
    while k < len(low) and low[k] in ("the", "a", "an"):
        k += 1
    end = k
    while end < len(low) and ex.tokens[end].is_word and ex.covered(end) is None:
        end += 1
    if end == k or end - k > 8 or any(ex.covered(i) is not None for i in range(a + 1, k)):
        return None
    return " ".join(t.text for t in ex.tokens[k:end]), set(range(a, end))


def _also(ex: Extracted, s: Span, both: bool = True) -> bool:
    """A second paper the results must cite too ("… and also the Collins parser", "both X and Y"; with ``both``
    false only "also X", "X as well", "X too": the paper on screen is the first)."""
    i = _token_at(ex, s.start)
    before = {t.low for t in ex.tokens[max(0, i - 3) : i]}
    j = _token_at(ex, s.end)
    after = [t.low for t in ex.tokens[j : j + 2]]
    joined = {"also", "and", "both", "plus", "well"} if both else {"also"}
    return bool(before & joined) or after in (["as", "well"], ["too"])


def _looks_named(words: str) -> bool:
    if all(w.lower().rstrip("s") in word_set("field_acronyms") for w in words.split()):
        return False  # "QA", "NLP": a field, not a paper
    if all(w.lower() in word_set("not_names") for w in words.split()):
        return False  # "due Monday": a day, not a paper
    ws = words.split()
    return 0 < len(ws) <= 4 and all(
        w[:1].isupper() or any(c.isdigit() for c in w) for w in ws if w.isalpha() or w[:1].isalnum()
    )


def _types_point(ex: Extracted, c: Constraints) -> None:
    """A kind of paper filters only when it is the point of the request ("surveys on X", "only datasets"); in a longer
    question a kind — named ("a corpus of annotated tweets … and which models …") or implied by what it asks ("how is
    it evaluated") — ranks that kind higher instead, unless the words say only that kind."""
    if not c.paper_types:
        return
    types = [s for s in ex.spans if s.kind == "type"]
    point = not types and sum(1 for t in ex.tokens if t.is_word) <= _POINTED_TYPE_WORDS
    for s in types:
        i = _token_at(ex, s.start)
        # the sentence it is said in ("Is there a benchmark dataset for X? mostly want to know …")
        a = next((k + 1 for k in range(i - 1, -1, -1) if ex.tokens[k].text in ".?!"), 0)
        b = next((k for k in range(i, len(ex.tokens)) if ex.tokens[k].text in ".?!"), len(ex.tokens))
        short = sum(1 for t in ex.tokens[a:b] if t.is_word) <= _POINTED_TYPE_WORDS
        point = point or short or any(t.low in ("only", "just") for t in ex.tokens[max(0, i - 3) : i])
    if not point:
        c.prefer_types, c.paper_types = c.paper_types, []


def _query(ex: Extracted, removed: set[int]) -> str | None:
    """The request as a search query: its words without the asking words at the edges of its clauses."""
    parts = [w for _, _, w in topic_chunks(ex, {i for i in removed if ex.tokens[i].low in _edge_words()})]
    q = " ".join(parts).strip()
    return q or None


def _refs_in(ex: Extracted, state: State) -> list[int]:
    """The results named, each once, in the order said — but for the one another is a copy of ("#7 is a dupe of #2,
    toss 7": #2 is the original, it stays)."""
    out: list[int] = []
    low = [t.low for t in ex.tokens]
    for s in ex.spans:
        if s.kind != "ref":
            continue
        i = _token_at(ex, s.start)
        if i >= 2 and low[i - 1] == "of" and low[i - 2] in _COPY_WORDS:
            continue
        out.extend(int(x) for x in s.value if int(x) not in out)
    return out


_COPY_WORDS = frozenset("dupe dup duplicate duplicates copy copies repeat".split())


_NEGATIVE_WORDS = frozenset(
    "drop remove delete ditch lose kill exclude not no less fewer without minus hide skip cut irrelevant wrong "
    "off-topic useless read know".split()
)


_ANAPHORS = frozenset("them those these both it".split())
_COMPLEMENT = frozenset("rest else others".split())
_VERB_ON_REFS = {"ref:keep": "keep", "refine:keep_only": "keep", "ref:drop": "drop", "refine:exclude": "drop"}


def _verb_on_refs(items: list[Item], hits: list[CueHit]) -> str | None:
    """What a request says to do with the results it names, when it says so after saying what it thinks of them
    ("1-4 are relevant, keep those"; "#1 and #10 aren't useful, remove them"): a verb on a pronoun after the last
    named result decides; the comment before it does not."""
    last_ref = max((n for n, it in enumerate(items) if it.slot and it.word in ("N", "K")), default=None)
    if last_ref is None:
        return None
    for h in hits:
        verb = _VERB_ON_REFS.get(h.label)
        first, end = min(h.items), max(h.items)
        said = " ".join(items[p].word for p in h.items)
        if verb and first > last_ref and not said.startswith(("not", "no", "less", "nothing")):
            objects = {it.form.removeprefix("=") for it in items[first : end + 3]}
            if objects & _ANAPHORS:
                return verb
            if objects & _COMPLEMENT:  # "#2 and #5 are great, drop the rest": the named ones stay
                return "keep" if verb == "drop" else "drop"
    return None


_NEGATIVE_PREDICATES = frozenset(
    "irrelevant wrong off useless unrelated off-topic bad poor weird strange odd boring dodgy sketchy".split()
)
# praise with no measure: "better ones please" says the list is not right, not what would be
_VAGUE_PRAISE = frozenset("better good nicer nice great greater cooler best finer stronger superior".split())


def _ref_polarity(ex: Extracted) -> dict[int, bool]:
    """Each result number, liked (True) or left out (False), by the nearest word before it that says so ("more
    like #4 and #6, less like #2", "#3 is great but drop #5"), or by what is said of it after ("#2 is off-topic";
    "the first and the last aren't useful": results joined by "and" share what is said after the last of them)."""
    out: dict[int, bool] = {}
    low = [t.low for t in ex.tokens]
    shared = False  # what is said after the next result, for a result joined to it by "and"
    for s in reversed(ex.of("ref")):
        i = _token_at(ex, s.start)
        j = i + len(tokenize(s.text))
        before = low[max(0, i - 3) : i]
        after = low[j : j + 3]
        said_after = bool(set(after) & _NEGATIVE_PREDICATES) or (
            after[:1] in (["are"], ["is"], ["was"], ["were"]) and "not" in after[1:3]
        )
        said_after = said_after or (shared and after[:1] in (["and"], [","], ["&"], ["the"]))
        negative = bool(set(before) & _NEGATIVE_WORDS) or said_after
        if "more" in before and "like" in before and not ({"less", "fewer"} & set(before)):
            negative = False
        shared = said_after
        for n in s.value:
            out[int(n)] = not negative
    return out


def _all_but(ex: Extracted) -> bool:
    """ "everything except …", "all but …", "the rest apart from …": what follows is the exception."""
    low = [t.low for t in ex.tokens]
    return any(
        w in ("except", "but", "excluding", "besides") and {"everything", "all", "rest"} & set(low[max(0, i - 2) : i])
        for i, w in enumerate(low)
    )


def _only_good(ex: Extracted) -> bool:
    """ "… are the only relevant / good / useful ones": those results, and no others."""
    low = [t.low for t in ex.tokens]
    return any(
        w == "only" and low[i + 1 : i + 2] in (["relevant"], ["good"], ["useful"], ["right"], ["ones"])
        for i, w in enumerate(low)
    )


_KEEP_VERBS = frozenset("keep retain hold preserve".split())


def _refs_by_verb(ex: Extracted) -> tuple[list[int], list[int]] | None:
    """Results kept and dropped in one message, each by the nearest verb before it ("keep 2 and drop 5", "drop 5
    but keep 2"); None unless both verbs are said and each has results of its own."""
    low = [t.low for t in ex.tokens]
    verbs = [(i, "keep" if w in _KEEP_VERBS else "drop") for i, w in enumerate(low) if w in _KEEP_VERBS | _DROP_VERBS]
    if len({v for _, v in verbs}) < 2:
        return None
    keep: list[int] = []
    drop: list[int] = []
    for s in ex.of("ref"):
        at = _token_at(ex, s.start)
        before = [v for i, v in verbs if i < at]
        if not before:
            return None
        (keep if before[-1] == "keep" else drop).extend(int(n) for n in s.value or [])
    return (keep, drop) if keep and drop else None


def _refine(ex: Extracted, items: list[Item], hits: list[CueHit], label: str, state: State) -> Reading:
    """What a message changes about the list: results liked or left out, a period, venues, people, kinds, a
    citation floor, a focus inside the list or words to leave out, an order, a size, a weight — all it says."""
    refs = _refs_in(ex, state)
    r = Refinement()
    cue = votes(hits)
    sub = label.split(".", 1)[1]
    used = {n for n, s in enumerate(ex.spans) if s.kind == "ref"}
    constraints = _constraints(ex, used, state, refine=True, leaving=_leaving(items, hits))
    # a paper named in a refinement is words to focus on ("show me the ones about BERT")
    subject_view = Extracted(ex.text, ex.tokens, [s for s in ex.spans if s.kind not in _PAPER_KINDS])
    removed = _not_subject(subject_view, items, hits)
    chunks = topic_chunks(subject_view, removed)
    left_starts = _excluded_starts(subject_view, items)
    kept = [w for a, _, w in chunks if a not in left_starts and _content_count(w)]
    left_out = [w for a, _, w in chunks if a in left_starts and _content_count(w)]
    # "drop the first two and sort newest first": a drop said beside another change
    ref_sub = "drop" if not refs and sub not in _REF_SUBS and "ref:drop" in cue else sub
    verb = _verb_on_refs(items, hits)  # "1-4 are relevant, keep those", "keep the first three, bin the rest"
    if not refs and verb:
        ref_sub = verb
    counted = False
    if not refs and ref_sub in _REF_SUBS:
        refs = _counted_refs(ex, state)  # "keep the first three", "the last two are off"
        counted = bool(refs)
        if counted:
            constraints.k = None
    if refs and ref_sub == "drop" and (counted or not any(s.kind == "ref" for s in ex.spans)):
        sub = "drop"  # "remove the top 3": not a smaller list
    if refs and verb:
        sub = verb
    split = _refs_by_verb(ex) if refs else None
    if refs and split is None and _all_but(ex):
        # "everything except no. 3 can go", "remove all but #2": the results named are the ones that stay
        split = (refs, []) if sub != "keep" and (_says_drop(ex) or "go" in {t.low for t in ex.tokens}) else None
        if sub == "keep" or any(t.low in ("keep", "retain") for t in ex.tokens):
            split = ([], refs)  # "keep everything but the last": the results named go
    if refs and split is None and _only_good(ex):
        split = (refs, [])  # "the 2nd, 5th and 8th are the only relevant ones": those stay, the rest go
    if split is not None:
        r.keep, r.drop = split  # "keep 2 and drop 5": each result takes the verb said of it
    elif refs:
        polarity = _ref_polarity(ex)
        liked = [n for n in refs if polarity.get(n, True)]
        unliked = [n for n in refs if not polarity.get(n, True)]
        if sub == "keep":
            r.keep = refs
        elif sub == "drop" or (unliked and not liked):
            r.drop = (refs[:1] if _points_back(ex) and len(refs) > 1 else refs) if sub == "drop" else unliked
        elif sub == "less_like":
            r.less_like = refs
        else:
            r.more_like, r.drop = liked, unliked
    elif sub == "drop" and (it := ex.of("it")) and any(t.is_word and not it[0].start <= t.start < it[0].end
                                                       for t in ex.tokens):  # fmt: skip
        r.this_one = True  # "not this one": the paper selected on screen ("that one" alone says nothing of it)
    if sub == "exclude_topic" and not (left_out and "refine:focus" in cue):  # "less about X, more about Y"
        constraints.exclude_terms.extend([*left_out, *kept])
    else:
        constraints.exclude_terms.extend(left_out)
        if kept and (sub in ("focus", "more_like", "filter", "recency", "exclude_topic") or r.more_like):
            r.focus = " ".join(kept)
    leaves_out = constraints.exclude_years or constraints.exclude_types or constraints.exclude_terms
    sizes = ("refine:more", "refine:broader", "refine:narrower") + (() if leaves_out else ("refine:fewer",))
    # "more along the lines of #7": that "more" asks for papers like it, not for a longer list
    more_of_like = bool(r.more_like) and not ex.of("count") and not {"refine:broader", "refine:narrower"} & set(cue)
    if not (r.keep or r.drop or more_of_like) and ((sub == "size" and not leaves_out) or any(k in cue for k in sizes)):
        r.size = _size(cue)
        counts = ex.of("count")
        if counts and "extra" in counts[0].value:
            r.extra, r.size = counts[0].value["extra"], "more"
    if sub == "any" or any(f"refine:any_{k}" in cue for k in ("year", "venue", "type")):
        r.any_type = "refine:any_type" in cue
        r.any_year = "refine:any_year" in cue or (
            not {"refine:any_venue", "refine:any_type"} & set(cue) and sub == "any" and _lifts(ex)
        )
        r.any_venue = "refine:any_venue" in cue
    if cue.get("refine:seminal") or cue.get("refine:recent"):
        constraints.recency = "seminal" if cue.get("refine:seminal", 0) > cue.get("refine:recent", 0) else "recent"
    if sub == "weights" or "refine:weights" in cue:
        r.weights = _weights(ex)
    for facet in ("background", "method", "result"):
        if f"facet:{facet}" in cue:
            constraints.facet = facet
    if "refine:uncited" in cue:
        constraints.min_citations = constraints.min_citations or 1
    if constraints.sort is None and (order := _sort(cue)) is not None:
        constraints.sort = order
    if r == Refinement() and constraints == Constraints():
        # it changes nothing that can be named ("these papers are not relevant"): what is wrong is asked
        return Reading(text=ex.text, act="ask", sub="ask.unclear", why=f"{label} that changes nothing")
    return Reading(text=ex.text, act="refine", sub=label, refine=r, constraints=constraints, refs=refs)


def _weights(ex: Extracted) -> dict[str, str]:
    """ "more weight on citations", "prefer older papers", "rank by similarity": a feature of the score, and which
    way."""
    low = {t.low for t in ex.tokens}
    feature = (
        "citations" if low & {"citation", "citations", "cited", "cites"}
        else "lexical" if low & {"keyword", "keywords", "words", "lexical"}
        else "dense" if low & {"similarity", "meaning", "semantic", "closeness", "relevance"}
        else "recency"
    )  # fmt: skip
    if feature == "recency" and low & {"older", "old", "earlier", "classic"}:
        return {"recency": "older"}
    if low & {"ignore", "off", "without", "disregard"}:
        return {feature: "off"}
    if low & {"less", "lower", "de-emphasize", "down"}:
        return {feature: "less"}
    return {feature: "more"}


def _counted_refs(ex: Extracted, state: State) -> list[int]:
    for s in ex.of("count"):
        if "last" in s.value and state.listed:
            n = int(s.value["last"])
            return list(range(max(1, state.listed - n + 1), state.listed + 1))
        if "k" in s.value and s.source == "top n":
            return list(range(1, min(int(s.value["k"]), state.listed or int(s.value["k"])) + 1))
    return []


def _which_unsaid(ex: Extracted, reading: Reading) -> str:
    """A change to the shown papers that does not say which ("remove the irrelevant ones": the reader cannot judge
    relevance for the user), or names the same paper to keep and to drop; "" when it is clear."""
    ref = reading.refine
    assert ref is not None
    said_keep = any(t.low in ("keep", "retain", "only", "hold") for t in ex.tokens)
    twice = (len(ref.keep) != len(set(ref.keep)) and _says_drop(ex)) or (  # "keep 3 and drop 3"
        len(ref.drop) != len(set(ref.drop)) and said_keep  # "keep number 4 but also remove number 4"
    )
    if set(ref.keep) & set(ref.drop) or twice:
        return "the same paper both kept and dropped"
    judged = [w for term in reading.constraints.exclude_terms for w in term.lower().split()]
    if judged and all(w in _NEGATIVE_PREDICATES or w in ("ones", "papers", "the") for w in judged):
        return f"“{' '.join(judged)}” is for you to judge"
    return ""


# labels that mean the same when the message names a result on the list ("papers resembling #8": more like it)
_SAME_ABOUT_A_RESULT = frozenset({frozenset({"refine.more_like", "search.sibling"})})


def _order_said(ex: Extracted, items: list[Item], hits: list[CueHit], label: str, words: set[str]) -> bool:
    """An order said outright ("sort by year" says no way round; "newest first" does), and not denied ("oldest
    first, not newest first")."""
    low = [t.low for t in ex.tokens]
    for h in hits:
        if h.label == label and words & set(h.pattern.split()):
            at = items[h.items[0]].first_token
            if not {"not", "no", "instead", "rather", "than"} & set(low[max(0, at - 2) : at]):
                return True
    return False


def _both_orders(ex: Extracted, items: list[Item], hits: list[CueHit]) -> bool:
    """ "newest first and also oldest first": two opposite orders said outright."""
    return _order_said(ex, items, hits, "refine:sort_newest", {"newest", "latest", "recent", "newer", "new"}) and (
        _order_said(ex, items, hits, "refine:sort_oldest", {"oldest", "earliest", "older", "old"})
    )


_OLDER = frozenset("older old earlier classic classics seminal foundational".split())
_ONE_WAY = frozenset("than instead rather replace swap over not no too".split())


def _both_ages(ex: Extracted, items: list[Item], hits: list[CueHit]) -> bool:
    """ "newer, but also older", "both newer and older please": recent work and older work, wanted together."""
    recent = [h for h in hits if h.label == "refine:recent"]
    if not recent:
        return False
    said = {t for h in recent for p in h.items for t in range(items[p].first_token, items[p].last_token + 1)}
    low = [t.low for t in ex.tokens]
    older = [i for i, w in enumerate(low) if w in _OLDER and i not in said]
    joined = {"and", "but", "also", "both", "plus"} & set(low)
    return bool(older and joined) and not (set(low) & (_ONE_WAY | _EXCLUDING))


def _agree(a: str, b: str, ex: Extracted) -> bool:
    return frozenset({a, b}) in _SAME_ABOUT_A_RESULT and bool(ex.of("ref"))


def _bracketed_after(ex: Extracted, used: set[int]) -> set[int]:
    """The venue, year and author spans in brackets right after a paper span taken (a citation's "(NAACL 2024)",
    "(Vinyals et al.)")."""
    for n in used:
        s = ex.spans[n]
        if s.kind not in ("title", "paper", "name"):
            continue
        j = _token_at(ex, s.end)
        if j < len(ex.tokens) and ex.tokens[j].text in ("'", '"', "”", "’"):
            j += 1
        if j >= len(ex.tokens):
            continue
        if ex.tokens[j].text == "(":
            close = next((k for k in range(j + 1, min(j + 8, len(ex.tokens))) if ex.tokens[k].text == ")"), None)
        elif ex.tokens[j].low in ("from", "at", "in") and s.text.lower().endswith(" paper"):
            # "the SimCLS paper from ACL 2021": where and when that paper appeared, up to the clause's end
            close = next((k for k in range(j + 1, len(ex.tokens)) if ex.tokens[k].text in _CLAUSE), len(ex.tokens))
        else:
            continue
        if close is None:
            continue
        stop = ex.tokens[close].start if close < len(ex.tokens) else len(ex.text)
        inside = {k for k, o in enumerate(ex.spans) if ex.tokens[j].end <= o.start and o.end <= stop}
        words = [t for t in ex.tokens[j + 1 : close] if t.is_word and ex.covered(ex.tokens.index(t)) is None]
        if inside and all(ex.spans[k].kind in ("venue", "time", "cited") for k in inside) and not words:
            return inside
    return set()


_FILTER_NOUNS = frozenset(
    "author authors venue venues conference conferences journal journals year years date dates type types kind".split()
)


def _changes_nothing(reading: Reading) -> bool:
    """A refinement that sets nothing: no result named, no value, no order, no size ("author" is no subject to focus
    on, but what a filter would be by)."""
    assert reading.refine is not None
    said = reading.refine.model_dump(exclude_defaults=True)
    if set((said.get("focus") or "").lower().split()) <= _FILTER_NOUNS:
        said.pop("focus", None)
    return not said and not reading.constraints.set_fields()


def _only_a_surname(reading: Reading, ex: Extracted) -> str:
    """ "the Smith paper": a paper named only by a family name many authors have (any lexicon name, "the BERT
    paper", is a paper span, not a name); "" otherwise."""
    a = reading.anchor
    if a is None or a.kind != "name" or a.year is not None or len(a.text.split()) != 1:
        return ""
    return a.text if a.text in surnames() and not lexicon().paper_titles(a.text) else ""


def _unknown_words(topic: str | None, ex: Extracted) -> bool:
    """A subject of two words or more none of which the corpus, the lexicon or a name knows ("asdfgh jkl"): keys
    pressed, not a subject (one unknown word may be a new model's name, "pointpillars")."""
    words = re.findall(r"[a-z]+", (topic or "").lower())
    if len(words) < 2 or ex.spans or any(c.isupper() or c.isdigit() for c in topic or ""):
        return False
    known = vocabulary() | corpus_words()
    return not any(w in known or american(w) in known for w in words)


def _says_drop(ex: Extracted) -> bool:
    return any(t.low in ("drop", "remove", "delete", "exclude", "bin", "ditch", "lose") for t in ex.tokens)


_SEARCH_VERBS = frozenset("find search look show give get fetch pull recommend suggest dig".split())


def _lifts(ex: Extracted) -> bool:
    """Words that lift a filter ("any year", "drop the year filter"), not ones that ask for one ("filter by year")."""
    return any(t.low in _LIFTING for t in ex.tokens)


_LIFTING = frozenset("any all every whatever drop remove lift clear reset no without undo ignore".split())


def _points_back(ex: Extracted) -> bool:
    """ "drop that", "remove it, and #4": a pronoun as what is acted on ("I want that you remove #3" is no pointer;
    "drop 2 and 3 from that": "that" is the list they are on)."""
    low = [t.low for t in ex.tokens]
    return any(
        w in ("it", "that")
        and (i + 1 == len(low) or not ex.tokens[i + 1].is_word or low[i + 1] in ("one", "paper"))
        and not (i > 0 and low[i - 1] in ("from", "of", "in", "on", "off"))
        for i, w in enumerate(low)
    )


def _sort(cue: dict[str, float]) -> Any:
    """The order the strongest sorting cue says ("sort by year, oldest first" is oldest, though "sort by year"
    alone would be newest)."""
    orders = {"refine:sort_newest": "newest", "refine:sort_oldest": "oldest", "refine:sort_cited": "most_cited",
              "refine:sort_relevance": "relevance"}  # fmt: skip
    said = [(cue[k], v) for k, v in orders.items() if k in cue]
    return max(said)[1] if said else None


def _size(cue: dict[str, float]) -> Any:
    for label, value in (
        ("refine:fewer", "fewer"),
        ("refine:more", "more"),
        ("refine:broader", "broader"),
        ("refine:narrower", "narrower"),
    ):
        if label in cue:
            return value
    return None


def _entity(ex: Extracted, items: list[Item], hits: list[CueHit], label: str, state: State) -> Reading:
    ask = cast(EntityKind, label.split(".", 1)[1])
    cue = votes(hits)
    if ask not in ("authors", "authors_papers"):
        # the words that ask say what, the more specific first: "how many papers at ACL" is a count
        # ("where do people publish work on X?" asks for places: venues or institutions, never people)
        where = next((t.low for t in ex.tokens if t.is_word), "") == "where"
        of_people = ("researchers", "coauthors", "authors", "authors_papers")
        said = next(
            (a for a in _ENTITY_PRECEDENCE if cue.get(f"ent:{a}", 0.0) >= 2.0 and not (where and a in of_people)),
            None,
        )
        if said is not None:
            ask = said
        if where and ask in ("researchers", "coauthors", "papers"):  # a "where" question asks for a place
            ask = "institutions" if cue.get("ent:institutions", 0.0) > cue.get("ent:venues", 0.0) else "venues"
    elif ask == "authors" and (
        cue.get("ent:institutions", 0.0) >= 1.0
        or (ex.tokens[0].low == "where" and {"work", "works", "based", "from"} & {t.low for t in ex.tokens})
    ):
        ask = "institutions"  # "which organisations are the Faster R-CNN authors from?": where its authors are
    people = ex.of("person")
    venues = ex.of("venue")
    orgs = ex.of("org")
    times = ex.of("time")
    papers = ex.of(*_PAPER_KINDS)
    removed = _not_subject(ex, items, hits, names_too=True)
    topic, _ = _choose_topic(topic_chunks(ex, removed), ex, set())
    asked = state.asked or {}
    if ask == "authors_papers" and asked.get("paper") and not papers:
        return Reading(text=ex.text, act="entity", sub=label, entity=EntityAsk(ask=ask, paper=asked["paper"]))
    e = EntityAsk(ask=ask)
    if people:
        e.person = str(people[0].value)
        if len(people) > 1:
            e.coauthor = str(people[1].value)
    if venues:
        e.venue = str(venues[0].value)
    if orgs:
        # as typed (without a unit: "Stanford" of "the Stanford NLP group"): the planner matches it and the names
        # affiliations spell out
        e.org = orgs[0].value.get("typed") or orgs[0].text
    if times:
        e.year_min, e.year_max = times[0].value.get("year_min"), times[0].value.get("year_max")
    # "where do the BERT authors work", "institutions behind the GloVe paper": one paper's
    of_paper = ask == "institutions" and papers and {"author", "authors", "paper"} & {t.low for t in ex.tokens}
    if ask in ("authors", "authors_papers") or of_paper:
        e.paper = (
            papers[0].text if papers and papers[0].kind != "title" else (str(papers[0].value) if papers else topic)
        )
        if papers and papers[0].kind == "name":
            e.paper = str(papers[0].value)
        if papers and papers[0].kind == "paper":
            # "who wrote Mean teachers are better role models": a known name opening the title typed on after it
            last = max(_span_tokens(ex, papers[0]))
            on = next((c for c in topic_chunks(ex, removed) if c[1] >= last + 2 and c[0] <= last + 3), None)
            if on is not None and all(ex.tokens[k].is_word for k in range(last + 1, on[1] + 1)):
                e.paper = ex.text[papers[0].start : ex.tokens[on[1]].end]
        refs = [int(s.value[0]) for s in ex.of("ref") if s.value]
        if not papers and refs:
            e.paper = f"#{refs[0]}"  # "who wrote #3?": a result on the list
        elif not papers and ex.of("it"):
            e.paper = "it"  # "who wrote it?": the paper on screen
    elif ask in ("venues", "institutions", "researchers", "count", "papers", "most_cited", "coauthors") and topic:
        e.topic = topic  # ("who has Dan Klein collaborated with on parsing?": his co-authors there)
    pronoun = {t.low for t in ex.tokens} & {"he", "she", "his", "her", "him", "they", "them", "their"}
    if e.person is None and pronoun and asked.get("person"):
        e.person = asked["person"]  # "who does she write with?" after an answer about one person
    if ask in ("venues", "institutions", "researchers") and not e.topic and not e.org and asked.get("topic"):
        e.topic, e.year_min, e.year_max = asked["topic"], asked.get("year_min"), asked.get("year_max")
    deictic = {"this", "that", "it", "same"} & {t.low for t in ex.tokens}
    if ask in ("venues", "institutions", "researchers") and state.topic and (not e.topic or deictic):
        e.topic = state.topic  # "who works on this topic?", "where should I submit a paper on this?"
    asked_about = set(word_table("slot_nouns")["topic"])  # "what areas does she work on": still her topics
    named_topics = bool(asked_about & {t.low for t in ex.tokens})  # "which topics does MIT focus on in vision"
    if ask == "topics" and (e.person or e.org) and topic and not set(topic.lower().split()) <= asked_about:
        if not named_topics:
            ask = e.ask = "papers"  # "Sergey Levine's work on robotics": their papers on it, not what they work on
        e.topic = topic
    if ask == "coauthors" and e.person and e.coauthor:
        ask = "papers"  # "papers Dan Klein wrote with Chris Manning": their joint papers
        e.ask = ask
    if e.person is None and ask in ("papers", "most_cited", "coauthors", "topics", "profile", "count"):
        # "Hinton's most cited paper": a capitalised word no lexicon or vocabulary knows is the person asked about
        lone = [t for t in ex.tokens if _capitalised_unknown(t) and ex.covered(ex.tokens.index(t)) is None]
        if len(lone) == 1:
            e.person = lone[0].text.removesuffix("'s")
    if e.person is None and ask in ("papers", "most_cited", "coauthors", "topics", "profile", "count") and papers:
        name = papers[0]
        if name.kind == "name" and ask in ("coauthors", "topics", "profile"):
            e.person = str(name.value)
    reading = Reading(text=ex.text, act="entity", sub=label, entity=e)
    return _which_person(reading, ex) or _which_of_their_papers(reading, ex) or reading


def _which_person(reading: Reading, ex: Extracted) -> Reading | None:
    """ "papers by Li": a family name many authors share, said alone, is asked about, the name's most published
    authors offered (``data/shared_surnames.json``); "papers by Percy Liang", or "Li" with a topic, are not."""
    e = reading.entity
    if e is None or e.person is None or " " in e.person.strip() or e.topic or e.venue or e.org or e.paper:
        return None
    name = without_possessive(e.person)
    offered = shared_surnames().get(name)
    if not offered:
        return None
    alternatives = [
        Alternative(
            label=full,
            reading=reading.model_copy(update={"entity": e.model_copy(update={"person": full}), "confidence": 1.0}),
        )
        for full in offered
    ]
    return Reading(text=ex.text, act="ask", sub="ask.which_person", confidence=0.0, alternatives=alternatives,
                   why=f"many authors are called {name}: which one?",
                   hint=f"Many authors are called {name}. Which one do you mean?")  # fmt: skip


_ONE_PAPER = frozenset("paper article publication".split())


def _which_of_their_papers(reading: Reading, ex: Extracted) -> Reading | None:
    """ "Jordan's paper": one paper of a person, with nothing said that tells which, is asked about (their papers
    and their most cited one offered); "Jordan's papers", "Jordan's most cited paper" tell."""
    e = reading.entity
    words = [t.low for t in ex.tokens if t.is_word]
    if e is None or e.person is None or e.ask != "papers" or not set(words) & _ONE_PAPER or len(words) > 4:
        return None
    if e.topic or e.venue or e.org or e.year_min or e.year_max:
        return None
    listed = reading.model_copy(update={"confidence": 1.0})  # (it asks for their papers already)
    cited = reading.model_copy(update={"entity": e.model_copy(update={"ask": "most_cited"}), "confidence": 1.0})
    return Reading(
        text=ex.text, act="ask", sub="ask.which_paper", confidence=0.0, why=f"one paper of {e.person}'s: which?",
        hint=f"Which paper of {e.person}'s do you mean? Name its title, or choose:",
        alternatives=[Alternative(label=f"{e.person}'s papers", reading=listed),
                      Alternative(label=f"{e.person}'s most cited paper", reading=cited)],
    )  # fmt: skip


def _capitalised_unknown(t: Any) -> bool:
    core = t.text.removesuffix("'s")
    return core[:1].isupper() and core[1:].islower() and core.isalpha() and core.lower() not in vocabulary()


def _command(ex: Extracted, items: list[Item], hits: list[CueHit], label: str, state: State) -> Reading:
    command = label.split(".", 1)[1]
    refs = _refs_in(ex, state)
    fmt = next((str(s.value) for s in ex.spans if s.kind == "format"), None)
    r = Reading(text=ex.text, act="command", sub=label, command=command, refs=refs, format=fmt)
    if command in ("save", "explain", "export", "cite") and not refs:
        r.refs = _counted_refs(ex, state)  # "save the last two", "bibtex for the first five"
    if command == "save" and not r.refs:
        low = [t.low for t in ex.tokens]
        counts = ex.of("count")
        if counts and "k" in counts[0].value:
            r.refs = list(range(1, int(counts[0].value["k"]) + 1))
        elif {"all", "everything", "these", "them"} & set(low):
            r.refs = list(range(1, state.listed + 1))
    if command in ("cite_named", "compare", "on_list", "which_cite"):
        r.papers = [_anchor_of(s) for s in ex.of(*_PAPER_KINDS)]
    if command == "version":
        nums = [int(re.sub(r"\D", "", t.text)) for t in ex.tokens if re.fullmatch(r"v?\d{1,3}", t.low)]
        r.refs = nums[:1]
    if command == "list_fact":
        fact, _, _ = best(hits, "fact:")
        r.about = fact.split(":", 1)[1] if fact else "overview"
    if command in ("kinds", "count"):
        kinds = [str(s.value) for s in ex.of("type")]
        r.about = kinds[0] if kinds and command == "kinds" else ""
        r.constraints = _constraints(ex, set(), state, refine=True, leaving=_leaving(items, hits))
        if command == "count":
            r.topic, _ = _choose_topic(topic_chunks(ex, _not_subject(ex, items, hits)), ex, set())
    if command == "earlier":
        r.refs = _place(ex)
        r.about = " ".join(
            t.text for t in ex.tokens
            if t.is_word and t.low not in _edge_words() and t.low not in _PLACES and t.low not in ("search", "back")
        )  # fmt: skip
    if command == "step_edit":
        r.step = _step(ex, hits)
    if command == "library":
        r.about = _library_action(ex)
    return r


_PLACES = {"first": 1, "original": 1, "initial": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5}


def _place(ex: Extracted) -> list[int]:
    """Which earlier search ("the first search", "search #2"); [] for the latest before this one."""
    for t in ex.tokens:
        if t.low in _PLACES:
            return [_PLACES[t.low]]
    return [int(s.value[0]) for s in ex.of("ref")][:1]


_STEP_NOUNS = frozenset("step node stage".split())


def _step(ex: Extracted, hits: list[CueHit]) -> dict[str, Any]:
    """A workflow step edited in words: the action the cue words say, the words naming the step or setting, and
    the value after "to" / "="."""
    action, _, _ = best(hits, "step:")
    kind = action.split(":", 1)[1] if action else "explain"
    words = [t for t in ex.tokens if t.is_word or t.text in ("=", "`", ".", "_")]
    low = [t.low for t in words]
    verbs = {"remove", "drop", "delete", "disable", "turn", "switch", "off", "skip", "bypass", "take", "out", "set",
             "change", "make", "put", "increase", "decrease", "raise", "lower", "bump", "reduce", "what", "does", "do",
             "is", "the", "explain", "how", "please", "rerun", "re-run", "run", "again", "for", "work"}  # fmt: skip
    if kind == "rerun":
        return {"action": "rerun"}
    if kind == "set":
        cut = next((i for i, w in enumerate(low) if w in ("to", "=", "at")), len(low))
        what = [t.text for t in words[:cut] if t.low not in verbs and t.text != "`"]
        value = words[cut + 1].text if cut + 1 < len(words) else ""
        return {"action": "set", "param": " ".join(what), "value": value}
    named = [t.text for t in words if t.low not in verbs and t.low not in _STEP_NOUNS and t.text not in ("`", "=")]
    return {"action": kind, "step": " ".join(named)}


def _library_action(ex: Extracted) -> str:
    low = {t.low for t in ex.tokens}
    if low & {"clear", "empty", "wipe", "reset"}:
        return "clear_confirmed" if low & {"yes", "yeah", "sure", "confirm"} else "clear"
    if low & {"remove", "delete", "unsave", "forget"} and ex.of("ref"):
        return "remove"
    if low & {"many", "count", "number"}:
        return "count"
    return "show"


# --- the decision ----------------------------------------------------------------------------------------------

_ASSEMBLE = {"search": _search, "refine": _refine, "entity": _entity, "command": _command}


def _assemble(ex: Extracted, items: list[Item], hits: list[CueHit], label: str, state: State) -> Reading:
    act = label.split(".")[0]
    if act == "ask":
        return Reading(text=ex.text, act="ask", sub=label)
    return _ASSEMBLE[act](ex, items, hits, label, state)


_SUBJECT_SPANS = frozenset({"name", "it", "term"})


def _kind_in_subject(ex: Extracted, s: Span) -> bool:
    """A kind of paper said inside the subject, after "in" and its own modifier ("biases in NLI datasets", "noise
    across speech corpora"): what the papers study, not the kind of paper wanted ("NLI datasets" alone is)."""
    i = _token_at(ex, s.start)
    k, modifiers = i - 1, 0
    while k >= 0 and ex.tokens[k].is_word and ex.tokens[k].low not in ("in", "across", "within") and modifiers < 2:
        if ex.tokens[k].low in _edge_words():
            return False
        k, modifiers = k - 1, modifiers + 1
    return modifiers > 0 and k > 0 and ex.tokens[k].low in ("in", "across", "within") and ex.tokens[k - 1].is_word


def _not_subject(ex: Extracted, items: list[Item], hits: list[CueHit], *, names_too: bool = False) -> set[int]:
    """Tokens that are no word of the message's subject: the cues' words and every span that says something else
    (a period, a venue, a person, a paper named as one); a field's term, a word written like a name and a field's
    name stay the subject's (``names_too``: a name is no subject either, in an entity question)."""
    removed = covered_tokens(items, hits) | _one_who_would(ex)
    for s in ex.spans:
        keep = s.kind in _SUBJECT_SPANS and not (names_too and s.kind == "name")
        if not keep and not is_weak(s):
            removed |= _span_tokens(ex, s)
    described = sum(1 for t in ex.tokens if t.is_word) > _POINTED_TYPE_WORDS
    for s in ex.spans:
        if s.kind == "type" and _kind_in_subject(ex, s):
            removed -= _span_tokens(ex, s)
    for s in ex.spans:  # "… a manually error-tagged learner corpus": in a long request the kind word is the subject's
        if described and s.kind == "type" and (i := _token_at(ex, s.start)) > 0:
            before = ex.tokens[i - 1]
            if before.is_word and before.low not in _edge_words() and i - 1 not in removed:
                removed -= _span_tokens(ex, s)
    for i in _field_pointed(ex):  # "surveys on this area": the search's own subject, pointed at
        removed |= {i - 1, i}
    parts = word_set("paper_parts")
    for i, t in enumerate(ex.tokens[1:], 1):  # "used its ideas": a part of the paper spoken of, not a subject
        if ex.tokens[i - 1].low in ("its", "their") and t.low in parts:
            removed |= {i - 1, i}
    return removed


def _subject(ex: Extracted, items: list[Item], hits: list[CueHit]) -> str | None:
    """The words the message's subject is said in (None: it only asks)."""
    return _choose_topic(topic_chunks(ex, _not_subject(ex, items, hits)), ex, set())[0]


def _subject_words(ex: Extracted, items: list[Item], hits: list[CueHit]) -> int:
    """How many words of its own the message's subject has (0: it only asks)."""
    topic = _subject(ex, items, hits)
    return _content_count(topic) if topic else 0


def _subject_then_whose(ex: Extracted, items: list[Item], hits: list[CueHit]) -> bool:
    """A subject's words, a clause mark, then the people whose papers are wanted ("semantic parsing, only papers by
    Percy Liang"); "papers by Dan Klein on parsing" leads with the person and asks for their papers."""
    people = ex.of("person")
    if not people:
        return False
    first = _token_at(ex, people[0].start)
    marks = [i for i, t in enumerate(ex.tokens[:first]) if not t.is_word and t.text in ",;:-–—("]
    if not marks:
        return False
    removed = _not_subject(ex, items, hits)
    edge = _edge_words()
    return any(t.is_word and i not in removed and t.low not in edge for i, t in enumerate(ex.tokens[: marks[0]]))


def _ambiguous_acronym(ex: Extracted) -> tuple[str, list[str]] | None:
    """An acronym typed in capitals that the field uses for several things (words.json's ambiguous_acronyms: "SSL"
    is self-supervised or semi-supervised learning), with no word of one of its senses said beside it."""
    table: dict[str, list[str]] = data_json("words.json")["ambiguous_acronyms"]
    said = set(re.findall(r"[a-z]+", ex.text.lower()))
    generic = word_set("field_words") | ENGLISH_STOPWORDS
    for t in ex.tokens:
        senses = table.get(t.low)
        if not senses or not t.text.isupper():
            continue
        if any(set(re.findall(r"[a-z]+", sense.lower())) - generic & said for sense in senses):
            return None  # "SSL, i.e. self-supervised": the sense is said
        return t.text, senses
    return None


def _subject_introduced(ex: Extracted, items: list[Item], hits: list[CueHit]) -> bool:
    """A subject said after a colon or a word that introduces one ("new search: X", "start over with X"), not the
    words of an idiom ("wipe the slate clean")."""
    intro = {":", "-", "--", "—", "–", "with", "on", "about", "for", "into"}
    for a, _, words in topic_chunks(ex, _not_subject(ex, items, hits)):
        if _content_count(words) and a > 0 and ex.tokens[a - 1].low in intro:
            return True
    return False


def _new_subject_words(ex: Extracted, items: list[Item], hits: list[CueHit], state: State) -> int:
    """How many of the subject's words are not the search's own ("how people evaluate summaries" while summarization
    is searched: one, the answer's)."""
    topic = _subject(ex, items, hits)
    if not topic:
        return 0
    searched = [lemma(w) for w in re.findall(r"[a-z]+", (state.topic or state.anchor or "").lower())]
    edge = _edge_words() | DEGREE_WORDS
    # ("noisy conditions, like far-field microphones": what follows "like" is an example of the answer, no subject)
    leads = word_set("example_leads")
    said = re.findall(r"[\w'+-]+", topic.lower())
    said = list(takewhile(lambda w: w not in leads, said)) or said
    words = [lemma(w) for w in said if w not in edge]
    # ("how we measure translation quality" to "which side of MT?": "measure" is the option "evaluation metrics")
    if state.question is not None:
        terms = option_terms(state.question)
        words = [w for w in words if not is_option_word(w, terms)]
    return sum(1 for w in words if not any(w[:5] == x[:5] for x in searched if len(x) > 3))


def _has_subject(ex: Extracted, items: list[Item], hits: list[CueHit]) -> bool:
    return _subject_words(ex, items, hits) > 0


def _both_ways(ex: Extracted, hits: list[CueHit]) -> list[Direction]:
    """Both directions asked for at once ("what it cites and what cites it"), joined by "and" / "both"."""
    cue = votes(hits)
    joined = any(t.low in ("and", "both", "&", "plus") for t in ex.tokens)
    ways: list[Direction] = ["predecessor", "successor"]
    return ways if joined and all(f"dir:{d}" in cue for d in ways) and len(ex.of(*_PAPER_KINDS)) <= 1 else []


_REF_FILLER = frozenset("the one ones number no paper papers result results and or".split())


def _only_refs(ex: Extracted) -> bool:
    """Nothing but result numbers ("the second", "#4", "3 and 5"): no word says what to do with them."""
    in_refs = {i for s in ex.of("ref") for i in _span_tokens(ex, s)}
    return all(i in in_refs or not t.is_word or t.low in _REF_FILLER for i, t in enumerate(ex.tokens))


def _label_for_alternative(r: Reading) -> str:
    if r.act == "search":
        what = r.anchor.text if r.anchor else (r.topic or "")
        return f"Start a new search on “{what}”" if r.anchor is None else f"Start a new search around “{what}”"
    if r.act == "refine":
        focus = r.refine.focus if r.refine is not None else None
        return f"Refine these results (focus on “{focus}”)" if focus else "Refine these results"
    if r.act == "entity":
        return "Answer a question about people, venues or institutions"
    if r.act == "command":
        return f"Do: {r.command}"
    return "Something else"


def _only_literature(hits: list[CueHit]) -> bool:
    """The only words of a direction are ones that also just mean a subject's literature ("prior work")."""
    said = [h.pattern for h in hits if h.label.startswith("dir:")]
    return bool(said) and set(said) <= word_set("literature_cues")


_ABBREVIATIONS = frozenset("al e.g i.e eg ie etc vs cf fig eq no approx dr prof".split())


def _told_in_sentences(ex: Extracted) -> list[tuple[int, int]]:
    """The sentences of a long message told in several (a research described), or none for a short request."""
    if sum(t.is_word for t in ex.tokens) < LONG_MESSAGE:
        return []
    sentences = _sentences(ex)
    return sentences if len(sentences) >= 2 else []


def _sentences(ex: Extracted) -> list[tuple[int, int]]:
    """The message's sentences as token ranges (first, last)."""
    out, start = [], 0
    toks = ex.tokens
    for k, t in enumerate(toks):
        # a new sentence starts with a capital: "Bolukbasi et al. 2016", "e.g. BERT", "vs. ELMo" go on
        nxt = toks[k + 1].text if k + 1 < len(toks) else ""
        after_abbreviation = t.text == "." and k > 0 and toks[k - 1].low in _ABBREVIATIONS
        # "… a reading list. could you find papers on it": a lower-case request after a full stop starts one too
        opens = nxt[:1].isupper() or (t.text != "." or k == 0 or toks[k - 1].is_word) and nxt.lower() in _OPENERS
        # (a semicolon joins two sentences: "I manage a small data team; we want to forecast …")
        if (t.text in (".", "!", "?") and (not nxt or (opens and not after_abbreviation))) or (t.text == ";" and nxt):
            out.append((start, k))
            start = k + 1
    if start < len(ex.tokens):
        out.append((start, len(ex.tokens) - 1))
    return out


_READING_VERBS = frozenset("read see find know learn explore survey look get".split())
_NOUN_BEFORE = frozenset("a an the my our your this that reading short long".split())
_OPENERS = frozenset("could can would will please pls what which who where how any show find give list".split())
_WANTING = frozenset("would 'd i we".split())
_ASKING_SENTENCE = frozenset(
    "find finding show give list recommend suggest search searching look looking seek seeking hunting".split()
)


def _asks(ex: Extracted, a: int, b: int) -> bool:
    """The sentence asks for something: a question, a request's word, or a want that is no plan ("I need papers
    on …", not "we want to learn a predictor …")."""
    low = [t.low for t in ex.tokens[a : b + 1]]
    # "I'd like to read about X", "we want to see work on X": a want to read is a request ("we want to learn a
    # predictor" is a plan)
    wanting = {k for k, w in enumerate(low) if w in ("want", "need") or (w == "like" and k and low[k - 1] in _WANTING)}
    wants = any(k + 1 == len(low) or low[k + 1] != "to" or (k + 2 < len(low) and low[k + 2] in _READING_VERBS)
                for k in wanting)  # fmt: skip
    # "a reading list", "my search": the noun, not the verb
    verbs = {w for k, w in enumerate(low) if w in _ASKING_SENTENCE and not (k and low[k - 1] in _NOUN_BEFORE)}
    return ex.tokens[b].text == "?" or wants or bool(verbs)


def _in_the_request(ex: Extracted, items: list[Item], hits: list[CueHit]) -> list[CueHit]:
    """In a research told in sentences ("Our project is X. … we test it on MS MARCO. Related work?"), the words of a
    direction count in what is asked (the last sentence, a question), not in the story of the work ("test on",
    "afterwards", "before it" there say what the asker did)."""
    sentences = _sentences(ex)
    if len(sentences) < 2:
        return hits
    asked = {i for n, (a, b) in enumerate(sentences) if n == len(sentences) - 1 or _asks(ex, a, b)
             for i in range(a, b + 1)}  # fmt: skip
    # a command's words in a sentence that asks for nothing, before one that asks ("… my lab needs a reading list.
    # Could you find papers on it?"): the story of the asker, not what is asked of pilot
    kinds = ("dir:", "cmd:") if _told_in_sentences(ex) else ("cmd:",)

    def told(h: CueHit) -> bool:
        return h.label.startswith(kinds) and not any(items[p].first_token in asked for p in h.items)

    return [h for h in hits if not told(h)]


_MODALS = frozenset("should would could can must might may do does".split())
_PUBLISHING = frozenset("submit publish send target present".split())


def _one_who_would(ex: Extracted) -> set[int]:
    """Tokens naming someone who would do what is asked about, not people asked for: "which venues should an NLP
    researcher submit fairness work to" (from the role through the verb after it)."""
    low = [t.low for t in ex.tokens]
    roles = word_set("asker_roles")
    out: set[int] = set()
    for i, w in enumerate(low[:-1]):
        if w in _MODALS and low[i + 1] in ("a", "an", "someone", "somebody"):
            role = next((k for k in range(i + 2, min(i + 6, len(low))) if low[k] in roles), None)
            if role is not None:
                end = role + 1 if role + 1 < len(low) and low[role + 1] in _PUBLISHING else role
                out.update(range(i + 1, end + 1))
    return out


def _not_of_the_asker(ex: Extracted, items: list[Item], hits: list[CueHit]) -> list[CueHit]:
    """ "Hello, I am researcher from Vietnam working on …": words that say who the asker is ask for nothing (no
    researchers are asked for). A clause that begins "I am / I'm / we are" and goes on with no verb of its own
    ("I am a PhD student …", "I am researcher …"; not "I'm looking for …") describes the asker."""
    low = [t.low for t in ex.tokens]
    about_me: set[int] = set()
    for i, w in enumerate(low):
        if not ((w in ("i'm", "im") and i + 1 < len(low)) or (w in ("am", "are") and i and low[i - 1] in ("i", "we"))):
            continue
        k = i + 1
        if k >= len(low) or not (low[k] in ("a", "an") or low[k] in word_set("asker_roles")):
            continue  # "I'm looking for …", "I'm not fussed about …": no one described
        while k < len(low) and ex.tokens[k].text not in _CLAUSE and low[k] not in ("and", "but", "so"):
            about_me.add(k)
            k += 1
    about_me |= _one_who_would(ex)
    if not about_me:
        return hits
    return [h for h in hits if not {items[p].first_token for p in h.items if not items[p].slot} <= about_me]


def read(text: str, state: State | None = None) -> Reading:
    """The reading of one message in the state of its conversation (see the module docstring)."""
    state = state or State()
    keep = frozenset(s.lower() for s in state.steps)
    prepared, translated, respelt = _prepare(text or "", keep)
    if not re.search(r"\w", prepared):
        return Reading(text=prepared, act="ask", sub="ask.empty", confidence=1.0, why="no words")
    ex = extract(prepared, state)
    items = items_of(ex)
    hits = resolve_typed(cue_hits(items), items, ex)
    if respelt:  # a word of the field is respelt only where it then steers ("wat cam befor BERT", "cam papers")
        covered = {ex.tokens[i].low for i in covered_tokens(items, hits)}
        field = corpus_words()
        # (a contraction written out, "isn't" -> "is not", is no respelling to take back)
        idle = frozenset(
            w.lower()
            for w, fixed in respelt.items()
            if w.lower() in field and " " not in fixed and fixed not in covered
        )
        if idle:
            prepared, translated, respelt = _prepare(text or "", keep | idle)
            ex = extract(prepared, state)
            items = items_of(ex)
            hits = resolve_typed(cue_hits(items), items, ex)
    hits = _in_the_request(ex, items, _affirmed(_not_of_the_asker(ex, items, hits), items, ex))
    demoted = _demoted(ex, items, hits)
    if demoted:  # words that only look like a paper's name are the subject's words, read whole: read again so
        spans = [s.model_copy(update={"kind": "term"}) if n in demoted else s for n, s in enumerate(ex.spans)]
        ex = Extracted(ex.text, ex.tokens, spans)
        items = items_of(ex)
        hits = _affirmed(_not_of_the_asker(ex, items, resolve_typed(cue_hits(items), items, ex)), items, ex)
        hits = _in_the_request(ex, items, hits)
    reading = _decide(ex, items, hits, state)
    reading.spans = ex.spans
    reading.translated = translated
    reading.respelt = respelt
    return reading


_FILTER_VERBS = frozenset(
    "only just keep remove drop exclude exclude excluding without filter restrict limit narrow hide skip ditch lose "
    "leave cut no not nothing none except".split()
)


def _type_on_new_subject(ex: Extracted, items: list[Item], hits: list[CueHit], state: State) -> bool:
    """ "surveys on automatic summarization", "datasets for sarcasm detection" while a list is on screen: a kind of
    paper on a subject of its own, not said to narrow the list ("only surveys"), is a new search."""
    types = ex.of("type")
    low = [t.low for t in ex.tokens]
    if not types or any(
        w in ("only", "just", "keep", "filter", "restrict", "limit", "which", "any", "are") for w in low
    ):
        return False
    i = _token_at(ex, types[0].start) + len(tokenize(types[0].text))
    if i >= len(low) or low[i] not in word_set("topic_intros"):
        return False
    topic, _ = _choose_topic(topic_chunks(ex, _not_subject(ex, items, hits)), ex, set())
    on_screen = f"{state.topic or ''} {state.anchor or ''}".lower()
    return topic is not None and topic != "" and topic.lower() not in on_screen


def _bare_subject(ex: Extracted, items: list[Item], hits: list[CueHit], fresh: bool = False) -> str | None:
    """The message is a subject's words and nothing else ("semantic role labeling"): no asking word, no cue, no
    span but the field's terms and words written like names. As a first message a subject may end in a noun of
    searching ("neural code search", "citation recommendation research")."""
    if hits or any(s.kind not in ("term", "name") for s in ex.spans):
        return None
    words = [t for t in ex.tokens if t.is_word]
    if fresh and words and words[-1].low in _ASKING_NOUNS and len(words) >= 2:
        words = words[:-1]
    if not any(c.isalpha() for t in words for c in t.text):
        return None  # "12345": no word of a subject
    edge = _edge_words()
    if (
        not words
        or len(words) > 6
        or any(t.low in edge and t.low not in ("of", "for", "in", "and", "with") for t in words)
    ):
        return None
    return " ".join(t.text for t in words)


def _only_narrows(ex: Extracted, items: list[Item], hits: list[CueHit]) -> bool:
    """A filter verb with constraint spans and no subject words: "remove papers by Kaiming He", "only Hinton's"."""
    constraints = ex.of("person", "venue", "time", "type", "pubkind", "cites", "org")
    asks_more = any(
        h.label.startswith(("ent:", "dir:", "cmd:", "search:other_year", "search:correction"))
        and h.label != "ent:papers"
        for h in hits
    )
    asks_more = asks_more or bool(ex.of("it", *_PAPER_KINDS))
    if not constraints or asks_more or _subject_words(ex, items, hits) > 0:
        return False
    # a filter verb, or nothing but the constraints ("ACL 2018 only"); a question ("which papers did … publish
    # at NAACL?", "tell me about EMNLP") asks about them instead
    low = [t.low for t in ex.tokens if t.is_word]
    if low and low[0] in ("which", "what", "who", "how", "where", "when", "tell", "show", "list", "give"):
        return any(w in ("only", "just") for w in low)
    covered = {i for s in ex.spans for i in _span_tokens(ex, s)}
    rest = [t.low for i, t in enumerate(ex.tokens) if t.is_word and i not in covered]
    plain = {"papers", "paper", "ones", "the", "from", "at", "in", "please", "published", "by", "and", "or", "with"}
    return any(w in _FILTER_VERBS for w in rest) or set(rest) <= plain


_NARROWING_WORDS = frozenset(
    "only just no not papers ones the from at in after before since please published by and or with".split()
)


def _unclear(ex: Extracted, state: State) -> Reading | None:
    """Messages the reader cannot act on whatever its classifier says: a first name or one capitalised word alone
    (a person, a venue or a topic?), words that only react ("maybe", "meh"), a pronoun with nothing on screen for
    it to mean, or periods that exclude each other."""
    words = [t for t in ex.tokens if t.is_word]
    lows = {t.low for t in words}

    def ask(sub: str, why: str) -> Reading:
        return Reading(text=ex.text, act="ask", sub=f"ask.{sub}", confidence=0.0, why=why)

    named = ex.of(*_PAPER_KINDS, "venue", "org", "person")
    one_name = len(words) == 1 and named and words[0].text[:1].isupper() and words[0].text[1:].islower()
    if one_name and (words[0].low in corpus_words() or words[0].low in word_set("given_names")):
        return ask("name", f"“{words[0].text}”: the venue or name, or the word's topic?")  # "Nature", "Science"
    if len(words) == 1 and not named:
        w = words[0]
        namelike = w.low in word_set("given_names") or (
            w.text[:1].isupper() and w.text[1:].islower() and ex.text.strip()[-1:] != "."
        )
        if namelike and w.low not in word_set("field_words") and not w.low.endswith(("tion", "ing", "sis")):
            return ask("name", f"“{w.text}” alone: a person, a venue or a topic?")
    if lows and lows <= word_set("reactions"):
        return ask("reaction", "words that react, but ask for nothing")
    deictic = lows & word_set("deictic")
    pointing = deictic & {"it", "its", "his", "her", "him", "he", "she", "they", "them", "their"}
    pointing |= {s.text for s in ex.of("it")}
    if pointing and state.phase == "fresh" and not named and len(words) <= 8:
        return ask("nothing_on_screen", "points at something, with nothing on screen to point at")
    nothing_to_narrow = state.phase == "fresh" and not named and ex.of("time", "venue", "type", "cites", "pubkind")
    constraint_words = {t.low for s in ex.spans if s.kind not in _SUBJECT_SPANS for t in tokenize(s.text)}
    if nothing_to_narrow and lows <= _NARROWING_WORDS | constraint_words:
        # what it narrows to is kept with the question, for the search the next message names
        narrowing = ask("nothing_to_narrow", "narrows a search, but none is being made")
        narrowing.constraints = _constraints(ex, set(), state, refine=False)
        return narrowing
    changing = lows & word_set("vague_change_verbs")
    refs = {t.low for s in ex.of("ref") for t in tokenize(s.text)}
    pointers = {"it", "this", "that", "them", "these", "those", "one", "the", "please"}
    only_pointers = lows - changing - refs <= pointers
    if changing and state.has_list and len(words) <= 3 and only_pointers and not ex.of(*_PAPER_KINDS):
        return ask("what_change", "a change to the list, with nothing said of what to change")  # "swap 3", "change it"
    dropping = lows & (_DROP_VERBS | {"remove", "hide"})
    if dropping and state.has_list and len(words) <= 3 and lows - dropping <= pointers and ex.spans == ex.of("it"):
        return ask("which_result", "leaves out a result, with none named")  # "drop it", "remove that"
    if "other" in lows and lows <= {"the", "other", "one", "ones", "that", "please", "i", "mean", "meant", "no"}:
        return ask("which_other", "“the other one”: which one?")
    if state.phase == "fresh" and lows & _SEARCH_VERBS and not ex.spans and lows <= _edge_words():
        return ask("no_subject", "asks to find, but names nothing to find")  # "find me stuff", "帮我找点东西"
    if _PLACEHOLDER.search(ex.text):
        return ask("template", "a template with its blanks not filled in")  # "papers on [TOPIC] from [YEAR]"
    if state.phase == "fresh" and "same" in lows and len(words) <= 6 and not ex.of(*_PAPER_KINDS):
        return ask("nothing_on_screen", "“the same” with no search before it to be the same as")
    said = " " + " ".join(t.low for t in words) + " "
    low = [t.low for t in words]
    # "that famous one by the Google guys": one paper the asker has in mind, named by nothing it can be found by
    thought_of = any(
        w == "one" and "that" in low[max(0, i - 2) : i] and low[i + 1 : i + 2] != ["of"] for i, w in enumerate(low)
    )
    if state.phase == "fresh" and thought_of and not ex.of(*_PAPER_KINDS) and len(words) <= 10:
        return ask("which_paper", "“that one”: a paper in mind, not named")
    if not ex.of(*_PAPER_KINDS, "venue", "time", "org") and _told_of(low):
        return ask("which_paper", "a paper someone mentioned to you, not named here")
    # "exclude that author", "papers by the guy who did the attention thing": a person pointed at or described,
    # with none named here or before
    person_pointed = any(
        w in _PERSON_NOUNS
        and (
            low[i - 1 : i] in (["that"], ["this"], ["those"], ["these"])
            # (described by a paper named, "the author who wrote BERT", the person is found through it)
            or (low[i - 1 : i] == ["the"] and low[i + 1 : i + 2] in _WHO and not ex.of(*_PAPER_KINDS))
        )
        for i, w in enumerate(low)
    )
    if person_pointed and not ex.of("person") and not (state.asked or {}).get("person"):
        return ask("which_person", "“that author”: which author?")
    # "only from that conference": a venue pointed at, with none named here and no paper on screen to have one
    venue_nouns = set(word_table("slot_nouns")["venue"])
    venue_pointed = any(w in venue_nouns and low[i - 1 : i] in (["that"], ["this"]) for i, w in enumerate(low))
    if venue_pointed and not ex.of("venue") and not state.anchor:
        return ask("which_venue", "“that conference”: which venue?")
    # "stick to the good venues", "only reputable journals": venues by a judgement, none named — which ones?
    praised = any(
        w in venue_nouns and bool(set(low[max(0, i - 3) : i]) & word_set("venue_praise")) for i, w in enumerate(low)
    )
    # (beside a subject of its own, "RAG, last five years, top venues only", it is a wish the search can leave)
    judged_only = not (
        set(low)
        - venue_nouns
        - word_set("venue_praise")
        - word_set("restricting")
        - _NARROWING_WORDS
        - ENGLISH_STOPWORDS
    )
    if praised and judged_only and not ex.of("venue") and set(low) & word_set("restricting"):
        return ask("which_venue", "venues by a judgement of their quality, none named: which ones?")
    # "do the same for the other paper", "the BERT one vs the other one": a second paper nobody has named
    other_paper = any(
        w in ("paper", "one", "article") and low[max(0, i - 2) : i] == ["the", "other"] for i, w in enumerate(low)
    )
    if other_paper and not ex.of("ref") and not (state.asked or {}).get("paper"):
        return ask("which_other", "“the other paper”: which one?")
    # "what about the other guy": a second person nobody has named
    other_person = any(
        without_possessive(w) in _PERSON_NOUNS and low[max(0, i - 2) : i] == ["the", "other"] for i, w in enumerate(low)
    )
    if other_person and not ex.of("person"):
        return ask("which_person", "“the other author”: which one?")
    if state.phase == "fresh" and not named and any(f" {p} " in said for p in word_set("conversation_refs")):
        return ask("no_memory", "points at an earlier conversation, which this one does not have")
    # open bounds that cannot both hold ("only before 2010 and only after 2015"); closed periods add up instead
    kept = [
        s.value for s in ex.of("time") if not s.value.get("excluded") and s.value.get("rule", "").startswith("year ")
    ]
    lo = max((v["year_min"] for v in kept if v.get("year_min") is not None), default=None)
    hi = min((v["year_max"] for v in kept if v.get("year_max") is not None), default=None)
    if lo is not None and hi is not None and lo > hi:
        return ask("contradiction", f"periods that exclude each other (from {lo} and up to {hi})")
    return None


# a blank of a template, as templates write them: "[TOPIC]", "<year>", "{venue}", "TODO"
_PLACEHOLDER = re.compile(r"[\[<{]\s?[A-Za-z_]{2,20}\s?[\]>}]|\bTODO\b")


def _said_beyond_asking(low: list[str]) -> bool:
    """Whether the words say anything but how people ask: the request words, hyphened ones said with spaces too
    ("state of the art" is "state-of-the-art")."""
    said = " " + " ".join(low) + " "
    for phrase in _SPACED_REQUEST_WORDS:
        said = said.replace(f" {phrase} ", " ")
    return bool(set(said.split()) - _edge_words())


_SPACED_REQUEST_WORDS = sorted(
    (w.replace("-", " ") for w in word_set("request_words") if "-" in w), key=lambda p: -len(p)
)
_PERSON_NOUNS = frozenset(
    "author author's authors guy guys person researcher writer woman man lady fellow prof professor folks".split()
)
_WHO = (["who"], ["whose"], ["that"])


def _told_of(low: list[str]) -> bool:
    """ "the paper Sarah mentioned in group meeting", "that article my advisor sent round": one paper someone told
    the asker of, named by nothing it can be found by (a verb of telling within a few words after "the paper")."""
    told = word_set("told_verbs")
    return any(
        w in ("paper", "article", "preprint", "study", "one")
        and i > 0
        and low[i - 1] in ("the", "that", "this", "one")
        and any(x in told for x in low[i + 1 : i + 6])
        and "you" not in low[i + 1 : i + 4]  # "the one you showed first" is on the list
        for i, w in enumerate(low)
    )


def _sub_area(ex: Extracted, items: list[Item], hits: list[CueHit]) -> str | None:
    """Words that answer "which sub-area?" in their own terms ("mostly alignment and phrase tables", "I'm
    interested in RST mainly"): a short subject and nothing else asked. A kind of paper among other subject words is
    one of them ("similarity, corpus, recognizing"); alone ("mostly surveys") it is no sub-area."""
    asks = any(
        h.label.startswith(("dir:", "ref:", "cmd:", "ent:", "search:", "refine:")) and h.label != "refine:focus"
        for h in hits
    )
    if asks or ex.of("id", "title", "cited", "person", "time", "count", "cites", "pubkind"):
        return None
    removed = covered_tokens(items, hits)
    if not [w for _, _, w in topic_chunks(ex, removed) if _content_count(w)]:
        return None
    kinds = {i for s in ex.of("type") for i in _span_tokens(ex, s)}
    negated = any(t.low in _EXCLUDING for t in ex.tokens)
    intros = word_set("topic_intros")
    heads = any(k + 1 < len(ex.tokens) and ex.tokens[k + 1].low in intros for k in kinds)
    if kinds and (negated or heads):
        return None  # "no surveys, mostly parsing", "surveys on summarization": the kind is asked for, or left out
    chunks = [w for _, _, w in topic_chunks(ex, removed - kinds) if _content_count(w)]
    topic = " ".join(chunks)  # "chunking, conll, chinese": several sub-areas, together
    if topic and _content_count(topic) <= 8:
        return topic
    return None


_RESTRICTING = frozenset(
    "only just rest else drop remove rid others nothing lose ditch delete everything all but except".split()
)


_FOR_LATER = frozenset("later library aside bookmarks saved".split())


def _keeps_in_library(ex: Extracted) -> bool:
    """ "save #1 and #4", "keep the second paper for later": results kept in the library. "Keep 1, 4 and 6" alone
    narrows the list to them, as every held-out writer reads it."""
    words = [t.low for t in ex.tokens if t.is_word]
    lead = next(
        (w for w in words if w not in ("please", "ok", "okay", "and", "also", "i", "want", "to", "can", "you")), ""
    )
    positional = ex.of("ref") or [s for s in ex.of("count") if s.source in ("top n", "last n")]
    saving = lead in ("save", "bookmark", "star") or (lead == "keep" and bool(set(words) & _FOR_LATER))
    return saving and bool(positional) and not set(words) & _RESTRICTING


# "the one with images" for "Visual question answering": an option the words mean, by the sentence model, when it
# is clearly the closest (a sub-area of the user's own is kept otherwise)
OPTION_MEANT, OPTION_MEANT_LONG, OPTION_MARGIN = 0.35, 0.5, 0.15


def _option_meant(words: str, question: QuestionState, floor: float = OPTION_MEANT) -> int | None:
    real = real_options(question)
    sims = acts_mod.classifier().cosines(words, [question.options[i] for i in real])
    if not sims:
        return None
    ranked = sorted(zip(sims, real, strict=True), reverse=True)
    best, second = ranked[0][0], (ranked[1][0] if len(ranked) > 1 else 0.0)
    return ranked[0][1] if best >= floor and best - second >= OPTION_MARGIN else None


# an answer in words no option shares ("how people evaluate it" for "Evaluation methodology"): short, naming nothing
ANSWER_IN_OTHER_WORDS = 6
# slots whose options are values with a grammar of their own (a period, a venue) or read as sub-areas (the topic)
_SLOTS_WITH_VALUES = frozenset({"time", "venue", "topic", "anchor", "fallback"})


def _option_in_other_words(ex: Extracted, question: QuestionState) -> int | None:
    """The option a short answer means by the sentence model, when it is clearly the closest and the message
    names no paper, person, venue, period or result (then it is a request of its own)."""
    words = [t for t in ex.tokens if t.is_word]
    if question.slot in _SLOTS_WITH_VALUES or not 0 < len(words) <= ANSWER_IN_OTHER_WORDS:
        return None
    if ex.of("title", "id", "person", "venue", "time", "ref", "org"):
        return None
    return _option_meant(ex.text, question, OPTION_MEANT_LONG)


def _decide(ex: Extracted, items: list[Item], hits: list[CueHit], state: State) -> Reading:
    # 2. the state: an answer to the open question
    if state.question is not None:
        own_subject = state.question.slot != "topic" and _new_subject_words(ex, items, hits, state) >= 2
        ans = read_answer(ex, state.question, hits, subject=own_subject)
        if ans is not None and ans.confidence > 0:
            return Reading(
                text=ex.text,
                act="answer",
                sub=f"answer.{state.question.slot}",
                option=ans.option,
                options=ans.options,
                no_preference=ans.no_preference,
                confidence=ans.confidence,
                why=ans.why,
                constraints=Constraints(**ans.updates) if ans.updates else Constraints(),
            )
        if ans is not None and ans.confidence == 0:
            return Reading(text=ex.text, act="ask", sub="ask.answer", confidence=0.0, why=ans.why)
        if ans is None and (meant := _option_in_other_words(ex, state.question)) is not None:
            return Reading(text=ex.text, act="answer", sub=f"answer.{state.question.slot}", option=meant,
                           confidence=0.7, why=f"its words mean option {meant + 1}")  # fmt: skip
        if state.question.slot == "topic" and (sub_area := _sub_area(ex, items, hits)) is not None:
            # (a list of subjects of one's own, "similarity, english, corpus", stays the user's)
            # a longer phrase of one's own picks an option only when it is plainly that option's
            floor = OPTION_MEANT_LONG if len(sub_area.split()) > 4 else OPTION_MEANT
            if "," not in ex.text and (meant := _option_meant(sub_area, state.question, floor)) is not None:
                return Reading(text=ex.text, act="answer", sub="answer.topic", option=meant, confidence=0.7,
                               why=f"its words mean option {meant + 1}")  # fmt: skip
            return Reading(text=ex.text, act="answer", sub="answer.topic", topic=sub_area, confidence=0.8,
                           why="names a sub-area in words of its own")  # fmt: skip
    # whatever the words around it ask, a pasted text is searched (a title inside the passage is part of it)
    if _is_passage(ex) and not (around := _outside_passage(ex)).of("id", "title"):
        return _passage_search(ex, around, state)
    if (unclear := _unclear(ex, state)) is not None:
        return unclear
    # a result number out of the list's range is a question back, never a guess
    refs = _refs_in(ex, state) if not ex.of("step") else []  # "set k to 20": a step's value, not result 20
    if refs and state.has_list and any(not 1 <= r <= state.listed for r in refs) and not ex.of(*_PAPER_KINDS):
        beyond = next(r for r in refs if not 1 <= r <= state.listed)
        hint = f"There is no result #{beyond}: the list has {state.listed}. Name one of its numbers."
        return Reading(text=ex.text, act="ask", sub="ask.range", confidence=0.0, hint=hint,
                       why=f"names a result that is not on the list (there are {state.listed})")  # fmt: skip
    if refs and state.has_list and state.question is None and _only_refs(ex):
        # "the second", "#4" alone: explain it, keep it, or more like it? Asked, each offered
        which = ", ".join(f"#{n}" for n in refs)
        actions = [
            Alternative(label=f"Why {which} is on the list", reading=Reading(
                text=ex.text, act="command", sub="command.explain", command="explain", refs=refs)),
            Alternative(label=f"Keep {which} in my library", reading=Reading(
                text=ex.text, act="command", sub="command.save", command="save", refs=refs)),
            Alternative(label=f"More papers like {which}", reading=Reading(
                text=ex.text, act="refine", sub="refine.more_like", refine=Refinement(more_like=refs))),
        ]  # fmt: skip
        return Reading(text=ex.text, act="ask", sub="ask.what_of_refs", confidence=0.0,
                       why="names results and nothing to do with them", alternatives=actions)  # fmt: skip
    pointing = [s for s in ex.spans if s.kind == "ref" and s.source in ("hash", "noun number", "ordinal", "ordinals")]
    if pointing and not state.has_list and state.question is None and state.asked is None:
        return Reading(text=ex.text, act="ask", sub="ask.no_list", confidence=1.0,
                       why="names a result by its number, with no numbered list on screen")  # fmt: skip
    # 3. the classifier and the cues, over the labels the state allows
    scores = _scores(ex, items, hits, state)
    asks_number = any(h.label in ("ent:count", "ent:most_cited") for h in hits)
    asks_who = any(h.label in ("ent:researchers", "ent:institutions", "ent:venues") for h in hits)
    if (
        "entity.papers" in scores
        and not asks_number
        and not asks_who
        and (
            # "ACL papers on NER": a topic search at that venue, not a venue's profile
            (not ex.of("person", "org") and _has_subject(ex, items, hits))
            # "egocentric video, restricted to work by Kristen Grauman": a subject first, then whose papers it
            # wants — a topic search by that author, not the author's profile
            or _subject_then_whose(ex, items, hits)
        )
    ):
        scores["search.topic"] = max(scores.get("search.topic", 0.0), scores.pop("entity.papers"))
    if state.has_search and _type_on_new_subject(ex, items, hits, state):
        scores = {k: v for k, v in scores.items() if k == "search.topic"} or scores
    if state.has_list and (bare := _bare_subject(ex, items, hits)) is not None:
        # a subject and nothing else while a list is on screen: narrow the list, or search it anew? (asked)
        refine = Reading(text=ex.text, act="refine", sub="refine.focus", refine=Refinement(focus=bare))
        search = Reading(text=ex.text, act="search", sub="search.topic", topic=bare)
        return Reading(
            text=ex.text, act="ask", sub="ask.scope", confidence=0.5, why="a subject alone while a list is on screen",
            alternatives=[Alternative(label=_label_for_alternative(r), reading=r) for r in (refine, search)],
        )  # fmt: skip
    if state.phase == "fresh" and (bare := _bare_subject(ex, items, hits, fresh=True)) is not None:
        # "neural code search" as the first message: a subject's words and nothing else is a search for them
        scores["search.topic"] = max(scores.values(), default=0.0) + MARGIN
    if state.has_list and _only_narrows(ex, items, hits):
        # words that only narrow the list on screen (a filter verb and constraints, no subject of their own)
        scores = {k: v for k, v in scores.items() if k.startswith(("refine.", "command."))} or scores
    ranked = _rank(scores)
    top_label, top = ranked[0]
    other = next(
        (
            (lab, s)
            for lab, s in ranked[1:]
            if lab.split(".")[0] != top_label.split(".")[0] and not _agree(top_label, lab, ex)
        ),
        (None, 0.0),
    )
    if top_label == "command.start_over" and _subject_introduced(ex, items, hits):
        top_label = "search.topic"  # "new search: aspect based sentiment analysis": a fresh start with its subject
    if top_label.startswith("refine.") and state.has_list and _keeps_in_library(ex):
        top_label = "command.save"  # "keep #1 and #4": into the library (the list stays); "keep only …" narrows it
    reading = _assemble(ex, items, hits, top_label, state)
    if _same_search(reading, state):
        # "papers that cite it from 2016" with its citers on screen: the list on screen, narrowed
        reading = Reading(text=ex.text, act="refine", sub="refine.filter", refine=Refinement(),
                          constraints=reading.constraints)  # fmt: skip
    if _nothing_to_search(reading, state):
        # "find me some papers", "the newest work", "the same but newer" before any search: no paper, topic,
        # person, venue or institution to search for, and nothing on screen for it to mean — asked
        return Reading(text=ex.text, act="ask", sub="ask.no_subject", confidence=0.0, constraints=reading.constraints,
                       why="a search with no subject, and no search yet to take one from")  # fmt: skip
    acronym = _ambiguous_acronym(ex) if reading.act == "search" else None
    # (a paper searched from in a direction, "what came before LDA", is that paper)
    a = reading.anchor
    directed = any(h.label.startswith("dir:") for h in hits)
    if acronym and (a is None or (a.text.upper() == acronym[0].upper() and not directed)):
        # "papers on SSL": self-supervised or semi-supervised? Each sense offered as a search of its own
        said, senses = acronym
        # each sense in the subject's words ("SSL for speech": "self-supervised learning for speech")
        subject = (reading.topic if a is None else _subject(ex, items, hits)) or said
        if not re.search(rf"\b{re.escape(said)}\b", subject, flags=re.I):
            subject = f"{said} {subject}"
        searches = [
            Reading(text=ex.text, act="search", sub="search.topic", constraints=reading.constraints,
                    topic=re.sub(rf"\b{re.escape(said)}\b", sense, subject, flags=re.I))
            for sense in senses
        ]  # fmt: skip
        by_sense = [Alternative(label=_label_for_alternative(r), reading=r) for r in searches]
        return Reading(text=ex.text, act="ask", sub="ask.acronym", confidence=0.0, alternatives=by_sense,
                       why=f"“{said}” stands for several things: {', '.join(senses)}",
                       hint=f"“{said}” can mean {', '.join(senses)}. Which one do you mean?")  # fmt: skip
    if reading.act == "search" and (both := _both_ways(ex, hits)):
        # "predecessors and successors, both": one search goes one way; which first is asked, each offered
        ways = [Alternative(label=f"Its {d}s first", reading=reading.model_copy(update={"direction": d})) for d in both]
        return Reading(text=ex.text, act="ask", sub="ask.two_directions", confidence=0.0, alternatives=ways,
                       why="asks for what came before and what came after at once")  # fmt: skip
    focus_words = set((reading.refine.focus or "").lower().split()) if reading.refine is not None else set()
    if reading.act == "search" and state.has_list and reading.anchor is None:
        focus_words = set((reading.topic or "").lower().split())  # "give me better papers" after a list
    if focus_words and focus_words <= _VAGUE_PRAISE and not reading.constraints.set_fields():
        return Reading(text=ex.text, act="ask", sub="ask.vague", confidence=0.0, why="better in what way?",
                       hint="Better in what way: more recent, more cited, closer to the subject, or from certain "
                            "venues?")  # fmt: skip
    if reading.refine is not None and (which := _which_unsaid(ex, reading)):
        hint = f"Which ones? {which[:1].upper()}{which[1:]}: name them by their numbers on the list."
        return Reading(text=ex.text, act="ask", sub="ask.which_results", confidence=0.0, why=which, hint=hint)

    if reading.act == "refine" and reading.refine is not None and _changes_nothing(reading):
        # "filter by author", "restrict to one venue": a change to the list with no value to change it to
        noun = next((t.low for t in ex.tokens if t.low in _FILTER_NOUNS), "")
        hint = (
            f"Which {noun.rstrip('s')}? Name it, and I will narrow the list to it."
            if noun
            else ("What should change about the list: years, venues, authors, kinds of paper, or its order?")
        )
        return Reading(text=ex.text, act="ask", sub="ask.what_change", confidence=0.0,
                       why="a change to the list with no value said", hint=hint)  # fmt: skip
    if reading.act == "search" and (who := _only_a_surname(reading, ex)):
        return Reading(text=ex.text, act="ask", sub="ask.which_paper", confidence=0.0, why="a family name, no paper",
                       hint=f"Which paper by {who}? Give its title, a word of it, or its year "
                            f"(“{who} 2019”).")  # fmt: skip
    if reading.act == "search" and reading.anchor is None and _unknown_words(reading.topic, ex):
        said = reading.topic or ""
        said = said if len(said) <= 60 else said[:57].rstrip() + "…"  # a pasted page of keys is not said back
        return Reading(text=ex.text, act="ask", sub="ask.unclear", confidence=0.0, why="no word of it is known",
                       hint=f"Nothing in the source matches “{said}”: I do not know these words. What would you "
                            "like to find?")  # fmt: skip
    if reading.act == "refine" and _both_ages(ex, items, hits):
        return Reading(text=ex.text, act="ask", sub="ask.contradiction", confidence=0.0, why="recent and older at once",
                       hint="Newer work, or older work? One list leans one way; say which matters more.")  # fmt: skip
    if reading.act == "refine" and _both_orders(ex, items, hits):
        # "newest first and also oldest first": one list has one order
        return Reading(text=ex.text, act="ask", sub="ask.contradiction", confidence=0.0, why="two opposite orders",
                       hint="One list has one order: newest first, or oldest first?")  # fmt: skip
    if clash := reading.constraints.clash():
        return Reading(text=ex.text, act="ask", sub="ask.contradiction", confidence=0.0, why=clash,
                       hint=f"Those cannot all hold ({clash}). Which did you mean?")  # fmt: skip
    if state.phase == "entity_answer" and reading.refine is not None and reading.refine.more_like:
        n = reading.refine.more_like[0]  # after an answer, "more like the first one" searches from that paper
        reading = Reading(text=ex.text, act="search", sub="search.sibling", direction="sibling",
                          anchor=Anchor(text=f"#{n}", kind="result", ref=n))  # fmt: skip
    reading.confidence = round(top, 3)
    reading.why = (
        f"most like “{acts_mod.classifier().nearest(acts_mod.typed_text(ex), top_label)}” ({top_label} {top:.2f})"
    )
    sure = top >= THRESHOLD and top - other[1] >= MARGIN
    cued = any(c in votes(hits) for c in _CUE_FOR.get(top_label, ()))
    if reading.act == "command" and not cued and top < COMMAND_UNCUED:
        # "find me stuff" is nearest to "start over" by a little: a command none of whose words were said is a guess
        return Reading(text=ex.text, act="ask", sub="ask.unsure", confidence=round(top, 3),
                       why=f"not sure: {top_label} {top:.2f}, and none of its words said")  # fmt: skip
    if not sure and reading.act != "ask" and other[0] is not None:
        second = _assemble(ex, items, hits, other[0], state)
        if reading.act == "refine" and _same_search(second, state):
            return reading  # the other reading, a search for what is on screen, narrows it the same way
        return Reading(
            text=ex.text, act="ask", sub="ask.unsure", confidence=round(top, 3),
            why=f"not sure: {top_label} {top:.2f} vs {other[0]} {other[1]:.2f}",
            alternatives=[Alternative(label=_label_for_alternative(r), reading=r) for r in (reading, second)],
        )  # fmt: skip
    return reading


__all__ = ["read", "Reading", "State", "Act"]
