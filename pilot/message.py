"""A message, read once (``pilot.reading``), as the session acts on it.

    msg = read("What came before GloVe?", Context(phase="results", has_results=True, ...))
    msg.kind       # "new_search"
    msg.request    # the request's parts: anchor "GloVe" (a name), direction "predecessor"

``pilot.reading.read`` is the only code that looks at the user's words; this module turns its ``Reading`` into the
parts each part of pilot takes — a ``ParsedRequest`` for a search, a ``Feedback`` for the refiner, a ``KGQuery``
for the entity planner, a ``StepEdit`` for the workflow — without reading the text again.

Kinds: ``new_search`` (``target``: ``paper``, ``topic``, ``current`` — the paper or topic on screen in another
direction — or ``result``), ``refine``, ``answer``, ``entity``, ``command``, ``ambiguous`` (two readings come back
as the options of a question) and ``unclear`` (nothing to act on; ``hint`` says what to do).
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from clarifier.policy import answer_updates, merged_updates
from clarifier.question import Question
from pilot.intent import ParsedRequest, apply_updates
from pilot.kg.classify import KGQuery, query_of
from pilot.models import Intent
from pilot.query import search_query
from pilot.reading import read as read_words
from pilot.reading.model import Anchor, Constraints, QuestionState, Reading, State
from pilot.stepedit import StepEdit
from pilot.text import ENGLISH_STOPWORDS
from pilot.vocab import PAPER_TYPES
from workflows.refine import Feedback

log = logging.getLogger(__name__)

MessageKind = Literal["new_search", "refine", "answer", "entity", "command", "ambiguous", "unclear"]
Target = Literal["paper", "topic", "current", "result"]
Command = Literal[
    "search_now", "reset", "undo", "help", "explain", "keep", "export", "earlier", "kinds", "count", "list_fact",
    "how", "cite", "step_edit", "compare", "version", "clear_filters", "cite_named", "on_list", "which_cite",
    "library", "changes",
]  # fmt: skip


class Context(BaseModel):
    """What the reader needs to know about the conversation (the session fills it in)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    phase: str = "start"
    question: Question | None = None
    has_results: bool = False
    has_search: bool = False
    known_venues: list[str] = Field(default_factory=list)
    listed: int = 0
    asked: KGQuery | None = None
    topic: str | None = None
    direction: str | None = None
    anchor: str | None = None  # the title of the paper being searched around
    steps: list[str] = Field(default_factory=list)  # the workflow's step ids and operators, for edits in words


class Message(BaseModel):
    """One message, read: its kind and the parts the session acts on."""

    kind: MessageKind
    text: str
    target: Target | None = None
    request: ParsedRequest | None = None
    feedback: Feedback | None = None
    option: int | None = None
    updates: dict[str, Any] = Field(default_factory=dict)
    entity: KGQuery | None = None
    command: Command | None = None
    refs: list[int] = Field(default_factory=list)
    about: str = ""
    why: str = ""
    correction: bool = False
    hint: str = ""
    also: list[ParsedRequest] = Field(default_factory=list)
    step_edit: StepEdit | None = None
    constraints: dict[str, Any] = Field(default_factory=dict, description="what the words say about which papers")
    alternatives: list[Message] = Field(default_factory=list, description="ambiguous: the readings offered back")
    labels: list[str] = Field(default_factory=list, description="ambiguous: what each alternative's option says")
    confidence: float = 1.0
    era_note: str = ""
    clipped: str = Field("", description="what was cut from a long paste, said with the reply")


WorkspaceAction = Literal["show", "count", "clear", "clear_confirmed", "remove", "changes"]


class WorkspaceRequest(BaseModel):
    """A message about the researcher's library or about what the last change did to the list: the UI owns both
    (the library is kept in their browser), so it answers these, not the search session."""

    action: WorkspaceAction
    refs: list[int] = Field(default_factory=list)


def workspace_request(msg: Message) -> WorkspaceRequest | None:
    """The library or list-change request a message makes, or None."""
    if msg.kind != "command" or msg.command not in ("library", "changes"):
        return None
    if msg.command == "changes":
        return WorkspaceRequest(action="changes")
    action = msg.about if msg.about in ("show", "count", "clear", "clear_confirmed", "remove") else "show"
    return WorkspaceRequest(action=action, refs=list(msg.refs))


# --- the state, as the reader takes it --------------------------------------------------------------------------


def state_of(ctx: Context) -> State:
    phase: Literal["fresh", "question", "results", "entity_answer"] = "fresh"
    if ctx.question is not None:
        phase = "question"
    elif ctx.phase == "answer" and (ctx.listed or ctx.asked is not None):
        phase = "entity_answer"
    elif ctx.has_results:
        phase = "results"
    q = ctx.question
    question = None
    if q is not None:
        question = QuestionState(
            slot=q.slot,
            text=q.text,
            options=[o.label for o in q.options],
            option_sets=[dict(o.sets) for o in q.options],
        )
    return State(
        phase=phase,
        question=question,
        listed=ctx.listed if (ctx.has_results or ctx.phase == "answer") else 0,
        anchor=ctx.anchor if ctx.has_search else None,
        topic=ctx.topic if ctx.has_search else None,
        direction=ctx.direction,
        asked=ctx.asked.model_dump(exclude_none=True) if ctx.asked is not None else None,
        known_venues=ctx.known_venues,
        steps=ctx.steps,
    )


class _Choice(BaseModel):
    choice: int = Field(ge=0, description="the number of the reading that fits, from 0")


async def settle_with_llm(llm: Any, msg: Message, history: list[dict[str, str]]) -> Message:
    """Only in the reader's unsure band: let a model pick one of the readings offered; its reply is parsed into a
    pydantic schema and checked, and any failure keeps the question."""
    if llm is None or msg.kind != "ambiguous" or not msg.alternatives:
        return msg
    from pilot.llm import LLMError

    options = "\n".join(f"{i}: {label}" for i, label in enumerate(msg.labels))
    said = "\n".join(f"{h['role']}: {h['content'][:300]}" for h in history)
    system = (
        "A researcher chats with a literature-search assistant. Their last message can be read in several ways; "
        'pick the reading that fits. Reply with JSON {"choice": <number>}.'
    )
    try:
        verdict = await llm.json(system, f"Conversation:\n{said}\nMessage: {msg.text}\nReadings:\n{options}", _Choice)
    except LLMError as exc:
        log.info("LLM reading unavailable: %s", exc)
        return msg
    if verdict.choice >= len(msg.alternatives):
        return msg
    chosen = msg.alternatives[verdict.choice]
    return chosen.model_copy(update={"why": f"{chosen.why} (the model chose it of {len(msg.alternatives)})"})


def read(text: str, ctx: Context) -> Message:
    """The message, read once in the state of the conversation."""
    reading = read_words(text, state_of(ctx))
    msg = message_of(reading, ctx)
    if reading.translated is not None:  # the chat keeps what was typed; the search reads it in English
        msg.text = " ".join(text.split())
    return msg


# --- a Reading, as the session's parts ---------------------------------------------------------------------------

_ID_KIND = {"arxiv": "arxiv", "doi": "doi", "s2": "s2"}


def _anchor_kind(a: Anchor) -> tuple[str, str]:
    """(the words or id the resolver looks up, how the paper was named)."""
    if a.kind == "id":
        value = a.value or a.text
        prefix, _, rest = value.partition(":")
        if prefix == "arxiv":
            return rest, "arxiv"
        if value.startswith("10."):
            return value, "doi"
        if len(value) == 40 and ":" not in value:
            return value, "s2"
        return value, "corpus_id"
    if a.kind == "title":
        return a.value or a.text, "title"
    if a.kind == "cited":
        return a.text, "cited"
    if a.kind in ("paper", "name"):
        return a.text, "name"
    return a.text, a.kind


_ORDER = {"newest": "newest", "oldest": "oldest", "most_cited": "most_cited", "relevance": "score"}
_KINDS = ("conference", "workshop", "journal", "preprint", "unknown")


def _terms(words: str) -> list[str]:
    """The words a focus ranks by: its content words ("a method for word alignment" -> method, word, alignment)."""
    return [w for w in words.split() if w.lower() not in ENGLISH_STOPWORDS] or words.split()


def updates_of(c: Constraints) -> dict[str, Any]:
    """The intent fields the constraints set."""
    out: dict[str, Any] = {}
    for key in ("year_min", "year_max", "min_citations", "k", "facet", "recency"):
        if (v := getattr(c, key)) is not None:
            out[key] = v
    for key in ("venues", "exclude_venues", "exclude_terms", "paper_types", "prefer_types", "publication_kinds"):
        if v := getattr(c, key):
            out[key] = list(dict.fromkeys(v))  # "a corpus … this corpus": one type, said twice
    if c.exclude_years:
        out["exclude_years"] = list(c.exclude_years)
    if c.exclude_types and not c.paper_types:
        out["paper_types"] = [t for t in PAPER_TYPES if t not in c.exclude_types]
    if c.exclude_kinds and not c.publication_kinds:
        out["publication_kinds"] = [k for k in _KINDS if k not in c.exclude_kinds]
    if c.sort:
        out["order"] = _ORDER[c.sort]
    if c.authors:
        out["authors"] = list(c.authors)
    if c.orgs:
        out["orgs"] = list(c.orgs)
    return out


def request_of(r: Reading, text: str, anchor: Anchor | None = None) -> ParsedRequest:
    """The search request a reading (or one of its papers) makes."""
    anchor = anchor if anchor is not None else r.anchor
    updates = updates_of(r.constraints)
    updates.pop("authors", None)
    updates.pop("orgs", None)
    if r.direction:
        updates["direction"] = r.direction
    if r.focus:
        updates["topic_terms"] = _terms(r.focus)  # "papers like GloVe but for sentences": ranked first
    if anchor is None:
        query, kind = (r.topic or "", "topic") if r.topic else ("", "none")
        if r.topic:
            updates["topic"] = r.topic
        if r.topic:  # the request searched whole beside its subject, without its asking words (issue 33)
            updates["query"] = search_query(text)
    elif anchor.kind in ("current", "result"):
        query, kind = "", "current" if anchor.kind == "current" else "none"
    else:
        query, kind = _anchor_kind(anchor)
    intent = apply_updates(Intent(request=text), updates)
    return ParsedRequest(
        text=text,
        anchor_query=query,
        anchor_kind=kind,
        intent=intent,
        constraints={k: v for k, v in updates.items() if k not in ("direction", "topic")},
        request_words=True,
        authors=list(anchor.authors) if anchor is not None else [],
        year=anchor.year if anchor is not None else None,
        period_of=r.period_of,
        respelt=dict(r.respelt),
    )


def feedback_of(r: Reading, text: str, listed: int) -> Feedback:
    """What a refinement changes, as the refiner takes it."""
    ref = r.refine
    updates = updates_of(r.constraints)
    updates.pop("order", None)
    if ref is not None and ref.focus:
        updates["topic_terms"] = _terms(ref.focus)
    refs: list[int] = []
    drop: list[int] = []
    negative = positive = False
    if ref is not None:
        # a mixed message ("more like #4, less like #2", "#3 is great but drop #5") likes some and drops others
        if ref.more_like:
            refs, positive = list(ref.more_like), True
            drop = list(dict.fromkeys([*ref.drop, *ref.less_like]))
        elif ref.drop:
            refs, negative = list(ref.drop), True
        elif ref.keep:
            refs, negative = [n for n in range(1, listed + 1) if n not in ref.keep], True
            # "keep the first three": those three are the list; the re-run must not refill it with new papers
            updates.setdefault("k", len(set(ref.keep)))
        elif ref.less_like:
            refs, negative = list(ref.less_like), True
        elif ref.this_one:
            negative = True  # "not this one": the paper selected on screen goes
    return Feedback(
        text=text,
        refs=refs,
        drop=drop,
        negative=negative,
        positive=positive,
        updates=updates,
        size=ref.size if ref is not None else None,
        extra=ref.extra if ref is not None else None,
        any_year=bool(ref and ref.any_year),
        any_venue=bool(ref and ref.any_venue),
        any_type=bool(ref and ref.any_type),
        this_one=bool(ref and ref.this_one),
        kept=sorted(set(ref.keep)) if ref is not None and ref.keep and not ref.more_like and not ref.drop else [],
        order=_ORDER.get(r.constraints.sort or "") if r.constraints.sort else None,
        weights=dict(ref.weights) if ref is not None else {},
    )


_COMMAND = {"start_over": "reset", "show_workflow": "how", "save": "keep"}
_HINTS = {
    "ask.range": "There is no such result: {why}. Name one of the numbers on the list.",
    "ask.nothing_on_screen": "There is nothing on screen yet for that to point at. Name a paper (its title or a "
    "short name like “TextRank”) or a topic to search first.",
    "ask.name": "{why} Say e.g. “papers by <first name> <surname>”, “papers published in <venue>” or “papers on "
    "<topic>”.",
    "ask.which_other": "Which one do you mean? Name it by its number on the list or by its title.",
    "ask.contradiction": "Those years exclude each other ({why}). Which period do you want?",
    "ask.nothing_to_narrow": "That narrows a search, but none is being made yet: name a paper or a topic first "
    "(e.g. “papers on dependency parsing, only after 2010”).",
    "ask.no_memory": "Each conversation here starts fresh, so I cannot see an earlier one (your recent searches are "
    "listed beside the chat: click one to reopen it). What should I search for now?",
    "ask.two_directions": "One search goes one way: what the paper builds on (its predecessors) or what builds on it "
    "(its successors). Which first? The other is one click away afterwards.",
    "ask.no_subject": "What should I search for? Name a paper (its title, or a short name like “TextRank”), a "
    "topic, a person or a venue — e.g. “recent papers on dependency parsing”.",
    "ask.smalltalk": "I can only help with research papers: name a paper, a topic, a person or a venue.",
    "ask.answer": "Please pick one option of the question (or type your own answer).",
    "ask.which_paper": "I cannot tell which paper that is ({why}). Give its title, a short name like “TextRank”, "
    "its authors or its year — or the topic it is on.",
    "ask.what_of_refs": "What should I do with it: say why it is on the list, keep it in your library, or find more "
    "papers like it? (Or say “drop it”.)",
    "ask.which_result": "Which result should I leave out? Say its number, e.g. “drop #3” (or “drop 3 and 5”).",
    "ask.no_list": "There is no numbered list on screen yet: name a paper (its title or a short name like "
    "“TextRank”) or a topic to search first.",
}
_DISMISSAL_HINT = (
    "Sorry these miss. Tell me what is wrong and I will change the search (this list stays, to go back to):\n"
    "- off the topic: say what they should be about (“focus on …”), or “actually I meant …” for another paper or "
    "topic;\n"
    "- the wrong years: “only after 2015”, “from the 90s”;\n"
    "- the wrong kind of paper: “only surveys”, “no datasets”;\n"
    "- single papers: “not #3”, “more like #2”;\n"
    "- or “start over”."
)


def _hint(r: Reading, ctx: Context) -> str:
    if r.hint:
        return r.hint
    if r.sub in _HINTS:
        return _HINTS[r.sub].format(why=r.why)
    if r.sub == "ask.unclear" and ctx.has_results:
        return _DISMISSAL_HINT
    return ""


def message_of(r: Reading, ctx: Context) -> Message:
    """The reading ``r`` as the session's message."""
    text = r.text
    base: dict[str, Any] = {"text": text, "why": r.why, "confidence": r.confidence}
    base["constraints"] = updates_of(r.constraints)
    if r.act == "search":
        return _search_message(r, ctx, base)
    if r.act == "refine":
        return Message(
            kind="refine", feedback=feedback_of(r, text, ctx.listed), updates=_refine_updates(r, ctx), **base
        )
    if r.act == "answer":
        msg = _answer_message(r, ctx, base)
        if ctx.has_results and msg.request is None and ctx.question is not None:
            # with results on screen, words that answer the question offered with them change those results
            updates = answer_updates(ctx.question, msg.option, msg.updates)
            if not updates:  # "no preference" changes nothing: an answer
                return msg
            feedback = Feedback(text=r.text, updates=updates)
            return msg.model_copy(update={"kind": "refine", "feedback": feedback, "updates": updates})
        return msg
    if r.act == "entity":
        return Message(kind="entity", entity=query_of(r), **base)
    if r.act == "command":
        return _command_message(r, ctx, base)
    # ask
    if r.alternatives:
        alternatives = [message_of(a.reading, ctx) for a in r.alternatives]
        return Message(
            kind="ambiguous", alternatives=alternatives, labels=[a.label for a in r.alternatives],
            request=next((m.request for m in alternatives if m.request is not None), None),
            feedback=next((m.feedback for m in alternatives if m.feedback is not None), None),
            hint=_hint(r, ctx) if r.sub in _HINTS or r.hint else "", **base,
        )  # fmt: skip
    return Message(kind="unclear", hint=_hint(r, ctx), **base)


# the intent fields each question slot asks for: words that set them answer the question offered with the results
SLOT_FIELDS: dict[str, tuple[str, ...]] = {
    "time": ("year_min", "year_max", "exclude_years"), "venue": ("venues",), "topic": ("topic_terms",),
    "facet": ("facet",), "recency": ("recency",), "resource": ("resource_types",), "direction": ("direction",),
    "k": ("k",),
}  # fmt: skip


def _refine_updates(r: Reading, ctx: Context) -> dict[str, Any]:
    """What a refinement sets as the search's own choices: all of it before the results (the search being set up
    takes it) and after an answer (it narrows the question); with results on screen, only what answers the question
    offered with them."""
    updates = updates_of(r.constraints)
    if ctx.phase == "answer" or (ctx.question is not None and not ctx.has_results):
        return updates
    if ctx.question is not None:
        wanted = SLOT_FIELDS.get(ctx.question.slot, ())
        return {k: v for k, v in updates.items() if k in wanted}
    return {}


def _search_message(r: Reading, ctx: Context, base: dict[str, Any]) -> Message:
    text = r.text
    request = request_of(r, text)
    if r.anchor is not None and r.anchor.kind == "current" and r.anchor.year is not None:
        # "I mean the 2014 one": the paper of the same name from that year, the search's choices kept
        return Message(kind="new_search", target="paper", request=request, correction=True, **base)
    also = [request_of(r, text, anchor=a) for a in r.also_cites]
    if r.anchor is not None and r.anchor.kind == "current":
        return Message(kind="new_search", target="current", request=request, also=also, **base)
    if r.anchor is None and r.sub == "search.current" and ctx.topic and r.topic == ctx.topic:
        # "what about surveys?" after a topic's results: the same topic, its period and venues kept
        return Message(kind="new_search", target="current", request=request, **base)
    if r.anchor is not None and r.anchor.kind == "result" and r.anchor.ref is not None:
        feedback = Feedback(text=text, refs=[r.anchor.ref])
        return Message(kind="new_search", target="result", request=request, feedback=feedback, **base)
    target: Target = "paper" if r.anchor is not None else "topic"
    correction = r.correction or (r.sub == "search.same_for" and ctx.has_search)
    return Message(
        kind="new_search", target=target, request=request, also=also, correction=correction,
        era_note=r.constraints.era_note, about=r.about, **base,
    )  # fmt: skip


def _answer_message(r: Reading, ctx: Context, base: dict[str, Any]) -> Message:
    q = ctx.question
    if r.options and q is not None:
        return Message(kind="answer", updates=merged_updates(q, r.options), **base)
    updates = updates_of(r.constraints)
    if r.topic:
        updates["topic_terms"] = _terms(r.topic)
    if r.direction:
        updates["direction"] = r.direction
    if r.anchor is not None and q is not None and q.slot == "anchor":
        return Message(kind="answer", request=request_of(r, r.text), **base)
    return Message(kind="answer", option=r.option, updates=updates, **base)


def _command_message(r: Reading, ctx: Context, base: dict[str, Any]) -> Message:
    command = _COMMAND.get(r.command or "", r.command)
    if command == "version" and not r.refs:
        command = "undo"  # "back to the previous version": the one before this, as undo brings back
    text = r.text
    out = Message(kind="command", command=command, refs=list(r.refs), about=r.about, **base)
    if command == "count":
        out.about = r.topic or ""
    if command in ("cite_named", "on_list", "which_cite") and r.papers:
        out.request = request_of(r, text, anchor=r.papers[0])
    if command == "compare":
        out.also = [request_of(r, text, anchor=a) for a in r.papers[:2]]
    if command == "step_edit" and r.step is not None:
        out.step_edit = StepEdit(**r.step)
    return out
