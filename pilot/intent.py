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
from dataclasses import dataclass, field
from typing import Any, Literal

from pilot.domain import profile
from pilot.models import Intent
from pilot.text import REQUEST_STOPWORDS

AnchorKind = Literal["doi", "arxiv", "s2", "corpus_id", "title", "text", "none"]

_FACETS = {
    "method": ("method", "methods", "approach", "technique", "algorithm", "model", "how they do it"),
    "background": ("background", "problem", "motivation", "task", "research question"),
    "result": ("result", "results", "finding", "findings", "conclusion", "outcome"),
}

# (pattern, direction, weight). Matched against the request with the anchor removed; highest total wins.
_DIRECTION_RULES: list[tuple[str, str, float]] = [
    (r"\bprior work\b|\bearlier (?:work|papers?)\b|\bolder papers?\b|\bpredecessors?\b", "predecessor", 3),
    (
        r"\bbuilds? (?:up)?on\b|\bbased on\b|\bbackground literature\b|\bfoundational\b|\bkey references\b",
        "predecessor",
        2,
    ),
    (
        r"\bshould i (?:be )?cit(?:e|ing)\b|\breferences?\b|\bwhat does .* cite\b|\bbehind\b|\bmy (?:draft|paper)\b",
        "predecessor",
        1.5,
    ),
    (
        r"\blater (?:work|papers?)\b|\bfollow[- ]?ups?\b|\bcame after\b|\bfollowed\b|\bpicked up\b|\bsuccessors?\b",
        "successor",
        3,
    ),
    (
        r"\b(?:has|have|who) (?:\w+ )?built on\b|\bcit(?:e|ing|ed by)\b.*\bextend|\bcited by\b"
        r"|\bciting papers?\b|\bextend(?:s|ed)?\b|\bsince then\b",
        "successor",
        2.5,
    ),
    (
        r"\b(?:papers?|works?|articles?|publications?)\s+(?:that\s+|which\s+)?cit(?:e|es|ing)\b"
        r"|\bwho cites?\b|\bwhat cites\b",
        "successor",
        3,
    ),
    (r"\bsimilar\b|\bcomparable\b|\bclosely related\b|\balong these lines\b|\bsiblings?\b|\blike this\b", "sibling", 3),
    (r"\b(?:papers?|works?|articles?|publications?)\s+(?:just\s+|much\s+)?like\b|\blike it\b", "sibling", 3),
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
        r"\bsurveys?\b|\bliterature reviews?\b|\boverviews?\b|\breview articles?\b|\btutorials?\b|\bstate of the art\b",
        "survey",
        3.5,
    ),
]

_QUOTE_RE = re.compile(r"[\"“”«»]([^\"“”«»]{4,})[\"“”«»]")
_DOI_RE = re.compile(r"\b(10\.\d{4,9}/[^\s\"'<>]+)", re.I)
_ARXIV_RE = re.compile(r"(?:arxiv[:/ ]\s*|arxiv\.org/(?:abs|pdf)/)?\b(\d{4}\.\d{4,5})(?:v\d+)?\b", re.I)
_S2_RE = re.compile(r"\b([0-9a-f]{40})\b")
_CORPUS_ID_RE = re.compile(r"\b((?:acl|s2|pc|aminer):[\w.\-:]+)")


@dataclass
class ParsedRequest:
    """The first message, taken apart. ``anchor_query`` is what the source should resolve."""

    text: str
    anchor_query: str
    anchor_kind: AnchorKind
    intent: Intent
    rest: str = ""  # the request without the anchor: what direction/constraints were read from
    direction_scores: dict[str, float] = field(default_factory=dict)


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
    if m and ("arxiv" in text.lower() or re.fullmatch(r"\s*\d{4}\.\d{4,5}(v\d+)?\s*", text)):
        return m.group(1), "arxiv", text.replace(m.group(0), " ")
    quoted = _QUOTE_RE.findall(text)
    if quoted:
        title = max(quoted, key=len).strip()
        return title, "title", _QUOTE_RE.sub(" ", text)
    stripped = " ".join(text.split())
    return (_strip_request_words(stripped), "text", stripped) if stripped else ("", "none", "")


_FILLER_RE = re.compile(
    r"^(?:(?:please|can you|could you|find|show|give|get|recommend|me|i|want|need|to|see|papers?|works?|the|some|"
    r"all|any|articles?|more|other|what|which|who|are|is|there|that|similar|related|like|on|about|for|of|"
    r"later|earlier|prior|older|follow[- ]?ups?|cite|citing|cited|by|extend|build|builds|built|surveys?|"
    r"datasets?|benchmarks?|reviews?|literature|closely|predecessors?|successors?|siblings?|ancestors?|"
    r"covering|covers?|uses?|used|using|around|upon|building|based|foundations?|references?)\b[\s,:]*)+",
    re.I,
)


def _strip_request_words(text: str) -> str:
    """ "papers similar to BLEU a method for …" -> "BLEU a method for …" (what the search should match)."""
    text = re.sub(r"\b(?:after|before|since|between|from)\s+(?:19|20)\d\d\b.*$", "", text, flags=re.I).strip()
    cut = _FILLER_RE.sub("", text).strip(" ?.!,")
    return cut or text


# "papers that build on X" asks for successors; "what does X build on?" for predecessors. Only the full
# text tells them apart (is anything named after "on"?), since the anchor is cut out of the request.
_BUILD_ON_FORWARD = re.compile(r"\b(?:build|builds|built|building)\s+(?:up)?on\s+[\w\"“'«]", re.I)


def detect_direction(rest: str, full_text: str | None = None) -> tuple[str | None, dict[str, float]]:
    """The direction the words ask for, or None when nothing (or a tie) says so."""
    low = rest.lower()
    scores: dict[str, float] = {}
    for pattern, direction, weight in _DIRECTION_RULES:
        if re.search(pattern, low):
            scores[direction] = scores.get(direction, 0.0) + weight
    if full_text and _BUILD_ON_FORWARD.search(full_text) and re.search(r"\bbuil(?:d|ds|t|ding) (?:up)?on\b", low):
        scores["predecessor"] = scores.get("predecessor", 0.0) - 2
        scores["successor"] = scores.get("successor", 0.0) + 2.5
        scores = {d: v for d, v in scores.items() if v > 0}
    if not scores:
        return None, scores
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return None, scores
    return ranked[0][0], scores


def _year_updates(low: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    y = r"((?:19|20)\d\d)"
    m = re.search(rf"\bbetween\s+{y}\s+and\s+{y}\b", low) or re.search(
        rf"\b{y}\s*(?:-|–|to|until|through)\s*{y}\b", low
    )
    if m:
        a, b = sorted((int(m.group(1)), int(m.group(2))))
        return {"year_min": a, "year_max": b}
    decade = re.search(r"\b(?:the\s+)?((?:19|20)\d)0'?s\b", low)
    if decade:
        start = int(decade.group(1)) * 10
        return {"year_min": start, "year_max": start + 9}
    # "after 2008" is read as 2009 on; "since/from 2008" includes 2008. Likewise before / until.
    if m := re.search(rf"\b(?:after|later than|newer than|post)\s+{y}\b", low):
        out["year_min"] = int(m.group(1)) + 1
    elif m := re.search(
        rf"\b(?:since|from|starting(?: in)?|onwards? from|at least)\s+{y}\b"
        rf"|\b{y}\s*(?:\+|or later|and later|onwards?|or newer)",
        low,
    ):
        out["year_min"] = int(m.group(1) or m.group(2))
    if m := re.search(rf"\b(?:before|earlier than|older than|prior to|pre)\s+{y}\b", low):
        out["year_max"] = int(m.group(1)) - 1
    elif m := re.search(
        rf"\b(?:until|up to|through|by|no later than)\s+{y}\b|\b{y}\s*(?:or earlier|and earlier|or before)", low
    ):
        out["year_max"] = int(m.group(1) or m.group(2))
    if not out and (m := re.search(rf"\b(?:in|from|during)\s+{y}\b|^\s*{y}\s*$", low)):
        year = int(m.group(1) or m.group(2))
        out = {"year_min": year, "year_max": year}
    if not out and (m := re.search(r"\b(?:last|past)\s+(\d{1,2})\s+years\b", low)):
        out["year_min"] = _dt.date.today().year - int(m.group(1))
    return out


def _venue_updates(text: str, known_venues: Iterable[str]) -> list[str]:
    found: list[str] = []
    domain = profile()
    names = list(dict.fromkeys([*domain.request_venues, *(v for v in known_venues if v)]))
    for name in sorted(names, key=len, reverse=True):
        # short all-caps names must be typed in capitals ("CL" is not "cl" in "class")
        flags = 0 if (name.isupper() and len(name) <= 3) else re.I
        if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text, flags):
            canon = domain.request_venue_canonical.get(name.lower(), name)
            if canon not in found and not any(canon.lower() in f.lower() for f in found):
                found.append(canon)
    return found


def content_terms(text: str, limit: int = 6) -> list[str]:
    """Words that say what a topic is about (stop words, numbers and very short words dropped)."""
    words = re.findall(r"[a-z][a-z\-]{2,}", text.lower())
    out: list[str] = []
    for w in words:
        if w not in REQUEST_STOPWORDS and w not in out:
            out.append(w)
    return out[:limit]


def parse_constraints(text: str, known_venues: Iterable[str] = ()) -> dict[str, Any]:
    """The intent fields a piece of free text sets. Unknown words are not guessed at."""
    low = " ".join((text or "").lower().split())
    out: dict[str, Any] = dict(_year_updates(low))
    venues = _venue_updates(text or "", known_venues)
    if venues:
        out["venues"] = venues
    if m := re.search(
        r"\b(?:top|best|first|only|just)\s+(\d{1,3})\b|\b(\d{1,3})\s+(?:papers|results|articles|hits)\b", low
    ):
        k = int(m.group(1) or m.group(2))
        if 1 <= k <= 500:
            out["k"] = k
    elif re.search(r"\ba (?:few|handful)\b", low):
        out["k"] = 10
    for facet, words in _FACETS.items():
        if any(re.search(rf"\b{re.escape(w)}\b", low) for w in words):
            out.setdefault("facet", facet)
    if re.search(r"\b(?:seminal|classic|classics|foundational|highly[- ]cited|influential|landmark|most cited)\b", low):
        out["recency"] = "seminal"
    elif re.search(r"\b(?:recent|latest|newest|new|current)\b", low) and "year_min" not in out:
        out["recency"] = "recent"
    resources = [
        rt
        for rt, words in profile().resource_types.items()
        if any(re.search(rf"\b{re.escape(w)}\b", low) for w in words)
    ]
    if resources:
        out["resource_types"] = resources
    excl = re.findall(
        r"\b(?:exclude|excluding|without|except|not about|no)\s+([a-z][\w\- ]{2,40}?)(?:[.,;]|$|\band\b)", low
    )
    terms = [t.strip() for t in excl if t.strip() and t.strip() not in REQUEST_STOPWORDS and not t.strip().isdigit()]
    if terms:
        out["exclude_terms"] = terms
    if m := re.search(r"\b(?:about|on|focus(?:ed|ing)? on|regarding|mostly|especially)\s+([a-z][a-z ,\-]{2,80})", low):
        topic = content_terms(m.group(1))
        topic = [t for t in topic if t not in {"method", "result", "results", "background", "papers"}]
        if topic:
            out["topic_terms"] = topic
    return out


def apply_updates(intent: Intent, updates: dict[str, Any], note: str | None = None) -> Intent:
    """A new intent with ``updates`` applied (lists are merged, not replaced) and the text kept in notes."""
    data = intent.model_dump()
    for key, value in updates.items():
        if key not in Intent.model_fields:
            continue
        if key in ("topic_terms", "exclude_terms", "resource_types", "liked_ids", "disliked_ids") and isinstance(
            value, list
        ):
            data[key] = list(dict.fromkeys([*data.get(key, []), *value]))
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


def parse_request(text: str, known_venues: Iterable[str] = ()) -> ParsedRequest:
    """The first message of a conversation, taken apart into anchor, direction and constraints."""
    text = text or ""
    anchor_query, kind, rest = _find_anchor(text)
    direction, scores = detect_direction(rest if kind != "text" else text, full_text=text)
    intent = Intent(request=text, direction=direction)
    # a bare title/free text carries no constraints; read them only from words around a delimited anchor
    if kind == "text":
        years = _year_updates(" ".join(text.lower().split()))
        if years and years.get("year_min") != years.get("year_max"):  # "in 2010" may be part of a title
            intent = apply_updates(intent, years)
    else:
        updates = parse_constraints(rest, known_venues)
        updates.pop("topic_terms", None)  # "work on X" in a request names the anchor's topic, not a filter
        if direction != "sibling":
            updates.pop("facet", None)  # "method" in "a method for…" is not a facet choice outside sibling search
        if direction == "benchmark":
            updates.pop("resource_types", None)  # "datasets or benchmarks" is the direction, not a type filter
        intent = apply_updates(intent, updates)
    return ParsedRequest(
        text=text, anchor_query=anchor_query, anchor_kind=kind, intent=intent, rest=rest, direction_scores=scores
    )
