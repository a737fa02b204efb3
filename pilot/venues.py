"""Venues as researchers name them: one name per conference, whatever the record spells.

The corpus and the APIs spell the same conference many ways ("Annual Meeting Of The Association For
Computational Linguistics", "Proceedings of the 49th Annual Meeting of the Association for Computational
Linguistics: Human Language Technologies", "ACL"), and the ACL Anthology id says it best (``P05-…`` is ACL).
Findings papers are published alongside a conference but are not its main track: "Findings of EMNLP" is a
venue of its own, and "EMNLP" does not include it.

    venue_of(paper)            # "ACL", "Findings of EMNLP", "CoNLL", "NIPS", or the record's own venue string
    at_venue(paper, "acl")     # the paper appeared at the ACL main conference
"""

from __future__ import annotations

import re
import unicodedata

from pilot.models import Paper

# ACL Anthology id prefix -> venue (how the anthology, and the benchmark, name venues).
ACL_PREFIX = {"P": "ACL", "D": "EMNLP", "N": "NAACL", "C": "COLING", "E": "EACL", "J": "CL", "L": "LREC", "H": "HLT"}
# Spelled-out names -> the acronym researchers use; longest first so the most specific name wins.
LONG_NAMES: tuple[tuple[str, str], ...] = (
    ("north american chapter of the association for computational linguistics", "NAACL"),
    ("north american association for computational linguistics", "NAACL"),
    ("european chapter of the association for computational linguistics", "EACL"),
    ("european association for computational linguistics", "EACL"),
    ("annual meeting of the association for computational linguistics", "ACL"),
    ("annual meeting of the association of computational linguistics", "ACL"),
    ("empirical methods in natural language processing", "EMNLP"),
    ("international conference on computational linguistics", "COLING"),
    ("computational natural language learning", "CoNLL"),
    ("language resources and evaluation", "LREC"),
    ("neural information processing systems", "NIPS"),
    ("international conference on machine learning", "ICML"),
    ("international conference on learning representations", "ICLR"),
    ("computer vision and pattern recognition", "CVPR"),
    ("international conference on computer vision", "ICCV"),
    ("european conference on computer vision", "ECCV"),
    ("knowledge discovery and data mining", "KDD"),
    ("aaai conference on artificial intelligence", "AAAI"),
    ("international joint conference on artificial intelligence", "IJCAI"),
    ("world wide web", "WWW"),
)
# Names that mean the same venue (the conference was renamed).
SAME = {"NEURIPS": "NIPS"}
ACRONYMS = frozenset({*ACL_PREFIX.values(), *(a for _, a in LONG_NAMES), "NeurIPS", "TACL", "SemEval", "WMT"})
_BY_UPPER = {a.upper(): a for a in ACRONYMS}


# Research communities by venue: two records of a name publishing in disjoint communities are two people.
FIELDS: dict[str, frozenset[str]] = {
    "NLP": frozenset("ACL NAACL EMNLP EACL COLING CONLL LREC CL TACL HLT SEMEVAL WMT IJCNLP AACL ANLP COLM".split()),
    "ML": frozenset("NIPS ICML ICLR AISTATS UAI COLT ACML JMLR AUTOML".split()),
    "CV": frozenset("CVPR ICCV ECCV WACV 3DV BMVC MICCAI".split()),
    "AI": frozenset("AAAI IJCAI".split()),
    "Robotics": frozenset("RSS CORL ICRA IROS".split()),
    "IR and data mining": frozenset("SIGIR KDD WWW WSDM CIKM ICDE ICDM SDM VLDB SIGMOD".split()),
    "Speech": frozenset("INTERSPEECH ICASSP".split()),
}


def field_of(venue: str | None) -> str | None:
    """The research community of a venue name ("EMNLP" -> "NLP"; Findings go with their conference)."""
    name = venue_name(venue)
    if not name:
        return None
    key = _key(name.removeprefix("Findings of "))
    return next((f for f, names in FIELDS.items() if key in names), None)


def _fold(text: str | None) -> str:
    text = unicodedata.normalize("NFKD", text or "")
    return " ".join("".join(c for c in text if not unicodedata.combining(c)).lower().split())


def _key(name: str) -> str:
    up = name.upper()
    return SAME.get(up, up)


def venue_name(text: str | None) -> str | None:
    """The name researchers use for a venue string: an acronym when the string is (or spells out) a known
    conference, else the string itself, tidied. Findings keep their "Findings of" prefix."""
    raw = " ".join((text or "").split())
    if not raw:
        return None
    findings = "findings" in raw.lower()
    low = _fold(raw)
    name = _BY_UPPER.get(raw.upper())
    if name is None:
        name = next((acr for long, acr in LONG_NAMES if long in low), None)
    if name is None and findings:
        # "Findings of the Association for Computational Linguistics: EMNLP 2021", "findings-acl"
        m = re.search(
            r"\b(" + "|".join(re.escape(a) for a in sorted(ACRONYMS, key=len, reverse=True)) + r")\b",
            raw,
            re.IGNORECASE,
        )
        name = _BY_UPPER.get(m.group(1).upper()) if m else "ACL"
    if name is None:
        return raw
    return f"Findings of {name}" if findings else name


def is_findings(paper: Paper) -> bool:
    return "findings" in f"{paper.id} {paper.url or ''} {paper.venue or ''}".lower()


def venue_of(paper: Paper) -> str | None:
    """Where the paper appeared, as researchers name it (the ACL Anthology id decides for anthology papers)."""
    venue = " ".join((paper.venue or "").split())
    if paper.id.startswith("acl:") and len(paper.id) > 4:
        letter = paper.id[4]
        if letter == "W" and "conll" in venue.lower():
            return "CoNLL"
        return ACL_PREFIX.get(letter) or venue or None
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
    """A venue name the table knows (an acronym or a spelled-out conference), so matching can be exact."""
    found = venue_name(name)
    return bool(found) and (found.removeprefix("Findings of ") in ACRONYMS)


def at_venue(paper: Paper, wanted: str) -> bool:
    """The paper appeared at ``wanted``: the same venue when ``wanted`` is a known conference (so "ACL" is the
    main conference, not NAACL, not Findings of ACL), else ``wanted`` word for word in the venue string."""
    if known(wanted):
        return same_venue(venue_of(paper), wanted)
    hay = _fold(paper.venue)
    words = _fold(wanted)
    return bool(hay) and bool(words) and re.search(rf"(?<![\w-]){re.escape(words)}(?![\w-])", hay) is not None
