"""A search request, as the session acts on it, and the few helpers around it.

The words of a request are read once, by ``pilot.reading``; ``pilot.message`` turns that reading into a
``ParsedRequest`` (what names the paper or topic, how it was named, the ``Intent`` it asks for). What is here never
reads a user's words: it updates intents, turns a request into a topic search, builds the request for a paper the
session already holds, and tells a name from a title in a paper's query string.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field

from pilot.models import Intent
from pilot.text import REQUEST_STOPWORDS

AnchorKind = Literal[
    "doi", "arxiv", "s2", "corpus_id", "title", "name", "described", "cited", "topic", "current", "none"
]
ID_KINDS: tuple[str, ...] = ("corpus_id", "doi", "arxiv", "s2")


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


def content_terms(text: str, limit: int = 6) -> list[str]:
    """Words that say what a topic is about (stop words, numbers and very short words dropped)."""
    words = re.findall(r"[a-z][a-z\-]{2,}", text.lower())
    out: list[str] = []
    for w in words:
        if w not in REQUEST_STOPWORDS and w not in out:
            out.append(w)
    return out[:limit]


# "only papers with more than 50 citations", "at least 100 cites", "500+ citations": a floor, not a subject


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
