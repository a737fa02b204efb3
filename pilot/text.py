"""The one home of pilot's text helpers: folding, title normalisation, word splitting, stop words.

Every layer matches text the same way through these: the corpus build and its queries (they must agree
exactly), the operators' term matching, the entity filters, the request parser. Each stop-word set has
one purpose and is declared once, built from the shared ``FUNCTION_WORDS``.
"""

from __future__ import annotations

import html
import json
import re
import unicodedata
from functools import lru_cache
from importlib import resources
from typing import Any

# --- folding ----------------------------------------------------------------------------------------


def unescape(text: str | None) -> str:
    """HTML entities decoded (twice: some records are double-escaped), whitespace collapsed."""
    if not text:
        return ""
    return " ".join(html.unescape(html.unescape(text)).split())


# C0 and C1 control characters (a terminal runs some as commands: "\x1b[2J" clears the screen), and the
# bidirectional overrides that make a line read differently from what it holds; tab and newline stay.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str | None) -> str:
    """Text safe to print to a terminal: control characters from sources or users removed."""
    return _CONTROL.sub("", text or "")


def duration(seconds: float) -> str:
    """A wait in words, rounded the way a person says it: "40 seconds", "4 minutes", "about 1 hour",
    "about 2 days"."""
    s = max(0.0, float(seconds))
    if s < 90:
        n = max(1, round(s))
        return f"{n} second{'s' if n != 1 else ''}"
    if s < 59.5 * 60:
        return f"{round(s / 60)} minutes"
    if s < 36 * 3600:
        n = round(s / 3600)
        return f"about {n} hour{'s' if n != 1 else ''}"
    n = round(s / 86400)
    return f"about {n} day{'s' if n != 1 else ''}"


# An HTML tag or comment pasted into a chat message (from a web page, or to attack the page): its attribute
# values are not the researcher's words — a quoted ``onerror="…"`` must never be read as a quoted title.
# Bounded and without nesting, so it runs in linear time on any paste.
_MARKUP = re.compile(r"<!--[^>]{0,2000}>|</?[A-Za-z][^<>]{0,1000}>")
# what a script or style element holds is code, never words of a request ("<script>alert(1)</script> parsing")
_CODE_ELEMENT = re.compile(r"<(script|style)\b[^<>]{0,1000}>[^<]{0,5000}</\1\s*>", re.I)


def strip_markup(text: str | None) -> str:
    """The words of a message without HTML tags or comments (what they enclose stays, except a script's or a
    style's code), spaces collapsed."""
    return " ".join(_MARKUP.sub(" ", _CODE_ELEMENT.sub(" ", text or "")).split())


def fold(text: str | None) -> str:
    """Lower-case, accent-free form for matching ("Haji&#x10D;" -> "hajic")."""
    text = unicodedata.normalize("NFKD", unescape(text))
    return "".join(c for c in text if not unicodedata.combining(c)).lower()


def normalize_title(title: str | None) -> str:
    """Lower-case, accent-free, punctuation-free form used to de-duplicate papers across sources."""
    if not title:
        return ""
    text = unicodedata.normalize("NFKD", html.unescape(title))
    text = "".join(c for c in text if not unicodedata.combining(c))
    return re.sub(r"[^0-9a-z]+", " ", text.lower()).strip()


def slugify(text: str) -> str:
    """A url-safe, deterministic id fragment for entity names (keeps non-Latin letters)."""
    text = unicodedata.normalize("NFKC", html.unescape(text or "")).lower().strip()
    return re.sub(r"[^\w]+", "-", text, flags=re.UNICODE).strip("-") or "unknown"


# --- words ------------------------------------------------------------------------------------------

_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def words(text: str | None) -> list[str]:
    """Folded words of any script ("Hajič, Jan" -> ["hajic", "jan"]): names, venues, organisations, topics."""
    return _WORD.findall(fold(text))


@lru_cache(maxsize=1)
def snowball() -> Any:
    """The English Snowball stemmer (PyStemmer), shared by the corpus index and the word matching here."""
    import Stemmer

    return Stemmer.Stemmer("english")


def root(word: str) -> str:
    """A word's Snowball root: "answering", "answers" and "answer" share one; a sub-area must not be a
    variant of the topic's own words."""
    return str(snowball().stemWord(word.lower()))


def stem(word: str) -> str:
    """Enough to make "graphs"/"graph" and "embeddings"/"embedding" meet; topics are short phrases."""
    for suffix in ("ies", "es", "s"):
        if len(word) > 4 and word.endswith(suffix):
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def contains_run(haystack: list[str], needle: list[str]) -> bool:
    """``needle`` occurs as a contiguous run of whole words in ``haystack`` ("data set" in "a new data set")."""
    n = len(needle)
    return n > 0 and any(haystack[i : i + n] == needle for i in range(len(haystack) - n + 1))


# --- stop words -------------------------------------------------------------------------------------

# Function words every other set starts from.
FUNCTION_WORDS = frozenset(("a", "an", "the", "of", "for", "in", "on", "and", "or", "to", "with", "by"))

# A topic filter ("papers on graph embeddings"): only the words that join a topic phrase.
TOPIC_FILTER_STOPWORDS = FUNCTION_WORDS | {"about", "using", "based"}

# Title words that say nothing about a topic; kept out of author/venue/org "topics".
TITLE_STOPWORDS = FUNCTION_WORDS | frozenset(
    [
        "from",
        "via",
        "using",
        "use",
        "based",
        "towards",
        "toward",
        "into",
        "over",
        "under",
        "at",
        "as",
        "is",
        "are",
        "be",
        "its",
        "their",
        "our",
        "we",
        "new",
        "approach",
        "approaches",
        "method",
        "methods",
        "model",
        "models",
        "learning",
        "system",
        "systems",
        "paper",
        "study",
        "analysis",
        "task",
        "tasks",
        "improving",
        "improved",
        "efficient",
        "effective",
        "robust",
        "large",
        "scale",
        "deep",
        "neural",
        "network",
        "networks",
        "data",
        "without",
        "through",
        "beyond",
        "more",
        "less",
        "than",
        "can",
        "how",
        "what",
        "when",
        "why",
        "which",
        "multi",
        "non",
        "self",
        "semi",
    ]
)

# Words of a request ("please find papers like …") that name no topic.
REQUEST_STOPWORDS = FUNCTION_WORDS | frozenset(
    [
        "from",
        "at",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "this",
        "that",
        "these",
        "those",
        "it",
        "its",
        "my",
        "our",
        "your",
        "me",
        "i",
        "we",
        "you",
        "they",
        "them",
        "which",
        "what",
        "who",
        "whom",
        "how",
        "why",
        "when",
        "where",
        "please",
        "can",
        "could",
        "would",
        "should",
        "papers",
        "paper",
        "work",
        "works",
        "find",
        "show",
        "give",
        "want",
        "need",
        "like",
        "more",
        "some",
        "any",
        "only",
        "about",
        "related",
        "just",
        "also",
        "very",
        "without",
        "earlier",
        "later",
        "recent",
        "older",
        "newer",
        "before",
        "after",
        "since",
        "until",
        "between",
        "than",
        "into",
        "onto",
        "over",
        "under",
        "other",
        "others",
        # how much, or how it is said ("mainly RST", "nah, any venue is fine"): no word of a topic
        "mainly",
        "mostly",
        "primarily",
        "especially",
        "particularly",
        "nah",
        "fine",
        "interested",
        "instead",
    ]
)

# Words of a request that say what the user wants done ("find", "key papers", "what should I read"), not
# what it is about: a topic request's topic is what follows them (pilot.reading).
INSTRUCTION_WORDS = FUNCTION_WORDS | frozenset(
    """find show give get list recommend suggest search searching look looking need want wanted like would please
    help me i we us my our you your can could should shall will may might must tell point pointers what which where
    how is are was were am be been being has have had do does did there exist exists existing available some any
    all few several main key important essential relevant good best top major basic core must-read canonical
    seminal classic classical foundational influential landmark standard recent latest newest new current modern
    state-of-the-art stateoftheart prior previous earlier papers paper work works literature research articles
    article publications publication studies study references reading readings read published written done
    known starting start started begin beginning getting into learn learning understand understanding know
    knowing more out up so far already also other others just guide guides intro""".split()
)

# Words a noun phrase does not cross ("tree kernels for relation extraction" -> two phrases).
PHRASE_BREAK_WORDS = FUNCTION_WORDS | frozenset(
    """without at from into onto via using through over under between across against but vs versus as than
    toward towards based applied""".split()
)

# Determiners a noun phrase does not start with.
DETERMINERS = frozenset("a an the its their our this that these those some any".split())

# Words every paper title/abstract uses; they say nothing about the topic.
ACADEMIC_WORDS = frozenset(
    [
        "paper",
        "papers",
        "approach",
        "approaches",
        "method",
        "methods",
        "methodology",
        "result",
        "results",
        "propose",
        "proposed",
        "proposes",
        "present",
        "presents",
        "presented",
        "show",
        "shows",
        "shown",
        "use",
        "used",
        "uses",
        "using",
        "based",
        "new",
        "novel",
        "study",
        "studies",
        "work",
        "works",
        "task",
        "tasks",
        "problem",
        "problems",
        "performance",
        "experiment",
        "experiments",
        "experimental",
        "evaluation",
        "evaluate",
        "evaluated",
        "data",
        "set",
        "sets",
        "introduce",
        "introduces",
        "introduced",
        "describe",
        "describes",
        "described",
        "provide",
        "provides",
        "improve",
        "improved",
        "improves",
        "improving",
        "effective",
        "efficient",
        "simple",
        "first",
        "also",
        "can",
        "may",
        "one",
        "two",
        "three",
        "different",
        "various",
        "several",
        "within",
        "via",
        "towards",
        "toward",
        "well",
        "however",
        "thus",
        "paper's",
        "article",
        "case",
        "cases",
        "significantly",
        "significant",
        "state",
        "art",
        "technique",
        "techniques",
        "framework",
        "investigate",
        "investigates",
        "report",
        "reports",
        "recent",
        "large",
        "small",
        "high",
        "low",
        "like",
        "many",
        "much",
        "often",
        "number",
        "able",
        "given",
    ]
)


def data_text(name: str) -> str:
    """A file the package ships in ``pilot/data`` (word lists, tables of names), as text."""
    return resources.files("pilot").joinpath(f"data/{name}").read_text(encoding="utf-8")


def data_json(name: str) -> Any:
    """A JSON table the package ships in ``pilot/data``."""
    return json.loads(data_text(name))


def _word_file(name: str) -> frozenset[str]:
    text = data_text(name)
    return frozenset(w for line in text.splitlines() if (w := line.strip()) and not w.startswith("#"))


# scikit-learn's English stop words, shipped as data (importing scikit-learn for them costs seconds)
ENGLISH_STOPWORDS = _word_file("english_stop_words.txt")

# Query terms of the paper operators (BM25 over a candidate set, keywords, evidence): English stop words
# and academic filler.
QUERY_STOPWORDS = ENGLISH_STOPWORDS | FUNCTION_WORDS | ACADEMIC_WORDS


_PHRASE_WORD = re.compile(r"[^\W_][\w'’\-]*", re.UNICODE)


def noun_phrases(text: str, limit: int = 6) -> list[str]:
    """The request's noun phrases: runs of words between function words and punctuation, each naming one
    part of the topic ("tree kernels", "semantic role labeling"); longer runs first."""
    phrases: list[str] = []
    for chunk in re.split(r"[,:;()\[\]{}\"“”?!]|\s[-–—]\s", text or ""):
        run: list[str] = []
        for word in [*_PHRASE_WORD.findall(chunk), "of"]:  # a closing function word flushes the last run
            if word.lower() in PHRASE_BREAK_WORDS:
                while run and run[0].lower() in DETERMINERS:
                    run = run[1:]
                if run:
                    phrases.append(" ".join(run))
                run = []
            else:
                run.append(word)
    ordered = [p for p in phrases if " " in p] + [p for p in phrases if " " not in p]
    return list(dict.fromkeys(p.lower() for p in ordered))[:limit]
