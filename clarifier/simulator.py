"""A simulated user for evaluation: answers clarification questions from a case's latent intent only.

It reads ``direction``, ``anchor_paper_id`` and ``latent_intent`` (year_min/year_max, venue, facet,
topic_terms, resource_types, description) — what the real user would know about their own need. It
picks the option whose ``sets`` (or label) is closest to that intent, or, when no option fits, gives a
short free-text answer built from it.

Leakage control: gold titles and gold authors are read ONLY to check answers, never to build them. A
free-text answer that contains a gold title, a long n-gram of one, or a gold author's name is
regenerated from less information, and finally replaced by a generic preference. With an LLM, an extra
model-based check can veto an answer too (``answer_async``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel

from clarifier.question import Question
from pilot.llm import LLMError
from pilot.text import normalize_title

AnswerT = tuple[Literal["option", "text"], Any]
GENERIC_ANSWER = "Just the most relevant papers, please."
LEAK_NGRAM = 4  # this many consecutive title words in an answer count as naming the title


def _ngrams(tokens: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


class LeakCheck:
    """Deterministic: does a text reveal any gold title (or a long n-gram of one) or gold author name?"""

    def __init__(self, gold_titles: Iterable[str] = (), gold_authors: Iterable[str] = (), n: int = LEAK_NGRAM):
        self.n = n
        self.titles = [normalize_title(t) for t in gold_titles if t and normalize_title(t)]
        self.title_ngrams: set[tuple[str, ...]] = set()
        for t in self.titles:
            toks = t.split()
            self.title_ngrams |= _ngrams(toks, min(n, len(toks)))
        self.authors = [normalize_title(a) for a in gold_authors if a and len(normalize_title(a)) >= 4]

    def leaks(self, text: str) -> str | None:
        """The reason the text leaks, or None."""
        norm = normalize_title(text)
        padded = f" {norm} "
        for t in self.titles:
            if t and f" {t} " in padded:
                return "contains a gold title"
        toks = norm.split()
        for size in {min(self.n, len(g)) for g in self.title_ngrams} or {self.n}:
            if _ngrams(toks, size) & self.title_ngrams:
                return f"contains {size} consecutive words of a gold title"
        for a in self.authors:
            if f" {a} " in padded:
                return "names a gold author"
        return None


class _LeakVerdict(BaseModel):
    leaks: bool
    reason: str = ""


class SimulatedUser:
    """``SimulatedUser(case).answer(question) -> ("option", index) | ("text", str)``.

    ``gold_authors`` (names) may be passed by the harness, which can look them up in the corpus; the
    case itself carries only gold titles.
    """

    def __init__(self, case: dict, llm=None, gold_authors: Iterable[str] = ()):
        self.case = case
        self.llm = llm
        self.latent: dict[str, Any] = dict(case.get("latent_intent") or {})
        self.direction: str | None = case.get("direction")
        self.anchor_id: str | None = case.get("anchor_paper_id")
        self.check = LeakCheck(case.get("golden_titles") or [], gold_authors)
        self.log: list[dict[str, Any]] = []  # every answer and every regeneration, for the run record

    # --- scoring options against the latent intent --------------------------------------------------
    def _score(self, slot: str, sets: dict[str, Any], label: str) -> float:
        L = self.latent
        if slot == "anchor":
            return 1.0 if sets.get("anchor_id") == self.anchor_id else 0.0
        if slot == "direction":
            return 1.0 if sets.get("direction") == self.direction else 0.0
        if slot == "facet":
            if L.get("facet"):
                return 1.0 if sets.get("facet") == L["facet"] else 0.0
            return 0.5 if not sets else 0.0
        if slot == "time":
            lo, hi = L.get("year_min"), L.get("year_max")
            if lo is None and hi is None:
                return 0.5 if not sets else 0.0
            if not sets:
                return 0.1
            # Jaccard overlap of the year intervals; an open end ("2007 or later") reaches just past the
            # user's own bound, since the user has no wish about years beyond it
            lo, hi = lo or 1950, hi or 2030
            a, b = sets.get("year_min") or lo - 2, sets.get("year_max") or hi + 2
            if a > lo or b < hi:
                return 0.0  # the window would cut off years the user wants: they type their range instead
            overlap = max(0, min(b, hi) - max(a, lo) + 1)
            return overlap / (max(b, hi) - min(a, lo) + 1)
        if slot == "venue":
            v = (L.get("venue") or "").lower()
            if not v:
                return 0.5 if not sets else 0.0
            vs = [x.lower() for x in sets.get("venues", [])]
            return 1.0 if v in vs or any(v == x.split()[0] for x in vs if x) else 0.0
        if slot == "topic":
            terms = {t.lower() for t in L.get("topic_terms", [])}
            if not terms:
                return 0.4 if not sets else 0.0
            # an option means what it sets and its name, not the example paper a label may show ("… — e.g. “…”")
            name = label.split(" — e.g.")[0]
            opt = {t.lower() for t in sets.get("topic_terms", [])} | set(re.findall(r"[a-z\-]+", name.lower()))
            return len(terms & opt) / len(terms) if sets else 0.05
        if slot == "resource":
            want = {t.lower() for t in L.get("resource_types", [])}
            if not want:
                return 0.5 if not sets else 0.0
            got = {t.lower() for t in sets.get("resource_types", [])}
            return len(want & got) / len(want) if got else 0.1
        if slot == "recency":
            return 0.5 if not sets else 0.0
        if slot == "lift":  # the user's own filter: kept
            return 1.0 if not sets else 0.0
        if slot == "k":
            return 1.0 if sets.get("k") == 50 else 0.0
        return 0.0

    def _free_text(self, slot: str) -> list[str]:
        """Candidate free-text answers, most informative first (each later one says less)."""
        L = self.latent
        out: list[str] = []
        if slot == "venue" and L.get("venue"):
            out.append(f"Only papers published at {L['venue']}.")
        if slot == "time" and (L.get("year_min") or L.get("year_max")):
            lo, hi = L.get("year_min"), L.get("year_max")
            out.append(f"Between {lo} and {hi}." if lo and hi else (f"Since {lo}." if lo else f"Up to {hi}."))
        if slot in ("topic", "direction", "facet", "resource") or not out:
            terms = list(L.get("topic_terms") or [])
            if terms:
                out.append(f"Mostly about {', '.join(terms[:4])}.")
                out.append(f"Mostly about {terms[0]}.")
            if L.get("resource_types"):
                out.append(f"I need {', '.join(L['resource_types'])}.")
            if L.get("facet"):
                out.append(f"I care about the {L['facet']}.")
        return out

    def _safe(self, text: str) -> str | None:
        reason = self.check.leaks(text)
        if reason:
            self.log.append({"rejected": text, "reason": reason})
            return None
        return text

    def answer(self, question: Question) -> AnswerT:
        """Deterministic answer: best-fitting option, else a leak-checked free-text answer."""
        scores = [self._score(question.slot, o.sets, o.label) for o in question.options]
        best = max(range(len(scores)), key=lambda i: scores[i])
        # a partial topic fit is still the option a real user would click; a year window must mostly match
        threshold = 0.25 if question.slot == "topic" else 0.5
        if scores[best] >= threshold or not question.allow_free_text:
            self.log.append({"slot": question.slot, "option": best, "label": question.options[best].label})
            return ("option", best)
        for text in self._free_text(question.slot):
            if self._safe(text):
                self.log.append({"slot": question.slot, "text": text})
                return ("text", text)
        if scores[best] > 0:
            return ("option", best)
        self.log.append({"slot": question.slot, "text": GENERIC_ANSWER})
        return ("text", GENERIC_ANSWER)

    async def answer_async(self, question: Question) -> AnswerT:
        """Like ``answer``, plus the LLM leak checker on free text when a model is configured."""
        kind, value = self.answer(question)
        if kind != "text" or self.llm is None or value == GENERIC_ANSWER:
            return kind, value

        titles = "\n".join(f"- {t}" for t in (self.case.get("golden_titles") or [])[:20])
        try:
            verdict = await self.llm.json(
                "You check whether a user's message reveals any of the listed paper titles or their authors. "
                'Reply with JSON {"leaks": true|false, "reason": "..."}.',
                f"Titles:\n{titles}\n\nMessage: {value}",
                _LeakVerdict,
            )
        except LLMError as exc:  # the deterministic check already passed; a dead checker does not block
            self.log.append({"llm_leak_check": f"unavailable: {exc}"})
            return kind, value
        if verdict.leaks:
            self.log.append({"rejected": value, "reason": f"LLM leak check: {verdict.reason}"})
            return ("text", GENERIC_ANSWER)
        return kind, value
