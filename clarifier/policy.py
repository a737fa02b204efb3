"""The deterministic question policy: one question per turn, with options taken from the data.

Given the intent so far and a cheap candidate set for the anchor + direction (citing papers for a
successor search, similar papers otherwise), every open slot proposes a question whose options partition
the candidates (year windows from the year distribution, the most frequent venues, topic clusters of
the titles, resource types named in them …). A question's score is the entropy of that partition (in
bits) times a slot prior: a question that splits the candidates evenly changes the results most,
whichever option the user picks. The policy asks the best question, or finalizes when the best score is
below ``MIN_GAIN`` (no answer would change the top results much) or the turn limit is reached.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from clarifier.question import Option, Question
from pilot.domain import profile
from pilot.intent import apply_updates, content_terms
from pilot.models import Intent, Paper
from pilot.reading.timegrammar import periods_together
from pilot.text import root
from pilot.vocab import DIRECTION_OPTIONS, FACET_OPTIONS

MIN_GAIN = 0.5  # bits; below this no question is worth a turn
NO_PREFERENCE = "No preference"

# how much a well-split question on this slot is worth, per direction (missing = 1.0)
# (0 = never asked: the datasets a paper uses come before it, so "which period?" means nothing there)
_PRIORS: dict[str, dict[str, float]] = {
    "time": {"survey": 0.6, "benchmark": 0.0},
    "venue": {"predecessor": 0.7, "benchmark": 0.5, "survey": 0.5},
    "topic": {"successor": 0.8, "benchmark": 0.7},
    "resource": {},
    "recency": {"_": 0.45},
}
# sibling search: which aspect of the anchor matters re-targets the whole similarity, so it comes first
# (above the most any 5-option split can score, log2(5) = 2.32 bits)
FACET_SCORE = 2.5
# A topic search (no anchor paper) is helped by the period, the sub-area and seminal-vs-recent; a direction,
# a facet, a venue or a resource type belong to searches around a paper (or were said with the request).
TOPIC_SLOTS = ("time", "topic", "recency")


def is_topic_search(intent: Intent, anchor: Paper | None) -> bool:
    return anchor is None and bool(intent.topic)


def _prior(slot: str, direction: str | None) -> float:
    table = _PRIORS.get(slot, {})
    return table.get(direction or "", table.get("_", 1.0))


def entropy(labels: Sequence[Any]) -> float:
    """Shannon entropy (bits) of how the candidates fall into the options."""
    counts = Counter(labels)
    n = sum(counts.values())
    if n == 0:
        return 0.0
    return -sum((c / n) * math.log2(c / n) for c in counts.values() if c)


@dataclass
class Proposal:
    question: Question
    score: float
    why: str


@dataclass
class Decision:
    """What the policy decided this turn; ``scores`` lets the UI/eval show why."""

    question: Question | None
    reason: str
    scores: dict[str, float] = field(default_factory=dict)


# --- slot builders: each returns None when the slot is already set or the data cannot split ----------


def direction_question(anchor_title: str | None = None) -> Question:
    about = f' "{anchor_title}"' if anchor_title else " this paper"
    return Question(
        slot="direction",
        text=f"What are you looking for around{about}?",
        options=[Option(label=label, sets={"direction": d}) for d, label in DIRECTION_OPTIONS.items()],
    )


def facet_question() -> Question:
    return Question(
        slot="facet",
        text="Similar in which respect?",
        options=[
            *(Option(label=label, sets={"facet": facet}) for facet, label in FACET_OPTIONS.items()),
            Option(label="Overall similarity", sets={}),
        ],
    )


def _time(intent: Intent, cands: list[Paper]) -> Proposal | None:
    # "the latest papers on X" has said which period: the newest
    if intent.year_min is not None or intent.year_max is not None or intent.recency == "recent":
        return None
    years = sorted(p.year for p in cands if p.year)
    if len(set(years)) < 3 or len(years) < 6:
        return None
    n = len(years)
    cuts = sorted({years[n // 3], years[(2 * n) // 3]})
    lo, hi = years[0], years[-1]
    bounds: list[tuple[int, int]] = []
    start = lo
    for c in cuts:
        if c > start:
            bounds.append((start, c - 1))
            start = c
    bounds.append((start, hi))
    if len(bounds) < 2:
        return None
    options = []
    for i, (a, b) in enumerate(bounds):
        if i == 0:
            options.append(Option(label=f"Up to {b}" if a != b else str(a), sets={"year_max": b}))
        elif i == len(bounds) - 1:
            options.append(Option(label=f"{a} or later" if a != b else str(a), sets={"year_min": a}))
        else:
            options.append(Option(label=f"{a}–{b}" if a != b else str(a), sets={"year_min": a, "year_max": b}))
    options.append(Option(label="Any time", sets={}))
    labels = [next(i for i, (a, b) in enumerate(bounds) if a <= y <= b) for y in years]
    q = Question(slot="time", text="Which period matters most to you?", options=options)
    return Proposal(q, entropy(labels), f"years {lo}–{hi} split into {len(bounds)} windows")


def _venue(intent: Intent, cands: list[Paper]) -> Proposal | None:
    if intent.venues:
        return None
    names = [profile().venue_label(p) for p in cands]
    counts = Counter(v for v in names if v)
    top = [v for v, c in counts.most_common(4) if c >= 2]
    if len(top) < 2:
        return None
    options = [Option(label=v, sets={"venues": [v]}) for v in top] + [Option(label="Any venue", sets={})]
    labels = [v if v in top else "_other" for v in names]
    q = Question(slot="venue", text="Any particular venue or community?", options=options)
    return Proposal(q, entropy(labels), f"{len(counts)} venues, top: {', '.join(top)}")


def _texts(cands: list[Paper]) -> list[str]:
    return [f"{p.title}. {(p.abstract or '')[:300]}" for p in cands]


def topic_clusters(
    cands: list[Paper], k: int = 3, anchor: Paper | None = None, topic: str | None = None
) -> list[tuple[list[str], list[int]]]:
    """KMeans over TF-IDF of titles (+ abstract start); each cluster labelled with its most distinctive terms.

    Returns [(label terms, member indices)], biggest cluster first; terms of the anchor's own title (or of
    the searched topic) are not used as labels since every candidate shares them.
    """
    if len(cands) < 2 * k:
        return []
    # scikit-learn's clustering pulls in scipy (about a second): only a topic question needs it
    from sklearn.cluster import KMeans
    from sklearn.feature_extraction.text import TfidfVectorizer

    vec = TfidfVectorizer(stop_words="english", min_df=2, max_df=0.5, token_pattern=r"(?u)\b[a-zA-Z][a-zA-Z\-]{2,}\b")
    try:
        X = vec.fit_transform(_texts(cands))
    except ValueError:  # empty vocabulary
        return []
    if X.shape[1] < k:
        return []
    km = KMeans(n_clusters=k, n_init=4, random_state=0).fit(X)
    terms = vec.get_feature_names_out()
    mean = X.mean(axis=0).A1
    skip = set(content_terms(anchor.title, limit=50)) if anchor else set()
    skip |= set(content_terms(topic or "", limit=50))
    skip_roots = _roots(skip)  # once, not once per vocabulary term and cluster
    out = []
    for c in range(k):
        members = [i for i, lab in enumerate(km.labels_) if lab == c]
        if len(members) < 2:
            continue
        centroid = X[members].mean(axis=0).A1
        order = (centroid - mean).argsort()[::-1]
        label = [terms[j] for j in order if not _shares_root(terms[j], skip_roots)][:3]
        if label:
            out.append((label, members))
    out.sort(key=lambda t: -len(t[1]))
    return out


_PHRASE_STOP = frozenset(
    """a an the of for in on and or to with by from via at as is are be its into using based towards toward new
    approach approaches method methods model models system systems paper study analysis improving improved
    efficient effective robust towards workshop proceedings introduction special issue""".split()
)
# words too general to name a sub-area on their own ("learning", "language"): fine inside a phrase
_GENERIC = frozenset(
    """learning language languages word words sentence sentences text texts task tasks neural network networks deep
    data information natural processing machine automatic statistical model models training large scale multi
    semantic semantics using toward towards""".split()
)


def _phrases(title: str) -> set[str]:
    """The 1-3 word phrases of a title that neither start nor end with a function word."""
    words = re.findall(r"[a-z][a-z0-9\-]+", title.lower())
    out = set()
    for n in (1, 2, 3):
        for i in range(len(words) - n + 1):
            gram = words[i : i + n]
            if (
                gram[0] in _PHRASE_STOP
                or gram[-1] in _PHRASE_STOP
                or (n == 1 and (len(gram[0]) < 4 or gram[0] in _GENERIC))
            ):
                continue
            out.add(" ".join(gram))
    return out


LABEL_CHARS = 95


def _roots(words: Iterable[str]) -> frozenset[str]:
    return frozenset(root(w) for w in words)


def _shares_root(phrase: str, roots: frozenset[str]) -> bool:
    """A word of the phrase is a form of a word whose root is in ``roots`` ("answers" of "answering")."""
    return any(root(w) in roots for w in phrase.split())


def cluster_phrase(cands: list[Paper], members: list[int], skip: frozenset[str] | set[str] = frozenset()) -> str | None:
    """The phrase most typical of the cluster's titles (more frequent in it than in the other candidates,
    longer phrases preferred), or None when no phrase is shared by two of its titles."""
    inside = [_phrases(cands[i].title or "") for i in members]
    others = [_phrases(p.title or "") for j, p in enumerate(cands) if j not in set(members)]
    counts: Counter = Counter(g for grams in inside for g in grams)
    skip_roots = _roots(skip)
    best, best_score = None, 0.0
    for gram, n in counts.items():
        if n < 2 or _shares_root(gram, skip_roots):  # what every candidate shares (in any form) names no sub-area
            continue
        out = sum(1 for grams in others if gram in grams)
        score = (n / len(members) - out / max(1, len(others))) * (1 + 0.75 * (len(gram.split()) - 1))
        if score > best_score:
            best, best_score = gram, score
    return best


def _has_phrase(title: str, phrase: str) -> bool:
    want = [root(w) for w in phrase.split()]
    have = [root(w) for w in re.findall(r"[a-z][a-z0-9\-]+", title.lower())]
    return bool(want) and any(have[i : i + len(want)] == want for i in range(len(have) - len(want) + 1))


def cluster_label(cands: list[Paper], members: list[int], phrase: str) -> str:
    """A label a person can read: the cluster's phrase and one of its best-known papers as an example."""
    # the example shows what the phrase means: a best-known paper whose title has it, if one does
    example = max(
        (cands[i] for i in members),
        key=lambda p: (
            _has_phrase(p.title or "", phrase),
            (p.citation_count or 0) + 20 * (p.in_corpus_citations or 0),
        ),
    )
    room = max(20, LABEL_CHARS - len(phrase) - 10)  # a button stays one or two lines
    title = example.title.replace('"', "'")
    title = title if len(title) <= room else title[: room - 1].rstrip() + "…"
    return f"{phrase} — e.g. “{title}”"


def named_clusters(
    cands: list[Paper], anchor: Paper | None, intent: Intent
) -> list[tuple[str | None, list[str], list[int]]]:
    """The candidates' sub-topics, biggest first: each cluster's typical phrase (None when its titles share none),
    its label terms and its members. What the anchor's title, the topic and the request already say names none."""
    clusters = topic_clusters(cands, anchor=anchor, topic=intent.topic)
    if not clusters:
        return []
    skip = set(content_terms(anchor.title, limit=50)) if anchor else set()
    skip |= set(content_terms(intent.topic or "", limit=50))
    skip |= set(content_terms(intent.request or "", limit=50))  # what the user already said ("datasets") is no sub-area
    return [(cluster_phrase(cands, members, skip), label, members) for label, members in clusters]


def _topic(intent: Intent, cands: list[Paper], anchor: Paper | None) -> Proposal | None:
    if intent.topic_terms:
        return None
    named = named_clusters(cands, anchor, intent)
    if len(named) < 2:
        return None
    options = []
    seen: set[str] = set()
    for phrase, label, members in named:
        text = cluster_label(cands, members, phrase or ", ".join(label))
        if text.lower() in seen:
            continue
        seen.add(text.lower())
        # the option does what its label says: the phrase a person reads leads the cluster's terms
        terms = list(dict.fromkeys([*(phrase or "").split(), *label]))
        options.append(Option(label=text, sets={"topic_terms": terms}))
    if len(options) < 2:
        return None
    options.append(Option(label="No particular sub-topic", sets={}))
    labels = [-1] * len(cands)
    for ci, (_, _, members) in enumerate(named):
        for i in members:
            labels[i] = ci
    q = Question(slot="topic", text="Which sub-area are you most interested in?", options=options)
    return Proposal(q, entropy(labels), "topic clusters: " + " | ".join(o.label for o in options[:-1]))


def _resource(intent: Intent, cands: list[Paper]) -> Proposal | None:
    if intent.direction != "benchmark" or intent.resource_types:
        return None
    found: list[str] = []
    for p in cands:
        low = (p.title or "").lower()
        kind = next(
            (
                rt
                for rt, words in profile().resource_types.items()
                if any(re.search(rf"\b{re.escape(w)}\b", low) for w in words)
            ),
            "_other",
        )
        found.append(kind)
    present = [rt for rt, _ in Counter(x for x in found if x != "_other").most_common()]
    # keep the whole taxonomy on offer so the user can name a type the candidates miss
    kinds = present + [rt for rt in profile().resource_types if rt not in present]
    options = [Option(label=rt.capitalize(), sets={"resource_types": [rt]}) for rt in kinds[:4]]
    options.append(Option(label="Any kind of resource", sets={}))
    q = Question(slot="resource", text="What kind of resource do you need?", options=options)
    return Proposal(q, entropy(found), f"resource types in titles: {', '.join(present) or 'none'}")


def _recency(intent: Intent, cands: list[Paper]) -> Proposal | None:
    if intent.recency != "any" or intent.year_min is not None or intent.year_max is not None or len(cands) < 6:
        return None
    n = len(cands)
    by_cites = sorted(range(n), key=lambda i: -(cands[i].citation_count or cands[i].in_corpus_citations or 0))
    by_year = sorted(range(n), key=lambda i: -(cands[i].year or 0))
    labels = ["any"] * n
    for i in by_cites[: n // 3]:
        labels[i] = "seminal"
    for i in by_year[: n // 3]:
        if labels[i] == "any":
            labels[i] = "recent"
    q = Question(
        slot="recency",
        text="Seminal work or the latest work?",
        options=[
            Option(label="Seminal, highly cited work", sets={"recency": "seminal"}),
            Option(label="The most recent work", sets={"recency": "recent"}),
            Option(label=NO_PREFERENCE, sets={}),
        ],
    )
    return Proposal(q, entropy(labels), "citation counts vs years")


def propose(intent: Intent, candidates: list[Paper], anchor: Paper | None = None) -> list[Proposal]:
    """Every question worth considering now, best first (scores already weighted by slot priors)."""
    d = intent.direction
    out: list[Proposal] = []
    topic_search = is_topic_search(intent, anchor)
    if d == "sibling" and intent.facet is None and not topic_search:
        out.append(Proposal(facet_question(), FACET_SCORE, "sibling search: which aspect is similar"))
    builders: list[tuple[str, Callable[[], Proposal | None]]] = [
        ("resource", lambda: _resource(intent, candidates)),
        ("time", lambda: _time(intent, candidates)),
        ("venue", lambda: _venue(intent, candidates)),
        ("topic", lambda: _topic(intent, candidates, anchor)),
        ("recency", lambda: _recency(intent, candidates)),
    ]
    for slot, build in builders:
        if topic_search and slot not in TOPIC_SLOTS:
            continue
        prop = build()
        if prop is not None:
            prop.score *= _prior(slot, d)
            out.append(prop)
    out.sort(key=lambda p: -p.score)
    return out


def next_question(
    intent: Intent,
    candidates: list[Paper],
    asked: Sequence[str] = (),
    turns: int = 0,
    max_turns: int = 4,
    anchor: Paper | None = None,
) -> Decision:
    """Ask the best question not asked yet, or finalize (question None) with the reason why."""
    if turns >= max_turns:
        return Decision(None, f"turn limit reached ({max_turns} questions)")
    # without an anchor there is nothing to be "around" (a topic search has its own questions)
    if intent.direction is None and anchor is not None and "direction" not in asked:
        return Decision(
            direction_question(anchor.title if anchor else None),
            "the request does not say which direction",
            {"direction": math.inf},
        )
    props = [p for p in propose(intent, candidates, anchor) if p.question.slot not in asked]
    scores: dict[str, float] = {p.question.slot: round(p.score, 3) for p in props}
    if not props:
        return Decision(None, "nothing left to ask", scores)
    best = props[0]
    if best.score < MIN_GAIN:
        return Decision(
            None,
            f"no question would change the results much (best: {best.question.slot}, {best.score:.2f} bits)",
            scores,
        )
    return Decision(best.question, f"{best.question.slot}: {best.why} ({best.score:.2f} bits)", scores)


# --- answers ----------------------------------------------------------------------------------------


def option_updates(question: Question, index: int) -> dict[str, Any]:
    if not 0 <= index < len(question.options):
        raise IndexError(f"option {index + 1} does not exist; choose 1–{len(question.options)}")
    return dict(question.options[index].sets)


def answer_updates(question: Question, option: int | None, said: dict[str, Any]) -> dict[str, Any]:
    """What an answer sets: the chosen option's settings and any value said beside it ("drop anything before 2020"
    to the venue question: no venue preference, and the period), or only what was said."""
    return {**option_updates(question, option), **said} if option is not None else said


def _periods_together(sets: list[dict[str, Any]]) -> dict[str, Any]:
    """The periods of several options as one filter: its outer bounds, and the years between them left out
    ("up to 2006" and "2009 or later": 2007–2008 left out)."""
    if not any("year_min" in s or "year_max" in s for s in sets):
        return {}
    return periods_together([(s.get("year_min"), s.get("year_max")) for s in sets])


def merged_updates(question: Question, picked: list[int]) -> dict[str, Any]:
    """What several options set together: the span of their periods (a bound only where every option has one),
    the union of their lists, and a single choice only where they agree."""
    sets = [question.options[i].sets for i in picked]
    out: dict[str, Any] = _periods_together(sets)
    for key in dict.fromkeys(k for s in sets for k in s):
        values = [s.get(key) for s in sets]
        if key in ("year_min", "year_max"):
            continue
        lists = [v for v in values if isinstance(v, list)]
        if len(lists) == len(values):
            out[key] = list(dict.fromkeys(x for v in lists for x in v))
        elif all(v == values[0] for v in values):
            out[key] = values[0]
    return out


def apply_answer(intent: Intent, updates: dict[str, Any], text: str | None = None) -> Intent:
    return apply_updates(intent, updates, note=text)
