"""From what the user called a paper to the paper — or an honest "that paper is not here".

Researchers name papers by an id, by a (partial) title, by the name the paper introduced ("GloVe", "the Penn
Treebank", "the Transformer paper"), or they name a topic. ``resolve`` turns a parsed request into one of:

- ``paper``: found, taken (an exact title, an id, or a name one paper clearly introduced — with a note
  saying which paper was taken, so a wrong guess is visible);
- ``ask``: several papers fit about equally; the best first;
- ``missing``: a title or name the source does not hold — said, with what the source covers, instead of
  offering near misses as if they fitted;
- ``topic``: the words read better as a topic than as a paper.
"""

from __future__ import annotations

import difflib
import re
from typing import Literal

from pydantic import BaseModel, Field

from pilot.intent import ID_KINDS, ParsedRequest, content_terms, subject_form
from pilot.models import Paper
from pilot.names import impact, introduces
from pilot.people import name_parts
from pilot.reading.lexicon import known_titles
from pilot.sources.base import NotFound, NotSupported, Source
from pilot.text import normalize_title
from workflows.diff import short

ResolutionKind = Literal["paper", "ask", "missing", "topic"]
DOMINANCE = 3.0  # a name's paper is taken without asking when it is this many times better known than the next
ASK_SIMILARITY = 0.6  # a title this close to a candidate is worth a "which paper do you mean?"
LONG_TITLE_SIMILARITY = 0.75  # for a long title: sharing half the words is another paper, not this one
PAPER_DIRECTIONS = ("predecessor", "successor", "sibling")
DESCRIBED_POOL = 200  # search hits checked for the authors of a paper described by its topic
CITED_YEARS_OFF = 2  # "Collins (1999)" may be the journal version or preprint of a year or two apart


class Resolution(BaseModel):
    kind: ResolutionKind
    paper: Paper | None = None
    candidates: list[Paper] = Field(default_factory=list)
    note: str | None = None

    @property
    def best(self) -> Paper | None:
        """The paper named, or the likeliest candidate of an ambiguous name: for requests that take a paper
        without stopping to ask which one ("who wrote X?", "papers that cite both X and Y")."""
        if self.paper is not None:
            return self.paper
        return self.candidates[0] if self.kind == "ask" and self.candidates else None

    @property
    def guessed(self) -> bool:
        """``best`` is a guess the reply should own up to (an ambiguous name, or a found paper with a caveat)."""
        return self.best is not None and (self.paper is None or self.note is not None)


def near_exact(query: str, title: str, inside: bool = True) -> bool:
    """``query`` is ``title`` (give or take a typo, or cut short), or, with ``inside``, a request with the
    title typed in it."""
    q, t = normalize_title(query), normalize_title(title)
    if not q or not t:
        return False
    if q == t:
        return True
    # an unquoted title typed inside a request ("predecessors of deep residual learning for image recognition")
    if inside and len(t.split()) >= 4 and f" {t} " in f" {q} ":
        return True
    # a title cut short ("Bleu: a method for automatic evaluation")
    if len(q.split()) >= 4 and f"{t} ".startswith(f"{q} "):
        return True
    return difflib.SequenceMatcher(None, q, t).ratio() >= 0.92


def similarity(query: str, title: str) -> float:
    return difflib.SequenceMatcher(None, normalize_title(query), normalize_title(title)).ratio()


def _id_matches(query: str, paper: Paper) -> bool:
    q = query.strip().lower()
    values = {
        paper.id.lower(),
        paper.id.split(":", 1)[-1].lower(),
        *(str(v).lower() for v in paper.external_ids.values()),
    }
    return q in values or q.split(":", 1)[-1] in values


def _label(p: Paper) -> str:
    return f"“{p.title}” ({p.year})" if p.year else f"“{p.title}”"


def dominant(candidates: list[Paper], name: str) -> Paper | None:
    """The paper that introduced ``name``, when one clearly stands out: the only one whose title (rather than
    abstract) is built around it, or by far the best known (``DOMINANCE``), or the first by two years or more
    and about as well known (names are introduced once; later papers reuse them)."""
    tiers = {p.id: introduces(p, name) for p in candidates}
    top = max(tiers.values(), default=0)
    if top == 0:
        return None
    primary: dict[str, Paper] = {}
    for p in sorted((p for p in candidates if tiers[p.id] == top), key=lambda p: (-impact(p), p.year or 9999)):
        primary.setdefault(normalize_title(p.title), p)  # the same title twice (a re-issue): the better known one
    ranked = list(primary.values())
    if len(ranked) == 1:
        return ranked[0]
    first, second = ranked[0], ranked[1]
    if impact(first) > 0 and impact(first) >= DOMINANCE * impact(second):
        return first
    earliest = min(ranked, key=lambda p: p.year or 9999)
    if (
        earliest.year
        and all((p.year or 0) >= earliest.year + 2 for p in ranked if p is not earliest)
        and impact(earliest) >= 0.5 * impact(first)
    ):
        return earliest
    return None


_PAIR = re.compile(r"\S+(?:\s+\S+)?\s+(?:and|or|vs\.?|versus|&)\s+\S+(?:\s+\S+)?", re.IGNORECASE)


_KIND_TAIL = re.compile(
    r" (?:metric|measure|score|model|architecture|algorithm|method|approach|framework|toolkit|tool|system|dataset|"
    r"corpus|benchmark|network|technique|paper)s?$",
    re.I,
)


def _quoted(parsed: ParsedRequest) -> bool:
    return bool(re.search(r"[\"“«]\s*" + re.escape(parsed.anchor_query), parsed.text))


def _typed_as_title(parsed: ParsedRequest) -> bool:
    """A title the user clearly typed as one: quoted, with a colon, or long and capitalised."""
    q = parsed.anchor_query
    return _quoted(parsed) or ":" in q or (len(q.split()) >= 6 and q[:1].isupper())


async def resolve(source: Source, parsed: ParsedRequest, coverage: str | None = None) -> Resolution:
    """What paper (or topic) ``parsed`` names. Source errors propagate: the caller decides what a dead
    source means for the turn."""
    kind, query = parsed.anchor_kind, parsed.anchor_query
    where = coverage or source.coverage()
    if kind in ID_KINDS:
        try:
            found = await source.match_paper(query, limit=5)
        except NotFound:
            found = []
        hit = next((p for p in found if _id_matches(query, p)), None)
        if hit is None:
            what = {"doi": "DOI", "arxiv": "arXiv id", "s2": "Semantic Scholar id"}.get(kind, "id")
            return Resolution(
                kind="missing",
                note=f"I could not find a paper with the {what} {query!r} in the source ({source.name}). "
                "Name it by its title instead (in quotes if it is long).",
            )
        return Resolution(kind="paper", paper=hit)
    if parsed.year and kind in ("name", "title"):
        return await _in_year(source, parsed)
    if kind == "name":
        return await _by_name(source, parsed, where)
    if kind == "described":
        return await _by_description(source, query, parsed.authors, where)
    if kind == "cited" and parsed.authors:
        return await _by_citation(source, parsed, where)
    if kind == "topic":
        # plain words are a topic, unless they are a whole title typed in lower case and the request is about
        # papers around it ("papers like deep residual learning for image recognition")
        relative = parsed.intent.direction in PAPER_DIRECTIONS
        # "what should I cite on <words that are also a title>?" asks for the topic's literature, not that
        # paper; the title typed as one ("What should I read on Feature-Rich Part-Of-Speech Tagging …?") names it
        long_bare = len(query.split()) >= 6 and (not parsed.request_words or subject_form(query) == "title")
        if len(query.split()) >= 4 and (relative or long_bare):
            # the topic is a title; a topic that only contains one ("<title> for tagging Chinese") stays a topic
            exact = [p for p in await source.match_paper(query, limit=5) if near_exact(query, p.title, inside=False)]
            if exact:
                return Resolution(kind="paper", paper=exact[0])
        if len(query.split()) <= 3 and relative:
            named = await _by_name(source, parsed, where)  # "what came before pointnet" (a name in lower case)
            if named.kind == "paper":
                return named
        return Resolution(kind="topic")
    found = await source.match_paper(query, limit=5)
    exact = [p for p in found if near_exact(query, p.title)]
    if not exact:
        # a relevance search can rank a title below papers that share its words; Semantic Scholar's title match
        # (one request, asked only now) finds it by the title itself
        exact = [p for p in await source.match_paper(query, limit=1) if near_exact(query, p.title)]
    if exact:
        return Resolution(kind="paper", paper=exact[0])
    # a title: close titles are asked about; a title typed as one that matches nothing is said to be missing
    threshold = ASK_SIMILARITY if len(query.split()) < 5 else LONG_TITLE_SIMILARITY
    close = sorted(
        (p for p in found if similarity(query, p.title) >= threshold), key=lambda p: -similarity(query, p.title)
    )
    whole_title = _typed_as_title(parsed) and len(query.split()) >= 5
    if close:
        # a whole title with no exact match is not in the source; near misses are other papers that share
        # words with it, offered only in case the user misremembered the title
        missing = f"“{short(query, 120)}” is not in the source under that title (it holds {where}). "
        note = missing + "Titles there that share words with it:" if whole_title else None
        return Resolution(kind="ask", candidates=close[:4], note=note)
    if whole_title:
        return Resolution(
            kind="missing",
            note=f"“{query}” is not in the source, which holds {where}. "
            "No title there is close enough to be that paper.",
        )
    if found and _quoted(parsed):
        return Resolution(kind="ask", candidates=found[:4])  # a short quoted description: offer what fits it
    return Resolution(kind="topic")


async def _papers_of_surname(source: Source, surname: str, people: int = 10) -> list[Paper]:
    """The papers of the people the source knows by ``surname`` (none for a source without people)."""
    wanted = name_parts(surname).last
    try:
        named = await source.search_authors(surname, limit=people)
        ids = [a.id for a in named if a.id and name_parts(a.name).last == wanted]
        by_person = await source.authors_papers(ids, limit=DESCRIBED_POOL) if ids else {}
    except (NotFound, NotSupported):
        return []
    return [p for ps in by_person.values() for p in ps]


def _written_by(paper: Paper, surnames: list[str]) -> bool:
    written = {name_parts(a.name).last for a in paper.authors}
    return all(name_parts(s).last in written for s in surnames)


def _topic_fit(paper: Paper, topic: str | list[str]) -> float:
    """The share of the topic's words (5-letter stems) in the paper's title and abstract."""
    terms = [t[:5] for t in (content_terms(topic) if isinstance(topic, str) else topic)]
    words = {w[:5] for w in normalize_title(f"{paper.title} {paper.abstract or ''}").split()}
    return sum(t in words for t in terms) / max(len(terms), 1)


def _who(surnames: list[str]) -> str:
    return " and ".join(surnames) if len(surnames) <= 2 else f"{', '.join(surnames[:-1])} and {surnames[-1]}"


async def _by_description(source: Source, topic: str, surnames: list[str], where: str) -> Resolution:
    """The paper on ``topic`` written by all of ``surnames`` ("the one on sentence compression by Knight and
    Marcu"): taken when one paper fits, asked about when several do (the best fitting, most cited first)."""
    # both ways in: the topic's best matches (any author) and the papers of the people with the first surname
    hits = [h.paper for h in await source.search_papers(topic, limit=DESCRIBED_POOL)]
    theirs = await _papers_of_surname(source, surnames[0])
    found = {p.id: p for p in [*hits, *theirs] if _written_by(p, surnames) and _topic_fit(p, topic) > 0}
    fits = sorted(found.values(), key=lambda p: (-_topic_fit(p, topic), -impact(p)))
    who = _who(surnames)
    if not fits:
        return Resolution(
            kind="missing", note=f"No paper on “{topic}” by {who} is in the source; the source holds {where}."
        )
    if len(fits) == 1:
        return Resolution(
            kind="paper",
            paper=fits[0],
            note=f"I took {_label(fits[0])} as the paper on {topic} by {who}; name another paper if you meant a "
            "different one.",
        )
    return Resolution(kind="ask", candidates=fits[:4], note=f"{len(fits)} papers on “{topic}” are by {who}.")


async def _by_citation(source: Source, parsed: ParsedRequest, where: str) -> Resolution:
    """The paper a reference like "Collins (1999)" or "Mikolov et al., 2013" points to: written by those
    surnames (the first one first author, preferably) in that year. A journal version or preprint a year or two
    away, or — with topic words ("Collins 1999 on parsing") — their paper on the topic nearest in year, is
    offered, never taken, when the year itself has none."""
    surnames, year = parsed.authors, parsed.year or 0
    focus = parsed.intent.topic_terms
    first = name_parts(surnames[0]).last
    theirs = {p.id: p for p in await _papers_of_surname(source, surnames[0], people=25) if _written_by(p, surnames)}
    papers = list(theirs.values())
    if focus and any(_topic_fit(p, focus) > 0 for p in papers):
        papers = [p for p in papers if _topic_fit(p, focus) > 0]

    def order(p: Paper) -> tuple[int, bool, float, float]:
        lead = bool(p.authors) and name_parts(p.authors[0].name).last == first
        return abs((p.year or 0) - year), not lead, -_topic_fit(p, focus), -impact(p)

    papers.sort(key=order)
    ref, who = parsed.anchor_query, _who(surnames)
    exact = [p for p in papers if p.year == year]
    leading = [p for p in exact if not order(p)[1]]
    if len(leading) == 1:
        return Resolution(
            kind="paper", paper=leading[0], note=f"I took {_label(leading[0])} as {ref}; name another paper if you "
            "meant a different one."
        )  # fmt: skip
    if leading:
        return Resolution(kind="ask", candidates=leading[:4], note=f"{len(leading)} papers by {who} are from {year}.")
    if exact:
        # "Mikolov et al., 2013" names the first author: a paper he only co-wrote is offered, not taken
        return Resolution(
            kind="ask", candidates=exact[:4], note=f"No paper from {year} with {surnames[0]} as first author is in "
            f"the source; {surnames[0]} co-wrote these that year."
        )  # fmt: skip
    near = [p for p in papers if abs((p.year or 0) - year) <= CITED_YEARS_OFF or focus]
    if near:
        return Resolution(
            kind="ask", candidates=near[:4], note=f"No paper by {who} from {year} is in the source. Closest in year:"
        )
    if not theirs:
        return Resolution(kind="missing", note=f"No paper by {who} is in the source; it holds {where}.")
    return Resolution(kind="missing", note=f"No paper by {who} from around {year} is in the source; it holds {where}.")


async def _in_year(source: Source, parsed: ParsedRequest) -> Resolution:
    """ "I mean the 2014 one": of the papers that go by the name (or title) the search was named with, the one
    from that year; a paper a year away (a journal version, a preprint) is offered, never taken."""
    query, year = parsed.anchor_query, parsed.year or 0
    named = await source.named_papers(query, limit=10) if parsed.anchor_kind == "name" else []
    found = [p for p in await source.match_paper(query, limit=10) if similarity(query, p.title) >= ASK_SIMILARITY]
    papers = list({p.id: p for p in [*named, *found]}.values())
    papers.sort(key=lambda p: (-introduces(p, query), -impact(p)))
    exact = [p for p in papers if p.year == year]
    if len(exact) == 1:
        return Resolution(kind="paper", paper=exact[0], note=f"Took {_label(exact[0])}, the one from {year}.")
    if exact:
        return Resolution(kind="ask", candidates=exact[:4], note=f"{len(exact)} papers from {year} go by “{query}”.")
    if near := [p for p in papers if abs((p.year or 0) - year) <= 1]:
        return Resolution(
            kind="ask", candidates=near[:4], note=f"No paper called “{query}” from {year} is in the source. "
            "Closest in year:"
        )  # fmt: skip
    years = ", ".join(str(y) for y in sorted({p.year for p in papers if p.year}))
    held = f"the ones it holds are from {years}" if years else "it holds none by that name"
    note = f"No paper called “{short(query, 80)}” from {year} is in the source; {held}."
    return Resolution(kind="missing", note=note)


async def _well_known(source: Source, name: str) -> list[Paper]:
    """The papers a name no title contains usually means ("word2vec", "ResNet"), as the source holds them."""
    found: list[Paper] = []
    for title in known_titles(name):
        try:
            hits = await source.match_paper(title, limit=1)  # Semantic Scholar: its one-request title match
        except NotFound:
            continue
        found += [p for p in hits[:1] if near_exact(title, p.title, inside=False)]
    return found


async def _by_name(source: Source, parsed: ParsedRequest, where: str) -> Resolution:
    name = parsed.anchor_query
    if known := await _well_known(source, name):
        # the table knows the name better than the words of titles do: "LDA" is Blei et al.'s paper, not one of
        # the ten whose abstracts abbreviate "linear discriminant analysis"
        usual = max(known, key=impact)  # max keeps the table's order among equals
        alike = "; ".join(_label(p) for p in known if p is not usual)
        aka = f" (also known by that name: {alike})" if alike else ""
        return Resolution(
            kind="paper",
            paper=usual,
            note=f"I took {_label(usual)} as the paper known as “{name}”{aka}; name another paper if you meant a "
            "different one.",
        )
    named = await source.named_papers(name, limit=10)
    if not named:
        # a short title typed as a name ("Latent Dirichlet Allocation") is still a title
        found = await source.match_paper(name, limit=5)
        exact = [p for p in found if near_exact(name, p.title)]
        if exact:
            return Resolution(kind="paper", paper=exact[0])
        if len(name) <= 200 and _PAIR.fullmatch(name):  # (a name is short; the pattern backtracks on long text)
            return Resolution(kind="topic")  # "BLEU and METEOR", "CRF vs HMM": papers about both, not one paper
        if (bare := _KIND_TAIL.sub("", name)) != name and bare:
            # "the BLEU metric", "the LSTM architecture": the name is the word before what kind of thing it is
            return await _by_name(source, parsed.model_copy(update={"anchor_query": bare}), where)
        return Resolution(
            kind="missing",
            note=f"“{name}” is not in the source: no paper there introduces it; the source holds {where}.",
        )
    best = dominant(named, name)
    if best is not None:
        others = len({normalize_title(p.title) for p in named}) - 1
        also = (
            f" ({others} other paper{'s' if others > 1 else ''} also use{'' if others > 1 else 's'} the name)"
            if others
            else ""
        )
        return Resolution(
            kind="paper",
            paper=best,
            note=f"I took {_label(best)} as the paper that introduced {name}{also}; "
            "name another paper if you meant a different one.",
        )
    ranked = sorted(named, key=lambda p: (-introduces(p, name), -impact(p)))
    return Resolution(kind="ask", candidates=ranked[:4])
