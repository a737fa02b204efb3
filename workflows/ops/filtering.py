"""Filtering operators: keep the papers that satisfy hard constraints, cut a ranked list, threshold a score."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import Field, model_validator

from pilot.citations import count_of
from pilot.domain import profile
from pilot.models import Paper, PaperType, RankedPaper
from pilot.papertype import paper_type
from pilot.publication import publication
from pilot.reading.lexicon import org_matches
from pilot.text import fold, normalize_title, snowball
from pilot.vocab import PublicationKind, ResultOrder
from workflows.operator import Operator, OperatorInputs, OperatorParams, RunContext, port, register
from workflows.ops.features import WEAK, citation_value, match_strength, papers_of, support_node, tokens
from workflows.ports import PortType


class FilterParams(OperatorParams):
    year_min: int | None = Field(None, ge=1000, le=2100)
    year_max: int | None = Field(None, ge=1000, le=2100)
    relative_to_anchor: Literal["before", "after"] | None = Field(
        None, description="keep papers published no later (before) / no earlier (after) than the anchor"
    )
    newest_years: int | None = Field(
        None,
        ge=1,
        le=100,
        description="keep papers of the newest N years among the input ('the latest work on X'); "
        "the newest year it holds counts as this year",
    )
    exclude_years: list[tuple[int, int]] = Field(
        default_factory=list, description="drop papers from these periods, ends included ('not from the 2000s')"
    )
    keep_unknown_year: bool = Field(False, description="keep papers without a year when a year bound is set")
    venues: list[str] = Field(default_factory=list, description="keep papers at any of these venues (acronym or name)")
    authors: list[str] = Field(
        default_factory=list,
        description="keep papers by any of these people (a surname or a full name; every word must be in the name)",
    )
    exclude_venues: list[str] = Field(default_factory=list, description="drop papers at any of these venues")
    publication_kinds: list[PublicationKind] = Field(
        default_factory=list,
        description="keep papers published as one of these kinds (journal / conference / workshop / preprint), "
        "read from the venue and the ACL Anthology id; papers of unknown kind are dropped",
    )
    orgs: list[str] = Field(
        default_factory=list,
        description="keep papers with an author whose affiliation names one of these organisations ('Stanford')",
    )
    min_citations: int | None = Field(None, ge=0)
    no_count: Literal["keep", "drop"] = Field(
        "keep",
        description="with min_citations: what happens to a paper no citation index counted and whose citing papers in "
        "the source are fewer than the floor (unknown is not zero: kept by default, and the step says how many)",
    )
    has_abstract: bool | None = None
    has_references: bool | None = Field(
        None, description="True: drop papers known to cite nothing in the source (an unknown reference list is kept)"
    )
    include_terms: list[str] = Field(default_factory=list, description="keep papers containing any of these terms")
    exclude_terms: list[str] = Field(default_factory=list, description="drop papers containing any of these terms")
    terms_in: Literal["title", "text"] = Field("text", description="where include/exclude terms are looked for")
    exclude_ids: list[str] = Field(default_factory=list)
    exclude_anchor: bool = Field(True, description="drop the connected anchor paper(s)")
    paper_types: list[PaperType] = Field(
        default_factory=list,
        description="keep only papers of these types (survey, resource = dataset/corpus/benchmark, method)",
    )

    @model_validator(mode="after")
    def _range(self) -> FilterParams:
        if self.year_min is not None and self.year_max is not None and self.year_min > self.year_max:
            raise ValueError(f"year_min {self.year_min} is after year_max {self.year_max}")
        if bad := [list(y) for y in self.exclude_years if y[0] > y[1]]:
            raise ValueError(f"a period in exclude_years starts after it ends: {bad}")
        return self


class _Phrases:
    """Terms or multi-word phrases, tokenised once, matched as runs of consecutive tokens (so 'art' does
    not match 'state of the art' partly). A paper is checked against all of them at once: its word runs
    of each phrase length are looked up in a set, so the cost is the paper's length times the number of
    distinct phrase lengths, not the number of phrases."""

    def __init__(self, phrases: list[str], forms: Callable[[list[str]], list[str]]):
        self.forms = forms
        self.runs = {tuple(t) for t in (forms(tokens(p, keep_stop=True)) for p in phrases) if t}
        self.lengths = sorted({len(r) for r in self.runs})

    def __bool__(self) -> bool:
        return bool(self.runs)

    def any_in(self, tokenized: list[str]) -> bool:
        words = self.forms(tokenized)
        return any(tuple(words[i : i + n]) in self.runs for n in self.lengths for i in range(len(words) - n + 1))


def _as_typed(words: list[str]) -> list[str]:
    return words


def _roots(words: list[str]) -> list[str]:
    # Snowball keeps the agent noun apart ("parser" / "parsing" -> "pars"): leaving out "dependency parsing"
    # leaves out "dependency parsers" too, so a trailing "er" goes as well
    return [w[:-2] if len(w) > 5 and w.endswith("er") else w for w in map(str, snowball().stemWords(words))]


def _name_words(name: str) -> set[str]:
    return set(fold(name).replace(".", " ").replace(",", " ").split())


def author_matcher(names: list[str]) -> Callable[[Paper], bool]:
    """Whether a paper is by one of ``names``: every word of a name is a word of one author's name ("Manning" is
    Christopher D. Manning, not Manningham; "Michael Collins" is not Collins Smith)."""
    wanted = [w for w in (_name_words(n) for n in names) if w]

    def by_them(paper: Paper) -> bool:
        return any(w <= _name_words(a.name) for a in paper.authors for w in wanted)

    return by_them


def mention_matcher(phrases: list[str]) -> Callable[[Paper], bool]:
    """Whether a paper's title or abstract mentions one of ``phrases``, by Snowball roots ("attention" matches
    "attentional", "parsers" matches "parsing")."""
    wanted = _Phrases(phrases, _roots)

    def mentions(paper: Paper) -> bool:
        return bool(wanted) and wanted.any_in(tokens(paper.text, keep_stop=True))

    return mentions


class _Checker:
    def __init__(self, p: FilterParams, anchors: list[Paper], newest: int | None = None):
        self.p = p
        # kept terms match word for word (the survey template keeps titles with "survey", not "Book Reviews");
        # leaving out "neural network" leaves out "neural networks" too: those match by Snowball roots
        self.include, self.exclude = _Phrases(p.include_terms, _as_typed), _Phrases(p.exclude_terms, _roots)
        self.venue_ok = profile().venue_matcher(p.venues) if p.venues else None
        self.venue_out = profile().venue_matcher(p.exclude_venues) if p.exclude_venues else None
        self.by_them = author_matcher(p.authors) if p.authors else None
        self.drop = set(p.exclude_ids) | ({a.id for a in anchors} if p.exclude_anchor else set())
        self.lo, self.hi = p.year_min, p.year_max
        if p.newest_years and newest:
            self.lo = max(x for x in (self.lo, newest - p.newest_years + 1) if x is not None)
        anchor_years = [a.year for a in anchors if a.year]
        if p.relative_to_anchor and anchor_years:
            if p.relative_to_anchor == "before":
                self.hi = min(x for x in (self.hi, max(anchor_years)) if x is not None)
            else:
                self.lo = max(x for x in (self.lo, min(anchor_years)) if x is not None)

    def accepts(self, paper: Paper) -> bool:
        p = self.p
        if paper.id in self.drop:
            return False
        if self.lo is not None or self.hi is not None:
            if paper.year is None:
                if not p.keep_unknown_year:
                    return False
            elif (self.lo is not None and paper.year < self.lo) or (self.hi is not None and paper.year > self.hi):
                return False
        if paper.year is not None and any(first <= paper.year <= last for first, last in p.exclude_years):
            return False
        if self.venue_ok is not None and not self.venue_ok(paper):
            return False
        if self.venue_out is not None and self.venue_out(paper):
            return False
        if self.by_them is not None and not self.by_them(paper):
            return False
        if p.publication_kinds and publication(paper).kind not in p.publication_kinds:
            return False
        if p.orgs and not any(org_matches(o, a.affiliation) for a in paper.authors for o in p.orgs):
            return False
        if p.min_citations is not None:
            meets = count_of(paper).meets(p.min_citations)
            if meets is False or (meets is None and p.no_count == "drop"):
                return False
        if p.has_abstract is not None and bool(paper.abstract) != p.has_abstract:
            return False
        if p.has_references is not None and paper.references is not None and bool(paper.references) != p.has_references:
            return False
        if p.paper_types and paper_type(paper) not in p.paper_types:
            return False
        if self.include or self.exclude:
            words = tokens(paper.title if p.terms_in == "title" else paper.text, keep_stop=True)  # once for both
            if self.include and not self.include.any_in(words):
                return False
            if self.exclude and self.exclude.any_in(words):
                return False
        return True


@dataclass(kw_only=True)
class FilterInputs(OperatorInputs):
    papers: list[RankedPaper] = port(PortType.PAPERS, name="in")
    anchor: list[RankedPaper] | None = port(
        PortType.PAPERS, optional=True, description="for exclude_anchor and relative_to_anchor"
    )


@register
class FilterOp(Operator[FilterParams, FilterInputs]):
    name = "filter"
    family = "filtering"
    description = (
        "Keep papers within a year range / venues / citation floor / term constraints / paper types; drop the anchor "
        "and given ids."
    )
    Params = FilterParams
    Inputs = FilterInputs
    output = PortType.RANKED

    async def run(self, ctx: RunContext, params: FilterParams, inputs: FilterInputs) -> list[RankedPaper]:
        newest = max((it.paper.year for it in inputs.papers if it.paper.year), default=None)
        check = _Checker(params, papers_of(inputs.anchor), newest)
        if params.orgs:  # older records often name no institution: a short list may be the records', not the field's
            named = sum(1 for it in inputs.papers if any(a.affiliation for a in it.paper.authors))
            if named < len(inputs.papers):
                ctx.notes.append(f"{named} of the {len(inputs.papers)} papers name their authors' institutions")
        kept = [it for it in inputs.papers if check.accepts(it.paper)]
        if params.min_citations is not None:
            _say_unknown_counts(ctx, params, inputs.papers, kept)
        return kept


def _say_unknown_counts(
    ctx: RunContext, params: FilterParams, papers: list[RankedPaper], kept: list[RankedPaper]
) -> None:
    """How many papers the citation floor could not judge, and what was done with them."""
    floor = params.min_citations or 0
    unknown = [it for it in papers if count_of(it.paper).meets(floor) is None]
    if not unknown:
        return
    n = len(unknown)
    whose = "paper has" if n == 1 else "papers have"
    if params.no_count == "keep":
        held = sum(1 for it in kept if count_of(it.paper).meets(floor) is None)
        if held:
            ctx.notes.append(
                f"{held} {whose} no citation count in the source and {'was' if held == 1 else 'were'} kept: unknown is "
                f"not fewer than {floor} (say “drop the ones without a count” to leave them out)"
            )
    else:
        ctx.notes.append(f"{n} {whose} no citation count in the source and {'was' if n == 1 else 'were'} left out")


class TopKParams(OperatorParams):
    k: int = Field(50, ge=1, le=1000)
    merge_same_work: bool = Field(
        True,
        description="one entry per work: a later record with the same title and first author is folded into the first",
    )
    drop_weak: bool = Field(
        False,
        description="leave out weak matches (hardly close to the request, no citation link to the search): "
        "a list of one paper type stays on its topic, shorter if the source holds few",
    )
    order: ResultOrder = Field(
        "score", description="the order of the k papers kept: by score, newest or oldest first, or most cited first"
    )


_ORDER_KEYS: dict[str, Callable[[RankedPaper], float]] = {
    "newest": lambda it: -(it.paper.year or 0),
    "oldest": lambda it: it.paper.year or 9999,
    "most_cited": lambda it: -citation_value(it.paper),
}


def _work_key(paper: Paper) -> tuple[str, str] | None:
    """Title + first author's surname: two corpus records of one paper (a workshop and a conference
    version, or one paper indexed twice) share it; different papers almost never do."""
    title = normalize_title(paper.title)
    if not title or not paper.authors:
        return None
    name = paper.authors[0].name.strip()
    surname = name.split(",")[0] if "," in name else (name.split() or [""])[-1]
    return title, normalize_title(surname)


def merge_same_work(items: list[RankedPaper]) -> list[RankedPaper]:
    first: dict[tuple[str, str], int] = {}
    out: list[RankedPaper] = []
    for it in items:
        key = _work_key(it.paper)
        if key is None or key not in first:
            if key is not None:
                first[key] = len(out)
            out.append(it)
            continue
        kept = out[first[key]]
        ev = kept.evidence.model_copy(deep=True)
        ev.nodes = list(dict.fromkeys([*ev.nodes, *it.evidence.nodes]))
        other = ", ".join(str(x) for x in (it.paper.venue, it.paper.year) if x)
        ev.reason = "; ".join(
            x for x in (ev.reason, f"also recorded as {it.paper.id}" + (f" ({other})" if other else "")) if x
        )
        out[first[key]] = kept.model_copy(update={"evidence": ev})
    return out


@dataclass(kw_only=True)
class RankedInputs(OperatorInputs):
    ranked: list[RankedPaper] = port(PortType.RANKED, name="in")


@register
class TopKOp(Operator[TopKParams, RankedInputs]):
    name = "top_k"
    family = "filtering"
    description = "The first k papers of a ranked list (duplicate records of one work folded together)."
    Params = TopKParams
    Inputs = RankedInputs
    output = PortType.RANKED

    async def run(self, ctx: RunContext, params: TopKParams, inputs: RankedInputs) -> list[RankedPaper]:
        items = inputs.ranked
        # without embeddings every closeness reads 0: nothing can be called weak then
        if params.drop_weak and any(it.evidence.scores.get("dense", 0.0) > 0 for it in items):
            items = [it for it in items if match_strength(it) != WEAK]
        kept = (merge_same_work(items) if params.merge_same_work else items)[: params.k]
        # the same k papers, re-ordered: sorting before the cut would swap relevant papers for merely new ones
        return sorted(kept, key=_ORDER_KEYS[params.order]) if params.order != "score" else kept


class AboveParams(OperatorParams):
    threshold: float = 0.0
    feature: str | None = Field(None, description="an evidence score name; default: the paper's overall score")
    inclusive: bool = True


@register
class AboveOp(Operator[AboveParams, RankedInputs]):
    name = "above"
    family = "filtering"
    description = "Keep papers whose score (or a named evidence feature) is at least a threshold."
    Params = AboveParams
    Inputs = RankedInputs
    output = PortType.RANKED

    @classmethod
    def node_refs(cls, params: AboveParams) -> list[tuple[str, str]]:
        node = support_node(params.feature) if params.feature else None
        return [(f"feature {params.feature!r}", node)] if node else []

    async def run(self, ctx: RunContext, params: AboveParams, inputs: RankedInputs) -> list[RankedPaper]:
        def value(it: RankedPaper) -> float | None:
            return it.score if params.feature is None else it.evidence.scores.get(params.feature)

        out = []
        for it in inputs.ranked:
            v = value(it)
            if v is not None and (v >= params.threshold if params.inclusive else v > params.threshold):
                out.append(it)
        return out
