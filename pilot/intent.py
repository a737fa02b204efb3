"""From the user's words to an initial ``Intent``: which paper, which direction, which constraints.

Deterministic and regex-based so that it works with no model at all. Two entry points:

* ``parse_request(text)`` — the first message: splits off the anchor (quoted title, DOI, arXiv id, S2 id,
  corpus id, else the text itself) and reads the direction and constraints from the *rest* of the words,
  so a year or venue inside the anchor's title never becomes a filter.
* ``parse_constraints(text, known_venues)`` — any later free text ("after 2008", "only EMNLP", "method",
  "top 10"): the intent fields it sets, as a dict ready for ``apply_updates``.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Iterable
from typing import Any, Literal, cast

from pydantic import BaseModel, Field

from pilot.domain import profile
from pilot.models import Intent
from pilot.spelling import respelt
from pilot.text import REQUEST_STOPWORDS, normalize_title
from pilot.vocab import PAPER_TYPE_WORDS, PAPER_TYPES, PaperType, PublicationKind, ResultOrder

AnchorKind = Literal[
    "doi", "arxiv", "s2", "corpus_id", "title", "name", "described", "cited", "topic", "current", "none"
]
ID_KINDS: tuple[str, ...] = ("corpus_id", "doi", "arxiv", "s2")

_FACETS = {
    "method": ("method", "methods", "approach", "technique", "algorithm", "model", "how they do it"),
    "background": ("background", "problem", "motivation", "task", "research question"),
    # bare "results" is the list on screen ("fewer results"), not the facet
    "result": (
        "its results",
        "their results",
        "similar results",
        "same results",
        "finding",
        "findings",
        "conclusion",
        "outcome",
    ),
}

# (pattern, direction, weight). Matched against the request with the anchor removed; highest total wins.
_EXTENDED_TO = re.compile(r"\b(?:extend|apply|applie|adapt|port|transfer|generali[sz]e)(?:s|d|ed|ing)?\s+to\b", re.I)
_DIRECTION_RULES: list[tuple[str, str, float]] = [
    (
        r"\bprior work\b|\bearlier (?:work|papers?)\b|\bolder papers?\b|\bpredecessors?\b|\bcame before\b|"
        r"\bpreceded\b|\bprecursors?\b|\bwhat led to\b|\bled up to\b|\binspired\b|\bwhat influenced\b"
        r"|\bancestors?\b|\bforerunners?\b|\borigins? of\b|\broots of\b|\blineage\b",
        "predecessor",
        3,
    ),
    (
        r"\bbuilds? (?:up)?on\b|\bbased on\b|\bbackground literature\b|\bfoundational\b|\bkey references\b",
        "predecessor",
        2,
    ),
    (
        r"\bshould i (?:be )?cit(?:e|ing)\b|\breferences?\b|\bwhat does .{0,80} cite\b|\bbehind\b"
        r"|\bmy (?:draft|paper)\b",
        "predecessor",
        1.5,
    ),
    # "what does the BLEU paper cite?", "which papers did GloVe cite": its references ("paper cite" is no citer)
    (
        r"\b(?:what|which(?: \w+)?|who)\s(?:does|did|do)\b.{0,80}?\bcite\b|\breference lists?\b|\bbibliography\b",
        "predecessor",
        4,
    ),
    (
        r"\blater (?:work|papers?)\b|\bfollow[- ]?ups?\b|\bcame after\b|\bfollowed\b|\bpicked up\b|\bsuccessors?\b",
        "successor",
        3,
    ),
    (
        r"\b(?:has|have|who) (?:\w+ )?built on\b|\bcit(?:e|ing|ed by)\b.{0,80}?\bextend|\bcited by\b"
        r"|\bciting papers?\b|\bextend(?:s|ed)?\b|\bsince then\b",
        "successor",
        2.5,
    ),
    (
        r"\b(?:papers?|works?|articles?|publications?)\s+(?:that\s+|which\s+)?cit(?:e|es|ing)\b"
        r"|\bwho (?:cites?|cited|(?:has|have) cited)\b|\bwhat cites\b|\b(?:that|which) cites?\b|\bciting\b"
        r"|\bc[ao]me out of\b|\bgrew out of\b",
        "successor",
        3,
    ),
    # "anything newer than BERT?", "what has appeared since GloVe?"; a year after them is a period, not a paper
    (r"\b(?:newer|more recent) than\b(?!\s*(?:19|20)\d\d)|\bsince\b(?!\s*(?:19|20)\d\d)", "successor", 3),
    (r"\b(?:older|earlier) than\b(?!\s*(?:19|20)\d\d)|\bpre-?dat(?:e|es|ed|ing)\b", "predecessor", 3),
    # "work that extends LDA to multilingual corpora": what follows "to" is where it went, not what was asked for
    (_EXTENDED_TO.pattern, "successor", 1.5),
    # "and after it?", "what about before that?": the paper on screen's later or earlier work
    (
        r"^\W*(?:(?:and|so|ok|okay|now|then)\W+)*(?:(?:what|how) about\s+)?after\W*(?:(?:it|that|this|them)\W*)?$",
        "successor",
        3,
    ),
    (
        r"^\W*(?:(?:and|so|ok|okay|now|then)\W+)*(?:(?:what|how) about\s+)?before\W*(?:(?:it|that|this|them)\W*)?$",
        "predecessor",
        3,
    ),
    # "papers after BERT about QA", "work before GloVe" (the paper is cut out of the text these rules see)
    (
        r"\b(?:papers?|works?|research|articles?|anything|everything|ones)\s(?:published\s|written\s)?after\b"
        r"(?!\s*(?:19|20)\d\d)",
        "successor",
        3,
    ),
    (
        r"\b(?:papers?|works?|research|articles?|anything|everything|ones)\s(?:published\s|written\s)?before\b"
        r"(?!\s*(?:19|20)\d\d)",
        "predecessor",
        3,
    ),
    # "papers that use the Penn Treebank", "work that improved on BLEU": later papers that build on the named one
    (
        r"\b(?:papers?|works?|articles?|publications?)\s+(?:that|which)\s+(?:use[sd]?|appl(?:y|ies|ied))\b"
        r"|\b(?:which|what)\s+(?:papers?|works?)\s+(?:use[sd]?|appl(?:y|ied))\b"
        r"|\bimprov(?:e|es|ed|ing) (?:on|upon)\b|\boutperform(?:s|ed|ing)?\b",
        "successor",
        3,
    ),
    (r"\bsimilar\b|\bcomparable\b|\bclosely related\b|\balong these lines\b|\bsiblings?\b|\blike this\b", "sibling", 3),
    (r"\balternatives? to\b", "sibling", 3),
    # "competitors of BERT", "concurrent work to BERT", "published at the same time as GloVe"
    (
        r"\bcompetitors?\b|\brivals?\b|\bconcurrent(?:ly)?\b|\bcontemporaneous\b|\bcontemporar(?:y|ies)\b"
        r"|\b(?:at )?the same time as\b",
        "sibling",
        3,
    ),
    (
        r"\b(?:papers?|works?|articles?|publications?|something|anything|stuff|more)\s+(?:just\s+|much\s+)?like\b"
        r"|\blike it\b",
        "sibling",
        3,
    ),
    (
        r"\bmore (?:papers|work) like\b|\bother work\b|\brelated (?:work|papers)\b|\bsame (?:problem|topic)\b",
        "sibling",
        2,
    ),
    (
        r"\bdatasets?\b|\bbenchmarks?\b|\bevaluation (?:data|resources?|campaigns?)\b"
        r"|\bdata resources?\b|\bcorpora\b|\btreebanks?\b",
        "benchmark",
        3,
    ),
    (r"\breproduce\b|\bshared tasks?\b|\btest sets?\b|\bevaluate\b", "benchmark", 1.5),
    (
        r"\bsurveys?\b|\bliterature reviews?\b|\boverviews?\b|\breview articles?\b|\btutorials?\b|\bstate of the art\b"
        r"|\bwhere (?:should|do|can) i (?:start|begin)\b|\bi'?m new to\b",
        "survey",
        3.5,
    ),
]

_QUOTE_RE = re.compile(r"[\"“”«»]([^\"“”«»]{4,})[\"“”«»]")
_DOI_RE = re.compile(r"\b(10\.\d{4,9}/[^\s\"'<>]+)", re.I)
_ARXIV_RE = re.compile(r"(?:arxiv[:/ ]\s*|arxiv\.org/(?:abs|pdf)/)?\b(\d{4}\.\d{4,5})(?:v\d+)?\b", re.I)
_S2_RE = re.compile(r"\b([0-9a-f]{40})\b")
_CORPUS_ID_RE = re.compile(r"\b((?:acl|s2|pc|aminer):[\w.\-:]+)")
# "papers like 1810.04805": a bare arXiv id reads as one when its first four digits are a year and a month
_ARXIV_LIKE = re.compile(r"(?:0[7-9]|[12]\d)(?:0[1-9]|1[0-2])\.\d{4,5}$")
# "https://aclanthology.org/P02-1040/", "P02-1040", "2020.acl-main.1": an ACL Anthology id
_ACL_RE = re.compile(
    r"(?:https?://)?(?:www\.)?(?:aclanthology\.org/|aclweb\.org/anthology/(?:[A-Z]/[A-Z]\d\d/)?)?"
    r"\b([A-Z]\d{2}-\d{4}|\d{4}\.[a-z]+(?:-[a-z]+)?\.\d+)\b(?:\.pdf|/)?"
)


class ParsedRequest(BaseModel):
    """A request, taken apart once. ``anchor_query`` is what names the paper (or the topic) searched.

    ``anchor_kind`` says how it was named: an identifier (``doi``, ``arxiv``, ``s2``, ``corpus_id``), a quoted
    or title-like ``title``, a short ``name`` ("GloVe", "the Penn Treebank", "the CIDEr paper"), a paper
    ``described`` by its topic and authors ("the one on sentence compression by Knight and Marcu": the topic in
    ``anchor_query``, the surnames in ``authors``), a paper ``cited`` the way papers cite it ("Collins (1999)",
    "Mikolov et al., 2013": the surnames in ``authors``, the year in ``year``), a ``topic`` in plain words,
    ``current`` for a pronoun ("what came after it?") or ``none``.
    """

    text: str
    anchor_query: str
    anchor_kind: AnchorKind
    intent: Intent
    rest: str = ""  # the request without the anchor: what direction/constraints were read from
    direction_scores: dict[str, float] = Field(default_factory=dict)
    respelt: dict[str, str] = Field(default_factory=dict, description="misspelt steering words read as meant")
    constraints: dict[str, Any] = Field(default_factory=dict, description="intent fields the words around it set")
    request_words: bool = False  # phrased as a request ("papers on X", "what came before X"), not a bare phrase
    authors: list[str] = Field(default_factory=list)  # described, cited: the surnames of the paper's authors
    # cited: the year of the reference; name, title: the year of the paper going by that name ("the 2014 one")
    year: int | None = None
    # "question answering after BERT", "parsing before the Transformer": a period bounded by a paper's year, as
    # (after | since | before, the paper's name); the session looks the paper up
    period_of: tuple[str, str] | None = None


def _find_anchor(text: str) -> tuple[str, AnchorKind, str]:
    """(anchor query, kind, text with the anchor cut out)."""
    id_patterns: tuple[tuple[re.Pattern[str], AnchorKind], ...] = (
        (_CORPUS_ID_RE, "corpus_id"),
        (_DOI_RE, "doi"),
        (_S2_RE, "s2"),
    )
    for regex, kind in id_patterns:
        m = regex.search(text)
        if m:
            value = m.group(1).rstrip(".,;)]")
            # a quoted title next to the id is the same paper: its words must not count as the request's
            return value, kind, _QUOTE_RE.sub(" ", text.replace(m.group(0), " "))
    m = _ARXIV_RE.search(text)
    if m and (
        "arxiv" in text.lower() or re.fullmatch(r"\s*\d{4}\.\d{4,5}(v\d+)?\s*", text) or _ARXIV_LIKE.match(m.group(1))
    ):
        return m.group(1), "arxiv", text.replace(m.group(0), " ")
    if m := _ACL_RE.search(text):  # an ACL Anthology id or page: the corpus's and Semantic Scholar's "acl:" id
        return f"acl:{m.group(1)}", "corpus_id", text.replace(m.group(0), " ")
    quoted = _QUOTE_RE.findall(text)
    if quoted:
        title = max(quoted, key=len).strip()
        return title, "title", _QUOTE_RE.sub(" ", text)
    stripped = " ".join(text.split())
    if (cited := cited_reference(stripped)) is not None:
        return cited[0], "cited", _cut(stripped, cited[0])
    if not stripped:
        return "", "none", ""
    if (cue := _critique_cue(stripped)) is not None:
        criticised = subject_of(stripped[cue.end() :])
        if criticised and subject_form(criticised) in ("name", "title"):  # "limitations of BLEU": the paper BLEU
            return criticised, subject_form(criticised), _cut(stripped, criticised)
    if (intro := INTRODUCING.search(stripped)) and 0 < len(named := subject_of(stripped[intro.end() :]).split()) <= 5:
        # "the original paper on conditional random fields": the paper that introduced them, found by that name
        name = " ".join(named)
        return name, "title" if subject_form(name) == "title" else "name", _cut(stripped, name)
    subject = subject_of(stripped)
    if not subject:
        return "", "none", stripped
    if when := PERIOD_OF.search(subject):  # "question answering after BERT", "post-BERT summarization": BERT dates it
        head, tail = subject_of(subject[: when.start()]), subject_of(subject[when.end() :])
        subject = head or tail or subject
    before = stripped[: max(stripped.find(subject), 0)]
    extended = _EXTENDED.search(before) is not None  # "extend BERT to multilingual settings": "to" joins a focus
    subject = _without_authors(_without_focus(subject, first=stripped.startswith(subject), to_joins=extended))
    if subject.lower() in _PRONOUNS or names_this_topic(subject, stripped):
        return "", "current", _cut(stripped, subject)
    return subject, subject_form(subject), _cut(stripped, subject)


# nouns that point at the search on screen after "this", "that", "the same" ("surveys on this topic")
DEICTIC_NOUNS = ("topic", "area", "field", "subject", "domain", "problem")


def names_this_topic(word: str, text: str) -> bool:
    """ "Surveys on this topic", "datasets in this area": ``word``, all that is left of the subject, points at the
    search on screen."""
    deictic = word.lower() in DEICTIC_NOUNS
    return deictic and re.search(rf"\b(?:this|that|the same) {re.escape(word)}\b", text, re.I) is not None


# "papers like GloVe but for sentences", "BERT for biomedical text": a named paper and what to focus on
# single spaces: the subject's words are joined by one (and \s+ here would backtrack on a run of blanks)
# ("papers like BERT but smaller": after a name, "but" alone says what should differ — unless a constraint or a
# leaving-out follows: "but only from EMNLP", "but not for English")
_FOCUS_JOIN = re.compile(
    r"\s(?:(but\s(?:only\s)?)?(?:for|on|about|in the context of|in|with|applied to)"
    r"|(but)(?!\s(?:not|only|from|after|before|since|published|at)\b))\s",
    re.I,
)
# "the original paper on X", "the paper that introduced X", "which paper proposed X?": one paper, named by X
INTRODUCING = re.compile(
    # "the seminal paper on X" is one paper; "seminal work on X" is the field's key literature
    r"\b(?:(?:(?:original|first|earliest)\s(?:paper|work|article|publication)|(?:seminal|foundational)\s"
    r"(?:paper|article|publication))\s"
    r"(?:on|about|for|of|introducing|proposing|that\s(?:first\s)?(?:introduced|proposed|invented))"
    r"|(?:paper|work|article|publication)\s(?:that|which)\s(?:first\s)?(?:introduced|proposed|invented|coined)"
    r"|(?:which|what)\s(?:paper|work|article|publication)\s(?:first\s)?(?:introduced|proposed|invented|coined))\s",
    re.I,
)
# "papers that criticize BLEU", "limitations of BLEU": its later work, preferring the critical kind
_CRITIQUE = re.compile(
    r"\b(?:critici[sz](?:e|es|ed|ing)|critiqu(?:e|es|ed|ing)|(?:criticisms?|critiques?|limitations?|shortcomings?|"
    r"weaknesses|flaws) (?:of|in)|problems with)\b",
    re.I,
)
_CRITIQUE_WORDS = ("criticism", "limitations", "problems")


def _critique_cue(text: str) -> re.Match[str] | None:
    """The critique cue in ``text`` ("limitations of"), not words of a title ("Critique And …")."""
    cue = _CRITIQUE.search(text)
    return cue if cue is not None and cue.group(0)[:1].islower() else None


def _critique_of(text: str, name: str) -> re.Match[str] | None:
    """The critique cue before a named paper ("limitations of BLEU")."""
    cue = _critique_cue(text)
    return cue if cue is not None and name and text.find(name) >= cue.end() else None


CITED_HOW_OFTEN = re.compile(r"^\W*how (?:many|often)\b.*\bcit(?:ed|es?|ing|ations?)\b", re.I)
# "papers that extend / apply / adapt [BERT] to …": what follows "to" is the focus, not part of the name
_EXTENDED = re.compile(
    r"\b(?:extend|apply|applie|adapt|port|transfer|bring|generali[sz]e)(?:s|d|ed|ing)?\s(?:the\s)?$", re.I
)
_TO_JOIN = re.compile(r"\s(to)\s", re.I)
# after the anchor is cut out: "... that cite Moses and use it for low-resource translation"
_FOCUS_PHRASE = re.compile(
    r"\b(?:but\s(?:only\s)?(?:for|on|about|in|with|applied to)|"
    r"(?:use[sd]?|using|apply|applies|applied|applying)\s+(?:it|them|this|that)?\s?(?:for|to|on|in)(?!\s+the\s+context)|"
    r"in the context of)\s(?P<t>[^?.!;,]+)",
    re.I,
)


def _without_focus(subject: str, first: bool = False, to_joins: bool = False) -> str:
    """A short name with a focus after it is the name alone ("GloVe but for sentences" -> "GloVe"); a title
    keeps its words ("Deep Residual Learning for Image Recognition"). At the start of a message a capital says
    nothing ("Mostly about parsing"), so there only a name written like one (BERT, GloVe, word2vec) counts."""
    joins = list(_FOCUS_JOIN.finditer(subject)) + (list(_TO_JOIN.finditer(subject)) if to_joins else [])
    joins.sort(key=lambda j: j.start())
    # "Deep Residual Learning for Image Recognition but for text": an explicit "but for" is the join, not a "for";
    # "extend BERT to …": so is the "to" after the verb
    m = next((j for j in joins if j.re is _TO_JOIN or j.group(1)), joins[0] if joins else None)
    if m is None:
        return subject
    head, tail = subject[: m.start()].rstrip(" ,;:-–—"), subject[m.end() :]
    if first and not _written_as_name(head):
        return subject
    if m.re is _TO_JOIN:  # "extend BERT to …" names a paper; "applying reinforcement learning to …" is a topic
        return head if subject_form(head) in ("name", "title") else subject
    explicit = bool(m.group(1) or m.group(2))
    if (subject_form(head) == "name" or head.lower() in _PRONOUNS) and (explicit or tail[:1].islower()):
        return head
    if explicit and not first:  # "similar to Attention is all you need but for speech": "but for" ends a title too
        return head
    return subject


def _written_as_name(words: str) -> bool:
    """A capital or a digit after the first letter ("BERT", "GloVe", "word2vec", "Penn TreeBank")."""
    return any(any(c.isupper() or c.isdigit() for c in w[1:]) for w in words.split())


# A paper described by its topic and authors: "sentence compression by Knight and Marcu", "Collins' parsing".
# Single spaces: the subject's words are joined by one.
_SURNAME = r"(?:[A-Z][\w'\-]+ )?[A-Z][\w'\-]+"
_SURNAMES = rf"{_SURNAME}(?:(?:, | and | & ){_SURNAME})*(?: et al\.?)?"
_DESCRIBED = (
    re.compile(rf"^(?:the )?(?:(?:one|paper|work|article) )?(?:(?:on|about) )?(?P<t>[a-z][\w\- ]*?) "
               rf"by (?P<n>{_SURNAMES})$"),
    re.compile(rf"^(?:the )?(?P<n>{_SURNAMES})['’]s? (?P<t>[a-z][\w\- ]*)$"),
)  # fmt: skip


# A paper cited the way papers cite one another: "Collins (1999)", "Mikolov et al., 2013", "Och and Ney 2003",
# "Papineni et al. (2002a)". Single spaces (the chat collapses blanks).
# bounded repeats: a run of capitalised words with no year after it must not be rescanned from every word
_CITED_NAME = r"(?:(?:van|von|de|der|den|di|da|du|le|la|del|dos) ){0,2}[A-Z][a-z][\w'’\-]*"
_CITED = re.compile(
    rf"(?<![\w-])(?P<n>{_CITED_NAME}(?:, {_CITED_NAME}){{0,4}}"
    rf"(?:,? and {_CITED_NAME}|,? & {_CITED_NAME}| et al\.?)?),? "
    r"(?:\((?P<py>(?:19|20)\d\d)[a-z]?\)|(?P<y>(?:19|20)\d\d)[a-z]?)(?![\w-])"
)
# capitalised words before a year that are not a first author ("Since 2019", "June 2020", "EMNLP 2020")
_NOT_FIRST_AUTHORS = frozenset(
    """january february march april may june july august september october november december jan feb mar apr jun
    jul aug sep sept oct nov dec spring summer autumn fall winter since until till through circa around year years
    early late mid between published written""".split()
)


def cited_reference(text: str) -> tuple[str, list[str], int] | None:
    """(the reference as typed, its surnames, its year) when ``text`` names a paper by author and year."""
    for m in _CITED.finditer(text):
        names = re.sub(r" et al\.?$", "", m.group("n"))
        surnames = [n.strip() for n in re.split(r",? and |,? & |, ", names)]
        first = surnames[0].split()[-1].lower()
        venues = {v.lower() for v in profile().request_venues} | set(profile().request_venue_canonical)
        if first in _NOT_FIRST_AUTHORS or first in _REQUEST_WORDS or first in venues:
            continue
        return m.group(0).rstrip(",").strip(), surnames, int(m.group("py") or m.group("y"))
    return None


_BY_AUTHORS = re.compile(rf"^(?P<t>.+?) by (?P<n>{_SURNAMES})$")


def _without_authors(subject: str) -> str:
    """A title or name followed by its authors is the title ("Attention Is All You Need by Vaswani et al.")."""
    m = _BY_AUTHORS.match(subject)
    return m.group("t") if m and subject_form(m.group("t")) in ("title", "name") else subject


def described_paper(subject: str) -> tuple[str, list[str]] | None:
    """(topic words, surnames) of a paper described by what it is about and who wrote it, else None."""
    for rx in _DESCRIBED:
        if (m := rx.match(subject)) is not None:
            names = re.sub(r" et al\.?$", "", m.group("n"))
            surnames = [n.split()[-1] for n in re.split(r", | and | & ", names)]
            topic = re.sub(r" (?:paper|work|article)$", "", m.group("t").strip())
            if content_terms(topic):
                return topic, surnames
    return None


def focus_terms(text: str, anchor_query: str, rest: str) -> list[str]:
    """What a request about a named paper asks to focus on ("BERT for biomedical text", "but for sentences",
    "use it for low-resource translation"; ``rest`` is ``text`` without the paper, whose title may say "applied
    to"): words for the score's topic preference, never a filter."""
    extended = bool(anchor_query) and _EXTENDED.search(text.partition(anchor_query)[0]) is not None
    join = f"(?:{_FOCUS_JOIN.pattern}|{_TO_JOIN.pattern})" if extended else _FOCUS_JOIN.pattern
    after_name = re.search(re.escape(anchor_query) + r"[\"”']?" + join + r"(?P<t>[^?.!;,]+)", text, re.I)
    m = after_name if anchor_query and after_name else _FOCUS_PHRASE.search(rest)
    return content_terms(m.group("t")) if m else []


def _cut(text: str, part: str) -> str:
    """``text`` without ``part``: its whole-word occurrence if it has one ("it" of "who cites it?" is not the
    "it" inside "cites"), else its first."""
    m = re.search(rf"(?<!\w){re.escape(part)}(?!\w)", text) if part else None
    i = m.start() if m else text.find(part)
    return f"{text[:i]} {text[i + len(part) :]}".strip() if i >= 0 else text


# --- what a free-text request is about --------------------------------------------------------------
# A request is instruction words around a subject: "What came before [BERT]?", "[surveys covering]
# [neural machine translation]", "Papers that build on [Attention Is All You Need] after 2019". The
# subject is what is left when the constraint phrases (years, venues, counts, recency) and the request
# words at its edges are cut off; words inside it stay ("Sequence to Sequence Learning with …").

_REQUEST_PHRASES = re.compile(
    r"\b(?:data ?sets?|test sets?|shared tasks?|evaluation (?:data|resources?|campaigns?|sets?)|data resources?|"
    r"state of the art|literature reviews?|review articles?|follow[- ]?ups?|follow[- ]?up work|related work|"
    r"the same (?:topic|problem|area)|along the same lines|in the same vein|what about|how about|"
    r"(?:has|have) been (?:published|written|done)|is there|are there|i(?:'d| would) like|point me to|"
    r"tell me|show me|give me|look(?:ing)? for|search(?:ing)? for|came (?:before|after)|come (?:before|after)|"
    r"picked up|built up ?on|builds? up ?on|based on|used by|cited by|in the field of|in the area of|"
    r"c[ao]me out of|grew out of|led (?:up )?to|(?:the )?most (?:often|frequently)|the most|get rid of|"
    r"improv(?:e|es|ed|ing) (?:on|upon)|alternatives? to|outperform(?:s|ed|ing)?|"
    r"(?:references?|reference lists?|bibliography) (?:of|in|from)|what should i (?:cite|read)|"
    r"how (?:many(?: times)?|often)|(?:good )?starting points?(?: (?:for|on|in)(?! learn))?|"
    r"(?:to|for) learn(?:ing)? (?:more )?about|"
    r"(?:make|change|set|bump|increase|raise|cut|reduce|limit|trim) (?:it|that|this|them|the list)"
    r"(?: (?:to|up to|down to))?(?: (?:a bit |much |a lot )?(?:shorter|longer|smaller|bigger|narrower|broader))?"
    r"(?= \d| only\b| just\b|\W*$)|"
    r"how (?:did|do|does|have|has|would|should|can) (?:people|researchers|others|we|they|one|you|i|the field) "
    r"(?:do|done|approach(?:ed)?|tackle[d]?|handle[d]?|solve[d]?|address(?:ed)?|deal(?:t)? with|go about)|"
    r"get(?:ting)? started (?:with|on|in)|"
    r"(?:competitors?|rivals?|contemporar(?:y|ies)|origins?|roots|ancestors?|forerunners?|lineage) (?:of|to)|"
    r"concurrent (?:work|papers?) (?:to|with)|(?:published |written |appeared )?(?:at )?the same time as|"
    r"for (?:my|our|a) (?:thesis|dissertation|paper|project|survey|review|class|course|talk|lit(?:erature)? review)|"
    r"i'?m (?:writing|working on|doing) (?:a |my |our )?(?:paper|thesis|survey|review|project)(?: (?:on|about))?|"
    r"(?:recent |latest |new )?(?:advances|developments|trends) in|where (?:should|do|can) i (?:start|begin)|"
    r"i'?m new to)\b",
    re.I,
)
# words that only lead into a subject ("the most influential papers on …", "the main approaches to …", "the
# original LSTM paper"); at its end they may be its own ("kernel methods")
_LEADING_WORDS = frozenset(
    "most main approaches original introduced introduces proposed known well-known popular famous common commonly "
    "widely".split()
)
_REQUEST_WORDS = frozenset(
    """what which who whom whose where when how why is are was were be been being do does did has have had can could
    would should will may might must please show give find get list search look point tell recommend suggest want need
    like see read know me i we my our us you your some any all the a an and or of for to in on at by with from into
    about regarding covering cover covers concerning around that this these those there than then also just only
    more other others paper papers work works article articles publication publications literature research
    came come comes before after earlier later prior previous older newer predecessor predecessors successor
    successors ancestor ancestors descendants follow follows followed following followup followups
    similar related comparable closely sibling siblings build builds built building upon onto based cite cites
    cited citing citation citations extend extends extended extending pick picked survey surveys review reviews
    overview overviews tutorial tutorials dataset datasets benchmark benchmarks corpora resources used use uses
    using reproduce evaluate evaluated key standard main important relevant good best influential interesting
    typical ones one instead too now then again also anything something everything nothing stuff result results
    hits list but though however yet especially particularly specifically compare comparing comparison
    contrast versus vs since appeared appear happened happen influenced influences inspired led put top
    details behind commonly typically usually often widely frequently generally apply applies applied applying
    adapt adapts adapted adapting evolved evolve evolving changed progressed""".split()
)
_PRONOUNS = frozenset(
    {
        "it",
        "its",
        "it's",
        "this",
        "that",
        "them",
        "their",
        "these",
        "those",
        "this one",
        "that one",
        "this paper",
        "that paper",
        "this paper's",
        "that paper's",
        # "the same but only EMNLP": the search on screen
        "same",
        "the same",
        "same thing",
        "the same thing",
        "same search",
        "the same search",
    }  # fmt: skip
)
# "… and used its ideas", "… that cite it": a clause about the subject, not part of it
_TRAILING_CLAUSE = re.compile(  # (?<!\s): a run of blanks is tried once, from its start (linear on long pastes)
    r"(?<!\s)\s+(?:and|that|which|who)\s+(?:used?|uses|cite[sd]?|citing|built|build|builds|extends?|extended|follow\w*|"
    r"came|come|improved?|improves)\b.*$",
    re.I,
)
# "sort by year", "newest first", "chronologically", "most cited first", "back to relevance": the order of the
# same results (the top_k step's ``order``), not a preference that changes which papers are found
_SORT = r"\b(?:sort|order|rank|list)(?:ed)?(?: them| it| the (?:results|list|papers))? by "
# "…, descending" / "(ascending order)" after a sort key: read with it, so it is not left as a subject word
_DIRECTION = r"(?:\s*[,:(]?\s*(?:in\s+)?(?:de|a)scending(?:\s+order)?\)?)?"
# an explicit "oldest first" wins over "sort by year" alone (newest first): the oldest patterns come first
_ORDER_PATTERNS: tuple[tuple[ResultOrder, str], ...] = (
    ("oldest", _SORT + r"(?:year|date)\s*[,:(]?\s*(?:in\s+)?ascending(?:\s+order)?\)?"),
    (
        "oldest",
        r"\b(?:oldest|earliest) (?:ones? |papers? )?(?:first|on top|at the top)\b|"
        r"\b(?:from )?old(?:est)? to new(?:est)?\b|"
        r"(?<!reverse )\b(?:chronologically|in chronological order)\b",
    ),
    (
        "newest",
        r"\b(?:newest|latest|most recent) (?:ones? |papers? )?(?:first|on top|at the top)\b|"
        r"\b(?:from )?new(?:est)? to old(?:est)?\b|"
        r"\b(?:in )?reverse chronological(?:ly| order)\b|" + _SORT + r"(?:year|date|recency)\b" + _DIRECTION,
    ),
    (
        "most_cited",
        r"\bmost cited (?:ones? |papers? )?first\b|\b(?:the )?most[- ]cited (?:ones|papers|works?|articles)\b|"
        r"\bhighly[- ]cited (?:ones|papers|works?|articles)\b|"
        + _SORT
        + r"(?:citations?|citation counts?|(?:the )?number of citations|impact|popularity)\b"
        + _DIRECTION,
    ),
    (
        "score",
        _SORT + r"(?:relevance|score|match|similarity|closeness)\b|\b(?:best|closest) (?:matches |match )?first\b|"
        r"\boriginal order\b|\bback to (?:relevance|the (?:best matches|ranking|score|original order))\b",
    ),
)
_ORDERS = [(order, re.compile(pattern, re.I)) for order, pattern in _ORDER_PATTERNS]


def read_order(low: str) -> ResultOrder | None:
    """The order a text asks the results to be shown in, if any ("sort by year" -> "newest")."""
    return next((order for order, rx in _ORDERS if rx.search(low)), None)


_CONSTRAINT_PHRASES = [
    re.compile(p, re.I)
    for p in (
        r"\b(?:in|from|during|over)?\s*(?:the\s+)?(?:last|past)\s+(?:\d{1,2}|few|couple of)\s+years\b",
        r"\b(?:in|from|during|over)?\s*(?:the\s+)?(?:last|past)\s+(?:decade|(?:two|three|couple of|few)\s+decades)\b",
        r"\b(?:between|from)\s+(?:19|20)\d\d\s*(?:-|–|to|and|until|through)\s*(?:19|20)\d\d\b",
        r"\b(?:19|20)\d\d\s*(?:-|–)\s*(?:19|20)\d\d\b|\bp(?:re|ost)-(?:19|20)\d\d\b",  # "… 2019-2021", "pre-2000"
        r"\b(?:(?:published|appeared|written|presented)\s+)?"  # "only papers published in 2005": no topic "published"
        r"(?:after|since|from|before|until|up to|through|by|in|during|of|prior to|earlier than|later than|"
        r"newer than|older than|no later than|starting(?: in)?)\s+(?:the\s+year\s+)?(?:19|20)\d\d"
        r"(?:\s+on(?:wards?)?)?\b",
        r"\b(?:19|20)\d\d\s*(?:\+|or (?:later|earlier|newer|before)|and (?:later|earlier)|onwards?)",
        r"\b(?:the\s+)?(?:19|20)\d0'?s\b",
        r"\b(?:the\s+)?'?[5-9]0'?s\b",
        r"\b(?:top|best|first)\s+\d{1,3}\b|\b\d{1,3}\s+(?:papers|results|articles|hits)\b",
        r"^\s*(?:19|20)\d\d(?=\s+(?:papers?|work|articles?|publications?)\b)",  # "2019 papers that build on ELMo"
        r"\b(?:most recent|latest|newest|recent|seminal|classic|classics|foundational|highly[- ]cited|"
        r"influential|landmark|most cited)\b",
    )
]
# what to leave out is no part of the subject ("parsing but not dependency parsing"); bare "without" and "no"
# only after a comma: "Learning without Forgetting" is a method
_LEAVE_OUT = re.compile(
    r"(?:\b(?:but not|but exclude|but without|excluding|except(?: for)?|other than|apart from|not about)"
    r"|,\s?(?:without|no|not|exclude)"
    r"|(?<=[a-z])\snot(?=\s[a-z][\w\-]*(?:\s[a-z][\w\-]*)?\W*$))\s[^,.;!?]+",  # "… in NLP not vision"
    re.I,
)
_CONSTRAINT_PHRASES.append(_LEAVE_OUT)
# "10 most cited papers that cite BLEU": the count goes before the order phrase takes the words after it
_RANKED = r"(?:most\s+(?:cited|recent|influential|relevant|important)|best|top|newest|latest|key|main)"
_COUNT_BEFORE_ORDER = re.compile(rf"\b\d{{1,3}}(?=\s+{_RANKED}\s+(?:papers|results|articles)\b)", re.I)
# "newest first" goes whole, before "newest" alone would; "not from the 90s" goes with its "not"
_CONSTRAINT_PHRASES[:0] = (
    [_COUNT_BEFORE_ORDER]
    + [rx for _, rx in _ORDERS]
    + [
        re.compile(
            r"\b(?:not|no|without|except|excluding|fewer|less|drop)\s(?:papers?\s)?(?:(?:from|in|during)\s)?(?:the\s)?"
            r"(?:(?:19|20)\d0'?s|'?[5-9]0'?s|(?:19|20)\d\d(?:\s?(?:-|–|to)\s?(?:19|20)\d\d)?)\b",
            re.I,
        )
    ]
)


def without_left_out(text: str) -> tuple[str, list[str]]:
    """``text`` without what it asks to leave out, and those words ("parsing but not dependency parsing" ->
    "parsing", ["dependency parsing"])."""
    phrases = [m.group(0) for m in _LEAVE_OUT.finditer(text)]
    terms = parse_constraints(" ".join(phrases)).get("exclude_terms", []) if phrases else []
    return " ".join(_LEAVE_OUT.sub(" ", text).split()).strip(" ,"), terms


_VENUE_PHRASE = r"\b(?:published\s+|presented\s+|appeared\s+)?(?:at|in|from)\s+(?:the\s+)?{v}\b|\b{v}\b"


def _cut_constraints(text: str, known_venues: Iterable[str] = ()) -> str:
    for rx in _CONSTRAINT_PHRASES:
        text = rx.sub(" ", text)
    for venue in _venue_updates(text, known_venues):
        for name in venue_names(venue):
            text = re.sub(_VENUE_PHRASE.format(v=re.escape(name)), " ", text, flags=0 if name.isupper() else re.I)
    return " ".join(text.split())


def _is_request_token(token: str, first: bool) -> bool:
    word = token.strip(".,;:!?()[]\"'“”’").lower()
    word = re.sub(r"['’]s$", "", word)
    if not word or word == "i":  # "How do I evaluate …": the researcher, not a title word
        return True
    if word not in _REQUEST_WORDS:
        return False
    # a capitalised request word inside the text belongs to a title ("Attention Is All You Need")
    return first or token[:1].islower() or not token[:1].isalpha()


def subject_of(text: str, known_venues: Iterable[str] = ()) -> str:
    """What a request is about, in the user's words: the text without constraint phrases and without the
    request words at its edges. "" when nothing is left ("only after 2010", "show me more")."""
    cut = _REQUEST_PHRASES.sub(" ", _cut_constraints(text, known_venues))
    tokens = cut.split()
    start = 0
    while start < len(tokens) and (
        _is_request_token(tokens[start], first=start == 0) or tokens[start].lower() in _LEADING_WORDS
    ):
        start += 1
    end = len(tokens)
    while end > start and _is_request_token(tokens[end - 1], first=False):
        end -= 1
    subject = " ".join(tokens[start:end]).strip(" ?.!,;:")
    subject = _TRAILING_CLAUSE.sub("", subject)
    subject = re.sub(r"['’]s$", "", subject).strip(" ?.!,;:\"'“”")
    if not re.search(r"\w", subject):
        return ""  # "-" left of "2010-2015" names nothing
    if subject.lower() in _DROP_VERBS or subject.lower() in _ADVERBS:
        # "drop anything before 2019": what goes, not what to search ("exclude medical" keeps its word); "mostly
        # recent stuff": how much, of nothing named
        return ""
    return _name_before_verb(subject, text)


_DROP_VERBS = frozenset("drop remove hide exclude skip excluding".split())
_ADVERBS = frozenset("mostly mainly primarily preferably ideally largely generally".split())


def _name_before_verb(subject: str, text: str) -> str:
    """After does/do/did a name followed by lower-case words ("Which benchmarks does SQuAD get compared against?")
    is the name and its verb: the name alone is the subject. Titles keep their words."""
    words = subject.split()
    n = 0
    while n < min(len(words), 4) and _name_like(words[n]):
        n += 1
    if n == 0 or n == len(words) or words[n][:1].isupper() or words[n].lower() in _FUNCTION_WORDS:
        return subject
    if not re.search(rf"\b(?:does|do|did)\s+(?:the\s+)?{re.escape(words[0])}", text, re.I):
        return subject
    return " ".join(words[:n])


_FUNCTION_WORDS = frozenset(
    "a an the of for to in on and or with by from via at as is are be its into over under".split()
)


def _name_like(word: str) -> bool:
    """BERT, GloVe, FrameNet, R-CNN, YOLO9000, Moses: how systems, models and resources are written."""
    core = word.strip(".,;:!?()\"'“”’")
    if not core or not core[0].isalnum() or core == "I":
        return False
    return core[0].isupper() or any(c.isupper() for c in core[1:]) or any(c.isdigit() for c in core)


# acronyms of fields and tasks: a subject made of them is a topic ("NLP papers in 2018"), never a paper's name
FIELD_ACRONYMS = frozenset(
    "nlp ml ai cv ir mt nmt smt qa ner srl wsd pos asr tts rl llm nlg nlu kg gnn vqa ocr hci ie re sts nli".split()
)


def subject_form(subject: str) -> AnchorKind:
    """``name`` for a short capitalised name ("GloVe", "Penn Treebank", "Mask R-CNN"), ``title`` for a
    title-like phrase (a colon, or mostly capitalised words), ``topic`` for plain words."""
    words = subject.split()
    content = [w for w in words if w.lower() not in _FUNCTION_WORDS]
    if not content:
        return "topic"
    if all(w.lower().rstrip("s") in FIELD_ACRONYMS for w in content):
        return "topic"  # "NLP", "NER and QA": a field's acronym, not a paper's name
    # a field's acronym says nothing of a title ("BERT-based NER models" is a topic)
    capitalised = [w for w in content if _name_like(w) and w.lower().rstrip("s") not in FIELD_ACRONYMS]
    if len(words) <= 4 and len(capitalised) == len(content):
        return "name"
    if ":" in subject and len(content) >= 3:
        return "title"
    if len(content) >= 3 and len(capitalised) >= 0.6 * len(content) and words[0][:1].isupper():
        return "title"
    return "topic"


# "papers that build on X" asks for successors; "what does X build on?" for predecessors. Only the full
# text tells them apart (is anything named after "on"?), since the anchor is cut out of the request.
_BUILD_ON_FORWARD = re.compile(r"\b(?:build|builds|built|building)\s+(?:up)?on\s+[\w\"“'«]", re.I)
# "papers that BERT cites", "the works which the Transformer paper references": a named subject citing them
_CITES_BACKWARD = re.compile(
    r"\b(?:papers?|works?|articles?|ones|what)\s(?:that|which)\s(?:the\s)?(?:[A-Z][\w\-]*|[a-z]+\d[\w\-]*)"
    r"(?:\s[\w\-]+){0,5}?\s(?:cites|cited|references|referenced|builds on|built on|relies on|relied on)\b"
    # "papers it cites", "what does it cite?", "the ones this paper references": the pronoun's references
    r"|\b(?:papers?|works?|articles?|ones|what)\s(?:(?:that|which)\s)?(?:does\s|did\s)?"
    r"(?:it|this(?: paper)?|that paper)\s(?:cites?|cited|references?|referenced)\b"
)
# likewise "papers cited by BERT" asks for BERT's references, "what is BERT cited by?" for its citers
_CITED_BY_FORWARD = re.compile(r"\bcited\s+by\s+(?!me\b|us\b|others\b|many\b|later\b)[\w\"“'«]", re.I)


# "no surveys", "not surveys or tutorials please", "excluding benchmarks": a kind of paper to leave out (the type
# word ends the phrase: "without data augmentation" leaves out no datasets)
_NOT_A_TYPE = re.compile(
    r"\b(?:no|not|without|excluding|except(?: for)?|but not|other than|apart from|exclude|skip|drop|remove|hide|"
    r"leave out|take out|filter out|get rid of|too many|so many|fewer|less)\s(?:(?:any|all(?: the)?|the|those)\s)?"
    r"(?P<w>surveys?|reviews?|overviews?|tutorials?|datasets?|corpora|benchmarks?|resources)"
    r"(?:\s(?:or|and|nor)\s(?:the\s)?(?P<w2>surveys?|reviews?|overviews?|tutorials?|datasets?|corpora|benchmarks?))?"
    r"(?=\s?(?:[,.;!?]|$|please|papers|from\s(?:the\s)?(?:list|results)))",
    re.I,
)


_BEFORE_A_PHRASE = frozenset(
    {"for", "on", "about", "the", "any", "anything", "everything", "papers", "paper", "work", "stuff", "ones", "in"}
)
_AFTER_A_PHRASE = frozenset(
    {"one", "ones", "paper", "papers", "work", "works", "article", "articles", "stuff", "please", "thanks"}
)


def _trimmed(words: list[str], head: frozenset[str], tail: frozenset[str]) -> str:
    """The words without those of ``head`` at the start and those of ``tail`` at the end."""
    i, j = 0, len(words)
    while i < j and words[i] in head:
        i += 1
    while j > i and words[j - 1] in tail:
        j -= 1
    return " ".join(words[i:j])


_ONLY_A_TYPE = re.compile(
    r"\b(?:only|just)\s(?:the\s)?(surveys?|reviews?|overviews?|tutorials?|datasets?|corpora|corpus|benchmarks?|"
    r"resources?|treebanks?)\b"
)


def negated_types(text: str) -> list[PaperType]:
    """The kinds of paper ``text`` asks to leave out."""
    words = [w for m in _NOT_A_TYPE.finditer(text) for w in (m.group("w"), m.group("w2")) if w]
    return list(dict.fromkeys(PAPER_TYPE_WORDS[w.lower()] for w in words))


def detect_direction(rest: str, full_text: str | None = None) -> tuple[str | None, dict[str, float]]:
    """The direction the words ask for, or None when nothing (or a tie) says so."""
    low = _NOT_A_TYPE.sub(" ", rest.lower())  # "no surveys" asks for anything but surveys
    scores: dict[str, float] = {}
    for pattern, direction, weight in _DIRECTION_RULES:
        if re.search(pattern, low):
            scores[direction] = scores.get(direction, 0.0) + weight
    if full_text and _BUILD_ON_FORWARD.search(full_text) and re.search(r"\bbuil(?:d|ds|t|ding) (?:up)?on\b", low):
        scores["predecessor"] = scores.get("predecessor", 0.0) - 2
        scores["successor"] = scores.get("successor", 0.0) + 2.5
        scores = {d: v for d, v in scores.items() if v > 0}
    if full_text and _CITES_BACKWARD.search(full_text):  # "papers that BERT cites": BERT's references
        scores["successor"] = scores.get("successor", 0.0) - 6
        scores["predecessor"] = scores.get("predecessor", 0.0) + 6
        scores = {d: v for d, v in scores.items() if v > 0}
    if full_text and _CITED_BY_FORWARD.search(full_text) and re.search(r"\bcited by\b", low):
        scores["successor"] = scores.get("successor", 0.0) - 2.5
        scores["predecessor"] = scores.get("predecessor", 0.0) + 3
        scores = {d: v for d, v in scores.items() if v > 0}
    if not scores:
        return None, scores
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return None, scores
    return ranked[0][0], scores


# "drop anything before 2019", "nothing older than 2015", "no papers after 2010": the words name what goes,
# the bound is what stays
_NEGATED_PERIOD = re.compile(
    r"\b(?:drop|remove|hide|exclude|excluding|skip|without|no|nothing|not)\b(?:\s+[a-z]+){0,2}?\s+"
    r"(before|prior to|earlier than|older than|after|later than|newer than|since)\s+((?:19|20)\d\d)\b"
)


# a closed period left out: "not from the 2000s", "drop the 90s", "fewer from 2010 to 2015", "no 2019 papers"
_LEAVES_OUT_BEFORE = re.compile(
    r"\b(?:drop|remove|hide|exclude|excluding|skip|without|no|nothing|not|fewer|less|except|other than)"
    r"(?:\s+[a-z]+){0,3}\s*$"
)


def _period(low: str, m: re.Match[str], first: int, last: int) -> dict[str, Any]:
    """A closed period the text names: kept, or left out when a leaving-out word comes just before it."""
    if _LEAVES_OUT_BEFORE.search(low[max(0, m.start() - 40) : m.start()]):
        return {"exclude_years": [(first, last)]}
    return {"year_min": first, "year_max": last}


# Eras of the field named instead of years ("before deep learning", "pre-neural MT", "the statistical era"): each
# with the first year commonly given for it (and the last, for an era that ended), said back in a note so the
# researcher can correct it. An era named by a paper ("before the Transformer", "post-BERT") is PERIOD_OF's.
class Era(BaseModel):
    pattern: str
    name: str
    first: int | None
    last: int | None = None
    why: str


ERAS: tuple[Era, ...] = (
    Era(pattern=r"deep[\s-]learning", name="deep learning", first=2012, why="AlexNet's ImageNet result, 2012"),
    Era(pattern=r"(?:large\s)?language[\s-]models?|llms?|gpt-?3", name="large language models", first=2020,
        why="GPT-3, 2020"),
    Era(pattern=r"chatgpt", name="ChatGPT", first=2023, why="ChatGPT, released at the end of 2022"),
    Era(pattern=r"pre-?trained\slanguage\smodels?|pre-?training", name="pretrained language models", first=2018,
        why="ELMo and BERT, 2018"),
    Era(pattern=r"neural(?:\s(?:networks?|nets|methods|models|nlp|mt|machine translation))?", name="neural methods",
        first=2014, why="neural machine translation and word embeddings took over around 2014"),
    Era(pattern=r"statistical(?:\s(?:nlp|mt|machine translation|methods))?", name="statistical methods", first=1990,
        last=2013, why="from the IBM models (around 1990) until neural methods (around 2014)"),
    Era(pattern=r"rule[\s-]based|symbolic", name="rule-based methods", first=None, last=1989,
        why="before the statistical turn of around 1990"),
)  # fmt: skip
_ERA = "|".join(f"(?P<e{i}>{e.pattern})" for i, e in enumerate(ERAS))
_ANY_ERA = "|".join(f"(?:{e.pattern})" for e in ERAS)
_ERA_NOUN = r"(?:\s(?:era|age|days|revolution|boom|wave|times|period))"
ERA_PHRASE = re.compile(
    # "what came before neural machine translation" asks for predecessors, not for a period
    rf"(?<!came )(?<!come )(?<!comes )(?<!went )"
    rf"\b(?:(?:(?:in|during|from|of)\s+)?(?:the\s+)?(?P<rel>before|pre|prior to|until|up to|after|since|post)"
    rf"(?:\s+|-)(?:the\s+)?"
    rf"|(?:(?:in|during|from|of)\s+)?the\s+(?=(?:{_ANY_ERA}){_ERA_NOUN}))(?:{_ERA})(?:{_ERA_NOUN})?(?![\w-])",
    re.I,
)


def era_period(text: str) -> tuple[dict[str, Any], str] | None:
    """The years an era phrase in ``text`` stands for, and the note that says how it was read."""
    m = ERA_PHRASE.search(text or "")
    if m is None:
        return None
    era = next(e for i, e in enumerate(ERAS) if m.group(f"e{i}"))
    rel = (m.group("rel") or "").lower()
    if rel in ("before", "pre", "prior to", "until", "up to"):
        bound = (era.first or 0) - 1 if era.first else era.last
        if bound is None:
            return None
        updates: dict[str, Any] = {"year_max": bound}
        said = f"up to {bound}"
    elif rel:  # after, since, post
        start = era.first if era.first is not None else (era.last or 0) + 1
        updates, said = {"year_min": start}, f"from {start}"
    else:  # "in the statistical era": the era itself
        updates = {k: v for k, v in (("year_min", era.first), ("year_max", era.last)) if v is not None}
        said = (
            "–".join(str(y) for y in (era.first, era.last) if y)
            if era.first and era.last
            else (f"from {era.first}" if era.first else f"up to {era.last}")
        )
    dated = f"the era of {era.name} dated by {era.why}"
    note = f"“{m.group(0).strip()}”: {said} ({dated}); say other years if you mean others."
    return updates, note


def _year_updates(low: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    y = r"((?:19|20)\d\d)"
    if m := _NEGATED_PERIOD.search(low):
        year = int(m.group(2))
        if m.group(1) in ("before", "prior to", "earlier than", "older than"):
            return {"year_min": year}
        return {"year_max": year - 1 if m.group(1) == "since" else year}
    m = re.search(rf"\bbetween\s+{y}\s+and\s+{y}\b", low) or re.search(
        rf"\b{y}\s*(?:-|–|to|until|through)\s*{y}\b", low
    )
    if m:
        a, b = sorted((int(m.group(1)), int(m.group(2))))
        return _period(low, m, a, b)
    decade = re.search(r"\b(?:the\s+)?((?:19|20)\d)0'?s\b", low)
    if decade:
        start = int(decade.group(1)) * 10
        return _period(low, decade, start, start + 9)
    if decade := re.search(r"\b(?:the\s+)?'?([5-9])0'?s\b", low):  # "the 90s", "'80s"
        start = 1900 + int(decade.group(1)) * 10
        return _period(low, decade, start, start + 9)
    if m := re.search(
        rf"\b(?:only|just)\s(?:(?:the\s)?(?:ones|papers|those)\s)?(?:(?:from|in)\s)?{y}\b(?!\s*(?:-|–|to|on))"
        rf"|^\s*{y}(?=\s+(?:papers?|work|articles?|publications?)\b)",
        low,
    ):
        year = int(m.group(1) or m.group(2))  # "only 2010", "just the ones from 2012", "2019 papers": that year
        return {"year_min": year, "year_max": year}
    # "after 2008" is read as 2009 on; "since/from 2008" includes 2008. Likewise before / until.
    if m := re.search(rf"\b(?:after|later than|newer than|post)\s+{y}\b|\bpost-{y}\b", low):
        out["year_min"] = int(m.group(1) or m.group(2)) + 1
    elif m := re.search(
        rf"\b(?:since|from|starting(?: in)?|onwards? from|at least)\s+{y}\b"
        rf"|\b{y}\s*(?:\+|or later|and later|onwards?|or newer)",
        low,
    ):
        year = int(m.group(1) or m.group(2))
        if m.group(1) and _LEAVES_OUT_BEFORE.search(low[max(0, m.start() - 40) : m.start()]):
            return {"exclude_years": [(year, year)]}  # "not from 2019": that year left out
        out["year_min"] = year
    if m := re.search(rf"\b(?:before|earlier than|older than|prior to|pre)\s+{y}\b|\bpre-{y}\b", low):
        out["year_max"] = int(m.group(1) or m.group(2)) - 1
    elif m := re.search(
        rf"\b(?:until|up to|through|by|no later than)\s+{y}\b|\b{y}\s*(?:or earlier|and earlier|or before)", low
    ):
        out["year_max"] = int(m.group(1) or m.group(2))
    if not out and (m := re.search(rf"\b(?:in|from|during|of)\s+{y}\b|^\s*{y}\s*$", low)):
        year = int(m.group(1) or m.group(2))
        out = _period(low, m, year, year)
    if not out and (m := re.search(r"\b(?:last|past)\s+(\d{1,2})\s+years\b", low)):
        out["year_min"] = _dt.date.today().year - int(m.group(1))
    elif not out and (m := _YEARS_IN_WORDS.search(low)):  # "the last two years", "the past few years"
        out["year_min"] = _dt.date.today().year - _COUNT_WORDS[m.group(1)]
    if not out and (m := _DECADES.search(low)):  # "in the last decade", "the past two decades"
        out["year_min"] = _dt.date.today().year - 10 * _COUNT_WORDS.get(m.group(1) or "one", 1)
    if not out and (era := era_period(low)) is not None:  # "before deep learning", "the statistical era"
        out = era[0]
    return out


# "after BERT", "since the Transformer", "before the transformer era", "post-BERT": a period named by a paper
PERIOD_OF = re.compile(
    r"\b(?P<rel>after|since|before|pre|post)(?:\s|-)(?:the\s)?(?P<name>[A-Z][\w\-]*[A-Za-z0-9](?:\s[A-Z][\w\-]+){0,2}|"
    r"[a-z]+\d[\w\-]*|[a-z][\w\-]+(?=\s(?:era|paper)\b))(?:\s(?:era|paper|came out|was published|appeared))?\b"
    r"(?!\s(?:19|20)\d\d)"  # "after ACL 2010" is a venue's year
)
_DECADES = re.compile(r"\b(?:last|past)\s+(?:decade|(two|three|couple of|few)\s+decades)\b")
_COUNT_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "couple of": 2, "few": 3, "several": 5,
}  # fmt: skip
_YEARS_IN_WORDS = re.compile(rf"\b(?:last|past)\s+({'|'.join(_COUNT_WORDS)})\s+years\b")


# A paper id typed or pasted into a request ("[ACL:2024.naacl-long.131]", "arXiv:1706.03762"): its prefix names
# an id scheme, not a venue to filter by.
_PAPER_ID = re.compile(r"(?<![\w-])(?:acl|arxiv|doi|corpusid|mag|pmid|pmcid|s2|pc)\s?:\s?(?=[^\s\]]*\d)[^\s\]]+", re.I)


def _venue_updates(text: str, known_venues: Iterable[str]) -> list[str]:
    found: list[str] = []
    domain = profile()
    text = _PAPER_ID.sub(" ", text)
    names = list(dict.fromkeys([*domain.request_venues, *(v for v in known_venues if v)]))
    taken: list[tuple[int, int]] = []  # where longer names were found: "ACL" inside "NAACL 2019" is not ACL
    for name in sorted(names, key=len, reverse=True):
        # short all-caps names must be typed in capitals ("CL" is not "cl" in "class")
        flags = 0 if (name.isupper() and len(name) <= 3) else re.I
        spans = [m.span() for m in re.finditer(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text, flags)]
        spans = [(a, b) for a, b in spans if not any(x <= a and b <= y for x, y in taken)]
        if spans:
            taken += spans
            canon = domain.request_venue_canonical.get(name.lower(), name)
            if canon not in found:
                found.append(canon)
    return found


# "not from EMNLP", "no arXiv papers", "drop anything from arXiv", "everything except NAACL": a venue to leave out
_NOT_AT = (
    r"\b(?:no|not|exclude|excluding|except|without|drop|remove|skip|hide|other than|apart from)\s(?:[\w-]+\s){0,3}?"
)


def _negated_venues(text: str, venues: list[str]) -> list[str]:
    """The venues among ``venues`` that ``text`` asks to leave out."""
    text = " ".join(_PAPER_ID.sub(" ", text).split())
    out = []
    for venue in venues:
        if any(re.search(_NOT_AT + rf"{re.escape(name)}(?![\w-])", text, re.I) for name in venue_names(venue)):
            out.append(venue)
    return out


def venue_names(venue: str) -> set[str]:
    """The canonical venue and every name a user may type for it ("NeurIPS" for NIPS)."""
    return {venue, *(k for k, v in profile().request_venue_canonical.items() if v == venue)}


def content_terms(text: str, limit: int = 6) -> list[str]:
    """Words that say what a topic is about (stop words, numbers and very short words dropped)."""
    words = re.findall(r"[a-z][a-z\-]{2,}", text.lower())
    out: list[str] = []
    for w in words:
        if w not in REQUEST_STOPWORDS and w not in out:
            out.append(w)
    return out[:limit]


# "only papers with more than 50 citations", "at least 100 cites", "500+ citations": a floor, not a subject
MIN_CITED = re.compile(
    r"\b(?:(?P<more>more than|over|above)|at least|a minimum of|min(?:imum)?)\s(?P<n>\d{1,6})\+?\s"
    r"(?:citations?|cites|times cited)\b|\b(?P<n2>\d{1,6})\+\s(?:citations?|cites)\b"
    r"|\bcited\s(?:(?P<more2>more than|over|above)|at least)\s(?P<n3>\d{1,6})\+?\s?times\b",  # "cited over 20 times"
    re.IGNORECASE,
)
_CONSTRAINT_PHRASES.append(MIN_CITED)
# "make it 20", "cut it down to 10", "limit the list to 15": how many results, not a paper called "20"
_MAKE_IT = re.compile(
    r"\b(?:make|change|set|bump|increase|raise|cut|reduce|limit|trim)\s(?:it|that|this|them|the list)"
    r"(?:\s(?:to|up to|down to|at))?\s(?P<k>\d{1,3})\b(?:\s(?:papers|results|articles|hits))?",
    re.IGNORECASE,
)
_CONSTRAINT_PHRASES.append(_MAKE_IT)


# "drop the ones without citations", "only papers that have been cited": cited at least once
_CITED_AT_ALL = re.compile(
    r"\b(?:drop|remove|hide|exclude|no|skip)\s(?:the\s|any\s)?(?:ones|papers|those|results)\s"
    r"(?:without|with no|with zero)\s(?:any\s)?citations?\b"
    r"|\bonly\s(?:the\s)?(?:ones|papers)\s(?:that|which)\s(?:have\s)?been\scited\b",
    re.IGNORECASE,
)
_CONSTRAINT_PHRASES.append(_CITED_AT_ALL)


def min_citations(text: str) -> int | None:
    """The citation floor a text sets ("more than 50 citations" -> 51), if any."""
    if _CITED_AT_ALL.search(text or ""):
        return 1
    if (cited := MIN_CITED.search(text or "")) is None:
        return None
    n = int(cited.group("n") or cited.group("n2") or cited.group("n3"))
    return n + 1 if cited.group("more") or cited.group("more2") else n


def parse_constraints(text: str, known_venues: Iterable[str] = ()) -> dict[str, Any]:
    """The intent fields a piece of free text sets. Unknown words are not guessed at."""
    low = " ".join((text or "").lower().split())
    out: dict[str, Any] = dict(_year_updates(low))
    venues = _venue_updates(text or "", known_venues)
    left_out = _negated_venues(text or "", venues)
    if kept := [v for v in venues if v not in left_out]:
        out["venues"] = kept
    if left_out:
        out["exclude_venues"] = left_out
    if (least := min_citations(text)) is not None:
        out["min_citations"] = least
    if made := _MAKE_IT.search(low):
        if 1 <= int(made.group("k")) <= 500:
            out["k"] = int(made.group("k"))
    elif m := re.search(
        r"\b(?:top|best|first|only|just|give me|show me|keep)\s+(?:the\s+)?(?:top\s+|first\s+|best\s+)?(\d{1,3})\b"
        r"(?!\s*(?:more|\+|citations?|cites|times|years?|%))|\b(\d{1,3})\s+"
        rf"(?:{_RANKED}\s+)?(?:papers|results|articles|hits)\b",  # "10 most cited papers that cite BLEU"
        low,
    ):
        k = int(m.group(1) or m.group(2))
        if 1 <= k <= 500:
            out["k"] = k
    elif re.search(r"\ba (?:few|handful)\b", low):
        out["k"] = 10
    for facet, words in _FACETS.items():
        if any(re.search(rf"\b{re.escape(w)}\b", low) for w in words):
            out.setdefault("facet", facet)
    if order := read_order(low):
        out["order"] = order  # "newest first" orders the list; it does not ask for recent work
    elif re.search(
        r"\b(?:seminal|classic|classics|foundational|highly[- ]cited|influential|landmark|most cited)\b", low
    ):
        out["recency"] = "seminal"
    elif (
        re.search(r"\b(?:recent|latest|newest|newer|new(?! to\b)|current|too (?:many )?old|outdated)\b", low)
        and "year_min" not in out
    ):
        out["recency"] = "recent"
    resources = [
        rt
        for rt, words in profile().resource_types.items()
        if any(re.search(rf"\b{re.escape(w)}\b", low) for w in words)
    ]
    if resources:
        out["resource_types"] = resources
    excl = re.findall(
        r"\b(?:exclude|excluding|without|except(?: for)?|not about|but not|other than|apart from|no|less (?:about|on)|"
        r"not interested in|(?:do not|don't|dont) (?:care about|want)|nothing (?:about|on)"
        r"|(?:(?<=[a-z] )|(?<=, )|(?<=,)|^)not(?=\s+[a-z][\w\-]*(?:\s[a-z][\w\-]*)?\W*$))\s+"
        r"([a-z][\w\- ]{2,40}?)(?:[.,;!?]|$|\band\b)",
        low,
    )
    # "except for biomedical ones" leaves out "biomedical": the words around the phrase name nothing
    excl = [_trimmed(t.split(), _BEFORE_A_PHRASE, _AFTER_A_PHRASE) for t in excl]
    terms = [
        t.strip()
        for t in excl
        if t.strip()
        and t.strip() not in REQUEST_STOPWORDS
        and not re.search(r"\d", t)  # "no papers since 2020" drops a period (above), not a phrase
        and not re.match(r"(?:too|very|so|that|recent|new|newer|old|older|relevant|helpful|useful)\b", t)
        and not set(t.split()) <= _REQUEST_WORDS
        and not set(t.split()) <= {*PAPER_TYPE_WORDS, "or", "and", "nor"}  # "no surveys": a type (below)
        and not any(v.lower() in t for v in left_out)  # "no arXiv papers" leaves out a venue, not a phrase
    ]
    if kinds := publication_kinds(low):
        out["publication_kinds"] = kinds
        terms = [t for t in terms if not set(t.split()) <= _KIND_WORDS]  # "no workshop papers": a kind, not words
    if terms:
        out["exclude_terms"] = terms
    if left_types := negated_types(low):
        out["paper_types"] = [t for t in PAPER_TYPES if t not in left_types]
    elif m := _ONLY_A_TYPE.search(low):  # "only surveys", "just the datasets"
        out["paper_types"] = [PAPER_TYPE_WORDS[m.group(1)]]
    # "about X" inside a leaving-out ("exclude anything about images") names what goes, not a topic
    outside = _LEAVING_OUT.sub(" ", low) if terms else low
    outside = re.sub(r"\bless (?:about|on) [^,.;!?]+", " ", outside)  # "less about speech, more about text"
    if m := re.search(
        r"\b(?:about|on|focus(?:ed|ing)? on|regarding|mostly|especially)\s+([a-z][a-z ,\-]{2,80})", outside
    ):
        topic = content_terms(m.group(1))
        # "what about surveys?" asks for another kind of paper, not for results about the word "surveys"
        topic = [t for t in topic if t not in {"method", "result", "results", "background"} | _REQUEST_WORDS]
        if topic:
            out["topic_terms"] = topic
    return out


# "only journal papers", "just conference papers", "no workshop papers", "peer-reviewed only": how a paper was published
_KIND = r"(?P<k>journals?|conferences?|workshops?|preprints?|peer[- ]reviewed)"
_KIND_NOUN = r"(?:\s(?:papers?|articles?|ones|publications?|versions?))?"
_ONLY_KIND = re.compile(rf"\b(?:only|just)\s(?:the\s)?(?:ones?\s(?:from|in|at)\s)?{_KIND}{_KIND_NOUN}")
_KIND_ONLY = re.compile(rf"\b{_KIND}{_KIND_NOUN}\sonly\b")
_NO_KIND = re.compile(
    rf"\b(?:no|not|without|exclude|excluding|skip|drop|remove|hide|(?:do not|don't|dont) want)\s(?:the\s|any\s)?"
    rf"{_KIND}{_KIND_NOUN}"
)
_CONSTRAINT_PHRASES.append(ERA_PHRASE)
# "only journal papers", "exclude workshop papers": a kind of publication is a constraint, not the subject
_CONSTRAINT_PHRASES += [re.compile(rx.pattern, re.I) for rx in (_ONLY_KIND, _KIND_ONLY, _NO_KIND)]
_KIND_WORDS = frozenset(
    "journal journals conference conferences workshop workshops preprint preprints papers paper articles article "
    "ones publications versions".split()
)
_KINDS: tuple[PublicationKind, ...] = ("journal", "conference", "workshop", "preprint", "unknown")


def publication_kinds(low: str) -> list[PublicationKind]:
    """The kinds of publication a text keeps ("only journal papers" -> journal; "no workshop papers" -> every kind but
    workshop, unknown ones too); [] when it says nothing about them."""
    if m := _ONLY_KIND.search(low) or _KIND_ONLY.search(low):
        word = m.group("k")
        if word.startswith("peer"):
            return ["journal", "conference", "workshop"]
        return [cast(PublicationKind, word.rstrip("s"))]
    if m := _NO_KIND.search(low):
        word = m.group("k").rstrip("s")
        return [k for k in _KINDS if k != word] if not word.startswith("peer") else ["preprint", "unknown"]
    return []


_LEAVING_OUT = re.compile(r"\b(?:exclude|excluding|without|not|no|nothing|except|don'?t|dont)\b.*")
_MERGED_LISTS = (
    "topic_terms", "exclude_terms", "exclude_venues", "exclude_years", "resource_types", "liked_ids", "disliked_ids"
)  # fmt: skip


def apply_updates(intent: Intent, updates: dict[str, Any], note: str | None = None) -> Intent:
    """A new intent with ``updates`` applied (lists are merged, not replaced) and the text kept in notes."""
    data = intent.model_dump()
    for key, value in updates.items():
        if key not in Intent.model_fields:
            continue
        if key in _MERGED_LISTS and isinstance(value, list):
            # periods arrive as lists from JSON: tuples, so equal ones merge
            items = [tuple(v) if isinstance(v, list) else v for v in [*data.get(key, []), *value]]
            data[key] = list(dict.fromkeys(items))
        else:
            data[key] = value
    if data.get("year_min") and data.get("year_max") and data["year_min"] > data["year_max"]:
        # a new bound that contradicts the old one replaces it rather than yielding an empty window
        if "year_min" in updates:
            data["year_max"] = None
        else:
            data["year_min"] = None
    if note:
        data["notes"] = [*data.get("notes", []), note]
    return Intent.model_validate(data)


# type words of a topic request: "surveys on X" asks for surveys, "datasets for X" for resources
_TOPIC_TYPES = {"survey": "survey", "benchmark": "resource"}
# what a paper direction means when there is no paper: older classics, or the latest work
_TOPIC_RECENCY = {"predecessor": "seminal", "successor": "recent"}


# directions relative to one paper: "papers like the one on X by Y" describes that paper ("papers on X by Y",
# with no direction, asks for Y's papers on X instead)
DESCRIBED_DIRECTIONS = ("predecessor", "successor", "sibling", "benchmark")


def parse_request(text: str, known_venues: Iterable[str] = ()) -> ParsedRequest:
    """A request taken apart into what it is about (a paper or a topic), direction and constraints. A
    misspelt steering word ("predecesors") is read as meant when that changes the direction or what kind of
    thing the request names (``respelt``)."""
    parsed = _parse_request(text or "", known_venues)
    fixed, changes = respelt(text or "")
    if not changes:
        return parsed
    again = _parse_request(fixed, known_venues)
    if (again.intent.direction, again.anchor_kind) == (parsed.intent.direction, parsed.anchor_kind):
        return parsed  # "surveys on hovering drones" stays: as "covering" it would change nothing either
    return again.model_copy(update={"respelt": changes})


def _parse_request(text: str, known_venues: Iterable[str]) -> ParsedRequest:
    anchor_query, kind, rest = _find_anchor(text)
    if kind in ("name", "title", "topic"):
        rest = _cut(" ".join(text.split()), anchor_query)
    direction, scores = detect_direction(rest, full_text=text)
    authors: list[str] = []
    year = None
    if kind == "cited" and (cited := cited_reference(anchor_query)) is not None:
        authors, year = cited[1], cited[2]
    described = described_paper(anchor_query) if kind in ("topic", "title", "name") else None
    if described is not None and direction in DESCRIBED_DIRECTIONS:
        anchor_query, authors = described
        kind = "described"
    if direction is None and kind in ("name", "title") and CITED_HOW_OFTEN.search(text):
        direction = "successor"  # "how often is BLEU cited?": the papers citing it, counted on the list
    critique = _critique_of(text, anchor_query) if kind in ("name", "title") else None
    if direction is None and critique:
        direction = "successor"  # "papers that criticize BLEU": later papers, the critical ones preferred
    intent = Intent(request=text, direction=direction)
    updates = parse_constraints(rest, known_venues)
    period_of = None
    venues = {v.lower() for v in known_venues}
    era = ERA_PHRASE.search(rest)
    if (when := PERIOD_OF.search(rest)) and when.group("name").lower() not in venues and era is None:
        # "question answering after BERT": the year BERT appeared bounds the search, once it is looked up
        rel = {"pre": "before", "post": "after"}.get(when.group("rel").lower(), when.group("rel").lower())
        period_of = (rel, when.group("name"))
        if kind == "topic":  # "since the Transformer" dates the topic; it asks for no paper's later work
            without = rest[: when.start()] + rest[when.end() :]
            direction, scores = detect_direction(without, full_text=text)
            intent = intent.model_copy(update={"direction": direction})
            if "recency" not in parse_constraints(without, known_venues):
                updates.pop("recency", None)
    updates.pop("topic_terms", None)  # "work on X" in a request names the anchor's topic, not a filter
    # a topic with a relation ("similar to attention is all you need but for speech") may be a title in lower case
    paper_like = kind not in ("topic", "none") or direction in ("predecessor", "successor", "sibling")
    venue_words = {w.lower() for v in updates.get("venues", []) for w in v.split()}
    if paper_like and (focus := [t for t in focus_terms(text, anchor_query, rest) if t.lower() not in venue_words]):
        updates["topic_terms"] = focus  # "follow-ups to GloVe in ACL": ACL is where, not what about
    if critique and direction == "successor":
        updates["topic_terms"] = [*updates.get("topic_terms", []), *_CRITIQUE_WORDS]
    if direction != "sibling":
        updates.pop("facet", None)  # "method" in "a method for…" is not a facet choice outside sibling search
    if direction == "benchmark" or (direction == "successor" and _EXTENDED_TO.search(rest)):
        # "datasets or benchmarks" is the direction, not a type filter; "extends LDA to multilingual corpora" asks
        # for methods that took it there, not for corpora
        updates.pop("resource_types", None)
    if kind == "topic":
        # no paper named: the direction words say which papers of the topic are wanted
        updates.pop("resource_types", None)
        updates["topic"] = anchor_query
        if direction in _TOPIC_TYPES:
            updates["paper_types"] = [_TOPIC_TYPES[direction]]
        if direction in _TOPIC_RECENCY and "recency" not in updates and "year_min" not in updates:
            updates["recency"] = _TOPIC_RECENCY[direction]
    intent = apply_updates(intent, updates)
    request_words = bool(anchor_query) and normalize_title(anchor_query) != normalize_title(text)
    return ParsedRequest(
        text=text,
        anchor_query=anchor_query,
        anchor_kind=kind,
        intent=intent,
        rest=rest,
        direction_scores=scores,
        constraints={k: v for k, v in updates.items() if k not in ("topic", "paper_types")},
        request_words=request_words,
        authors=authors,
        year=year,
        period_of=period_of,
    )


_CLAUSE_END = re.compile(r"[.?!,;:()\[\]\"“”«»]")
TITLE_TAIL_WORDS = 12  # a longer run of lower-case words after a name is a sentence, not the rest of a title


def title_tail(parsed: ParsedRequest) -> str | None:
    """ "Papers like Attention is all you need": the reading stops at "Attention", the lower-case words after it
    being request words; the subject with the rest of its clause is returned, for the caller to check against
    the source's titles (a title typed in sentence case). None when no lower-case words follow the subject."""
    subject = parsed.anchor_query
    if parsed.anchor_kind not in ("name", "topic") or not subject:
        return None
    text = " ".join(parsed.text.split())
    at = text.find(subject)
    if at < 0:
        return None
    rest = _CLAUSE_END.split(text[at + len(subject) :], maxsplit=1)[0]
    tail = rest.split()
    if not tail or len(tail) > TITLE_TAIL_WORDS or not all(w.isalpha() and w.islower() for w in tail):
        return None
    if len(subject.split()) + len(tail) < 3 or (subject[:1].islower() and len(tail) < 2):
        return None
    return text[at : at + len(subject) + len(rest)].strip()


def named_request(words: str, text: str = "") -> ParsedRequest:
    """A request for the one paper ``words`` name — an id the session holds, or the paper an entity question names
    ("the Penn Treebank paper") — built without reading any words again."""
    words = words.strip()
    if re.fullmatch(r"(?:acl|s2|pc|aminer|corpusid):\S+", words, re.I):
        kind: AnchorKind = "corpus_id"
    elif words.startswith("10."):
        kind = "doi"
    elif re.fullmatch(r"[0-9a-f]{40}", words):
        kind = "s2"
    else:
        kind = "title" if len(words.split()) > 4 else "name"
    return ParsedRequest(text=text or words, anchor_query=words, anchor_kind=kind, intent=Intent(request=text or words))


def as_topic(parsed: ParsedRequest) -> ParsedRequest:
    """The same request read as a topic search (a named paper the source does not hold, a title-like topic)."""
    direction = parsed.intent.direction
    updates: dict[str, Any] = {"topic": parsed.anchor_query, "direction": None, "anchor_id": None}
    if direction in _TOPIC_TYPES:
        updates["paper_types"] = [_TOPIC_TYPES[direction]]
    if direction in _TOPIC_RECENCY and parsed.intent.recency == "any" and parsed.intent.year_min is None:
        updates["recency"] = _TOPIC_RECENCY[direction]
    return parsed.model_copy(update={"anchor_kind": "topic", "intent": apply_updates(parsed.intent, updates)})
