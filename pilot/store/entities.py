"""Author, venue and organisation entities derived from paper metadata at build time.

The corpus has no entity records of its own: an author is a normalised name, a venue a venue string,
an organisation an affiliation string (several per affiliation when joined with '+').
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from pilot.models import LOCAL_URL, Author, Org, Paper, Venue
from pilot.store.text import author_id, org_id, split_affiliation, title_terms, top, venue_id

SOURCE = "local"


def paper_impact(paper: Paper) -> int:
    """The citation figure an entity sums: the external count where known, else in-corpus citations."""
    if paper.citation_count is not None:
        return paper.citation_count
    return paper.in_corpus_citations or 0


def h_index(counts: list[int]) -> int:
    counts = sorted(counts, reverse=True)
    return sum(1 for i, c in enumerate(counts, 1) if c >= i)


@dataclass
class _Agg:
    names: Counter = field(default_factory=Counter)
    rows: list[int] = field(default_factory=list)
    impacts: list[int] = field(default_factory=list)
    years: list[int] = field(default_factory=list)
    terms: Counter = field(default_factory=Counter)
    venues: Counter = field(default_factory=Counter)
    people: Counter = field(default_factory=Counter)  # authors (of a venue/org) or coauthors (of an author)
    orgs: Counter = field(default_factory=Counter)
    affiliations: Counter = field(default_factory=Counter)

    def add_paper(self, row: int, paper: Paper, terms: list[str]) -> None:
        self.rows.append(row)
        self.impacts.append(paper_impact(paper))
        if paper.year:
            self.years.append(paper.year)
        self.terms.update(terms)
        if paper.venue:
            self.venues[paper.venue] += 1


@dataclass
class Entities:
    authors: list[tuple[Author, list[int]]]
    venues: list[Venue]
    orgs: list[tuple[Org, dict[str, int]]]  # org and {author id: papers with that org}


def derive(papers: list[Paper]) -> Entities:
    authors: dict[str, _Agg] = defaultdict(_Agg)
    venues: dict[str, _Agg] = defaultdict(_Agg)
    orgs: dict[str, _Agg] = defaultdict(_Agg)
    org_people: dict[str, Counter] = defaultdict(Counter)
    for row, paper in enumerate(papers):
        terms = title_terms(paper.title)
        names = [a.name for a in paper.authors]
        if paper.venue:
            v = venues[venue_id(paper.venue)]
            v.names[paper.venue] += 1
            v.add_paper(row, paper, terms)
            v.people.update(names)
        paper_orgs: set[str] = set()
        for a in paper.authors:
            agg = authors[a.id or author_id(a.name)]  # the corpus reader gives every author an id
            agg.names[a.name] += 1
            agg.add_paper(row, paper, terms)
            agg.people.update(n for n in names if n != a.name)
            for org_name in split_affiliation(a.affiliation):
                oid = org_id(org_name)
                agg.affiliations[org_name] += 1
                agg.orgs[oid] += 1
                o = orgs[oid]
                o.names[org_name] += 1
                o.people[a.name] += 1
                org_people[oid][a.id] += 1
                if oid not in paper_orgs:
                    paper_orgs.add(oid)
                    o.add_paper(row, paper, terms)
    return Entities(
        authors=[(_author(aid, agg), agg.rows) for aid, agg in authors.items()],
        venues=[_venue(vid, agg) for vid, agg in venues.items()],
        orgs=[(_org(oid, agg, len(org_people[oid])), dict(org_people[oid])) for oid, agg in orgs.items()],
    )


def _author(aid: str, agg: _Agg) -> Author:
    return Author(
        id=aid,
        name=top(agg.names, 1)[0],
        affiliation=next(iter(top(agg.affiliations, 1)), None),
        url=LOCAL_URL.format(kind="author", id=aid),
        source=SOURCE,
        paper_count=len(agg.rows),
        citation_count=sum(agg.impacts),
        h_index=h_index(agg.impacts),
        orgs=top(agg.affiliations, 5),
        venues=top(agg.venues, 5),
        topics=top(agg.terms, 8),
        coauthors=top(agg.people, 10),
    )


def _venue(vid: str, agg: _Agg) -> Venue:
    return Venue(
        id=vid,
        name=top(agg.names, 1)[0],
        url=LOCAL_URL.format(kind="venue", id=vid),
        source=SOURCE,
        paper_count=len(agg.rows),
        year_min=min(agg.years, default=None),
        year_max=max(agg.years, default=None),
        top_authors=top(agg.people, 10),
        topics=top(agg.terms, 10),
    )


def _org(oid: str, agg: _Agg, author_count: int) -> Org:
    return Org(
        id=oid,
        name=top(agg.names, 1)[0],
        url=LOCAL_URL.format(kind="org", id=oid),
        source=SOURCE,
        paper_count=len(agg.rows),
        author_count=author_count,
        top_authors=top(agg.people, 10),
        topics=top(agg.terms, 10),
    )
