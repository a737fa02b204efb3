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
