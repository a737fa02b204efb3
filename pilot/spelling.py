"""Typos in the few words that steer a request ("predecesors of BERT", "surveys coverign GloVe").

A misspelt direction word used to leave the request without a direction and make the typo part of the topic
("papers on “predecesors of the transformer”"). Only lower-case, unquoted words of six letters or more, one
edit away from exactly one steering word, are respelt: titles, names and quoted text are never touched, and the
caller keeps a respelling only when it changes the direction, or turns a topic into a named paper.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# the words that decide a request's direction, with the real words one edit from them ("reference",
# "citation") listed too so they are never "corrected"
STEERING_WORDS = frozenset(
    """predecessor predecessors successor successors survey surveys similar benchmark benchmarks dataset datasets
    reference references citation citations influential foundational overview overviews tutorial tutorials
    covering""".split()
)
_MIN_LEN = 6  # shorter words have too many real neighbours
_QUOTED = re.compile(r"[\"“«][^\"“”«»]*[\"”»]")
_WORD = re.compile(rf"\b[a-z]{{{_MIN_LEN},}}\b")


def _distance(a: str, b: str, cap: int) -> int:
    """Optimal-string-alignment distance (a swap of two neighbours is one edit), stopping past ``cap``."""
    if abs(len(a) - len(b)) > cap:
        return cap + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) > cap:
            return cap + 1
        prev2, prev = prev, cur
    return prev[-1]


# --- the words of a topic, against the source's own vocabulary ---------------------------------------------

_TOPIC_WORD = re.compile(r"(?<![\w'’-])[a-z]{5,}(?![\w'’-])")
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
# a typo is put right only when the source never has the typed word and has the meant one this often
_MIN_FREQUENCY = 20


def _edits(word: str) -> dict[str, int]:
    """Every string one edit from ``word``, with how typical that slip is (a letter left out or two swapped is
    likelier than one typed wrong): words of one stem ("translation", "translator") count alike in the index."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    out = {a + c + b[1:]: 1 for a, b in splits if b for c in _LETTERS}  # one letter typed wrong
    out |= {a + b[1:]: 2 for a, b in splits if b}  # one letter too many
    out |= {a + c + b: 3 for a, b in splits for c in _LETTERS}  # one left out
    out |= {a + b[1] + b[0] + b[2:]: 3 for a, b in splits if len(b) > 1}  # two swapped
    out.pop(word, None)
    return out


def respelt_topic(topic: str, frequency: Callable[[str], int | None]) -> tuple[str, dict[str, str]]:
    """``topic`` with words the source never holds put right ("sentimnet analysis" -> "sentiment analysis") when
    one edit away is a word it holds often, and what was changed. ``frequency`` is the source's document
    frequency of a word (None: the source keeps no vocabulary, and nothing is changed). Capitalised words,
    names and quoted text are left alone."""
    changes: dict[str, str] = {}
    quoted = [(m.start(), m.end()) for m in _QUOTED.finditer(topic)]

    def fix(m: re.Match[str]) -> str:
        word = m.group(0)
        if any(a <= m.start() < b for a, b in quoted) or word in changes:
            return changes.get(word, word)
        if frequency(word) != 0:  # known, or no vocabulary to tell
            return word
        edits = _edits(word)
        counts = {w: frequency(w) or 0 for w in edits}
        best = max(counts, key=lambda w: (counts[w], edits[w], w), default=None)
        if best is None or counts[best] < _MIN_FREQUENCY:
            return word
        changes[word] = best
        return best

    return _TOPIC_WORD.sub(fix, topic), changes


def _meant(word: str) -> str | None:
    """The one steering word a single edit away from ``word`` (none when ``word`` is one, or two are)."""
    if word in STEERING_WORDS:
        return None
    close = [w for w in STEERING_WORDS if _distance(word, w, 1) <= 1]
    return close[0] if len(close) == 1 else None


# Short steering words have too many real neighbours to find by edit distance; their usual typos are listed
# ("wat cam befor BERT?"). The caller keeps a respelling only when it changes how the request reads.
_SHORT_TYPOS = {
    "befor": "before", "beofre": "before", "bfore": "before", "afer": "after", "aftr": "after", "atfer": "after",
    "cam": "came", "wat": "what", "waht": "what", "whta": "what", "papres": "papers", "paprs": "papers",
    "citng": "citing", "ctie": "cite", "lik": "like", "liek": "like",
}  # fmt: skip
_SHORT_WORD = re.compile(rf"\b(?:{'|'.join(_SHORT_TYPOS)})\b")


def respelt(text: str) -> tuple[str, dict[str, str]]:
    """``text`` with misspelt steering words put right, and what was changed (typo -> word)."""
    quoted = [(m.start(), m.end()) for m in _QUOTED.finditer(text)]
    changes: dict[str, str] = {}

    def short(m: re.Match[str]) -> str:
        if any(a <= m.start() < b for a, b in quoted):
            return m.group(0)
        changes[m.group(0)] = _SHORT_TYPOS[m.group(0)]
        return _SHORT_TYPOS[m.group(0)]

    text = _SHORT_WORD.sub(short, text)

    def fix(m: re.Match[str]) -> str:
        if any(a <= m.start() < b for a, b in quoted):
            return m.group(0)
        meant = _meant(m.group(0))
        if meant is None:
            return m.group(0)
        changes[m.group(0)] = meant
        return meant

    fixed = _WORD.sub(fix, text)
    return fixed, changes
