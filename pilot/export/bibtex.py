"""BibTeX for classic ``bibtex`` as well as biber, written by bibtexparser: LaTeX specials are escaped
with commands that keep braces balanced (BibTeX counts ``\\{`` as a brace too), accented Latin letters
become accent commands, anything else non-ASCII stays UTF-8, and keys are pure ASCII. The entry type and
the venue's full name come from :func:`pilot.publication.publication`.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Iterable, Sequence

import bibtexparser
from bibtexparser.model import Entry, Field

from pilot.models import Paper
from pilot.publication import publication

# --- LaTeX escaping ---------------------------------------------------------------------------

# Brace-producing escapes use \text... commands so that a lone "{" in a title cannot unbalance the entry.
_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "{": r"\textbraceleft{}",
    "}": r"\textbraceright{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
}

# combining mark -> LaTeX accent command
_ACCENTS = {
    "\u0300": "`", "\u0301": "'", "\u0302": "^", "\u0303": "~", "\u0304": "=", "\u0306": "u",
    "\u0307": ".", "\u0308": '"', "\u030a": "r", "\u030b": "H", "\u030c": "v", "\u0327": "c",
    "\u0328": "k", "\u0323": "d",
}  # fmt: skip

# letters with no decomposition but a standard LaTeX command
_LETTERS = {
    "ß": r"{\ss}", "æ": r"{\ae}", "Æ": r"{\AE}", "ø": r"{\o}", "Ø": r"{\O}", "å": r"{\aa}", "Å": r"{\AA}",
    "œ": r"{\oe}", "Œ": r"{\OE}", "ł": r"{\l}", "Ł": r"{\L}", "ı": r"{\i}",
    "–": "--", "—": "---", "‘": "`", "’": "'", "“": "``", "”": "''",
}  # fmt: skip


def _latex_char(ch: str) -> str:
    if ch in _LATEX_SPECIALS:
        return _LATEX_SPECIALS[ch]
    if ord(ch) < 128:
        return ch
    if ch in _LETTERS:
        return _LETTERS[ch]
    decomposed = unicodedata.normalize("NFD", ch)
    base, marks = decomposed[0], decomposed[1:]
    if len(marks) == 1 and marks in _ACCENTS and ord(base) < 128 and base.isalpha():
        # dotless i/j under an accent, as LaTeX expects
        base = {"i": r"\i", "j": r"\j"}.get(base, base)
        cmd = _ACCENTS[marks]
        if cmd.isalpha() or base.startswith("\\"):  # \c{c}, \'{\i}: the argument needs braces
            return "{\\" + cmd + "{" + base + "}}"
        return "{\\" + cmd + base + "}"
    return ch  # CJK, Greek, …: kept as UTF-8, which biber and inputenc read


def latex_escape(text: str) -> str:
    """Plain text (possibly with HTML entities) as a LaTeX-safe string with balanced braces."""
    text = unicodedata.normalize("NFC", html.unescape(text or ""))
    text = re.sub(r"\s+", " ", text).strip()
    return "".join(_latex_char(c) for c in text)


def _protect_caps(escaped: str) -> str:
    # Bibliography styles lower-case titles; braces keep acronyms and CamelCase words (BLEU, WordNet) as written.
    def wrap(m: re.Match) -> str:
        word = m.group(0)
        return "{" + word + "}" if sum(c.isupper() for c in word[1:]) else word

    return re.sub(r"(?<![\\\w])[A-Za-z][A-Za-z0-9]*[A-Z][A-Za-z0-9]*", wrap, escaped)


# --- keys -------------------------------------------------------------------------------------

_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "on",
        "of",
        "in",
        "for",
        "to",
        "and",
        "or",
        "with",
        "from",
        "by",
        "at",
        "as",
        "is",
        "are",
        "via",
        "using",
        "towards",
        "toward",
        "into",
        "about",
    ]
)


# Latin letters that have no Unicode decomposition, so NFKD alone would drop them from keys.
_ASCII_FOLD = str.maketrans({"ß": "ss", "æ": "ae", "Æ": "AE", "ø": "o", "Ø": "O", "œ": "oe", "Œ": "OE",
                             "ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "ð": "d", "Ð": "D", "þ": "th", "Þ": "Th",
                             "ı": "i"})  # fmt: skip


def _ascii(text: str) -> str:
    text = unicodedata.normalize("NFKD", html.unescape(text or "").translate(_ASCII_FOLD))
    return "".join(c for c in text if ord(c) < 128)


def _last_name(name: str) -> str:
    name = name.strip()
    if "," in name:  # "Amble, Tore"
        return name.split(",", 1)[0]
    parts = name.split()
    return parts[-1] if parts else ""


def base_key(paper: Paper) -> str:
    """``lastname2008firstword``: first author's last name, year, first significant title word (ASCII). With no
    author the title leads instead (``building1993large``), as reference managers do: a key says what it is,
    never "anon"."""
    names = [a.name for a in paper.authors if a.name and a.name.strip()]
    last = re.sub(r"[^a-z]", "", _ascii(_last_name(names[0])).lower()) if names else ""
    words = re.findall(r"[a-z0-9]+", _ascii(paper.title).lower())
    significant = [w for w in words if w not in _STOPWORDS] or words
    if not last and significant:
        last, significant = significant[0], significant[1:]
    key = f"{last}{paper.year or ''}{significant[0] if significant else ''}"
    return key if key and not key[0].isdigit() else f"paper{key}"


def bibtex_keys(papers: Sequence[Paper]) -> dict[str, str]:
    """paper id -> unique key. On a collision the paper with the smallest id keeps the bare key and the
    others get ``a``, ``b``… in id order, so the same set of papers always gets the same keys."""
    by_base: dict[str, list[Paper]] = {}
    for p in papers:
        by_base.setdefault(base_key(p), []).append(p)
    taken = set(by_base)
    keys: dict[str, str] = {}
    for base, group in by_base.items():
        suffixes = iter(_suffixes())
        for i, p in enumerate(sorted(group, key=lambda q: q.id)):
            if i == 0:
                keys[p.id] = base
                continue
            key = base + next(suffixes)
            while key in taken:  # "smith2008a" + "b" could equal another paper's bare key
                key = base + next(suffixes)
            taken.add(key)
            keys[p.id] = key
    return keys


def _suffixes() -> Iterable[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    for a in letters:
        yield a
    for a in letters:
        for b in letters:
            yield a + b


# --- BibTeX -----------------------------------------------------------------------------------

_BIBTEX_TYPES = {
    "conference": "inproceedings",
    "workshop": "inproceedings",
    "journal": "article",
    "preprint": "article",
}


def _author_field(paper: Paper) -> str:
    names = []
    for a in paper.authors:
        name = re.sub(r"\s+", " ", html.unescape(a.name or "")).strip()
        if not name:
            continue
        if re.search(r"\band\b", name, flags=re.IGNORECASE):
            # a consortium name containing "and" must not be split into two authors
            names.append("{" + latex_escape(name) + "}")
        elif "," in name:
            names.append(latex_escape(name))
        else:
            parts = name.split()
            names.append(latex_escape(parts[-1] + (", " + " ".join(parts[:-1]) if len(parts) > 1 else "")))
    return " and ".join(names)


def _url_field(url: str) -> str:
    # \url-style fields take the raw string; only characters that would break the entry are escaped
    return url.replace("{", "%7B").replace("}", "%7D").replace(" ", "%20")


def bibtex_fields(paper: Paper) -> tuple[str, list[tuple[str, str]]]:
    """(entry type, fields) of a paper. The type follows where it appeared (see ``pilot.venues``), never
    whether the source listed its authors: a conference paper is ``@inproceedings`` with the full
    proceedings name, a journal paper ``@article``, an arXiv preprint ``@article`` in "arXiv preprint …";
    only a paper whose venue nobody recorded is ``@misc``."""
    pub = publication(paper)
    kind = _BIBTEX_TYPES.get(pub.kind, "misc")
    fields: list[tuple[str, str]] = [("title", _protect_caps(latex_escape(paper.title)))]
    if authors := _author_field(paper):
        fields.append(("author", authors))
    if pub.container:
        name = {"inproceedings": "booktitle", "article": "journal"}.get(kind, "howpublished")
        fields.append((name, latex_escape(pub.container)))
    if pub.publisher and kind == "inproceedings":
        fields.append(("publisher", latex_escape(pub.publisher)))
    if paper.year:
        fields.append(("year", str(paper.year)))
    if paper.doi:
        fields.append(("doi", latex_escape(paper.doi)))
    if pub.arxiv_id:
        fields += [("eprint", latex_escape(pub.arxiv_id)), ("archiveprefix", "arXiv")]
    if pub.url:
        fields.append(("url", _url_field(pub.url)))
    fields.append(("note", "pilot id: " + latex_escape(paper.id)))
    return kind, fields


def bibtex_entry(paper: Paper, key: str) -> str:
    return to_bibtex_entries([(paper, key)])


def to_bibtex_entries(papers_keys: Sequence[tuple[Paper, str]]) -> str:
    library = bibtexparser.Library()
    for paper, key in papers_keys:
        kind, fields = bibtex_fields(paper)
        library.add(Entry(kind, key, [Field(name, value) for name, value in fields]))
    return bibtexparser.write_string(library)


def to_bibtex(papers: Sequence[Paper]) -> str:
    """A .bib file for ``papers`` (in the given order), with unique, stable keys; written by bibtexparser."""
    unique = list({p.id: p for p in papers}.values())
    keys = bibtex_keys(unique)
    return to_bibtex_entries([(p, keys[p.id]) for p in unique])
