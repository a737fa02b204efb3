"""The one vocabulary of pilot: papers, entities, evidence, ranked results, intents.

Every layer (sources, operators, clarifier, UI, export, evaluation) speaks these models. Ids are
source-qualified strings (``acl:P02-1040``, ``s2:<paperId>``, ``aminer:<id>``, ``author:<slug>``…) so
that results from several sources can sit in one list without colliding.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from pilot.vocab import Direction, Facet, PaperType, PublicationKind, ResultOrder

S2_PAPER_URL = "https://www.semanticscholar.org/paper/{id}"
S2_AUTHOR_URL = "https://www.semanticscholar.org/author/{id}"
AMINER_PAPER_URL = "https://www.aminer.cn/pub/{id}"
AMINER_AUTHOR_URL = "https://www.aminer.cn/profile/{id}"
AMINER_VENUE_URL = "https://www.aminer.cn/open/journal/detail/{id}"
AMINER_ORG_URL = "https://www.aminer.cn/institution/{id}"
# Local-corpus entities have no web page; a stable URI names them so answers can still cite them.
LOCAL_URL = "corpus://{kind}/{id}"


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class Author(_Model):
    """A person. On a paper, only ``name`` (and maybe ``affiliation``/``id``) is known."""

    kind: Literal["author"] = "author"
    id: str | None = None
    name: str
    affiliation: str | None = None
    url: str | None = None
    source: str | None = None
    paper_count: int | None = None
    citation_count: int | None = None
    h_index: int | None = None
    orgs: list[str] = Field(default_factory=list)
    venues: list[str] = Field(default_factory=list, description="most frequent venues, most frequent first")
    topics: list[str] = Field(default_factory=list)
    coauthors: list[str] = Field(default_factory=list, description="most frequent coauthor names")
    aliases: list[str] = Field(
        default_factory=list, description="ids of the same person's records under other spellings of the name"
    )
    alias_names: list[str] = Field(default_factory=list, description="those other spellings")

    @property
    def canonical_url(self) -> str | None:
        return self.url


class Venue(_Model):
    kind: Literal["venue"] = "venue"
    id: str
    name: str
    url: str | None = None
    source: str | None = None
    paper_count: int | None = None
    year_min: int | None = None
    year_max: int | None = None
    top_authors: list[str] = Field(default_factory=list)
    topics: list[str] = Field(default_factory=list)

    @property
    def canonical_url(self) -> str | None:
        return self.url


class Org(_Model):
    kind: Literal["org"] = "org"
    id: str
    name: str
    url: str | None = None
    source: str | None = None
    paper_count: int | None = None
    author_count: int | None = None
    top_authors: list[str] = Field(default_factory=list)
    topics: list[str] = Field(default_factory=list)

    @property
    def canonical_url(self) -> str | None:
        return self.url


Entity = Annotated[Author | Venue | Org, Field(discriminator="kind")]


class Paper(_Model):
    kind: Literal["paper"] = "paper"
    id: str
    title: str
    abstract: str | None = None
    year: int | None = None
    venue: str | None = None
    authors: list[Author] = Field(default_factory=list)
    # None = unknown (the source did not say); [] = known to have none (or hidden for a benchmark case).
    references: list[str] | None = None
    citation_count: int | None = None
    in_corpus_citations: int | None = None
    external_ids: dict[str, str] = Field(default_factory=dict)
    fields_of_study: list[str] = Field(default_factory=list)
    url: str | None = None
    source: str | None = None

    @property
    def canonical_url(self) -> str:
        if self.url:
            return self.url
        if self.source == "s2":
            return S2_PAPER_URL.format(id=self.id.split(":", 1)[-1])
        if self.source == "aminer":
            return AMINER_PAPER_URL.format(id=self.id.split(":", 1)[-1])
        return LOCAL_URL.format(kind="paper", id=self.id)

    @property
    def doi(self) -> str | None:
        return self.external_ids.get("DOI")

    @property
    def text(self) -> str:
        """Title and abstract, the text that search and embeddings see."""
        return f"{self.title}. {self.abstract}" if self.abstract else self.title


class SearchFilters(_Model):
    year_min: int | None = None
    year_max: int | None = None
    venue: str | None = Field(None, description="case-insensitive substring of the venue name")
    min_citations: int | None = None
    fields_of_study: list[str] = Field(default_factory=list)
    deep_match: str | None = Field(
        None,
        description="what a match is, for sources whose results past the first page come unranked (Semantic "
        "Scholar's bulk search): a boolean expression in its syntax (pilot.sources.boolean); ranking sources "
        "ignore it",
    )

    def accepts(self, paper: Paper) -> bool:
        if self.year_min is not None and (paper.year is None or paper.year < self.year_min):
            return False
        if self.year_max is not None and (paper.year is None or paper.year > self.year_max):
            return False
        if self.venue and (not paper.venue or self.venue.lower() not in paper.venue.lower()):
            return False
        # below the floor only by a count; a paper nobody counted is not uncited (pilot.citations)
        counted = paper.citation_count
        floor = self.min_citations
        if floor is not None and counted is not None and max(counted, paper.in_corpus_citations or 0) < floor:
            return False
        wanted_fields = {f.lower() for f in self.fields_of_study}
        return not wanted_fields or bool(wanted_fields & {f.lower() for f in paper.fields_of_study})


class SearchHit(_Model):
    paper: Paper
    score: float = 0.0


class Evidence(_Model):
    """Why a paper is in the results: where it came from, how it scored, and a supporting snippet."""

    nodes: list[str] = Field(default_factory=list, description="workflow node ids that brought the paper in")
    scores: dict[str, float] = Field(default_factory=dict, description="feature name -> value")
    snippet: str | None = None
    matched_terms: list[str] = Field(default_factory=list)
    reason: str | None = None


class RankedPaper(_Model):
    """A paper with its score and evidence. The element type of every paper list flowing in a workflow."""

    paper: Paper
    score: float = 0.0
    evidence: Evidence = Field(default_factory=Evidence)


class Answer(_Model):
    """A synthesised answer: every ``[n]`` in ``answer`` is a key of ``reference`` (an entity URL)."""

    answer: str
    reference: dict[str, str] = Field(default_factory=dict)


class Intent(_Model):
    """What the user wants, as pinned down so far by their request and their answers."""

    kind: Literal["papers", "entity"] = "papers"
    request: str = ""
    anchor_id: str | None = None
    direction: Direction | None = None
    # a search with no anchor and a topic is a topic search: the topic in the user's words, without the
    # instruction words ("find", "recent work on") and the type words ("surveys on", "datasets for")
    topic: str | None = None
    # the request as a search query: the user's words minus the instruction words ("can you point me to studies
    # that …"), every clause kept; a topic search searches it whole beside the topic (None = the topic alone)
    query: str | None = None
    paper_types: list[PaperType] = Field(default_factory=list, description="only papers of these types")
    prefer_types: list[PaperType] = Field(
        default_factory=list,
        description="papers of these types rank higher, none is dropped (a type word inside a question; "
        "paper_types is the filter, for a request whose point is the type)",
    )
    facet: Facet | None = None
    year_min: int | None = None
    year_max: int | None = None
    exclude_years: list[tuple[int, int]] = Field(
        default_factory=list, description="never papers from these periods, ends included ('not the 2000s')"
    )
    venues: list[str] = Field(default_factory=list)
    exclude_venues: list[str] = Field(default_factory=list, description="never papers at these venues")
    publication_kinds: list[PublicationKind] = Field(
        default_factory=list, description="only papers published so ('only journal papers'); [] = any"
    )
    topic_terms: list[str] = Field(default_factory=list)
    exclude_terms: list[str] = Field(default_factory=list)
    resource_types: list[str] = Field(default_factory=list)
    min_citations: int | None = Field(None, ge=0, description="only papers cited at least this often")
    recency: Literal["seminal", "recent", "any"] = "any"
    k: int = 50
    order: ResultOrder = Field("score", description="how the results are listed: 'newest first' keeps the same papers")
    also_cites: list[str] = Field(
        default_factory=list, description="later work must cite these papers too ('papers citing both X and Y')"
    )
    liked_ids: list[str] = Field(default_factory=list)
    disliked_ids: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list, description="free-text answers, verbatim")

    def filters(self) -> SearchFilters:
        return SearchFilters(
            year_min=self.year_min, year_max=self.year_max, venue=self.venues[0] if len(self.venues) == 1 else None
        )


class SourceUsage(_Model):
    """What one turn spent at remote sources: requests sent, answers reused, waits, and what it left out."""

    budget: int | None = Field(None, description="requests this turn may send (PILOT_REQUEST_BUDGET); None = no cap")
    requests: int = Field(0, description="HTTP requests sent, retries included")
    cache_hits: int = Field(0, description="answers taken from the response cache instead of a request")
    shared: int = Field(0, description="answers shared with an identical request already in flight")
    rate_wait_s: float = Field(0.0, description="seconds spent waiting for the rate limiter")
    rate_limited: int = Field(0, description="429 answers received (then waited out and retried, or given up)")
    retries: int = 0
    invalid: int = Field(0, description="answers of the wrong shape: an error for that request, never cached")
    skipped: list[str] = Field(default_factory=list, description="what was left out, in words")
    time_budget_s: float | None = Field(None, description="set when the turn's time budget ran out (its seconds)")
    seconds: float = 0.0
    first_results_s: float | None = Field(None, description="seconds until the first partial results were shown")

    @property
    def exhausted(self) -> bool:
        return self.budget is not None and self.requests >= self.budget


def as_json(obj: Any) -> Any:
    """JSON-ready form of a model or a list of models (for traces, run logs, the UI inspector)."""
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json")
    if isinstance(obj, (list, tuple)):
        return [as_json(o) for o in obj]
    if isinstance(obj, dict):
        return {k: as_json(v) for k, v in obj.items()}
    return obj
