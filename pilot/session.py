"""One conversation: anchor, request, dialogue, intent, workflow versions, last results.

    session = Session(runtime)
    reply = await session.user_says('Show me work that came after "Bleu: …" and used its ideas.')
    while reply.question:                       # one question per turn, 3–5 options + free text
        reply = await session.choose(0)         # or: await session.user_says("only after 2008")
    reply.results                               # ranked papers with evidence
    reply = await session.user_says("only after 2008")   # feedback -> workflow edit -> new version -> re-run

The session is a pydantic model: ``model_dump_json()`` saves it, ``Session.restore(json, runtime)``
brings it back. The runtime (sources, models, caches) is never serialised. No method raises for user
input: problems come back as ``Reply.error`` in plain words, fallbacks as ``Reply.notes``.
"""

from __future__ import annotations

import difflib
import functools
import json
import logging
import re
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from clarifier.llm_questions import llm_question
from clarifier.policy import apply_answer, interpret_answer, match_option, next_question, option_updates
from clarifier.question import Option, Question
from pilot.domain import profile
from pilot.intent import ParsedRequest, apply_updates, detect_direction, parse_request
from pilot.kg import answer_question, classify
from pilot.kg import parse as parse_entity_question
from pilot.models import Answer, Intent, Paper, RankedPaper, SourceUsage
from pilot.runtime import Runtime
from pilot.sources.base import RateLimited, SourceError, SourceUnavailable
from pilot.sources.budget import budget_scope, current_budget
from pilot.text import normalize_title
from pilot.topic import TopicRequest, read_topic
from pilot.vocab import direction_results
from workflows.diff import diff as workflow_diff
from workflows.diff import short
from workflows.edit import apply_edit, describe_edit
from workflows.executor import RunResult, execute
from workflows.executor import run_node as exec_run_node
from workflows.inducer import induce
from workflows.model import RunTrace, Workflow
from workflows.progressive import run_progressively
from workflows.refine import Refinement, ResultFilters, filter_results, referenced_indices, refine, refine_llm
from workflows.refine import rate as rate_paper
from workflows.validate import WorkflowError, validate

log = logging.getLogger(__name__)

Phase = Literal["start", "anchor", "clarify", "results", "answer"]
CANDIDATE_LIMIT = 150
_SKIP_RE = re.compile(
    r"^\W*(?:just |please )?(?:search|go|skip|search now|show (?:me )?(?:the )?results"
    r"|no more questions|that'?s (?:all|it))\W*$",
    re.I,
)
_ID_KINDS = ("corpus_id", "doi", "arxiv", "s2")


class _SourceDown(Exception):
    """The source could not be reached to look up the anchor: the turn is undone, not half-done."""

    def __init__(self, error: SourceError):
        super().__init__(str(error))
        self.error = error


class WorkflowVersion(BaseModel):
    version: int
    workflow: Workflow
    reason: str
    diff: list[str] = Field(default_factory=list, description="human-readable changes vs the previous version")


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
    diff: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    error: str | None = None
    usage: SourceUsage | None = Field(None, description="what this turn spent at remote sources")


def _turn(method):
    """A user action is one turn: everything it fetches spends one request budget (``PILOT_REQUEST_BUDGET``),
    and its reply says what the turn spent and, when the budget ran out, what it left out."""

    @functools.wraps(method)
    async def turn(self: Session, *args: Any, **kwargs: Any) -> Any:
        if current_budget() is not None:  # called from another turn (user_says -> search_now): same budget
            return await method(self, *args, **kwargs)
        with budget_scope(self._runtime.settings.turn_budget()) as budget:
            self._turn_budget = budget
            try:
                reply = await method(self, *args, **kwargs)
            finally:
                self._turn_budget = None
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
    return (
        f"These results are partial: the turn used its request budget ({usage.budget} requests to the paper "
        f"source) and skipped {shown}. Ask again to continue (what was fetched is cached and free), or raise "
        "PILOT_REQUEST_BUDGET."
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


def _paper_label(p: Paper) -> str:
    meta = ", ".join(str(x) for x in (p.year, profile().venue_label(p)) if x)
    return f"{p.title} ({meta})" if meta else p.title


def _near_exact(query: str, title: str, inside: bool = True) -> bool:
    """``query`` is ``title`` (give or take a typo), or, with ``inside``, a request with the title typed in it."""
    q, t = normalize_title(query), normalize_title(title)
    if not q or not t:
        return False
    if q == t:
        return True
    # an unquoted title typed inside a request ("predecessors of deep residual learning for image recognition")
    if inside and len(t.split()) >= 4 and f" {t} " in f" {q} ":
        return True
    return difflib.SequenceMatcher(None, q, t).ratio() >= 0.92


def _cited_papers(answer: Answer, values: dict[str, Any]) -> list[RankedPaper]:
    """The papers an answer cites, in citation order, each saying which citation it is."""
    by_url: dict[str, RankedPaper] = {}
    for value in values.values():
        for item in value if isinstance(value, list) else []:
            if isinstance(item, RankedPaper) and item.paper.canonical_url:
                by_url.setdefault(item.paper.canonical_url, item)
    out: list[RankedPaper] = []
    for key, url in answer.reference.items():  # keys are numbered from 1 in order of first use
        item = by_url.get(url)
        if item is not None and all(r.paper.id != item.paper.id for r in out):
            ev = item.evidence.model_copy(update={"reason": f"cited as [{key.strip('[]')}] in the answer"})
            out.append(item.model_copy(update={"evidence": ev}))
    return out


def _direction_without_title(request: str, title: str | None) -> str | None:
    req, t = normalize_title(request), normalize_title(title)
    if not t or f" {t} " not in f" {req} ":
        return None
    return detect_direction(f" {req} ".replace(f" {t} ", " "), full_text=request)[0]


def _id_matches(query: str, paper: Paper) -> bool:
    q = query.strip().lower()
    values = {
        paper.id.lower(),
        paper.id.split(":", 1)[-1].lower(),
        *(str(v).lower() for v in paper.external_ids.values()),
    }
    return q in values or q.split(":", 1)[-1] in values


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
    versions: list[WorkflowVersion] = Field(default_factory=list)
    current_version: int = -1
    results: list[RankedPaper] = Field(default_factory=list)
    answer: Answer | None = None
    kept_ids: list[str] = Field(default_factory=list)

    _runtime: Runtime = PrivateAttr()
    _last_run: RunResult | None = PrivateAttr(default=None)
    _candidates: dict[str, list[Paper]] = PrivateAttr(default_factory=dict)
    _observer: Callable[[Any], None] | None = PrivateAttr(default=None)
    _turn_budget: Any = PrivateAttr(default=None)

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

    def _reply(self, message: str, **kw: Any) -> Reply:
        self._say("assistant", message)
        return Reply(message=message, **kw)

    def _error(self, message: str, notes: list[str] | None = None) -> Reply:
        self._say("assistant", message)
        return Reply(message=message, error=message, notes=notes or [], workflow=self.workflow, results=self.results)

    def _known_venues(self) -> list[str]:
        venues = [profile().venue_label(p) for ps in self._candidates.values() for p in ps]
        return sorted({v for v in venues if v})

    # --- the conversation ---------------------------------------------------------------------------
    @_turn
    async def user_says(self, text: str) -> Reply:
        text = " ".join((text or "").split())
        if not text:
            return self._error("Please type a request, e.g. a paper title in quotes and what you are looking for.")
        self._say("user", text)
        return await self._turn_boundary(self._message, text)

    async def _message(self, text: str) -> Reply:
        if self.phase in ("start", "answer"):
            return await self._first_message(text)
        if self.phase == "anchor":
            return await self._anchor_text(text)
        parsed = parse_request(text)
        if parsed.anchor_kind in ("title", *_ID_KINDS) and parsed.intent.direction:
            self._reset()  # a new paper and direction: a new search, whatever state we were in
            return await self._first_message(text)
        if self.phase == "clarify" and self.question is not None:
            if _SKIP_RE.match(text):
                return await self.search_now()
            return await self._answer_text(text)
        if self.phase == "results":
            return await self._feedback(text)
        return await self._first_message(text)

    async def _turn_boundary(self, turn: Callable[..., Awaitable[Reply]], *args: Any) -> Reply:
        """The session's one never-raise boundary (the UI controller and the CLI have theirs): whatever
        goes wrong below it, the user gets a readable reply and keeps the conversation. A source down
        before a new search could start undoes the turn; anything else is said in a sentence."""
        saved = self._snapshot()
        try:
            return await turn(*args)
        except _SourceDown as down:
            # a new search that could not even start must not cost the user the conversation they had
            self._restore(saved)
            err = down.error
            return self._error(
                f"I could not reach {err.source} to look up the paper ({err.message})."
                + (f" {err.hint}." if err.hint else "")
                + " Nothing was changed; send the request again in a moment."
            )
        except Exception as exc:  # noqa: BLE001 - the boundary: a bug must not kill the conversation
            log.exception("turn failed")
            return self._error(f"Something went wrong in this turn ({type(exc).__name__}: {exc}). Please try again.")

    def _snapshot(self) -> tuple[dict[str, Any], Any, Any]:
        # the cached candidates and last run are replaced on a new search, never mutated: references do
        return self.model_dump(mode="json"), self._candidates, self._last_run

    def _restore(self, saved: tuple[dict[str, Any], Any, Any]) -> None:
        data, self._candidates, self._last_run = saved
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
            updates = option_updates(q, int(option_index))
        except (IndexError, ValueError) as exc:
            return self._error(str(exc))
        self._say("user", q.options[int(option_index)].label)
        return await self._turn_boundary(self._chosen, q, updates)

    async def _chosen(self, q: Question, updates: dict[str, Any]) -> Reply:
        if q.slot == "anchor":
            return await self._anchor_chosen(updates.get("anchor_id"))
        self.intent = apply_answer(self.intent, updates)
        self.question = None
        return await self._clarify_or_search([])

    @_turn
    async def search_now(self) -> Reply:
        if self.anchor is None and not self.request:
            return self._error("Tell me first which paper (or topic) to start from.")
        self.question = None
        return await self._search([])

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
        assert before is not None and self.workflow is not None
        lines = workflow_diff(before, self.workflow).summary()
        reply = await self._run([f"back to version v{version}"])
        reply.diff = lines
        return reply

    @_turn
    async def edit(self, edit: Any) -> Reply:
        if self.workflow is None:
            return self._error("There is no workflow to edit yet.")
        try:
            new = apply_edit(self.workflow, edit)
            reason = f"your edit: {describe_edit(edit)}"
        except WorkflowError as exc:
            return self._error(f"That edit was not applied: {exc}")
        self._push(new, reason)
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
        return await self._run([])

    @_turn
    async def rerun(self) -> Reply:
        """Run the current version again without recording a new one: nothing in the workflow changed."""
        if self.workflow is None:
            return self._error("There is no workflow to run yet.")
        reply = await self._run([])
        reply.diff = []
        return reply

    @_turn
    async def undo(self) -> Reply:
        if self.current_version <= 0:
            return self._error("There is no earlier version to go back to.")
        before = self.workflow
        self.current_version -= 1
        assert before is not None and self.workflow is not None
        lines = workflow_diff(before, self.workflow).summary()
        reply = await self._run([f"back to version {self.versions[self.current_version].version}"])
        reply.diff = lines
        return reply

    @_turn
    async def run_node(self, node_id: str) -> NodeRun:
        wf = self.workflow
        if wf is None or not wf.has_node(node_id):
            return NodeRun(
                node_id=node_id, op="?", status="failed", error=f"there is no node {node_id!r} in the current workflow"
            )
        values = self._last_run.values if self._last_run is not None else {}
        node = wf.node(node_id)
        try:
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

    # --- first message: entity question, or anchor + direction ----------------------------------------
    def _reset(self) -> None:
        keep = {"id", "history", "kept_ids"}
        fresh = Session(self._runtime)
        for name in type(self).model_fields:
            if name not in keep:
                setattr(self, name, getattr(fresh, name))
        self._candidates = {}
        self._last_run = None

    async def _first_message(self, text: str) -> Reply:
        if self.phase == "answer":
            self._reset()
        parsed = parse_request(text)
        # a named paper plus a search direction is a paper search, whatever the entity classifier thinks
        # ("Who has built on "X"?" reads like a question about people)
        paper_search = parsed.anchor_kind in _ID_KINDS or (
            parsed.anchor_kind == "title" and parsed.intent.direction is not None
        )
        topic = None if paper_search else await self._topic_request(parsed)
        if topic is not None:
            return await self._topic_search(text, parsed, topic)
        if not paper_search and self._is_entity_question(text):
            return await self._entity(text)
        self.request = text
        self.intent = parsed.intent
        if parsed.anchor_kind == "none":
            return self._error(
                "Please name a paper (its title in quotes, a DOI or an id) and what you are looking for."
            )
        return await self._resolve_anchor(parsed)

    # --- topic requests (no paper named). Kept small and separate: the message reader of issue 12 takes the
    # decision over; what a topic search does lives in workflows.templates.topic_search.
    async def _topic_request(self, parsed: ParsedRequest) -> TopicRequest | None:
        """The topic of a request for a field's literature ("what should I read on X", "surveys covering X"),
        unless it names a paper after all (the topic is a paper's title), a known person or an institution."""
        if parsed.anchor_kind != "text":
            return None
        req = read_topic(parsed.text)
        if req is None or await self._names_entity(parsed.text):
            return None
        try:
            found = await self._runtime.source.match_paper(req.topic, limit=3)
        except (SourceUnavailable, RateLimited) as exc:
            raise _SourceDown(exc) from exc
        except SourceError:
            found = []
        # the topic is a paper's title: that paper is named. A topic that only contains a title ("joint parsing
        # and named entity recognition with partly labelled data") is still a topic.
        return None if any(_near_exact(req.topic, p.title, inside=False) for p in found) else req

    async def _names_entity(self, text: str) -> bool:
        """An institution in the request, or a person the source knows; capitalised topic words that only look
        like a name ("A Unified Framework") do not, and a venue is a filter of the topic search ("… at ACL")."""
        query = parse_entity_question(text)
        if query is None:
            return False
        if query.org:
            return True
        if not query.person:
            return False
        try:
            people = await self._runtime.source.search_authors(query.person, limit=5)
        except SourceError:
            return False
        return any(normalize_title(a.name) == normalize_title(query.person) for a in people)

    async def _topic_search(self, text: str, parsed: ParsedRequest, req: TopicRequest) -> Reply:
        self.request = text
        # a direction needs a paper to point from; the type words are kept as paper types instead
        updates = {"topic": req.topic, "paper_types": req.paper_types, "direction": None, **req.updates}
        self.intent = apply_updates(parsed.intent, updates)
        kinds = " and ".join(f"{t}s" if t != "method" else "method papers" for t in req.paper_types)
        return await self._no_anchor([f"Searching for {kinds or 'the literature'} on “{short(req.topic, 120)}”."])

    def _is_entity_question(self, text: str) -> bool:
        return classify(text) == "entity"

    async def _entity(self, text: str) -> Reply:
        self.request = text
        self.intent = Intent(kind="entity", request=text)
        wf, run, answer = await answer_question(text, self._runtime)
        self._last_run = run
        self.answer = answer
        self.results = _cited_papers(answer, run.values)  # so the papers of an answer can be kept and exported
        self.phase = "answer"
        notes: list[str] = []
        if wf.nodes:
            self._push(wf, "plan for your question")
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

    async def _resolve_anchor(self, parsed: ParsedRequest) -> Reply:
        src = self._runtime.source
        try:
            found = await src.match_paper(parsed.anchor_query, limit=5)
        except (SourceUnavailable, RateLimited) as exc:
            raise _SourceDown(exc) from exc
        except SourceError as exc:
            found = []
            note = f"Could not look up the paper ({exc.message})."
            if parsed.anchor_kind in _ID_KINDS:
                return self._error(note + (f" {exc.hint}" if exc.hint else ""))
            return await self._no_anchor([note])
        if parsed.anchor_kind in _ID_KINDS:
            hit = next((p for p in found if _id_matches(parsed.anchor_query, p)), None)
            if hit is None:
                kind = {"doi": "DOI", "arxiv": "arXiv id", "s2": "Semantic Scholar id"}.get(parsed.anchor_kind, "id")
                return self._error(
                    f"I could not find a paper with the {kind} {parsed.anchor_query!r} in the source ({src.name}). "
                    "Name it by its title instead (in quotes if it is long)."
                )
            return await self._anchor_chosen_paper(hit, [])
        exact = [p for p in found if _near_exact(parsed.anchor_query, p.title)]
        if exact:
            return await self._anchor_chosen_paper(exact[0], [])
        if not found:
            return await self._no_anchor(
                [f"No paper matches “{short(parsed.anchor_query, 120)}”; searching by your words instead."]
            )
        if len(found) == 1:
            return await self._anchor_chosen_paper(found[0], [f"I took “{found[0].title}” as the paper you mean."])
        return self._ask_anchor(found[:4], parsed.anchor_query)

    def _ask_anchor(self, papers: list[Paper], query: str) -> Reply:
        options, seen = [], set()
        for p in papers:
            label = _paper_label(p)
            if label.lower() in seen:
                label = f"{label} [{p.id}]"
            seen.add(label.lower())
            options.append(Option(label=label, sets={"anchor_id": p.id}))
        options.append(Option(label="None of these — search by my words", sets={}))
        self.anchor_candidates = papers
        self.question = Question(
            slot="anchor", text=f"Which paper do you mean by “{short(query, 120)}”?", options=options
        )
        self.phase = "anchor"
        return self._reply(self.question.text, question=self.question, candidates=papers)

    async def _anchor_text(self, text: str) -> Reply:
        assert self.question is not None
        idx = match_option(self.question, text)
        if idx is not None:
            return await self._anchor_chosen(self.question.options[idx].sets.get("anchor_id"))
        parsed = parse_request(text)
        self.intent = apply_updates(
            self.intent,
            {k: v for k, v in parsed.intent.model_dump(exclude_defaults=True).items() if k not in ("request", "notes")},
        )
        return await self._resolve_anchor(parsed)

    async def _anchor_chosen(self, anchor_id: str | None) -> Reply:
        self.question = None
        if not anchor_id:
            return await self._no_anchor(["Searching by your words, without an anchor paper."])
        paper = next((p for p in self.anchor_candidates if p.id == anchor_id), None)
        if paper is None:
            try:
                paper = await self._runtime.source.get_paper(anchor_id)
            except SourceError as exc:
                return self._error(f"Could not load that paper: {exc.message}")
        return await self._anchor_chosen_paper(paper, [])

    async def _anchor_chosen_paper(self, paper: Paper, notes: list[str]) -> Reply:
        self.anchor = paper
        self.anchor_candidates = []
        self.intent = apply_updates(self.intent, {"anchor_id": paper.id})
        if self.intent.direction is None:
            # an unquoted title's own words ("… Corpus of English: The Penn Treebank") may have drowned the
            # direction word; read the request again without them
            direction = _direction_without_title(self.request, paper.title)
            if direction:
                self.intent = apply_updates(self.intent, {"direction": direction})
        self.phase = "clarify"
        return await self._clarify_or_search(notes)

    async def _no_anchor(self, notes: list[str]) -> Reply:
        self.anchor = None
        self.anchor_candidates = []
        self.phase = "clarify"
        return await self._clarify_or_search(notes)

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
            wanted = {v.lower() for v in self.intent.venues}
            out = [
                p
                for p in out
                if (profile().venue_label(p) or "").lower() in wanted
                or any(w in (p.venue or "").lower() for w in wanted)
            ]
        return out

    async def _fetch_candidates(self, notes: list[str]) -> list[Paper]:
        src, a, d = self._runtime.source, self.anchor, self.intent.direction
        papers: list[Paper] = []
        try:
            if a is None:
                query = self.intent.topic or self.request  # a topic search never searches its instruction words
                return [h.paper for h in await src.search_papers(query, limit=CANDIDATE_LIMIT)]
            if d == "successor":
                papers = await src.citations(a.id, limit=CANDIDATE_LIMIT * 2)
            elif d == "predecessor":
                try:
                    papers = await src.references(a.id, limit=CANDIDATE_LIMIT)
                except SourceError:
                    papers = []
            if len(papers) < 20:
                hits = await src.search_papers(a.text, limit=CANDIDATE_LIMIT)
                papers += [h.paper for h in hits]
        except SourceError as exc:
            notes.append(f"Could not gather candidates for the questions ({exc.message}).")
        if a is not None:
            papers = [p for p in papers if p.id != a.id]
            if d == "predecessor" and a.year:
                papers = [p for p in papers if not p.year or p.year <= a.year]
            elif d == "successor" and a.year:
                papers = [p for p in papers if not p.year or p.year >= a.year]
        return list({p.id: p for p in papers}.values())

    async def _answer_text(self, text: str) -> Reply:
        q = self.question
        assert q is not None
        updates = interpret_answer(q, text, self._known_venues())
        self.intent = apply_answer(self.intent, updates, text)
        self.question = None
        notes = [] if updates else [f"I kept “{text}” as a note; it did not change a search setting."]
        return await self._clarify_or_search(notes)

    async def _clarify_or_search(self, notes: list[str]) -> Reply:
        max_turns = self._runtime.settings.max_turns
        cands = await self._candidate_set(notes) if self.turns < max_turns else []
        decision = next_question(self.intent, cands, self.asked, self.turns, max_turns, self.anchor)
        if decision.question is None:
            return await self._search(notes + [f"Searching now: {decision.reason}."])
        q = decision.question
        if self._runtime.llm is not None:
            q, more = await llm_question(self._runtime.llm, self.intent, self.anchor, cands, q)
            notes = notes + more
        self.question = q
        self.asked.append(q.slot)
        self.turns += 1
        self.phase = "clarify"
        return self._reply(q.text, question=q, notes=notes)

    # --- workflows and runs -----------------------------------------------------------------------------
    def _push(self, wf: Workflow, reason: str) -> WorkflowVersion:
        prev = self.workflow
        lines = workflow_diff(prev, wf).summary() if prev is not None else []
        v = WorkflowVersion(version=len(self.versions) + 1, workflow=wf, reason=reason, diff=lines)
        self.versions.append(v)
        self.current_version = len(self.versions) - 1
        return v

    async def _search(self, notes: list[str]) -> Reply:
        self.question = None
        anchor_query = self.anchor.id if self.anchor else ""
        compact = self._runtime.settings.llm_prompt == "compact"
        induction = await induce(self.intent, anchor_query, self._runtime.llm, self.request, self.anchor, compact)
        what = direction_results(self.intent.direction)
        if self.anchor is None and self.intent.topic:
            what = f"the literature on “{short(self.intent.topic, 80)}”"
        self._push(induction.workflow, f"{induction.origin} workflow for {what}")
        return await self._run(notes + induction.notes)

    async def _feedback(self, text: str) -> Reply:
        if self.workflow is None:
            return await self._first_message(text)
        venues = self._known_venues()
        if self._runtime.llm is not None:
            ref = await refine_llm(self._runtime.llm, self.workflow, self.intent, text, self.results, venues)
        else:
            ref = refine(self.workflow, self.intent, text, self.results, known_venues=venues)
        return await self._apply_refinement(ref, text)

    async def _apply_refinement(self, ref: Refinement, text: str | None = None) -> Reply:
        if (
            not ref.changed
            and text
            and not referenced_indices(text)
            and (parse_request(text).intent.direction is not None or self._is_entity_question(text))
        ):
            # not feedback on these results but a new search ("papers similar to …") or an entity question
            self._reset()
            return await self._first_message(text)
        if not ref.changed:
            return self._reply(
                " ".join(ref.notes) or "Nothing to change.",
                results=self.results,
                workflow=self.workflow,
                notes=ref.notes,
            )
        self.intent = ref.intent
        self._push(ref.workflow, ref.reason)
        return await self._run(ref.notes)

    def _progress_to(self, observer: Callable[[Any], None]) -> Callable[[Any], None]:
        """Progress updates for ``observer``: previews without the anchor, the first one timed for the turn."""
        anchor_id = self.anchor.id if self.anchor else None
        budget = self._turn_budget

        def forward(update: Any) -> None:
            if isinstance(update.preview, list):
                update.preview = [r for r in update.preview if isinstance(r, RankedPaper) and r.paper.id != anchor_id]
                if update.preview and budget is not None and budget.usage.first_results_s is None:
                    budget.usage.first_results_s = round(time.perf_counter() - budget.started, 3)
            observer(update)

        return forward

    async def _run(self, notes: list[str]) -> Reply:
        wf = self.workflow
        assert wf is not None
        rt = self._runtime
        version = self.versions[self.current_version]
        try:
            if self._observer is None:
                run = await execute(wf, rt.context(), rt.node_cache)
            else:
                run = await run_progressively(wf, rt.context(), rt.node_cache, None, self._progress_to(self._observer))
        except WorkflowError as exc:  # validated before; kept so a bug is a message, not a crash
            return self._error(f"The workflow cannot run: {exc}", notes)
        self._last_run = run
        notes = list(notes) + [f"step {n} failed: {e}" for n, e in run.errors.items()]
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
        what = direction_results(self.intent.direction)
        about = f" for “{self.anchor.title}”" if self.anchor else ""
        if self.anchor is None and self.intent.topic:
            what, about = "papers", f" on “{short(self.intent.topic, 120)}”"
        message = (
            f"Found {len(self.results)} papers — {what}{about} (workflow v{version.version}: {version.reason})."
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
            notes=notes,
            error=error,
        )
