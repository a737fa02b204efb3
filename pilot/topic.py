"""Topic requests: a subject to read up on, with no paper named.

"Find the literature on discriminative word alignment", "surveys covering neural machine translation",
"I'm starting to work on X - what are the key papers?", "recent work on dependency parsing for low-resource
languages". The request is instruction words, then a cue preposition, then the topic. Only the topic is
ever searched for: the instruction words ("find", "literature", "key papers", "covering") are not the
subject, the type words ("surveys", "datasets") select what kind of paper to return, and the period or
recency words ("recent", "since 2015") become constraints.

    req = read_topic("surveys covering neural machine translation")
    req.topic, req.paper_types          # "neural machine translation", ["survey"]
    noun_phrases("reverse feature engineering of syntactic tree kernels")
                                        # ["reverse feature engineering", "syntactic tree kernels"]
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pilot.intent import (
    ERA_PHRASE,
    era_period,
    names_this_topic,
    negated_types,
    parse_constraints,
    publication_kinds,
    venue_names,
    without_left_out,
)
from pilot.text import DETERMINERS, INSTRUCTION_WORDS, PHRASE_BREAK_WORDS
from pilot.vocab import PAPER_TYPE_WORDS, PAPER_TYPES, PaperType

# What separates the instruction from the topic. "to" only after a type word ("an introduction to X") or
# one of _TO_AFTER ("I'm new to X", "a guide to X").
_CUES = frozenset("on about regarding concerning covering into in for of around re".split())
_TO_AFTER = frozenset(["new", "guide", "pointers", "intro", "introduce", "introduced"])
_MULTI_CUES = (("related", "to"), ("dealing", "with"), ("with", "respect", "to"), ("in", "the", "area", "of"))
_RECENT = frozenset("recent latest newest new current modern".split())
_SEMINAL = frozenset("seminal classic classical foundational influential landmark canonical".split())
_YEARS = re.compile(
    # "not older than 2012", "not from the 90s": what goes; parse_constraints keeps the rest
    r"\b(?:(?:not|nothing|no\s+papers?|without\s+papers?|except(?:\s+for)?|excluding)\s+)?"
    r"(?:(?:published\s+)?(?:after|before|since|until|from|between|in|during|up to|prior to|through|older than|"
    r"newer than|earlier than|later than|no later than)\s+"
    r"(?:the\s+)?(?:19|20)\d\d'?s?(?:\s*(?:-|–|to|and|until)\s*(?:19|20)\d\d'?s?)?"
    r"|(?:(?:from|in|during)\s+)?the\s+'?(?:[5-9]0|(?:19|20)\d0)'?s"
    r"|(?:(?:in|from|during|over|within)\s+)?the\s+(?:last|past)\s+(?:\d{1,2}|few|several|two|three|five|ten)\s+years"
    r"|(?:19|20)\d\d\s*(?:or later|onwards?|and later|or earlier|and earlier))\b",
    re.IGNORECASE,
)
_PASTED = re.compile(
    r"^(?:(?:my|our|this|the following|a)\s+)?(?:abstract|draft|paper|text|summary|description|thesis|project|"
    r"proposal|idea)\s*:\s*",
    re.IGNORECASE,
)
# single spaces (messages arrive collapsed): \s+ around a dash would backtrack on a run of blanks
# ("…sentiment analysis, what should I cite?": a comma before a question word ends the topic too)
_SPLIT_CLAUSES = re.compile(
    r"\s[-–—]+\s|[?!;]+\s?|\.\s(?=[A-Z])|\.$|,\s(?=(?i:what|which|where|who|how|can|could|would|should|any|please)\b)"
)
_WORD = re.compile(r"[^\W_][\w'’\-]*", re.UNICODE)


@dataclass
class TopicRequest:
    topic: str  # the subject in the user's words
    paper_types: list[PaperType] = field(default_factory=list)
    updates: dict[str, Any] = field(default_factory=dict)  # intent fields the instruction words set (recency, years)
    instruction: str = ""  # the words before the topic, for notes and tests


# Words that only ever introduce a topic ("I'm writing a thesis on X", "datasets people use for X"); unlike
# INSTRUCTION_WORDS they stay in a topic they end ("working memory", "the tools people use").
_LEAD_ONLY = frozenset(
    """writing write preparing prepare working doing researching exploring studying planning cite citing thesis
    dissertation project proposal section chapter related people researchers commonly typically usually often
    widely use used uses popular common journal conference workshop peer-reviewed only just
    hi hello hey phd student students master masters undergrad undergraduate grad graduate postdoc researcher
    engineer beginner newcomer interested""".split()
)


def _words(text: str) -> list[str]:
    text = re.sub(r"\bstate[- ]of[- ]the[- ]art\b", "stateoftheart", text, flags=re.IGNORECASE)
    text = re.sub(r"\b(i|you|we|they)['’](m|re|ve|d|ll)\b", r"\1", text, flags=re.IGNORECASE)
    text = re.sub(r"\b(what|where|who|how|there|here|it|that)['’]s\b", r"\1 is", text, flags=re.IGNORECASE)
    return _WORD.findall(text)


def _is_lead(word: str) -> bool:
    low = re.sub(r"['’]s$", "", word.lower().strip("'’"))  # "a master's student"
    return low in INSTRUCTION_WORDS or low in _LEAD_ONLY or word.lower() in PAPER_TYPE_WORDS


def _cue_at(words: list[str], i: int) -> int:
    """Length of the cue starting at ``words[i]`` (0 when there is none)."""
    low = [w.lower() for w in words]
    for multi in _MULTI_CUES:
        if tuple(low[i : i + len(multi)]) == multi:
            return len(multi)
    if low[i] in _CUES:
        return 1
    if low[i] == "to" and i > 0 and (low[i - 1] in PAPER_TYPE_WORDS or low[i - 1] in _TO_AFTER):
        return 1
    return 0


def _split(words: list[str]) -> tuple[list[str], list[str]] | None:
    """(instruction words, topic words) at the first cue that only instruction words precede."""
    for i in range(1, len(words)):
        if not _is_lead(words[i - 1]):
            return None
        n = _cue_at(words, i)
        if n and i + n < len(words):
            return words[:i], words[i + n :]
    return None


# "… coreference resolution, ideally after 2016": a hedge before a constraint, not a topic word
_HEDGES = frozenset("ideally preferably possibly perhaps maybe mostly mainly instead".split())
_HEDGE_TAIL = re.compile(rf"(?<![\s,;])[\s,;]+(?:{'|'.join(sorted(_HEDGES))})\W*$", re.IGNORECASE)
# "… for my thesis": what the reading is for, not what it is about
_PURPOSE = frozenset("thesis dissertation paper project survey review class course talk proposal research".split())
# "how has research on dialogue systems evolved since 2000?": how the field moved, not a word of the topic
_HOW_IT_WENT = frozenset("evolved evolve evolving changed progressed".split())
# instruction words that end a topic after another word of it: "deep learning", "language understanding",
# "machine reading", "operations research", "user studies" (alone, "learning" and "research" only lead in)
_TOPIC_HEADS = frozenset("learning understanding reading research studies study".split())


def _clean(words: list[str]) -> list[str]:
    while words:
        low = [w.lower() for w in words[-3:]]
        if len(low) == 3 and low[0] == "for" and low[1] in ("my", "our", "a", "the") and low[2] in _PURPOSE:
            words = words[:-3]
        elif words[-1].lower() in _TOPIC_HEADS and len(words) > 1 and words[-2].lower() not in INSTRUCTION_WORDS:
            break
        elif words[-1].lower() in INSTRUCTION_WORDS | _CUES | _HEDGES | _HOW_IT_WENT:
            words = words[:-1]  # "… parsing papers", "… published"
        else:
            break
    while words and words[0].lower() in DETERMINERS:
        words = words[1:]
    return words


def _span(clause: str, words: list[str]) -> str:
    """The topic as the user typed it (its punctuation kept: "preference grammars: softening …")."""
    m = re.search(r"\W+".join(re.escape(w) for w in words), clause)
    return m.group(0) if m else " ".join(words)


def read_topic(text: str) -> TopicRequest | None:
    """The topic of a request that asks for a field's literature, or None when the request is not one
    (it names no cue, or something other than instruction words comes before it: "papers similar to X",
    "who works on X", "papers by X")."""
    text = " ".join((text or "").split())
    if not text:
        return None
    years = _YEARS.findall(text)
    body = _YEARS.sub(" ", text)
    era = era_period(body)  # "dependency parsing from the statistical era": years, not words of the topic
    body = ERA_PHRASE.sub(" ", body)
    for clause in _SPLIT_CLAUSES.split(body):
        words = _words(clause)
        parts = _split(words)
        if parts is None:
            continue
        lead, topic = parts
        # "a list of papers on X", "an overview of the work on X": the cue found first was still instruction
        while (again := _split(topic)) is not None and all(_is_lead(w) for w in again[0]):
            lead, topic = lead + again[0], again[1]
        topic = _clean(topic)
        if not topic or all(w.lower() in INSTRUCTION_WORDS for w in topic):
            continue
        if len(topic) == 1 and names_this_topic(topic[0], clause):
            return None  # "surveys on this topic": the search on screen, not a topic called "topic"
        # "I'm new to X" is a newcomer, not a wish for recent work ("what's new in X" is one)
        newcomer = bool(lead) and lead[-1].lower() == "new" and words[len(lead)].lower() == "to"
        low = {w.lower() for i, w in enumerate(lead) if not (newcomer and i + 1 == len(lead))}
        types = list(dict.fromkeys(PAPER_TYPE_WORDS[w] for w in (x.lower() for x in lead) if w in PAPER_TYPE_WORDS))
        updates: dict[str, Any] = {}
        if low & _SEMINAL:
            updates["recency"] = "seminal"
        elif low & _RECENT or "stateoftheart" in low:
            updates["recency"] = "recent"
        said = " ".join(lead).lower()  # "journal papers on X", "only conference papers on X"
        if kinds := publication_kinds(said) or publication_kinds("only " + said):
            updates["publication_kinds"] = kinds
        if era is not None and not years:
            updates.update(era[0])
            updates.pop("recency", None)
        if years:
            found = parse_constraints(" ".join(years))
            updates.update({k: v for k, v in found.items() if k in ("year_min", "year_max", "exclude_years")})
            if "year_min" in updates or "year_max" in updates:
                updates.pop("recency", None)  # an explicit period says more than "recent"
        # "related work for my abstract: <the abstract>": the pasted text is the topic, not the words "my abstract"
        span = _PASTED.sub("", _span(clause, topic))
        # "papers on parsing but not dependency parsing, no surveys": left out, not searched for
        kept, left_out = without_left_out(span)
        kept = _HEDGE_TAIL.sub("", kept)  # "… resolution, ideally [no surveys]": the hedge was the left-out's
        subject, venue_updates = _without_venues(kept)
        if not subject:
            continue
        if left_out:
            updates["exclude_terms"] = left_out
        if not types and (other_types := negated_types(clause)):
            types = [t for t in PAPER_TYPES if t not in other_types]
        return TopicRequest(subject, types, {**updates, **venue_updates}, " ".join(lead))
    return None


def _without_venues(topic: str) -> tuple[str, dict[str, Any]]:
    """ "parsing at ACL 2005", "GNNs for recommendation at KDD or WWW": the venues (and the year) are filters, not
    search terms. A venue named without "at / in / from" before it ("SemEval tasks") is part of the topic."""
    venues = parse_constraints(topic).get("venues") or []
    if not venues:
        return topic, {}
    typed = {n.lower(): v for v in venues for n in venue_names(v)}
    one = "|".join(re.escape(n) for n in sorted(typed, key=len, reverse=True))
    listed = re.compile(
        rf"\s*\b(?:(?:published|presented|appearing)\s+)?(?:at|in|from)\s+(?:the\s+)?"
        rf"(?P<list>(?:{one})(?:\s*(?:,\s*(?:or\s+|and\s+)?|/|&|\s(?:or|and)\s)\s*(?:the\s+)?(?:{one}))*)"
        rf"(?![\w-])(?:\s+(?P<year>(?:19|20)\d\d))?\b",
        re.IGNORECASE,
    )
    updates: dict[str, Any] = {}
    while (m := listed.search(topic)) is not None:
        for name in re.findall(rf"(?<![\w-])(?:{one})(?![\w-])", m.group("list"), re.IGNORECASE):
            venue = typed[name.lower()]
            if venue not in updates.setdefault("venues", []):
                updates["venues"].append(venue)
        if m.group("year"):
            updates["year_min"] = updates["year_max"] = int(m.group("year"))
        topic = (topic[: m.start()] + topic[m.end() :]).strip()
    return topic, updates


def noun_phrases(text: str, limit: int = 6) -> list[str]:
    """The request's noun phrases: runs of words between function words and punctuation, each naming one
    part of the topic ("tree kernels", "semantic role labeling"); longer runs first."""
    phrases: list[str] = []
    for chunk in re.split(r"[,:;()\[\]{}\"“”?!]|\s[-–—]\s", text or ""):
        run: list[str] = []
        for word in [*_WORD.findall(chunk), "of"]:  # a closing function word flushes the last run
            if word.lower() in PHRASE_BREAK_WORDS:
                while run and run[0].lower() in DETERMINERS:
                    run = run[1:]
                if run:
                    phrases.append(" ".join(run))
                run = []
            else:
                run.append(word)
    ordered = [p for p in phrases if " " in p] + [p for p in phrases if " " not in p]
    return list(dict.fromkeys(p.lower() for p in ordered))[:limit]
