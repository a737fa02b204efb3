"""One conversation: anchor, request, dialogue, intent, workflow versions, last results.

    session = Session(runtime)
    reply = await session.user_says('Show me work that came after "Bleu: …" and used its ideas.')
    while reply.question:                       # one question per turn, 3–5 options + free text
        reply = await session.choose(0)         # or: await session.user_says("only after 2008")
    reply.results                               # ranked papers with evidence
    reply = await session.user_says("only after 2008")   # feedback -> workflow edit -> new version -> re-run

Every message is read once, against the state of the conversation (``pilot.message.read``, which takes the one
reading of ``pilot.reading``): a new
search (another paper, person, topic or direction), feedback on the results, the answer to the open
question, an entity question or a command. The session dispatches on that reading; nothing downstream reads
the text again. Results come after at most ``questions_before_results`` questions; the questions still
worth asking are offered with the results, one at a time, to refine them.

The session is a pydantic model: ``model_dump_json()`` saves it, ``Session.restore(json, runtime)``
brings it back. The runtime (sources, models, caches) is never serialised. No method raises for user
input: problems come back as ``Reply.error`` in plain words, fallbacks as ``Reply.notes``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from clarifier.lift import lift_offer
from clarifier.llm_questions import llm_question
from clarifier.policy import answer_updates, apply_answer, named_clusters, next_question, option_updates
from clarifier.question import Option, Question
from pilot import export, limits
from pilot import listfacts as list_facts
from pilot.anchors import Resolution, near_exact, resolve
from pilot.citations import count_of
from pilot.coverage import coverage_notes
from pilot.domain import profile
from pilot.intent import ParsedRequest, apply_updates, as_topic, named_request
from pilot.kg import KGQuery, answer_question
from pilot.limits import clip_message, quote
from pilot.listfacts import ListFact, numbered
from pilot.message import Context, Message, read, settle_with_llm
from pilot.models import Answer, Intent, Paper, RankedPaper, SourceUsage
from pilot.papertype import paper_type
from pilot.query import whole_request
from pilot.reading import warm as warm_reader
from pilot.reading import warmed as reader_warmed
from pilot.redact import redact
from pilot.runtime import Runtime
from pilot.sources.base import NO_SOURCE, RateLimited, SourceError, SourceUnavailable
from pilot.sources.budget import budget_scope, current_budget
from pilot.spelling import respelt_topic
from pilot.stepedit import StepEdit, step_edit
from pilot.text import normalize_title
from pilot.turnwatch import TurnStopped, TurnWatch, watched
from pilot.venues import at_venue
from pilot.vocab import (
    PAPER_TYPE_PLURALS,
    RESULT_ORDER_WORDS,
    direction_results,
    kinds_text,
    left_out_words,
)
from workflows.diff import diff as workflow_diff
from workflows.diff import short
from workflows.edit import apply_edit, describe_edit
from workflows.executor import RunResult, execute, values_size
from workflows.executor import run_node as exec_run_node
from workflows.explain import how_made
from workflows.explain import why as explain_why
from workflows.graph import topo_order
from workflows.inducer import induce
from workflows.model import RunTrace, Workflow
from workflows.ops.features import papers_of
from workflows.ops.filtering import author_matcher, mention_matcher
from workflows.progressive import run_progressively
from workflows.refine import (
    Feedback,
    Refinement,
    ResultFilters,
    filter_results,
    refine,
    refine_llm,
)
from workflows.refine import rate as rate_paper
from workflows.registry import operator_or_none
from workflows.validate import WorkflowError, validate
from workflows.wording import changes as wording_changes
from workflows.wording import describe_changes, step_name

log = logging.getLogger(__name__)

Phase = Literal["start", "anchor", "clarify", "results", "answer"]
CANDIDATE_LIMIT = 150
# entity questions about one paper ("who wrote #3?", "what else did the authors of GloVe write?")
_NAMES_A_PAPER = ("paper_authors", "paper_authors_papers", "paper_orgs")
# questions that are not about the search's settings: which paper, which direction, refine-or-new, fallback
_META_SLOTS = ("anchor", "direction", "scope", "fallback")
_EMPTY = "Please type a request, e.g. a paper title in quotes and what you are looking for."
HELP = (
    "Tell me which paper (a title, a name like “TextRank”, an id) or which topic to search, and what you need: "
    "earlier work, later work, similar papers, datasets, surveys — or ask about people and venues. "
    "“Back to the first search” returns to an earlier search. About a list: “summarize these”, “is BLEU on the "
    "list?”, “cite #2”, “more like #3, less like #5”."
)


EXPORT_HELP = (
    "The buttons under the results export this list as BibTeX, RIS, CSL-JSON (Zotero, Mendeley, EndNote read "
    "these) or CSV; the Library tab exports the papers you kept. Say “keep #1 and #4” to keep papers from here."
)


class _SourceDown(Exception):
    """The source could not be reached to start a search (look up its paper, check its topic): the turn is undone,
    not half-done. ``doing``: what it was reached for, in words."""

    def __init__(self, error: SourceError, doing: str = "to look up the paper"):
        super().__init__(str(error))
        self.error = error
        self.doing = doing


class WorkflowVersion(BaseModel):
    version: int
    workflow: Workflow
    reason: str
    diff: list[str] = Field(default_factory=list, description="the changes vs the previous version, by operator")
    changes: list[str] = Field(default_factory=list, description="the same changes in a researcher's words")
    intent: Intent | None = Field(None, description="what the search was asked for when this version was made")


class NodeRun(BaseModel):
    """What the inspector shows after "run this node"."""

    node_id: str
    op: str
    status: str
    seconds: float = 0.0
    cache_hit: bool = False
    error: str | None = None
    note: str | None = None
    inputs: dict[str, str] = Field(default_factory=dict, description="producer node -> short description of its value")
    n_out: int = 0
    output_preview: list[str] = Field(default_factory=list)


class Reply(BaseModel):
    message: str
    question: Question | None = None
    candidates: list[Paper] = Field(default_factory=list)
    results: list[RankedPaper] = Field(default_factory=list)
    answer: Answer | None = None
    workflow: Workflow | None = None
    trace: RunTrace | None = None
    diff: list[str] = Field(default_factory=list, description="what changed in the workflow, by operator and param")
    changes: list[str] = Field(default_factory=list, description="the same changes in a researcher's words")
    notes: list[str] = Field(default_factory=list)
    error: str | None = None
    usage: SourceUsage | None = Field(None, description="what this turn spent at remote sources")
    keep: list[str] = Field(default_factory=list, description="papers the user asked to keep in their library")

    @field_validator("message", "error")
    @classmethod
    def _no_key(cls, text: str | None) -> str | None:
        """What a turn says may quote an upstream error or exception that echoed a key: never shown."""
        return redact(text) if text else text

    @field_validator("notes")
    @classmethod
    def _no_key_in_notes(cls, notes: list[str]) -> list[str]:
        return [redact(n) for n in notes]


# A turn still running this long after its time budget (``PILOT_TURN_BUDGET_S``) with nothing moving (no step
# started, progressed or finished for as long) is stopped and undone (``pilot.turnwatch``): requests already end at
# the budget, so only this machine's work can outlast it; a search computing on a busy CPU goes on (to the cap).
TURN_GRACE_S = 30.0


def _turn(method):
    """A user action is one turn: everything it fetches spends one request budget (``PILOT_REQUEST_BUDGET``) and
    one time budget (``PILOT_TURN_BUDGET_S``: every request, rate-limit wait and retry ends by then), and its reply
    says what the turn spent and, when a budget ran out, what it left out. A turn past its time by
    ``TURN_GRACE_S`` that has not moved for as long is stopped and undone."""

    @functools.wraps(method)
    async def turn(self: Session, *args: Any, **kwargs: Any) -> Any:
        if current_budget() is not None:  # called from another turn (user_says -> search_now): same budget
            return await method(self, *args, **kwargs)
        settings = self._runtime.settings
        seconds = settings.turn_budget_s or None
        # the sentence model's first load is the process's start-up, not time spent on this turn's sources; once
        # loaded, a turn does not queue for a worker thread to learn so
        if not reader_warmed():
            await asyncio.to_thread(warm_reader)
        with budget_scope(settings.turn_budget(), seconds=seconds) as budget:
            self._turn_budget = budget
            self._turn_saved = self._snapshot()
            watch = self._turn_watch = TurnWatch(seconds, TURN_GRACE_S) if seconds else None
            try:
                work = method(self, *args, **kwargs)
                reply = await (watched(work, watch) if watch else work)
            except TurnStopped:
                log.warning("a turn past its time budget (%s s) did not move for %s s: stopped", seconds, TURN_GRACE_S)
                self._restore(self._turn_saved)
                reply = self._error(
                    f"This took longer than a turn may ({seconds:g} s), so I stopped it and nothing was changed. "
                    "Ask again in a moment: what was fetched so far is cached and costs nothing."
                )
            finally:
                self._turn_budget = None
                self._turn_saved = None
                self._turn_watch = None
        usage = budget.finish()
        if isinstance(reply, Reply):
            if usage.first_results_s is None and reply.results:
                usage.first_results_s = usage.seconds
            reply.usage = usage
            if usage.skipped:
                reply.notes.append(_skipped_note(usage))
        return reply

    return turn


def _skipped_note(usage: SourceUsage) -> str:
    shown = "; ".join(usage.skipped[:4]) + (f"; and {len(usage.skipped) - 4} more" if len(usage.skipped) > 4 else "")
    if usage.time_budget_s is not None:  # the source was too slow for the turn's time
        spent, knob = f"its time budget ({usage.time_budget_s:g} s waiting on the paper source)", "PILOT_TURN_BUDGET_S"
    else:
        spent, knob = f"its request budget ({usage.budget} requests to the paper source)", "PILOT_REQUEST_BUDGET"
    return (
        f"These results are partial: the turn used {spent} and skipped {shown}. Ask again to continue (what was "
        f"fetched is cached and free), or raise {knob}."
    )


def _preview(value: Any, n: int = 5) -> tuple[int, list[str]]:
    if isinstance(value, list):
        out = []
        for v in value[:n]:
            if isinstance(v, RankedPaper):
                out.append(f"{v.paper.title} ({v.paper.year or '?'}) score={v.score:.3f}")
            elif isinstance(v, Paper):
                out.append(f"{v.title} ({v.year or '?'})")
            else:
                out.append(str(getattr(v, "name", v))[:200])
        return len(value), out
    if value is None:
        return 0, []
    text = getattr(value, "answer", None) or str(value)
    return 1, [str(text)[:500]]


def _citation_count(paper: Paper) -> str:
    """How often a paper is cited, as far as the source knows (its own links, and the count it was given)."""
    said = []
    if (linked := paper.in_corpus_citations) is not None:  # a remote source's record has no count of its own links
        said.append(f"{linked:,} paper{'s' if linked != 1 else ''} in this source")
    if paper.citation_count is not None:
        said.append(f"{paper.citation_count:,} in all, by the source's count")
    title = f"“{short(paper.title, 100)}”" + (f" ({paper.year})" if paper.year else "")
    return f"{title} is cited by {' and '.join(said)}." if said else f"The source gives no citation count for {title}."


def _is_entity_op(name: str) -> bool:
    op = operator_or_none(name)
    return op is not None and op.family == "entities"


def _paper_label(p: Paper) -> str:
    meta = ", ".join(str(x) for x in (p.year, profile().venue_label(p)) if x)
    return f"{p.title} ({meta})" if meta else p.title


def _answer_papers(answer: Answer, values: dict[str, Any]) -> list[RankedPaper]:
    """Every paper an answer is about: those it cites first (saying which citation each is), then the
    rest of what it counted ("and 11 more"), so that each one can be opened, kept and exported."""
    by_url: dict[str, RankedPaper] = {}
    counted: list[RankedPaper] = []
    for value in values.values():
        for item in value if isinstance(value, list) else []:
            if isinstance(item, RankedPaper):
                counted.append(item)
                if item.paper.canonical_url:
                    by_url.setdefault(item.paper.canonical_url, item)
    out: list[RankedPaper] = []
    for key, url in answer.reference.items():  # keys are numbered from 1 in order of first use
        item = by_url.get(url)
        if item is not None and all(r.paper.id != item.paper.id for r in out):
            ev = item.evidence.model_copy(update={"reason": f"cited as [{key.strip('[]')}] in the answer"})
            out.append(item.model_copy(update={"evidence": ev}))
    seen = {r.paper.id for r in out}
    for item in counted:
        if item.paper.id not in seen:
            seen.add(item.paper.id)
            out.append(item)
    return out


# Session fields that belong to the conversation, not to one search: going back to an earlier search keeps them.
_CONVERSATION_FIELDS = {"id", "history", "kept_ids", "last_message", "earlier"}


def _search_label(state: dict[str, Any]) -> str:
    anchor = state.get("anchor") or {}
    return short(str(state.get("request") or anchor.get("title") or "a search"), 80)


def _pick_earlier(earlier: list[dict[str, Any]], current: int, msg: Message) -> int | None:
    """The number of the search ``msg`` asks for (possibly ``current``), or None when its words name none of
    them. No place and no words: the latest before the current one."""
    if msg.refs:
        return msg.refs[0] if msg.refs[0] == current or any(d["search_no"] == msg.refs[0] for d in earlier) else None
    if not msg.about:
        return max(d["search_no"] for d in earlier)
    asked = set(normalize_title(msg.about).split())

    def overlap(d: dict[str, Any]) -> int:
        anchor = d.get("anchor") or {}
        said = f"{d.get('request', '')} {anchor.get('title', '')} {(d.get('intent') or {}).get('topic') or ''}"
        return len(asked & set(normalize_title(said).split()))

    best = max(earlier, key=lambda d: (overlap(d), d["search_no"]))
    return best["search_no"] if overlap(best) else None


def _changes(before: Workflow, after: Workflow) -> tuple[list[str], list[str]]:
    """What changed between two versions: by operator and param (the details) and in a researcher's words."""
    d = workflow_diff(before, after)
    return d.summary(), describe_changes(d, before, after)


def _typed_title_as_subject(parsed: ParsedRequest) -> bool:
    """Words written like a title, unquoted, asked about with no direction: a subject if no paper has that title."""
    q = parsed.anchor_query
    quoted = any(f"{o}{q}{c}" in parsed.text for o, c in (('"', '"'), ("“", "”"), ("'", "'")))
    return parsed.anchor_kind == "title" and parsed.intent.direction is None and not quoted and len(q.split()) >= 3


def _carried(before: Intent, after: Intent, fields: tuple[str, ...]) -> dict[str, Any]:
    """The ``fields`` set in ``before`` that ``after`` leaves unset: what a follow-up search keeps."""
    return {f: getattr(before, f) for f in fields if getattr(before, f) and not getattr(after, f)}


class Session(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str = Field(default_factory=lambda: uuid.uuid4().hex[:12])
    phase: Phase = "start"
    anchor: Paper | None = None
    anchor_candidates: list[Paper] = Field(default_factory=list)
    request: str = ""
    history: list[dict] = Field(default_factory=list)
    intent: Intent = Field(default_factory=Intent)
    question: Question | None = None
    asked: list[str] = Field(default_factory=list)
    turns: int = 0
    asked_before_results: int = Field(0, description="questions on search settings asked before the first results")
    versions: list[WorkflowVersion] = Field(default_factory=list)
    current_version: int = -1
    edited: bool = Field(False, description="the workflow was changed by hand or by feedback since it was induced")
    results: list[RankedPaper] = Field(default_factory=list)
    answer: Answer | None = None
    kept_ids: list[str] = Field(default_factory=list)
    last_message: Message | None = Field(None, description="how the last message was read")
    pending: Message | None = Field(None, description="a message waiting for the answer to a scope/fallback question")
    held: dict[str, Any] = Field(
        default_factory=dict,
        description='what a message with nothing to search for asked of the papers ("the newest ones", "only '
        'surveys"), kept for the next request that names what to search',
    )
    entity_query: KGQuery | None = Field(None, description="the entity question answered last, for follow-ups")
    search_no: int = Field(0, description="which search of the conversation this is (1 = the first)")
    named: ParsedRequest | None = Field(None, description="the request that named the paper searched from")
    earlier: list[dict[str, Any]] = Field(
        default_factory=list,
        description="the state of each earlier search that got results or an answer, to go back to "
        f"(at most {limits.MAX_EARLIER_SEARCHES}, the most recent)",
    )

    _runtime: Runtime = PrivateAttr()
    _last_run: RunResult | None = PrivateAttr(default=None)  # without its values: see ``_kept``
    _run_key: str | None = PrivateAttr(default=None)  # where the last run's values are in ``recent_runs``
    _candidates: dict[str, list[Paper]] = PrivateAttr(default_factory=dict)
    _observer: Callable[[Any], None] | None = PrivateAttr(default=None)
    _turn_budget: Any = PrivateAttr(default=None)
    _turn_saved: Any = PrivateAttr(default=None)  # the state the turn started from (to undo it)
    _turn_watch: TurnWatch | None = PrivateAttr(default=None)  # when the turn is stopped (``pilot.turnwatch``)

    def __init__(self, runtime: Runtime, **data: Any):
        super().__init__(**data)
        self._runtime = runtime

    @classmethod
    def restore(cls, data: str | bytes | dict, runtime: Runtime) -> Session:
        payload = json.loads(data) if isinstance(data, (str, bytes)) else dict(data)
        return cls(runtime, **payload)

    # --- state ------------------------------------------------------------------------------------
    @property
    def runtime(self) -> Runtime:
        return self._runtime

    @property
    def workflow(self) -> Workflow | None:
        if 0 <= self.current_version < len(self.versions):
            return self.versions[self.current_version].workflow
        return None

    @property
    def last_run(self) -> RunResult | None:
        return self._last_run

    @contextmanager
    def observing(self, observer: Callable[[Any], None]) -> Iterator[None]:
        """While open, workflow runs report progress and previews of their results to ``observer``
        (``workflows.progressive.Update``, the preview already without the anchor paper). Called on the
        event loop; it must be quick."""
        self._observer = observer
        try:
            yield
        finally:
            self._observer = None

    def keep(self, paper_ids: list[str]) -> None:
        self.kept_ids = list(dict.fromkeys([*self.kept_ids, *paper_ids]))

    def _say(self, role: str, content: str) -> None:
        self.history.append({"role": role, "content": content})
        del self.history[: -limits.MAX_TRANSCRIPT_MESSAGES]  # a long session keeps its recent turns

    def _reply(self, message: str, **kw: Any) -> Reply:
        self._say("assistant", message)
        return Reply(message=message, **kw)

    def _on_screen(self) -> dict[str, Any]:
        """What a reply carries to leave the screen as it was: the open question, the list, the workflow, the
        answer."""
        return dict(question=self.question, results=self.results, workflow=self.workflow, answer=self.answer)

    def _error(self, message: str, notes: list[str] | None = None) -> Reply:
        self._say("assistant", message)
        return Reply(message=message, error=message, notes=notes or [], workflow=self.workflow, results=self.results)

    def _known_venues(self) -> list[str]:
        venues = [profile().venue_label(p) for ps in self._candidates.values() for p in ps]
        return sorted({v for v in venues if v})

    def _context(self) -> Context:
        return Context(
            anchor=self.anchor.title if self.anchor is not None else None,
            phase=self.phase,
            question=self.question,
            has_results=self.phase == "results" and self.workflow is not None,
            has_search=self.phase in ("clarify", "results") and (self.anchor is not None or bool(self.intent.topic)),
            known_venues=self._known_venues(),
            listed=len(self.results),
            asked=self.entity_query if self.phase == "answer" else None,
            topic=self.intent.topic if self.anchor is None else None,
            direction=self.intent.direction if self.anchor is not None else None,
            steps=[n.id for n in self.workflow.nodes] + [n.op for n in self.workflow.nodes] if self.workflow else [],
        )

    # --- the conversation ---------------------------------------------------------------------------
    @_turn
    async def user_says(self, text: str) -> Reply:
        """Read one message and act on it. A paste longer than ``limits.MAX_MESSAGE_CHARS`` is cut (the reply says
        so); nothing the user types is refused for its length."""
        return await self.act_on(self.read(text))

    def read(self, text: str) -> Message:
        """The message read once, in this conversation's state, without acting on it (the UI answers what is
        about the library itself and hands the rest back to ``act_on``)."""
        text, clipped = clip_message(" ".join((text or "").split()))
        if not text:
            return Message(kind="unclear", text="", hint=_EMPTY)
        msg = read(text, self._context())
        return msg.model_copy(update={"clipped": clipped}) if clipped else msg

    @_turn
    async def act_on(self, msg: Message) -> Reply:
        """What the message asks, done: the one turn a message makes."""
        if not msg.text:
            return self._error(_EMPTY)
        self._say("user", msg.text)
        reply = await self._turn_boundary(self._message, msg)
        if msg.clipped:
            reply.notes.insert(0, msg.clipped)
        return reply

    async def _message(self, msg: Message) -> Reply:
        if msg.kind == "ambiguous" and self._runtime.llm is not None:
            msg = await settle_with_llm(self._runtime.llm, msg, self.history[-6:])
        self.last_message = msg
        return await self._dispatch(msg)

    async def _turn_boundary(self, turn: Callable[..., Awaitable[Reply]], *args: Any) -> Reply:
        """The session's one never-raise boundary (the UI controller and the CLI have theirs): whatever
        goes wrong below it, the user gets a readable reply and keeps the conversation. A source down
        before a new search could start undoes the turn; anything else is said in a sentence."""
        saved = self._turn_saved or self._snapshot()
        try:
            return await turn(*args)
        except _SourceDown as down:
            # a new search that could not even start must not cost the user the conversation they had
            self._restore(saved)
            err = down.error
            hint = f" {err.hint[:1].upper()}{err.hint[1:]}." if err.hint else ""
            if err.source == NO_SOURCE:  # nothing to reach: say what to set, not "could not reach none"
                return self._error(f"I cannot search yet: {err.message}.{hint}")
            # a rate limit's hint says when to try again (the wait the server asked for); else: in a moment
            again = "" if "try again" in hint.lower() else " Send the request again in a moment."
            return self._error(
                f"I could not reach {err.source} {down.doing} ({err.message}).{hint} Nothing was changed.{again}"
            )
        except Exception as exc:  # noqa: BLE001 - the boundary: a bug must not kill the conversation
            log.exception("turn failed")
            return self._error(f"Something went wrong in this turn ({type(exc).__name__}: {exc}). Please try again.")

    async def _dispatch(self, msg: Message) -> Reply:
        if msg.kind == "command":
            if msg.command == "reset":
                self.reset()
                return self._reply("Started afresh. " + HELP)
            if msg.command == "undo":
                return await self.undo()
            if msg.command == "version" and msg.refs:
                return await self.goto_version(msg.refs[0])
            if msg.command == "clear_filters":
                return await self.filter_results(ResultFilters())
            if msg.command == "cite_named" and msg.request is not None:
                return await self._cite_named(msg.request)
            if msg.command == "on_list" and msg.request is not None:
                return await self._on_list(msg.request)
            if msg.command == "which_cite" and msg.request is not None:
                return await self._which_cite(msg.request)
            if msg.command == "help":
                # what pilot can do, and whatever was on screen stays: the open question, the results
                return self._reply(HELP, **self._on_screen())
            if msg.command in ("explain", "keep", "export", "kinds", "count", "list_fact", "how", "cite"):
                return self._about_results(msg)
            if msg.command == "earlier":
                return self._back_to_earlier(msg)
            if msg.command == "step_edit" and msg.step_edit is not None:
                return await self._step_edit(msg.step_edit)
            if msg.command == "compare":
                return await self._compare_named(msg.also)
            return await self.search_now()
        if msg.kind == "entity" and msg.request is not None and not await self._knows_person(msg.entity):
            msg = msg.model_copy(
                update={"kind": "new_search", "target": "topic", "why": "a topic request (no such person)"}
            )
            self.last_message = msg
        if msg.kind == "entity":
            return await self._entity(msg, new_search=True)
        if msg.kind == "new_search":
            return await self._new_search(msg)
        if msg.kind == "answer":
            return await self._answer(msg)
        if msg.kind == "refine":
            return await self._refine(msg)
        if msg.kind == "ambiguous":
            return self._ask_scope(msg)
        if msg.hint:
            hint = msg.hint
            if msg.kind == "unclear" and msg.constraints and self.anchor is None and not self.intent.topic:
                self.held = {**self.held, **msg.constraints}
                hint += f" I will keep “{short(msg.text, 60)}” for it."
            return self._reply(hint, **self._on_screen())
        if self.question is not None:
            return self._reply(
                f"Please pick an option or type your answer: {self.question.text}", question=self.question
            )
        return self._reply(HELP, results=self.results, workflow=self.workflow)

    async def _knows_person(self, query: KGQuery | None) -> bool:
        """The source knows someone by exactly the name the question names (capitalised topic words such as
        "A Unified Framework" only look like a name)."""
        if query is None or not query.person:
            return False
        try:
            people = await self._runtime.source.search_authors(query.person, limit=5)
        except SourceError:
            return False
        return any(normalize_title(a.name) == normalize_title(query.person) for a in people)

    def _snapshot(self) -> tuple[dict[str, Any], Any, Any]:
        # the cached candidates and last run are replaced on a new search, never mutated: references do
        return self.model_dump(mode="json"), self._candidates, (self._last_run, self._run_key)

    def _restore(self, saved: tuple[dict[str, Any], Any, Any]) -> None:
        data, self._candidates, (self._last_run, self._run_key) = saved
        before = Session.restore(data, self._runtime)
        for name in type(self).model_fields:
            if name != "history":  # the user's message and pilot's apology stay in the conversation
                setattr(self, name, getattr(before, name))

    @_turn
    async def choose(self, option_index: int) -> Reply:
        q = self.question
        if q is None:
            return self._error("There is no open question to choose an option for.")
        try:
            option_updates(q, int(option_index))
        except (IndexError, ValueError) as exc:
            return self._error(str(exc))
        label = q.options[int(option_index)].label
        self._say("user", label)
        msg = Message(kind="answer", text=label, option=int(option_index), why="option chosen")
        self.last_message = msg
        return await self._turn_boundary(self._answer, msg)

    @_turn
    async def search_now(self) -> Reply:
        if self.anchor is None and not self.intent.topic and not self.request:
            return self._error("Tell me first which paper (or topic) to start from.")
        q = self.question
        if q is not None and q.slot == "fallback" and self.pending is not None:
            # "search now" on "search papers about X instead?" is its yes, without the topic's own questions
            yes = next(i for i, o in enumerate(q.options) if o.sets.get("fallback") == "topic")
            reply = await self._answer_pending(q, Message(kind="answer", text=q.options[yes].label, option=yes))
            if self.phase != "clarify":  # nothing matched the words: that reply says so
                return reply
        if self.phase == "results" and self.workflow is not None:
            self.question = None  # the results are already there; the offered question is simply dropped
            return self._reply("These are the results.", results=self.results, workflow=self.workflow)
        self.question = None
        return await self._search([], offer=False)  # "just search": no more questions, not even with the results

    @_turn
    async def rate(self, paper_id: str, up: bool) -> Reply:
        if self.workflow is None:
            return self._error("There are no results to rate yet.")
        if self.phase == "answer":
            return self._error(
                "Ratings refine a paper search; these papers come from an answer. Keep and export "
                "the ones you want, or start a paper search from one of them."
            )
        ref = rate_paper(self.workflow, self.intent, paper_id, up)
        self._say("user", f"{'relevant' if up else 'not relevant'}: {paper_id}")
        return await self._apply_refinement(ref)

    @_turn
    async def filter_results(self, filters: ResultFilters) -> Reply:
        """The results panel's filters, applied as one edit of the workflow (a new version and a diff)."""
        if self.workflow is None or self.phase == "answer":
            return self._error("There are no search results to filter yet.")
        return await self._apply_refinement(filter_results(self.workflow, self.intent, filters))

    @_turn
    async def goto_version(self, version: int) -> Reply:
        """Make an earlier (or, after an undo, a later) workflow version current again and run it."""
        index = next((i for i, v in enumerate(self.versions) if v.version == version), None)
        if index is None:
            return self._error(f"There is no workflow version v{version}.")
        if index == self.current_version:
            return await self.rerun()
        before = self.workflow
        self.current_version = index
        self._restore_intent()
        assert before is not None and self.workflow is not None
        lines, plain = _changes(before, self.workflow)
        reply = await self._run([f"back to version v{version}"])
        reply.diff, reply.changes = lines, plain
        return reply

    @_turn
    async def edit(self, edit: Any) -> Reply:
        if self.workflow is None:
            return self._error("There is no workflow to edit yet.")
        try:
            new = apply_edit(self.workflow, edit)
            said = wording_changes(self.workflow, new)[:2]
            reason = "your edit: " + ("; ".join(line[:1].lower() + line[1:] for line in said) or describe_edit(edit))
        except WorkflowError as exc:
            return self._error(f"That edit was not applied: {exc}")
        self._push(new, reason)
        self.edited = True
        return await self._run([])

    @_turn
    async def load_workflow(self, workflow: Workflow | dict | str) -> Reply:
        try:
            wf = (
                workflow
                if isinstance(workflow, Workflow)
                else (
                    Workflow.model_validate_json(workflow)
                    if isinstance(workflow, str)
                    else Workflow.model_validate(workflow)
                )
            )
            validate(wf, context="cannot load the workflow")
        except (WorkflowError, ValueError) as exc:
            return self._error(f"That workflow cannot run: {exc}")
        self.question = None
        self._push(wf, f"loaded workflow {wf.name or ''}".strip())
        self.edited = True
        return await self._run([])

    @_turn
    async def rerun(self) -> Reply:
        """Run the current version again without recording a new one: nothing in the workflow changed."""
        if self.workflow is None:
            return self._error("There is no workflow to run yet.")
        reply = await self._run([])
        reply.diff, reply.changes = [], []
        return reply

    @_turn
    async def undo(self) -> Reply:
        if self.current_version <= 0:
            return self._error("There is no earlier version to go back to.")
        before = self.workflow
        self.current_version -= 1
        self._restore_intent()
        assert before is not None and self.workflow is not None
        lines, plain = _changes(before, self.workflow)
        reply = await self._run([f"back to version {self.versions[self.current_version].version}"])
        reply.diff, reply.changes = lines, plain
        return reply

    @_turn
    async def run_node(self, node_id: str) -> NodeRun:
        wf = self.workflow
        if wf is None or not wf.has_node(node_id):
            return NodeRun(
                node_id=node_id[: limits.MAX_ID_CHARS],
                op="?",
                status="failed",
                error=f"there is no node {quote(node_id)} in the current workflow",
            )
        values = await self._values()
        node = wf.node(node_id)
        try:
            async with self._search_slot():
                outcome = await exec_run_node(wf, node_id, self._runtime.context(), values, self._runtime.node_cache)
        except WorkflowError as exc:
            return NodeRun(node_id=node_id, op=node.op, status="failed", error=str(exc))
        inputs = {
            e.source: f"{_preview(values.get(e.source))[0]} item(s) on port {e.port}" for e in wf.inputs_of(node_id)
        }
        n, prev = _preview(outcome.value)
        t = outcome.trace
        return NodeRun(
            node_id=node_id,
            op=node.op,
            status=t.status,
            seconds=t.seconds,
            cache_hit=t.status == "cached",
            error=t.error,
            note=t.note,
            inputs=inputs,
            n_out=n,
            output_preview=prev,
        )

    # --- starting over --------------------------------------------------------------------------------
    def reset(self) -> None:
        """A fresh conversation in the same session: what the chat's clear button does. Only the kept
        papers (the user's selection for export) survive."""
        self._reset(keep_history=False)

    def _reset(self, keep_history: bool = True) -> None:
        """A new search: the conversation (transcript, library) stays and the search on screen is kept among
        the earlier ones; without ``keep_history`` (the clear button) everything but the library goes."""
        keep = {"id", "kept_ids", "last_message"} | ({"history"} if keep_history else set())
        earlier, number = (self._earlier_with_current(), self.search_no + 1) if keep_history else ([], 0)
        fresh = Session(self._runtime)
        for name in type(self).model_fields:
            if name not in keep:
                setattr(self, name, getattr(fresh, name))
        self.earlier, self.search_no = earlier, number
        self._candidates = {}
        self._last_run = None

    def _earlier_with_current(self) -> list[dict[str, Any]]:
        """The earlier searches plus the one on screen, when it got as far as results or an answer."""
        if self.phase not in ("results", "answer") or (not self.results and self.answer is None):
            return list(self.earlier)
        state = self.model_dump(mode="json", exclude=_CONVERSATION_FIELDS)
        return sorted([*self.earlier, state], key=lambda d: d["search_no"])[-limits.MAX_EARLIER_SEARCHES :]

    def _back_to_earlier(self, msg: Message) -> Reply:
        """ "Go back to the first search": that search's results, workflow versions and answer, as they were
        left; the search on screen joins the earlier ones (so the same words come back to it)."""
        on_screen = self._on_screen()
        if not self.earlier:
            return self._reply("There is no earlier search in this conversation to go back to.", **on_screen)
        picked = _pick_earlier(self.earlier, self.search_no, msg)
        if picked is None:
            listing = "; ".join(f"#{d['search_no']} “{_search_label(d)}”" for d in self.earlier)
            return self._reply(
                f"Which earlier search? {listing}. Say e.g. “back to search #{self.earlier[0]['search_no']}” "
                "or name its paper or topic.",
                **on_screen,
            )
        if picked == self.search_no:
            return self._reply("That is the search on screen.", **on_screen)
        state = next(d for d in self.earlier if d["search_no"] == picked)
        earlier = [d for d in self._earlier_with_current() if d["search_no"] != picked]
        restored = Session(self._runtime, **state)
        for name in type(self).model_fields:
            if name not in _CONVERSATION_FIELDS:
                setattr(self, name, getattr(restored, name))
        self.earlier = earlier
        self._candidates, self._last_run = {}, None
        what = "answer" if self.phase == "answer" else f"{len(self.results)} results"
        return self._reply(
            f"Back to search #{picked}, “{_search_label(state)}” ({what}, as you left it).",
            question=self.question,
            results=self.results,
            workflow=self.workflow,
            answer=self.answer,
        )

    # --- new searches -----------------------------------------------------------------------------------
    async def _new_search(self, msg: Message) -> Reply:
        parsed = msg.request
        assert parsed is not None
        if self.held:  # "the newest ones" said before the subject: this search asks it too, unless it says otherwise
            default = Intent()
            unset = {k: v for k, v in self.held.items() if getattr(parsed.intent, k, None) == getattr(default, k, None)}
            parsed = parsed.model_copy(update={"intent": apply_updates(parsed.intent, unset)})
            self.held = {}
        if msg.target == "current" and msg.also:
            if self.anchor is None:
                return self._reply("Which paper's citers? Search for a paper first, e.g. “papers citing BLEU”.")
            # "only the ones that also cite ROUGE": the paper on screen's later work, the choices made for it kept
            mine = named_request(self.anchor.id).model_copy(
                update={"text": msg.text, "intent": apply_updates(self.intent, {"direction": "successor"})}
            )
            reply = await self._citing_all(mine, msg.also)
            if reply.question is not None and reply.question.slot not in _META_SLOTS:
                # the questions were answered for the list on screen: narrowing it asks none again
                found = await self.search_now()
                return found.model_copy(update={"notes": [*reply.notes, *found.notes]})
            return reply
        if msg.target == "current":
            return await self._same_subject(parsed)
        if msg.target == "result" and msg.feedback is not None and msg.feedback.refs:
            n = msg.feedback.refs[0]
            if not 1 <= n <= len(self.results):
                return self._error(f"There is no result #{n}; the list holds {len(self.results)}.")
            paper = self.results[n - 1].paper
            self._reset()
            self.request = parsed.text
            self.intent = apply_updates(parsed.intent, {"anchor_id": paper.id})
            return await self._anchor_chosen_paper(paper, [f"Searching from result #{n}: {_paper_label(paper)}."])
        if msg.correction and parsed.anchor_kind == "current" and parsed.year:
            return await self._in_other_year(parsed)
        if msg.also:
            return await self._citing_all(parsed, msg.also)
        if msg.correction:
            parsed = self._corrected(parsed)
        self._reset()
        self.request = parsed.text
        self.intent = parsed.intent
        notes: list[str] = []
        if parsed.period_of is not None:
            parsed, dated = await self._dated_by(parsed, *parsed.period_of)
            self.intent = parsed.intent
            notes.append(dated)
        elif msg.era_note:
            notes.append(msg.era_note)  # "before deep learning": which years that was taken to mean
        return await self._resolve(parsed, notes)

    async def _cite_named(self, parsed: ParsedRequest) -> Reply:
        """ "bibtex for BERT": the paper so named, cited in the chat; the search on screen stays."""
        res = await self._look_up(parsed)
        keep = self._on_screen()
        if isinstance(res, SourceError):
            return self._reply(f"Could not look up “{short(parsed.anchor_query, 60)}” ({res.message}).", **keep)
        if res.kind == "ask" and res.candidates:
            names = "; ".join(f"“{short(p.title, 90)}” ({p.year})" for p in res.candidates[:4])
            return self._reply(f"Several papers could be “{short(parsed.anchor_query, 60)}”: {names}. "
                               "Ask again with the title you mean.", **keep)  # fmt: skip
        if res.kind != "paper" or res.paper is None:
            return self._reply(
                res.note or f"No paper called “{short(parsed.anchor_query, 60)}” is in the source.", **keep
            )
        bib = export.to_bibtex([res.paper]).strip()
        return self._reply(f"{export.citation(res.paper)}\n\n```bibtex\n{bib}\n```", **keep)

    async def _paper_named(self, parsed: ParsedRequest) -> Paper | str:
        """The one paper ``parsed`` names, or what to say when it names none (asked of the list on screen)."""
        res = await self._look_up(parsed)
        if isinstance(res, SourceError) or res.kind != "paper" or res.paper is None:
            return f"“{short(parsed.anchor_query, 60)}” is not a paper I can find in the source."
        return res.paper

    async def _which_cite(self, parsed: ParsedRequest) -> Reply:
        """ "Which of these cite ROUGE?": the results whose reference lists hold that paper, the list unchanged."""
        keep = self._on_screen()
        cited = await self._paper_named(parsed)
        if isinstance(cited, str):
            return self._reply(cited, **keep)
        total = len(self.results)
        label = f"“{short(cited.title, 100)}”" + (f" ({cited.year})" if cited.year else "")
        citing = [n for n, r in enumerate(self.results, 1) if cited.id in (r.paper.references or [])]
        unknown = sum(1 for r in self.results if r.paper.references is None)
        blind = f" The source gives no reference list for {unknown} of them." if unknown else ""
        if not citing:
            return self._reply(f"None of the {total} results cites {label}.{blind}", **keep)
        narrowing = self.anchor is not None and self.intent.direction == "successor"  # only citers can be narrowed so
        hint = f" (Say “only the ones that also cite {short(parsed.anchor_query, 40)}” to keep just those.)"
        said = f"{len(citing)} of the {total} results cite {label}: {numbered(citing)}.{blind}"
        return self._reply(said + (hint if narrowing else ""), **keep)

    async def _on_list(self, parsed: ParsedRequest) -> Reply:
        """ "Is BLEU on the list?": its number, or which step of the workflow left it out, or that none found it."""
        keep = self._on_screen()
        paper = await self._paper_named(parsed)
        if isinstance(paper, str):
            return self._reply(paper, **keep)
        wf = self.workflow
        label = f"“{short(paper.title, 100)}” ({paper.year})" if paper.year else f"“{short(paper.title, 100)}”"
        listed = next((n for n, r in enumerate(self.results, 1) if r.paper.id == paper.id), None)
        if listed is not None:
            return self._reply(f"Yes: {label} is #{listed}.", **keep)
        values = await self._values()
        held = [
            nid for nid in (topo_order(wf) if wf is not None else [])
            if any(getattr(x, "paper", None) is not None and x.paper.id == paper.id for x in values.get(nid) or [])
        ]  # fmt: skip
        if not held or wf is None:
            around = f"Say “papers like {short(parsed.anchor_query, 40)}” to search around it."
            return self._reply(f"No: {label} is in the source, but no step of this search found it. {around}", **keep)
        last = held[-1]
        after = [e.target for e in wf.edges if e.source == last]
        dropped_by = next((wf.node(t) for t in after), None)
        if dropped_by is not None and dropped_by.op == "top_k":
            scored = values.get(last) or []
            rank = next((i for i, x in enumerate(scored, 1) if x.paper.id == paper.id), None)
            where = f" ranked #{rank} of {len(scored)}" if rank else ""
            return self._reply(f"No: {label} was found and{where}, below the list's cut of "
                               f"{dropped_by.params.get('k', len(self.results))}. Say “show all” or “next page” to see "
                               "further down.", **keep)  # fmt: skip
        step = f"the step “{dropped_by.label or dropped_by.id}” ({dropped_by.op})" if dropped_by else "a later step"
        return self._reply(f"No: {label} was found by “{last}” but {step} left it out. “How did you rank these?” "
                           "shows each step.", **keep)  # fmt: skip

    async def _dated_by(self, parsed: ParsedRequest, relation: str, name: str) -> tuple[ParsedRequest, str]:
        """ "Question answering after BERT": the period starts (or ends) with the year of the paper so named."""
        named = ParsedRequest(text=name, anchor_query=name, anchor_kind="name", intent=Intent(request=name))
        res = await self._look_up(named)
        paper = res.paper if isinstance(res, Resolution) and res.kind == "paper" else None
        if paper is None or paper.year is None:
            return (
                parsed,
                f"I could not date “{short(name, 60)}” (no paper in the source goes by that name), "
                "so no year limit is set.",
            )
        year = paper.year
        bound, period = {
            "after": ({"year_min": year + 1}, f"from {year + 1}"),
            "since": ({"year_min": year}, f"from {year}"),
            "before": ({"year_max": year - 1}, f"up to {year - 1}"),
        }[relation]
        intent = apply_updates(parsed.intent, bound)
        said = f"“{relation} {short(name, 40)}”: {period} ({_paper_label(paper)})."
        return parsed.model_copy(update={"intent": intent, "constraints": {**parsed.constraints, **bound}}), said

    def _corrected(self, parsed: ParsedRequest) -> ParsedRequest:
        """ "Actually I meant X": X with the direction, facet and filters chosen for the search it corrects (a
        period belongs to the paper, so it is asked again)."""
        fields = ("direction", "facet", "venues", "exclude_venues", "exclude_terms", "paper_types")
        kept = _carried(self.intent, parsed.intent, fields)
        return parsed.model_copy(update={"intent": apply_updates(parsed.intent, kept)})

    async def _look_up(self, parsed: ParsedRequest) -> Resolution | SourceError:
        """What ``parsed`` names, or the source's error for the caller to word; a source that is down or
        rate-limited ends the turn (``_SourceDown``), nothing changed."""
        try:
            return await resolve(self._runtime.source, parsed)
        except (SourceUnavailable, RateLimited) as exc:
            raise _SourceDown(exc) from exc
        except SourceError as exc:
            return exc

    async def _citing_all(self, parsed: ParsedRequest, others: list[ParsedRequest]) -> Reply:
        """ "Papers that cite both X and Y": later work from X, kept to the papers that also cite Y. Y is looked
        up first; when it cannot be found nothing on screen changes."""
        also, notes = [], []
        for other in others:
            res = await self._look_up(other)
            if isinstance(res, SourceError):
                return self._error(f"Could not look up “{short(other.anchor_query, 80)}” ({res.message}).")
            paper = res.best
            if paper is None:
                said = res.note or f"I could not find a paper called “{short(other.anchor_query, 80)}” in the source."
                return self._reply(said + " Name it by its title.", results=self.results, workflow=self.workflow)
            also.append(paper.id)
            guess = "; name it differently if you meant another paper" if res.guessed else ""
            notes.append(f"Kept to papers that also cite {_paper_label(paper)}{guess}.")
        parsed = parsed.model_copy(update={"intent": apply_updates(parsed.intent, {"also_cites": also})})
        self._reset()
        self.request = parsed.text
        self.intent = parsed.intent
        return await self._resolve(parsed, notes)

    async def _in_other_year(self, said: ParsedRequest) -> Reply:
        """ "I mean the 2014 one": the paper going by the name the search was named with, from that year, with
        the direction and choices kept. What is on screen stays when the source has none from that year."""
        named = self.named
        if named is None or named.anchor_kind not in ("name", "title", "topic", "cited"):
            assert self.anchor is not None  # a paper search (the reader checked): its title names it
            named = ParsedRequest(text=said.text, anchor_query=self.anchor.title, anchor_kind="title", intent=Intent())
        kind = named.anchor_kind
        if kind == "topic":  # "papers like pointnet": a name in lower case, or a whole title typed in lower case
            kind = "name" if len(named.anchor_query.split()) <= 3 else "title"
        parsed = self._corrected(named.model_copy(update={"anchor_kind": kind, "year": said.year, "text": said.text}))
        res = await self._look_up(parsed)
        if isinstance(res, SourceError):
            return self._error(f"Could not look up the paper ({res.message}).")
        on_screen = self._on_screen()
        if res.kind not in ("paper", "ask"):
            return self._reply(res.note or f"No other paper from {said.year} goes by that name.", **on_screen)
        if res.paper is not None and self.anchor is not None and res.paper.id == self.anchor.id:
            return self._reply(f"{_paper_label(res.paper)} is the paper this search is about already.", **on_screen)
        request = self.request
        self._reset()
        self.request, self.named, self.intent = request, named, parsed.intent
        return await self._resolved(parsed, res, [])

    async def _same_subject(self, parsed: ParsedRequest) -> Reply:
        """ "And what came after it?": the paper (or topic) of the current search, in a new direction."""
        anchor, topic, before = self.anchor, self.intent.topic, self.intent
        self._reset()
        self.request = parsed.text
        if anchor is not None:
            self.intent = apply_updates(parsed.intent, {"anchor_id": anchor.id})
            return await self._anchor_chosen_paper(anchor, [])
        topical = as_topic(parsed.model_copy(update={"anchor_query": topic or ""}))
        # "what about surveys?" after "papers on X since 2015": the same topic, period and venues, unless it says
        # otherwise (a paper's period depends on the direction, so only a topic's carries over)
        kept = _carried(before, topical.intent, ("year_min", "year_max", "venues"))
        notes = []
        if kept:
            topical = topical.model_copy(update={"intent": apply_updates(topical.intent, kept)})
            said = {"year_min": "since {}", "year_max": "up to {}", "venues": "only {}"}
            told = [said[k].format(", ".join(v) if isinstance(v, list) else v) for k, v in kept.items()]
            notes.append("Kept from the last search: " + ", ".join(told) + " (say “any year” to drop it).")
        return await self._topic_search(topical, notes)

    async def _resolve(self, parsed: ParsedRequest, notes: list[str] | None = None) -> Reply:
        notes = [*(notes or []), *(f"I read “{typo}” as “{word}”." for typo, word in parsed.respelt.items())]
        res = await self._look_up(parsed)
        if isinstance(res, SourceError):
            if parsed.anchor_kind in ("doi", "arxiv", "s2", "corpus_id"):
                return self._error(
                    f"Could not look up the paper ({res.message})." + (f" {res.hint}" if res.hint else "")
                )
            return await self._topic_search(as_topic(parsed), notes + [f"Could not look up the paper ({res.message})."])
        self.named = parsed
        return await self._resolved(parsed, res, notes)

    async def _resolved(self, parsed: ParsedRequest, res: Resolution, notes: list[str]) -> Reply:
        if res.kind == "paper":
            assert res.paper is not None
            if self.last_message is not None and self.last_message.target == "topic":
                # "what came after the transformer": words read as a topic turned out to name a paper
                self.last_message = self.last_message.model_copy(update={"target": "paper"})
            return await self._anchor_chosen_paper(res.paper, notes + ([res.note] if res.note else []))
        if res.kind == "ask":
            return self._ask_anchor(res.candidates, parsed, res.note)
        if res.kind == "missing" and _typed_title_as_subject(parsed):
            # "papers about A Critique And Improvement Of …" with no such paper here: its words are the subject
            said = (
                f"No paper titled “{short(parsed.anchor_query, 80)}” is in the source; searching its words as a topic."
            )
            return await self._topic_search(as_topic(parsed), [*notes, said])
        if res.kind == "missing":
            return self._missing(parsed, res.note or "That paper is not in the source.")
        return await self._topic_search(as_topic(parsed), notes)

    def _missing(self, parsed: ParsedRequest, note: str) -> Reply:
        """Say that the paper is not there; offer a search of its words as a topic instead of near misses."""
        if parsed.anchor_kind in ("doi", "arxiv", "s2", "corpus_id"):
            return self._error(note)
        if parsed.anchor_kind == "cited":
            # "Collins 1999" is no topic; its topic words ("... on parsing") are, if the user gave any
            if not parsed.intent.topic_terms:  # nothing to fall back on: what is on screen stays
                return self._reply(
                    note + " Name it by its title instead.", workflow=self.workflow, results=self.results
                )
            parsed = parsed.model_copy(update={"anchor_query": " ".join(parsed.intent.topic_terms)})
        words = short(parsed.anchor_query, 60)
        self.pending = Message(kind="new_search", text=parsed.text, target="topic", request=as_topic(parsed))
        self.question = Question(
            slot="fallback",
            text=f"Search for papers about “{words}” instead?",
            options=[
                Option(label=f"Yes, search papers about “{words}”", sets={"fallback": "topic"}),
                Option(label="No, I will name the paper differently", sets={}),
            ],
        )
        self.phase = "start"
        return self._reply(note, question=self.question)

    def _ask_scope(self, msg: Message) -> Reply:
        """The reader is not sure between two readings: they come back as the options of a question (asked once);
        the one chosen is acted on as if it had been read so."""
        self.pending = msg
        words = short(msg.text, 60)
        options = [Option(label=short(label, 90), sets={"scope": i}) for i, label in enumerate(msg.labels[:4])]
        options.append(Option(label="Neither: I will say it differently", sets={}))
        self.question = Question(slot="scope", text=msg.hint or f"What should “{words}” do?", options=options)
        return self._reply(self.question.text, **self._on_screen())

    async def _entity(self, msg: Message, *, new_search: bool = False) -> Reply:
        """A question about people, venues, organisations or a paper's authors, answered from the source. With
        ``new_search`` the answer replaces the search on screen, which joins the earlier ones, but only once
        the question is settled: "who wrote #99?" on a list of 50 leaves the list where it was."""
        text = msg.text
        query, taken = msg.entity, []
        named = query.paper if query is not None and query.paper else ""
        listed = [int(named[1:])] if named[1:].isdigit() and named.startswith("#") else []
        if query is not None and query.shape in _NAMES_A_PAPER and listed:
            # "who wrote #3?": a paper of the list on screen
            n, shown = listed[0], self.results
            if not 1 <= n <= len(shown):
                what = f"the list has {len(shown)}" if shown else "there is no list on screen"
                return self._reply(f"There is no result #{n}: {what}.", **self._on_screen())
            query = query.model_copy(update={"paper": shown[n - 1].paper.id})
        elif query is not None and query.shape in _NAMES_A_PAPER and named == "it":
            # "who wrote it?", "who are the authors of this paper?": the paper the search is about
            if self.anchor is None:
                return self._reply("Which paper do you mean? Name it by its title or short name.", **self._on_screen())
            query = query.model_copy(update={"paper": self.anchor.id})
        elif query is not None and query.shape in _NAMES_A_PAPER and query.paper:
            # "who wrote the Penn Treebank paper?": the paper is found the way an anchor is (names, short titles)
            found = await self._look_up(named_request(query.paper))
            if isinstance(found, SourceError):
                return self._error(f"Could not look up “{short(query.paper, 80)}” ({found.message}).")
            paper = found.best
            if paper is None and found.kind == "topic":  # a title typed in lower case, perhaps cut short
                hits = await self._runtime.source.match_paper(query.paper, limit=3)
                paper = next((p for p in hits if near_exact(query.paper, p.title)), None)
            if paper is None:
                said = found.note or f"I could not tell which paper “{query.paper}” is."
                return self._reply(said, **self._on_screen())
            if found.guessed:
                taken.append(f"I took {_paper_label(paper)}; name the paper differently if you meant another one.")
            query = query.model_copy(update={"paper": paper.id})
        if new_search:
            self._reset()
        self.request = text
        self.intent = Intent(kind="entity", request=text)
        async with self._search_slot():
            wf, run, answer = await answer_question(text, self._runtime, query=query)
        # a paper named by a pronoun or a number is kept as found: "what else did they write?" follows it
        self.entity_query = query if query is not None and query.shape in _NAMES_A_PAPER else msg.entity
        self._last_run = self._kept(run)
        self.answer = answer
        # so every paper an answer counts can be opened: those it was given (not all 500 searched for an org's)
        fed = {e.source for e in wf.inputs_of(wf.output) if e.port == "papers"} if wf.output else set()
        self.results = _answer_papers(answer, {k: v for k, v in run.values.items() if k in fed} if fed else run.values)
        self.phase = "answer"
        notes: list[str] = taken
        if len(self.results) > len(answer.reference):
            notes.append(
                f"All {len(self.results)} papers the answer counts are in the results list, to open, keep or export."
            )
        if wf.nodes:
            self._push(wf, "plan for your question")
        # how the person, venue or organisation was told apart ("kept … apart", "… also appears as …; merged")
        notes += [
            f"step “{t.node_id}”: {t.note}"
            for t in run.trace.nodes
            if t.note and (_is_entity_op(t.op) or t.op == "filter")
        ]  # and what an organisation's filter could see
        if run.errors:
            notes += [f"{n}: {e}" for n, e in run.errors.items()]
        return self._reply(
            answer.answer,
            answer=answer,
            workflow=wf if wf.nodes else None,
            trace=run.trace,
            notes=notes,
            results=self.results,
        )

    async def _compare_named(self, named: list[ParsedRequest]) -> Reply:
        """ "Compare BERT and ELMo": both papers' cards, side by side; what is on screen stays."""
        cards = []
        for n, parsed in enumerate(named, start=1):
            found = await self._look_up(parsed)
            if isinstance(found, SourceError):
                return self._error(f"Could not look up “{short(parsed.anchor_query, 80)}” ({found.message}).")
            if found.best is None:
                said = (
                    found.note or f"I could not find a paper called “{short(parsed.anchor_query, 80)}” in the source."
                )
                return self._reply(said, **self._on_screen())
            card = self._card(n, RankedPaper(paper=found.best, score=0.0)).split("\n")
            cards.append("\n".join(line for line in card if not line.startswith("Why it is here")))
        tail = f"Say e.g. “papers like {short(named[0].anchor_query, 60)}” to search from one of them."
        return self._reply("\n\n".join(cards) + "\n\n" + tail, **self._on_screen())

    async def _step_edit(self, asked: StepEdit) -> Reply:
        """A step of the workflow edited in words, as in the DAG panel; words that name no single step are told
        which steps there are, and nothing changes."""
        if self.workflow is None:
            return self._reply("There is no workflow yet: run a search first.", **self._on_screen())
        if asked.action == "rerun":
            return await self.rerun()
        edit = step_edit(self.workflow, asked)
        if isinstance(edit, str):
            return self._reply(edit, **self._on_screen())
        return await self.edit(edit)

    def _about_results(self, msg: Message) -> Reply:
        """ "Why is #3 here?", "keep #1 and #4", "export as BibTeX": about the list on screen, which stays."""
        keep = self._on_screen()
        if msg.command == "export":
            return self._reply(EXPORT_HELP, **keep)
        if msg.command == "how":
            return self._reply(how_made(self.workflow), **keep)
        picked = [(n, self.results[n - 1]) for n in dict.fromkeys(msg.refs) if 1 <= n <= len(self.results)]
        missing = [n for n in msg.refs if not 1 <= n <= len(self.results)]
        if not self.results:
            return self._reply("There is no result list on screen yet to pick from; run a search first.", **keep)
        if msg.command == "kinds":
            return self._reply(self._of_kind(msg.about), **keep)
        if msg.command == "count":
            return self._reply(self._counted(msg), **keep)
        if msg.command == "list_fact":
            fact = cast(ListFact, msg.about)
            themes = self._themes() if fact == "overview" else []
            return self._reply(list_facts.answer(self.results, fact, themes), **keep)
        notes = [f"There is no result #{n}: the list has {len(self.results)}." for n in missing[:3]]
        if not picked:
            asked = "Which result? Name it by its number, e.g. “why is #3 here?”."
            return self._reply(notes[0] if notes else asked, **keep)
        if msg.command == "keep":
            titles = "; ".join(f"#{n} “{short(item.paper.title, 80)}”" for n, item in picked[:5])
            more = f" and {len(picked) - 5} more" if len(picked) > 5 else ""
            return self._reply(
                f"Kept in your library: {titles}{more}.", notes=notes, keep=[i.paper.id for _, i in picked], **keep
            )
        if msg.command == "cite":
            cited = [f"#{n} {export.citation(item.paper)}" for n, item in picked[:5]]
            bib = export.to_bibtex([item.paper for _, item in picked[:5]]).strip()
            return self._reply("\n\n".join(cited) + f"\n\n```bibtex\n{bib}\n```", notes=notes, **keep)
        cards = [self._card(n, item) for n, item in picked[:5]]
        return self._reply("\n\n".join(cards), notes=notes, **keep)

    def _counted(self, msg: Message) -> str:
        """ "How many are from ACL?", "how many are after 2015?", "how many surveys?", "how many are by Manning?",
        "how many mention BERT?": the results of a period, a venue, a kind, an author or words, counted and
        numbered (from the reading's constraints); the list unchanged."""
        total = len(self.results)
        wanted = msg.constraints
        if kinds := wanted.get("paper_types"):
            return self._of_kind(kinds[0])
        if people := wanted.get("authors"):
            return self._by_author(people[0])
        lo, hi, venues = wanted.get("year_min"), wanted.get("year_max"), wanted.get("venues") or []
        if lo is None and hi is None and not venues:
            if msg.about:
                return self._mentioning(msg.about)
            return f"There are {total} results on the list."
        at_venue = profile().venue_matcher(venues) if venues else None
        found = [
            n
            for n, r in enumerate(self.results, 1)
            if (lo is None or (r.paper.year or 0) >= lo)
            and (hi is None or (r.paper.year or 9999) <= hi)
            and (at_venue is None or at_venue(r.paper))
        ]
        what = " ".join(
            part
            for part in (
                f"at {' or '.join(venues)}" if venues else "",
                f"from {lo} on" if lo is not None and hi is None else "",
                f"up to {hi}" if hi is not None and lo is None else "",
                (f"from {lo}" if lo == hi else f"from {lo}–{hi}") if lo is not None and hi is not None else "",
            )
            if part
        )
        if not found:
            return f"None of the {total} results is {what}."
        verb = "is" if len(found) == 1 else "are"
        hint = f"(Say “only {what}” to keep just those.)"
        return f"{len(found)} of the {total} results {verb} {what}: {numbered(found)}. {hint}"

    def _by_author(self, who: str) -> str:
        """ "How many are by Manning?": the results with an author of that name (``author_matcher``)."""
        return self._count_of(author_matcher([who]), f"is by {who}", f"are by {who}", f"is by {who}")

    def _mentioning(self, what: str) -> str:
        """ "How many are about attention?": the results whose title or abstract mentions the words."""
        return self._count_of(
            mention_matcher([what]), f"mentions “{what}”", f"mention “{what}”",
            f"mentions “{what}” in its title or abstract", f"(Say “focus on {what}” to rank them first.)",
        )  # fmt: skip

    def _count_of(self, matches: Callable[[Paper], bool], one: str, many: str, none: str, hint: str = "") -> str:
        """The results ``matches`` accepts, counted and numbered ("3 of the 50 results are by X: #1, #4, #9.")."""
        found = [n for n, r in enumerate(self.results, 1) if matches(r.paper)]
        total = len(self.results)
        if not found:
            return f"None of the {total} results {none}."
        tail = f" {hint}" if hint else ""
        return f"{len(found)} of the {total} results {one if len(found) == 1 else many}: {numbered(found)}.{tail}"

    def _of_kind(self, kind: str) -> str:
        """ "Which of these are surveys?": the numbers of the results of that kind, the list unchanged."""
        one = {"survey": "a survey", "resource": "a dataset or other resource"}.get(kind, "a method paper")
        many = {str(k): v for k, v in PAPER_TYPE_PLURALS.items()}.get(kind, "method papers")
        found = [(n, r) for n, r in enumerate(self.results, 1) if paper_type(r.paper) == kind]
        total = len(self.results)
        if not found:
            return f"None of the {total} results is {one}."
        listed = "; ".join(f"#{n} “{short(r.paper.title, 80)}”" for n, r in found[:10])
        more = f" and {len(found) - 10} more" if len(found) > 10 else ""
        said = (
            f"{len(found)} of the {total} results is {one}"
            if len(found) == 1
            else f"{len(found)} of the {total} are {many}"
        )
        keep_only = f" (Say “only {many.split()[0]}” to keep just those.)" if kind != "method" else ""
        return f"{said}: {listed}{more}.{keep_only}"

    def _card(self, n: int, item: RankedPaper) -> str:
        """One result told in words: what it is, why it is on the list, where to read it."""
        p = item.paper
        names = [a.name for a in p.authors]
        by = f" by {', '.join(names[:3])}{' et al.' if len(names) > 3 else ''}" if names else ""
        reasons = explain_why(self.workflow, item)
        where_when = _paper_label(p).removeprefix(p.title).strip(" ()")
        head = f"#{n} “{p.title}”" + (f" ({where_when})" if where_when else "") + by
        lines = [head if head.endswith(".") else head + "."]  # "… et al." ends the sentence once
        lines.append("Why it is here: " + ("; ".join(reasons) if reasons else "its score in the final ranking") + ".")
        if p.abstract:
            lines.append("Abstract: " + short(p.abstract, 400))
        if p.canonical_url:
            lines.append(f"Link: {p.canonical_url}")
        return "\n".join(lines)

    def _ask_anchor(self, papers: list[Paper], parsed: ParsedRequest, note: str | None = None) -> Reply:
        options, seen = [], set()
        for p in papers:
            label = _paper_label(p)
            if label.lower() in seen:
                label = f"{label} [{p.id}]"
            seen.add(label.lower())
            options.append(Option(label=label, sets={"anchor_id": p.id}))
        options.append(Option(label="None of these — search by my words", sets={}))
        self.anchor_candidates = papers
        self.pending = Message(kind="new_search", text=parsed.text, target="topic", request=as_topic(parsed))
        asked = f"Which paper do you mean by “{short(parsed.anchor_query, 120)}”?"
        self.question = Question(slot="anchor", text=f"{note} Is it one of these?" if note else asked, options=options)
        self.phase = "anchor"
        return self._reply(self.question.text, question=self.question, candidates=papers)

    async def _anchor_chosen(self, anchor_id: str | None) -> Reply:
        self.question = None
        if not anchor_id:
            pending, self.pending = self.pending, None
            if pending is None or pending.request is None:
                return self._reply(HELP)
            self.last_message = pending
            return await self._topic_search(pending.request, ["Searching by your words, without an anchor paper."])
        paper = next((p for p in self.anchor_candidates if p.id == anchor_id), None)
        if paper is None:
            try:
                paper = await self._runtime.source.get_paper(anchor_id)
            except SourceError as exc:
                return self._error(f"Could not load that paper: {exc.message}")
        return await self._anchor_chosen_paper(paper, [])

    def _themes(self) -> list[tuple[str, list[int]]]:
        """The list's sub-topics, as the sub-area question finds them: a phrase and the result numbers under it."""
        named = named_clusters([r.paper for r in self.results], self.anchor, self.intent)
        return [(phrase or ", ".join(label[:2]), sorted(i + 1 for i in members)) for phrase, label, members in named]

    async def _anchor_chosen_paper(self, paper: Paper, notes: list[str]) -> Reply:
        self.anchor = paper
        self.anchor_candidates = []
        self.intent = apply_updates(self.intent, {"anchor_id": paper.id, "topic": None, "paper_types": []})
        if self.last_message is not None and self.last_message.about == "citation_count":
            # "how often is BLEU cited?": the count, then its citers
            notes = [*notes, _citation_count(paper)]
        self.phase = "clarify"
        return await self._clarify_or_search(notes)

    async def _topic_search(self, parsed: ParsedRequest, notes: list[str]) -> Reply:
        """No paper: search the topic. Words that match nothing in the source get "nothing matches", not a list."""
        self.anchor = None
        self.anchor_candidates = []
        self.request = parsed.text or self.request
        self.intent = apply_updates(parsed.intent, {"anchor_id": None, "direction": None})
        self.intent = whole_request(self.intent, parsed.text or "")
        topic = self.intent.topic or parsed.anchor_query or self.request
        if self.last_message is not None and self.last_message.kind in ("new_search", "answer"):
            self.last_message = self.last_message.model_copy(update={"target": "topic"})
        src = self._runtime.source
        topic, typos = respelt_topic(topic, src.word_frequency)
        if typos:  # "sentimnet analysis": no paper holds the typed word, many hold the word one letter away
            self.intent = apply_updates(self.intent, {"topic": topic})
            said = ", ".join(f"“{typed}”" for typed in typos)
            notes = [*notes, f"Searching for “{short(topic, 80)}” ({said} is in no paper of the source)."]
        try:
            probe = await src.search_papers(topic, limit=5, mode="lexical")
        except (SourceUnavailable, RateLimited) as exc:
            raise _SourceDown(exc, "to search the topic") from exc
        except SourceError:
            probe = None  # a source without lexical search: let the search itself find out
        if probe is not None and not probe:
            self.phase = "start"
            return self._reply(
                f"Nothing in the source matches “{short(topic, 80)}” (it holds {src.coverage()}). "
                "Try other words, a paper title or a name like “TextRank”.",
                notes=notes,
            )
        self.phase = "clarify"
        return await self._clarify_or_search(notes)

    # --- answers ----------------------------------------------------------------------------------------
    async def _answer(self, msg: Message) -> Reply:
        q = self.question
        if q is None:
            return self._reply(HELP)
        if q.slot == "anchor":
            if msg.option is not None:
                return await self._anchor_chosen(q.options[msg.option].sets.get("anchor_id"))
            assert msg.request is not None  # the user named the paper better: look it up again, same request
            keep = {
                k: v
                for k, v in msg.request.intent.model_dump(exclude_defaults=True).items()
                if k not in ("request", "notes", "topic", "paper_types")
            }
            self.intent = apply_updates(self.intent, keep)
            self.question = None
            return await self._resolve(msg.request)
        if q.slot in ("scope", "fallback"):
            return await self._answer_pending(q, msg)
        updates = answer_updates(q, msg.option, msg.updates)
        if q.slot == "lift" and not updates:  # "keep the filter": the list stays as it is
            self.question = None
            return self._reply("The filter stays.", results=self.results, workflow=self.workflow)
        self.intent = apply_answer(self.intent, updates, None if msg.option is not None else msg.text)
        self.question = None
        notes = (
            []
            if updates or msg.option is not None
            else [f"I kept “{msg.text}” as a note; it did not change a search setting."]
        )
        if self.phase == "results" and self.workflow is not None:
            return await self._search_again(f"your answer: {short(msg.text, 60)}", updates, notes)
        return await self._clarify_or_search(notes)

    async def _answer_pending(self, q: Question, msg: Message) -> Reply:
        pending, self.pending, self.question = self.pending, None, None
        choice = q.options[msg.option].sets if msg.option is not None else {}
        if pending is None:
            return self._reply(HELP)
        if q.slot == "scope":
            index = choice.get("scope")
            if not isinstance(index, int) or not 0 <= index < len(pending.alternatives):
                return self._reply("Say it differently and I will read it again.", **self._on_screen())
            chosen = pending.alternatives[index]
            self.last_message = chosen
            return await self._dispatch(chosen)
        if choice.get("fallback") == "topic" and pending.request is not None:
            self.last_message = pending
            self._reset()
            return await self._topic_search(pending.request, [])
        self.phase = "start"
        return self._reply("Name the paper by its exact title (in quotes), a DOI or an id — or tell me the topic.")

    # --- clarification ----------------------------------------------------------------------------------
    async def _candidate_set(self, notes: list[str]) -> list[Paper]:
        """A cheap candidate set for the anchor + direction; the clarifier's options come from it."""
        key = f"{self.anchor.id if self.anchor else self.intent.topic or self.request}|{self.intent.direction}"
        if key not in self._candidates:
            self._candidates[key] = await self._fetch_candidates(notes)
        cands = self._candidates[key]
        f = self.intent.filters()
        f.venue = None  # venues are matched by acronym below, not by substring of the long names
        out = [p for p in cands if f.accepts(p)]
        if self.intent.venues:
            out = [p for p in out if any(at_venue(p, v) for v in self.intent.venues)]
        return out

    async def _fetch_candidates(self, notes: list[str]) -> list[Paper]:
        src, a, d = self._runtime.source, self.anchor, self.intent.direction
        papers: list[Paper] = []
        try:
            if a is None:
                query = self.intent.topic or self.request
                return [h.paper for h in await src.search_papers(query, limit=CANDIDATE_LIMIT)]
            if d == "successor":
                papers = await src.citations(a.id, limit=CANDIDATE_LIMIT * 2)
            elif d == "predecessor":
                try:
                    papers = await src.references(a.id, limit=CANDIDATE_LIMIT)
                except SourceError:
                    papers = []
            if len(papers) < 20:
                papers += await self._near(a)
        except SourceError as exc:
            notes.append(f"Could not gather candidates for the questions ({exc.message}).")
        if a is not None:
            papers = [p for p in papers if p.id != a.id]
            if d == "predecessor" and a.year:
                papers = [p for p in papers if not p.year or p.year <= a.year]
            elif d == "successor" and a.year:
                papers = [p for p in papers if not p.year or p.year >= a.year]
        return list({p.id: p for p in papers}.values())

    async def _near(self, anchor: Paper) -> list[Paper]:
        """Papers close to the anchor. Over a service with no search by meaning, its recommendations (one request,
        which the search's own dense step reuses) rather than a relevance search with the whole abstract."""
        src = self._runtime.source
        if not src.searches_by_meaning():
            try:
                return await src.recommend([anchor.id], limit=CANDIDATE_LIMIT)
            except SourceError:
                pass  # no recommendations for it (or the budget is spent): its text is the query
        return [h.paper for h in await src.search_papers(anchor.text, limit=CANDIDATE_LIMIT)]

    async def _next_question(self, notes: list[str]) -> tuple[Question | None, str]:
        max_turns = self._runtime.settings.max_turns
        cands = await self._candidate_set(notes) if self.turns < max_turns else []
        decision = next_question(self.intent, cands, self.asked, self.turns, max_turns, self.anchor)
        q = decision.question
        if q is not None and self._runtime.llm is not None:
            q, more = await llm_question(self._runtime.llm, self.intent, self.anchor, cands, q)
            notes.extend(more)
        return q, decision.reason

    def _ask(self, q: Question) -> None:
        self.question = q
        self.asked.append(q.slot)
        self.turns += 1
        if q.slot not in _META_SLOTS and self.phase != "results":
            self.asked_before_results += 1

    async def _clarify_or_search(self, notes: list[str]) -> Reply:
        q, reason = await self._next_question(notes)
        budget = self._runtime.settings.questions_before_results
        if q is None or (q.slot not in _META_SLOTS and self.asked_before_results >= budget):
            why = (
                f"Searching now: {reason}."
                if q is None
                else f"Searching now; {q.slot} and other questions can refine the results."
            )
            return await self._search(notes + [why])
        self._ask(q)
        self.phase = "clarify"
        return self._reply(q.text, question=q, notes=notes)

    async def _offer_question(self, reply: Reply) -> Reply:
        """After results: the next question worth asking, offered to refine them (one at a time)."""
        if reply.error is not None or not reply.results:
            return reply
        q, _ = await self._next_question(reply.notes)
        if q is None or q.slot in _META_SLOTS:
            return reply
        self._ask(q)
        reply.question = q
        return reply

    # --- workflows and runs -----------------------------------------------------------------------------
    def _push(self, wf: Workflow, reason: str) -> WorkflowVersion:
        prev = self.workflow
        lines, plain = _changes(prev, wf) if prev is not None else ([], [])
        v = WorkflowVersion(
            version=len(self.versions) + 1,
            workflow=wf,
            reason=reason,
            diff=lines,
            changes=plain,
            intent=self.intent.model_copy(),
        )
        self.versions.append(v)
        self.current_version = len(self.versions) - 1
        return v

    def _restore_intent(self) -> None:
        """Back at an earlier version, the request is what it was then: "undo" after "newest first" does not
        go on saying "newest first" over a list in the best-match order."""
        v = self.versions[self.current_version]
        if v.intent is not None:
            self.intent = v.intent.model_copy()

    async def _induce(self, reason: str | None = None) -> list[str]:
        anchor_query = self.anchor.id if self.anchor else ""
        compact = self._runtime.settings.llm_prompt == "compact"
        text = self.request if self.anchor else (self.intent.topic or self.request)
        induction = await induce(self.intent, anchor_query, self._runtime.llm, text, self.anchor, compact)
        what = direction_results(self.intent.direction)
        if self.anchor is None and self.intent.topic:
            what = f"the literature on “{short(self.intent.topic, 80)}”"
        self._push(induction.workflow, reason or f"{induction.origin} workflow for {what}")
        self.edited = False
        return induction.notes

    async def _search(self, notes: list[str], offer: bool = True) -> Reply:
        self.question = None
        notes = notes + await self._induce()
        reply = await self._run(notes, coverage=True)
        if reply.error is None and (lift := lift_offer(self.intent, len(reply.results))) is not None:
            # the user's own filter left few papers: said and offered to lift, even after "search now" (which only
            # skips questions about the search, not this one about its result)
            self.question = reply.question = lift  # not a question about the search: no turn of its budget
            return reply
        return await self._offer_question(reply) if offer else reply

    async def _search_again(self, reason: str, updates: dict[str, Any], notes: list[str]) -> Reply:
        """An answer given with the results on screen: the search is induced again from the updated request —
        or, when the workflow was edited since, the answer becomes edits of it, so the edits survive."""
        if not self.edited or self.workflow is None:
            notes = notes + await self._induce(reason)
            return await self._offer_question(await self._run(notes, coverage=True))
        ref = refine(self.workflow, self.intent, Feedback(text=reason, updates=updates), self.results)
        if not ref.changed:
            return self._reply(
                "Your answer is noted; it does not map onto the edited workflow. Start the search again to apply it.",
                results=self.results,
                workflow=self.workflow,
            )
        self._push(ref.workflow, ref.reason)
        return await self._run(notes + ref.notes)

    async def _narrow_answer(self, msg: Message) -> Reply:
        """ "only after 2010" after "papers by X": the same question, narrowed, answered again."""
        query = self.entity_query
        assert query is not None
        update: dict[str, Any] = {k: v for k, v in msg.updates.items() if k in ("year_min", "year_max")}
        if msg.updates.get("venues"):
            update["venue"] = msg.updates["venues"][0]
        if query.person and query.shape in ("author_profile", "author_topics"):
            update["shape"] = "author_papers"  # a profile has no period or venue: their papers do
        narrowed = query.model_copy(update=update)
        question = f"{self.request} ({short(msg.text, 60)})"
        reply = await self._entity(Message(kind="entity", text=question, entity=narrowed, why=msg.why))
        floor = msg.updates.get("min_citations")
        if floor and reply.error is None:
            self._cited_at_least(reply, int(floor))
        return reply

    def _cited_at_least(self, reply: Reply, floor: int) -> None:
        """ "only the ones with more than 100 citations" under an answer's papers: those cited that often by a
        count or by the citing papers the source holds; a paper no index counted is kept and said (issue 33)."""
        judged = [(r, count_of(r.paper).meets(floor)) for r in reply.results]
        kept = [r for r, meets in judged if meets is not False]
        unknown = [i for i, r in enumerate(kept, 1) if count_of(r.paper).meets(floor) is None]
        reply.results = self.results = kept
        said = f"{len(kept) - len(unknown)} of the {len(judged)} papers are cited at least {floor} times"
        if unknown:
            said += (
                f"; {len(unknown)} more have no citation count in the source and are kept ({numbered(unknown, 8)}): "
                f"unknown is not fewer than {floor}"
            )
        reply.notes = [said + ".", *(n for n in reply.notes if "the answer counts are in the results" not in n)]

    async def _refine(self, msg: Message) -> Reply:
        if self.phase == "answer" and self.entity_query is not None and msg.updates:
            return await self._narrow_answer(msg)
        if self.phase == "clarify" and msg.updates:
            # a constraint typed instead of an answer before the results: the search being set up takes it,
            # and the question it skipped is not asked again
            self.intent = apply_updates(self.intent, msg.updates, msg.text)
            self.question = None
            return await self._clarify_or_search([f"Noted: “{short(msg.text, 60)}” narrows the search."])
        if self.workflow is None or msg.feedback is None:
            return self._reply(HELP)
        if msg.updates and self.question is not None and not self.edited:
            # it also answers the question offered with the results: the search is induced again with the answer,
            # as if it had been given before the results
            self.intent = apply_answer(self.intent, msg.updates, msg.text)
            self.question = None
            return await self._search_again(f"your answer: {short(msg.text, 60)}", msg.updates, [])
        self.question = None
        if self._runtime.llm is not None:
            ref = await refine_llm(self._runtime.llm, self.workflow, self.intent, msg.feedback, self.results)
        else:
            ref = refine(self.workflow, self.intent, msg.feedback, self.results)
        return await self._apply_refinement(ref)

    async def _apply_refinement(self, ref: Refinement) -> Reply:
        if not ref.changed:
            return self._reply(
                " ".join(ref.notes) or "Nothing to change.",
                results=self.results,
                workflow=self.workflow,
                notes=ref.notes,
            )
        self.intent = ref.intent
        self._push(ref.workflow, ref.reason)
        self.edited = True
        had = len(self.results)
        reply = await self._run(ref.notes)
        if had and reply.error is None and not reply.results:  # "only surveys" on a list that holds none
            reply.notes.append(f"No paper is left after “{ref.reason}”; say “undo” to get the {had} papers back.")
            run = self._last_run
            # why it may be the records' fault: "12 of the 50 papers name their authors' institutions"
            reply.notes += [t.note for t in (run.trace.nodes if run else []) if t.note and t.op == "filter"]
        return reply

    def _kept(self, run: RunResult) -> RunResult:
        """What the session keeps of a run: its trace, output and errors. The values of its steps (thousands of
        papers: 9 MB a search, kept by every session for as long as it lived, were what grew a server by the
        visitor) go to the runtime's ``recent_runs``, which holds the most recent runs of all sessions;
        ``_values`` brings them back, from there or by running the workflow again over the node cache."""
        self._run_key = uuid.uuid4().hex
        self._runtime.recent_runs.set(self._run_key, run.values, weight=values_size(run.values))
        return dataclasses.replace(run, values={})

    async def _values(self) -> dict[str, Any]:
        """The values of the last run's steps (for "run this step", "step", "is X on the list?")."""
        if self._last_run is None or self._run_key is None:
            return {}
        values = self._runtime.recent_runs.get(self._run_key)
        wf = self.workflow
        if values is None and wf is not None:
            rt = self._runtime
            async with self._search_slot():  # mostly cached steps; the cheap ones computed again
                values = (await execute(wf, rt.context(), rt.node_cache)).values
            rt.recent_runs.set(self._run_key, values, weight=values_size(values))
        return values or {}

    @asynccontextmanager
    async def _search_slot(self) -> AsyncIterator[None]:
        """One of the server's search slots for a workflow run (``pilot.gate``); while queued, the observer (the UI's
        status line) is told how many searches are ahead. The time spent queued is not the turn's: its time budget
        (for waiting on sources) and its hard stop move by as much."""
        gate = self._runtime.searches
        observer = self._observer

        def queued(ahead: int) -> None:
            if observer is not None and ahead:
                plural = "es" if ahead != 1 else ""
                observer(
                    f"Your search is queued: {ahead} search{plural} ahead of yours "
                    f"(this server runs {gate.slots} at once)"
                )

        asked = time.perf_counter()
        async with gate.slot(queued):
            waited = time.perf_counter() - asked
            if waited > 0.05:
                if self._turn_budget is not None:
                    self._turn_budget.pause(waited)
                if self._turn_watch is not None:
                    self._turn_watch.queued(waited)
            yield

    def _progress_to(self, observer: Callable[[Any], None]) -> Callable[[Any], None]:
        """Progress updates for ``observer``: previews without the anchor, the first one timed for the turn."""
        anchor_id = self.anchor.id if self.anchor else None
        budget = self._turn_budget
        moving = self._moving()

        def forward(update: Any) -> None:
            moving()
            if isinstance(update.preview, list):
                update.preview = [r for r in update.preview if isinstance(r, RankedPaper) and r.paper.id != anchor_id]
                if update.preview and budget is not None and budget.usage.first_results_s is None:
                    budget.usage.first_results_s = round(time.perf_counter() - budget.started, 3)
            observer(update)

        return forward

    def _moving(self) -> Callable[..., None]:
        """Told of every step event of the turn's run: a run that moves is not stopped for being slow."""
        watch = self._turn_watch
        return (lambda *_: watch.moved()) if watch is not None else (lambda *_: None)

    async def _run(self, notes: list[str], coverage: bool = False) -> Reply:
        wf = self.workflow
        assert wf is not None
        rt = self._runtime
        version = self.versions[self.current_version]
        try:
            async with self._search_slot():
                if self._observer is None:
                    run = await execute(wf, rt.context(), rt.node_cache, on_event=self._moving())
                else:
                    observer = self._progress_to(self._observer)
                    run = await run_progressively(wf, rt.context(), rt.node_cache, None, observer)
        except WorkflowError as exc:  # validated before; kept so a bug is a message, not a crash
            return self._error(f"The workflow cannot run: {exc}", notes)
        self._last_run = self._kept(run)
        notes = list(notes) + [f"the step “{step_name(wf, n)}” failed: {e}" for n, e in run.errors.items()]
        # what a citation floor could not judge is said with the list, not only in the step's trace (issue 33)
        notes += [t.note for t in run.trace.nodes if t.op == "filter" and t.note and "no citation count" in t.note]
        out = run.output
        error = None
        if isinstance(out, Answer):
            self.answer = out
            self.results = []
        elif isinstance(out, list):
            anchor_id = self.anchor.id if self.anchor else None
            self.results = [r for r in out if isinstance(r, RankedPaper) and r.paper.id != anchor_id]
        else:
            error = "The search did not produce results: " + (
                "; ".join(dict.fromkeys(run.errors.values())) or "the output step did not run"
            )
            if self.results:  # a failed re-run (a source down, a step timing out) must not cost the list the user had
                error += " The previous results are still shown; run the workflow again when the problem is gone."
        self.phase = "results"
        if coverage and error is None:
            notes = coverage_notes(wf, run, self.anchor, self.intent, self.results) + notes
        what = direction_results(self.intent.direction)
        about = f" for “{self.anchor.title}”" if self.anchor else ""
        if self.anchor is None and self.intent.topic:
            kinds = self.intent.paper_types
            what = PAPER_TYPE_PLURALS[kinds[0]] if len(kinds) == 1 else "papers"  # "surveys on “X”"
            about = f" on “{short(self.intent.topic, 120)}”"
        i = self.intent
        if also := [p for n in wf.nodes if n.id.startswith("also_") for p in papers_of(run.values.get(n.id))]:
            about += " that also cite " + " and ".join(f"“{short(p.title, 80)}”" for p in also)
        if i.venues and self.anchor is None:  # "at KDD": said, so an empty list says which venue left nothing
            about += " at " + " or ".join(i.venues)
        if left := left_out_words(i.exclude_terms, i.exclude_venues, i.paper_types, i.exclude_years):
            about += f", {left}"
        if i.publication_kinds:
            about += f", {kinds_text(i.publication_kinds)}"
        newest = next(
            (n.params["newest_years"] for n in wf.nodes if n.op == "filter" and n.params.get("newest_years")), 0
        )
        if newest and (years := [r.paper.year for r in self.results if r.paper.year]):
            # "recent work on X" keeps the newest years the source holds on X: which years those are is said
            about += f", from the newest {newest} years the source holds on it ({min(years)}–{max(years)})"
        if i.order != "score":  # "the most cited papers on X" is a list in another order: said, not silently done
            about += f", {RESULT_ORDER_WORDS[i.order]}"
        message = (
            f"Found {len(self.results)} paper{'' if len(self.results) == 1 else 's'} — {what}{about} "
            f"(workflow v{version.version}: {version.reason})."
            if error is None
            else error
        )
        self._say("assistant", message)
        return Reply(
            message=message,
            results=self.results,
            answer=self.answer if isinstance(out, Answer) else None,
            workflow=wf,
            trace=run.trace,
            diff=version.diff,
            changes=version.changes,
            notes=notes,
            error=error,
        )
