"""Venues as researchers name them: one name per conference, whatever the record spells.

The corpus and the APIs spell the same conference many ways ("Annual Meeting Of The Association For
Computational Linguistics", "Proceedings of the 49th Annual Meeting of the Association for Computational
Linguistics: Human Language Technologies", "ACL"), and the ACL Anthology id says it best (``P05-…`` is ACL).
Findings papers are published alongside a conference but are not its main track: "Findings of EMNLP" is a
venue of its own, and "EMNLP" does not include it. The venues themselves (acronyms, spelled-out names, which
anthology id letter is which conference, research communities) are the domain profile's (``pilot.domain``).

    venue_of(paper)            # "ACL", "Findings of EMNLP", "CoNLL", "NeurIPS", or the record's own venue string
    at_venue(paper, "acl")     # the paper appeared at the ACL main conference
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cache

from pilot.domain import profile
from pilot.models import Paper


@dataclass(frozen=True)
class _Tables:
    """The domain profile's venues, arranged for reading venue strings (built once)."""

    long_names: tuple[tuple[str, str], ...]  # spelled-out name -> label, longest first (the most specific wins)
    whole_names: dict[str, str]  # names that count only as the whole venue field ("computational linguistics")
    by_upper: dict[str, str]  # an acronym in capitals -> its label ("NEURIPS" -> "NeurIPS", "ACL" -> "ACL")
    key_of: dict[str, str]  # an acronym in capitals -> the venue's identity ("NIPS" and "NEURIPS" -> "nips")
    communities: dict[str, frozenset[str]]  # research community -> the venue keys in it


@cache
def _tables() -> _Tables:
    domain = profile()
    long_names = sorted(
        ((name, v.label) for v in domain.venues if not v.whole_field for name in v.names), key=lambda t: -len(t[0])
    )
    whole = {name: v.label for v in domain.venues if v.whole_field for name in v.names}
    by_upper: dict[str, str] = {}
    key_of: dict[str, str] = {}
    for v in domain.venues:
        for form in (v.key, *v.aliases, v.label):
            by_upper.setdefault(form.upper(), v.label)
            key_of.setdefault(form.upper(), v.key)
    for name in domain.request_venues:  # acronyms the profile has no entry for (TACL, SemEval, WMT)
        if " " not in name:
            by_upper.setdefault(name.upper(), name)
            key_of.setdefault(name.upper(), name.lower())
    return _Tables(
        long_names=tuple(long_names),
        whole_names=whole,
        by_upper=by_upper,
        key_of=key_of,
        communities={c: frozenset(keys) for c, keys in domain.communities.items()},
    )


def field_of(venue: str | None) -> str | None:
    """The research community of a venue name ("EMNLP" -> "NLP"; Findings go with their conference)."""
    name = venue_name(venue)
    if not name:
        return None
    key = _key(name.removeprefix("Findings of "))
    return next((f for f, keys in _tables().communities.items() if key in keys), None)


def _fold(text: str | None) -> str:
    text = unicodedata.normalize("NFKD", text or "")
    return " ".join("".join(c for c in text if not unicodedata.combining(c)).lower().split())


def _key(name: str) -> str:
    """The venue's identity: its profile key for a known acronym ("NeurIPS" -> "nips"), else the name folded."""
    return _tables().key_of.get(name.upper(), name.lower())


def venue_name(text: str | None) -> str | None:
    """The name researchers use for a venue string: an acronym when the string is (or spells out) a known
    conference, else the string itself, tidied. Findings keep their "Findings of" prefix."""
    raw = " ".join((text or "").split())
    if not raw:
        return None
    tables = _tables()
    findings = "findings" in raw.lower()
    low = _fold(raw)
    name = tables.by_upper.get(raw.upper()) or tables.whole_names.get(low)
    if name is None:
        name = next((label for long, label in tables.long_names if long in low), None)
    if name is None and findings:
        # "Findings of the Association for Computational Linguistics: EMNLP 2021", "findings-acl"
        m = re.search(
            r"\b(" + "|".join(re.escape(a) for a in sorted(tables.by_upper, key=len, reverse=True)) + r")\b",
            raw,
            re.IGNORECASE,
        )
        name = tables.by_upper[m.group(1).upper()] if m else tables.by_upper.get("ACL", "ACL")
    if name is None:
        return raw
    return f"Findings of {name}" if findings else name


def is_findings(paper: Paper) -> bool:
    return "findings" in f"{paper.id} {paper.url or ''} {paper.venue or ''}".lower()


def venue_of(paper: Paper) -> str | None:
    """Where the paper appeared, as researchers name it (an anthology's id decides for its papers)."""
    venue = " ".join((paper.venue or "").split())
    domain = profile()
    anthology = domain.anthology_of(paper.id)
    if anthology is not None and len(paper.id) > len(anthology.id_prefix):
        letter = paper.id[len(anthology.id_prefix)]
        # the letter names the venue ("P" is ACL); a workshop letter only with the venue field's word ("CoNLL")
        by_letter = anthology.venue_by_letter.get(letter)
        in_field = [k for k in anthology.venue_in_field.get(letter, ()) if k in venue.lower()]
        for key in [by_letter, *in_field] if by_letter else in_field:
            v = domain.venue(key)
            if v is not None:
                return v.label
        return venue or None
    name = venue_name(venue) or (None if not is_findings(paper) else "Findings of ACL")
    if name and is_findings(paper) and not name.startswith("Findings"):
        name = f"Findings of {name}"
    return name


def same_venue(a: str | None, b: str | None) -> bool:
    """Two venue names for the same venue ("NeurIPS" = "NIPS", "acl" = "ACL"); Findings differ from the main track."""
    if not a or not b:
        return False
    na, nb = venue_name(a) or a, venue_name(b) or b
    fa, fb = na.startswith("Findings of "), nb.startswith("Findings of ")
    if fa != fb:
        return False
    return _key(na.removeprefix("Findings of ")) == _key(nb.removeprefix("Findings of "))


def known(name: str | None) -> bool:
    """A venue name the profile knows (an acronym or a spelled-out conference), so matching can be exact."""
    found = venue_name(name)
    return found is not None and found.removeprefix("Findings of ").upper() in _tables().by_upper


def at_venue(paper: Paper, wanted: str) -> bool:
    """The paper appeared at ``wanted``: the same venue when ``wanted`` is a known conference (so "ACL" is the
    main conference, not NAACL, not Findings of ACL), else ``wanted`` word for word in the venue string."""
    if known(wanted):
        return same_venue(venue_of(paper), wanted)
    hay = _fold(paper.venue)
    words = _fold(wanted)
    return bool(hay) and bool(words) and re.search(rf"(?<![\w-]){re.escape(words)}(?![\w-])", hay) is not None
