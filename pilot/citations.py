"""Citation counts as the sources know them: a count, a lower bound, or nothing — never a zero nobody counted.

A citation index (Semantic Scholar, Google Scholar for the corpus's venue lists) gives a paper's count
(``Paper.citation_count``). A source whose citation graph covers only part of the literature (the offline corpus's
ACL Anthology links, up to 2011) knows how many of *its* papers cite it (``in_corpus_citations``): a lower bound,
not the count — "Ng & Cardie 2002" has a few dozen citing papers in the corpus and thousands in the world. So a
filter "more than 100 citations" cannot drop it as if it had none, and "which one is the most cited?" must say how
many papers it could not weigh.

    count_of(paper).meets(100)   # True / False / None (unknown: no count, and the lower bound is below 100)
    count_of(paper).label()      # "342 citations" | "no count (cited by 12 papers in the source)" | "no count"
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pilot.models import Paper


@dataclass(frozen=True)
class CitationCount:
    value: int | None  # a citation index's count; None = nobody counted
    at_least: int  # papers of the source known to cite it: a lower bound on any count

    @property
    def known(self) -> bool:
        return self.value is not None

    def meets(self, floor: int) -> bool | None:
        """Whether it is cited at least ``floor`` times: known from the count or from the lower bound; None when
        neither can tell (no count, and fewer known citing papers than the floor)."""
        if self.value is not None and self.value >= floor or self.at_least >= floor:
            return True
        return False if self.value is not None else None

    def label(self) -> str:
        if self.value is not None:
            return f"{self.value:,} citation{'' if self.value == 1 else 's'}"
        if self.at_least:
            return f"no count (cited by {self.at_least:,} paper{'' if self.at_least == 1 else 's'} in the source)"
        return "no count"


def count_of(paper: Paper) -> CitationCount:
    return CitationCount(paper.citation_count, max(paper.in_corpus_citations or 0, paper.citation_count or 0))


def without_count(papers: Sequence[Paper]) -> list[int]:
    """Positions (1-based) of the papers no citation index counted."""
    return [i for i, p in enumerate(papers, 1) if p.citation_count is None]


def no_count_note(papers: Sequence[Paper]) -> str | None:
    """ "18 of the 24 papers have no citation count …": said wherever papers are compared by citations."""
    missing = without_count(papers)
    if not missing:
        return None
    total = len(papers)
    head = "None of the papers has" if len(missing) == total else f"{len(missing)} of the {total} papers have"
    bounded = sum(1 for i in missing if papers[i - 1].in_corpus_citations)
    said = f" (for {bounded} of them only the citing papers it holds are known: a lower bound)" if bounded else ""
    return f"{head} no citation count in the source{said}."
