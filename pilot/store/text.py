"""The corpus's own text conventions: "Last, First" names, entity ids, joined affiliations, bm25s tokens.

Corpus strings carry HTML entities (``Haji&#x10D;, Jan``) and AAN names come as "Last, First";
users type "Jan Hajic". Everything searchable goes through ``pilot.text.fold`` so accents and order do
not matter, in the build and in its queries alike.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from pilot.text import TITLE_STOPWORDS, fold, slugify, snowball, unescape

_NAME_SUFFIXES = {"jr", "jr.", "sr", "sr.", "ii", "iii", "iv"}
_WORD = re.compile(r"[^\W_]{3,}", re.UNICODE)


def display_name(raw: str | None) -> str:
    """ "Haji&#x10D;, Jan" -> "Jan Hajič"; names without a single "Last, First" comma are kept."""
    name = unescape(raw).strip(" ,")
    parts = [p.strip() for p in name.split(",")]
    if len(parts) == 2 and parts[0] and parts[1] and parts[1].lower() not in _NAME_SUFFIXES:
        return f"{parts[1]} {parts[0]}"
    return name


def author_id(name: str) -> str:
    return "author:" + slugify(fold(name))


def venue_id(name: str) -> str:
    return "venue:" + slugify(fold(name))


def org_id(name: str) -> str:
    return "org:" + slugify(fold(name))


def split_affiliation(raw: str | None) -> list[str]:
    """Paper-list affiliations join several institutions with '+' or ';' ("University of Oxford+Google")."""
    text = unescape(raw)
    return [p.strip() for p in re.split(r"[+;]", text) if p.strip()] if text else []


# the part of an affiliation that names the institution, not the department or the town around it
_SCHOOL = re.compile(
    r"\b(?:univ|universit|universidad|universidade|école|ecole|polytechnic|politecnico|institute of technology|"
    r"technische hochschule|hochschule)",
    re.I,
)
_SUBUNIT = re.compile(
    r"^(?:the )?(?:(?:state |national )?key lab|lab\b|laborator|department|dept\b|school\b|faculty|college of|"
    r"division|centre|center|chair\b|group\b|program|section|unit\b)",
    re.I,
)
# systems whose campuses are separate institutions: "University of California, Berkeley"
_SYSTEM = re.compile(
    r"^(?:the )?university of (?:california|massachusetts|maryland|north carolina|texas|illinois|wisconsin|colorado)$",
    re.I,
)


def institution(affiliation: str) -> str:
    """ "College of Computing, Tianjin University, Tianjin, China" -> "Tianjin University": one name per
    institution, so its departments and addresses count together. A university named anywhere in it wins;
    otherwise leading sub-units (departments, labs, schools) are skipped."""
    parts = [p.strip() for p in affiliation.split(",") if p.strip()]
    if not parts:
        return affiliation.strip()
    for i, part in enumerate(parts):
        if _SCHOOL.search(part) and not _SUBUNIT.match(part):
            if _SYSTEM.match(part) and i + 1 < len(parts) and len(parts[i + 1].split()) <= 3:
                return f"{part}, {parts[i + 1]}"
            return part
    return next((p for p in parts if not _SUBUNIT.match(p)), parts[0])


def title_terms(title: str) -> list[str]:
    return [w for w in _WORD.findall(fold(title)) if w not in TITLE_STOPWORDS and not w.isdigit()]


def top(counter: Counter, n: int) -> list[str]:
    return [k for k, _ in counter.most_common(n)]


def lexical_tokens(texts: Iterable[str], progress: bool = False) -> list[list[str]]:
    """bm25s tokens (stop words out, Snowball-stemmed) of accent-folded text."""
    import bm25s

    return bm25s.tokenize(
        [fold(t) for t in texts], stopwords="en", stemmer=snowball(), return_ids=False, show_progress=progress
    )
