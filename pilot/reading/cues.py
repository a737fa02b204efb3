"""The cue lexicon's grammar: phrases (``data/cues.json``) that vote for a direction, a change to the list, a
command or an entity question, matched over the message with its spans replaced by their slots.

    cue_votes(items_of(extracted))  ->  {"dir:successor": 2.0, …} and the token ranges that said so

A pattern's words are matched by lemma, with up to two other words between them inside one clause; slots match
spans ("P": a paper named any way, "N": result numbers, …). Longer patterns say more and weigh more.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pilot.reading.lexicon import data_json, word_set
from pilot.reading.model import Span
from pilot.reading.spans import Extracted

# the slot each kind of span fills in a pattern
SLOT_OF = {
    "id": "P", "title": "P", "paper": "P", "name": "P", "cited": "P", "it": "P", "ref": "N", "type": "T",
    "person": "A", "venue": "V", "time": "Y", "org": "O", "count": "K", "cites": "K", "format": "F", "step": "S",
}  # fmt: skip


def slot_of(span: Span) -> str | None:
    """The slot a span reads as; "the last 3" are results on the list (a count from its end), not a size."""
    if span.kind == "count" and isinstance(span.value, dict) and "last" in span.value:
        return "N"
    return SLOT_OF.get(span.kind)


_BE = {
    "is": "be",
    "are": "be",
    "was": "be",
    "were": "be",
    "been": "be",
    "being": "be",
    "'s": "be",
    "am": "be",
    "'re": "be",
}
_DO = {"did": "do", "does": "do", "done": "do", "doing": "do", "has": "have", "had": "have", "having": "have"}
_CLAUSE = frozenset(".,;!?-")
# a gap between a pattern's words never holds these: they start another clause ("builds on BERT and also cites …")
_GAP_STOPS = frozenset("and or but also then while whereas".split())
MAX_GAP = 2
_VENUE_KINDS = frozenset({"journal", "conference", "workshop"})
# before "like", the words that make it a verb of wanting ("I would like", "we'd like") rather than "similar to"
_WANTING = frozenset("would should 'd i we they you".split())


@dataclass(frozen=True)
class Item:
    """One position of the message as the cues see it: a lemma, or a slot standing for a span."""

    word: str  # lemma, or a slot letter
    slot: bool
    first_token: int
    last_token: int
    span_index: int | None = None
    said: str = ""  # a one-word kind of paper's lemma ("overview"): "overview of V" is read over its slot
    form: str = ""  # the word as written (lower case), for a pattern's '=word' ("the =one from Y" is not "the ones")
    head: bool = False  # a count from the list's head ("the first three"): results on the list too, an N


@dataclass(frozen=True)
class CueHit:
    label: str
    pattern: str
    weight: float
    items: tuple[int, ...]  # item positions of the pattern's words and slots
    slots: tuple[int, ...]  # item positions of its slots


@lru_cache(maxsize=1)
def _table() -> tuple[dict[str, str], list[tuple[str, str, tuple[tuple[str, ...], ...], tuple[bool, ...], float]]]:
    data = data_json("cues.json")
    lemmas: dict[str, str] = {**data["lemmas"], **_BE, **_DO}
    patterns = []
    for label, phrases in data["cues"].items():
        for written in phrases:
            phrase, _, weight = written.partition(" @")
            elements, optional = [], []
            # a hyphened word alone in its place is its parts ("most-cited" is "most cited"), as a message's is
            words = [
                part
                for raw in phrase.split()
                for part in (raw.split("-") if _split_hyphened(raw.lstrip("?")) else [raw])
            ]
            for raw in words:
                opt = raw.startswith("?")
                written_alts = [
                    w for a in raw.lstrip("?").split("|") for w in (sorted(word_set(a[1:])) if a[0] == "&" else [a])
                ]
                # "cite it", "before it": "it" is the paper on screen, a paper slot like any other
                alts = tuple(
                    a if a in SLOT_LETTERS or a.startswith("=") else "P" if a == "it" else lemma(a, lemmas)
                    for a in written_alts
                )
                elements.append(alts)
                optional.append(opt)
            patterns.append((label, phrase, tuple(elements), tuple(optional), float(weight) if weight else 0.0))
    return lemmas, patterns


SLOT_LETTERS = frozenset("PNTAVYOKFS")


def _split_hyphened(word: str) -> bool:
    """A hyphened word of words, written without alternatives, read as its parts ("most-cited", "state-of-the-art";
    a single letter is a key or a label, "ctrl-z", "x-ray", and keeps the word whole)."""
    parts = word.split("-")
    return len(parts) > 1 and "|" not in word and all(p.isalpha() and len(p) > 1 for p in parts)


@lru_cache(maxsize=1)
def _cue_words() -> frozenset[str]:
    return frozenset(w for _, _, elements, _, _ in _table()[1] for alts in elements for w in alts)


def lemma(word: str, lemmas: dict[str, str] | None = None) -> str:
    table = lemmas if lemmas is not None else _table()[0]
    w = word.lower().replace("’", "'")
    if w in table:
        return table[w]
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    if lemmas is None and len(w) > 4 and w.endswith("ed"):
        # "proposed", "worked", "stopped": the past of a verb the cues use ("-ing" forms are the field's nouns
        # too: "parsing", "chronological ordering")
        stem = w[:-2]
        for base in (stem + "e", stem, stem[:-1]):
            if base in _cue_words():
                return base
    return w


def items_of(ex: Extracted) -> list[Item]:
    """The message as a run of lemmas and slots (a span becomes its slot letter)."""
    out: list[Item] = []
    i = 0
    spans = ex.spans
    while i < len(ex.tokens):
        t = ex.tokens[i]
        k = next((n for n, s in enumerate(spans) if s.start <= t.start < s.end), None)
        if k is not None:
            s = spans[k]
            j = i
            while j + 1 < len(ex.tokens) and ex.tokens[j + 1].start < s.end:
                j += 1
            slot = slot_of(s)
            if slot is not None:
                said = lemma(s.text) if i == j and slot == "T" else ""
                out.append(Item(slot, True, i, j, k, said, head=s.kind == "count" and s.source == "top n"))
            elif s.kind == "term":  # read whole: no cue reads inside a term of the field
                out.append(Item("<term>", False, i, j, k))
            elif s.kind == "pubkind" and i == j and lemma(ex.tokens[i].text) in _VENUE_KINDS:
                # "journals", "conferences": words the cues read ("which journal publishes …")
                out.append(Item(lemma(ex.tokens[i].text), False, i, i, form="=" + ex.tokens[i].low))
            i = j + 1
            continue
        named_with_it = t.text == "?" and out and out[-1].word == "P" and i + 1 < len(ex.tokens)
        if named_with_it and ex.tokens[i + 1].text.islower():
            i += 1  # "the papers that Thumbs Up? cites": the title's own question mark ends no clause
            continue
        parts = t.low.split("-") if t.is_word and _split_hyphened(t.low) else []
        if parts and lemma(t.text) not in _cue_words():
            # "most-cited", "highly-cited": the cues' words, hyphened ("well-cited", a cue word itself, stays whole)
            out.extend(Item(lemma(p), False, i, i, form="=" + p) for p in parts)
            i += 1
            continue
        if t.is_word or t.text in _CLAUSE or t.text in (",", "="):  # "=": "set k = 20" in the step patterns
            word = lemma(t.text)
            if word == "like" and i > 0 and ex.tokens[i - 1].low in _WANTING:
                word = "want"  # "I should like to see …", "we'd like papers on …": wanting, not similarity
            elif word == "no" and i + 1 < len(ex.tokens) and ex.tokens[i + 1].text in (",", "!", ".", ";"):
                word = "nope"  # "no, 7 is fine": a reply's interjection, not "no 7" (leave 7 out)
            out.append(Item(word, False, i, i, form="=" + t.low))
        i += 1
    return _without_authors_of_papers(out, ex)


def _without_authors_of_papers(items: list[Item], ex: Extracted) -> list[Item]:
    """ "resembling Pang and Lee's 'Thumbs up?'": the authors' possessive names the paper with it, so the cues read
    across it ("resembling P")."""
    drop: set[int] = set()
    for k, it in enumerate(items):
        if it.word != "P" or k == 0:
            continue
        j = k - 1
        index = items[j].span_index
        if not (items[j].word == "A" and index is not None and ex.spans[index].text.endswith("'s")):
            continue
        while j >= 0 and (
            items[j].word == "A" or (items[j].word in ("and", "&") and j > 0 and items[j - 1].word == "A")
        ):
            drop.add(j)
            j -= 1
    return [it for k, it in enumerate(items) if k not in drop]


def _match(
    items: list[Item],
    start: int,
    elements: tuple[tuple[str, ...], ...],
    optional: tuple[bool, ...],
    heads: bool = False,
) -> tuple[int, ...] | None:
    """Item positions matching ``elements`` from ``start`` (the first element must match there)."""
    pos: list[int] = []
    i = start
    for n, alts in enumerate(elements):
        limit = i + (0 if n == 0 else MAX_GAP) + 1
        found = None
        j = i
        while j < min(limit, len(items)):
            it = items[j]
            if it.word in _CLAUSE:
                break
            # a result on the list is a paper too; a one-word kind of paper is its word too
            if (
                it.word in alts
                or (it.word == "N" and "P" in alts)
                or (heads and it.head and "N" in alts)
                or (it.said and it.said in alts)
                or (it.form and it.form in alts)
            ):
                found = j
                break
            after_slot = bool(pos) and items[pos[-1]].slot
            if after_slot and it.word in _GAP_STOPS:
                break  # "BERT and also cites RoBERTa": no "BERT … cites" across the clauses
            j += 1
        if found is None:
            if optional[n]:
                continue
            return None
        pos.append(found)
        i = found + 1
    return tuple(pos)


# where "the first three" are those results, not a size: judged ("… aren't useful"), or the model for more
_HEAD_AS_RESULTS = frozenset({"ref:drop", "ref:more_like"})

# the cues that ask about a venue, a person or the list, where a kind of paper's word is the asking noun
_ASKING_ABOUT = ("ent:", "fact:")


@lru_cache(maxsize=1)
def _by_first_word() -> dict[str, tuple[int, ...]]:
    """The patterns (by position in the table) that can start at each word or slot: a message is matched against
    the few patterns its words can start, not against all of them."""
    _, patterns = _table()
    index: dict[str, list[int]] = defaultdict(list)
    for n, (_, _, elements, _, _) in enumerate(patterns):
        for w in elements[0]:
            # '=one' starts where the lemma 'one' does, '=citation' where 'cite' does; _match checks the form
            index[lemma(w[1:]) if w.startswith("=") else w].append(n)
    return {w: tuple(ns) for w, ns in index.items()}


def cue_hits(items: list[Item]) -> list[CueHit]:
    """Every pattern that matches, each at its first place (in the table's order)."""
    _, patterns = _table()
    index = _by_first_word()
    found: dict[int, CueHit] = {}
    for start, it in enumerate(items):
        for key in (it.word, it.said, "N" if it.head else ""):
            for n in index.get(key, ()) if key else ():
                if n in found:
                    continue
                label, phrase, elements, optional, fixed = patterns[n]
                if key is it.said and not label.startswith(_ASKING_ABOUT):
                    continue  # "an overview of COLT" asks about the venue; "no surveys" is no direction
                pos = _match(items, start, elements, optional, heads=label in _HEAD_AS_RESULTS)
                if pos is None:
                    continue
                slots = tuple(p for p in pos if items[p].slot)
                words = len(pos) - len(slots)
                weight = fixed or words + 0.5 * len(slots) + (0.5 if len(pos) > 1 else 0.0)
                found[n] = CueHit(label, phrase, weight, pos, slots)
    hits = [found[n] for n in sorted(found)]
    # a leaving-out phrase has the words it shares with a phrase starting after it: "no more Koehn papers" leaves
    # Koehn out, and its "more … papers" asks for no longer list
    hits = [h for h in hits if not any(g.label == "refine:exclude" != h.label and _claims(g, h) for g in hits)]
    return [h for h in hits if not _names_a_task(items, h)]


def _names_a_task(items: list[Item], h: CueHit) -> bool:
    """A one-word cue that is the first word of a task's name ("citation recommendation", "survey generation"):
    the subject's word, no cue (words.json's cue_modifiers and field_words)."""
    if len(h.items) != 1 or h.slots:
        return False
    k = h.items[0]
    nxt = items[k + 1] if k + 1 < len(items) else None
    return (
        items[k].form[1:] in word_set("cue_modifiers")
        and nxt is not None
        and not nxt.slot
        and nxt.form[1:] in word_set("field_words")
    )


def _claims(g: CueHit, h: CueHit) -> bool:
    """``g`` has a word of ``h`` and starts before it."""
    shared = (set(g.items) - set(g.slots)) & (set(h.items) - set(h.slots))
    return bool(shared) and g.items[0] < h.items[0]


def votes(hits: list[CueHit]) -> dict[str, float]:
    """Each label's strongest vote (a phrase and its sub-phrases do not add up)."""
    out: dict[str, float] = defaultdict(float)
    for h in hits:
        out[h.label] = max(out[h.label], h.weight)
    return dict(out)


def best(hits: list[CueHit], prefix: str) -> tuple[str | None, float, float]:
    """The winning label with this prefix, its vote and the runner-up's."""
    scored = sorted(((v, k) for k, v in votes([h for h in hits if h.label.startswith(prefix)]).items()), reverse=True)
    if not scored:
        return None, 0.0, 0.0
    top = scored[0]
    second = scored[1][0] if len(scored) > 1 else 0.0
    return top[1], top[0], second


def covered_tokens(items: list[Item], hits: list[CueHit]) -> set[int]:
    """Tokens the cues' words cover (their slots are the spans', not the cue's)."""
    out: set[int] = set()
    for h in hits:
        for p in h.items:
            if not items[p].slot:
                out.update(range(items[p].first_token, items[p].last_token + 1))
    return out


def describe(hits: list[CueHit]) -> list[dict[str, Any]]:
    return [{"label": h.label, "pattern": h.pattern, "weight": h.weight} for h in hits]
