"""One pass over a message: typed spans with offsets, overlaps settled once (longest, then earliest).

    extract("which NeurIPS or ICML papers extend ResNet since 2016?", State())
    -> venue NeurIPS, venue ICML, paper ResNet, time {year_min: 2016}

What is recognised by name (venues, organisations, papers known by a name, paper types, export formats) comes
from the one lexicon; periods from the time grammar; the rest are shapes that do not depend on a word list: ids,
quoted titles, result numbers, counts, citation floors, references written as papers cite them, people's names,
words written like a paper's name. A span records which rule or row found it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from pilot.reading.lexicon import corpus_words, data_json, lexicon, word_set
from pilot.reading.lexicon import surnames as family_names
from pilot.reading.model import Span, SpanKind, State
from pilot.reading.timegrammar import periods
from pilot.reading.tokens import Token, tokenize
from pilot.text import ENGLISH_STOPWORDS

# --- identifiers and quoted titles ---------------------------------------------------------------------------
_DOI = re.compile(r"\b(?:https?://(?:dx\.)?doi\.org/|doi:\s?)?(10\.\d{4,9}/[^\s\"'<>]+)", re.I)
_ARXIV = re.compile(
    r"(?:arxiv[:/ ]\s*|arxiv\.org/(?:abs|pdf)/)(\d{4}\.\d{4,5})(?:v\d+)?|\b(\d{4}\.\d{4,5})(?:v\d+)?\b", re.I
)
_ARXIV_LIKE = re.compile(r"(?:0[7-9]|[12]\d)(?:0[1-9]|1[0-2])\.\d{4,5}$")  # a year and a month, then the number
_S2 = re.compile(r"(?:https?://(?:www\.)?semanticscholar\.org/paper/(?:[\w-]+/)?)?\b([0-9a-f]{40})\b")
_CORPUS_ID = re.compile(r"\b((?:acl|s2|pc|aminer|corpusid):[\w.\-:]+)", re.I)
_ACL = re.compile(
    r"(?:https?://)?(?:www\.)?(?:aclanthology\.org/|aclweb\.org/anthology/(?:[A-Z]/[A-Z]\d\d/)?)?"
    r"\b([A-Z]\d{2}-\d{4}|\d{4}\.[a-z]+(?:-[a-z]+)?\.\d+)\b(?:\.pdf|/)?"
)
_QUOTED = re.compile(r"[\"“«]([^\"“”«»]{3,300})[\"”»]|(?<![\w])'([^']{6,300})'(?![\w])")

# --- result numbers, counts, citation floors -----------------------------------------------------------------
_ORDINALS = {
    "first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "fifth": 5, "5th": 5,
    "sixth": 6, "6th": 6, "seventh": 7, "7th": 7, "eighth": 8, "8th": 8, "ninth": 9, "9th": 9, "tenth": 10,
    "10th": 10, "eleventh": 11, "twelfth": 12, "top": 1,
}  # fmt: skip
NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "hundred": 100,
    "thousand": 1000,
}  # fmt: skip
_NUMBER_NOUNS = frozenset("number no nr num result paper item entry".split())
_NUMBER_SHORT = frozenset("no nr num".split())  # "no. 7", "No.7", "nr. 3": number, abbreviated
_REF_NOUNS = frozenset("one ones paper papers result results entry item article hit".split())
_ONE_NOUNS = frozenset("one paper result entry item article hit match".split())
_AFTER_REF = frozenset("to in into on onto from for and or as please too".split())  # "add the 7th to my list"


_RANGE_WORDS = frozenset("through thru to till until - –".split())


def _range_in_words(low: list[str], i: int, listed: int) -> tuple[int, int] | None:
    """Results ``first`` to ``last`` said in words ("1 through 4", "#2 to #5") within a list of ``listed``."""
    if not listed or i + 2 >= len(low) or low[i + 1] not in _RANGE_WORDS:
        return None
    first, last = (w.removeprefix("#") for w in (low[i], low[i + 2]))
    if first in NUMBER_WORDS and last in NUMBER_WORDS and i > 0 and low[i - 1] in _REF_NOUNS | {"numbers", "items"}:
        first, last = str(NUMBER_WORDS[first]), str(NUMBER_WORDS[last])  # "results one through four"
    if not (first.isdigit() and last.isdigit()) or (i > 0 and low[i - 1] in ("from", "between")):
        return None  # "from 2 to 5" is more often a range of years or counts than of results
    a, b = int(first), int(last)
    nxt = low[i + 3] if i + 3 < len(low) else ""
    return (a, b) if 1 <= a < b <= listed and nxt not in _CITES_NOUNS else None


def _after_ref(low: list[str], j: int) -> bool:
    """A word that can follow a result named by its place: a preposition, not an infinitive ("the first to
    propose …" is a description)."""
    if low[j] != "to":
        return low[j] in _AFTER_REF
    return j + 1 < len(low) and low[j + 1] in ("my", "our", "the", "your", "a", "this", "that")


_COUNT_NOUNS = frozenset("results papers hits items articles entries references ones".split())
_OPENING_QUOTES = frozenset("' \" ‘ “".split())
_WORK_NOUNS = frozenset("papers paper work works publications publication articles article".split())
_BEFORE_THE_WORK = frozenset("the any all those these more no other".split())
# "pull 25 instead", "get me 40": a number of papers asked for
_FETCH_VERBS = frozenset(
    "show give list display return want see send pull fetch grab get retrieve bring load say".split()
)
_CITES_NOUNS = frozenset("citations citation cites cited times".split())


@dataclass(frozen=True)
class Extracted:
    """The message as the reader saw it, its tokens, and its spans (settled, left to right)."""

    text: str
    tokens: list[Token]
    spans: list[Span]

    def of(self, *kinds: SpanKind) -> list[Span]:
        return [s for s in self.spans if s.kind in kinds]

    def first(self, *kinds: SpanKind) -> Span | None:
        return next((s for s in self.spans if s.kind in kinds), None)

    def covered(self, i: int) -> Span | None:
        """The span holding token ``i``, if any."""
        t = self.tokens[i]
        return next((s for s in self.spans if s.start <= t.start and t.end <= s.end), None)


def _span(kind: SpanKind, text: str, start: int, end: int, value: object, source: str) -> Span:
    return Span(kind=kind, start=start, end=end, text=text[start:end], value=value, source=source)


def _tok_span(kind: SpanKind, text: str, toks: list[Token], i: int, j: int, value: object, source: str) -> Span:
    if kind == "person" and isinstance(value, str) and value.isascii() and value.islower():
        value = value.title()  # "chris manning" is looked up and said back as Chris Manning
    return _span(kind, text, toks[i].start, toks[j].end, value, source)


# --- the pieces ------------------------------------------------------------------------------------------------


def _ids(text: str) -> list[Span]:
    out = []
    for m in _CORPUS_ID.finditer(text):
        out.append(_span("id", text, m.start(), m.end(), m.group(1).rstrip(".,;)]"), "corpus id"))
    for m in _DOI.finditer(text):
        doi = m.group(1).rstrip(".,;:?!)]")  # "what cites 10.18653/v1/P19-1001?": the question mark is no part of it
        out.append(_span("id", text, m.start(), m.start(1) + len(doi), doi, "doi"))
    for m in _S2.finditer(text):
        out.append(_span("id", text, m.start(), m.end(), m.group(1), "s2"))
    for m in _ARXIV.finditer(text):
        if m.group(1) or _ARXIV_LIKE.match(m.group(2)):
            out.append(_span("id", text, m.start(), m.end(), f"arxiv:{m.group(1) or m.group(2)}", "arxiv"))
    for m in _ACL.finditer(text):
        out.append(_span("id", text, m.start(), m.end(), f"acl:{m.group(1)}", "acl anthology id"))
    return out


MAX_TITLE_WORDS = 30  # a longer quotation is a pasted passage (an abstract), not a title
# prose, not a title: a sentence ends inside the quotation, or it opens as an abstract does ("We propose …")
# (a "!" or "?" inside is a title's too: "Sentiment analysis is not solved! Assessing …"; "vs." is no full stop)
_SENTENCE_BREAK = re.compile(r"\b(?!(?:vs|al|etc|eg|ie|cf)\.)[a-z]{2,}\.\s+[A-Z]")
_PROSE_OPENING = re.compile(r"^(?:we|our|here we|in this (?:paper|work)|this (?:paper|work))\b", re.I)


def is_prose(quoted: str) -> bool:
    """A quotation written in sentences: a pasted passage (an abstract, a draft's paragraph), not a title."""
    return bool(_SENTENCE_BREAK.search(quoted)) or (bool(_PROSE_OPENING.match(quoted)) and len(quoted.split()) >= 8)


def prose_quotes(text: str) -> list[str]:
    """The quotations of ``text`` that are pasted prose (see ``is_prose``) or too long for a title."""
    found = ((m.group(1) or m.group(2)).strip() for m in _QUOTED.finditer(text))
    return [q for q in found if len(q.split()) > MAX_TITLE_WORDS or is_prose(q)]


def _titles(text: str) -> list[Span]:
    out = []
    for m in _QUOTED.finditer(text):
        title = (m.group(1) or m.group(2)).strip()
        if 1 <= len(title.split()) <= MAX_TITLE_WORDS and any(c.isalpha() for c in title) and not is_prose(title):
            out.append(_span("title", text, m.start(), m.end(), title, "quoted"))
    return out


_TITLE_SMALL = frozenset("a an the of for to in on and with is are from by via at as or vs be all you".split())
_SENTENCE_END = frozenset(".!?")


_HEAD_ENDS = frozenset(":-(")


def _heads_a_question_on_it(toks: list[Token]) -> bool:
    """ "An Image is Worth 16x16 Words -- which benchmarks does it report on": words in Title Case at the start, set
    off by a colon, dash or bracket, before a question about "it", name the paper it asks about."""
    end = next((k for k, t in enumerate(toks) if t.text in _HEAD_ENDS), None)
    if end is None or end < 3:
        return False
    head = [t for t in toks[:end] if t.is_word]
    caps = sum(t.text[:1].isupper() or t.text[:1].isdigit() for t in head)
    return caps >= 0.5 * len(head) and any(t.low in ("it", "its") for t in toks[end + 1 :])


def _title_case(text: str, toks: list[Token]) -> list[Span]:
    """A title typed in Title Case inside a sentence ("works citing Attention Is All You Need", "extends Show, Attend
    and Tell"): three or more
    words, most of them capitalised, the rest small words; not at the start of a sentence, where any word is."""
    out = []
    n = len(toks)
    # "TACL and Computational Linguistics": names the lexicon knows, joined by small words, are those names
    named = {k for m in lexicon().matches(toks, ("venue", "org")) for k in range(m.first, m.last + 1)}
    papers = {k for m in lexicon().matches(toks, ("paper",)) for k in range(m.first, m.last + 1)}
    i = 0
    while i < n:
        t = toks[i]
        sentence_start = (i == 0 and not _heads_a_question_on_it(toks)) or (i > 0 and toks[i - 1].text in _SENTENCE_END)
        if sentence_start or not (t.text[:1].isupper() and t.is_word):
            i += 1
            continue
        j = i
        caps = 1
        while j + 1 < n:
            nxt = toks[j + 1]
            if nxt.is_word and nxt.text[:1].isupper():
                caps += 1
            elif nxt.text == ":" or (
                # "Prefix-Tuning at EMNLP": a small word before a venue's name ends the title
                nxt.is_word and nxt.low in _TITLE_SMALL and j + 2 < n and toks[j + 2].is_word and j + 2 not in named
            ):
                pass
            elif nxt.text == "," and j + 2 < n and toks[j + 2].text[:1].isupper() and j + 2 not in named:
                pass  # "Show, Attend and Tell": a comma between capitalised words of one title
            else:
                break
            j += 1
        while j > i and toks[j].low in _TITLE_SMALL and not toks[j].text[:1].isupper():
            j -= 1
        words = j - i + 1
        given = word_set("given_names")
        people = any(toks[k].low in given and k + 1 <= j and _capitalised(toks[k + 1]) for k in range(i, j + 1))
        after_by = i > 0 and toks[i - 1].low in ("by", "with", "and")
        # "Carnegie Mellon University", "Allen Institute for AI": an organisation's name, not a title
        organisation = words <= 6 and any(toks[k].low in _ORG_WORDS for k in range(i, j + 1))
        organisation = organisation or all(
            k in named for k in range(i, j + 1) if toks[k].is_word and toks[k].low not in _TITLE_SMALL
        )
        # "Deep Ensembles and MC dropout": known papers' names joined by small words are those papers
        organisation = organisation or all(
            k in papers for k in range(i, j + 1) if toks[k].is_word and toks[k].low not in _TITLE_SMALL
        )
        # two capitalised words of the field ("Pointer Networks") are a title too; names ("Yejin Choi") are not
        # (a field's own term in capitals, "Machine Translation", stays the subject's words)
        two_words = (
            words == 2
            and caps == 2
            and all(toks[k].low in corpus_words() for k in (i, j))
            and not starts_a_term(toks[i].low, toks[j].low)
        )
        long_enough = (words >= 3 and caps >= 3) or two_words
        if long_enough and caps >= 0.5 * words and not people and not after_by and not organisation:
            title = text[toks[i].start : toks[j].end]
            out.append(_span("title", text, toks[i].start, toks[j].end, title, "title case"))
        i = j + 1
    return out


_SPAN_OF_ENTRY: dict[str, SpanKind] = {
    "venue": "venue", "org": "org", "paper": "paper", "type": "type", "pubkind": "pubkind", "format": "format",
}  # fmt: skip


def _modifies_a_noun(toks: list[Token], last: int) -> bool:
    """A kind word right before a noun of the field that is no word of asking ("survey respondents", not "survey
    papers", "surveys covering", "surveys summarizing")."""
    if last + 1 >= len(toks) or not toks[last + 1].is_word:
        return False
    w = toks[last + 1].low
    return (
        w in corpus_words()
        and w not in word_set("request_words") | ENGLISH_STOPWORDS
        and not w.endswith(("ing", "ed"))
        and not lexicon().matches([toks[last + 1]])
    )


def _lexicon_spans(text: str, toks: list[Token], known_venues: list[str]) -> list[Span]:
    out = []
    for m in lexicon().matches(toks):
        e = m.entry
        kind = _SPAN_OF_ENTRY[e.kind]
        if kind == "type" and m.first > 0 and _subject_compound(toks[m.first - 1].low, toks[m.first].low):
            continue  # "customer reviews": the subject's noun
        if kind == "type" and _modifies_a_noun(toks, m.last):
            # "survey respondents", "corpus linguistics": a kind word naming the subject's thing, read whole
            words = text[toks[m.first].start : toks[m.last + 1].end]
            out.append(_tok_span("term", text, toks, m.first, m.last + 1, words.lower(), "kind word as a modifier"))
            continue
        value: object = e.label
        if e.kind == "paper":
            value = {"name": e.label, "titles": list(e.row.get("titles", ())), "weak": lexicon().is_weak(e)}
        last = m.last
        if e.kind == "org":
            # "typed": the organisation's name as written, without its unit ("Stanford" of "the Stanford NLP group")
            typed = text[toks[m.first].start : toks[m.last].end]
            value = {"label": e.label, "forms": list(e.row.get("forms", ())), "typed": typed}
            last = _with_unit(toks, last)
        out.append(_tok_span(kind, text, toks, m.first, last, value, f"lexicon:{e.kind}:{e.label}"))
    if known_venues:  # venue names this source holds beyond the lexicon (typed as they are written there)
        names = {v.lower(): v for v in known_venues if len(v) >= 3}
        for i, t in enumerate(toks):
            if t.text.lower() in names and t.text[:1].isupper():
                out.append(_tok_span("venue", text, toks, i, i, names[t.text.lower()], "source venue"))
    return out


_ORG_UNITS = frozenset("group groups lab labs team teams institute center centre".split())


def _with_unit(toks: list[Token], last: int) -> int:
    """ "the Stanford NLP group", "the Berkeley AI lab": an organisation's unit, up to two acronyms then its noun, is
    the organisation (not a subject "NLP group")."""
    k = last + 1
    while k < len(toks) and k - last <= 2 and toks[k].is_word and toks[k].text.isupper():
        k += 1
    return k if k < len(toks) and toks[k].low.removesuffix("'s") in _ORG_UNITS else last


def _time_spans(text: str, toks: list[Token]) -> list[Span]:
    out = []
    for p in periods(toks):
        span = _tok_span("time", text, toks, p.first, p.last, None, f"time:{p.rule}")
        note = p.note.replace("{phrase}", f"“{span.text}”") if p.note else ""
        span.value = {**p.kept(), "rule": p.rule, "excluded": p.excluded, "note": note}
        out.append(span)
    return _restated_periods(out)


_BOUNDS = ("year_min", "year_max")


def _restated_periods(spans: list[Span]) -> list[Span]:
    """A vague period restated in years ("the last few years, say 2021 on") means the years: the relative span
    takes the explicit one's bounds, so whichever of the two a reader looks at says the same."""

    def bounds(s: Span) -> tuple[str, ...]:
        return tuple(k for k in _BOUNDS if s.value.get(k) is not None)

    explicit = [s for s in spans if s.value.get("rule") != "relative" and not s.value.get("excluded") and bounds(s)]
    for s in spans:
        if s.value.get("rule") != "relative" or s.value.get("excluded"):
            continue
        same = next((e for e in explicit if bounds(e) == bounds(s)), None)
        if same is not None:
            s.value = {**s.value, **{k: same.value[k] for k in _BOUNDS if k in same.value}}
    return spans


def _refs(text: str, toks: list[Token], state: State) -> list[Span]:
    """Results named on the list: "#3", "number 7", "result 3", "the third one", "the last one", "the second and
    fifth", "1st and last", "the bottom half"."""
    out = []
    low = [t.low for t in toks]
    for i in range(len(low) - 1):
        # "ditch the bottom half", "keep the top half": half of the list on screen, from its head or its end
        of_something = i + 2 < len(low) and low[i + 2] == "of"  # "the second half of the 90s" is a period
        if (
            low[i + 1] == "half"
            and low[i] in ("top", "first", "upper", "bottom", "second", "last", "lower")
            and not (of_something)
        ):
            n, head = state.listed, low[i] in ("top", "first", "upper")
            if n >= 2:
                picks = list(range(1, n // 2 + 1)) if head else list(range(n // 2 + 1, n + 1))
                out.append(_tok_span("ref", text, toks, i, i + 1, picks, "half of the list"))
    ordinal = {**_ORDINALS, "last": state.listed, "final": state.listed, "penultimate": max(state.listed - 1, 0)}
    ordinal.pop("top")
    for i, w in enumerate(low):
        # a run of ordinals joined by "and" / "," names several results ("the second and fifth ones")
        if w in ordinal and (i == 0 or low[i - 1] in ("the", "and", ",", "&")) and state.listed:
            j, picks = i, [ordinal[w]]
            while j + 2 < len(low) and low[j + 1] in ("and", ",", "&", "or"):
                k = j + 3 if low[j + 2] == "the" and j + 3 < len(low) else j + 2  # "the fourth and the ninth"
                if low[k] not in ordinal:
                    break
                j = k
                picks.append(ordinal[low[j]])
            if j > i:
                end = j + 1 if j + 1 < len(low) and low[j + 1] in _REF_NOUNS else j
                start = i - 1 if i > 0 and low[i - 1] == "the" else i
                out.append(_tok_span("ref", text, toks, start, end, picks, "ordinals"))
                continue
        if (span := _range_in_words(low, i, state.listed)) is not None:  # "1 through 4", "#2 to #5"
            out.append(_tok_span("ref", text, toks, i, i + 2, list(range(span[0], span[1] + 1)), "range in words"))
        elif (
            state.listed
            and i > 0
            and low[i - 1] == "from"
            and w.lstrip("#").isdigit()
            and 1 <= int(w.lstrip("#")) <= state.listed
            and low[i + 1 : i + 2] in (["onwards"], ["onward"], ["on"], ["down"])
        ):  # "drop everything from 6 onwards": to the end of the list
            out.append(
                _tok_span(
                    "ref", text, toks, i - 1, i + 1, list(range(int(w.lstrip("#")), state.listed + 1)), "from n on"
                )
            )
        elif w.startswith("#") and w[1:].isdigit():
            out.append(_tok_span("ref", text, toks, i, i, [int(w[1:])], "hash"))
        elif w in _NUMBER_SHORT and i + 2 < len(low) and low[i + 1] == "." and low[i + 2].isdigit():
            out.append(_tok_span("ref", text, toks, i, i + 2, [int(low[i + 2])], "number abbreviated"))
        elif (short := w.partition("."))[0] in _NUMBER_SHORT and short[1] and short[2].isdigit():
            out.append(_tok_span("ref", text, toks, i, i, [int(short[2])], "number abbreviated"))
        elif (m := re.fullmatch(r"#?(\d{1,2})-#?(\d{1,2})", w)) and state.listed and int(m.group(1)) < int(m.group(2)):
            out.append(_tok_span("ref", text, toks, i, i, list(range(int(m.group(1)), int(m.group(2)) + 1)), "range"))
        elif (
            w in _NUMBER_NOUNS
            and i + 1 < len(low)
            and (low[i + 1].isdigit() or (w not in ("no", "nr") and low[i + 1] in NUMBER_WORDS))
        ):  # "number 7", "result 3", "number seven", "result five" ("no one" is nobody)
            n = int(low[i + 1]) if low[i + 1].isdigit() else NUMBER_WORDS[low[i + 1]]
            out.append(_tok_span("ref", text, toks, i, i + 1, [n], "noun number"))
        elif w in _ORDINALS or w in ("last", "final", "bottom", "penultimate"):
            j = i + 1
            if j < len(low) and low[j] in _REF_NOUNS:
                n = ordinal.get(w, state.listed) if w != "top" else 1
                if w == "top" and (low[j] not in _ONE_NOUNS or i == 0 or low[i - 1] != "the"):
                    continue  # "top papers" are the best ones; "the top result" is #1
                start = i - 1 if i > 0 and low[i - 1] == "the" else i
                out.append(_tok_span("ref", text, toks, start, j, [n] if n else [], "ordinal"))
            elif (
                (w in _ORDINALS or (w in ("last", "final", "penultimate") and state.listed))
                and w != "top"
                and i > 0
                and low[i - 1] == "the"
                and (j >= len(low) or not low[j].isalpha() or _after_ref(low, j))
                and (j >= len(low) or _number(low[j]) is None)  # "the first 5": a count (``_counts``)
            ):
                out.append(_tok_span("ref", text, toks, i - 1, i, [ordinal[w]], "ordinal alone"))
    return out


def _counts(text: str, toks: list[Token]) -> list[Span]:
    """ "30 results", "top 20", "give me 50", "10 more"; and citation floors: "100+ citations", "cited over 20 times",
    "at least 1000 citations"."""
    out = []
    low = [t.low for t in toks]
    for i, w in enumerate(low):
        n = _number(w)
        if n is None or re.fullmatch(r"(?:1[89]\d\d|20\d\d)\+?", w):
            continue  # a year ("2020", "2020+") is the time grammar's
        nxt = low[i + 1] if i + 1 < len(low) else ""
        nxt2 = low[i + 2] if i + 2 < len(low) else ""
        prev = low[i - 1] if i > 0 else ""
        prev2 = low[i - 2] if i > 1 else ""
        # "the highly cited ones, say 50+", "well cited only, at least 100": after words of citing, a number with
        # no noun of its own that says "or more" is how many citations
        said_cited = any(low[k] in ("cited", "citations", "citation") for k in range(max(0, i - 6), i))
        floor = w.endswith("+") or nxt == "+" or (nxt == "or" and nxt2 in ("more", "above")) or prev == "least"
        own_noun = _COUNT_NOUNS | _CITES_NOUNS
        if said_cited and floor and nxt not in own_noun and nxt2 not in own_noun:
            start = i - 2 if prev == "least" and prev2 == "at" else i
            end = i + 2 if nxt == "or" else i + (nxt == "+")
            out.append(_tok_span("cites", text, toks, start, end, n, "citation floor after cited"))
            continue
        # "50 or more citations": the noun after the "or more"
        after_or_more = low[i + 3] if nxt == "or" and nxt2 in ("more", "above", "over") and i + 3 < len(low) else ""
        if (
            nxt in _CITES_NOUNS
            or (nxt in ("+", "or") and nxt2 in _CITES_NOUNS)
            or w.endswith("+")
            and nxt in _CITES_NOUNS
            or after_or_more in _CITES_NOUNS
        ):
            start = i
            if prev in ("least", "than", "over", "above") or prev == "cited":
                start = i - 1
                if prev2 in ("at", "more", "cited", "over", "fewer", "less"):
                    start = i - 2
            while start > 0 and low[start - 1] in ("cited", "cites", "citations", "with", "having", "has", "have"):
                start -= 1  # "papers cited at least 1000 times", "with 100+ citations"
            end = i + 1 if nxt in _CITES_NOUNS else i + 3 if after_or_more in _CITES_NOUNS else i + 2
            if end + 1 < len(low) and low[end] == "or" and low[end + 1] in ("more", "above"):
                end += 2
            # "more than 100" keeps 101 and up; "fewer than 50" is what goes, so 50 and up stay
            strict = prev in ("than", "over", "above") and prev2 not in ("at", "fewer", "less")
            out.append(_tok_span("cites", text, toks, start, end, n + 1 if strict else n, "citation floor"))
        elif nxt == "or" and nxt2 == "so":  # "a longer list, 25 or so": about that many
            out.append(_tok_span("count", text, toks, i, i + 2, {"k": n}, "n or so"))
        elif nxt in ("more",) and nxt2 not in _CITES_NOUNS:
            out.append(_tok_span("count", text, toks, i, i + 1, {"extra": n}, "n more"))
        elif prev in ("top", "first") and nxt in _COUNT_NOUNS:  # "the first 4 papers"
            out.append(_tok_span("count", text, toks, i - 1, i + 1, {"k": n}, "top n"))
        elif (
            nxt in _COUNT_NOUNS
            or (nxt and nxt2 in _COUNT_NOUNS and nxt in ("more", "best", "top", "most", "new"))
            or (
                nxt == "most" and i + 3 < len(low) and low[i + 3] in _COUNT_NOUNS  # "10 most cited papers"
            )
        ):
            out.append(_tok_span("count", text, toks, i, i + 1, {"k": n}, "n results"))
        elif (
            (prev in _FETCH_VERBS or (prev in ("me", "us") and prev2 in _FETCH_VERBS))
            and (
                not nxt.isalpha()
                or nxt in ("instead", "please", "now", "then", "rather", "this", "only")  # "show 5 only"
                or (nxt == "of" and nxt2 in ("them", "these", "those", "the"))  # "show me 25 of them"
            )
            and n <= 500
            and not (nxt in (",", "&") and _number(nxt2) is not None)  # "I want 2, 4 and 9": results, not a size
        ):
            out.append(_tok_span("count", text, toks, i - 1, i, {"k": n}, "show n"))
        elif (
            (prev in ("just", "only") or (prev == "to" and prev2 in ("down", "it", "that")))
            and not nxt.isalpha()
            and not (nxt in (",", "&") and _number(nxt2) is not None)  # "keep just 1, 4, 7": results, not a size
        ):
            out.append(_tok_span("count", text, toks, i - 1, i, {"k": n}, "just n"))
        elif (nxt in ("is", "are", "will", "would", "should") and nxt2 in _ENOUGH) or (
            prev == "most" and prev2 == "at" or prev == "than" and prev2 == "more" and i > 2 and low[i - 3] == "no"
        ):
            out.append(_tok_span("count", text, toks, i, i, {"k": n}, "n is enough"))  # "5 is enough", "at most 5"
        elif (
            prev in _HEDGED
            and n <= 500
            and _SIZE_WORDS & set(low[max(0, i - 5) : i - 1])
            and not nxt.isalpha()
            and prev2 not in ("more", "less")  # "more like 3": that result, not a size
        ):
            # "fewer results, like 5", "a shorter list, around 8": how many, said loosely after asking for a size
            out.append(_tok_span("count", text, toks, i - 1, i, {"k": n}, "about n"))
        elif prev == "next" and n <= 500:
            out.append(_tok_span("count", text, toks, i - 1, i, {"extra": n}, "next n"))
        elif prev in ("last", "bottom", "final") and n <= 50:
            out.append(_tok_span("count", text, toks, i - 1, i, {"last": n}, "last n"))
        elif prev in ("top", "first") or (prev2 == "make" and prev in ("it", "that")):
            start = i - 1 if prev in ("top", "first") else i - 2
            out.append(_tok_span("count", text, toks, start, i, {"k": n}, "top n"))
    return out


_ENOUGH = frozenset("enough plenty sufficient do suffice".split())
_HEDGED = frozenset("like maybe perhaps around about roughly approximately approx say ~".split())
_SIZE_WORDS = frozenset("fewer less shorter smaller longer bigger more trim cut down reduce".split())


def _number(w: str) -> int | None:
    w = w.rstrip("+")
    if w.isdigit() and len(w) <= 5:
        return int(w)
    if m := re.fullmatch(r"(\d{1,3}(?:\.\d)?)k", w):  # "1k+ citations", "2.5k"
        return int(float(m.group(1)) * 1000)
    return NUMBER_WORDS.get(w)


def _nums(text: str, toks: list[Token]) -> list[Span]:
    """Bare numbers (not years): result numbers, option numbers or counts, as the act decides."""
    out = []
    low = [t.low for t in toks]
    for i, t in enumerate(toks):
        w = t.low
        replaced = low[max(0, i - 2) : i] in (["rather", "than"], ["instead", "of"])  # "30 rather than 10"
        judged = low[i + 1 : i + 4] in (["is", "too", "many"], ["is", "too", "few"], ["are", "too", "many"])
        if w.isdigit() and len(w) <= 3 and not replaced and not judged:  # ("10 is too many, give me 4": a size)
            out.append(_tok_span("ref", text, toks, i, i, [int(w)], "bare number"))
    return out


# --- references written as papers cite them, people, words written like a name ---------------------------------
_PARTICLES = frozenset("van von de der den di da du le la del dos al el bin".split())


def word_table(name: str) -> dict[str, str]:
    """A table of words.json ("typos", "contractions")."""
    return dict(data_json("words.json")[name])


@lru_cache(maxsize=1)
def vocabulary() -> frozenset[str]:
    """Words that are right as they are (``data/vocabulary.txt``, the stop words, given names)."""
    from pilot.reading.lexicon import data_file
    from pilot.text import ENGLISH_STOPWORDS

    listed = (w.strip() for w in data_file("vocabulary.txt").splitlines() if w.strip() and not w.startswith("#"))
    return frozenset(listed) | ENGLISH_STOPWORDS | word_set("given_names") | word_set("reactions")


def _capitalised(t: Token) -> bool:
    """ "Manning", "Fei-Fei", "Li's", "O'Connor": a word written as a name."""
    core = t.text.removesuffix("'s").replace("-", "").replace("'", "")
    return t.text[:1].isupper() and core[1:2].islower() and core.isalpha()


def _paper_names(words: list[str]) -> set[str]:
    """Those of ``words`` the lexicon knows as a paper's name ("TruthfulQA", "BERT")."""
    return {w for w in words if lexicon().paper_titles(w)}


def _a_persons_name(first: Token, last: Token) -> bool:
    """ "Sergey Levine": a given name or a capitalised word, then a family name authors have."""
    return _capitalised(first) and (first.low in word_set("given_names") or last.text in family_names())


def _cited(text: str, toks: list[Token]) -> list[Span]:
    """ "Sutskever et al. 2014", "Collins (1999)", "Och and Ney 2003", "Mikolov et al., 2013"."""
    out = []
    low = [t.low for t in toks]
    not_authors = word_set("not_first_authors")
    for i, t in enumerate(toks):
        if not re.fullmatch(r"(?:1[89]|20)\d\d[a-z]?", t.low):
            continue
        bracketed = i >= 2 and low[i - 2] == "(" and low[i + 1 : i + 2] == [")"]
        if bracketed and toks[i - 1].text.islower() and _family_name(toks[i - 1]):
            # "deep sets (zaheer 2017)": a family name and a year in brackets, however it is typed
            value = {"authors": [toks[i - 1].text.capitalize()], "year": int(t.low[:4])}
            out.append(_tok_span("cited", text, toks, i - 1, i + 1, value, "author year"))
            continue
        j = i - 1
        if j >= 0 and low[j] == "(" and i + 1 < len(low) and low[i + 1] == ")":
            end, j = i + 1, j - 1
        else:
            end = i
        if j >= 0 and low[j] == ",":
            j -= 1
        if j >= 0 and low[j] == ".":
            j -= 1
        et_al = j >= 1 and low[j] == "al" and low[j - 1] == "et"
        if et_al:
            j -= 2
        names_end = j
        if (
            et_al
            and j >= 0
            and toks[j].text.isalpha()
            and toks[j].text.islower()
            and low[j] not in not_authors
            and low[j] not in ENGLISH_STOPWORDS
        ):
            # "mikolov et al 2013": "et al." says the word before it is a surname, however it is typed
            value = {"authors": [toks[j].text.capitalize()], "year": int(t.low[:4])}
            out.append(_tok_span("cited", text, toks, j, end, value, "author year"))
            continue

        while j >= 0 and (_capitalised(toks[j]) or low[j] in _PARTICLES or low[j] in ("and", "&", ",")):
            j -= 1
        first = j + 1
        # ("The Collins 2002 paper" opening a message: the article is capitalised, and no author)
        while first <= names_end and (not _capitalised(toks[first]) or low[first] in ("the", "a", "an")):
            first += 1
        if first > names_end or low[first] in not_authors or low[names_end] in not_authors:
            continue
        if lexicon().matches(toks[first : names_end + 1], ("venue",)):
            continue  # "CoRL 2022", "ACL 2010": a venue's year, not a paper cited by its authors
        surnames = [x.text for x in toks[first : names_end + 1] if _capitalised(x)]
        after = low[end + 1 : end + 3]
        period = bool(after) and (
            after[0] in ("onward", "onwards", "forward", "+")
            or after[0] == "on"
            and (len(after) == 1 or not after[1].isalpha())
            or after[0] in ("and", "or")
            and after[1:] in (["later"], ["after"], ["newer"], ["beyond"], ["up"])
        )
        if end == i and not et_al and (period or not set(surnames) - _paper_names(surnames)):
            continue  # "building on TruthfulQA, 2023 onward": a paper's name, then a period
        value = {"authors": surnames, "year": int(t.low[:4])}
        out.append(_tok_span("cited", text, toks, first, end, value, "author year"))
    return out


def _bracketed_authors(text: str, toks: list[Token]) -> list[Span]:
    """ "(Vinyals et al.)", "(Och and Ney)": authors in brackets with no year still cite a paper (the year-less
    form of "(Vinyals et al., 2015)"), and the words just before the brackets name it ("Show and Tell (Vinyals et
    al.)"): the name is kept as a span of its own, the brackets as who wrote it."""
    out: list[Span] = []
    low = [t.low for t in toks]
    n = len(toks)
    for i in range(1, n):
        if low[i] != "(":
            continue
        close = next((k for k in range(i + 1, min(i + 8, n)) if low[k] == ")"), None)
        if close is None:
            continue
        inner = [k for k in range(i + 1, close) if low[k] not in (".", ",")]
        et_al = len(inner) >= 3 and low[inner[-2]] == "et" and low[inner[-1]] == "al"
        names = inner[:-2] if et_al else inner
        if not names or not all(_capitalised(toks[k]) or low[k] in ("and", "&") or low[k] in _PARTICLES for k in names):
            continue
        surnames = [toks[k].text for k in names if _capitalised(toks[k])]
        if (
            not surnames
            or not (et_al or len(surnames) == 2)
            or {low[k] for k in names if low[k] not in ("and", "&")} & word_set("not_first_authors")
        ):
            continue  # "(Och and Ney)", "(He et al.)"; not "(ACL)" or "(Tsinghua)"
        value = {"authors": surnames, "year": None}
        out.append(_tok_span("cited", text, toks, i + 1, close - 1, value, "authors"))
        # the title before the brackets, typed as a name: capitalised words joined by small ones, back to the start
        j = i - 1
        while j >= 0 and (toks[j].text[:1].isupper() or (low[j] in _TITLE_SMALL and j > 0)) and toks[j].is_word:
            j -= 1
        first = j + 1
        while first < i and not toks[first].text[:1].isupper():
            first += 1
        if first < i and (first == 0 or toks[first - 1].text in _SENTENCE_END or low[first - 1] in (":", "-")):
            name = text[toks[first].start : toks[i - 1].end]
            out.append(_tok_span("name", text, toks, first, i - 1, name, "named with its authors"))
    return out


def _people(text: str, toks: list[Token]) -> list[Span]:
    """Names of people: two or three capitalised words with a known given name first ("Yejin Choi", "Christopher D.
    Manning"), a possessive capitalised pair ("Percy Liang's"), or the words after "by" ("by Manning", "by dan
    klein", "by Pennington or Socher")."""
    out = []
    given = word_set("given_names")
    not_names = word_set("not_names")
    low = [t.low for t in toks]
    n = len(toks)
    for i in range(n):
        # "A. Turing", "J.R. Smith": initials and a full stop before a capitalised surname start a name too
        lead = (
            re.fullmatch(r"[A-Z](?:\.[A-Z])*", toks[i].text) is not None
            and i + 2 < n and toks[i + 1].text == "." and _capitalised(toks[i + 2])
        )  # fmt: skip
        if not (_capitalised(toks[i]) or lead) or (low[i] in not_names and not lead):
            continue
        j = i + 1
        while (
            j < n
            and j - i < 5
            and not toks[j - 1].text.endswith("'s")  # "Sergey Levine's CoRL papers": a possessive ends a name
            and (
                _capitalised(toks[j])
                or re.fullmatch(r"[A-Z]\.?", toks[j].text)
                or (toks[j].text == "." and re.fullmatch(r"[A-Z]", toks[j - 1].text))
                or low[j] in _PARTICLES
            )
            and (low[j] not in not_names or re.fullmatch(r"[A-Z]", toks[j].text))  # "Noah A. Smith"
        ):
            j += 1
        while j - 1 > i and not _capitalised(toks[j - 1]):
            j -= 1  # a name ends on a surname, not on an initial
        possessive = toks[j - 1].text.endswith("'s") or (j < n and toks[j].text in ("'s", "'"))
        initial = lead or any(re.fullmatch(r"[A-Z]", toks[k].text) for k in range(i + 1, j))  # "Michael I. Jordan"
        # "Mark Johnson", "Will Knight": a first name that is also an English word, before a surname that is none
        word_given = low[i] in word_set("word_given_names") and low[j - 1].removesuffix("'s") not in corpus_words()
        if j - i >= 2 and (low[i] in given or word_given or possessive or initial):
            name = text[toks[i].start : toks[j - 1].end].removesuffix("'s")
            out.append(_tok_span("person", text, toks, i, j - 1, name, "name"))
    words_known = corpus_words()
    for i in range(n - 1):
        # "kaiming he", "yoav goldberg's papers": a first name that is no English word, typed in lower case
        g = low[i]
        if g in given and g not in words_known and toks[i].text.islower() and toks[i + 1].text.isalpha() is not None:
            surname = toks[i + 1]
            if surname.text.removesuffix("'s").replace("-", "").isalpha() and surname.low not in not_names:
                name = text[toks[i].start : surname.end].removesuffix("'s")
                out.append(_tok_span("person", text, toks, i, i + 1, name, "lower-case name"))
        # "Fei-Fei Li", "Jean-Luc Godard": a hyphenated first name ("Skip-Thought Vectors" is made of words: a title)
        if (
            "-" in toks[i].text
            and _capitalised(toks[i])
            and _capitalised(toks[i + 1])
            and all(part[:1].isupper() for part in toks[i].text.split("-"))
            and not all(part.lower() in words_known for part in toks[i].text.split("-"))
            and toks[i + 1].low.removesuffix("'s") not in words_known
        ):
            name = text[toks[i].start : toks[i + 1].end].removesuffix("'s")
            out.append(_tok_span("person", text, toks, i, i + 1, name, "hyphenated first name"))
    for i in range(n - 1):
        # "Timnit Gebru": two capitalised words no title of the corpus uses in lower case
        a, b = toks[i], toks[i + 1]
        if (
            _capitalised(a)
            and _capitalised(b)
            and not a.text.endswith("'s")  # "Bengio's NeurIPS papers": a possessive ends a name
            and low[i] not in words_known
            and b.low.removesuffix("'s") not in words_known
            and low[i] not in not_names
            and b.low not in not_names
        ):
            out.append(
                _tok_span("person", text, toks, i, i + 1, text[a.start : b.end].removesuffix("'s"), "unknown name")
            )
    surnames = word_set("zh_surnames")
    for i, t in enumerate(toks):
        # "周杰在CVPR 2020发表的论文", "李飞飞的研究方向": a Chinese name (a family name, one or two more characters)
        if t.is_cjk and 2 <= len(t.text) <= 4 and t.text[0] in surnames:
            out.append(_tok_span("person", text, toks, i, i, t.text, "Chinese name"))
    # where the run of capitalised words and joiners after each word ends, and the next "and" / "or" after it (one
    # pass from the right: a long paste of capitalised words stays linear)
    run_end, next_join = list(range(n)), [n] * (n + 1)
    for i in range(n - 2, -1, -1):
        if _capitalised(toks[i + 1]) or low[i + 1] in ("and", "or", "&", ","):
            run_end[i] = run_end[i + 1]
        next_join[i] = i + 1 if low[i + 1] in ("and", "or", "&") else next_join[i + 1]
    for i in range(n - 1):
        # "What did Mikolov publish in 2013?": a capitalised word no title uses, with a verb of writing
        t = toks[i]
        writing = {"publish", "published", "write", "wrote", "written", "author", "authored", "co-author",
                   "co-authored", "coauthored", "co-wrote", "penned"}  # fmt: skip
        near = {low[k] for k in range(max(0, i - 3), min(n, i + 3)) if k != i}
        if (
            _capitalised(t) and low[i] not in corpus_words() and low[i] not in not_names and near & writing
            and not _looks_like_name(t)  # "who wrote Grad-CAM?": a paper's name, written as one
        ):  # fmt: skip
            out.append(_tok_span("person", text, toks, i, i, t.text.removesuffix("'s"), "surname with a verb"))
            continue
        # "anything Koehn or Long wrote": capitalised words joined by and / or right before a verb of writing
        k = run_end[i]
        joined = k > i and next_join[i] <= k
        if (
            joined and i > 0 and _capitalised(t) and low[i] not in not_names and k + 1 < n and low[k + 1] in writing
            and not _named_otherwise(t)
        ):  # fmt: skip
            out.append(_tok_span("person", text, toks, i, i, t.text.removesuffix("'s"), "names before a verb"))
    for i in range(n - 1):
        # "only Bengio's papers", "Hinton's top cited work": a surname's papers, a few lower-case words between
        if not (toks[i].text.endswith("'s") and _capitalised(toks[i])):
            continue
        between = 0
        while i + 1 + between < n - 1 and between < 3 and toks[i + 1 + between].text.replace("-", "").islower():
            if low[i + 1 + between] in _WORK_NOUNS:
                break
            between += 1
        if low[i + 1 + between] in _WORK_NOUNS:
            out.append(_tok_span("person", text, toks, i, i, toks[i].text.removesuffix("'s"), "possessive surname"))
        elif toks[i + 1].text in _OPENING_QUOTES or lexicon().matches(toks[i + 1 : i + 4], ("paper",)):
            # "Pang and Lee's 'Thumbs up?'", "Mikolov's word2vec": who wrote the paper named next
            out.append(_tok_span("person", text, toks, i, i, toks[i].text.removesuffix("'s"), "author of a paper"))
    for i in range(n - 2):
        # "get rid of the Hinton papers", "no more Koehn stuff": a family name between a determiner and the work
        named = _capitalised(toks[i + 1]) and _family_name(toks[i + 1]) and not _named_otherwise(toks[i + 1])
        works = low[i + 2] in _WORK_NOUNS or low[i + 2] in ("ones", "stuff")
        if low[i] in _BEFORE_THE_WORK and named and works and low[i + 1] not in corpus_words():
            out.append(_tok_span("person", text, toks, i + 1, i + 1, toks[i + 1].text, "the A papers"))
    for i in range(1, n - 2):
        # "anything Manning is an author on", "Socher as a coauthor"
        if _capitalised(toks[i]) and low[i] not in not_names and low[i + 1] in ("is", "as", "was"):
            k = i + 2 + (low[i + 2] in ("an", "a", "the", "one", "first", "last"))
            if k < n and low[k] in ("author", "coauthor", "co-author", "authors", "writer"):
                out.append(_tok_span("person", text, toks, i, i, toks[i].text, "before 'is an author'"))
    for i, w in enumerate(low):
        if w not in ("by", "author", "authors", "authored", "coauthor", "co-author", "with"):
            continue
        j = i + 1
        while j < n:
            k = j
            while (
                k < n
                and k - j < 3
                and low[k] not in not_names
                and (
                    _capitalised(toks[k])
                    or (low[k] in given and k == j)
                    or (k > j and low[k - 1] in given and toks[k].text.isalpha() and low[k] not in ENGLISH_STOPWORDS)
                    or (k == j and w == "by" and toks[k].text.isalpha() and low[k] not in corpus_words())
                    or (k == j and toks[k].is_cjk and 2 <= len(toks[k].text) <= 4)
                )
            ):
                k += 1
            if k == j:
                break
            # "anything with Hinton on it": an author's family name alone, but no word of the field's
            alone = w == "with" and k - j < 2 and low[j] not in given
            if alone and (not _family_name(toks[j]) or low[j] in corpus_words()):
                break
            name = text[toks[j].start : toks[k - 1].end].removesuffix("'s")
            out.append(_tok_span("person", text, toks, j, k - 1, name, f"after '{w}'"))
            if k < n and low[k] in ("or", "and", ",", "&"):
                j = k + 1
                continue
            break
    pairs = _family_pairs(toks, text)
    return out + pairs + _joined_surnames(toks, out + pairs, text)


def _family_pairs(toks: list[Token], text: str) -> list[Span]:
    """ "filter out Socher and Manning": two authors' family names joined by and / or, neither a word of the field
    nor a name the lexicon knows, are people."""
    out = []
    for i in range(len(toks) - 2):
        a, b = toks[i], toks[i + 2]
        if toks[i + 1].low not in ("and", "or", "&"):
            continue
        if all(
            _capitalised(t) and _family_name(t) and t.low.removesuffix("'s") not in corpus_words()
            and not _named_otherwise(t)
            for t in (a, b)
        ):  # fmt: skip
            out.append(_tok_span("person", text, toks, i, i, a.text.removesuffix("'s"), "family names joined"))
            out.append(_tok_span("person", text, toks, i + 2, i + 2, b.text.removesuffix("'s"), "family names joined"))
    return out


def _named_otherwise(t: Token) -> bool:
    """A capitalised word the lexicon knows as a venue, an organisation, a paper or a kind of paper: no person."""
    return bool(lexicon().matches([t], ("venue", "org", "paper", "type")))


def _joined_surnames(toks: list[Token], people: list[Span], text: str) -> list[Span]:
    """ "anything Och or Ney wrote", "Manning and Klein's papers": a capitalised word joined by and / or to a person
    named is a person too (a family name that is also a word, "Och", "Long", is one here), unless the lexicon knows
    it as something else."""
    out = []
    starts = {t.start: k for k, t in enumerate(toks)}
    ends = {t.end: k for k, t in enumerate(toks)}
    not_names = word_set("not_names")
    for p in people:
        first, last = starts.get(p.start), ends.get(p.end)
        if first is None or last is None:
            continue
        for joint, k in ((first - 1, first - 2), (last + 1, last + 2)):
            if not (0 <= k < len(toks) and 0 <= joint < len(toks)) or toks[joint].low not in ("or", "and", "&"):
                continue
            t = toks[k]
            word = t.text.removesuffix("'s")
            if _capitalised(t) and k > 0 and t.low not in not_names and not _named_otherwise(t):
                out.append(_tok_span("person", text, toks, k, k, word, "surname joined to a person"))
    return out


_ORG_WORDS = frozenset(
    "university universities université universität universidad universidade institute institut college school academy "
    "laboratory laboratories lab labs research center centre inc corporation corp foundation polytechnic "
    "polytechnique".split()
)
_ORG_JOINS = frozenset("of at for and de la del di für the".split())


def _orgs(text: str, toks: list[Token]) -> list[Span]:
    """Organisations by their shape: a run of capitalised words holding an organisation word ("University of
    Edinburgh", "Allen Institute for AI", "Google Research"), or a Chinese name ending in 大学, 研究院, …."""
    out = []
    n = len(toks)
    low = [t.low for t in toks]
    i = 0
    while i < n:
        if not (toks[i].text[:1].isupper() and toks[i].is_word):
            i += 1
            continue
        j = i
        while j + 1 < n and (
            (toks[j + 1].text[:1].isupper() and toks[j + 1].is_word)
            or (low[j + 1] in _ORG_JOINS and j + 2 < n and toks[j + 2].text[:1].isupper())
        ):
            j += 1
        start = i
        while i < j and ((i == start == 0 and low[i] in corpus_words()) or low[i] in _ORG_JOINS):
            i += 1  # "Describe Tsinghua University", "Who at CMU …": a sentence's first word is capitalised as one
        named = any(low[k] not in _ORG_WORDS and low[k] not in _ORG_JOINS for k in range(i, j + 1))
        # ("Research on the robustness of …": an organisation word alone names no organisation)
        if named and any(low[k] in _ORG_WORDS for k in range(i, j + 1)):
            out.append(
                _tok_span(
                    "org", text, toks, i, j, {"label": text[toks[i].start : toks[j].end], "forms": []}, "org words"
                )
            )
        i = j + 1
    for m in re.finditer(r"[\u4e00-\u9fff]{2,12}?(?:大学|学院|研究院|研究所|实验室|科学院|公司|集团)", text):
        out.append(_span("org", text, m.start(), m.end(), {"label": m.group(0), "forms": []}, "org words (zh)"))
    return out


# words after which a capitalised unknown word names a paper ("What came before Mamba?", "papers like Glorpnet")
_BEFORE_A_NAME = frozenset(
    "before after since like than of cite cites citing cited on to following extend extends post pre".split()
)


@lru_cache(maxsize=1)
def _name_followers() -> frozenset[str]:
    """Words that follow a paper in the direction cues ("P borrow from", "P descendant"), in their written forms:
    an unknown word before one is the paper ("what did Mamba borrow from?", "mixup descendants")."""
    cues = data_json("cues.json")
    bases = (
        {
            alt
            for label, phrases in cues["cues"].items()
            if label.startswith("dir:")
            for phrase in phrases
            if phrase.split()[0] == "P" and len(phrase.split()) > 1
            for alt in phrase.split()[1].lstrip("?").split("|")
        }
        - {"be", "have", "has", "get"}
        - ENGLISH_STOPWORDS
    )
    forms = {w for w, base in cues["lemmas"].items() if base in bases}
    for b in bases:
        stem = b[:-1] if b.endswith("e") else b
        forms |= {b, b + "s", b + "es", stem + "ed", stem + "ing", b + "d"}
    return frozenset(forms)


def _family_name(t: Token) -> bool:
    """An author's family name as the corpus writes it ("Hinton"), or with its inner capitals ("LeCun": "Lecun")."""
    name = t.text.removesuffix("'s")
    return name in family_names() or name.capitalize() in family_names()


_UNITS = frozenset("d dof k x b m bit bits gb mb tb hz khz fps px p".split())


def _is_measure(word: str) -> bool:
    """A number and its unit ("6D", "4K", "8-bit", "1.5B"), read without a pattern that could backtrack."""
    w = word.lower()
    i = 0
    while i < len(w) and (w[i].isdigit() or w[i] == "."):
        i += 1
    return i > 0 and w[0].isdigit() and w[i:].removeprefix("-") in _UNITS


def _looks_like_name(t: Token) -> bool:
    """Written like a paper's or a model's name: an inner capital or digit ("GloVe", "word2vec", "BERT", "GPT-2")."""
    w = t.text
    if len(w) < 2 or not w[0].isalnum():
        return False
    if "-" in w and w.split("-")[0].isalpha() and w.split("-")[0].islower():
        return False  # "text-to-SQL", "multi-GPU": a compound of the subject, not a name
    if len(w) >= 3 and w.endswith("s") and w[:-1].isalpha() and w[:-1].isupper():
        return False  # "DVDs", "GPUs", "LLMs": the plural of an acronym names things, not one paper
    if _is_measure(w):
        return False  # "6D pose", "4K video", "8-bit", "7B": a number and its unit
    inner = w[1:]
    return (any(c.isupper() for c in inner) and any(c.isalpha() for c in w)) or (
        any(c.isdigit() for c in w) and any(c.isalpha() for c in w)
    )


def _cited_after(toks: list[Token], low: list[str], j: int) -> int:
    """The last token of the authors that cite a work named up to ``j``: "… of Bahdanau et al.", "… (Vinyals et al.,
    NIPS 2015)" (the venue and year there say which paper, not which results)."""
    if low[j + 1] == "(":
        return next((k for k in range(j + 2, min(len(low), j + 16)) if low[k] == ")"), j)
    end = j + 1
    while end + 1 < len(low) and (_capitalised(toks[end + 1]) or low[end + 1] in ("et", "al", ".", "al.", "and", "&")):
        end += 1
    return end


def _names(text: str, toks: list[Token]) -> list[Span]:
    """Words written like a paper's name, and "the X paper" / "the X model" / "Blei's LDA" around one."""
    out = []
    low = [t.low for t in toks]
    kind_nouns = word_set("name_nouns")
    common = word_set("not_names")
    acronyms = word_set("field_acronyms")
    # words of asking, never of a paper's name: "Bengio's most cited paper", "Hinton's most cited model"
    requesting = word_set("request_words") | {"cited"}
    plain = common | requesting | ENGLISH_STOPWORDS
    n = len(toks)
    known = lexicon().matches(toks, ("paper",))
    # "Bengio's NeurIPS papers": a venue, an institution or a kind is never a paper's name
    other = {
        k
        for m in lexicon().matches(toks, ("venue", "org", "type", "pubkind", "format"))
        for k in range(m.first, m.last + 1)
    }
    for m in known:
        # "Wasserstein GAN", "Sparse Transformer": a capitalised word before a known name makes another name
        k = m.first - 1
        if any(o.first <= k and o.last >= m.last for o in known):
            continue  # "Vision Transformer" is a name of its own
        before_it = k > 0 and toks[k - 1].text not in _SENTENCE_END and _capitalised(toks[k])
        if before_it and low[k] not in common | ENGLISH_STOPWORDS and low[k] not in word_set("given_names"):
            whole = text[toks[k].start : toks[m.last].end]
            out.append(_tok_span("name", text, toks, k, m.last, whole, "a word before a known name"))
    for i, t in enumerate(toks):
        if (
            _looks_like_name(t)
            and i not in other
            and not (_family_name(t) and not any(m.first <= i <= m.last for m in known))  # "LeCun": a person
            and low[i] not in common
            and low[i].rstrip("s") not in acronyms
            and not re.fullmatch(r"\d+(?:st|nd|rd|th|s)?", low[i])
        ):
            first, last = i, i
            if i > 0 and toks[i - 1].text.endswith("'s") and _capitalised(toks[i - 1]):
                first = i - 1  # "Blei's LDA"
            out.append(
                _tok_span(
                    "name", text, toks, first, last, text[toks[first].start : toks[last].end], "written as a name"
                )
            )
        # "What came before Mamba?", "what came before pointpillars": a word after a direction's word that no
        # title uses in lower case
        elif (
            (_capitalised(t) or (t.text.isalpha() and t.text.islower() and len(t.text) >= 4))
            and i > 0
            and low[i - 1] in _BEFORE_A_NAME
            # "speech recognition that runs on smartwatches": where a method runs, not a paper it builds on
            and not (low[i - 1] == "on" and i > 1 and low[i - 2] in word_set("platform_verbs"))
            and american(low[i]) not in corpus_words()  # "optimisers" is a word, spelt the British way
            and low[i] not in common
            and low[i] not in word_set("given_names")
            and not t.text.endswith("'s")
        ):
            out.append(_tok_span("name", text, toks, i, i, t.text, "capitalised"))
        # "what did Mamba borrow from?", "mixup descendants": an unknown word before a direction's word
        elif (
            i + 1 < n
            and low[i + 1] in _name_followers()
            and low[i] not in _name_followers()
            and (_capitalised(t) or (t.text.isalpha() and t.text.islower() and len(t.text) >= 4))
            and american(low[i]) not in corpus_words()
            and low[i] not in common | ENGLISH_STOPWORDS
            and low[i] not in word_set("given_names")
            and not _family_name(t)
            and i not in other
        ):
            out.append(_tok_span("name", text, toks, i, i, t.text, "before a direction's word"))
        # "Rahimi and Recht's random features paper": the words between the authors' possessive and "paper"
        if t.text.endswith("'s") and _capitalised(t) and low[i].removesuffix("'s") not in common:
            for j in range(i + 2, min(i + 5, n)):
                if low[j] in ("paper", "article") and all(toks[k].is_word and low[k] not in plain
                                                          for k in range(i + 1, j)):  # fmt: skip
                    inner = text[toks[i + 1].start : toks[j - 1].end]
                    out.append(_tok_span("name", text, toks, i + 1, j - 1, inner, "the X paper"))
                    break
            # "Bengio's neural probabilistic language model", "Chiang's hierarchical phrase-based model": a work
            # described in the field's words after its author's possessive is named by the whole phrase
            described_end: int | None = None
            for j in range(i + 1, min(i + 7, n)):
                if not (toks[j].is_word and toks[j].text.islower()) or low[j] in plain:
                    break
                if low[j] in kind_nouns and low[j] not in ("paper", "papers") and j > i + 1:
                    described_end = j  # "Pennington's global vectors model": to its last noun of a kind
            if described_end is not None:
                work = text[toks[i].start : toks[described_end].end]
                out.append(_tok_span("name", text, toks, i, described_end, work, "the author's described work"))
        # "the pointer-generator paper", "the Collins parser", "the transformer architecture"
        if low[i] == "the" and i + 2 < n:
            for j in range(i + 2, min(i + 5, n)):
                if low[j] in kind_nouns and all(toks[k].is_word for k in range(i + 1, j)):
                    # "the pointer-generator paper" names "pointer-generator"; "the Collins parser" is its name
                    last = j - 1 if low[j] in ("paper", "papers", "article", "work", "idea", "method") else j
                    inner = text[toks[i + 1].start : toks[last].end]
                    named = any(_looks_like_name(toks[k]) or toks[k].text[:1].isupper() or "-" in toks[k].text
                                or toks[k].low not in vocabulary() for k in range(i + 1, j))  # fmt: skip
                    # "the mixup paper by Zhang et al.": a paper said with its authors is named, however plain
                    # ("the parsing paper by Zyxwvut" is described by its field, not named)
                    # "… by Zhang et al.", "… of Bahdanau et al.", "… (Vinyals et al., NIPS 2015)"
                    by_authors = j + 2 < n and _capitalised(toks[j + 2]) and (
                        low[j + 1] == "by" or low[j + 1] in ("of", "(") and not any(
                            low[k] in requesting for k in range(i + 1, j)))  # fmt: skip
                    field = any(low[k] in word_set("field_words") for k in range(i + 1, j))
                    named = named or (by_authors and not field)
                    inner_named = {m.entry.kind for m in lexicon().matches(toks[i + 1 : j])}
                    if inner_named & {"venue", "org", "type", "pubkind", "format"}:
                        break  # "the CVPR papers": papers at a venue, not a paper called "CVPR"
                    if all(toks[k].text.islower() for k in range(i + 1, j)) and any(
                        low[k] in _LINKING_PREPOSITIONS for k in range(i + 1, j)
                    ):
                        break  # "the generalizability of pre-trained models": a description, not a model's name
                    if any(re.fullmatch(r"(?:19|20)\d\d", toks[k].text) for k in range(i + 1, j)):
                        break  # "the 2019 paper": a year of the paper on screen, not a paper called "2019"
                    if any(low[k] in _ORDINALS or _number(low[k]) is not None for k in range(i + 1, j)):
                        break  # "the first 4 papers", "the top ten papers": results on screen, counted
                    if low[j] == "papers" and j - i == 3 and _a_persons_name(toks[i + 1], toks[i + 2]):
                        break  # "the Sergey Levine papers": a person's papers, not a paper of that name
                    if (
                        low[j] == "papers"
                        and j - i == 2
                        and _family_name(toks[i + 1])
                        and low[i + 1] not in corpus_words()
                    ):
                        break  # "the Hinton papers": that person's
                    if named and low[i + 1] not in common and low[j - 1] not in common:
                        end = _cited_after(toks, low, j) if by_authors and low[j + 1] != "by" else j
                        out.append(_tok_span("name", text, toks, i, end, inner, f"the X {low[j]}"))
                    break
    return out


# inside a lower-case "the X model" these make X a description ("the robustness of neural models")
_LINKING_PREPOSITIONS = frozenset("of for in on with to from by about".split())

_SETTINGS = frozenset(
    "k limit alpha top_n year_min year_max weight weights method features min_citations venues query".split()
)


_SET_VERBS = frozenset("set change the of increase lower raise decrease reduce bump make".split())
_SET_ARTICLES = frozenset({"the", "of"})


def _steps(text: str, toks: list[Token], state: State) -> list[Span]:
    """Workflow steps and settings named as the workflow names them: an id in backticks, a snake_case name, a
    step of the workflow on screen, a setting ("k", "top_n")."""
    out = []
    names = {s.lower() for s in state.steps}
    for m in re.finditer(r"`([\w.-]{1,60})`", text):
        out.append(_span("step", text, m.start(), m.end(), m.group(1), "backticks"))
    for i, t in enumerate(toks):
        # a step whose id is a word ("top", "filter", "score") is that step only beside "step" / "node"
        beside = {x.low for x in toks[max(0, i - 1) : i + 2]} & {"step", "node", "stage", "steps", "nodes"}
        named = t.low in names and (t.low not in vocabulary() or bool(beside))
        if ("_" in t.text and t.text.strip("_")) or named or ("." in t.text and "_" in t.text):
            out.append(_tok_span("step", text, toks, i, i, t.text, "step name"))
        elif t.low in _SETTINGS and any(
            # "the k", "top_n of": a setting's own name; "the venues" Ghahramani published in is no setting unless
            # a verb sets it ("set the venues to ACL")
            p.low in (_SET_VERBS - _SET_ARTICLES if t.low in vocabulary() else _SET_VERBS)
            for p in toks[max(0, i - 3) : i]
        ):
            out.append(_tok_span("step", text, toks, i, i, t.text, "setting"))
    return out


def _it(text: str, toks: list[Token]) -> list[Span]:
    out = []
    low = [t.low for t in toks]
    for i, w in enumerate(low):
        if w in ("it", "its", "it's"):
            out.append(_tok_span("it", text, toks, i, i, w, "pronoun"))
        elif (
            w in ("this", "that")
            and i + 1 < len(low)
            and low[i + 1].removesuffix("'s") in ("paper", "one", "article", "work")
        ):
            out.append(_tok_span("it", text, toks, i, i + 1, w, "this paper"))
    return out


@lru_cache(maxsize=1)
def _term_index() -> dict[str, list[tuple[str, ...]]]:
    from pilot.reading.lexicon import data_file

    index: dict[str, list[tuple[str, ...]]] = {}
    # (words.json's extra_terms: terms the corpus's titles use too rarely to be counted, added by hand)
    for line in [*data_file("terms.txt").splitlines(), *sorted(word_set("extra_terms"))]:
        if line and not line.startswith("#"):
            # "few shot learning" is "few-shot learning" typed loosely; "fine tuning" is one of its compounds so typed
            compounds = {
                w.replace("-", " ")
                for w in line.split()
                if "-" in w and w.replace("-", "").isalpha() and w.split("-")[0] not in ENGLISH_STOPWORDS
            }  # ("in-context" alone is no term: "put BERT in context")
            for form in {line, line.replace("-", " "), *compounds}:
                words = tuple(form.split())
                index.setdefault(words[0], []).append(words)
    return index


@lru_cache(maxsize=1)
def _term_pairs() -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]:
    """The first two words of the field's terms, both ways: first word -> second words, second -> first words."""
    after: dict[str, set[str]] = {}
    before: dict[str, set[str]] = {}
    for terms in _term_index().values():
        for t in terms:
            if len(t) >= 2:
                after.setdefault(t[0], set()).add(t[1])
                before.setdefault(t[1], set()).add(t[0])
    return ({k: frozenset(v) for k, v in after.items()}, {k: frozenset(v) for k, v in before.items()})


def term_partners(before: str | None, after: str | None) -> frozenset[str]:
    """The words that make a term of the field after ``before`` or before ``after`` ("federated _", "_ learning")."""
    follows, precedes = _term_pairs()
    out: frozenset[str] = frozenset()
    if before is not None:
        out |= follows.get(american(before), frozenset())
    if after is not None:
        out |= precedes.get(american(after), frozenset())
    return out


def starts_a_term(first: str, second: str) -> bool:
    """Whether the field's terms have one that opens with these two words ("federated learning")."""
    return any(t[1:2] == (second,) for t in _term_index().get(american(first), ()))


def american(word: str) -> str:
    """``word`` in the spelling most of the corpus uses ("modelling" -> "modeling"), when that spelling is a corpus
    word; else ``word``."""
    endings = word_table("spelling_endings")
    for n in range(min(len(word) - 3, 7), 2, -1):
        if word[-n:] in endings:
            other = word[:-n] + endings[word[-n:]]
            return other if other in corpus_words() else word
    return word


def _subject_compound(modifier: str, noun: str) -> bool:
    """ "customer reviews", "movie reviews": a kind word that a noun before it makes the subject's own."""
    compounds = lexicon().data.get("subject_compounds", {})
    return any(
        noun in row.get("nouns", ()) and modifier in row.get("modifiers", ())
        for row in compounds.values()
        if isinstance(row, dict)
    )


def _terms(text: str, toks: list[Token]) -> list[Span]:
    """The field's multi-word terms ("mixture of experts", "learning to rank", "topic modelling"), longest at each
    place."""
    out = []
    low = [american(t.low) for t in toks]
    index = _term_index()
    inside = -1  # a term starts after the one before it ends ("few shot learning | for relation extraction")
    for i, w in enumerate(low):
        if i <= inside:
            continue
        best = max((t for t in index.get(w, ()) if tuple(low[i : i + len(t)]) == t), key=len, default=None)
        if best is not None:
            out.append(_tok_span("term", text, toks, i, i + len(best) - 1, " ".join(best), "term"))
            inside = i + len(best) - 1
        elif i + 1 < len(low) and _subject_compound(w, low[i + 1]):
            out.append(_tok_span("term", text, toks, i, i + 1, f"{w} {low[i + 1]}", "subject compound"))
    return out


# --- settling overlaps -----------------------------------------------------------------------------------------

# When two spans cover the same stretch, the kind that says more wins.
_PRIORITY: dict[str, int] = {
    "id": 9, "title": 8, "cited": 7, "time": 6, "cites": 6, "count": 5, "ref": 5, "venue": 4, "org": 4,
    "format": 4, "paper": 3, "type": 3, "pubkind": 3, "person": 2, "name": 1, "it": 1, "option": 1, "term": 0,
    "step": 5,
}  # fmt: skip


def settle(spans: list[Span]) -> list[Span]:
    """Longest first, then earliest, then the kind that says more; a span overlapping a chosen one is dropped."""
    chosen: list[Span] = []
    for s in sorted(spans, key=lambda s: (-s.length, s.start, -_PRIORITY.get(s.kind, 0))):
        if all(s.end <= c.start or s.start >= c.end for c in chosen):
            chosen.append(s)
    return sorted(chosen, key=lambda s: s.start)


def _from_state(text: str, toks: list[Token], state: State) -> list[Span]:
    """Words that point at what the last answer was about: "he", "her work" (the person asked about)."""
    asked = state.asked or {}
    person = asked.get("person")
    if not person:
        return []
    return [
        _tok_span("person", text, toks, i, i, person, "the person asked about")
        for i, t in enumerate(toks)
        if t.low in ("he", "she", "him", "his", "her", "hers")
    ]


def extract(text: str, state: State) -> Extracted:
    toks = tokenize(text)
    candidates = [
        *_ids(text),
        *_titles(text),
        *_title_case(text, toks),
        *_lexicon_spans(text, toks, state.known_venues),
        *_time_spans(text, toks),
        *_refs(text, toks, state),
        *_counts(text, toks),
        *_cited(text, toks),
        *_bracketed_authors(text, toks),
        *_people(text, toks),
        *_orgs(text, toks),
        *_names(text, toks),
        *_it(text, toks),
        *_terms(text, toks),
        *_steps(text, toks, state),
        *_from_state(text, toks, state),
    ]
    settled = settle(candidates)
    # bare numbers only where nothing else claimed them
    taken = [(s.start, s.end) for s in settled]
    for s in _nums(text, toks):
        if all(s.end <= a or s.start >= b for a, b in taken):
            settled.append(s)
    return Extracted(text=text, tokens=toks, spans=sorted(settled, key=lambda s: s.start))
