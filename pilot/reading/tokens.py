"""Words with their offsets, and the few normalisations every layer of the reader shares.

A token keeps where it is in the text (spans are offsets into the message as the reader saw it), its surface
form, and a folded form (lower case, curly quotes made straight) that the lexicons and the cue grammar match.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

# A word: letters and digits, with inner hyphens, apostrophes, dots and pluses kept ("pointer-generator",
# "Blei's", "GIZA++", "2015+", "U.S."), or one CJK character run, or one punctuation mark.
_TOKEN = re.compile(
    r"[#@]?[^\W_](?:[\w]|(?:::|[-'’.+&])(?=[\w+]))*\+{0,2}|[\u4e00-\u9fff\u3400-\u4dbf]+|[^\w\s]",
    re.UNICODE,
)


@dataclass(frozen=True)
class Token:
    text: str
    start: int
    end: int

    @property
    def low(self) -> str:
        return fold_word(self.text)

    @property
    def is_word(self) -> bool:
        return self.text[:1].isalnum() or self.text[:1] in "#@"

    @property
    def is_cjk(self) -> bool:
        return "\u3400" <= self.text[:1] <= "\u9fff"


def fold_word(word: str) -> str:
    low = word.lower().replace("’", "'")
    return low.rstrip(".") if len(low) > 1 else low


def without_possessive(word: str) -> str:
    """ "BatchNorm's" -> "BatchNorm", straight or curly apostrophe: a name in the possessive is that name."""
    return word.removesuffix("'s").removesuffix("’s")


def tokenize(text: str) -> list[Token]:
    return [Token(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(text)]


def normalise(text: str) -> str:
    """Quotes and dashes made plain, blanks collapsed: offsets into this form are what spans carry."""
    text = text.replace("\u00a0", " ").replace("–", "-").replace("—", " - ").replace("‘", "'").replace("’", "'")
    if not text.isascii():  # "²", "２０１９": digits of other scripts are read as the digits they are
        text = "".join(str(unicodedata.digit(c)) if c.isdigit() and not c.isascii() else c for c in text)
    return " ".join(text.split())


def edit_distance_one(a: str, b: str) -> bool:
    """``a`` and ``b`` differ by one insertion, deletion, substitution or swap of neighbours."""
    if a == b:
        return False
    la, lb = len(a), len(b)
    if abs(la - lb) > 1:
        return False
    if la == lb:
        diff = [i for i in range(la) if a[i] != b[i]]
        if len(diff) == 1:
            return True
        return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
    short, long_ = (a, b) if la < lb else (b, a)
    i = 0
    while i < len(short) and short[i] == long_[i]:
        i += 1
    return short[i:] == long_[i + 1 :]


@lru_cache(maxsize=4096)
def by_length(vocabulary: frozenset[str], length: int) -> tuple[str, ...]:
    return tuple(w for w in vocabulary if abs(len(w) - length) <= 1)


def edit_distance(a: str, b: str, limit: int) -> int:
    """Optimal-string-alignment distance (a swap of neighbours is one edit), or ``limit + 1`` once it exceeds it."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], prev2[j - 2] + 1)
        if min(row) > limit:
            return limit + 1
        prev2, prev = prev, row
    return prev[-1]


def respell(word: str, vocabulary: frozenset[str], known: frozenset[str]) -> str | None:
    """The one ``vocabulary`` word that ``word`` is a typo of, when ``word`` is not a word itself (``known``).
    Words of three letters only by a swap of neighbours ("fnd" is no word, but "fro" has many neighbours)."""
    if len(word) < 3 or word in known or word in vocabulary or not word.isalpha():
        return None
    if len(word) == 3:
        near = [w for w in by_length(vocabulary, 4) if len(w) == 4 and w[0] == word[0] and edit_distance_one(word, w)]
        return near[0] if len(near) == 1 else None
    near = [w for w in by_length(vocabulary, len(word)) if edit_distance_one(word, w)]
    if not near and len(word) >= 7:
        # a long word two edits off ("explane"), when one word it could be is that close and starts the same; a
        # name typed in lower case ("manning", "lample") is not respelled into another word
        close = {
            w: (edit_distance(word, w, 2), abs(len(w) - len(word)))
            for w in vocabulary
            if w[0] == word[0] and abs(len(w) - len(word)) <= 2
        }
        best = min((d for d in close.values() if d[0] <= 2), default=None)
        near = [w for w, d in close.items() if d == best]  # "explane": "explain" (as long), not "explained"
    return near[0] if len(near) == 1 else None
