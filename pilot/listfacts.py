"""Questions about the list on screen that a glance at it would answer: "which one is the most cited?", "what is
the oldest one?", "who are the main authors here?", "which venues are these from?". Answered from the listed
papers, with their numbers, and the words that would act on the answer; the list itself stays."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Literal

from pilot.citations import count_of, no_count_note
from pilot.domain import profile
from pilot.models import Paper, RankedPaper
from pilot.papertype import paper_type
from workflows.diff import short
from workflows.ops.features import citation_value

ListFact = Literal["most_cited", "oldest", "newest", "authors", "venues", "years", "overview", "best"]

SHOWN = 5  # authors or venues named in an answer
SAID = 8  # result numbers said per author or year


def _most_cited(papers: Sequence[Paper]) -> tuple[int, Paper]:
    """The most cited paper and its number on the list (the first of equals)."""
    return max(enumerate(papers, 1), key=lambda x: (citation_value(x[1]), -x[0]))


def numbered(found: list[int], at_most: int = 20) -> str:
    """Result numbers as a reply lists them: "#2, #5 and 31 more"."""
    more = f" and {len(found) - at_most} more" if len(found) > at_most else ""
    return ", ".join(f"#{n}" for n in found[:at_most]) + more


def answer(results: Sequence[RankedPaper], fact: ListFact, themes: Sequence[tuple[str, list[int]]] = ()) -> str:
    """The fact, said with result numbers; ``results`` is the list on screen (not empty). ``themes``: the list's
    sub-topics (a phrase and its result numbers), which the caller finds (clustering is the clarifier's)."""
    papers = [r.paper for r in results]
    total = len(papers)
    if fact == "overview":
        return _overview(results, themes)
    if fact == "best":
        return _best(results)
    if fact == "most_cited":
        n, p = _most_cited(papers)
        if citation_value(p) == 0:
            return f"None of the {total} results has a citation count in the source."
        # issue 33: unknown is not zero — how many the answer could not weigh is said (pilot.citations)
        count = count_of(p)
        how = f"cited {count.value:,} times" if count.known else f"cited by at least {count.at_least:,} papers"
        uncounted = no_count_note(papers)
        return (
            f"The most cited is #{n} “{short(p.title, 100)}”{f' ({p.year})' if p.year else ''}, {how}."
            + (f" {uncounted}" if uncounted else "")
            + " (Say “sort by citations” to order the list that way.)"
        )
    if fact in ("oldest", "newest"):
        dated = [(n, p) for n, p in enumerate(papers, 1) if p.year]
        if not dated:
            return f"None of the {total} results has a year in the source."
        pick = min if fact == "oldest" else max
        year = pick(p.year or 0 for _, p in dated)
        same = [(n, p) for n, p in dated if p.year == year]
        n, p = same[0]
        others = [m for m, _ in same[1:]]
        also = f" ({len(others)} more from {year}: {numbered(others, SAID)})" if others else ""
        order = "oldest first" if fact == "oldest" else "newest first"
        return f"The {fact} is #{n} “{short(p.title, 100)}” ({year}){also}. (Say “{order}” to order the list that way.)"
    if fact == "authors":
        where: dict[str, list[int]] = {}
        for n, p in enumerate(papers, 1):
            for name in dict.fromkeys(a.name for a in p.authors if a.name):
                where.setdefault(name, []).append(n)
        top = sorted(where.items(), key=lambda kv: (-len(kv[1]), kv[1][0]))[:SHOWN]
        if not top:
            return f"The source names no authors for the {total} results."
        if len(top[0][1]) == 1:
            return f"No author has more than one of the {total} results."
        said = "; ".join(f"{name} ({len(ns)}: {numbered(ns, SAID)})" for name, ns in top if len(ns) > 1)
        who = top[0][0].split(",")[0].split()[-1]
        return f"Authors with the most of the {total} results: {said}. (Say “only the ones by {who}” to keep theirs.)"
    if fact == "years":
        return _years(papers)
    venues = Counter(v for v in (profile().venue_label(p) for p in papers) if v)
    if not venues:
        return f"The source names no venue for the {total} results."
    said = ", ".join(f"{v} ({c})" for v, c in venues.most_common(SHOWN))
    more = f", and {len(venues) - SHOWN} more" if len(venues) > SHOWN else ""
    unknown = total - sum(venues.values())
    missing = f"; {unknown} without a venue" if unknown else ""
    first = venues.most_common(1)[0][0]
    return f"The {total} results are from {said}{more}{missing}. (Say “only at {first}” to keep just those.)"


def _years(papers: Sequence[Paper]) -> str:
    """The list over time: its span and the years with the most papers, with their result numbers."""
    by_year: dict[int, list[int]] = {}
    for n, p in enumerate(papers, 1):
        if p.year:
            by_year.setdefault(p.year, []).append(n)
    if not by_year:
        return f"None of the {len(papers)} results has a year in the source."
    top = sorted(by_year.items(), key=lambda kv: (-len(kv[1]), -kv[0]))[:3]
    said = "; ".join(f"{year} ({len(ns)}: {numbered(ns, SAID)})" for year, ns in top)
    undated = len(papers) - sum(len(ns) for ns in by_year.values())
    missing = f"; {undated} without a year" if undated else ""
    span = f"{min(by_year)}–{max(by_year)}" if len(by_year) > 1 else str(min(by_year))
    return (
        f"The {len(papers)} results span {span}; the most are from {said}{missing}. "
        f"(Say “only {top[0][0]}” to keep those, or “sort by year” to list them by year.)"
    )


def _overview(results: Sequence[RankedPaper], themes: Sequence[tuple[str, list[int]]]) -> str:
    """How many, from when, where, about what, and the best known: a list summed up without reading it."""
    papers = [r.paper for r in results]
    lines = [f"{len(papers)} papers."]
    years = sorted(p.year for p in papers if p.year)
    if years:
        middle = years[len(years) // 4], years[(3 * len(years)) // 4]
        span = f"{years[0]}–{years[-1]}" if years[0] != years[-1] else str(years[0])
        lines.append(
            f"Years: {span}, half of them {middle[0]}–{middle[1]}." if middle[0] != middle[1] else f"Years: {span}."
        )
    if themes:
        said = "; ".join(f"{phrase} ({len(ns)}: {numbered(ns, 4)})" for phrase, ns in themes)
        lines.append(f"Themes: {said}.")
    venues = Counter(v for v in (profile().venue_label(p) for p in papers) if v)
    if venues:
        lines.append("Venues: " + ", ".join(f"{v} ({c})" for v, c in venues.most_common(3)) + ".")
    cited = sorted(enumerate(papers, 1), key=lambda x: (-citation_value(x[1]), x[0]))[:3]
    if cited and citation_value(cited[0][1]) > 0:
        best = "; ".join(f"#{n} “{short(p.title, 70)}” ({citation_value(p):,})" for n, p in cited if citation_value(p))
        lines.append(f"Most cited: {best}.")
    return " ".join(lines) + " (Say “focus on <theme>” to move a theme up the list.)"


def _best(results: Sequence[RankedPaper]) -> str:
    """Where to start: the best match (the list's order), the most cited, and an overview if the list has one."""
    papers = [r.paper for r in results]
    said = [f"#1 “{short(papers[0].title, 100)}” matches the search best (the list is in that order)."]
    n, cited = _most_cited(papers)
    if n != 1 and citation_value(cited):
        said.append(f"The most cited is #{n} “{short(cited.title, 100)}” ({citation_value(cited):,} citations).")
    surveys = [(i, p) for i, p in enumerate(papers, 1) if paper_type(p) == "survey"]
    if surveys:
        i, p = surveys[0]
        said.append(f"For an overview first, #{i} “{short(p.title, 100)}” is a survey.")
    return " ".join(said)
