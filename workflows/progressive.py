"""Run a workflow and show its output before the run is complete.

    result = await run_progressively(workflow, ctx, cache, timeout_s, on_update)

Over a rate-limited API the sourcing steps finish seconds apart (a search now, a citation expansion a few
requests later). Whenever one of them finishes, a *preview* runs the rest of the workflow — merge,
filter, score, top-k, evidence — on what has arrived so far, with the sourcing steps still running left
out exactly as a failed input would be (``execute(..., absent=...)``). So the first ranked list is shown
as soon as the cheapest search is back, and it is replaced as expansions finish; the final list is the
normal run's output, identical to running without previews.

A preview never sends a request: it runs on a copy of the context whose source refuses every call
(precomputed vectors stay reachable), in a worker thread with its own event loop so that its CPU work
(embedding candidates) does not hold up the run's requests. At most one preview runs at a time; steps
finishing meanwhile are folded into the next one.

``on_update`` receives an ``Update`` on every step's start, progress and end, and with every preview;
it is called on the run's event loop and must be quick (put it on a queue).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pilot.embed import CachedVectors, Embedder
from pilot.sources.base import Source
from workflows.executor import MemoCache, NodeCache, RunEvent, RunResult, execute
from workflows.model import Workflow
from workflows.operator import RunContext
from workflows.ops.features import ships_embeddings
from workflows.registry import get_operator

log = logging.getLogger(__name__)

# Operator families whose steps call the source: a preview leaves them out instead of running them.
FETCHING = frozenset({"sourcing", "entities"})
STILL_RUNNING = "is still running"
_DOING = {
    "anchor": "finding the paper",
    "fetch": "fetching papers",
    "keyword_search": "searching",
    "semantic_search": "searching",
    "citation_expand": "following citations",
    "recommend": "asking for recommendations",
}


@dataclass
class Update:
    """Where a run stands: steps done, what the running steps are doing, and the latest preview."""

    done: int
    total: int
    running: dict[str, str] = field(default_factory=dict)  # node id -> what it is doing, in words
    preview: Any = None  # the output value computed from the steps finished so far
    final: bool = False

    def status_line(self) -> str:
        """ "4 of 12 steps done — expanding references: 12 of 40 seeds (cocited); searching (search_kw)" """
        if self.final:
            return ""
        doing = "; ".join(f"{what} ({nid})" for nid, what in self.running.items())
        return f"{self.done} of {self.total} steps done" + (f" — {doing}" if doing else "")


class _NoRequests(Source):
    """The run's source for a preview: every protocol call refuses (``NotSupported``), while extras such
    as precomputed vectors (``paper_vectors``, ``store``) stay reachable through ``inner``."""

    def __init__(self, inner: Source):
        self.inner = inner
        self.name = inner.name

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)


def _families(workflow: Workflow) -> dict[str, str]:
    return {n.id: getattr(get_operator(n.op), "family", "") for n in workflow.nodes}


def preview(
    workflow: Workflow, ctx: RunContext, finished: dict[str, Any], timeout_s: float | None = None, quick: bool = False
) -> RunResult:
    """The workflow's output from the steps finished so far (blocking: call it in a worker thread).

    ``quick``: embed nothing (vectors already cached or stored only): the first list must not wait for the model."""
    families = _families(workflow)
    absent = {nid: STILL_RUNNING for nid, fam in families.items() if fam in FETCHING and nid not in finished}
    embedder = CachedVectors(ctx.embedder) if quick and isinstance(ctx.embedder, Embedder) else ctx.embedder
    quiet = dataclasses.replace(ctx, source=_NoRequests(ctx.source), embedder=embedder, on_progress=None, notes=[])
    return asyncio.run(execute(workflow, quiet, MemoCache(), timeout_s, values=finished, absent=absent))


async def run_progressively(
    workflow: Workflow,
    ctx: RunContext,
    cache: NodeCache | None,
    timeout_s: float | None,
    on_update: Callable[[Update], Any],
) -> RunResult:
    """``execute`` with updates as steps start, progress and finish, and previews of the output."""
    families = _families(workflow)
    finished: dict[str, Any] = {}
    running: dict[str, str] = {}
    counts = {"done": 0, "total": len(workflow.nodes)}
    wanted = asyncio.Event()  # a sourcing step delivered papers since the last preview

    def publish(**kw: Any) -> None:
        try:
            on_update(Update(done=counts["done"], total=counts["total"], running=dict(running), **kw))
        except Exception as exc:  # a broken display must not sink the run
            log.warning("progress update failed: %s", exc)

    def on_event(ev: RunEvent) -> None:
        counts["done"], counts["total"] = ev.done, ev.total
        if ev.kind == "started" and families.get(ev.node_id) in FETCHING:
            running[ev.node_id] = _DOING.get(ev.op, f"running {ev.op}")
        elif ev.kind == "progress" and ev.text:
            running[ev.node_id] = ev.text
        elif ev.kind == "finished":
            running.pop(ev.node_id, None)
            if ev.status in ("ok", "cached"):
                finished[ev.node_id] = ev.value
                if families.get(ev.node_id) in FETCHING and ev.value:
                    wanted.set()
        publish()

    async def previews() -> None:
        first = True
        while True:
            await wanted.wait()
            wanted.clear()
            if workflow.output in finished:
                return
            snapshot = dict(finished)
            try:
                # the first list from cached vectors only, at once; later ones embed (which also warms the
                # embedding cache for the run's own scoring step while it still waits for requests) — unless the
                # source ships its own embeddings: the run's scoring then uses none of this machine's vectors,
                # and a preview's model work would only take the CPU from the run
                quick = first or ships_embeddings(ctx.source)
                result = await asyncio.to_thread(preview, workflow, ctx, snapshot, timeout_s, quick)
            except Exception as exc:  # a preview is a courtesy: the run goes on without it
                log.warning("preview failed: %s", exc, exc_info=log.isEnabledFor(logging.DEBUG))
                continue
            if workflow.output in finished:
                return  # the run itself finished while the preview was computed
            if result.output:
                first = False
                publish(preview=result.output)

    task = asyncio.create_task(previews())
    try:
        result = await execute(workflow, ctx, cache, timeout_s, on_event=on_event)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    running.clear()
    publish(preview=result.output, final=True)
    return result
