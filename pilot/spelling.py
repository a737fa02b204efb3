"""Typos in the few words that steer a request ("predecesors of BERT", "surveys coverign GloVe").

A misspelt direction word used to leave the request without a direction and make the typo part of the topic
("papers on “predecesors of the transformer”"). Only lower-case, unquoted words of six letters or more, one
edit away from exactly one steering word, are respelt: titles, names and quoted text are never touched, and the
caller keeps a respelling only when it changes the direction, or turns a topic into a named paper.
"""

from __future__ import annotations

import re

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


def _meant(word: str) -> str | None:
    """The one steering word a single edit away from ``word`` (none when ``word`` is one, or two are)."""
    if word in STEERING_WORDS:
        return None
    close = [w for w in STEERING_WORDS if _distance(word, w, 1) <= 1]
    return close[0] if len(close) == 1 else None


def respelt(text: str) -> tuple[str, dict[str, str]]:
    """``text`` with misspelt steering words put right, and what was changed (typo -> word)."""
    quoted = [(m.start(), m.end()) for m in _QUOTED.finditer(text)]
    changes: dict[str, str] = {}

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
