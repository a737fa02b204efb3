"""The one lexicon (``pilot/data/lexicon.json``): venues, organisations, papers known by a name, Chinese words, paper
types — loaded once, matched as runs of whole words.

Matching follows spaCy's EntityRuler: every entry is a phrase of folded words; all matches are found, and
overlaps are settled by the span engine (longest, then earliest). An entry marked ``cased`` is matched only as
written ("CL" the journal, not "cl"; "MIT", not "mit"), because its folded form is an ordinary word.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from pilot.reading.tokens import Token, fold_word, tokenize, without_possessive
from pilot.text import contains_run, words
from pilot.text import data_json as shared_data_json


def data_file(name: str) -> str:
    return resources.files("pilot.reading").joinpath(f"data/{name}").read_text(encoding="utf-8")


@lru_cache(maxsize=8)
def data_json(name: str) -> Any:
    return json.loads(data_file(name))


@lru_cache(maxsize=1)
def _word_sets() -> dict[str, frozenset[str]]:
    data = data_json("words.json")
    return {k: frozenset(w.lower() for w in v) for k, v in data.items() if isinstance(v, list)}


def word_set(name: str) -> frozenset[str]:
    """A word list of words.json, lower case; here, below the spans, the cues and the time grammar, so that a list
    they share ("leave_out") is read by one function."""
    return _word_sets()[name]


@lru_cache(maxsize=1)
def surnames() -> frozenset[str]:
    """Authors' family names (``data/surnames.txt``): "the Smith paper" names a person, not a paper."""
    return frozenset(w.strip() for w in data_file("surnames.txt").splitlines() if w.strip() and not w.startswith("#"))


@lru_cache(maxsize=1)
def shared_surnames() -> dict[str, list[str]]:
    """Family names many authors share, each with its most published authors (``data/shared_surnames.json``)."""
    names: dict[str, list[str]] = data_json("shared_surnames.json")["names"]
    return names


@lru_cache(maxsize=1)
def corpus_words() -> frozenset[str]:
    """The lower-case words of the corpus's titles and abstracts (``data/vocabulary.txt``)."""
    return frozenset(w.strip() for w in data_file("vocabulary.txt").splitlines() if w.strip() and not w.startswith("#"))


# Chinese words for "before", "after", "since" follow the year or name they are said of ("2015年以来": since 2015,
# "BERT 之后": after BERT), as does "based on" ("在 BERT 的基础上": building on BERT)
_POSTPOSITIONS = frozenset({"before", "after", "since", "building on"})


def _zh_number(written: str, numerals: dict[str, int]) -> int | None:
    """ "三" 3, "十二" 12, "二十" 20, "12" 12 (up to 99)."""
    if written.isdigit():
        return int(written)
    if any(c not in numerals for c in written):
        return None
    values = [numerals[c] for c in written]
    if 10 not in values:
        return values[0] if len(values) == 1 else None
    tens, _, ones = written.partition("十")
    return (numerals[tens] if tens else 1) * 10 + (numerals[ones] if ones else 0)


def _short_forms(label: str) -> list[str]:
    """What people call an institution without its "University" ("Carnegie Mellon", "Johns Hopkins"): names of two
    words or more, as written, that open with a name, not a word ("New York" is a place, "Washington" a person)."""
    short = label.removesuffix(" University")
    if short == label or len(short.split()) < 2 or short.split()[0].lower() in corpus_words():
        return []
    return [short]


def _is_chinese(text: str) -> bool:
    return any("\u3400" <= c <= "\u9fff" for c in text)


@dataclass(frozen=True)
class Entry:
    kind: str  # venue | org | paper | type | pubkind | format
    label: str  # the canonical form ("NeurIPS", "Carnegie Mellon University", "word2vec", "survey")
    phrase: tuple[str, ...]  # folded words to match
    cased: tuple[str, ...] | None  # the words as they must be written, for a cased entry
    row: dict[str, Any]  # the whole data row (titles, forms, …)


@dataclass(frozen=True)
class Match:
    entry: Entry
    first: int  # token index
    last: int  # token index, inclusive


def _phrase(text: str) -> tuple[str, ...]:
    return tuple(t.low for t in tokenize(text) if t.is_word)


def _cased(text: str) -> tuple[str, ...]:
    return tuple(t.text for t in tokenize(text) if t.is_word)


class Lexicon:
    """Every named thing the reader recognises, indexed by the first word of its phrase."""

    def __init__(self, data: dict[str, Any]):
        self.data = data
        self.entries: list[Entry] = []
        self._words: frozenset[str] | None = None
        self._venue_rows: dict[str, dict[str, Any]] = {}  # a label or short name, case folded -> its venue's row
        for row in data["venues"]:
            for form in (row["label"], *row.get("aliases", ())):
                self._venue_rows.setdefault(form.casefold(), row)
            cased = bool(row.get("cased"))
            for form in (row["label"], *row.get("aliases", ())):
                self._add("venue", row["label"], form, cased, row)
            for form in row.get("names", ()):
                self._add("venue", row["label"], form, bool(row.get("names_cased")), row)
        for row in data["orgs"]:
            for form in (*row.get("aliases", ()), *row.get("forms", ())):
                self._add("org", row["label"], form, bool(row.get("cased")) and form in row.get("aliases", ()), row)
            for form in _short_forms(row["label"]):
                self._add("org", row["label"], form, True, row)
        for row in data["papers"]:
            for name in row["names"]:
                # a cased row's names are matched as written ("Adam", "GLUE"); its other spellings are not names
                cased = bool(row.get("cased")) and any(c.isupper() for c in name)
                self._add("paper", row["names"][0], name, cased, row)
            for title in row.get("titles", ()):  # a well-known title typed in any case
                if len(title.split()) >= 3:
                    self._add("paper", row["names"][0], title, False, row)
        for kind in ("types", "pubkinds", "formats"):
            for label, forms in data.get(kind, {}).items():
                for form in forms:
                    self._add(kind.rstrip("s") if kind != "pubkinds" else "pubkind", label, form, False, {})
        self._first: dict[str, list[Entry]] = {}
        for e in self.entries:
            self._first.setdefault(e.phrase[0], []).append(e)
        zh = data.get("zh", {})
        # an organisation the lexicon knows by its Chinese name is searched by its English one ("清华大学")
        known_orgs = {a: row["label"] for row in data["orgs"] for a in row.get("aliases", ()) if _is_chinese(a)}
        self.zh: dict[str, str] = {
            **zh.get("words", {}), **zh.get("terms", {}), **zh.get("kinds", {}), **zh.get("recency", {}),
            **known_orgs,
        }  # fmt: skip
        self._zh_keys = sorted(self.zh, key=len, reverse=True)
        # "前三篇" (the first three), "第2个" (number 2): a position word, a number, a measure word
        self._zh_numerals: dict[str, int] = zh.get("numerals", {})
        self._zh_positions: dict[str, str] = zh.get("positions", {})
        self._zh_position: re.Pattern[str] | None = None
        if self._zh_numerals and self._zh_positions:
            digits = "".join(self._zh_numerals)
            positions = "|".join(map(re.escape, self._zh_positions))
            measures = "|".join(map(re.escape, zh.get("measure_words", ()))) or "(?!)"
            self._zh_position = re.compile(rf"({positions})([{digits}]{{1,3}}|\d{{1,3}})(?:{measures})?")
        # a Chinese organisation's name: a few characters and the word for a university, an institute, a lab, …
        endings = "|".join(re.escape(e) for e in zh.get("org_endings", ()))
        self.zh_org = re.compile(rf"[\u4e00-\u9fff]{{2,12}}?(?:{endings})") if endings else None

    def _add(self, kind: str, label: str, form: str, cased: bool, row: dict[str, Any]) -> None:
        phrase = _phrase(form)
        if phrase:
            self.entries.append(Entry(kind, label, phrase, _cased(form) if cased else None, row))

    @property
    def words(self) -> frozenset[str]:
        """Every folded word of every entry ("spreadsheet", "neurips"): words the reader never respells."""
        if self._words is None:
            self._words = frozenset(w for e in self.entries for w in e.phrase)
        return self._words

    def is_weak(self, entry: Entry) -> bool:
        """A paper's name that is also a field's ("dropout", "knowledge distillation"): the paper only where the
        words point at one paper."""
        return " ".join(entry.phrase) in {" ".join(_phrase(w)) for w in entry.row.get("weak", ())}

    def matches(self, tokens: list[Token], kinds: tuple[str, ...] | None = None) -> list[Match]:
        """Every entry whose phrase occurs as a run of tokens (all of them; overlaps are the caller's)."""
        # "BatchNorm's roots", "ACL's best papers": a possessive is its name
        low = [without_possessive(t.low) for t in tokens]
        found: list[Match] = []
        for i, word in enumerate(low):
            for e in self._first.get(word, ()):
                if kinds is not None and e.kind not in kinds:
                    continue
                n = len(e.phrase)
                if tuple(low[i : i + n]) != e.phrase:
                    continue
                cased = tuple(without_possessive(t.text) for t in tokens[i : i + n])
                if e.cased is not None and cased != e.cased:
                    continue
                found.append(Match(e, i, i + n - 1))
        return found

    def in_english(self, text: str) -> tuple[str, bool]:
        """Chinese words replaced by their English forms, longest first (a request typed in Chinese searches
        English titles); True when anything was replaced."""
        if not any("\u3400" <= c <= "\u9fff" for c in text):
            return text, False
        positioned = self._positions_in_english(text)
        if positioned != text and not any("\u3400" <= c <= "\u9fff" for c in positioned):
            return " ".join(positioned.split()), True
        text = positioned
        kept = dict(self._unknown_orgs(text))
        out, i, changed = [], 0, False
        run = 0  # where the Latin words typed since the last Chinese word begin in `out`
        while i < len(text):
            if i in kept:  # an organisation the lexicon does not know keeps its Chinese name whole
                out.append(f" {text[i : kept[i]]} ")
                i = kept[i]
                continue
            key = next((k for k in self._zh_keys if text.startswith(k, i)), None)
            if key is None:
                out.append(text[i])
                i += 1
                continue
            typed = "".join(out[run:]).strip()
            english = self.zh[key]
            so_far = "".join(out).rstrip()
            last_word = so_far.split()[-1] if so_far else ""
            if english.startswith("'s") and last_word[:1].isupper() and last_word[1:2].islower():
                # "Manning的论文" -> "Manning's papers"
                out = [so_far, f"{english} "]
            elif english.startswith("'s"):  # "2014年的论文": the year's papers
                out.append(" " + english.removeprefix("'s") + " ")
            elif english.strip() in _POSTPOSITIONS and so_far:  # "2015年以来" -> "since 2015"
                head, _, last = so_far.rpartition(" ")
                if typed and not last.isdigit():
                    # "Batch Normalization 之后" -> "after Batch Normalization": a name typed whole moves whole
                    head = "".join(out[:run])
                    last = typed
                out = [f"{head} {english.strip()} {last} "]
            else:
                # (Latin words and digits glued to Chinese are split off: "我想看2019年" -> "… 2019 …")
                out.append(f" {english} " if english else " ")
            i += len(key)
            run = len(out)
            changed = True
        return " ".join("".join(out).split()), changed

    def _positions_in_english(self, text: str) -> str:
        """ "只要前五篇" -> "只要 the first 5 ", "去掉第三篇" -> "去掉 number 3 "."""
        if self._zh_position is None:
            return text

        def english(m: re.Match[str]) -> str:
            n = _zh_number(m.group(2), self._zh_numerals)
            return m.group(0) if n is None else f" {self._zh_positions[m.group(1)]} {n} "

        return self._zh_position.sub(english, text)

    def _unknown_orgs(self, text: str) -> list[tuple[int, int]]:
        """Chinese organisations the lexicon does not know, without the words before them ("介绍一下某某大学")."""
        out: list[tuple[int, int]] = []
        if self.zh_org is None:
            return out
        for m in self.zh_org.finditer(text):
            start = m.start()
            while (word := next((k for k in self._zh_keys if text.startswith(k, start)), None)) and start + len(
                word
            ) < m.end() - 2:
                start += len(word)
            if text[start : m.end()] not in self.zh:
                out.append((start, m.end()))
        return out

    def venue(self, label: str) -> dict[str, Any] | None:
        """The venue row a label or one of its short names stands for ("NIPS" is NeurIPS's)."""
        return self._venue_rows.get(label.casefold())

    def paper_titles(self, name: str) -> list[str]:
        """The titles a known name usually means, the canonical one first ([] for a name not listed)."""
        phrase = _phrase(name)
        for e in self._first.get(phrase[0] if phrase else "", ()):
            if e.kind == "paper" and e.phrase == phrase:
                return list(e.row.get("titles", ()))
        return []


@lru_cache(maxsize=1)
def lexicon() -> Lexicon:
    return Lexicon(shared_data_json("lexicon.json"))  # in pilot/data: the exports name venues from it too


def known_titles(name: str) -> tuple[str, ...]:
    """The titles a name known in the lexicon usually means ("word2vec", "ResNet", "the Collins parser"), the
    canonical one first; () for a name it does not list. "The", "paper" and a plural "s" do not count."""
    low = " ".join(fold_word(t.text) for t in tokenize(name) if t.is_word)
    low = low.removeprefix("the ").removesuffix(" paper").removesuffix(" papers").strip()
    for key in (low, low[:-1] if low.endswith("s") else low):
        if titles := lexicon().paper_titles(key):
            return tuple(titles)
    return ()


@lru_cache(maxsize=1)
def _org_forms() -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for row in lexicon().data["orgs"]:
        forms = tuple(dict.fromkeys([row["label"], *row.get("forms", ())]))
        for name in (*row.get("aliases", ()), row["label"]):
            out.setdefault(" ".join(words(name)) or name.strip(), forms)
    return out


def org_forms(query: str) -> tuple[str, ...]:
    """The names affiliations spell out for an organisation typed short or in Chinese ("CMU" -> "Carnegie Mellon
    University", the lexicon's organisations); () for a name the lexicon does not list."""
    key = " ".join(words(query)) or query.strip()
    return _org_forms().get(key, ())


def org_matches(query: str | None, affiliation: str | None) -> bool:
    """The organisation the user named appears, word for word, in an affiliation string (or one of its other
    names: "CMU" in "Carnegie Mellon University")."""
    if not query:
        return True
    if not affiliation:
        return False
    hay = words(affiliation)
    return any(contains_run(hay, words(form)) for form in (query, *org_forms(query)))


def fold_phrase(text: str) -> str:
    return " ".join(fold_word(t.text) for t in tokenize(text) if t.is_word)
