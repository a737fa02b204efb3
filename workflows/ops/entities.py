"""Entity operators (academic knowledge graph): find and describe authors, venues and organisations,
and list their papers (``workflows.ops.answer`` turns what they return into a cited answer).

Later steps take their ids from earlier outputs through edges (``search_author`` → ``author_papers``);
an explicit id param works too, so a plan can start from a known entity. An empty search raises
``NotFound`` rather than returning nothing, so the failure is named in the trace and the answer says
which look-up came back empty instead of silently answering about nobody.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal, TypeVar

from pydantic import Field, model_validator

from pilot.domain import profile
from pilot.models import Author, Evidence, Org, Paper, RankedPaper, SearchFilters, Venue
from pilot.people import same_person, variant
from pilot.reading.lexicon import org_forms, org_matches
from pilot.sources.base import NotFound, SourceError
from pilot.store.text import institution, split_affiliation
from pilot.text import TOPIC_FILTER_STOPWORDS, fold, stem, words
from pilot.venues import at_venue, venue_name
from pilot.venues import known as known_venue
from workflows.operator import (
    NoInputs,
    Operator,
    OperatorError,
    OperatorInputs,
    OperatorParams,
    RunContext,
    port,
    register,
)
from workflows.ports import PortType

# --- matching helpers -------------------------------------------------------------------------------


def topic_terms(topic: str | None) -> list[str]:
    return [stem(w) for w in words(topic) if w not in TOPIC_FILTER_STOPWORDS]


def topic_matches(topic: str | None, paper: Paper) -> bool:
    """Every content word of the topic appears (stemmed) in the paper's title or abstract."""
    terms = topic_terms(topic)
    if not terms:
        return True
    have = {stem(w) for w in words(paper.text)}
    return all(t in have for t in terms)


def person_matches(query: str | None, name: str | None) -> bool:
    """A name as a user types it against an author's name: same words, or same surname and first initial
    ("Chris Manning" ~ "Christopher D. Manning"), or a lone surname."""
    q, n = words(query), words(name)
    if not q or not n:
        return False
    if q == n:
        return True
    if len(q) == 1:
        return q[0] == n[-1]
    return q[-1] == n[-1] and q[0][0] == n[0][0]


def author_on_paper(author: Author, paper: Paper) -> Author | None:
    """The paper's own record of ``author`` (by id, else by folded name; the person's other spellings too)."""
    ids = {author.id, *author.aliases} - {None}
    for a in paper.authors:
        if a.id in ids:
            return a
    names = [words(n) for n in (author.name, *author.alias_names)]
    for a in paper.authors:
        if words(a.name) in names:
            return a
    return None


E = TypeVar("E", Author, Venue, Org)


def of_kind(values: Iterable[object], cls: type[E]) -> list[E]:
    return [e for e in values if isinstance(e, cls)]


def _dedupe_papers(papers: list[Paper]) -> list[Paper]:
    seen: set[str] = set()
    out = []
    for p in papers:
        if p.id not in seen:
            seen.add(p.id)
            out.append(p)
    return out


def _impact(p: Paper) -> int:
    return p.citation_count if p.citation_count is not None else (p.in_corpus_citations or 0)


def _by_impact(papers: list[Paper]) -> list[Paper]:
    return sorted(papers, key=lambda p: (-_impact(p), -(p.year or 0), p.title))


class _PaperFilter(OperatorParams):
    """Filters shared by the operators that list papers (same meaning as ``SearchFilters``)."""

    year_min: int | None = Field(None, ge=1000, le=2100)
    year_max: int | None = Field(None, ge=1000, le=2100)
    venue: str | None = Field(None, description="venue name or acronym, whole-word match, common aliases known")
    topic: str | None = Field(None, description="every content word must appear in title or abstract")
    coauthor: str | None = Field(
        None, description="only papers this person also wrote ('Chris Manning' finds 'Christopher D. Manning')"
    )

    @model_validator(mode="after")
    def _years_in_order(self):
        if self.year_min is not None and self.year_max is not None and self.year_min > self.year_max:
            raise ValueError(f"year_min {self.year_min} is after year_max {self.year_max}")
        return self

    def accepts(self, paper: Paper) -> bool:
        years = SearchFilters(year_min=self.year_min, year_max=self.year_max)
        return (
            years.accepts(paper)
            and (not self.venue or at_venue(paper, self.venue))
            and topic_matches(self.topic, paper)
            and (not self.coauthor or any(person_matches(self.coauthor, a.name) for a in paper.authors))
        )

    def describe(self) -> str:
        parts = []
        if self.coauthor:
            parts.append(f"with {self.coauthor}")
        if self.topic:
            parts.append(f"on {self.topic}")
        if self.venue:
            parts.append(f"at {self.venue}")
        if self.year_min is not None and self.year_max is not None:
            parts.append(
                f"in {self.year_min}" if self.year_min == self.year_max else f"in {self.year_min}–{self.year_max}"
            )
        elif self.year_min is not None:
            parts.append(f"since {self.year_min}")
        elif self.year_max is not None:
            parts.append(f"until {self.year_max}")
        return " ".join(parts)


def _ranked(papers: list[Paper], reason: str) -> list[RankedPaper]:
    return [RankedPaper(paper=p, score=float(_impact(p)), evidence=Evidence(reason=reason)) for p in papers]


def _pick(given: list[Entity] | None, cls: type[E], top: int, what: str, how: str) -> list[E]:
    """The first ``top`` entities of that kind from the input (an explicit id param is the caller's)."""
    found = of_kind(given or [], cls)
    if not found:
        raise OperatorError(f"no {what} to look up — {how}")
    return found[:top]


def _ids(given_id: str | None, given: list[Entity] | None, cls: type[E], top: int, what: str, how: str) -> list[str]:
    """The ids a detail step looks up: its id param, else the first ``top`` input entities of that kind."""
    return [given_id] if given_id else [e.id for e in _pick(given, cls, top, what, how) if e.id is not None]


K = TypeVar("K")
T = TypeVar("T")


def _first_of_each(items: Iterable[T], key: Callable[[T], K]) -> list[T]:
    """``items`` without later ones whose key an earlier one had, order kept."""
    seen: set[K] = set()
    out = []
    for item in items:
        if key(item) not in seen:
            seen.add(key(item))
            out.append(item)
    return out


Entity = Author | Venue | Org


@dataclass(kw_only=True)
class AuthorsInputs(OperatorInputs):
    authors: list[Entity] | None = port(
        PortType.ENTITIES, optional=True, description="authors (e.g. from search_author)"
    )


@dataclass(kw_only=True)
class VenuesInputs(OperatorInputs):
    venues: list[Entity] | None = port(PortType.ENTITIES, optional=True, description="venues (e.g. from search_venue)")


@dataclass(kw_only=True)
class OrgsInputs(OperatorInputs):
    orgs: list[Entity] | None = port(
        PortType.ENTITIES, optional=True, description="organisations (e.g. from search_org)"
    )


@dataclass(kw_only=True)
class PapersInputs(OperatorInputs):
    papers: list[RankedPaper] = port(PortType.PAPERS, description="papers (e.g. from keyword_search)")


# --- authors ---------------------------------------------------------------------------------------


class SearchAuthorParams(OperatorParams):
    name: str = Field(min_length=1, description="the person's name as the user wrote it (any script)")
    org: str | None = Field(None, description="prefer authors affiliated with this organisation")
    limit: int = Field(5, ge=1, le=50)


@register
class SearchAuthor(Operator[SearchAuthorParams, NoInputs]):
    name = "search_author"
    family = "entities"
    description = "Find authors by name (optionally at an organisation); best match first."
    Params = SearchAuthorParams
    output = PortType.ENTITIES

    async def run(self, ctx: RunContext, params: SearchAuthorParams, inputs: NoInputs) -> list[Author]:
        found = await ctx.source.search_authors(params.name, limit=max(params.limit, 25))
        if not found:
            raise NotFound(
                ctx.source.name, f"no author matching {params.name!r}", "check the spelling or try the full name"
            )
        wanted = words(params.name)
        # an exact (accent- and case-insensitive) name match beats a partial one, whatever the source's order
        found = sorted(found, key=lambda a: words(a.name) != wanted)
        if not any(variant(params.name, a.name) for a in found):
            close = did_you_mean(params.name, [a.name for a in found])
            if close:
                raise NotFound(ctx.source.name, f"no author named {params.name!r}", f"did you mean {close}?")
            # the source's loose matches must share a name with the one asked ("DROP TABLE" is not Valentin Tablan)
            found = [a for a in found if _shares_a_name(params.name, a.name)]
            if not found:
                raise NotFound(
                    ctx.source.name, f"no author named {params.name!r}", "check the spelling or try the full name"
                )
        if params.org:
            at_org = [a for a in found if any(org_matches(params.org, o) for o in [a.affiliation, *a.orgs])]
            if at_org:
                found = at_org
            else:
                ctx.notes.append(f"no author named {params.name!r} is affiliated with {params.org!r}; kept all matches")
        return merge_variants(params.name, found, ctx.notes)[: params.limit]


def _shares_a_name(asked: str, found: str) -> bool:
    """The asked name's last word is a word of the found one ("Pei Jian" / "Jian Pei"; "Manning" / "C. Manning");
    a shared first name alone is someone else ("Christopher Zzyzx" is not Christopher D. Manning)."""
    asked_words = words(asked)
    return bool(asked_words) and asked_words[-1] in words(found)


def did_you_mean(name: str, candidates: list[str], cutoff: float = 0.75) -> str | None:
    """The closest of ``candidates`` to a name that matched none of them exactly ("Cristopher Maning")."""
    folded = {" ".join(words(c)): c for c in candidates}
    best = difflib.get_close_matches(" ".join(words(name)), list(folded), n=3, cutoff=cutoff)
    return " or ".join(folded[b] for b in best) if best else None


def merge_variants(name: str, found: list[Author], notes: list[str]) -> list[Author]:
    """One author for the person the user named: the records under variant spellings of the name that the
    profiles show to be the same person (shared coauthors, or the same venues and topics) are merged into the
    best-known one; variants that look like someone else are kept apart, and the notes say so. The best-known
    record comes first."""
    variants = [a for a in found if a.id and variant(name, a.name)]
    if len(variants) < 2:
        return found
    primary = max(variants, key=lambda a: a.paper_count or 0)  # the best-known record names the person
    group = [primary]
    for other in variants:
        if other is primary:
            continue
        same, why = same_person(primary, other)
        if same:
            group.append(other)
            continue
        if other.paper_count and other.paper_count > 1:
            notes.append(f"kept {other.name} ({other.paper_count} papers) apart from {primary.name}: {why}")
    if len(group) == 1:
        # records kept apart: the best-known one answers, as the note names it ("kept Michael Collins (7 papers)
        # apart from Michael John Collins"), even when a less-known one has the exact spelling asked for
        return [primary] + [a for a in found if a is not primary]
    merged = primary.model_copy(
        update={
            "aliases": [a.id for a in group[1:] if a.id],
            "alias_names": list(dict.fromkeys(a.name for a in group[1:] if a.name != primary.name)),
            "paper_count": sum(a.paper_count or 0 for a in group),
            "citation_count": sum(a.citation_count or 0 for a in group),
        }
    )
    notes.append(
        f"{primary.name} also appears as {', '.join(merged.alias_names) or 'another record'}; "
        f"merged: {same_person(primary, group[1])[1]}"
    )
    merged_ids = {a.id for a in group}
    return [merged] + [a for a in found if a.id not in merged_ids]


class AuthorDetailParams(OperatorParams):
    author_id: str | None = Field(None, description="look up this id instead of the input's authors")
    top: int = Field(1, ge=1, le=20, description="how many of the input's authors to look up")


@register
class AuthorDetail(Operator[AuthorDetailParams, AuthorsInputs]):
    name = "author_detail"
    family = "entities"
    description = "Profile of authors (affiliation, counts, h-index, venues, topics, coauthors)."
    Params = AuthorDetailParams
    Inputs = AuthorsInputs
    output = PortType.ENTITIES

    async def run(self, ctx: RunContext, params: AuthorDetailParams, inputs: AuthorsInputs) -> list[Author]:
        if params.author_id:
            ids = [params.author_id]
        else:
            authors = _pick(inputs.authors, Author, params.top, "author", "connect search_author or set author_id")
            if any(a.id is None for a in authors):
                raise OperatorError("an input author has no id this source can look up")
            # a person merged from several spellings (search_author) is described from all their records
            return [await _described(ctx, a) for a in authors]
        return list(await asyncio.gather(*(ctx.source.get_author(i) for i in ids)))


async def _described(ctx: RunContext, given: Author) -> Author:
    assert given.id is not None  # checked by the caller
    found = await ctx.source.get_author(given.id)
    if not given.aliases:
        return found
    others = list(await asyncio.gather(*(ctx.source.get_author(i) for i in given.aliases)))
    return _combined(found, others)


def _combined(primary: Author, others: list[Author]) -> Author:
    """One profile from a person's records under several spellings (counts added, lists merged)."""

    def merged(field: str, n: int) -> list[str]:
        c: Counter[str] = Counter()
        for a in [primary, *others]:
            values = getattr(a, field)
            for i, v in enumerate(values):
                c[v] += len(values) - i  # earlier = more frequent
        return [v for v, _ in c.most_common(n)]

    everyone = [primary, *others]
    return primary.model_copy(
        update={
            "paper_count": sum(a.paper_count or 0 for a in everyone),
            "citation_count": sum(a.citation_count or 0 for a in everyone),
            "h_index": max((a.h_index or 0 for a in everyone), default=0) or None,
            "venues": merged("venues", 5),
            "topics": merged("topics", 8),
            "coauthors": merged("coauthors", 10),
            "aliases": [a.id for a in others if a.id],
            "alias_names": list(dict.fromkeys(a.name for a in others if a.name != primary.name)),
        }
    )


class AuthorPapersParams(_PaperFilter):
    author_id: str | None = Field(None, description="list this author's papers instead of the input's")
    top: int = Field(1, ge=1, le=20, description="how many of the input's authors to include")
    limit: int = Field(500, ge=1, le=5000, description="papers fetched per author before filtering")


@register
class AuthorPapers(Operator[AuthorPapersParams, AuthorsInputs]):
    name = "author_papers"
    family = "entities"
    description = "Papers of authors, optionally only at a venue, in a year range or on a topic."
    Params = AuthorPapersParams
    Inputs = AuthorsInputs
    output = PortType.PAPERS

    async def run(self, ctx: RunContext, params: AuthorPapersParams, inputs: AuthorsInputs) -> list[RankedPaper]:
        if params.author_id:
            ids, names = [params.author_id], params.author_id
        elif inputs.authors == []:
            return []  # the step before found no one (a paper listed without authors): no papers, not an error
        else:
            authors = _pick(inputs.authors, Author, params.top, "author", "connect search_author or set author_id")
            # the person's records under other spellings of the name (merged by search_author) count too
            ids = [i for a in authors for i in (a.id, *a.aliases) if i]
            names = ", ".join(a.name for a in authors)
        if params.author_id:
            lists = [await ctx.source.author_papers(params.author_id, limit=params.limit)]
        else:  # one batch request on a remote source, not one per author
            lists = list((await ctx.source.authors_papers(ids, limit=params.limit)).values())
        papers = _dedupe_papers([p for lst in lists for p in lst if params.accepts(p)])
        what = params.describe()
        return _ranked(_by_impact(papers), f"paper of {names}" + (f" {what}" if what else ""))


# --- venues ----------------------------------------------------------------------------------------


class SearchVenueParams(OperatorParams):
    name: str = Field(min_length=1, description="venue name or acronym")
    limit: int = Field(5, ge=1, le=50)


@register
class SearchVenue(Operator[SearchVenueParams, NoInputs]):
    name = "search_venue"
    family = "entities"
    description = "Find venues (conferences, journals) by name or acronym; best match first."
    Params = SearchVenueParams
    output = PortType.ENTITIES

    async def run(self, ctx: RunContext, params: SearchVenueParams, inputs: NoInputs) -> list[Venue]:
        found = list(await ctx.source.search_venues(params.name, limit=max(params.limit, 25)))
        for alias in profile().venue_forms(params.name)[:1]:
            # "NeurIPS" is "NIPS" in older data: look the alias up too so the venue is found either way
            with contextlib.suppress(NotFound):
                # only venues the alias names: its loose matches ("Knowledge Discovery …" for KDD) are other venues
                more = await ctx.source.search_venues(alias, limit=params.limit)
                found += [v for v in more if profile().venue_name_matches(params.name, v.name)]
        found = _first_of_each(found, key=lambda v: v.id)
        # whole-word matches first ("ACL" before "NAACL"), then the bigger venue
        found.sort(key=lambda v: (not profile().venue_name_matches(params.name, v.name), -(v.paper_count or 0)))
        if not found:
            raise NotFound(ctx.source.name, f"no venue matching {params.name!r}", "try the acronym or the full name")
        return found[: params.limit]


class VenueDetailParams(OperatorParams):
    venue_id: str | None = None
    top: int = Field(1, ge=1, le=20)


@register
class VenueDetail(Operator[VenueDetailParams, VenuesInputs]):
    name = "venue_detail"
    family = "entities"
    description = "Profile of venues (paper count, years, frequent authors, topics)."
    Params = VenueDetailParams
    Inputs = VenuesInputs
    output = PortType.ENTITIES

    async def run(self, ctx: RunContext, params: VenueDetailParams, inputs: VenuesInputs) -> list[Venue]:
        ids = _ids(params.venue_id, inputs.venues, Venue, params.top, "venue", "connect search_venue or set venue_id")
        return list(await asyncio.gather(*(ctx.source.get_venue(i) for i in ids)))


# Evidence score on a cut paper list: how many papers matched before the cut (read by synthesize_answer).
MATCHES = "matches"


class VenuePapersParams(_PaperFilter):
    query: str | None = Field(None, description="search text; default: the topic, else the venue name")
    # generous, so that "N papers found" in the answer is the real count for a venue-year
    limit: int = Field(1000, ge=1, le=5000)


@register
class VenuePapers(Operator[VenuePapersParams, VenuesInputs]):
    name = "venue_papers"
    family = "entities"
    description = "Papers published at a venue (from the input venues or the venue param), by years and topic."
    Params = VenuePapersParams
    Inputs = VenuesInputs
    output = PortType.PAPERS

    async def run(self, ctx: RunContext, params: VenuePapersParams, inputs: VenuesInputs) -> list[RankedPaper]:
        venues = of_kind(inputs.venues or [], Venue)
        if not venues and not params.venue:
            raise OperatorError("no venue given — connect search_venue or set the venue param")
        # A known conference ("ACL") is matched paper by paper (the anthology id, Findings apart), over every
        # venue string the source spells it with; another venue by its resolved names, word for word.
        wanted = params.venue or (venue_name(venues[0].name) if venues else None) or ""
        names = [v.name for v in venues[:3]] or [params.venue or ""]  # one of them is given (checked above)
        if known_venue(wanted):
            # every spelling of the conference the source knows ("ACL", "Annual Meeting Of …", "ACL-IJCNLP")
            more = list(venues)
            for q in (wanted, *profile().venue_forms(wanted)[:1]):
                with contextlib.suppress(NotFound):
                    more += await ctx.source.search_venues(q, limit=50)
            names = [v.name for v in more if profile().venue_name_matches(wanted, v.name)] or names
            names = list(dict.fromkeys(names))[:25]
        query = params.query or params.topic
        found: list[Paper] = []
        for name in names:
            # the source narrows to the venue (its own substring rule); the check below is ours
            filters = SearchFilters(year_min=params.year_min, year_max=params.year_max, venue=name)
            hits = await ctx.source.search_papers(
                query or name, filters=filters, limit=min(max(params.limit * 4, 2000), 20000)
            )
            found += [h.paper for h in hits]
        keep = [
            p
            for p in _dedupe_papers(found)
            if (at_venue(p, wanted) if known_venue(wanted) else any(_same_venue(n, p.venue) for n in names))
            and topic_matches(params.topic, p)
            and SearchFilters(year_min=params.year_min, year_max=params.year_max).accepts(p)
        ]
        what = (
            params.describe()
            if not venues
            else " ".join(x for x in [f"at {names[0]}", params.model_copy(update={"venue": None}).describe()] if x)
        )
        out = _ranked(_by_impact(keep)[: params.limit], f"published {what}".strip())
        if len(keep) > params.limit:
            # the answer's "N papers found" must be the real count, not the length of the cut list
            ctx.notes.append(f"kept the {params.limit} most cited of {len(keep)} matching papers")
            for it in out:
                it.evidence.scores[MATCHES] = float(len(keep))
        return out


def _same_venue(name: str, venue: str | None) -> bool:
    return bool(venue) and (fold(name) == fold(venue) or profile().venue_name_matches(name, venue))


# --- organisations ---------------------------------------------------------------------------------


class SearchOrgParams(OperatorParams):
    name: str = Field(min_length=1, description="organisation name (university, lab, company), any script")
    limit: int = Field(5, ge=1, le=50)


@register
class SearchOrg(Operator[SearchOrgParams, NoInputs]):
    name = "search_org"
    family = "entities"
    description = "Find organisations (universities, labs, companies) by name; best match first."
    Params = SearchOrgParams
    output = PortType.ENTITIES

    async def run(self, ctx: RunContext, params: SearchOrgParams, inputs: NoInputs) -> list[Org]:
        found = list(await ctx.source.search_orgs(params.name, limit=max(params.limit, 25)))
        for form in org_forms(params.name):
            # "CMU", "清华大学": the source knows it by the name its affiliations spell out
            with contextlib.suppress(NotFound):
                more = await ctx.source.search_orgs(form, limit=params.limit)
                found += [o for o in more if org_matches(form, o.name)]
        found = _first_of_each(found, key=lambda o: o.id)
        if not found:
            raise NotFound(ctx.source.name, f"no organisation matching {params.name!r}", "try its full official name")
        wanted = words(params.name)
        known_as = [words(f) for f in org_forms(params.name)]
        # exact name (or a listed other name), then names containing the query, then the most query words in common
        found.sort(
            key=lambda o: (
                words(o.name) != wanted and words(o.name) not in known_as,
                not org_matches(params.name, o.name),
                -len(set(wanted) & set(words(o.name))),
            )
        )
        return found[: params.limit]


class OrgDetailParams(OperatorParams):
    org_id: str | None = None
    top: int = Field(1, ge=1, le=20)


@register
class OrgDetail(Operator[OrgDetailParams, OrgsInputs]):
    name = "org_detail"
    family = "entities"
    description = "Profile of organisations (paper and author counts, frequent authors, topics)."
    Params = OrgDetailParams
    Inputs = OrgsInputs
    output = PortType.ENTITIES

    async def run(self, ctx: RunContext, params: OrgDetailParams, inputs: OrgsInputs) -> list[Org]:
        ids = _ids(params.org_id, inputs.orgs, Org, params.top, "organisation", "connect search_org or set org_id")
        return list(await asyncio.gather(*(ctx.source.get_org(i) for i in ids)))


class OrgAuthorsParams(OperatorParams):
    org_id: str | None = None
    topic: str | None = Field(None, description="keep researchers with a paper on this topic written at the org")
    limit: int = Field(10, ge=1, le=200, description="researchers returned")
    scan: int = Field(2000, ge=1, le=10000, description="researchers per organisation examined for the topic")
    units: int = Field(50, ge=1, le=100, description="sub-units of the org from the input also examined")


@register
class OrgAuthors(Operator[OrgAuthorsParams, OrgsInputs]):
    name = "org_authors"
    family = "entities"
    description = "Researchers of an organisation, optionally only those with papers on a topic written there."
    Params = OrgAuthorsParams
    Inputs = OrgsInputs
    output = PortType.ENTITIES

    async def run(self, ctx: RunContext, params: OrgAuthorsParams, inputs: OrgsInputs) -> list[Author]:
        if params.org_id:
            orgs = [await ctx.source.get_org(params.org_id)]
        else:
            orgs = _pick(inputs.orgs, Org, 100, "organisation", "connect search_org or set org_id")
        primary = orgs[0]
        # Affiliation strings split one institution into departments ("Department of CS, Tsinghua
        # University"); the input orgs that contain the first one's name are its units.
        units = [primary] + [o for o in orgs[1:] if org_matches(primary.name, o.name)][: params.units - 1]
        lists = await asyncio.gather(
            *(ctx.source.org_authors(o.id, limit=params.scan if params.topic else params.limit) for o in units)
        )
        people = _first_of_each((a for lst in lists for a in lst), key=lambda a: a.id or a.name)
        if not params.topic:
            return people[: params.limit]
        sem = asyncio.Semaphore(16)

        async def on_topic(a: Author) -> int:
            if not a.id:
                return 0
            async with sem:
                papers = await ctx.source.author_papers(a.id, limit=1000)
            # the paper must be on the topic AND written while at this organisation
            return sum(
                1
                for p in papers
                if topic_matches(params.topic, p)
                and (me := author_on_paper(a, p)) is not None
                and org_matches(primary.name, me.affiliation)
            )

        counts = await asyncio.gather(*(on_topic(a) for a in people))
        ranked = sorted(((c, i) for i, c in enumerate(counts) if c > 0), key=lambda t: (-t[0], t[1]))
        # the count an answer gives is of the papers on the topic written there, not of all their papers
        return [people[i].model_copy(update={"paper_count": c}) for c, i in ranked[: params.limit]]


class PaperAuthorsParams(OperatorParams):
    org: str | None = Field(None, description="only authors whose affiliation on the paper names this organisation")
    limit: int = Field(10, ge=1, le=200)


@register
class PaperAuthors(Operator[PaperAuthorsParams, PapersInputs]):
    name = "paper_authors"
    family = "entities"
    description = "The authors of a set of papers, those on most of the papers first (e.g. who works on a topic)."
    Params = PaperAuthorsParams
    Inputs = PapersInputs
    output = PortType.ENTITIES

    async def run(self, ctx: RunContext, params: PaperAuthorsParams, inputs: PapersInputs) -> list[Author]:
        counts: dict[str, int] = {}
        first: dict[str, Author] = {}
        for paper in (it.paper for it in inputs.papers):
            for a in paper.authors:
                if params.org and not org_matches(params.org, a.affiliation):
                    continue
                key = a.id or " ".join(words(a.name))
                if not key:
                    continue
                counts[key] = counts.get(key, 0) + 1
                first.setdefault(key, a)
        position = {k: i for i, k in enumerate(first)}
        order = sorted(counts, key=lambda k: (-counts[k], position[k]))
        # the count is of the input papers (e.g. those on the asked topic), not of all the person's papers
        return [first[k].model_copy(update={"paper_count": counts[k]}) for k in order[: params.limit]]


def _group_key(name: str) -> str:
    return " ".join(fold(name).replace("-", " ").split())


class PaperGroupsParams(OperatorParams):
    by: Literal["venue", "org"] = Field("venue", description="group the papers by their venue or their authors' org")
    limit: int = Field(10, ge=1, le=100)


@register
class PaperGroups(Operator[PaperGroupsParams, PapersInputs]):
    name = "paper_groups"
    family = "entities"
    description = (
        "The venues (or organisations) of a set of papers, those with most of the papers first "
        "(e.g. where a topic is published, which institutions work on it)."
    )
    Params = PaperGroupsParams
    Inputs = PapersInputs
    output = PortType.ENTITIES

    async def run(self, ctx: RunContext, params: PaperGroupsParams, inputs: PapersInputs) -> list[Venue | Org]:
        counts: Counter[str] = Counter()
        shown: dict[str, str] = {}
        if params.by == "org":
            named = sum(1 for it in inputs.papers if any(a.affiliation for a in it.paper.authors))
            if named < len(inputs.papers):  # older records often carry no affiliations: the counts cover fewer
                ctx.notes.append(f"{named} of the {len(inputs.papers)} papers name their authors' institutions")
        for paper in (it.paper for it in inputs.papers):
            if params.by == "venue":
                names = [profile().venue_label(paper) or ""]
            else:  # one vote per paper and institution, however many of its authors work there
                names = [institution(o) for a in paper.authors for o in split_affiliation(a.affiliation)]
            # "Carnegie-Mellon University" and "Carnegie Mellon University" are one group, named as first seen
            keys = {_group_key(n): n for n in reversed(names) if n.strip()}
            for key, name in keys.items():
                shown.setdefault(key, name)
            counts.update(keys.keys())
        top = [(shown[key], n) for key, n in counts.most_common(params.limit)]
        # the source's own record of each group, so the answer can cite it; a name alone when it has none
        found = await asyncio.gather(*(self._record(ctx, params.by, name) for name, _ in top))
        return [e.model_copy(update={"paper_count": n}) for e, (_, n) in zip(found, top, strict=True)]

    @staticmethod
    async def _record(ctx: RunContext, by: str, name: str) -> Venue | Org:
        try:
            if by == "venue":
                venues = await ctx.source.search_venues(name, limit=3)
                return next(
                    (v for v in venues if fold(v.name) == fold(name)),
                    venues[0] if venues else Venue(id=name, name=name),
                )
            orgs = await ctx.source.search_orgs(name, limit=3)
            return next((o for o in orgs if fold(o.name) == fold(name)), Org(id=name, name=name))
        except SourceError:
            return Venue(id=name, name=name) if by == "venue" else Org(id=name, name=name)
