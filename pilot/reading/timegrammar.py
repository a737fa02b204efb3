"""Periods in a message, from one small grammar (after Duckling): a year, a range, a decade, a relative period or
an era, bounded by the relation words around it, and kept or left out by the words that say so.

    periods(tokenize("get rid of anything older than 2010"))  ->  [Period(lo=2010, hi=None, …)]

The words are data (``data/time.json``); each rule is tested against positive and negative rows
(``data/time_examples.jsonl``). Bounds are inclusive years; ``None`` is open. "after 2010" starts in 2011,
"since 2010" in 2010; "the last 3 years" counts this year in.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from pilot.reading.lexicon import data_json, word_set
from pilot.reading.tokens import Token

_YEAR = re.compile(r"^(1[89]\d\d|20\d\d)$")
_YEAR_PLUS = re.compile(r"^(1[89]\d\d|20\d\d)\+$")
_IN_TOKEN_RANGE = re.compile(r"^(1[89]\d\d|20\d\d)[-/](\d\d|1[89]\d\d|20\d\d)$")
_PREFIXED = re.compile(r"^(pre|post)-(1[89]\d\d|20\d\d)$")
_DECADE = re.compile(r"^'?(1[89]\d0|20\d0|\d0)'?s$")
_CLAUSE_END = frozenset(".,;:!?()[]")


@dataclass(frozen=True)
class Period:
    first: int  # token index where the phrase starts
    last: int  # token index where it ends (inclusive)
    lo: int | None
    hi: int | None
    rule: str
    note: str = ""  # an era's years, said back ("“before deep learning”: up to 2011 (…)")
    excluded: bool = False  # the words leave this period out

    @property
    def closed(self) -> bool:
        return self.lo is not None and self.hi is not None

    def kept(self) -> dict[str, Any]:
        """What the period does to a search: the years kept, or the closed period left out."""
        if not self.excluded:
            return {k: v for k, v in (("year_min", self.lo), ("year_max", self.hi)) if v is not None}
        if self.closed:
            assert self.lo is not None and self.hi is not None
            return {"exclude_years": [(self.lo, self.hi)]}
        if self.hi is not None:  # "nothing before 2012": what stays starts after it
            return {"year_min": self.hi + 1}
        if self.lo is not None:  # "exclude everything past 2019"
            return {"year_max": self.lo - 1}
        return {}


@lru_cache(maxsize=1)
def _grammar() -> dict[str, Any]:
    g = dict(data_json("time.json"))
    for key in ("relations", "suffixes"):
        g[key] = {tuple(k.split()): v for k, v in g[key].items()}
    g["exclude_before"] = [*g["exclude_before"], *sorted(word_set("leave_out"))]  # "ditch anything before 2010"
    for key in ("exclude_before", "exclude_after", "not_leaving", "keep_words", "this_year", "last_year", "inclusive"):
        g[key] = [tuple(p.split()) for p in g[key]]
    g["counts"] = {tuple(k.split()): v for k, v in g["counts"].items()}
    g["eras"] = [{**e, "names": [tuple(n.split()) for n in e["names"]]} for e in g["eras"]]
    g["era_relations"] = {tuple(k.split()): v for k, v in g["era_relations"].items()}
    return g


def this_year() -> int:
    return _dt.date.today().year


def _ends_at(low: list[str], j: int, phrases: dict[tuple[str, ...], Any] | list[tuple[str, ...]]) -> int | None:
    """Start index of the longest phrase that ends at token ``j`` (inclusive)."""
    best = None
    for p in phrases:
        n = len(p)
        if j - n + 1 >= 0 and tuple(low[j - n + 1 : j + 1]) == p and (best is None or j - n + 1 < best):
            best = j - n + 1
    return best


def _starts_at(low: list[str], i: int, phrases: dict[tuple[str, ...], Any] | list[tuple[str, ...]]) -> int | None:
    """End index (inclusive) of the longest phrase that starts at token ``i``."""
    best = None
    for p in phrases:
        n = len(p)
        if tuple(low[i : i + n]) == p and (best is None or i + n - 1 > best):
            best = i + n - 1
    return best


def _bound(op: str, year: int) -> tuple[int | None, int | None]:
    return {"ge": (year, None), "gt": (year + 1, None), "le": (None, year), "lt": (None, year - 1), "in": (year, year)}[
        op
    ]


def _year_of(word: str) -> int | None:
    m = _YEAR.match(word)
    return int(m.group(1)) if m else None


def _decade_start(word: str) -> int | None:
    m = _DECADE.match(word)
    if not m:
        return None
    d = m.group(1)
    return int(d) if len(d) == 4 else 1900 + int(d) if int(d) >= 30 else 2000 + int(d)


def periods(tokens: list[Token]) -> list[Period]:
    """Every period the tokens name, left to right, without overlaps."""
    g = _grammar()
    # "CVPR 2019's biggest hits": a year's possessive is that year
    low = [t.low.removesuffix("'s") if t.low[:1].isdigit() else t.low for t in tokens]
    found: list[Period] = []
    i = 0
    while i < len(low):
        p = _period_at(low, i, g)
        if p is None:
            i += 1
            continue
        found.append(_polarity(low, p, g))
        i = p.last + 1
    return found


def _period_at(low: list[str], i: int, g: dict[str, Any]) -> Period | None:
    """The period whose core (a year, decade, relative phrase or era) starts at token ``i``."""
    w = low[i]
    if m := _PREFIXED.match(w):  # "pre-2010", "post-2015"
        lo, hi = _bound("lt" if m.group(1) == "pre" else "gt", int(m.group(2)))
        return Period(i, i, lo, hi, "prefixed")
    if m := _IN_TOKEN_RANGE.match(w):  # "2018-2019", "2017-20"
        a = int(m.group(1))
        b = int(m.group(2)) if len(m.group(2)) == 4 else a // 100 * 100 + int(m.group(2))
        return _extend_range(low, i, i, min(a, b), max(a, b), g)
    if m := _YEAR_PLUS.match(w):  # "2017+"
        return _with_relation(low, i, i, int(m.group(1)), "ge", g)
    if w in ("'", "’") and i + 1 < len(low) and len(low[i + 1]) == 2 and low[i + 1].isdigit():
        # "nothing before '18": a year in two digits after an apostrophe, in the century that keeps it past
        short = 2000 + int(low[i + 1]) if 2000 + int(low[i + 1]) <= this_year() else 1900 + int(low[i + 1])
        return _with_relation(low, i, i + 1, short, None, g)
    if (year := _year_of(w)) is not None:
        # a range: "2015 to 2020", "between 2015 and 2020"
        if i + 2 < len(low) and low[i + 1] in g["range_joins"] and (other := _year_of(low[i + 2])) is not None:
            return _extend_range(low, i, i + 2, min(year, other), max(year, other), g)
        two_word_join = i + 3 < len(low) and " ".join(low[i + 1 : i + 3]) in g["range_joins"]
        if two_word_join and (other := _year_of(low[i + 3])) is not None:
            return _extend_range(low, i, i + 3, min(year, other), max(year, other), g)
        return _with_relation(low, i, i, year, None, g)
    head, _, rest = w.partition("-")
    joined = head in g["decade_parts"] and _decade_start(rest) is not None  # "mid-90s" as one token
    if joined or (start := _decade_start(w)) is not None or (w in g["decade_words"]):
        w = rest if joined else w
        start = _decade_start(w) if w not in g["decade_words"] else 1900 + g["decade_words"][w]
        assert start is not None
        # "the 1800s", "the 1900s" are centuries; "the 2000s" is the decade people mean by it
        width = 100 if start % 100 == 0 and start < 2000 and w[:1] == "1" else 10
        first, lo, hi = i, start, start + width - 1
        part, first_of_part = (head, i) if joined else (low[i - 1] if i > 0 else None, i - 1)
        if part not in g["decade_parts"] and i > 1 and low[i - 1] == "-":
            part, first_of_part = low[i - 2], i - 2  # "mid - 90s"
        for phrase in g["decade_parts"]:  # "the second half of the 2010s", "the end of the 90s"
            words = phrase.split()
            if len(words) > 1 and low[max(0, i - len(words)) : i] == words:
                part, first_of_part = phrase, i - len(words)
        if part in g["decade_parts"]:
            a, b = g["decade_parts"][part]
            first = first_of_part
            lo, hi = start + a * width // 10, start + (b + 1) * width // 10 - 1
        if first > 0 and low[first - 1] == "the":
            first -= 1
        return _relate_closed(low, first, i, lo, hi, "decade", g)
    if (rel := _relative_at(low, i, g)) is not None:
        return rel
    return _era_at(low, i, g)


def _extend_range(low: list[str], first: int, last: int, lo: int, hi: int, g: dict[str, Any]) -> Period:
    if first > 0 and low[first - 1] in g["range_leads"]:
        first -= 1
    if (end := _starts_at(low, last + 1, g["inclusive"])) is not None:
        last = end
    return Period(first, last, lo, hi, "range")


def _with_relation(low: list[str], first: int, last: int, year: int, op: str | None, g: dict[str, Any]) -> Period:
    """A year with the relation words before it ("older than 2010") or after it ("2015 and later")."""
    start = first
    j = first - 1
    if j >= 0 and low[j] in ("the", "year"):  # "since the year 2010"
        j -= 1 if low[j] == "the" else (2 if j > 0 and low[j - 1] == "the" else 1)
    led_by_to = False
    if op is None and j >= 0 and (s := _ends_at(low, j, g["relations"])) is not None:
        op, start = g["relations"][tuple(low[s : j + 1])], s
        led_by_to = low[j] == "to"
    if (end := _starts_at(low, last + 1, g["suffixes"])) is not None:
        suffix_op = g["suffixes"][tuple(low[last + 1 : end + 1])]
        if led_by_to:  # "limit it to 2019 onwards": "to" says where the list goes, the suffix which way
            op = None
        if op in (None, "in") or suffix_op == op or {op, suffix_op} <= {"ge", "gt"}:
            op, last = suffix_op if op in (None, "in") else op, end  # "from 2020 on": from then on
    if op is None:
        return Period(start, last, year, year, "year")
    lo, hi = _bound(op, year)
    return Period(start, last, lo, hi, f"year {op}")


def _relate_closed(low: list[str], first: int, last: int, lo: int, hi: int, rule: str, g: dict[str, Any]) -> Period:
    """A closed period with a relation before it: "before the 2000s" ends in 1999, "since the 90s" starts in 1990."""
    j = first - 1
    if (
        j >= 0
        and (s := _ends_at(low, j, g["relations"])) is not None
        and low[s : j + 1] not in (["from"], ["starting"])
    ):
        op = g["relations"][tuple(low[s : j + 1])]
        if op in ("lt", "le"):
            return Period(s, last, None, lo - 1 if op == "lt" else hi, f"{rule} {op}")
        return Period(s, last, lo if op == "ge" else hi + 1, None, f"{rule} {op}")
    return Period(first, last, lo, hi, rule)


def _relative_at(low: list[str], i: int, g: dict[str, Any]) -> Period | None:
    """ "the last 3 years", "the past decade", "last year", "this year" (this year counted in)."""
    now = this_year()
    for key, years in (("this_year", 0), ("last_year", 1)):
        if (end := _starts_at(low, i, g[key])) is not None:
            return Period(i, end, now - years, now - years, key)
    if low[i] not in g["relative_leads"]:
        # "five years back", "a 5-year window": the length first, then a word that counts it back from now
        span_end = _span_at(low, i, g)
        if span_end is None or span_end[1] + 1 >= len(low) or low[span_end[1] + 1] not in g["relative_tails"]:
            return None
        return Period(_with_article(low, i), span_end[1] + 1, now - span_end[0] + 1, None, "relative")
    got = _span_at(low, i + 1, g) or _span_at(low, i, g, counted=False)
    if got is None:
        return None
    span, j = got
    return Period(_with_article(low, i), j, now - span + 1, None, "relative")


def _span_at(low: list[str], i: int, g: dict[str, Any], counted: bool = True) -> tuple[int, int] | None:
    """A length of time starting at token ``i`` ("3 years", "five-year", "a decade"; with ``counted`` False only
    the unit after a relative lead, "the last year(s)" without a count, as one): its years and its last token."""
    j, n = (i + 1, 1) if not counted else (i, None)
    if counted and i < len(low):
        count, _, unit = low[i].partition("-")
        if unit and (count.isdigit() or (count,) in g["counts"]):  # "5-year", "five-year"
            n = int(count) if count.isdigit() else g["counts"][(count,)]
            years = round(n if unit.startswith("year") else 10 * n)
            return (years, i) if unit in _UNITS and years else None
        if low[i].isdigit() and 0 < int(low[i]) < 100:
            n, j = int(low[i]), i + 1
        elif (end := _starts_at(low, i, g["counts"])) is not None:
            n, j = g["counts"][tuple(low[i : end + 1])], end + 1
        else:
            return None
    if j < len(low) and low[j] in _UNITS:
        years = round((n or 1) * (1 if low[j].startswith("year") else 10))  # "half a decade": 5 ("half a year": none)
        return (years, j) if years else None
    return None


_UNITS = ("years", "year", "decade", "decades")


def _with_article(low: list[str], i: int) -> int:
    """Where a relative period starts with what leads it: "in the last 3 years", "over the past decade"."""
    first = i - 1 if i > 0 and low[i - 1] in ("the", "in", "over", "within", "during", "a") else i
    if first > 0 and low[first] == "the" and low[first - 1] in ("in", "over", "within", "during", "from"):
        first -= 1
    return first


def _era_at(low: list[str], i: int, g: dict[str, Any]) -> Period | None:
    """ "before deep learning", "the statistical era", "pre-neural": a period named by the field's history."""
    w = low[i]
    rel_end = _starts_at(low, i, g["era_relations"])
    op = None
    j = i
    if rel_end is not None:
        if i > 0 and low[i - 1] in g["era_not_after"]:
            return None  # "what came before neural MT" asks for predecessors, not for a period
        op = g["era_relations"][tuple(low[i : rel_end + 1])]
        j = rel_end + 1
    elif w.startswith(("pre-", "post-")):  # "pre-neural"
        head, _, rest = w.partition("-")
        op, low = ("lt" if head == "pre" else "ge"), [*low[:i], rest, *low[i + 1 :]]
    if j < len(low) and low[j] == "the":
        j += 1
    for era in g["eras"]:
        for name in era["names"]:
            if tuple(low[j : j + len(name)]) != name:
                continue
            last = j + len(name) - 1
            has_noun = last + 1 < len(low) and low[last + 1] in g["era_nouns"]
            if has_noun:
                last += 1
            if op is None and not has_noun:
                continue  # "neural" alone is a topic word; "the neural era" is a period
            if op in (None, "in"):
                lo, hi, said = era.get("first"), era.get("last"), None
            elif op == "lt":
                lo, hi = None, (era["first"] - 1 if era.get("first") else era.get("last"))
                said = f"up to {hi}"
            else:
                lo, hi = (era["first"] if era.get("first") else era["last"] + 1), None
                said = f"from {lo}"
            if lo is None and hi is None:
                return None
            if said is None:
                said = f"{lo}–{hi}" if lo and hi else (f"from {lo}" if lo else f"up to {hi}")
            dated = f"the era of {name_of(era)} dated by {era['why']}"
            note = f"{{phrase}}: {said} ({dated}); say other years if you mean others."
            return Period(i, last, lo, hi, "era", note=note)
    return None


def name_of(era: dict[str, Any]) -> str:
    return " ".join(era["names"][0])


def _polarity(low: list[str], p: Period, g: dict[str, Any]) -> Period:
    """Left out when a leaving-out word comes just before it in its clause ("ditch everything before 2012"), or
    just after it ("older than 2010 can go")."""
    j = p.first - 1
    seen = 0
    while j >= 0 and seen < 5 and low[j] not in _CLAUSE_END:
        if _ends_at(low, j, g["keep_words"]) is not None:
            break
        if _ends_at(low, j, g["exclude_before"]) is not None:
            return replace(p, excluded=True, first=p.first)
        j -= 1
        seen += 1
    k = p.last + 1
    for _ in range(3):
        if k >= len(low) or low[k] in _CLAUSE_END:
            break
        if _starts_at(low, k, g["exclude_after"]) is not None and _ends_at(low, k, g["not_leaving"]) is None:
            return replace(p, excluded=True)
        k += 1
    return p


def periods_together(spans: list[tuple[int | None, int | None]]) -> dict[str, Any]:
    """Several periods as one filter: the outer bounds (open where a period is open) and the years between them
    left out ("up to 2006" and "2009 or later": 2007–2008 left out). {} for no period."""
    if not spans:
        return {}
    ordered = sorted((lo or -(10**4), hi or 10**4) for lo, hi in spans)
    merged = [list(ordered[0])]
    for lo, hi in ordered[1:]:
        if lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    out: dict[str, Any] = {}
    if merged[0][0] > -(10**4):
        out["year_min"] = merged[0][0]
    if merged[-1][1] < 10**4:
        out["year_max"] = merged[-1][1]
    if gaps := [(a[1] + 1, b[0] - 1) for a, b in zip(merged, merged[1:], strict=False)]:
        out["exclude_years"] = gaps
    return out


_WORD = re.compile(r"[A-Za-z]+")


def spelled_years(text: str) -> str:
    """Years written in words, as digits: "twenty twenty-three" -> 2023, "nineteen ninety" -> 1990, "since two
    thousand and ten" -> since 2010 (time.json's year_words). A century's word needs a number from ten to ninety-nine
    after it ("twenty three papers" is a count); "two thousand" alone, a year only after a word that leads one.
    Linear: one pass over the words."""
    y = _grammar()["year_words"]
    small = {**y["units"], **y["teens"], **y["tens"]}
    words = list(_WORD.finditer(text))
    out, pos, i = [], 0, 0

    def number_at(k: int) -> tuple[int, int] | None:
        """A number from 1 to 99 in words at word k ("ninety-five", "ninety five", "seventeen"): value, last word."""
        if k >= len(words) or (w := words[k].group().lower()) not in small:
            return None
        if w in y["tens"] and k + 1 < len(words) and words[k + 1].group().lower() in y["units"]:
            between = text[words[k].end() : words[k + 1].start()]
            if between in ("-", " "):
                return small[w] + y["units"][words[k + 1].group().lower()], k + 1
        return small[w], k

    while i < len(words):
        w = words[i].group().lower()
        year, last = None, i
        if w in y["centuries"] and (n := number_at(i + 1)) is not None and n[0] >= 10:
            year, last = y["centuries"][w] + n[0], n[1]
        elif w == "two" and i + 1 < len(words) and words[i + 1].group().lower() == "thousand":
            k = i + 2 + (i + 2 < len(words) and words[i + 2].group().lower() == "and")
            n = number_at(k)
            before = words[i - 1].group().lower() if i else ""
            if n is not None:
                year, last = 2000 + n[0], n[1]
            elif before in y["leads"]:
                year, last = 2000, i + 1
        if year is not None:
            out.append(text[pos : words[i].start()])
            out.append(str(year))
            pos = words[last].end()
            i = last + 1
            continue
        i += 1
    out.append(text[pos:])
    return "".join(out)
