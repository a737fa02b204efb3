"""What each UI action does, without Gradio: one ``UIState`` per browser session, driven through the
``pilot.session.Session`` API. No search logic lives here — every action is one session call plus
bookkeeping for what the panels show (chat transcript, selected node, params text, export files).

Actions never raise: a failure becomes a readable chat message (and, for DAG edits, a message beside
the editor that keeps the user's text).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import shutil
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pilot import export
from pilot.models import RankedPaper
from pilot.runtime import Runtime
from pilot.session import Reply, Session
from workflows.graph import iter_ready
from workflows.model import AddNode, ModifyNode, Node, RemoveNode, RunTrace, Workflow
from workflows.registry import operator_or_none

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
    "I will ask a few quick questions (click an option or type your own answer), or press **Search now**."
)


def format_problems(exc: ValidationError) -> str:
    """Pydantic errors as one readable line per field."""
    lines = []
    for e in exc.errors():
        where = ".".join(str(p) for p in e["loc"]) or "params"
        lines.append(f"{where}: {e['msg']}")
    return "; ".join(lines)


@dataclass
class UIState:
    """Everything one browser session needs; lives in a ``gr.State``."""

    session: Session | None = None
    chat: list[dict[str, str]] = field(default_factory=list)
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
    # while a search runs: what it is doing, and a preview of its results from the steps done so far
    live_status: str = ""
    live_results: list[RankedPaper] | None = None
    updates: asyncio.Queue | None = None  # where the running session posts progress (``Controller.stream``)
    tmpdir: str = field(default_factory=lambda: tempfile.mkdtemp(prefix="pilot-ui-"))
    # Gradio runs events concurrently; one user's clicks must reach their session one at a time.
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

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
        return list(self.session.kept_ids) if self.session is not None else []

    @property
    def question(self):
        return self.session.question if self.session is not None else None

    def say(self, role: str, text: str) -> None:
        # The transcript keeps raw text; the layout escapes it on the way to the Chatbot.
        self.chat.append({"role": role, "content": text})


class Controller:
    """Actions of the UI over one shared runtime (source, caches, embedder) and per-user ``UIState``."""

    def __init__(self, runtime: Runtime | None, startup_notes: list[str] | None = None):
        self.runtime = runtime
        self.startup_notes = list(startup_notes or [])

    # --- session lifecycle ------------------------------------------------------------------

    def new_state(self) -> UIState:
        ui = UIState()
        ui.say("assistant", self.welcome())
        return ui

    def welcome(self) -> str:
        notes = self.startup_notes + (list(getattr(self.runtime, "notes", []) or []) if self.runtime else [])
        text = WELCOME if self.runtime is not None else NO_SOURCE_HELP
        if notes:
            text += "\n\n" + "\n".join(f"- {n}" for n in notes)
        return text

    def _session(self, ui: UIState) -> Session | None:
        if ui.session is None and self.runtime is not None:
            ui.session = Session(self.runtime)
        return ui.session

    async def _call(self, ui: UIState, what: str, coro_fn, *args) -> Reply | None:
        """Run one session call; show its reply (or a readable failure) in the chat."""
        session = self._session(ui)
        ui.last_error = None
        if session is None:
            ui.say("assistant", NO_SOURCE_HELP)
            ui.last_error = "no paper source is configured"
            return None
        queue = ui.updates
        watching = session.observing(queue.put_nowait) if queue is not None else contextlib.nullcontext()
        try:
            with watching:
                reply = await coro_fn(session, *args)
        except Exception as exc:  # noqa: BLE001 - the user sees a sentence, the log keeps the traceback
            log.exception("%s failed", what)
            ui.last_error = _short(exc)
            ui.say("assistant", f"⚠️ Sorry, {what} failed: {ui.last_error}")
            return None
        self._absorb(ui, reply)
        return reply

    def _absorb(self, ui: UIState, reply: Reply) -> None:
        parts = [reply.message.strip()] if reply.message and reply.message.strip() else []
        q = reply.question
        if q is not None and q.text and q.text not in reply.message:
            parts.append(q.text)
        if reply.error and reply.error.strip() not in reply.message:
            parts.append(f"⚠️ {reply.error}")
        if reply.diff:
            parts.append("Changes: " + "; ".join(reply.diff[:6]))
        for note in reply.notes:
            parts.append(f"_note: {note}_")
        if parts:
            ui.say("assistant", "\n\n".join(parts))
        if reply.trace is not None:
            ui.trace = reply.trace
        if reply.answer is not None or reply.results:
            ui.answer = reply.answer  # a new paper list replaces an earlier cited answer and vice versa
        wf = ui.workflow
        if wf is not None and (ui.selected is None or not wf.has_node(ui.selected)):
            ui.selected = wf.output or (wf.nodes[-1].id if wf.nodes else None)
            ui.node_run = None
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
        ui.live_status = f"⏳ {working}"
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
                ui.live_status = f"⏳ {line}"
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
        ui.say("user", text)
        await self._call(ui, "understanding your message", lambda s, t: s.user_says(t), text)
        return ui

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
            ui.say("assistant", "Pick a paper from the list first, then press 👍 or 👎.")
            return ui
        ui.ratings[paper_id] = up
        title = next(r.paper.title for r in ui.results if r.paper.id == paper_id)
        ui.say("user", f"{'👍' if up else '👎'} {title}")
        await self._call(ui, "refining with your rating", lambda s, p, u: s.rate(p, u), paper_id, up)
        return ui

    async def paper_action(self, ui: UIState, act: str | None, paper_id: str | None) -> UIState:
        """A click on a result's own 👍 / 👎 / keep button."""
        if act == "keep" and paper_id:
            kept = ui.kept_ids
            return self.keep(ui, [p for p in kept if p != paper_id] if paper_id in kept else [*kept, paper_id])
        if act in ("up", "down"):
            return await self.rate(ui, paper_id, act == "up")
        return ui

    def keep(self, ui: UIState, paper_ids: list[str]) -> UIState:
        if ui.session is not None:
            known = {r.paper.id for r in ui.results}
            # the checkboxes show the whole selection, so it replaces the kept set (Session.keep only adds)
            ui.session.kept_ids = []
            ui.session.keep([p for p in paper_ids if p in known])
        return ui

    def export_files(self, ui: UIState) -> dict[str, str | None]:
        """Write the BibTeX / CSV / workflow JSON downloads for the current list; paths by kind."""
        out: dict[str, str | None] = {"bibtex": None, "csv": None, "workflow": None}
        results = ui.results
        base = Path(ui.tmpdir)
        if results:
            chosen = export.export_targets(results, ui.kept_ids)
            (base / "pilot-papers.bib").write_text(export.to_bibtex([r.paper for r in chosen]), encoding="utf-8")
            (base / "pilot-papers.csv").write_text(export.to_csv(chosen, ui.kept_ids, ui.workflow), encoding="utf-8")
            out["bibtex"] = str(base / "pilot-papers.bib")
            out["csv"] = str(base / "pilot-papers.csv")
        if ui.workflow is not None:
            (base / "pilot-workflow.json").write_text(export.workflow_recipe(ui.workflow), encoding="utf-8")
            out["workflow"] = str(base / "pilot-workflow.json")
        return out

    # --- DAG panel --------------------------------------------------------------------------

    def select_node(self, ui: UIState, node_id: str | None) -> UIState:
        wf = ui.workflow
        if wf is not None and node_id and wf.has_node(node_id):
            ui.selected = node_id
            ui.node_run = None
            ui.edit_message = ""
            self._sync_params(ui)
        return ui

    def node_help(self, ui: UIState) -> str:
        """The selected operator's description and its params (name, type, default) — markdown."""
        wf = ui.workflow
        if wf is None or not ui.selected or not wf.has_node(ui.selected):
            return ""
        op_cls = operator_or_none(wf.node(ui.selected).op)
        if op_cls is None:
            return f"unknown operator `{wf.node(ui.selected).op}`"
        schema = op_cls.Params.model_json_schema()
        rows = []
        for name, prop in schema.get("properties", {}).items():
            kind = prop.get("type") or " | ".join(
                str(a.get("type", a.get("$ref", "?")).split("/")[-1]) for a in prop.get("anyOf", [])
            )
            default = json.dumps(prop.get("default")) if "default" in prop else "required"
            desc = prop.get("description", "")
            rows.append(f"- `{name}` ({kind}, default {default}){' — ' + desc if desc else ''}")
        head = f"**{op_cls.name}** — {getattr(op_cls, 'description', '')}"
        return head + ("\n\n" + "\n".join(rows) if rows else "\n\n(no parameters)")

    async def apply_params(self, ui: UIState, text: str) -> UIState:
        ui.params_text = text
        wf = ui.workflow
        if wf is None or not ui.selected or not wf.has_node(ui.selected):
            ui.edit_message = "⚠️ Select a node first."
            return ui
        node = wf.node(ui.selected)
        try:
            params = json.loads(text or "{}")
        except json.JSONDecodeError as exc:
            ui.edit_message = (
                f"⚠️ The params are not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})."
                " Nothing was changed."
            )
            return ui
        if not isinstance(params, dict):
            ui.edit_message = '⚠️ The params must be a JSON object like {"year_min": 2008}. Nothing was changed.'
            return ui
        op_cls = operator_or_none(node.op)
        if op_cls is not None:
            try:
                op_cls.Params.model_validate(params)
            except ValidationError as exc:
                ui.edit_message = f"⚠️ Invalid params for {node.op}: {format_problems(exc)}. Nothing was changed."
                return ui
        ui.say("user", f"Edit node {node.id}: {json.dumps(params, ensure_ascii=False)}")
        reply = await self._call(
            ui,
            "re-running the edited workflow",
            lambda s, e: s.edit(e),
            ModifyNode(node_id=node.id, params=params, replace=True),
        )
        self._edit_feedback(ui, reply, f"Applied to {node.id} and re-ran.", keep_text=text)
        return ui

    def _edit_feedback(self, ui: UIState, reply: Reply | None, ok: str, keep_text: str | None = None) -> None:
        if reply is not None and not reply.error:
            ui.edit_message = "✅ " + ok
            return
        ui.edit_message = "⚠️ " + (
            reply.error if reply is not None and reply.error else ui.last_error or "the edit failed"
        )
        ui.edit_message += " — nothing was changed." if reply is None else ""
        if keep_text is not None:
            ui.params_text = keep_text

    async def add_node(self, ui: UIState, op_name: str | None) -> UIState:
        wf = ui.workflow
        if wf is None or not ui.selected:
            ui.edit_message = "⚠️ Run a search and select a node first; the new node goes after it."
            return ui
        op_cls = operator_or_none(op_name or "")
        if op_cls is None:
            ui.edit_message = f"⚠️ Choose an operator to add (unknown: {op_name!r})."
            return ui
        try:
            op_cls.Params.model_validate({})
            params: dict[str, Any] = {}
        except ValidationError as exc:
            ui.edit_message = (
                f"⚠️ {op_cls.name} needs parameters ({format_problems(exc)}); it cannot be added with defaults."
            )
            return ui
        taken = {n.id for n in wf.nodes}
        new_id = next(f"{op_cls.name}_{i}" for i in range(1, 10_000) if f"{op_cls.name}_{i}" not in taken)
        edit = AddNode(node=Node(id=new_id, op=op_cls.name, params=params), after=ui.selected)
        ui.say("user", f"Add {op_cls.name} after {ui.selected}")
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
            ui.edit_message = "⚠️ Select a node to remove."
            return ui
        node_id = ui.selected
        ui.say("user", f"Remove node {node_id}")
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
            ui.edit_message = "⚠️ There is no workflow to run yet."
            return ui
        ui.say("user", "Run the whole workflow")
        reply = await self._call(ui, "running the workflow", lambda s: s.rerun())
        self._edit_feedback(ui, reply, "Ran the workflow (unchanged nodes came from the cache).")
        return ui

    async def run_node(self, ui: UIState) -> UIState:
        session = self._session(ui)
        if session is None or ui.workflow is None or not ui.selected:
            ui.edit_message = "⚠️ Select a node to run."
            return ui
        try:
            ui.node_run = await session.run_node(ui.selected)
            ui.edit_message = f"Ran {ui.selected} alone — see the inspector."
        except Exception as exc:  # noqa: BLE001 - shown beside the inspector, never as a traceback
            log.exception("run_node failed")
            ui.node_run = None
            ui.edit_message = f"⚠️ Could not run {ui.selected}: {_short(exc)}"
        return ui

    async def step(self, ui: UIState) -> UIState:
        """Run the next node in execution order and show it in the inspector: walking the DAG one step
        at a time, the way an annotator debugs an API plan."""
        session, wf = self._session(ui), ui.workflow
        if session is None or wf is None:
            ui.edit_message = "⚠️ There is no workflow to step through yet."
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
            ui.edit_message = "⚠️ Choose a workflow JSON file first."
            return ui
        try:
            workflow = export.load_recipe(Path(path).read_bytes())
        except (export.RecipeError, OSError) as exc:
            ui.edit_message = f"⚠️ {exc}"
            ui.say("assistant", f"⚠️ Could not load that workflow: {exc}")
            return ui
        ui.say("user", f"Load workflow {workflow.name or Path(path).name}")
        reply = await self._call(ui, "running the loaded workflow", lambda s, w: s.load_workflow(w), workflow)
        self._edit_feedback(ui, reply, "Loaded the workflow and ran it.")
        return ui


def _short(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text if len(text) <= 500 else text[:500] + "…"
