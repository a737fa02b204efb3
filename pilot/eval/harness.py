"""``pilot eval``: run benchmark cases through the same session code the app uses, score and report them.

Modes (what the system side sees is only ``anchor_paper_id``, ``anchor_title``, ``user_query`` and, for
CSFCube pool re-ranking, ``pool``):

- ``fixed``  — the fixed generic workflow (``workflows.templates.generic_workflow``) from the anchor and
  the request, loaded into a session and run; no questions.
- ``single`` — the session induces a workflow from the request alone: first message, then
  ``search_now()`` without answering any question.
- ``multi``  — the session's clarifier asks, ``clarifier.simulator.SimulatedUser`` answers from the case's
  latent intent (up to ``MAX_TURNS`` questions), then the session induces and runs the workflow.
- ``bm25``   — baseline: plain lexical search on the anchor title (no session), for "ahead of BM25".
- ``dense``  — baseline: the shipped MiniLM vectors' cosine to the same query (no session).
- ``hybrid`` — baseline: reciprocal-rank fusion (k = 60) of the two lists above, each ``HYBRID_DEPTH`` deep.

The anchor is handed over as its corpus id (``acl:…`` / ``s2:…``), so resolution is exact. Cases with
``hidden_edges`` run against ``HiddenEdgesSource`` wrapped around the shared source. Topic cases
(``direction: topic``, no anchor) send the request alone, exactly as a researcher would type it, against a
``HiddenPapersSource`` that makes their ``hidden_paper_ids`` (the answer key) not exist.

``sources`` (``--sources``, default ``local``) names what the session searches: ``s2`` runs the same
cases through the Semantic Scholar source (the real API, or ``pilot emulate s2`` serving the corpus —
``PILOT_S2_BASE_URL``). The corpus is then still read, never searched: to name each anchor in a form the
source understands (``ACL:…``, ``CorpusId:…``, else its title), to map the source's papers back to the
corpus ids of the gold (external ids, then the exact title), and for the pool fallback's vectors. The
hidden edges are removed by the same wrapper around the remote source, keyed by the anchor's id there.
Every turn's requests, cache hits, 429s, waits and seconds (to the first previewed results and to the
complete turn) go to ``runs.jsonl``; the harness's own look-ups (hidden edges, gold authors) are counted
apart, so the two add up to what the service saw. Cases run
concurrently on one event loop (``--workers`` at a time): the corpus store and the embedding model are
loaded once, and the CPU-heavy source calls already run in worker threads. A case that raises, times
out or ends with a session error is *failed*: it scores zero and counts in ``workflow_error_rate``.

CSFCube pool re-ranking: the session's final workflow ranks the pool itself (``pool.pool_workflow``: its
candidate gathering replaced by the pool, its filters, score formula and re-rankers kept); pool papers it
drops (a filter) follow by MiniLM cosine to the anchor (title + abstract), ties in pool order.
``pool_metrics_list`` keeps the older protocol: the session's top list first, then the cosine order.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import traceback
from collections.abc import Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from clarifier.simulator import SimulatedUser
from pilot.eval.metrics import CASE_DIRECTIONS, TOP_N, TOPIC, clean_ranking, ranking_metrics, zero_metrics
from pilot.eval.pool import pool_metrics, pool_ranking, pool_workflow
from pilot.eval.report import aggregate, write_outputs
from pilot.eval.workflow_metrics import workflow_similarity
from pilot.gate import SearchGate
from pilot.llm import get_llm
from pilot.models import as_json
from pilot.runtime import Runtime
from pilot.session import Session
from pilot.settings import Settings
from pilot.sources.base import SourceError
from pilot.sources.budget import budget_scope
from pilot.sources.hidden import HiddenEdgesSource, HiddenPapersSource
from pilot.sources.local import LocalCorpusSource
from pilot.sources.s2 import parse_s2_id
from workflows.executor import execute
from workflows.model import Workflow
from workflows.ops.features import strength_inputs
from workflows.templates import generic_workflow

log = logging.getLogger(__name__)

Mode = Literal["fixed", "single", "multi", "bm25", "dense", "hybrid"]
MODES: tuple[str, ...] = ("fixed", "single", "multi", "bm25", "dense", "hybrid")
BASELINES: tuple[str, ...] = ("bm25", "dense", "hybrid")  # no session: one search of the query
# the hybrid baseline: each list this deep, fused by reciprocal rank with the usual constant (Cormack et al. 2009)
HYBRID_DEPTH = 100
RRF_K = 60
MAX_TURNS = 4
# per node when the final workflow ranks a CSFCube pool: the sentences of ~100 abstracts embed in minutes on
# a busy 2-core machine, and the pool's ranking must not depend on how busy it was
POOL_NODE_TIMEOUT_S = 900.0
REQUIRED_FIELDS = ("case_id", "direction", "anchor_paper_id", "user_query")
TOPIC_FIELDS = tuple(f for f in REQUIRED_FIELDS if f != "anchor_paper_id")  # a topic case names no paper
# What the system under test may read of a case (bench README, "Rules for systems").
SYSTEM_FIELDS = ("case_id", "anchor_paper_id", "anchor_title", "user_query", "pool")


class EvalError(Exception):
    """Bad input to the harness (missing file, malformed cases, unknown mode): said plainly, no traceback."""


@dataclass
class EvalConfig:
    cases: Path
    mode: Mode
    out: Path
    corpus: Path | None = None
    llm: str | None = None
    limit: int | None = None
    workers: int = 2
    case_timeout_s: float = 300.0
    progress: bool = True
    case_ids: list[str] = field(default_factory=list)
    reference: Path | None = (
        None  # reference workflows per case: an earlier runs.jsonl, or {"case_id", "workflow"} lines
    )
    # the simulated user's own model (its LLM leak check); never the system's, so the system under test
    # cannot grade its own dialogue. None = the deterministic leak check only.
    simulator_llm: str | None = None
    # what the session searches: "local" (the corpus), "s2", "local,s2", … (PILOT_SOURCES syntax)
    sources: str = "local"

    @property
    def remote(self) -> bool:
        return any(name.strip() != "local" for name in self.sources.split(","))

    @property
    def label(self) -> str:
        return self.mode if self.sources == "local" else f"{self.mode}@{self.sources}"


# --- cases ---------------------------------------------------------------------------------------


def _jsonl(path: Path, what: str) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) of each non-empty line; a missing file or bad JSON is an ``EvalError``."""
    path = Path(path)
    if not path.is_file():
        raise EvalError(f"{what} file not found: {path}")
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                yield lineno, json.loads(line)
            except json.JSONDecodeError as exc:
                raise EvalError(f"{path}:{lineno}: not JSON ({exc.msg})") from None


def load_cases(path: Path, limit: int | None = None, case_ids: Sequence[str] = ()) -> list[dict]:
    """Benchmark cases from a JSONL file, checked for the fields the harness needs."""
    cases: list[dict] = []
    for lineno, case in _jsonl(path, "cases"):
        if not isinstance(case, dict):
            raise EvalError(f"{path}:{lineno}: a case must be a JSON object")
        topic = case.get("direction") == TOPIC
        missing = [k for k in (TOPIC_FIELDS if topic else REQUIRED_FIELDS) if not case.get(k)]
        if missing:
            raise EvalError(f"{path}:{lineno}: case lacks {', '.join(missing)}")
        if case["direction"] not in CASE_DIRECTIONS:
            raise EvalError(f"{path}:{lineno}: unknown direction {case['direction']!r}")
        if topic and case.get("anchor_paper_id"):
            raise EvalError(f"{path}:{lineno}: a topic case has no anchor paper")
        cases.append(case)
    if case_ids:
        wanted = set(case_ids)
        cases = [c for c in cases if c["case_id"] in wanted]
    if limit is not None:
        cases = cases[: max(0, limit)]
    if not cases:
        raise EvalError(f"no cases to run in {path}")
    return cases


def load_reference_workflows(path: Path) -> dict[str, Workflow]:
    """Reference workflow per case id: the final version of each case in an earlier ``runs.jsonl``, or the
    ``workflow`` of ``{"case_id", "workflow"}`` lines."""
    refs: dict[str, Workflow] = {}
    for lineno, row in _jsonl(path, "reference workflows"):
        try:
            wf = row.get("workflow") or ((row.get("versions") or [{}])[-1].get("workflow"))
            if wf:
                refs[row["case_id"]] = Workflow.model_validate(wf)
        except (KeyError, AttributeError, ValueError) as exc:
            raise EvalError(f"{path}:{lineno}: not a reference workflow line ({exc})") from None
    return refs


def system_view(case: dict) -> dict:
    """The part of a case the system under test may read."""
    return {k: case[k] for k in SYSTEM_FIELDS if k in case}


def facet_of(case: dict) -> str | None:
    """CSFCube facet of a case, for grouping pool metrics (scoring side only)."""
    q = case.get("csfcube_query") or ""
    if "_" in q:
        return q.rsplit("_", 1)[-1]
    return (case.get("latent_intent") or {}).get("facet")


# --- one case ------------------------------------------------------------------------------------


@dataclass
class CaseOutcome:
    ranked_ids: list[str] = field(default_factory=list)
    # per result: its match label and what the label is read from (label calibration, pilot.eval.calibration)
    strengths: list[dict[str, Any]] = field(default_factory=list)
    usage: list[dict] = field(default_factory=list)  # per turn: what it spent at the sources (SourceUsage)
    turns: int = 0
    questions_before_results: int = 0  # questions answered before the first reply that carried results
    error: str | None = None
    dialogue: list[dict] = field(default_factory=list)
    versions: list[Any] = field(default_factory=list)
    trace: Any = None
    notes: list[str] = field(default_factory=list)
    simulator_log: list[dict] = field(default_factory=list)


def _reply_error(reply: Any) -> str | None:
    return getattr(reply, "error", None) or None


def _session_record(session: Any, out: CaseOutcome, reply: Any, align: Any = None) -> None:
    out.dialogue = list(getattr(session, "history", []) or [])
    out.versions = [as_json(v) for v in getattr(session, "versions", []) or []]
    trace = getattr(reply, "trace", None)
    out.trace = as_json(trace) if trace is not None else None
    out.notes = list(getattr(reply, "notes", []) or [])
    results = getattr(reply, "results", None) or getattr(session, "results", None) or []
    out.ranked_ids = [align(r.paper) if align is not None else r.paper.id for r in results]
    out.strengths = [strength_inputs(r) for r in results]
    out.error = _reply_error(reply)


def _usage(out: CaseOutcome, step: str, reply: Any) -> Any:
    usage = getattr(reply, "usage", None)
    if usage is not None:
        out.usage.append({"step": step, "results": len(getattr(reply, "results", None) or []), **as_json(usage)})
    return reply


async def _answer_anchor_question(session: Any, reply: Any, anchor_id: str | None, align: Any = None) -> Any:
    """The session asked which paper was meant: pick the candidate with the anchor's (corpus) id ("none of
    these" for a topic case, whose user named no paper)."""
    wanted = {anchor_id} | {
        p.id for p in getattr(reply, "candidates", []) or [] if align is not None and align(p) == anchor_id
    }
    for i, option in enumerate(reply.question.options):
        if option.sets.get("anchor_id") in wanted:
            return await session.choose(i)
    for i, paper in enumerate(getattr(reply, "candidates", []) or []):
        if paper.id in wanted:
            return await session.choose(i)
    return reply


def first_message(case: dict, anchor: str | None = None) -> str:
    """The user's request with the anchor named by its corpus id (or ``anchor``: how the source names it),
    so resolving it is exact; a topic case's request alone."""
    if not case.get("anchor_paper_id"):
        return case["user_query"]
    return f"{case['user_query']} [{anchor or case['anchor_paper_id']}]"


async def run_session_case(
    runtime: Any, case: dict, mode: str, simulator: Any = None, *, anchor: str | None = None, align: Any = None,
    watch: bool = False,
) -> CaseOutcome:  # fmt: skip
    """Drive a ``pilot.session.Session`` through one case; only ``system_view(case)`` reaches it.

    ``anchor``: how to name the anchor to this source (default its corpus id); ``align``: paper -> corpus id
    for scoring; ``watch``: run workflows progressively (previews), so the time to first results is known."""
    view = system_view(case)
    session = Session(runtime)
    out = CaseOutcome()
    with session.observing(lambda update: None) if watch else nullcontext():
        if mode == "fixed":
            wf = generic_workflow(anchor or view.get("anchor_paper_id") or "", view["user_query"])
            reply = _usage(out, "load_workflow", await session.load_workflow(wf))
            _session_record(session, out, reply, align)
            return out

        reply = _usage(out, "first_message", await session.user_says(first_message(view, anchor)))
        if reply.question is not None and reply.question.slot == "anchor":
            chosen = await _answer_anchor_question(session, reply, view.get("anchor_paper_id"), align)
            reply = _usage(out, "anchor_choice", chosen)
        if mode == "multi":
            seen_results = bool(getattr(reply, "results", None))
            while reply.question is not None and reply.question.slot != "anchor" and out.turns < MAX_TURNS:
                kind, value = await simulator.answer_async(reply.question)
                out.turns += 1
                out.questions_before_results += 0 if seen_results else 1
                answer = session.choose(int(value)) if kind == "option" else session.user_says(str(value))
                reply = _usage(out, "answer", await answer)
                seen_results = seen_results or bool(getattr(reply, "results", None))
        if not getattr(reply, "results", None) and _reply_error(reply) is None:
            reply = _usage(out, "search_now", await session.search_now())
    _session_record(session, out, reply, align)
    if simulator is not None:
        out.simulator_log = list(simulator.log)
    return out


async def run_baseline_case(source: Any, case: dict, mode: str = "bm25") -> CaseOutcome:
    """One search, no session: the anchor's title as the query (its id when untitled), a topic case's request
    as typed; ``bm25`` lexical, ``dense`` MiniLM cosine, ``hybrid`` the two fused by reciprocal rank."""
    query = case.get("anchor_title") or case.get("anchor_paper_id") or case["user_query"]
    if mode in ("bm25", "dense"):
        hits = await source.search_papers(query, limit=TOP_N + 1, mode="lexical" if mode == "bm25" else "dense")
        return CaseOutcome(ranked_ids=[h.paper.id for h in hits])
    fused: dict[str, float] = {}
    for kind in ("lexical", "dense"):
        for rank, hit in enumerate(await source.search_papers(query, limit=HYBRID_DEPTH, mode=kind), start=1):
            fused[hit.paper.id] = fused.get(hit.paper.id, 0.0) + 1.0 / (RRF_K + rank)
    ranked = sorted(fused, key=lambda pid: -fused[pid])  # ties keep the lexical list's order
    return CaseOutcome(ranked_ids=ranked[: TOP_N + 1])


def _stored_vectors(source: Any, ids: Sequence[str]) -> dict[str, np.ndarray] | None:
    """Precomputed corpus vectors when the source keeps them (``LocalCorpusSource.paper_vectors``);
    embedding ~100 abstracts per case on this 2-core machine takes longer than the rest of the case."""
    lookup = getattr(source, "paper_vectors", None)
    if lookup is None:
        return None
    vecs = np.asarray(lookup(list(ids)), dtype=np.float32)
    return {pid: v for pid, v in zip(ids, vecs, strict=True) if not np.isnan(v).any()}


async def dense_pool_scores(runtime: Any, source: Any, anchor_id: str, pool: Sequence[str]) -> dict[str, float]:
    """MiniLM cosine of each pool paper to the anchor (title + abstract); ids the source lacks get none."""
    vecs = _stored_vectors(source, [anchor_id, *pool])
    if vecs is None:
        embedder = getattr(runtime, "embedder", None)
        if embedder is None:
            return {}
        papers = {p.id: p for p in await source.get_papers([anchor_id, *pool])}
        ids = list(papers)
        encoded = await asyncio.to_thread(embedder.encode, [papers[i].text for i in ids])
        vecs = dict(zip(ids, encoded, strict=True))
    if anchor_id not in vecs:
        return {}
    anchor = vecs[anchor_id]
    return {pid: float(vecs[pid] @ anchor) for pid in pool if pid in vecs}


async def gold_author_names(source: Any, case: dict) -> list[str]:
    """Gold papers' author names, for the simulator's leak check only (never shown to the system)."""
    try:
        papers = await source.get_papers(list(case.get("golden_paper_ids") or []))
    except Exception:  # a leak check with titles only is still a leak check
        return []
    return sorted({a.name for p in papers for a in p.authors if a.name})


class CorpusAligner:
    """Maps papers from any source to the corpus ids the gold uses: the corpus's own ids as they are; others
    by external id (ACL, CorpusId, DOI, ArXiv), then by exact normalised title (the nearest year)."""

    def __init__(self, store: Any):
        self.store = store

    def __call__(self, paper: Any) -> str:
        store = self.store
        if paper.id in store.row_of:
            return paper.id
        ext = {k.lower(): str(v) for k, v in (paper.external_ids or {}).items() if v not in (None, "")}
        if "corpus" in ext and ext["corpus"] in store.row_of:  # a merged copy of a corpus paper
            return ext["corpus"]
        if ext.get("acl") and f"acl:{ext['acl']}" in store.row_of:
            return f"acl:{ext['acl']}"
        for key, name in (("corpusid", "CorpusId"), ("doi", "DOI"), ("arxiv", "ArXiv"), ("acl", "ACL")):
            if ext.get(key):
                rows = store.rows_by_external_id(name, ext[key])
                if rows:
                    return store.ids[rows[0]]
        rows = store.rows_by_title(paper.title or "")
        if rows:
            year = paper.year or 0
            return store.ids[min(rows, key=lambda r: abs(int(store.year[r]) - year) if year else 0)]
        return paper.id

    def anchor_reference(self, case: dict, source: Any) -> str:
        """How to name the case's anchor to ``source``: its corpus id where the source takes that form, else an
        external id the source resolves (ACL:…, CorpusId:…, DOI), else its title in quotes."""
        anchor = case["anchor_paper_id"]
        if getattr(source, "name", "") in ("local", "multi") or parse_s2_id(anchor) is not None:
            return anchor
        row = self.store.row_of.get(anchor)
        paper = self.store.papers([row])[0] if row is not None else None
        for key, prefix in (("ACL", "ACL:"), ("CorpusId", "CorpusId:"), ("DOI", "")):
            value = paper.external_ids.get(key) if paper is not None else None
            if value:
                return prefix + str(value)
        return f'"{case.get("anchor_title") or (paper.title if paper else anchor)}"'


def score_case(case: dict, outcome: CaseOutcome | None, failed: bool) -> dict[str, float]:
    graded = case.get("graded") or None
    if failed or outcome is None:
        return zero_metrics(graded=graded is not None)
    return ranking_metrics(outcome.ranked_ids, case.get("golden_paper_ids") or [], case.get("anchor_paper_id"), graded)


# --- the run -------------------------------------------------------------------------------------


class Harness:
    """One evaluation run: a runtime (loaded once), the cases, and the mode."""

    def __init__(
        self, config: EvalConfig, runtime: Any, references: dict[str, Workflow] | None = None, corpus: Any = None
    ):
        """``corpus``: the corpus store the gold ids come from, needed when the sources are remote."""
        self.config = config
        self.runtime = runtime
        self.references = references or {}
        self.aligner = CorpusAligner(corpus.store) if corpus is not None else None
        self.corpus = corpus

        self.simulator_llm = get_llm(model=config.simulator_llm) if config.simulator_llm else None

    def _anchor(self, case: dict) -> str | None:
        if not case.get("anchor_paper_id"):
            return None  # a topic case: the request names no paper
        if self.aligner is None:
            return case["anchor_paper_id"]
        return self.aligner.anchor_reference(case, self.runtime.source)

    async def _case_runtime(self, case: dict) -> Any:
        """The case's runtime; with hidden edges, the source wrapped so they are gone (the anchor keyed by its
        id in that source, the edges across it looked up now, before the session's turns are counted); with
        hidden papers (a topic case's answer key), wrapped so they do not exist."""
        hidden, papers = case.get("hidden_edges"), case.get("hidden_paper_ids")
        if not hidden and not papers:
            return self.runtime

        source = HiddenPapersSource(self.runtime.source, papers) if papers else self.runtime.source
        if not hidden:
            return self.runtime.with_source(source)
        anchor_id = case["anchor_paper_id"]
        try:
            reference = self._anchor(case)
            if self.aligner is not None and self.config.remote and reference is not None:
                found = await self.runtime.source.match_paper(reference, limit=1)
                anchor_id = found[0].id if found else anchor_id
            wrapped = HiddenEdgesSource(source, anchor_id, hidden)
            await wrapped.neighbours()
        except SourceError:  # a source that fails here fails the session's turns too: they say so
            wrapped = HiddenEdgesSource(source, anchor_id, hidden)
        return self.runtime.with_source(wrapped)

    async def _run_one(self, case: dict) -> dict:
        mode = self.config.mode
        t0 = time.perf_counter()
        outcome: CaseOutcome | None = None
        error: str | None = None
        tb: str | None = None
        harness_usage: dict[str, Any] = {}
        try:
            with budget_scope(None) as machinery:  # the harness's own look-ups, counted apart from the turns
                rt = await self._case_runtime(case)
                authors = await gold_author_names(self.runtime.source, case) if mode == "multi" else []
            harness_usage = as_json(machinery.finish())
            if mode in BASELINES:
                coro = run_baseline_case(rt.source, case, mode)
            else:
                simulator = None
                if mode == "multi":
                    simulator = SimulatedUser(case, llm=self.simulator_llm, gold_authors=authors)
                coro = run_session_case(
                    rt, case, mode, simulator, anchor=self._anchor(case), align=self.aligner, watch=self.config.remote
                )
            outcome = await asyncio.wait_for(coro, timeout=self.config.case_timeout_s)
            error = outcome.error
        except TimeoutError:
            error = f"timed out after {self.config.case_timeout_s:.0f} s"
        except Exception as exc:  # a crashing case is a failed case, recorded with its traceback
            error = f"{type(exc).__name__}: {exc}"
            tb = traceback.format_exc(limit=8)
        latency = time.perf_counter() - t0
        failed = error is not None or outcome is None
        record: dict[str, Any] = {
            "case_id": case["case_id"],
            "mode": mode,
            "direction": case["direction"],
            "source": case.get("source"),
            "facet": facet_of(case) if case.get("pool") else None,
            "anchor_paper_id": case.get("anchor_paper_id"),
            "user_query": case["user_query"],
            "failed": failed,
            "error": error,
            "traceback": tb,
            "latency_s": round(latency, 3),
            "turns": outcome.turns if outcome else 0,
            "questions_before_results": outcome.questions_before_results if outcome else 0,
            "metrics": score_case(case, outcome, failed),
            "sources": self.config.sources,
            "source_usage": outcome.usage if outcome else [],
            "harness_usage": harness_usage,
        }
        ranked = clean_ranking(outcome.ranked_ids, case.get("anchor_paper_id")) if outcome else []
        record["ranked_ids"] = ranked
        if outcome and outcome.strengths:
            record["strengths"] = dict(zip(outcome.ranked_ids, outcome.strengths, strict=False))
        trace = outcome.trace if outcome else None
        record["node_failures"] = [n["node_id"] for n in (trace or {}).get("nodes", []) if n.get("status") == "failed"]
        reference = self.references.get(case["case_id"])
        if reference is not None:
            final = (
                Workflow.model_validate(outcome.versions[-1]["workflow"])
                if outcome and outcome.versions
                else Workflow()
            )
            record["workflow_metrics"] = workflow_similarity(reference, final)
        if case.get("pool"):
            fallback = await self._pool_fallback(case)
            graded = case.get("graded") or {}
            ranked_pool = [] if failed or outcome is None else await self._pool_order(case, outcome, ranked)
            record["pool_metrics"] = pool_metrics(pool_ranking(ranked_pool, case["pool"], fallback), graded)
            # the session's own top list, then the rest by the dense fallback (the protocol before the pool
            # was ranked by the workflow itself): shows how much of the pool the list reaches
            record["pool_metrics_list"] = pool_metrics(
                pool_ranking([] if failed else ranked, case["pool"], fallback), graded
            )
            # the same pool ordered by the dense fallback alone: an in-run floor to compare the session with
            record["pool_metrics_dense"] = pool_metrics(
                pool_ranking([], case["pool"], fallback), case.get("graded") or {}
            )
        if outcome:
            record.update(
                dialogue=outcome.dialogue,
                versions=outcome.versions,
                trace=trace,
                notes=outcome.notes,
                simulator_log=outcome.simulator_log,
            )
        return record

    async def _pool_order(self, case: dict, outcome: CaseOutcome, ranked: list[str]) -> list[str]:
        """The pool ranked by the session's final workflow (``pool_workflow``); the session's own list when
        the workflow cannot be re-pointed at the pool or fails on it."""
        if not outcome.versions:
            return ranked
        wf = pool_workflow(Workflow.model_validate(outcome.versions[-1]["workflow"]), case["pool"])
        if wf is None:
            return ranked
        rt = await self._case_runtime(case)
        try:
            result = await execute(wf, rt.context(), cache=rt.node_cache, timeout_s=POOL_NODE_TIMEOUT_S)
        except Exception as exc:  # the session's list still ranks part of the pool
            log.warning("pool workflow for %s failed: %s", case["case_id"], exc)
            return ranked
        return [it.paper.id for it in result.output or []]

    async def _pool_fallback(self, case: dict) -> dict[str, float]:
        # over a remote source the pool is still ordered with the corpus's vectors: the fallback is the same
        # in every run, so runs differ only in what the session returned
        source = self.corpus if self.corpus is not None else self.runtime.source
        try:
            return await dense_pool_scores(self.runtime, source, case["anchor_paper_id"], case["pool"])
        except Exception as exc:  # the pool is still ranked, in pool order
            log.warning("dense pool scores for %s unavailable: %s", case["case_id"], exc)
            return {}

    async def run(self, cases: Sequence[dict]) -> list[dict]:
        """Every case's record, in case order; at most ``workers`` cases in flight."""
        sem = asyncio.Semaphore(max(1, self.config.workers))
        bar = None
        if self.config.progress:
            from tqdm import tqdm

            bar = tqdm(total=len(cases), desc=f"eval {self.config.mode}", unit="case")

        async def one(case: dict) -> dict:
            async with sem:
                rec = await self._run_one(case)
            if bar is not None:
                bar.update(1)
                bar.set_postfix_str(case["case_id"][:40])
            return rec

        try:
            records = await asyncio.gather(*(one(c) for c in cases))
        finally:
            if bar is not None:
                bar.close()
        return list(records)


def make_runtime(config: EvalConfig) -> Any:
    """The process-wide services: the configured sources (default the local corpus; benchmark ids are
    corpus ids), optional LLM."""

    overrides: dict[str, Any] = {"sources": config.sources}
    if config.corpus is not None:
        if not Path(config.corpus).is_file():
            raise EvalError(f"corpus file not found: {config.corpus}")
        overrides["corpus"] = Path(config.corpus)
    settings = Settings(**overrides)
    if settings.corpus is None:
        raise EvalError("no corpus: pass --corpus FILE (or set PILOT_CORPUS); the gold ids are corpus ids")
    runtime = Runtime.from_settings(settings, llm_model=config.llm)
    runtime.searches = SearchGate(config.workers)  # the evaluation's own concurrency, not a server's slots
    unusable = [n for n in runtime.notes if "unreachable" in n.lower() or "no paper source" in n.lower()]
    if config.remote and (unusable or getattr(runtime.source, "name", "none") == "none"):
        raise EvalError("the sources to evaluate are not usable: " + "; ".join(unusable or runtime.notes))
    return runtime


def open_corpus(config: EvalConfig, runtime: Any) -> Any:
    """The corpus store the gold ids refer to, for runs over remote sources (None for local-only runs)."""
    if not config.remote:
        return None
    for src in getattr(runtime.source, "sources", [runtime.source]):
        if getattr(src, "name", "") == "local":
            return src
    if config.corpus is None:
        raise EvalError("runs over remote sources need --corpus: the gold ids are corpus ids")
    return LocalCorpusSource.open(Path(config.corpus), runtime.settings.cache_dir, progress=False)


def run_eval(config: EvalConfig, runtime: Any = None, corpus: Any = None) -> dict:
    """Run the cases, write ``runs.jsonl``, ``metrics.json``, ``report.md`` and ``report.png``; return the metrics.

    ``runtime`` / ``corpus``: already-open services (tests); by default they are opened from the config."""
    if config.mode not in MODES:
        raise EvalError(f"unknown mode {config.mode!r}; one of {', '.join(MODES)}")
    cases = load_cases(config.cases, config.limit, config.case_ids)
    references = load_reference_workflows(config.reference) if config.reference else {}
    config.out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    runtime = runtime if runtime is not None else make_runtime(config)
    corpus = corpus if corpus is not None else open_corpus(config, runtime)
    load_s = time.perf_counter() - t0
    records = asyncio.run(Harness(config, runtime, references, corpus).run(cases))
    wall = time.perf_counter() - t0
    with (config.out / "runs.jsonl").open("w", encoding="utf-8") as fh:
        for rec in records:
            fh.write(json.dumps(rec, default=str) + "\n")
    metrics = aggregate(
        config.mode,
        records,
        extra={
            "wall_s": round(wall, 2),
            "load_s": round(load_s, 2),
            "workers": config.workers,
            "llm": config.llm,
            "simulator_llm": config.simulator_llm,
            "cases_file": str(config.cases),
            "corpus": str(config.corpus) if config.corpus else None,
            "sources": config.sources,
            "label": config.label,
            "reference": str(config.reference) if config.reference else None,
        },
    )
    write_outputs(config.out, metrics)
    return metrics
