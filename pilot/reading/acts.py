"""What a message asks for, from example utterances (``data/exemplars.txt``), in the style of semantic-router.

Each label is a set of examples written with slots for spans ("what came out after {P}?"). A message, with its
spans replaced the same way, is scored against every label by the mean of its three most similar examples:
the cosine of MiniLM sentence vectors (the model the project ships; vectors of the examples are computed once
and cached) blended with a character n-gram similarity of the message's skeleton (its asking words, with the
subject's words blanked). The n-gram part needs no model: where torch is absent it decides alone, the same way
every time.
"""

from __future__ import annotations

import logging
import math
import os
import re
import threading
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from pilot.reading.cues import lemma, slot_of
from pilot.reading.lexicon import data_file
from pilot.reading.spans import Extracted, word_set

log = logging.getLogger(__name__)

Encoder = Callable[[list[str]], np.ndarray]

# what a slot reads as to the sentence model: words it knows, of the right kind
STAND_IN = {
    "P": "the paper", "N": "number 3", "T": "surveys", "A": "John Smith", "V": "ACL", "Y": "2015",
    "O": "Stanford University", "K": "20 results", "F": "bibtex", "S": "the keyword search step",
}  # fmt: skip
_SLOT = re.compile(r"\{([PNTAVYOKFS])\}")
TOP_K = 3
EMBED_SHARE = 0.6  # the sentence model's share of a label's score when it is there


@dataclass(frozen=True)
class Exemplar:
    label: str
    text: str  # with slots, as written


def parse_exemplars(text: str) -> list[Exemplar]:
    out, label = [], None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            label = line[1:-1]
            continue
        if label is None:
            raise ValueError(f"exemplar before any [label]: {line!r}")
        out.append(Exemplar(label, line))
    return out


@lru_cache(maxsize=1)
def exemplars() -> list[Exemplar]:
    return parse_exemplars(data_file("exemplars.txt"))


def for_model(text_with_slots: str) -> str:
    return _SLOT.sub(lambda m: STAND_IN[m.group(1)], text_with_slots).replace("_", " ")


@lru_cache(maxsize=1)
def _asking_words() -> frozenset[str]:
    """Words of asking and steering (kept in a skeleton); any other word is the subject's."""
    from pilot.reading.cues import _table

    cue_words = {w for _, _, elements, _, _ in _table()[1] for alts in elements for w in alts}
    # a word of the examples is one of asking when several examples use it; a subject's word is used once or twice
    seen: Counter[str] = Counter()
    for e in exemplars():
        seen.update({lemma(w) for w in re.findall(r"[a-z']+", e.text.lower())})
    ex_words = {w for w, k in seen.items() if k >= 3}
    return frozenset(cue_words | ex_words | word_set("request_words") | {lemma(w) for w in word_set("request_words")})


def _framed_tokens(text_with_slots: str, blank: str) -> list[str]:
    asking = _asking_words()
    out: list[str] = []
    for tok in re.findall(r"\{[A-Z]\}|[\w'+-]+|[?]", text_with_slots):
        low = tok.lower()
        if tok.startswith("{"):
            word = f"<{tok[1]}>"
        elif low == "?" or lemma(low) in asking or low in asking:
            word = lemma(low)
        else:
            word = blank
        if not (word == blank and out and out[-1] == blank):
            out.append(word)
    return out


def skeleton(text_with_slots: str) -> str:
    """The asking words of a text, its subject's words blanked ("papers on ~"), slots kept as <P>."""
    return " ".join(_framed_tokens(text_with_slots, "~"))


def framed(text_with_slots: str) -> str:
    """What the sentence model reads for the asking alone: the subject's words as "this topic", slots as their
    stand-ins ("got any good stuff on this topic?")."""
    words = _framed_tokens(text_with_slots, "this topic")
    return " ".join(STAND_IN[w[1]] if w.startswith("<") else w for w in words).replace("_", " ")


def _ngrams(text: str) -> Counter[str]:
    padded = f" {text} "
    grams: Counter[str] = Counter(padded[i : i + 3] for i in range(len(padded) - 2))
    grams.update(f"w:{w}" for w in text.split())  # whole words count too
    words = text.split()
    grams.update(f"b:{a}_{b}" for a, b in zip(words, words[1:], strict=False))
    return grams


class _Lexical:
    """TF-IDF cosine over character trigrams, words and word pairs of skeletons.

    The examples are kept as postings (gram -> the examples having it, with their weights): a message shares a
    few dozen grams with a thousand examples, and walking every example's dict in Python was most of a
    message's reading time."""

    def __init__(self, texts: list[str]):
        grams = [_ngrams(t) for t in texts]
        df: Counter[str] = Counter()
        for g in grams:
            df.update(g.keys())
        self.n = n = len(texts)
        self.idf = {k: math.log((1 + n) / (1 + v)) + 1.0 for k, v in df.items()}
        self.unseen = math.log(1 + n) + 1.0  # a gram no example has says as much as the rarest
        rows: dict[str, tuple[list[int], list[float]]] = {}
        for i, g in enumerate(grams):
            for k, x in self._vec(g).items():
                ids, weights = rows.setdefault(k, ([], []))
                ids.append(i)
                weights.append(x)
        self.postings = {k: (np.array(ids), np.array(ws)) for k, (ids, ws) in rows.items()}

    def _vec(self, grams: Counter[str]) -> dict[str, float]:
        v = {k: c * self.idf.get(k, self.unseen) for k, c in grams.items()}
        norm = math.sqrt(sum(x * x for x in v.values())) or 1.0
        return {k: x / norm for k, x in v.items()}

    def similarities(self, text: str) -> np.ndarray:
        out = np.zeros(self.n)
        for k, x in self._vec(_ngrams(text)).items():
            posting = self.postings.get(k)
            if posting is not None:
                out[posting[0]] += x * posting[1]
        return out.astype(np.float32)


def typed_text(ex: Extracted) -> str:
    """The message with its spans replaced by their slots ("what came out after {P}?")."""
    out, pos = [], 0
    for s in ex.spans:
        if s.kind == "term":  # one word of the subject's: "learning_to_rank" asks nothing
            out.append(ex.text[pos : s.start])
            out.append("_".join(s.text.split()))
            pos = s.end
            continue
        slot = slot_of(s)
        if slot is None or s.kind == "it":
            continue  # "it" stays a word: "fix it" is not "fix {P}"
        out.append(ex.text[pos : s.start])
        out.append("{" + slot + "}")
        pos = s.end
    out.append(ex.text[pos:])
    return "".join(out)


class ActClassifier:
    """Scores every label for a message; ``encoder`` is the sentence model (None: the n-gram similarity alone)."""

    def __init__(self, examples: list[Exemplar], encoder: Encoder | None = None):
        self.examples = examples
        self.labels = sorted({e.label for e in examples})
        self._rows: dict[str, np.ndarray] = {
            lab: np.array([i for i, e in enumerate(examples) if e.label == lab]) for lab in self.labels
        }
        self.lexical = _Lexical([skeleton(e.text) for e in examples])
        self.encoder = encoder
        self._vectors: np.ndarray | None = None
        self._lock = threading.Lock()

    def _example_vectors(self) -> np.ndarray | None:
        if self.encoder is None:
            return None
        with self._lock:
            if self._vectors is None:
                texts = [for_model(e.text) for e in self.examples] + [framed(e.text) for e in self.examples]
                self._vectors = np.asarray(self.encoder(texts), dtype=np.float32)
        return self._vectors

    def warm(self) -> np.ndarray | None:
        """The examples' vectors, loading the sentence model first if need be (seconds, once per process); None
        on the n-gram path. A model that fails to load leaves that path, said once."""
        try:
            return self._example_vectors()
        except Exception as exc:
            log.warning("sentence model unavailable for reading (%s); reading by n-grams alone", exc)
            self.encoder = None
            return None

    def scores(self, typed: str) -> dict[str, float]:
        lex = self.lexical.similarities(skeleton(typed))
        sims = lex
        vectors = self.warm()
        if vectors is not None and self.encoder is not None:
            q_full, q_framed = np.asarray(self.encoder([for_model(typed), framed(typed)]), dtype=np.float32)
            n = len(self.examples)
            emb = 0.5 * (vectors[:n] @ q_full) + 0.5 * (vectors[n:] @ q_framed)
            sims = EMBED_SHARE * emb + (1 - EMBED_SHARE) * lex
        out = {}
        for lab, rows in self._rows.items():
            top = np.sort(sims[rows])[-TOP_K:]
            out[lab] = float(top.mean())
        return out

    def cosines(self, text: str, others: list[str]) -> list[float] | None:
        """How close ``text`` is in meaning to each of ``others`` (None on the n-gram path: no model)."""
        if self.warm() is None or self.encoder is None or not others:
            return None
        v = np.asarray(self.encoder([text, *others]), dtype=np.float32)
        v /= np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-9)
        return [float(x) for x in v[1:] @ v[0]]

    def nearest(self, typed: str, label: str) -> str:
        """The example of ``label`` most like the message (for the reading's ``why``)."""
        lex = self.lexical.similarities(skeleton(typed))
        rows = self._rows[label]
        return self.examples[int(rows[int(np.argmax(lex[rows]))])].text


def default_encoder() -> Encoder | None:
    """MiniLM from the shipped package, or None where torch is absent or ``PILOT_READER_MODEL=0``."""
    if os.environ.get("PILOT_READER_MODEL", "1") == "0":
        return None
    try:
        import sentence_transformers  # noqa: F401
    except Exception:
        return None
    from pilot.embed import default_embedder

    embedder = default_embedder()
    return lambda texts: embedder.encode(texts)


_classifier: ActClassifier | None = None
_classifier_lock = threading.Lock()


def classifier() -> ActClassifier:
    global _classifier
    with _classifier_lock:
        if _classifier is None:
            _classifier = ActClassifier(exemplars(), default_encoder())
        return _classifier


def label_groups(scores: dict[str, float]) -> dict[str, float]:
    """The best score of each act ("search", "refine", …)."""
    out: dict[str, float] = defaultdict(float)
    for lab, s in scores.items():
        act = lab.split(".")[0]
        out[act] = max(out[act], s)
    return dict(out)
