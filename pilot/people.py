"""People as researchers name them: one person under several spellings, two people under one.

"Christopher Manning", "Christopher D. Manning" and "Manning, Christopher D." are one researcher; records
keep them apart because their strings differ. ``variant`` says when two spellings *could* be one person
(same surname, same first name or its initial, middle names that do not contradict); ``same_person`` decides
from what the profiles show — shared coauthors, or the same venues and topics — so that two different
people whose names happen to be variants ("Ming Yang" and "Ming-Hsuan Yang") stay apart.

Measured on the corpus by ``scripts/name_variants.py`` (synthetic splits of one person's papers under two
spellings, and synthetic homonyms: another person's papers renamed to a variant of someone's name).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from pilot.models import Author
from pilot.venues import field_of

_SUFFIXES = {"jr", "sr", "ii", "iii", "iv"}
MIN_SHARED_TOPICS = 3  # with no venue known: this many shared frequent title words make one person


def _fold(text: str | None) -> str:
    text = unicodedata.normalize("NFKD", text or "")
    return "".join(c for c in text if not unicodedata.combining(c)).lower()


@dataclass(frozen=True)
class NameParts:
    given: tuple[str, ...]  # first name, then middle names or initials
    last: str

    @property
    def first(self) -> str:
        return self.given[0] if self.given else ""


def name_parts(name: str | None) -> NameParts:
    """ "Christopher D. Manning" / "Manning, Christopher D." -> given ("christopher", "d"), last "manning"."""
    text = _fold(name)
    if text.count(",") == 1:
        last, first = (p.strip() for p in text.split(","))
        if first and first.replace(".", "") not in _SUFFIXES:
            text = f"{first} {last}"
    words = [w for w in re.split(r"[\s.,]+", text) if w]
    while len(words) > 2 and words[-1] in _SUFFIXES:
        words.pop()
    if not words:
        return NameParts((), "")
    # a hyphenated given name stays one name ("ming-hsuan" is not "ming")
    return NameParts(tuple(words[:-1]), words[-1])


# Short forms people go by that are not the start of the full name ("Chris" and "Dan" are, and need no entry)
_NICKNAMES = {
    "mike": "michael", "bob": "robert", "rob": "robert", "bill": "william", "will": "william", "jim": "james",
    "rick": "richard", "dick": "richard", "tony": "anthony", "kate": "katherine", "liz": "elizabeth",
    "beth": "elizabeth", "peggy": "margaret", "ted": "edward", "ned": "edward", "chuck": "charles",
}  # fmt: skip


def _same_first(fa: str, fb: str) -> bool:
    """Equal; one the other's initial ("C. Manning"); or one a short form of the other ("Chris", "Mike")."""
    short, full = sorted((fa, fb), key=len)
    if short == full or (len(short) == 1 and full.startswith(short)):
        return True
    return (len(short) >= 3 and full.startswith(short)) or _NICKNAMES.get(short) == full


def _given_compatible(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    if not a or not b:
        return True
    flat_a, flat_b = " ".join(a).replace("-", " ").split(), " ".join(b).replace("-", " ").split()
    if flat_a == flat_b:
        return True
    if not _same_first(a[0], b[0]):
        return False
    ma, mb = a[1:], b[1:]
    if not ma or not mb:
        return True
    # middle names: initials must agree as far as both go ("H. S." ~ "H.S." ~ "Hugh")
    return all(x[0] == y[0] for x, y in zip(ma, mb, strict=False))


def variant(a: str | None, b: str | None) -> bool:
    """Could the two spellings name one person? (Same surname; first names and middle initials agree.)"""
    pa, pb = name_parts(a), name_parts(b)
    return bool(pa.last) and pa.last == pb.last and _given_compatible(pa.given, pb.given)


def _key(name: str) -> str:
    p = name_parts(name)
    return f"{p.first} {p.last}"


def _main_field(a: Author) -> str | None:
    """The research community of the record's most frequent venue that has one (venues come most frequent first)."""
    return next((f for f in map(field_of, a.venues) if f), None)


def same_person(a: Author, b: Author) -> tuple[bool, str]:
    """Whether two author records with variant names are one person, and why (read from their profiles).

    Variants are one person unless what they publish separates them: no coauthor in common, and their main
    research communities (by venue: NLP, ML, vision, …) differ without shared topics. Records decades apart
    share no coauthors (students change) but still publish in the same community; a homonym in another field
    does not. Two people of one field with no coauthor in common cannot be told apart this way."""
    others = {_key(a.name), _key(b.name)}
    shared = sorted(({_key(c) for c in a.coauthors} & {_key(c) for c in b.coauthors}) - others)
    if shared:
        return True, f"they share coauthors ({', '.join(shared[:3])})"
    topics = sorted(set(a.topics) & set(b.topics))
    field_a, field_b = _main_field(a), _main_field(b)
    if field_a and field_b:
        if field_a == field_b:
            return True, f"both publish mainly at {field_a} venues"
        if len(topics) >= MIN_SHARED_TOPICS - 1:
            return True, f"the same topics ({', '.join(topics[:3])}) across {field_a} and {field_b} venues"
        return False, f"no shared coauthors, and different fields ({field_a} vs {field_b})"
    if len(topics) >= MIN_SHARED_TOPICS:
        return True, f"the same topics ({', '.join(topics[:3])})"
    return False, "no shared coauthors, venues or topics to tell they are one person"
