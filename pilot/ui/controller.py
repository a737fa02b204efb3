"""What each UI action does, without Gradio: one ``UIState`` per browser session, driven through the
``pilot.session.Session`` API. No search logic lives here — every action is one session call plus
bookkeeping for what the panels show (chat transcript, selected node, params text, export files).

Actions never raise: a failure becomes a readable chat message (and, for DAG edits, a message beside
the editor that keeps the user's text).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import html
import json
import logging
import shutil
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from cache import health as cache_health
from pilot import export, limits
from pilot.domain import profile
from pilot.library import Library
from pilot.limits import clip_message, quote
from pilot.listfacts import numbered
from pilot.message import Context, WorkspaceRequest, workspace_request
from pilot.message import read as read_message
from pilot.models import Paper, RankedPaper
from pilot.redact import redact
from pilot.runtime import Runtime
from pilot.session import Reply, Session
from pilot.settings import Settings
from pilot.sources.factory import UnavailableSource
from pilot.ui import render, tempdirs
from pilot.ui.conversations import (
    MAX_KEPT_CHARS,
    ChatLine,
    ConversationRecord,
    ConversationStore,
    RecentSearch,
    StoreProblem,
    new_id,
    new_token,
    valid_id,
)
from pilot.ui.paramform import FormError, form_html, help_markdown, read_form
from pilot.ui.resultmap import result_map
from pilot.ui.startup import StartUp
from pilot.vocab import RESULT_ORDER_WORDS
from workflows.diff import short
from workflows.explain import weak_results
from workflows.graph import iter_ready
from workflows.model import AddNode, ModifyNode, Node, RemoveNode, RunTrace, Workflow
from workflows.picture import groups as picture_groups
from workflows.refine import ResultFilters, current_filters, describe_filters, main_node
from workflows.registry import operator_or_none
from workflows.wording import step_name

log = logging.getLogger(__name__)

NO_SOURCE_HELP = (
    "No paper source is available, so I cannot search yet. Set `PILOT_CORPUS` to an offline corpus "
    "(on this machine: `PILOT_CORPUS=../shared/corpus/papers.jsonl.gz`, or run `make run`), or give me "
    "network access for Semantic Scholar (optionally `PILOT_S2_API_KEY`) / AMiner (`PILOT_AMINER_TOKEN`), "
    "then restart the app."
)

WELCOME = (
    "Hi! Name an **anchor paper** (title, or an id such as `acl:P02-1040`) and say what you are looking "
    "for — e.g. *“papers that build on BLEU: a Method for Automatic Evaluation of Machine Translation”*. "
    "I will ask a few quick questions (click an option or type your own answer), or press **Search now**. "
    "Press **keep** on a result to put it in your library; it stays across searches."
)
EXPORT_KINDS = ("bibtex", "ris", "csljson")
_EXPORT_FILES = {"bibtex": "bib", "ris": "ris", "csljson": "json"}


def format_problems(exc: ValidationError) -> str:
    """Pydantic errors as one readable line per field (the first five: a list of 20,000 bad items is one
    problem to the reader, not 20,000 lines)."""
    lines = []
    for e in exc.errors()[:5]:
        where = ".".join(str(p)[:40] for p in e["loc"]) or "params"
        lines.append(f"{where}: {e['msg']}")
    return "; ".join(lines)


_LIBRARY_LINES = 20  # "what's in my library?" lists this many; the Library tab has them all


@dataclass
class UIState:
    """Everything one browser session needs; lives in a ``gr.State``."""

    session: Session | None = None
    chat: list[dict[str, Any]] = field(default_factory=list)  # role, content and (some) details
    trace: RunTrace | None = None
    ratings: dict[str, bool] = field(default_factory=dict)
    selected: str | None = None  # node id in the DAG panel
    params_text: str = ""  # what the params editor shows (the user's text survives a rejected edit)
    edit_message: str = ""  # feedback beside the DAG editor
    node_run: Any = None  # last "run this node" result for the inspector
    # "Step": the nodes walked so far, in execution order, and the workflow they belong to
    stepped: list[str] = field(default_factory=list)
    stepped_workflow: str | None = None
    answer: Any = None  # the cited answer of the last entity question (pilot.models.Answer)
    last_error: str | None = None  # why the last session call failed, for the DAG editor's feedback
    # the researcher's library (kept papers), restored from and saved to their browser (see pilot.library)
    library: Library = field(default_factory=Library)
    library_changed: bool = False  # the browser's copy must be rewritten after this action
    library_scope: str = ""  # "" = the whole library, else the search id whose kept papers are exported
    citation: tuple[str, str] | None = None  # (paper id, APA text) of the open "cite" box
    map_paper: str | None = None  # the paper whose card shows beside the map
    map_key: Any = ((), None)  # which list the map on screen was drawn for (the page starts with none)
    # which filters the filter panel on screen shows: a refresh that changes none of them leaves the boxes alone,
    # so a year the researcher is typing survives a click elsewhere before they press "Apply filters"
    filters_key: Any = None
    # what the last re-run changed in the list: ids that are new, papers that left
    new_ids: list[str] = field(default_factory=list)
    removed: list[Paper] = field(default_factory=list)
    # while a search runs: what it is doing, and a preview of its results from the steps done so far
    live_status: str = ""
    live_results: list[RankedPaper] | None = None
    updates: asyncio.Queue | None = None  # where the running session posts progress (``Controller.stream``)
    tmpdir: str = field(default_factory=tempdirs.session_dir)  # under the process's own temporary folder
    # what the download files on disk were written from, and their paths: a click that changes none of it
    # (selecting a node, opening a citation) reuses them instead of writing seven exports again
    exports_key: Any = None
    exports: dict[str, str | None] = field(default_factory=dict)
    # Gradio runs events concurrently; one user's clicks must reach their session one at a time.
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    # where this conversation is kept (pilot.ui.conversations): the visitor's token (never shown), this tab's
    # conversation id, the recent-list key of each search of the conversation, and what was saved last
    token: str | None = None
    tab: str | None = None
    search_keys: dict[str, str] = field(default_factory=dict)
    saved_key: str | None = None
    recent: list[RecentSearch] = field(default_factory=list)
    restored: bool = False  # the conversation came back from a record: its workflow re-runs from the cache next
    notice: str = ""  # a line for the status bar when nothing is running ("your conversation is back")
    kept_problem_said: bool = False  # "this conversation is too large to keep" is said once
    open_groups: list[str] = field(default_factory=list)  # groups of the workflow picture drawn opened

    def close(self) -> None:
        shutil.rmtree(self.tmpdir, ignore_errors=True)

    # --- read-only views for the panels -----------------------------------------------------

    @property
    def workflow(self) -> Workflow | None:
        return self.session.workflow if self.session is not None else None

    @property
    def results(self) -> list[RankedPaper]:
        return list(self.session.results) if self.session is not None else []

    @property
    def shown_results(self) -> list[RankedPaper]:
        """What the results panel shows: a running search's preview, else the last results."""
        return list(self.live_results) if self.live_results is not None else self.results

    @property
    def kept_ids(self) -> list[str]:
        """The papers of the current list that are in the library."""
        have = self.library.ids
        return [r.paper.id for r in self.results if r.paper.id in have]

    @property
    def search_label(self) -> str:
        return self.session.request if self.session is not None and self.session.request else ""

    @property
    def question(self):
        return self.session.question if self.session is not None else None

    def say(self, role: str, text: str, details: list[str] | None = None) -> None:
        # The transcript keeps raw text; the layout escapes it on the way to the Chatbot. It is sent to the
        # browser on every action, so a long session keeps only its recent messages. No configured key reaches
        # it, whatever quoted one (an upstream error, a pasted message). ``details``: the same message by operator
        # and param, shown folded under it ("details").
        entry = {"role": role, "content": redact(text)}
        self.chat.append({**entry, **({"details": [redact(d) for d in details]} if details else {})})
        del self.chat[: -limits.MAX_TRANSCRIPT_MESSAGES]


class Controller:
    """Actions of the UI over one shared runtime (source, caches, embedder) and per-user ``UIState``."""

    def __init__(
        self,
        runtime: Runtime | None,
        startup_notes: list[str] | None = None,
        store: ConversationStore | None = None,
    ):
        self.runtime = runtime
        self.startup_notes = list(startup_notes or [])
        self.store = store if store is not None and store.enabled else None
        self.starting: StartUp | None = None  # the runtime still opening in the background (``start``)

    @classmethod
    def start(cls, settings: Settings, store: ConversationStore | None = None) -> Controller:
        """A controller whose runtime opens in the background (building the search index on a first start): the
        page serves at once, says how far the start is, and an action waits for it."""
        controller = cls(None, store=store)
        controller.starting = StartUp(settings, controller._started).begin()
        return controller

    def _started(self, runtime: Runtime | None, problem: str | None) -> None:
        self.runtime = runtime
        if runtime is not None:
            runtime.start_recovery()  # services unreachable at start are re-probed and taken back
        if problem:
            self.startup_notes.append(problem)

    @property
    def is_starting(self) -> bool:
        return self.starting is not None and not self.starting.ready.is_set()

    async def _wait_for_start(self, ui: UIState) -> None:
        """Hold an action until the runtime is open, telling the page how far the start is meanwhile."""
        # polled on the event loop, not waited on in a worker thread: on a busy server the thread pool can be full,
        # and the page would then hear nothing until the start is over
        said_step, said_at = None, 0.0
        while self.starting is not None and not self.starting.ready.is_set():
            line = self.starting.line()
            step = line.split(" (", 1)[0]  # the line without its running seconds
            if ui.updates is not None and (step != said_step or time.monotonic() - said_at >= 1.0):
                ui.updates.put_nowait(f"Starting: {line} — your request runs as soon as it is done")
                said_step, said_at = step, time.monotonic()
            await asyncio.sleep(0.1)

    # --- session lifecycle ------------------------------------------------------------------

    def new_state(self) -> UIState:
        ui = UIState()
        ui.say("assistant", self.welcome())
        return ui

    def clear(self, ui: UIState) -> UIState:
        """The chat's clear (trash) button: a fresh conversation. The session goes too, so the next message is a
        new request, not feedback on a search the user can no longer see."""
        ui.session = None
        ui.chat = []
        ui.say("assistant", self.welcome())
        ui.trace = ui.node_run = ui.answer = ui.selected = ui.last_error = ui.stepped_workflow = None
        ui.ratings, ui.stepped = {}, []
        ui.params_text = ui.edit_message = ""
        # the library is the user's, not the conversation's: it stays
        ui.citation = ui.map_paper = None
        ui.new_ids, ui.removed = [], []
        ui.search_keys, ui.open_groups, ui.notice, ui.restored = {}, [], "", False
        return ui

    def welcome(self) -> str:
        """The first chat message: how to start. Configuration is the status line's business (``about``),
        except when nothing can be searched: then the chat says what to set."""
        if self.runtime is None and not self.is_starting:
            return NO_SOURCE_HELP
        if self.runtime is not None and isinstance(self.runtime.source, UnavailableSource):
            return NO_SOURCE_HELP + "\n\n" + "\n".join(f"- {n}" for n in self.runtime.notes if "LLM" not in n)
        return WELCOME

    def about(self) -> str:
        """One line on what this server searches with (sources, LLM or rules), and its start-up notes."""
        if self.starting is not None and self.is_starting:
            return (
                f"Status: starting — {self.starting.line()}. This happens once, on the first start with a corpus; "
                "the page works meanwhile and a request waits for it."
            )
        if self.runtime is None:
            return "Status: no paper source — " + "; ".join(self.startup_notes or ["see the chat"])
        source = getattr(self.runtime.source, "name", "?")
        llm = getattr(self.runtime.llm, "model", None) if self.runtime.llm is not None else None
        parts = [
            f"Sources: {source}",
            f"LLM: {llm}" if llm else "questions and workflows: deterministic rules (no LLM)",
        ]
        notes = [n for n in self.startup_notes + list(self.runtime.notes or []) if "LLM" not in n]
        return "Status: " + " · ".join(parts + notes + cache_health.notes())

    def _session(self, ui: UIState) -> Session | None:
        if ui.session is None and self.runtime is not None:
            ui.session = Session(self.runtime)
        return ui.session

    async def _call(self, ui: UIState, what: str, coro_fn, *args) -> Reply | None:
        """Run one session call; show its reply (or a readable failure) in the chat."""
        await self._wait_for_start(ui)
        session = self._session(ui)
        ui.last_error = None
        if session is None:
            ui.say("assistant", NO_SOURCE_HELP)
            ui.last_error = "no paper source is configured"
            return None
        before = (_search_key(session), [r.paper for r in session.results])
        queue = ui.updates
        watching = session.observing(queue.put_nowait) if queue is not None else contextlib.nullcontext()
        try:
            with watching:
                reply = await coro_fn(session, *args)
        except Exception as exc:
            log.exception("%s failed", what)
            ui.last_error = short_error(exc)
            ui.say("assistant", f"Sorry, {what} failed: {ui.last_error}")
            return None
        self._absorb(ui, reply)
        self._delta(ui, before)
        return reply

    def _delta(self, ui: UIState, before: tuple[Any, list[Paper]]) -> None:
        """What a re-run of the same search added to and dropped from the list (nothing for a new search)."""
        key, old = before
        session = ui.session
        now = session.results if session is not None else []
        ui.new_ids, ui.removed = [], []
        if key != _search_key(session) or not old:
            return  # a new search, or nothing listed before: nothing was added or dropped
        old_ids, now_ids = {p.id for p in old}, {r.paper.id for r in now}
        ui.new_ids = [r.paper.id for r in now if r.paper.id not in old_ids]
        ui.removed = [p for p in old if p.id not in now_ids]

    def _absorb(self, ui: UIState, reply: Reply) -> None:
        parts = [reply.message.strip()] if reply.message and reply.message.strip() else []
        q = reply.question
        if q is not None and q.text and q.text not in reply.message:
            parts.append(q.text)
        if reply.error and reply.error.strip() not in reply.message:
            parts.append(f"**Problem:** {reply.error}")
        if reply.changes or reply.diff:
            said = reply.changes or ["the workflow changed (see the details)"]
            parts.append("What changed: " + "; ".join(said[:6]) + ("." if not said[-1].endswith(")") else ""))
        for note in reply.notes:
            parts.append(f"_note: {note}_")
        if parts:
            ui.say("assistant", "\n\n".join(parts), details=reply.diff)
        if reply.trace is not None:
            ui.trace = reply.trace
        ui.citation = None
        if reply.answer is not None or reply.results:
            ui.answer = reply.answer  # a new paper list replaces an earlier cited answer and vice versa
        wf = ui.workflow
        if wf is not None and (ui.selected is None or not wf.has_node(ui.selected)):
            ui.selected = wf.output or (wf.nodes[-1].id if wf.nodes else None)
            ui.node_run = None
        if reply.keep:  # "keep #1 and #4" typed in the chat
            wanted = set(reply.keep)
            added = ui.library.add([r.paper for r in ui.results if r.paper.id in wanted], search=ui.search_label)
            ui.library_changed = ui.library_changed or bool(added)
        self._sync_params(ui)

    def _sync_params(self, ui: UIState) -> None:
        wf = ui.workflow
        if wf is not None and ui.selected and wf.has_node(ui.selected):
            ui.params_text = json.dumps(wf.node(ui.selected).params, indent=2, ensure_ascii=False)
        else:
            ui.params_text = ""

    # --- streaming ----------------------------------------------------------------------------

    async def stream(self, ui: UIState, action, *args, working: str = "working…") -> AsyncIterator[UIState]:
        """Run one UI action, yielding ``ui`` whenever there is something new to show while it runs: which
        steps are running ("expanding references: 12 of 40 seeds") and a preview of the results from the
        steps done so far. The last yield is the finished action."""
        queue: asyncio.Queue = asyncio.Queue()
        ui.updates = queue
        ui.live_status = working
        ui.live_results = None
        task = asyncio.ensure_future(action(ui, *args))
        getter: asyncio.Future | None = None
        try:
            yield ui
            while not task.done():
                getter = asyncio.ensure_future(queue.get())
                await asyncio.wait({task, getter}, return_when=asyncio.FIRST_COMPLETED)
                if not getter.done():
                    continue
                updates = [getter.result()]
                while not queue.empty():
                    updates.append(queue.get_nowait())
                if self._absorb_progress(ui, updates):
                    yield ui
            await task
        finally:
            if getter is not None and not getter.done():
                getter.cancel()
            if not task.done():
                task.cancel()
            ui.updates = None
            ui.live_status = ""
            ui.live_results = None
        yield ui

    @staticmethod
    def _absorb_progress(ui: UIState, updates: list) -> bool:
        """Fold progress updates into the live view; whether the screen changed."""
        before = (ui.live_status, id(ui.live_results))
        for upd in updates:
            if getattr(upd, "final", False):
                continue  # the reply itself brings the final list
            line = upd.status_line() if hasattr(upd, "status_line") else str(upd)
            if line:
                ui.live_status = line
            if isinstance(getattr(upd, "preview", None), list) and upd.preview:
                ui.live_results = upd.preview
                n = len(upd.preview)
                ui.live_status += f" · showing the first {n} results while the rest arrive"
        return (ui.live_status, id(ui.live_results)) != before

    # --- chat -------------------------------------------------------------------------------

    async def send(self, ui: UIState, text: str) -> UIState:
        text = (text or "").strip()
        if not text:
            return ui
        ui.say("user", clip_message(text)[0])  # a long paste is kept cut; the session cuts it too, and says so
        await self._wait_for_start(ui)  # the session reads the message in its conversation: it needs the sources
        session = self._session(ui)
        # read once; the library and the list's changes are the UI's to answer, the rest the session's
        msg = session.read(text) if session is not None else read_message(text, Context())
        if (asked := workspace_request(msg)) is not None:
            ui.say("assistant", self._workspace(ui, asked))
            return ui
        await self._call(ui, "understanding your message", lambda s, m: s.act_on(m), msg)
        return ui

    def _workspace(self, ui: UIState, asked: WorkspaceRequest) -> str:
        """The answer to a message about the library or the list's last change (the UI holds both)."""
        lib, n = ui.library, len(ui.library)
        if asked.action == "changes":
            return self._changes(ui)
        if asked.action in ("show", "count") and n == 0:
            return "Your library is empty: press keep on a result, or say “keep #1 and #3”."
        if asked.action == "count":
            k = len(lib.searches())
            return f"Your library holds {n} paper{'s' if n != 1 else ''}, kept from {k} search{'es' if k != 1 else ''}."
        if asked.action == "show":
            lines = [
                f"{i}. “{short(e.paper.title, 90)}”"
                + (f" ({e.paper.year})" if e.paper.year else "")
                + (f" — kept from “{short(e.search, 50)}”" if e.search else "")
                for i, e in enumerate(lib.entries[:_LIBRARY_LINES], start=1)
            ]
            more = f"\n\n… and {n - _LIBRARY_LINES} more." if n > _LIBRARY_LINES else ""
            return f"Your library ({n}):\n\n" + "\n".join(lines) + more + "\n\nThe Library tab exports them."
        if asked.action == "clear":
            if n == 0:
                return "Your library is already empty."
            return f"This removes all {n} papers from your library. Say “yes, clear my library” to do it."
        if asked.action == "clear_confirmed":
            lib.remove(list(lib.ids))
            ui.library_changed = ui.library_changed or n > 0
            return f"Removed all {n} papers from your library." if n else "Your library is already empty."
        said = []
        for k in asked.refs:
            if not 1 <= k <= len(ui.results):
                said.append(f"There is no result #{k} on the list.")
            elif lib.remove([ui.results[k - 1].paper.id]):
                ui.library_changed = True
                said.append(f"Removed #{k} “{short(ui.results[k - 1].paper.title, 80)}” from your library.")
            else:
                said.append(f"#{k} is not in your library.")
        return " ".join(said) or "Which result? Say e.g. “remove #2 from my library”."

    def _changes(self, ui: UIState) -> str:
        session = ui.session
        if session is None or not session.versions:
            return "No search has run yet."
        now = session.versions[session.current_version if 0 <= session.current_version < len(session.versions) else -1]
        if now.version == 1:
            return "This is the first version of this search: nothing has changed yet."
        shown = [r.paper.id for r in ui.results]
        new = [i for i, pid in enumerate(shown, start=1) if pid in set(ui.new_ids)]
        what = (
            "; ".join(line[:1].lower() + line[1:] for line in now.changes[:4]) or "; ".join(now.diff[:4]) or now.reason
        )
        head = f"Version {now.version} ({short(now.reason, 120)})"
        if not (new or ui.removed):  # the last action changed no list (or was no re-run): only the workflow is told
            return f"{head}. What changed in the workflow: {what}."
        moved = f"{len(new)} paper{'s are' if len(new) != 1 else ' is'} new on the list ({numbered(new)}) and "
        return f"{head}: {moved}{len(ui.removed)} left it. What changed in the workflow: {what}."

    async def choose(self, ui: UIState, index: int) -> UIState:
        q = ui.question
        if q is None or not 0 <= index < len(q.options):
            ui.say("assistant", "That option is no longer on offer — please type your answer instead.")
            return ui
        ui.say("user", q.options[index].label)
        await self._call(ui, "applying your choice", lambda s, i: s.choose(i), index)
        return ui

    async def search_now(self, ui: UIState) -> UIState:
        ui.say("user", "Search now")
        await self._call(ui, "the search", lambda s: s.search_now())
        return ui

    # --- results ----------------------------------------------------------------------------

    async def rate(self, ui: UIState, paper_id: str | None, up: bool) -> UIState:
        if not paper_id or paper_id not in {r.paper.id for r in ui.results}:
            ui.say("assistant", "Pick a paper from the list first, then press relevant or not relevant.")
            return ui
        ui.ratings[paper_id] = up
        title = next(r.paper.title for r in ui.results if r.paper.id == paper_id)
        ui.say("user", f"{'Relevant' if up else 'Not relevant'}: {title}")
        await self._call(ui, "refining with your rating", lambda s, p, u: s.rate(p, u), paper_id, up)
        return ui

    async def paper_action(self, ui: UIState, act: str | None, paper_id: str | None) -> UIState:
        """A click on a card's own button: relevant / not relevant / keep / cite / remove."""
        if act == "keep" and paper_id:
            return self.toggle_keep(ui, paper_id)
        if act == "remove" and paper_id:
            return self.remove_from_library(ui, [paper_id])
        if act == "cite" and paper_id:
            return self.cite(ui, paper_id)
        if act in ("up", "down"):
            return await self.rate(ui, paper_id, act == "up")
        return ui

    # --- keeping the conversation (pilot.ui.conversations) ------------------------------------------

    async def open_page(self, ui: UIState, library: Any, token: Any, tab_info: Any) -> UIState:
        """On page load: the library this browser kept, and this tab's conversation as it was left (a reload).
        ``token`` is the visitor's (a new one when missing); ``tab_info`` is ``{"tab": id, "fork": id}`` from the
        page: the tab's conversation id (sessionStorage), or, for a duplicated tab, the id it must copy from."""
        self.restore_library(ui, library)
        ui.token = valid_id(token) or new_token()
        try:
            info = json.loads(tab_info) if isinstance(tab_info, str) and len(tab_info) < 400 else {}
        except ValueError:
            info = {}
        info = info if isinstance(info, dict) else {}
        tab, fork = valid_id(info.get("tab")), valid_id(info.get("fork"))
        ui.tab = tab or new_id()
        if self.store is None:
            return ui
        if tab or fork:
            await self._wait_for_start(ui)  # a kept conversation needs the sources to come back
        record, problem = self.store.load(ui.token, tab) if tab else (None, None)
        if record is None and fork and not problem:
            record, problem = self.store.load(ui.token, fork)  # a copy for this tab: the other one goes on alone
        if record is not None:
            problem = self._restore(ui, record)
        if problem:
            ui.say(
                "assistant",
                f"Your previous conversation in this tab could not be restored ({problem}), so it was dropped and "
                "this one starts afresh. Your library and your recent searches are still here.",
            )
        ui.recent = self.store.recent(ui.token)
        return ui

    def _restore(self, ui: UIState, record: ConversationRecord) -> str | None:
        """Put a kept conversation on screen; why it cannot be, instead (the screen is then left as it was)."""
        session = None
        if record.session is not None:
            if self.runtime is None:
                return "no paper source is configured, so its searches cannot be shown"
            try:
                session = Session.restore(record.session, self.runtime)
            except (ValidationError, ValueError, TypeError) as exc:
                log.info("kept session does not validate: %s", exc)
                return "it was saved by another version of pilot"
        ui.session = session
        ui.chat = [line.model_dump(exclude_defaults=True) for line in record.chat]
        ui.trace, ui.ratings = record.trace, dict(record.ratings)
        wf = ui.workflow
        ui.selected = record.selected if wf is not None and record.selected and wf.has_node(record.selected) else None
        if wf is not None and ui.selected is None:
            ui.selected = wf.output
        ui.map_paper, ui.open_groups = record.map_paper, list(record.open_groups)
        ui.search_keys = dict(record.search_keys)
        ui.answer = session.answer if session is not None and session.phase == "answer" else None
        ui.node_run = ui.citation = ui.last_error = None
        ui.new_ids, ui.removed, ui.stepped = [], [], []
        ui.map_key, ui.filters_key, ui.exports_key = ((), None), None, None
        ui.restored = wf is not None and session is not None and session.phase in ("results", "answer")
        when = render.ago(record.saved_at)
        ui.notice = f"Your conversation is back as you left it{f' {when}' if when else ''}."
        self._sync_params(ui)
        ui.saved_key = self._fingerprint(self._record(ui))
        return None

    async def rewarm(self, ui: UIState) -> UIState:
        """A restored conversation's workflow runs again, from the cache: the screen gets its run back (the
        inspector, "run this step", the step walk need it) without asking any source again when nothing
        changed. A failure keeps the results as they were kept."""
        session = ui.session
        if not ui.restored or session is None or session.workflow is None:
            return ui
        ui.restored = False
        history, before = list(session.history), (_search_key(session), [r.paper for r in session.results])
        queue = ui.updates
        watching = session.observing(queue.put_nowait) if queue is not None else contextlib.nullcontext()
        try:
            with watching:
                reply = await session.rerun()
        except Exception as exc:  # noqa: BLE001 - the kept results stay on screen
            log.exception("re-running a restored workflow failed")
            ui.notice += f" Running its workflow again failed ({short_error(exc)}); the results are as you left them."
            return ui
        session.history = history  # the re-run is not a new turn of the conversation
        if reply.trace is not None:
            ui.trace = reply.trace
            cached = sum(t.status == "cached" for t in reply.trace.nodes)
            ui.notice += f" Its workflow ran again from the cache ({cached} of {len(reply.trace.nodes)} steps cached)."
        if reply.error:
            ui.notice += f" {reply.error}"
        if session.phase == "answer":
            ui.answer = session.answer
        self._delta(ui, before)
        return ui

    def _record(self, ui: UIState) -> ConversationRecord:
        session = ui.session
        return ConversationRecord(
            chat=[
                ChatLine(role=m["role"], content=str(m["content"])[:MAX_KEPT_CHARS], details=m.get("details", [])[:50])
                for m in ui.chat
                if m.get("role") in ("user", "assistant")
            ],
            session=session.model_dump(mode="json") if session is not None else None,
            trace=ui.trace,
            ratings=ui.ratings,
            selected=ui.selected,
            map_paper=ui.map_paper,
            open_groups=ui.open_groups,
            search_keys=ui.search_keys,
        )

    @staticmethod
    def _fingerprint(record: ConversationRecord) -> str:
        return hashlib.sha1(record.model_dump_json(exclude={"saved_at"}).encode("utf-8")).hexdigest()

    def save(self, ui: UIState) -> None:
        """Keep the conversation after an action that changed it, and the search on screen in the recent list."""
        if self.store is None or not ui.token or not ui.tab:
            return
        session = ui.session
        on_screen = (
            session is not None
            and session.phase in ("results", "answer")
            and (bool(session.results) or session.answer is not None)
        )
        if on_screen and session is not None:
            ui.search_keys.setdefault(str(session.search_no), new_id())
        record = self._record(ui)
        key = self._fingerprint(record)
        if key == ui.saved_key:
            return
        try:
            self.store.save(ui.token, ui.tab, record)
            if on_screen and session is not None:
                label = session.request or session.intent.topic or "a search"
                self.store.remember(
                    ui.token,
                    ui.search_keys[str(session.search_no)],
                    record,
                    label=label,
                    results=len(session.results),
                    answer=session.answer is not None and session.phase == "answer",
                )
            ui.recent = self.store.recent(ui.token)
        except StoreProblem as exc:
            if not ui.kept_problem_said:
                ui.say("assistant", f"This conversation can no longer be kept for a reload: {exc}.")
                ui.kept_problem_said = True
        ui.saved_key = key

    @property
    def keeps_conversations(self) -> bool:
        return self.store is not None

    def current_search_key(self, ui: UIState) -> str | None:
        session = ui.session
        return ui.search_keys.get(str(session.search_no)) if session is not None else None

    async def reopen(self, ui: UIState, key: Any) -> UIState:
        """A recent search, back on screen as it was left (its conversation too), its workflow re-run from cache.
        The conversation it replaces is not lost: its search is in the recent list."""
        key = valid_id(key)
        if self.store is None or not ui.token or key is None:
            ui.say("assistant", "There is no such recent search.")
            return ui
        if key == self.current_search_key(ui):
            ui.notice = "That search is the one on screen."
            return ui
        record, problem = self.store.search(ui.token, key)
        if record is None:
            ui.recent = self.store.recent(ui.token)
            ui.say("assistant", f"That search could not be reopened: {problem or 'it is no longer kept'}.")
            return ui
        problem = self._restore(ui, record)
        if problem:
            ui.say("assistant", f"That search could not be reopened: {problem}.")
            return ui
        ui.saved_key = None  # the tab now holds the reopened conversation: keep it as this tab's
        await self.rewarm(ui)
        return ui

    # --- library ----------------------------------------------------------------------------

    def restore_library(self, ui: UIState, stored: Any) -> UIState:
        """On page load: the library this browser kept (validated; junk becomes an empty library)."""
        ui.library = Library.load(stored)
        ui.library_changed = False
        return ui

    def _paper(self, ui: UIState, paper_id: str) -> Paper | None:
        for r in ui.results:
            if r.paper.id == paper_id:
                return r.paper
        session = ui.session
        if session is not None and session.anchor is not None and session.anchor.id == paper_id:
            return session.anchor
        return next((p for p in ui.library.papers() if p.id == paper_id), None)

    def toggle_keep(self, ui: UIState, paper_id: str) -> UIState:
        if paper_id in ui.library:
            return self.remove_from_library(ui, [paper_id])
        return self.keep(ui, [*ui.kept_ids, paper_id])

    def keep(self, ui: UIState, paper_ids: list[str]) -> UIState:
        """Keep these papers of the current list (the ones of the list not named are let go)."""
        listed = {r.paper.id: r.paper for r in ui.results}
        wanted = [pid for pid in paper_ids or [] if pid in listed]
        if len(wanted) < len(paper_ids or []) and not listed:
            ui.edit_message = "There is no result list to keep papers from."
        drop = [pid for pid in listed if pid in ui.library and pid not in wanted]
        added = ui.library.add([listed[pid] for pid in wanted], search=ui.search_label)
        removed = ui.library.remove(drop)
        ui.library_changed = ui.library_changed or bool(added or removed)
        return ui

    def keep_all(self, ui: UIState) -> UIState:
        return self.keep(ui, [r.paper.id for r in ui.results])

    def remove_from_library(self, ui: UIState, paper_ids: list[str]) -> UIState:
        if ui.library.remove(paper_ids or []):
            ui.library_changed = True
        if ui.citation and ui.citation[0] in (paper_ids or []):
            ui.citation = None
        return ui

    def set_library_scope(self, ui: UIState, scope: str | None) -> UIState:
        known = {sid for sid, _, _ in ui.library.searches()}
        ui.library_scope = scope if scope in known else ""
        return ui

    def cite(self, ui: UIState, paper_id: str) -> UIState:
        """Open (or close) the APA citation of a paper under its card."""
        if ui.citation and ui.citation[0] == paper_id:
            ui.citation = None
            return ui
        paper = self._paper(ui, paper_id)
        if paper is None:
            return ui
        ui.citation = (paper_id, export.citation(paper))
        return ui

    # --- exports ----------------------------------------------------------------------------

    def _write(self, ui: UIState, name: str, kind: str, papers: list[Paper]) -> str:
        writer = {"bibtex": export.to_bibtex, "ris": export.to_ris, "csljson": export.to_csljson}[kind]
        path = Path(ui.tmpdir) / f"{name}.{_EXPORT_FILES[kind]}"
        path.write_text(writer(papers), encoding="utf-8")
        return str(path)

    def export_files(self, ui: UIState) -> dict[str, str | None]:
        """The downloads: this search's results (BibTeX / RIS / CSL-JSON / CSV), its workflow recipe, and
        the library (whole, or the papers kept from one search) in the three reference formats."""
        results = ui.results
        kept = ui.library.papers(ui.library_scope or None)
        key = (
            [(r.paper.id, r.score) for r in results],
            ui.kept_ids,
            ui.workflow.to_json() if ui.workflow is not None else None,
            [p.id for p in kept],
        )
        if key == ui.exports_key:
            return dict(ui.exports)
        out: dict[str, str | None] = {k: None for k in ("bibtex", "ris", "csljson", "csv", "workflow")}
        out.update({f"library_{k}": None for k in EXPORT_KINDS})
        base = Path(ui.tmpdir)
        if results:
            papers = [r.paper for r in results]
            for kind in EXPORT_KINDS:
                out[kind] = self._write(ui, "pilot-results", kind, papers)
            (base / "pilot-results.csv").write_text(export.to_csv(results, ui.kept_ids, ui.workflow), encoding="utf-8")
            out["csv"] = str(base / "pilot-results.csv")
        if ui.workflow is not None:
            (base / "pilot-workflow.json").write_text(export.workflow_recipe(ui.workflow), encoding="utf-8")
            out["workflow"] = str(base / "pilot-workflow.json")
        if kept:
            for kind in EXPORT_KINDS:
                out[f"library_{kind}"] = self._write(ui, "pilot-library", kind, kept)
        ui.exports_key, ui.exports = key, dict(out)
        return out

    # --- filters and the map ------------------------------------------------------------------

    async def apply_filters(
        self,
        ui: UIState,
        year_min: float | None = None,
        year_max: float | None = None,
        venues: list[str] | None = None,
        paper_types: list[str] | None = None,
        min_citations: float | None = None,
        *,
        keep_chat: bool = True,
    ) -> UIState:
        """The filter controls as one workflow edit (a new version with its diff), then a re-run. What was said
        in the chat and has no control (``ResultFilters.said_in_chat``) stays, unless ``keep_chat`` is off."""
        if ui.workflow is None or not ui.results and ui.answer is not None:
            ui.say("assistant", "Run a paper search first; the filters narrow its results.")
            return ui
        try:
            filters = ResultFilters(
                year_min=_whole(year_min),
                year_max=_whole(year_max),
                venues=[v for v in venues or [] if v],
                paper_types=[t for t in paper_types or [] if t],
                min_citations=_whole(min_citations),
                **(current_filters(ui.workflow).said_in_chat().model_dump(exclude_defaults=True) if keep_chat else {}),
            )
        except (ValidationError, ValueError) as exc:
            msg = format_problems(exc) if isinstance(exc, ValidationError) else str(exc)
            ui.say("assistant", f"Those filters cannot be applied: {msg}. Nothing was changed.")
            return ui
        ui.say("user", "Filter the results: " + describe_filters(filters))
        await self._call(ui, "filtering", lambda s, f: s.filter_results(f), filters)
        return ui

    async def clear_filters(self, ui: UIState) -> UIState:
        return await self.apply_filters(ui, keep_chat=False)

    def filter_choices(self, ui: UIState) -> dict[str, Any]:
        """What the filter controls offer and show now: venues of the current list, the active filters."""
        active = current_filters(ui.workflow)
        venues = sorted({v for v in (profile().venue_label(r.paper) for r in ui.results) if v} | set(active.venues))
        said = active.said_in_chat()
        also = "" if said == ResultFilters() else describe_filters(said)
        top = main_node(ui.workflow, "top_k") if ui.workflow is not None else None
        order = ui.workflow.node(top).params.get("order", "score") if ui.workflow is not None and top else "score"
        lines = [f"Also applied, as said in the chat: {also}. “Clear filters” removes these too."] if also else []
        if order != "score" and (words := next((w for o, w in RESULT_ORDER_WORDS.items() if o == order), None)):
            lines.append(f"Shown {words} (say “best match first” in the chat to change it).")
        return {"venues": venues, "active": active, "also": "\n\n".join(lines)}

    def map_figure(self, ui: UIState) -> Any:
        session = ui.session
        embedder = getattr(self.runtime, "embedder", None) if self.runtime is not None else None
        anchor = session.anchor if session is not None else None
        direction = session.intent.direction if session is not None else None
        return result_map(ui.results, anchor, embedder=embedder, query=ui.search_label, direction=direction)

    def map_view(self, ui: UIState) -> Any | None:
        """The map for the current list, or None when the list has not changed since it was drawn."""
        session = ui.session
        key = (tuple(r.paper.id for r in ui.results), session.anchor.id if session and session.anchor else None)
        if key == ui.map_key:
            return None
        ui.map_key = key
        return self.map_figure(ui)

    def map_card(self, ui: UIState) -> str:
        if not ui.map_paper:
            return '<p class="pilot-empty">Click a paper on the map to see its card here.</p>'
        item = next((r for r in ui.results if r.paper.id == ui.map_paper), None)
        if item is None:
            paper = self._paper(ui, ui.map_paper)
            if paper is None:
                return '<p class="pilot-empty">That paper is no longer in the list.</p>'
            item = RankedPaper(paper=paper)
        rank = next((i for i, r in enumerate(ui.results, start=1) if r.paper.id == ui.map_paper), None)
        head = f"<p><b>#{rank}</b> in the list</p>" if rank else "<p><b>the anchor</b></p>"
        card = render.card_html(
            item,
            ui.workflow,
            in_library=item.paper.id in ui.library,
            rating=ui.ratings.get(item.paper.id),
            citation=ui.citation[1] if ui.citation and ui.citation[0] == item.paper.id else None,
            tag="div",
        )
        return f'<div class="pilot-results pilot-map-card">{head}{card}</div>'

    def weak(self, ui: UIState) -> bool:
        return ui.answer is None and weak_results(ui.results)

    def about_search(self, ui: UIState) -> str:
        session = ui.session
        if session is not None and session.anchor is not None:
            return f"the anchor “{session.anchor.title}”"
        if session is not None and session.intent.topic:
            return f"“{session.intent.topic}”"  # the subject read from the request, not the whole message
        return f"“{ui.search_label}”" if ui.search_label else "your request"

    def map_pick(self, ui: UIState, paper_id: str | None) -> UIState:
        if paper_id and self._paper(ui, paper_id) is not None:
            ui.map_paper = paper_id
        return ui

    # --- versions -----------------------------------------------------------------------------

    async def goto_version(self, ui: UIState, version: Any) -> UIState:
        try:
            number = int(str(version).lstrip("v"))
        except ValueError:
            ui.edit_message = f"There is no version {quote(version)}."
            return ui
        ui.say("user", f"Go to workflow version v{number}")
        reply = await self._call(ui, "switching versions", lambda s, v: s.goto_version(v), number)
        self._edit_feedback(ui, reply, f"v{number} is current again and ran.")
        return ui

    # --- DAG panel --------------------------------------------------------------------------

    def select_node(self, ui: UIState, node_id: str | None) -> UIState:
        wf = ui.workflow
        if wf is not None and node_id and wf.has_node(node_id):
            ui.selected = node_id
            ui.node_run = None
            ui.edit_message = ""
            self._sync_params(ui)
        return ui

    def toggle_group(self, ui: UIState, group: Any) -> UIState:
        """Open a group box of the workflow picture (its steps drawn one by one), or close it again."""
        wf = ui.workflow
        if wf is None or not isinstance(group, str) or group not in picture_groups(wf):
            return ui
        if group in ui.open_groups:
            ui.open_groups = [g for g in ui.open_groups if g != group]
        else:
            ui.open_groups = [*ui.open_groups, group]
        return ui

    def node_help(self, ui: UIState) -> str:
        """The selected operator's description and its params (name, type, true default) — markdown."""
        wf = ui.workflow
        if wf is None or not ui.selected or not wf.has_node(ui.selected):
            return ""
        op_cls = operator_or_none(wf.node(ui.selected).op)
        if op_cls is None:
            return f"unknown operator `{wf.node(ui.selected).op}`"
        return help_markdown(op_cls)

    def node_form(self, ui: UIState) -> str:
        """The params form of the selected node (HTML generated from its operator's params model)."""
        wf = ui.workflow
        if wf is None or not ui.selected or not wf.has_node(ui.selected):
            return '<p class="pilot-empty">Select a step of the workflow to edit its parameters.</p>'
        node = wf.node(ui.selected)
        op_cls = operator_or_none(node.op)
        if op_cls is None:
            return f'<p class="pilot-empty">unknown operator {html.escape(node.op)}: edit it as JSON below.</p>'
        return form_html(node, op_cls)

    async def apply_form(self, ui: UIState, node_id: str | None, values: Any) -> UIState:
        """The params form was submitted: typed, validated params replace the node's, then a re-run."""
        wf = ui.workflow
        if wf is None or not node_id or not wf.has_node(node_id):
            ui.edit_message = "That step is no longer in the workflow; select a step again."
            return ui
        ui.selected = node_id
        node = wf.node(node_id)
        op_cls = operator_or_none(node.op)
        if op_cls is None:
            ui.edit_message = f"Unknown operator {node.op!r}: edit its params as JSON."
            return ui
        try:
            params = read_form(op_cls, node.params, values)
        except FormError as exc:
            ui.edit_message = f"Not applied — {exc}. Nothing was changed."
            return ui
        if params == node.params:
            ui.edit_message = "Nothing changed in the form."
            return ui
        return await self.apply_params(ui, json.dumps(params, ensure_ascii=False))

    async def apply_params(self, ui: UIState, text: str) -> UIState:
        ui.params_text = text
        wf = ui.workflow
        if wf is None or not ui.selected or not wf.has_node(ui.selected):
            ui.edit_message = "Select a node first."
            return ui
        node = wf.node(ui.selected)
        if len(text or "") > limits.MAX_PARAMS_BYTES:
            ui.params_text = ""  # not kept: it would be sent back to the browser on every click
            ui.edit_message = (
                f"The params are {len(text):,} characters long; at most {limits.MAX_PARAMS_BYTES:,} are "
                "allowed. Nothing was changed."
            )
            return ui
        try:
            params = json.loads(text or "{}")
        except json.JSONDecodeError as exc:
            ui.edit_message = (
                f"The params are not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})."
                " Nothing was changed."
            )
            return ui
        except (RecursionError, ValueError):  # nesting deeper than the parser goes; a 5,000-digit number
            ui.edit_message = "The params are nested too deeply or hold a number too long to read. Nothing was changed."
            return ui
        if not isinstance(params, dict):
            ui.edit_message = 'The params must be a JSON object like {"year_min": 2008}. Nothing was changed.'
            return ui
        op_cls = operator_or_none(node.op)
        if op_cls is not None:
            try:
                op_cls.Params.model_validate(params)
            except ValidationError as exc:
                ui.edit_message = f"Invalid params for {node.op}: {format_problems(exc)}. Nothing was changed."
                return ui
        ui.say(
            "user",
            f"Change the step “{step_name(wf, node.id)}”",
            details=[f"edit node {node.id} ({node.op}): {json.dumps(params, ensure_ascii=False)}"],
        )
        reply = await self._call(
            ui,
            "re-running the edited workflow",
            lambda s, e: s.edit(e),
            ModifyNode(node_id=node.id, params=params, replace=True),
        )
        self._edit_feedback(ui, reply, f"Applied to the step “{step_name(wf, node.id)}” and re-ran.", keep_text=text)
        return ui

    def _edit_feedback(self, ui: UIState, reply: Reply | None, ok: str, keep_text: str | None = None) -> None:
        if reply is not None and not reply.error:
            ui.edit_message = "Done: " + ok
            return
        ui.edit_message = "Not applied: " + (
            reply.error if reply is not None and reply.error else ui.last_error or "the edit failed"
        )
        ui.edit_message += " — nothing was changed." if reply is None else ""
        if keep_text is not None:
            ui.params_text = keep_text

    async def add_node(self, ui: UIState, op_name: str | None) -> UIState:
        wf = ui.workflow
        if wf is None or not ui.selected:
            ui.edit_message = "Run a search and select a node first; the new node goes after it."
            return ui
        op_cls = operator_or_none(op_name or "")
        if op_cls is None:
            ui.edit_message = f"Choose an operator to add (unknown: {quote(op_name)})."
            return ui
        try:
            op_cls.Params.model_validate({})
            params: dict[str, Any] = {}
        except ValidationError as exc:
            ui.edit_message = (
                f"{op_cls.name} needs parameters ({format_problems(exc)}); it cannot be added with defaults."
            )
            return ui
        taken = {n.id for n in wf.nodes}
        new_id = next(f"{op_cls.name}_{i}" for i in range(1, 10_000) if f"{op_cls.name}_{i}" not in taken)
        edit = AddNode(node=Node(id=new_id, op=op_cls.name, params=params), after=ui.selected)
        ui.say(
            "user",
            f"Add a step ({op_cls.description.rstrip('.')}) after “{step_name(wf, ui.selected)}”",
            details=[f"add {op_cls.name} after {ui.selected}"],
        )
        previous = ui.selected
        reply = await self._call(ui, "adding the node", lambda s, e: s.edit(e), edit)
        if reply is not None and not reply.error and ui.workflow is not None and ui.workflow.has_node(new_id):
            ui.selected = new_id
            self._sync_params(ui)
        else:
            ui.selected = previous if ui.workflow is not None and ui.workflow.has_node(previous) else ui.selected
        self._edit_feedback(ui, reply, f"Added {new_id} after {previous}.")
        return ui

    async def remove_node(self, ui: UIState) -> UIState:
        if ui.workflow is None or not ui.selected:
            ui.edit_message = "Select a node to remove."
            return ui
        node_id = ui.selected
        ui.say("user", f"Remove the step “{step_name(ui.workflow, node_id)}”", details=[f"remove node {node_id}"])
        reply = await self._call(ui, "removing the node", lambda s, e: s.edit(e), RemoveNode(node_id=node_id))
        self._edit_feedback(ui, reply, f"Removed {node_id}.")
        return ui

    async def undo(self, ui: UIState) -> UIState:
        ui.say("user", "Undo")
        reply = await self._call(ui, "undo", lambda s: s.undo())
        self._edit_feedback(ui, reply, "Back to the previous version.")
        return ui

    async def run_all(self, ui: UIState) -> UIState:
        wf = ui.workflow
        if wf is None:
            ui.edit_message = "There is no workflow to run yet."
            return ui
        ui.say("user", "Run the whole workflow")
        reply = await self._call(ui, "running the workflow", lambda s: s.rerun())
        self._edit_feedback(ui, reply, "Ran the workflow (unchanged nodes came from the cache).")
        return ui

    async def run_node(self, ui: UIState) -> UIState:
        session = self._session(ui)
        if session is None or ui.workflow is None or not ui.selected:
            ui.edit_message = "Select a node to run."
            return ui
        try:
            ui.node_run = await session.run_node(ui.selected)
            ui.edit_message = f"Ran {ui.selected} alone — see the inspector."
        except Exception as exc:
            log.exception("run_node failed")
            ui.node_run = None
            ui.edit_message = f"Could not run {ui.selected}: {short_error(exc)}"
        return ui

    async def step(self, ui: UIState) -> UIState:
        """Run the next node in execution order and show it in the inspector: walking the DAG one step
        at a time, the way an annotator debugs an API plan."""
        session, wf = self._session(ui), ui.workflow
        if session is None or wf is None:
            ui.edit_message = "There is no workflow to step through yet."
            return ui
        current = wf.to_json()
        if ui.stepped_workflow != current:  # an edit (or a new search) starts the walk again
            ui.stepped, ui.stepped_workflow = [], current
        nxt = next(iter_ready(wf, set(ui.stepped)), None)
        if nxt is None:
            ui.stepped = []
            ui.edit_message = f"All {len(wf.nodes)} steps ran; press Step to walk the workflow again."
            return ui
        ui.selected = nxt
        self._sync_params(ui)
        ui.node_run = await session.run_node(nxt)
        ui.stepped.append(nxt)
        ui.edit_message = (
            f"Step {len(ui.stepped)} of {len(wf.nodes)}: ran {nxt} ({wf.node(nxt).op})"
            " on its inputs — see the inspector."
        )
        return ui

    async def load_workflow(self, ui: UIState, path: str | None) -> UIState:
        if not path:
            ui.edit_message = "Choose a workflow JSON file first."
            return ui
        try:
            size = Path(path).stat().st_size
            if size > limits.MAX_RECIPE_BYTES:  # refused before reading it
                raise export.RecipeError(
                    f"the workflow file is {size / 1024:,.0f} KB; at most {limits.MAX_RECIPE_BYTES // 1024} KB "
                    "are allowed"
                )
            workflow = export.load_recipe(Path(path).read_bytes())
        except (export.RecipeError, OSError) as exc:
            ui.edit_message = f"{exc}"
            ui.say("assistant", f"Could not load that workflow: {exc}")
            return ui
        ui.say("user", f"Load workflow {workflow.name or Path(path).name}")
        reply = await self._call(ui, "running the loaded workflow", lambda s, w: s.load_workflow(w), workflow)
        self._edit_feedback(ui, reply, "Loaded the workflow and ran it.")
        return ui


def _whole(value: Any) -> int | None:
    """A number box's value as a whole number; empty is None."""
    if value is None or value == "":
        return None
    number = float(value)
    if number != int(number):
        raise ValueError(f"{value} is not a whole number")
    return int(number)


def _search_key(session: Session | None) -> tuple[str, str | None] | None:
    """What makes two result lists the same search: the request and the anchor."""
    if session is None:
        return None
    return session.request, session.anchor.id if session.anchor is not None else None


def short_error(exc: BaseException) -> str:
    """An exception as one short sentence for the chat (never megabytes of an echoed value, never a key)."""
    text = redact(str(exc).strip()) or type(exc).__name__
    return text if len(text) <= 500 else text[:500] + "…"
