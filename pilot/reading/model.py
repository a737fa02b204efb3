"""The reader's vocabulary: a span of the message, the conversation state it is read in, and the ``Reading``.

A ``Reading`` is what one message means, once: its act, the parts the act needs, how sure the reader is, and
(when it is not sure) the two readings it would offer back as a question. Everything downstream — the session,
the UI, the clarifier, the entity planner, the refiner — takes a ``Reading`` and never looks at the words again.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, Literal

from pydantic import BaseModel, Field

from pilot.vocab import Direction, Facet, PaperType, PublicationKind

Act = Literal["search", "refine", "answer", "entity", "command", "ask"]

SpanKind = Literal[
    "id",  # a DOI, arXiv id, Semantic Scholar id or corpus id
    "title",  # a quoted title
    "paper",  # a name the lexicon knows ("word2vec", "ResNet")
    "name",  # a word written like a paper's name ("TextRank", "BiDAF", "the pointer-generator paper")
    "cited",  # a paper named as papers cite it ("Sutskever et al. 2014", "Collins (1999)")
    "person",
    "org",
    "venue",
    "time",  # a period from the time grammar
    "count",  # how many results ("30 results", "top 20")
    "cites",  # a citation floor ("100+ citations")
    "ref",  # results on the numbered list ("#3", "the second one", "2 and 6")
    "type",  # a kind of paper ("surveys", "datasets")
    "pubkind",  # how it was published ("journal papers", "workshop papers")
    "format",  # an export format ("BibTeX", "RIS")
    "option",  # an option of the open question, named by its number, ordinal or letter
    "it",  # the paper or search on screen ("it", "this paper")
    "term",  # a multi-word term of the field ("mixture of experts"): the subject's words, read whole
    "step",  # a workflow step or setting named as the workflow names it ("search_kw", "`citers`", "top_n")
]


class Span(BaseModel):
    """A typed piece of the message: where it is, what it says, and which rule or data row found it."""

    kind: SpanKind
    start: int
    end: int
    text: str
    value: Any = None
    source: str = ""  # the lexicon row, grammar rule or pattern that found it

    @property
    def length(self) -> int:
        return self.end - self.start


class QuestionState(BaseModel):
    """The open clarifying question, as the reader needs it."""

    slot: str
    text: str = ""
    options: list[str] = Field(default_factory=list)
    option_sets: list[dict[str, Any]] = Field(default_factory=list, description="what each option sets")


class State(BaseModel):
    """What the reader needs to know about the conversation."""

    phase: Literal["fresh", "question", "results", "entity_answer"] = "fresh"
    question: QuestionState | None = None
    listed: int = 0  # numbered papers on screen
    anchor: str | None = None  # the paper being searched around (its title), when one is
    topic: str | None = None  # the topic being searched, when no paper is
    direction: Direction | None = None
    asked: dict[str, Any] | None = None  # the entity question answered last (its slots)
    known_venues: list[str] = Field(default_factory=list)  # venue names the source holds, beyond the lexicon
    steps: list[str] = Field(default_factory=list)  # the workflow's step names (for edits named in words)
    versions: int = 0  # workflow versions so far

    @property
    def has_list(self) -> bool:
        """A numbered list is on screen (a question may be offered with it)."""
        return self.listed > 0 and self.phase != "fresh"

    @property
    def has_search(self) -> bool:
        return bool(self.anchor or self.topic)


class Constraints(BaseModel):
    """What the words say about which papers, wherever they are said (a new search, a refinement, an answer)."""

    year_min: int | None = None
    year_max: int | None = None
    exclude_years: list[tuple[int, int]] = Field(default_factory=list)
    venues: list[str] = Field(default_factory=list)
    exclude_venues: list[str] = Field(default_factory=list)
    authors: list[str] = Field(default_factory=list)
    exclude_authors: list[str] = Field(default_factory=list)
    orgs: list[str] = Field(default_factory=list)
    paper_types: list[PaperType] = Field(default_factory=list, description="only these kinds (the point of it)")
    prefer_types: list[PaperType] = Field(default_factory=list, description="ranked higher, not filtered")
    exclude_types: list[PaperType] = Field(default_factory=list)
    publication_kinds: list[PublicationKind] = Field(default_factory=list)
    exclude_kinds: list[PublicationKind] = Field(default_factory=list)
    min_citations: int | None = None
    k: int | None = None
    sort: Literal["newest", "oldest", "most_cited", "relevance"] | None = None
    recency: Literal["seminal", "recent"] | None = None
    facet: Facet | None = None
    exclude_terms: list[str] = Field(default_factory=list)
    era_note: str = ""  # "Before deep learning": the years taken, said back to the user

    def is_empty(self) -> bool:
        return self == Constraints()

    def clash(self) -> str:
        """What the constraints both ask for and leave out ("ACL only, but no ACL papers"), in words; "" if none."""
        for kept, left in (
            (self.venues, self.exclude_venues),
            (self.authors, self.exclude_authors),
            (self.paper_types, self.exclude_types),
            (self.publication_kinds, self.exclude_kinds),
        ):
            left_out = {str(x).lower() for x in left}
            if both := list(dict.fromkeys(str(x) for x in kept if str(x).lower() in left_out)):
                return f"{', '.join(both)} both asked for and left out"
        if self.year_min is not None and self.year_max is not None and self.year_min > self.year_max:
            return f"from {self.year_min} and up to {self.year_max}"
        if self.recency == "recent" and self.year_max is not None and self.year_max < _dt.date.today().year - 15:
            return f"recent work, and nothing after {self.year_max}"  # "only recent stuff, but only pre-2000 classics"
        return ""

    def set_fields(self) -> dict[str, Any]:
        """The fields the words set (defaults left out)."""
        return self.model_dump(exclude_defaults=True)


class Anchor(BaseModel):
    """The paper a message names, as it names it."""

    text: str  # the words that name it, as typed ("ELMo", "Attention Is All You Need", "Blei's LDA")
    kind: Literal["id", "title", "paper", "name", "cited", "described", "current", "result"]
    value: str | None = None  # the id, the quoted title, or the lexicon's canonical title
    titles: list[str] = Field(default_factory=list)  # the lexicon's titles for a known name
    authors: list[str] = Field(default_factory=list)  # cited / described: the surnames given
    year: int | None = None  # cited: the year given; "the 2014 one"
    ref: int | None = None  # result: its number on the list


class Refinement(BaseModel):
    """What a message changes about the list on screen."""

    drop: list[int] = Field(default_factory=list)
    keep: list[int] = Field(default_factory=list)
    more_like: list[int] = Field(default_factory=list)
    less_like: list[int] = Field(default_factory=list)
    focus: str | None = None  # a subject inside the results ("the neural ones")
    size: Literal["fewer", "more", "narrower", "broader"] | None = None
    extra: int | None = None  # "10 more"
    any_year: bool = False
    any_venue: bool = False
    any_type: bool = False  # "all paper types again": the type filter lifted
    this_one: bool = False  # "not this one": the paper selected on screen
    weights: dict[str, str] = Field(default_factory=dict)  # a score feature -> more | less | off | older


EntityKind = Literal[
    "papers", "most_cited", "count", "coauthors", "topics", "venues", "institutions", "researchers", "authors",
    "profile", "authors_papers",
]  # fmt: skip


class EntityAsk(BaseModel):
    """An entity question's slots (the planner's ``KGQuery`` is built from these)."""

    ask: EntityKind
    person: str | None = None
    coauthor: str | None = None
    venue: str | None = None
    org: str | None = None
    topic: str | None = None
    paper: str | None = None
    year_min: int | None = None
    year_max: int | None = None


Command = Literal[
    "export", "show_workflow", "undo", "start_over", "save", "explain", "search_now", "help", "cite", "cite_named",
    "list_fact", "kinds", "count", "earlier", "version", "clear_filters", "compare", "on_list", "which_cite",
    "step_edit", "library", "changes", "why_asked", "no_list", "cannot",
]  # fmt: skip


class Alternative(BaseModel):
    """One of the readings offered back when the reader is not sure."""

    label: str  # what the option says ("Search for papers on “speech”", "Narrow the list to “speech”")
    reading: Reading


class Reading(BaseModel):
    """One message, read."""

    text: str
    act: Act
    sub: str = ""  # the exemplar label that won ("search.successor", "refine.drop", "command.export")
    confidence: float = 1.0
    why: str = ""  # how the reading was reached (traces, evaluation reports)
    spans: list[Span] = Field(default_factory=list)
    # search
    anchor: Anchor | None = None
    topic: str | None = None
    query: str | None = None  # the request as a search query: its words without instruction words
    direction: Direction | None = None
    also_cites: list[Anchor] = Field(default_factory=list)
    correction: bool = False  # corrects what the search being set up or shown is about ("I meant X")
    focus: str | None = None  # words that narrow a named paper's search ("BERT but for biomedical text")
    period_of: tuple[str, str] | None = None  # "QA after BERT": (after | since | before, the paper's name)
    # every act that narrows papers
    constraints: Constraints = Field(default_factory=Constraints)
    # refine
    refine: Refinement | None = None
    # answer
    option: int | None = None  # 0-based index of the option chosen; None = no option (values or no preference)
    options: list[int] = Field(default_factory=list)  # several options together ("1 and 2")
    no_preference: bool = False
    # entity
    entity: EntityAsk | None = None
    # command
    command: Command | None = None
    refs: list[int] = Field(default_factory=list)
    format: str | None = None
    about: str = ""  # earlier: the words naming the earlier search; list_fact / kinds / count: what is asked
    papers: list[Anchor] = Field(default_factory=list)  # compare / on_list / which_cite / cite_named
    step: dict[str, Any] | None = None  # step_edit: {"step": name, "action": ..., "param": ..., "value": ...}
    # ask
    alternatives: list[Alternative] = Field(default_factory=list)
    hint: str = ""  # what to tell the user instead of general help
    respelt: dict[str, str] = Field(default_factory=dict, description="misspelt words read as meant")
    translated: str | None = None  # a message in Chinese, read as these English words
