"""Run a workflow: independent nodes in parallel, per-node timeout and result cache, a trace of it all.

* The workflow is validated first; an invalid one never runs (``WorkflowError``).
* A node starts as soon as all its inputs are ready (one asyncio task per node).
* Each node's result is cached under operator + node id + normalised params + fingerprints of its
  input values + the context (source, LLM, embedder). An edit therefore re-runs only the edited node and
  whatever downstream actually sees a different input; the rest are ``cached`` in the trace. A value goes to
  the slower cache (disk, Redis) only when computing it took longer than storing it would (``worth_storing``);
  cheaper ones stay in the memory front. A value made while a source request failed is not cached at all.
* A failing node (any exception, a timeout) never sinks the run: nodes that need its value are skipped
  with the reason, everything else completes, and ``RunResult.errors`` says what failed. A ``many`` port
  (e.g. a union of several searches) and an optional port simply run without the failed input, with a
  note in the trace, so one dead source does not empty the whole result.

Operators are awaited on the event loop; one that blocks the loop with CPU work cannot be interrupted
by the timeout (asyncio cannot pre-empt it), so heavy operators should offload to a thread themselves.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import functools
import hashlib
import inspect
import logging
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel

from cache import fingerprint
from cache.codec import register_models
from pilot import limits
from pilot.models import Answer, Author, Org, Paper, RankedPaper, SearchHit, Venue
from pilot.sources.base import SourceError
from pilot.sources.budget import counting_failures, counting_waits
from workflows.graph import topo_order
from workflows.model import NodeTrace, RunTrace, Workflow
from workflows.operator import AnyOperator, OperatorError, RunContext
from workflows.ports import RelationEdge, RelationGraph
from workflows.registry import get_operator
from workflows.validate import MISSING_INPUT, MISSING_NODE, Problem, WorkflowError, normalized_params, validate

log = logging.getLogger(__name__)

KEY_VERSION = 3  # bump when the key recipe changes, so stale disk entries are never read

# What node values are made of (see workflows.ports): the models a node cache on disk may rebuild. The
# cache stores data only (cache.codec) and rebuilds nothing that is not registered.
register_models(Paper, RankedPaper, SearchHit, Answer, Author, Venue, Org, RelationGraph, RelationEdge)


@functools.cache
def code_version() -> str:
    """A hash of pilot's own source (the packages an operator's output can depend on), part of every node
    key: a node cache on disk outlives a code change, and an upgraded operator must not serve the old
    operator's output. Reading ~130 files once per process costs a few milliseconds."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for package in ("workflows", "pilot", "clarifier", "cache"):
        for path in sorted((root / package).rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


Progress = Callable[[int, int, str], Any]


@dataclass
class RunEvent:
    """What a run reports as it goes: a node started, said how far it got, or finished (with its value).

    ``done`` / ``total`` count finished nodes of the run. Handlers are called on the run's event loop and
    must be quick; an exception in one is logged and ignored."""

    kind: str  # "started" | "progress" | "finished"
    node_id: str
    op: str
    done: int
    total: int
    status: str | None = None  # finished: ok | cached | failed | skipped
    text: str | None = None  # progress: "expanding references: 12 of 40 seeds"
    value: Any = None  # finished: the node's value (None when it failed)


OnEvent = Callable[[RunEvent], Any]


class NodeCache(Protocol):
    """What the executor needs from a cache: ``cache.Cache`` and ``MemoCache`` both fit."""

    def get(self, key: str, default: Any = None) -> Any: ...

    def set(self, key: str, value: Any) -> None: ...


class MemoCache:
    """An in-memory LRU node cache, for sessions with no disk cache (values are shared, not copied).

    Bounded by entries and by their total size (papers, entities: ``_size`` of each value), so one visitor's
    huge workflow cannot fill the memory every other visitor's garbage collections must scan. Locked,
    because a UI runs sessions' event loops in several threads against one cache."""

    def __init__(self, max_items: int = 512, max_weight: int = limits.MAX_CACHED_ITEMS):
        self.max_items = max_items
        self.max_weight = max_weight
        self._data: OrderedDict[str, tuple[Any, int]] = OrderedDict()
        self._weight = 0
        self._lock = threading.Lock()

    def get(self, key: str, default: Any = None) -> Any:
        with self._lock:
            if key not in self._data:
                return default
            self._data.move_to_end(key)
            return self._data[key][0]

    def set(self, key: str, value: Any, weight: int | None = None) -> None:
        """Keep ``value`` (weighing ``weight`` items; by default the size of a node's value)."""
        weight = 1 + (_size(value[0] if isinstance(value, tuple) and value else value) if weight is None else weight)
        with self._lock:
            if key in self._data:
                self._weight -= self._data.pop(key)[1]
            self._data[key] = (value, weight)
            self._weight += weight
            while len(self._data) > self.max_items or (self._weight > self.max_weight and len(self._data) > 1):
                self._weight -= self._data.popitem(last=False)[1][1]

    def __len__(self) -> int:
        return len(self._data)


class TieredCache:
    """A memory cache in front of a slower one (disk): hits are served from memory after the first read."""

    def __init__(self, front: MemoCache, back: NodeCache):
        self.front = front
        self.back = back

    def get(self, key: str, default: Any = None) -> Any:
        value = self.front.get(key, _MISSING)
        if value is not _MISSING:
            return value
        value = self.back.get(key, _MISSING)
        if value is _MISSING:
            return default
        self.front.set(key, value)
        return value

    def set(self, key: str, value: Any) -> None:
        self.front.set(key, value)
        self.back.set(key, value)


# Decoding every node's paper list from disk costs ~1 s per warm run of a template, so each disk cache
# the executor sees gets a memory front for as long as that cache object lives (weakly keyed: no leak).
_FRONTS: weakref.WeakKeyDictionary[Any, MemoCache] = weakref.WeakKeyDictionary()
FRONT_ITEMS = 128  # ~10 template runs
# papers the front holds over all its entries: a paper read from the store is ~9 KB in memory (tracemalloc over
# 6,000 of them: 8.7 KB, three times its JSON), so ~90 MB; at 20,000 the fronts and the recent runs together held
# ~300 MB of a busy server's 1.6 GB
FRONT_PAPERS = 10_000


def with_memory_front(cache: NodeCache | None) -> NodeCache | None:
    if cache is None or isinstance(cache, (MemoCache, TieredCache)):
        return cache
    try:
        front = _FRONTS.setdefault(cache, MemoCache(FRONT_ITEMS, FRONT_PAPERS))
    except TypeError:  # not weak-referenceable: use it as it is
        return cache
    return TieredCache(front, cache)


@dataclass
class RunResult:
    values: dict[str, Any]
    trace: RunTrace
    output: Any
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.errors and self.trace.ok


@dataclass
class NodeOutcome:
    value: Any
    trace: NodeTrace


# --- fingerprints -------------------------------------------------------------------------------

_MISSING = object()


def value_fingerprint(value: Any) -> str:
    """A cheap stable fingerprint of a node value.

    Paper lists hash ids, scores and the evidence (not the papers' text, which an id pins down) through
    ``repr``, ~10x cheaper than a JSON dump. Two equal values may still hash differently (e.g. evidence
    scores inserted in another order); that only costs a cache miss, never a wrong hit.
    """
    if isinstance(value, list) and value and all(isinstance(v, RankedPaper) for v in value):
        blob = repr([(r.paper.id, r.score, r.evidence.__dict__) for r in value])
        return "r" + hashlib.sha256(blob.encode()).hexdigest()[:31]
    if isinstance(value, list) and value and all(isinstance(v, Paper) for v in value):
        return fingerprint("papers", [p.id for p in value])
    return fingerprint("value", value)


def context_fingerprint(ctx: RunContext) -> str:
    """What outside the workflow changes a node's output: the source, LLM, embedder.

    A source whose answers depend on more than its name (another corpus file, another API base, a wrapper
    hiding some of the graph) says so in its ``cache_key``, so two sources never read each other's values.
    """
    source = ctx.source
    return fingerprint(
        type(source).__qualname__,
        source.name,
        source.cache_key,
        ctx.llm.model if ctx.llm is not None else None,
        type(ctx.embedder).__name__ if ctx.embedder is not None else None,
        ctx.settings.embed_at_most,  # how many remote candidates a scoring step embeds
    )


def node_key(node_id: str, op: str, params: dict, input_fps: dict[str, list[str]], ctx_fp: str) -> str:
    # node_id is part of the key because operators stamp it into Evidence.nodes of their output
    return fingerprint("node", KEY_VERSION, code_version(), node_id, op, params, input_fps, ctx_fp)


# --- one node -----------------------------------------------------------------------------------


def values_size(values: dict[str, Any]) -> int:
    """Items (papers, entities) in a run's step values, all steps together."""
    return sum(_size(v) for v in values.values())


def _size(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, (list, tuple, set, dict)):
        return len(value)
    nodes = getattr(value, "nodes", None)  # RelationGraph
    if isinstance(nodes, list):
        return len(nodes)
    return 1


def _describe_exc(exc: BaseException) -> str:
    if isinstance(exc, SourceError | OperatorError):
        return str(exc)  # a sentence for the user: the source name and hint, or what the node lacks
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def _run_op(
    op_cls: type[AnyOperator],
    node_id: str,
    params: BaseModel,
    inputs: dict[str, Any],
    ctx: RunContext,
    timeout_s: float | None,
    on_progress: Callable[[str], None] | None = None,
) -> tuple[Any, list[str], int]:
    """The operator's value, its notes, and how many of its source requests failed (a value made despite failed
    requests is partial: it is shown, never cached)."""
    node_ctx = dataclasses.replace(ctx, node_id=node_id, notes=[], on_progress=on_progress or ctx.on_progress)
    own = {name: [_isolate(x) for x in v] if op_cls.inputs[name].many else _isolate(v) for name, v in inputs.items()}
    with counting_failures() as failed:
        coro = op_cls().run(node_ctx, params, op_cls.Inputs.of(own))
        value = await (_bounded(coro, timeout_s) if timeout_s else coro)
    return value, node_ctx.notes, failed[0]


async def _bounded(coro: Any, timeout_s: float) -> Any:
    """``coro``'s value, or ``TimeoutError`` after ``timeout_s`` seconds not counting the time it waited for a
    rate-limited source (a 429's ``Retry-After`` included): at 1 request/s, a step's turn in the queue is not
    the step being slow."""
    with counting_waits() as waited:
        task = asyncio.ensure_future(coro)  # the task takes the context with the wait counter
    started = time.perf_counter()
    return await until(task, lambda: timeout_s + waited[0] - (time.perf_counter() - started))


class DeadlinePassed(TimeoutError):
    """``until``'s deadline passed (not a timeout raised by the awaited work itself)."""


async def until(task: asyncio.Future[Any], left: Callable[[], float]) -> Any:
    """``task``'s value, or ``DeadlinePassed`` (the task cancelled) once ``left()``, asked again whenever it runs
    out, says no time is left: a deadline that moves (a rate-limit wait, a queue, a step that moved)."""
    try:
        while True:
            seconds = left()
            if seconds <= 0:
                raise DeadlinePassed
            done, _ = await asyncio.wait({task}, timeout=seconds)
            if done:
                return task.result()
    finally:
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


async def _execute_node(
    workflow: Workflow,
    node_id: str,
    inputs: dict[str, Any],
    input_fps: dict[str, list[str]],
    ctx: RunContext,
    cache: NodeCache | None,
    timeout_s: float | None,
    ctx_fp: str,
    extra_notes: list[str],
    on_progress: Callable[[str], None] | None = None,
) -> tuple[Any, NodeTrace, str | None]:
    """Run (or fetch from cache) one node. Returns (value, trace, output fingerprint or None if failed)."""
    node = workflow.node(node_id)
    op_cls = get_operator(node.op)
    params_model = op_cls.Params.model_validate(node.params)
    params = normalized_params(op_cls, node.params)
    n_in = sum(sum(_size(x) for x in v) if op_cls.inputs[name].many else _size(v) for name, v in inputs.items())
    trace = NodeTrace(node_id=node_id, op=node.op, n_in=n_in)
    key = node_key(node_id, node.op, params, input_fps, ctx_fp)
    started = time.perf_counter()
    if cache is not None:
        # cache I/O (disk or Redis, and decoding a node's papers) runs off the event loop: other sessions go on
        hit = await asyncio.to_thread(cache.get, key, _MISSING)
        if isinstance(hit, tuple) and len(hit) == 3:  # anything else is a foreign / damaged entry: recompute
            value, notes, fp = hit
            trace.status = "cached"
            trace.n_out = _size(value)
            trace.note = "; ".join([*extra_notes, *notes]) or None
            trace.seconds = time.perf_counter() - started
            ctx.notes.extend(f"{node_id}: {n}" for n in notes)  # a reused answer says what the first one said
            return value, trace, fp
    partial = 0
    try:
        value, notes, partial = await _run_op(op_cls, node_id, params_model, inputs, ctx, timeout_s, on_progress)
    except asyncio.CancelledError as exc:
        task = asyncio.current_task()
        if task is None or task.cancelling():
            raise  # the run itself is being cancelled
        trace.status, trace.error = "failed", _describe_exc(exc) or "cancelled"  # an operator's own cancel
        value, notes = None, []
    except Exception as exc:  # any operator failure is recorded, never propagated
        trace.status = "failed"
        value, notes = None, []
        if isinstance(exc, TimeoutError) and timeout_s and time.perf_counter() - started >= timeout_s * 0.99:
            trace.error = (
                f"timed out after {timeout_s:g}s — raise the per-node timeout or narrow this node's params "
                f"(smaller limit / depth)"
            )
        else:  # including a timeout inside the operator (an HTTP read, say): its own message says more
            log.warning("node %s (%s) failed: %s", node_id, node.op, exc, exc_info=log.isEnabledFor(logging.DEBUG))
            trace.error = _describe_exc(exc)
    trace.seconds = time.perf_counter() - started
    all_notes = [*extra_notes, *notes]
    trace.note = "; ".join(all_notes) or None
    ctx.notes.extend(f"{node_id}: {n}" for n in notes)
    if trace.status == "failed":
        return None, trace, None
    trace.n_out = _size(value)
    fp = value_fingerprint(value)
    if partial:
        # made while a source failed (down, slow, rate-limited, answering garbage, or the turn's budget spent):
        # kept for this run, not for the next, which asks again
        trace.note = "; ".join([*all_notes, f"not cached: {partial} source request(s) failed"])
    elif isinstance(cache, TieredCache) and not worth_storing(trace.seconds, trace.n_out):
        cache.front.set(key, (value, notes, fp))  # cheaper to compute again than to write and read back
    elif cache is not None:
        await asyncio.to_thread(cache.set, key, (value, notes, fp))
    return value, trace, fp


# What writing a node's value to the disk (or Redis) cache and reading it back costs per item (a paper), measured
# with ``scripts/profile_search.py``: 3.6 s of CPU for 33,000 papers in 123 writes, about as much to read. Those
# writes were 40 % of a search's CPU over the offline corpus, most of them lists that took milliseconds to make
# (a union, a score step over 500 papers). A value that took less time to compute than this to store stays in
# the memory front only: an edit re-uses it while it is there, and computes it again (quickly) after.
STORE_S_PER_ITEM = 2e-4


def worth_storing(seconds: float, items: int) -> bool:
    """Whether a value that took ``seconds`` to compute is worth the slower cache (its write and later read)."""
    return seconds >= STORE_S_PER_ITEM * max(1, items)


def _isolate(value: Any) -> Any:
    """A copy of a paper list whose scores and evidence a consumer may change without touching the
    producer's (possibly cached, possibly shared with a sibling) value. Papers themselves are shared:
    operators must not mutate a ``Paper``. One level of list/dict copying, not ``deepcopy``, which costs
    ~100x more on a 1000-paper list."""
    if isinstance(value, list) and value and isinstance(value[0], RankedPaper):
        return [_copy_ranked(r) if isinstance(r, RankedPaper) else r for r in value]
    if isinstance(value, list):
        return list(value)
    return value


def _copy_ranked(r: RankedPaper) -> RankedPaper:
    # copy.copy of a pydantic model copies its __dict__ (and fields-set); then un-share the containers
    ev = copy.copy(r.evidence)
    for k, v in ev.__dict__.items():
        if isinstance(v, (list, dict)):
            ev.__dict__[k] = v.copy()
    out = copy.copy(r)
    out.__dict__["evidence"] = ev
    return out


def _gather_inputs(
    workflow: Workflow, node_id: str, values: dict[str, Any], fps: dict[str, str], failed: dict[str, str]
) -> tuple[dict[str, Any], dict[str, list[str]], list[str], str | None]:
    """Inputs for a node whose producers have all finished.

    Returns (inputs, input fingerprints, notes, skip reason). ``many`` ports keep the values in edge
    order. A failed producer is dropped (with a note) from a ``many`` port that still has other inputs
    and from an optional port, which then arrives as if unconnected; it skips the node when a required
    port is left empty, or when every connected input failed (nothing left to work on).
    """
    op_cls = get_operator(workflow.node(node_id).op)
    inputs: dict[str, Any] = {}
    in_fps: dict[str, list[str]] = {}
    notes: list[str] = []
    first_bad: str | None = None
    for name, port in op_cls.inputs.items():
        edges = [e for e in workflow.edges if e.target == node_id and e.port == name]
        good = [e.source for e in edges if e.source not in failed]
        bad = [e.source for e in edges if e.source in failed]
        if bad and not good and not port.optional:
            return {}, {}, [], f"skipped: input from {bad[0]!r} {failed[bad[0]]}"
        first_bad = first_bad or (bad[0] if bad else None)
        notes += [f"input from {b!r} {failed[b]}; ran without it" for b in bad]
        if port.many and good:
            inputs[name] = [values[s] for s in good]
            in_fps[name] = [fps[s] for s in good]
        elif good:
            inputs[name] = values[good[0]]
            in_fps[name] = [fps[good[0]]]
    if first_bad is not None and not inputs:
        return {}, {}, [], f"skipped: input from {first_bad!r} {failed[first_bad]}"
    return inputs, in_fps, notes, None


# --- the scheduler ------------------------------------------------------------------------------


def _timeout(ctx: RunContext, timeout_s: float | None) -> float:
    """The per-node timeout: the caller's, else the one setting (``PILOT_NODE_TIMEOUT_S``)."""
    return timeout_s if timeout_s is not None else ctx.settings.node_timeout_s


async def _notify(progress: Progress | None, done: int, total: int, node_id: str) -> None:
    if progress is None:
        return
    try:
        res = progress(done, total, node_id)
        if inspect.isawaitable(res):
            await res
    except Exception as exc:  # a broken UI callback must not sink the run
        log.warning("progress callback failed: %s", exc)


def _emit(on_event: OnEvent | None, event: RunEvent) -> None:
    if on_event is None:
        return
    try:
        on_event(event)
    except Exception as exc:  # a broken UI callback must not sink the run
        log.warning("run event handler failed: %s", exc)


async def execute(
    workflow: Workflow,
    ctx: RunContext,
    cache: NodeCache | None = None,
    timeout_s: float | None = None,
    only: set[str] | None = None,
    progress: Progress | None = None,
    values: dict[str, Any] | None = None,
    on_event: OnEvent | None = None,
    absent: dict[str, str] | None = None,
) -> RunResult:
    """Run the workflow and return every node's value, the trace and the output value.

    ``timeout_s``: per node; None takes ``ctx.settings.node_timeout_s``.
    ``only``: run just these nodes plus the upstream nodes they need that are not given in ``values``
    (a UI stepping through the DAG passes the previous run's values). ``values``: already-known node
    values, used as-is and not re-run (they appear in the trace as ``cached``). ``on_event``: told when
    each node starts, reports progress and finishes (``RunEvent``). ``absent``: nodes not to run at all,
    node -> why; their consumers run without them as without a failed input (a preview of the output
    while those nodes are still running elsewhere).
    """
    validate(workflow, context="cannot run the workflow")
    timeout_s = _timeout(ctx, timeout_s)
    cache = with_memory_front(cache)
    given = dict(values or {})
    unknown = [n for n in (only or ()) if not workflow.has_node(n)]
    if unknown:
        raise WorkflowError(
            [Problem(n, MISSING_NODE, f"cannot run node {n!r}: there is no such node") for n in unknown]
        )
    order = topo_order(workflow)
    if only is not None:
        wanted: set[str] = set()
        todo = list(only)
        while todo:
            nid = todo.pop()
            if nid in wanted:
                continue
            wanted.add(nid)
            if nid in given and nid not in only:
                continue
            todo.extend(e.source for e in workflow.edges if e.target == nid)
        order = [n for n in order if n in wanted]
    for n in only or ():
        given.pop(n, None)  # asked to run it: do not reuse a given value

    ctx_fp = context_fingerprint(ctx)
    started = time.perf_counter()
    produced = 0  # items (papers, entities) the run's nodes have produced so far, against MAX_RUN_ITEMS
    over_budget: str | None = None
    results: dict[str, Any] = {}
    fps: dict[str, str] = {}
    failed: dict[str, str] = {}  # node -> "failed" | "was skipped (…)" for downstream messages
    traces: dict[str, NodeTrace] = {}
    errors: dict[str, str] = {}
    # a node with a given value waits for nothing (its producers may not be part of this run at all)
    preds = {nid: set() if nid in given else {e.source for e in workflow.edges if e.target == nid} for nid in order}
    pending = set(order)
    running: dict[asyncio.Task, str] = {}
    total = len(order)
    done = 0

    def finish(nid: str, value: Any, trace: NodeTrace, fp: str | None) -> None:
        nonlocal produced, over_budget
        if trace.status in ("ok", "cached") and nid not in given:
            produced += trace.n_out
            if produced > limits.MAX_RUN_ITEMS and over_budget is None:
                # one run may not hold more than this (memory, and the time every later node would take)
                over_budget = (
                    f"the workflow produced more than {limits.MAX_RUN_ITEMS:,} papers in all its steps "
                    f"(at {nid!r}) — give its searches smaller limits or use fewer of them"
                )
                trace.status, trace.error, value = "failed", over_budget, None
        traces[nid] = trace
        if trace.status == "failed" and trace.error != over_budget and (src := _passed_on(nid)) is not None:
            # a re-ordering step that failed (a timeout on a loaded machine, a slow source): its input goes on
            errors[nid] = trace.error or "failed"
            trace.note = "; ".join(x for x in (trace.note, f"its input from {src!r} was passed on unchanged") if x)
            results[nid], fps[nid] = results[src], fps[src]
        elif trace.status == "failed":
            failed[nid] = "failed"
            errors[nid] = trace.error or "failed"
        elif trace.status == "skipped":
            root = trace.error or ""
            failed[nid] = f"was skipped ({root.removeprefix('skipped: ')})"
        else:
            results[nid] = value
            fps[nid] = fp or value_fingerprint(value)

    def _passed_on(nid: str) -> str | None:
        """The producer of a failed re-ordering step's "in" list, when that list is at hand."""
        if not get_operator(workflow.node(nid).op).reorders_only:
            return None
        src = next((e.source for e in workflow.edges if e.target == nid and e.port == "in"), None)
        return src if src is not None and src in results else None

    for nid, why in (absent or {}).items():
        if nid in pending and nid not in given:
            pending.discard(nid)
            traces[nid] = NodeTrace(node_id=nid, op=workflow.node(nid).op, status="skipped", error=why)
            failed[nid] = why
            done += 1

    def report(nid: str, op: str):
        return lambda text: _emit(on_event, RunEvent("progress", nid, op, done, total, text=text))

    try:
        while pending or running:
            if over_budget is not None:  # stop: nothing more runs, what is running is cancelled
                for task in running:
                    task.cancel()
                await asyncio.gather(*running, return_exceptions=True)
                for nid in [*running.values(), *(n for n in order if n in pending)]:
                    note = f"not run: {over_budget}"
                    traces[nid] = NodeTrace(node_id=nid, op=workflow.node(nid).op, status="skipped", error=note)
                    failed[nid] = "was skipped (the run's size limit was reached)"
                running.clear()
                pending.clear()
                break
            for nid in [n for n in order if n in pending and preds[n] <= traces.keys()]:
                pending.discard(nid)
                node = workflow.node(nid)
                if nid in given:
                    value = given[nid]
                    finish(
                        nid,
                        value,
                        NodeTrace(
                            node_id=nid,
                            op=node.op,
                            status="cached",
                            n_out=_size(value),
                            note="value from a previous run",
                        ),
                        None,
                    )
                    done += 1
                    await _notify(progress, done, total, nid)
                    continue
                inputs, in_fps, notes, skip = _gather_inputs(workflow, nid, results, fps, failed)
                if skip:
                    finish(nid, None, NodeTrace(node_id=nid, op=node.op, status="skipped", error=skip), None)
                    done += 1
                    _emit(on_event, RunEvent("finished", nid, node.op, done, total, status="skipped"))
                    await _notify(progress, done, total, nid)
                    continue
                task = asyncio.create_task(
                    _execute_node(
                        workflow, nid, inputs, in_fps, ctx, cache, timeout_s, ctx_fp, notes, report(nid, node.op)
                    )
                )
                running[task] = nid
                _emit(on_event, RunEvent("started", nid, node.op, done, total))
            if not running:
                if pending and not any(preds[n] <= traces.keys() for n in pending):
                    raise RuntimeError(f"executor stalled with {sorted(pending)} pending")  # a bug, not user error
                continue
            finished, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            for task in finished:
                nid = running.pop(task)
                value, trace, fp = task.result()
                finish(nid, value, trace, fp)
                done += 1
                _emit(on_event, RunEvent("finished", nid, trace.op, done, total, status=trace.status, value=value))
                await _notify(progress, done, total, nid)
    finally:
        if running:  # the caller was cancelled (or a bug raised): leave no orphan operator tasks behind
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)

    run_trace = RunTrace(nodes=[traces[n] for n in order if n in traces], seconds=time.perf_counter() - started)
    return RunResult(values=results, trace=run_trace, output=results.get(workflow.output or ""), errors=errors)


async def run_node(
    workflow: Workflow,
    node_id: str,
    ctx: RunContext,
    upstream_values: dict[str, Any],
    cache: NodeCache | None = None,
    timeout_s: float | None = None,
) -> NodeOutcome:
    """Run one node alone on given upstream values (the UI's "run this node" inspector).

    Only the node's own inputs must be in ``upstream_values`` (e.g. ``RunResult.values`` of the last run).
    The node's failure is reported in the outcome's trace, not raised; a missing input is a ``WorkflowError``.
    """
    validate(workflow, context=f"cannot run node {node_id!r}")
    if not workflow.has_node(node_id):
        raise WorkflowError([Problem(node_id, MISSING_NODE, f"cannot run node {node_id!r}: there is no such node")])
    needed = sorted({e.source for e in workflow.edges if e.target == node_id})
    missing = [s for s in needed if s not in upstream_values]
    op_cls = get_operator(workflow.node(node_id).op)
    required_missing = [
        s
        for s in missing
        if any(
            e.source == s and not op_cls.inputs[e.port].optional and not op_cls.inputs[e.port].many
            for e in workflow.edges
            if e.target == node_id
        )
    ]
    if required_missing:
        raise WorkflowError(
            [
                Problem(
                    node_id,
                    MISSING_INPUT,
                    f"cannot run node {node_id!r} alone: no value yet for its input {s!r} — run the workflow "
                    f"(or node {s!r}) first",
                )
                for s in required_missing
            ]
        )
    absent = {s: "has no value yet" for s in missing}
    fps = {s: value_fingerprint(v) for s, v in upstream_values.items() if s in needed}
    inputs, in_fps, notes, skip = _gather_inputs(workflow, node_id, upstream_values, fps, absent)
    node = workflow.node(node_id)
    if skip:
        return NodeOutcome(None, NodeTrace(node_id=node_id, op=node.op, status="skipped", error=skip))
    value, trace, _ = await _execute_node(
        workflow,
        node_id,
        inputs,
        in_fps,
        ctx,
        with_memory_front(cache),
        _timeout(ctx, timeout_s),
        context_fingerprint(ctx),
        notes,
    )
    return NodeOutcome(value, trace)
