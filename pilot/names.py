"""How researchers name papers: by the system, model, metric or resource a paper introduced.

"GloVe" is "GloVe: Global Vectors for Word Representation", "the Penn Treebank" is "Building a Large
Annotated Corpus of English: The Penn Treebank", "the Transformer" is the paper whose abstract says "we
propose a new simple network architecture, the Transformer". A paper *introduces* a name when its title
is built around it (``X: …``, ``… : The X``, ``The Berkeley X Project``, or just ``X``) or its abstract
defines it ("called X", "we introduce X", "…, the X, …"). Papers that merely use the name ("X-based …",
"Improving X") do not.

Used by the sources (which papers introduce a name) and by the session (which of them is meant).
"""

from __future__ import annotations

import re
from functools import lru_cache

from pilot.models import Paper
from pilot.text import normalize_title

TITLE, ABSTRACT = 2, 1  # how strongly a paper is shown to introduce a name
_INTRO = r"(?:propose|introduce|present|describe|release|develop|build|create|construct)s?"
# In-corpus citation counts (ACL Anthology Network) sample a paper's citations: BLEU has 586 in the corpus and
# ~25k overall, the Penn Treebank 770 and ~10k. Scaled by this they compare with citation counts from elsewhere.
IN_CORPUS_SCALE = 20
_KINDS = (
    r"project|corpus|corpora|treebank|bank|toolkit|toolbox|dataset|data set|database|system|framework|model|"
    r"benchmark|resource|lexicon|package|library|platform|tool|metric|challenge|shared task"
)


def impact(paper: Paper) -> float:
    """Citations on one scale: the source's count where known, else in-corpus citations scaled up."""
    if paper.citation_count is not None and paper.citation_count > 0:
        return float(paper.citation_count)
    return float((paper.in_corpus_citations or 0) * IN_CORPUS_SCALE)


@lru_cache(maxsize=512)
def _name_rx(name: str) -> str:
    """The name as a pattern: case-insensitive, spaces and hyphens interchangeable ("R-CNN" ~ "R CNN")."""
    parts = [re.escape(p) for p in re.split(r"[\s\-]+", name.strip()) if p]
    return r"[\s\-]*".join(parts)


@lru_cache(maxsize=512)
def _title_patterns(name: str) -> tuple[re.Pattern, ...]:
    n = _name_rx(name)
    end = r"(?![\w\-+])"
    return (
        # "GloVe: …", "Mask R-CNN", "The Penn Discourse TreeBank 2.0."
        re.compile(
            rf"^\s*(?:the\s+)?(?P<n>{n}){end}(?:\s+v?\d+(?:\.\d+)*\.?)?\s*(?::(?!:)|\s[-–—]\s|\s*$)", re.IGNORECASE
        ),
        # "Building a Large … of English: The Penn Treebank"
        re.compile(rf":\s*(?:the\s+)?(?P<n>{n}){end}\s*$", re.IGNORECASE),
        # "The Berkeley FrameNet Project"
        re.compile(rf"^\s*the\s+(?:[\w\-]+\s+){{0,2}}(?P<n>{n}){end}\s+(?:{_KINDS})\b", re.IGNORECASE),
    )


def distinctive(span: str) -> bool:
    """Written like a name, not an ordinary word: FrameNet, ROUGE, R-CNN, "Penn Treebank" (not "Discourse")."""
    words = [w for w in re.split(r"[\s]+", span.strip()) if w]
    if any(any(c.isupper() for c in w[1:]) or any(c.isdigit() for c in w) for w in words):
        return True
    return len(words) >= 2 and all(w[:1].isupper() for w in words)


@lru_cache(maxsize=512)
def _abstract_patterns(name: str) -> tuple[re.Pattern, ...]:
    n = _name_rx(name)
    # not "a framework called Word2vec + CNN": there the name is one part of what the paper made
    end = r"(?![\w\-+])(?!\s*[+&]\s*[\w(])"
    return (
        re.compile(
            rf"\b(?:called|named|dubbed|termed|coined)\s+(?:it\s+)?(?:the\s+|a\s+|an\s+)?[\"“']?{n}{end}", re.IGNORECASE
        ),
        re.compile(
            rf"\b(?:we|this paper|this work|here we)\s+(?:[\w\-]+\s+){{0,2}}?(?:propose|introduce|present|describe|"
            rf"release|develop|build|create|construct)s?\s+(?:here\s+)?(?:the\s+|a\s+|an\s+)?(?:new\s+|novel\s+)?"
            # not "we present a new Long Short-Term Memory (LSTM) model": there the name only qualifies a noun
            rf"[\"“']?{n}{end}(?!\s*\()(?!\s+(?:model|network|layer|unit|cell|architecture|based|module|approach)s?\b)",
            re.IGNORECASE,
        ),
        # "a new simple network architecture, the Transformer, based solely on attention"
        re.compile(
            rf"\b(?:architecture|model|method|framework|network|system|dataset|corpus|benchmark|toolkit|metric|"
            rf"resource|approach|algorithm|package|tool|measure)s?\s*,\s*(?:the|called)\s+{n}{end}\s*[,(]",
            re.IGNORECASE,
        ),
        # "we introduce the Bi-Directional Attention Flow (BIDAF) network"
        re.compile(
            rf"\b(?:we|this paper|this work)\s[^.]{{0,80}}?{_INTRO}\s[^.]{{0,120}}?\(\s*{n}\s*\)", re.IGNORECASE
        ),
    )


def title_introduces(title: str | None, name: str) -> bool:
    """The title is built around the name: it opens with it ("X: …") or is it; or, written as a name rather
    than an ordinary word, it closes the title (": The X") or names a project ("The Berkeley X Project")."""
    if not title or not name.strip():
        return False
    head, tail, project = _title_patterns(name)
    if head.search(title):
        return True
    return any((m := p.search(title)) is not None and distinctive(m.group("n")) for p in (tail, project))


def abstract_defines(abstract: str | None, name: str) -> bool:
    return bool(abstract) and bool(name.strip()) and any(p.search(abstract) for p in _abstract_patterns(name))


def introduces(paper: Paper, name: str) -> int:
    """``TITLE`` when the title is built around the name, ``ABSTRACT`` when the abstract defines it, else 0."""
    if title_introduces(paper.title, name):
        return TITLE
    if abstract_defines(paper.abstract, name):
        return ABSTRACT
    return 0


# --- which names a paper introduces (for indexing a corpus) -----------------------------------------

_NAME_TOKEN = r"[A-Za-z][\w\-+.]*"
_TITLE_HEAD = re.compile(
    rf"^\s*(?:the\s+)?({_NAME_TOKEN}(?:\s+{_NAME_TOKEN}){{0,3}}?)\s*(?::(?!:)|\s[-–—]\s)", re.IGNORECASE
)
_TITLE_TAIL = re.compile(rf":\s*(?:the\s+)?({_NAME_TOKEN}(?:\s+{_NAME_TOKEN}){{0,3}})\s*$", re.IGNORECASE)
_TITLE_PROJECT = re.compile(
    rf"^\s*the\s+(?:[\w\-]+\s+){{0,2}}?({_NAME_TOKEN}(?:\s+{_NAME_TOKEN})?)\s+(?:{_KINDS})\b", re.IGNORECASE
)
_DEFINED = (
    re.compile(
        r"\b(?:called|named|dubbed|termed|coined)\s+(?:it\s+)?(?:the\s+)?[\"“']?([A-Z][\w\-+.]*(?:\s+[A-Z][\w\-+]*){0,2})"
    ),
    re.compile(
        r"\b(?:[Ww]e|[Tt]his paper|[Tt]his work)\s+(?:[\w\-]+\s+){0,2}?"
        r"(?:propose|introduce|present|release|develop)s?\s+"
        r"(?:the\s+|a\s+|an\s+)?(?:new\s+|novel\s+)?[\"“']?([A-Z][A-Za-z0-9\-+]*[A-Z0-9][A-Za-z0-9\-+]*)(?![\w\-])"
    ),
    re.compile(
        r"\b(?:architecture|model|method|framework|network|system|dataset|corpus|benchmark|toolkit|metric|resource|"
        r"approach|algorithm|package|tool|measure)s?\s*,\s*(?:the|called)\s+([A-Z][\w\-+]*(?:\s+[A-Z][\w\-+]*)?)\s*[,(]"
    ),
    re.compile(
        rf"\b(?:[Ww]e|[Tt]his paper|[Tt]his work)\s[^.]{{0,80}}?{_INTRO}\s[^.]{{0,120}}?"
        r"\(([A-Z][A-Za-z0-9\-]*[A-Z][A-Za-z0-9\-]*)\)"
    ),
)


def _short(name: str) -> bool:
    return 0 < len(name.split()) <= 4 and len(name) <= 40 and any(c.isalpha() for c in name)


def names_introduced(title: str | None, abstract: str | None = None) -> list[str]:
    """Candidate names a paper introduces, normalised (``normalize_title``); ``introduces`` has the last word."""
    found: list[str] = []
    title = title or ""
    if _short(title) and not title.isupper():
        found.append(title)  # "Latent Dirichlet Allocation", "Mask R-CNN"
    for rx in (_TITLE_HEAD, _TITLE_TAIL, _TITLE_PROJECT):
        m = rx.search(title)
        if m and _short(m.group(1)):
            found.append(m.group(1))
            if rx is _TITLE_PROJECT:
                found.append(m.group(1).split()[-1])  # "The Berkeley FrameNet Project" introduces FrameNet
    for rx in _DEFINED:
        for m in rx.finditer(abstract or ""):
            if _short(m.group(1)):
                found.append(m.group(1))
    keys = [normalize_title(n) for n in found]
    return list(dict.fromkeys(k for k in keys if k))
