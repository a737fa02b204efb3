"""Feedback -> edits of the workflow. What a message says about the results ("too broad", "only after 2015",
"only EMNLP", "more like #3", "not #2", "fewer", "exclude speech" — read by ``pilot.reading`` into a ``Feedback``)
and thumbs up / down on result papers become add / modify / remove operations on the current workflow, applied
all-or-nothing and validated, so the user's own earlier edits survive and the new version's diff shows exactly what
the feedback did.

Nodes are found by operator (the ``filter``, ``score`` and ``top_k`` nodes nearest the output), so a
loaded or LLM-written workflow is refined as well as a template; a missing filter is inserted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import BaseModel, Field

from pilot import limits
from pilot.intent import apply_updates
from pilot.llm import LLM, LLMError
from pilot.models import Intent, RankedPaper
from pilot.vocab import PAPER_TYPE_PLURALS, PAPER_TYPES, RESULT_ORDER_WORDS, PublicationKind, ResultOrder, kinds_text
from workflows.diff import short
from workflows.edit import apply_edits, parse_edits
from workflows.graph import ancestors, topo_order
from workflows.inducer import MAX_REPAIRS, registry_description, workflow_problems
from workflows.model import AddNode, Edge, ModifyNode, Node, Rewire, Workflow
from workflows.registry import get_operator
from workflows.validate import WorkflowError


@dataclass
class Refinement:
    workflow: Workflow
    intent: Intent
    edits: list[Any] = field(default_factory=list)
    reason: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.edits)


# --- finding the nodes feedback acts on ---------------------------------------------------------


def main_node(wf: Workflow, op: str) -> str | None:
    """The node running ``op`` that feeds the output most directly (latest in topological order)."""
    if wf.output is None:
        return None
    on_path = ancestors(wf, wf.output) | {wf.output}
    found = [n for n in topo_order(wf) if n in on_path and wf.node(n).op == op]
    return found[-1] if found else None


def _fresh_id(wf: Workflow, base: str) -> str:
    if not wf.has_node(base):
        return base
    i = 2
    while wf.has_node(f"{base}_{i}"):
        i += 1
    return f"{base}_{i}"


def _producer(wf: Workflow, node_id: str, port: str = "in") -> str | None:
    return next((e.source for e in wf.inputs_of(node_id) if e.port == port), None)


class _Plan:
    """Collects edits against a working copy, so later edits see the nodes earlier ones added."""

    def __init__(self, wf: Workflow):
        self.wf = wf
        self.edits: list[Any] = []
        self.reasons: list[str] = []
        self.notes: list[str] = []

    def do(self, edit: Any, reason: str) -> None:
        self.wf = apply_edits(self.wf, [edit])
        self.edits.append(edit)
        self.reasons.append(reason)

    def filter_node(self) -> str:
        """The main filter node, inserted before scoring (or before the cut-off / output) when absent."""
        fid = main_node(self.wf, "filter")
        if fid:
            return fid
        wf = self.wf
        before = main_node(wf, "score") or main_node(wf, "top_k") or wf.output
        after = _producer(wf, before) if before else None
        after = after or wf.output
        new_id = _fresh_id(wf, "filter")
        anchor = main_node(wf, "anchor")
        inputs = [Edge(source=anchor, target=new_id, port="anchor")] if anchor else []
        self.do(
            AddNode(node=Node(id=new_id, op="filter", params={}, label="your constraints"), inputs=inputs, after=after),
            "added a filter for your constraints",
        )
        return new_id

    def modify_filter(self, params: dict[str, Any], reason: str) -> None:
        fid = self.filter_node()
        self.do(ModifyNode(node_id=fid, params=params), reason)

    def score_params(self) -> tuple[str, dict[str, Any]] | None:
        sid = main_node(self.wf, "score")
        return (sid, dict(self.wf.node(sid).params)) if sid else None


# --- parsing the feedback -----------------------------------------------------------------------


def _paper_at(results: list[RankedPaper], idx: int) -> str | None:
    return results[idx - 1].paper.id if 1 <= idx <= len(results) else None


class Feedback(BaseModel):
    """What a message says about the current results (built from its reading): which results it points at and what
    it changes."""

    text: str
    refs: list[int] = Field(default_factory=list, description="1-based result numbers it points at")
    drop: list[int] = Field(default_factory=list, description="results a mixed message leaves out ('less like #2')")
    this_one: bool = False  # "this one" / "that paper": the selected (or top) result
    negative: bool = False  # "not #2", "drop the third"
    kept: list[int] = Field(default_factory=list, description="the results a 'keep 2 through 5' kept (refs: the rest)")
    positive: bool = False  # "more like #3", "#1 is great"
    updates: dict[str, Any] = Field(default_factory=dict, description="intent fields the words set")
    size: str | None = None  # fewer | more | narrower | broader
    extra: int | None = None  # "10 more": that many results more than now
    any_year: bool = False
    any_venue: bool = False
    any_type: bool = False
    order: ResultOrder | None = None  # "newest first": the same results in another order
    # "more weight on citations", "care less about recency", "prefer older papers": a score feature -> more | less
    # | off | older (recency weighed the other way)
    weights: dict[str, str] = Field(default_factory=dict)

    @property
    def actionable(self) -> bool:
        return bool(
            self.refs
            or self.drop
            or self.this_one
            or self.updates
            or self.size
            or self.any_year
            or self.any_venue
            or self.any_type
            or self.order
            or self.weights
        )


def refine(
    workflow: Workflow,
    intent: Intent,
    feedback: Feedback,
    results: list[RankedPaper] | None = None,
    focus_id: str | None = None,
) -> Refinement:
    """Deterministic refinement. ``focus_id``: the paper "this one" refers to (the UI's selection);
    without it "this one" means the top result. Unactionable feedback gives no edits and a note."""
    fb = feedback
    results = results or []
    plan = _Plan(workflow)
    new_intent = intent
    try:
        refs = fb.refs
        this_one = focus_id or (_paper_at(results, 1) if fb.this_one else None)
        targets = [pid for pid in (_paper_at(results, i) for i in refs) if pid] + (
            [this_one] if this_one and not refs else []
        )
        if refs and not targets:
            plan.notes.append(f"there is no result {', '.join('#' + str(i) for i in refs)} to refer to")
        if targets and fb.negative:
            r = _exclude_papers(plan, targets)
            if fb.kept:  # "keep 2 through 5": said as what was kept, not as papers marked not relevant
                r = f"kept the {len(fb.kept)} paper(s) you chose ({', '.join('#' + str(i) for i in fb.kept)})"
            new_intent = apply_updates(new_intent, {"disliked_ids": targets}, note=fb.text)
            plan.reasons[-1] = r
        elif targets and fb.positive:
            for pid in targets:
                title = next((r.paper.title for r in results if r.paper.id == pid), None)
                _like_paper(plan, pid, f"“{short(title, 60)}”" if title else None)
            new_intent = apply_updates(new_intent, {"liked_ids": targets}, note=fb.text)
        if unwanted := [pid for pid in (_paper_at(results, i) for i in fb.drop) if pid]:
            r = _exclude_papers(plan, unwanted)
            new_intent = apply_updates(new_intent, {"disliked_ids": unwanted}, note=fb.text)
            plan.reasons[-1] = r

        updates = fb.updates
        if updates.get("year_min") is not None or updates.get("year_max") is not None:
            years: dict[str, Any] = {k: updates[k] for k in ("year_min", "year_max") if k in updates}
            merged = apply_updates(new_intent, years)
            params = {"year_min": merged.year_min, "year_max": merged.year_max}
            plan.modify_filter(params, "years " + _years_text(merged.year_min, merged.year_max))
            new_intent = merged
        if fb.any_year:
            plan.modify_filter({"year_min": None, "year_max": None}, "removed the year limits")
            new_intent = apply_updates(new_intent, {"year_min": None, "year_max": None})
        if updates.get("venues"):
            plan.modify_filter({"venues": updates["venues"]}, "only " + ", ".join(updates["venues"]))
            new_intent = apply_updates(new_intent, {"venues": updates["venues"]})
        elif fb.any_venue:
            plan.modify_filter({"venues": []}, "any venue")
            new_intent = apply_updates(new_intent, {"venues": []})
        if (least := updates.get("min_citations")) is not None:
            plan.modify_filter({"min_citations": least}, f"at least {least} citations")
            new_intent = new_intent.model_copy(update={"min_citations": least})
        if people := updates.get("authors"):
            plan.modify_filter({"authors": people}, "only papers by " + ", ".join(people))
        if orgs := updates.get("orgs"):
            plan.modify_filter({"orgs": orgs}, "only papers from " + ", ".join(orgs))
        if kinds := updates.get("publication_kinds"):
            plan.modify_filter({"publication_kinds": kinds}, kinds_text(kinds))
            new_intent = new_intent.model_copy(update={"publication_kinds": list(kinds)})
        if left_out := updates.get("exclude_venues"):
            merged = apply_updates(new_intent, {"exclude_venues": left_out})
            kept = [v for v in merged.venues if v not in left_out]
            plan.modify_filter(
                {"exclude_venues": merged.exclude_venues, "venues": kept}, "not from " + ", ".join(left_out)
            )
            new_intent = merged.model_copy(update={"venues": kept})
        if updates.get("exclude_terms") and not targets:
            fid = plan.filter_node()
            terms = list(dict.fromkeys([*plan.wf.node(fid).params.get("exclude_terms", []), *updates["exclude_terms"]]))
            plan.modify_filter({"exclude_terms": terms}, "excluding " + ", ".join(updates["exclude_terms"]))
            new_intent = apply_updates(new_intent, {"exclude_terms": updates["exclude_terms"]})
        if fb.any_type and not updates.get("paper_types"):
            plan.modify_filter({"paper_types": []}, "every kind of paper again")
            new_intent = new_intent.model_copy(update={"paper_types": []})
        if kinds := updates.get("paper_types"):
            dropped = " and ".join(PAPER_TYPE_PLURALS[k] for k in PAPER_TYPES if k not in kinds)
            only = " and ".join(PAPER_TYPE_PLURALS[k] for k in kinds)
            plan.modify_filter({"paper_types": kinds}, f"leaving out {dropped}" if len(kinds) > 1 else f"only {only}")
            new_intent = apply_updates(new_intent, {"paper_types": kinds})
        if period := updates.get("exclude_years"):
            new_intent = apply_updates(new_intent, {"exclude_years": period})
            first, last = period[0]
            plan.modify_filter({"exclude_years": new_intent.exclude_years}, "leaving out " + _years_text(first, last))
        new_intent = _score_preferences(plan, new_intent, updates, fb.weights)
        new_intent = _size(plan, new_intent, fb)
        if fb.order:
            tid = main_node(plan.wf, "top_k")
            if tid is None:
                plan.notes.append("this search has no step that cuts the list (top_k), so its order was not changed")
            else:
                plan.do(ModifyNode(node_id=tid, params={"order": fb.order}), RESULT_ORDER_WORDS[fb.order])
                new_intent = apply_updates(new_intent, {"order": fb.order})
    except WorkflowError as exc:
        return Refinement(workflow, intent, [], "", [f"could not apply that feedback: {exc}"])
    if not plan.edits:
        plan.notes.append(
            "I could not turn that into a change of the search; try e.g. 'only after 2010', 'only EMNLP', "
            "'more like #3', 'not #2', 'fewer', 'too broad' or 'exclude speech'"
        )
        return Refinement(workflow, intent, [], "", plan.notes)
    if fb.text not in new_intent.notes:
        new_intent = apply_updates(new_intent, {}, note=fb.text)
    return Refinement(plan.wf, new_intent, plan.edits, "; ".join(dict.fromkeys(plan.reasons)), plan.notes)


def _years_text(lo: int | None, hi: int | None) -> str:
    if lo and lo == hi:
        return str(lo)
    if lo and hi:
        return f"{lo}–{hi}"
    return f"from {lo}" if lo else (f"up to {hi}" if hi else "any")


def _exclude_papers(plan: _Plan, ids: list[str]) -> str:
    fid = plan.filter_node()
    current = list(plan.wf.node(fid).params.get("exclude_ids", []))
    plan.modify_filter({"exclude_ids": list(dict.fromkeys([*current, *ids]))}, "")
    return f"removed {len(ids)} paper(s) you marked as not relevant"


def _like_paper(plan: _Plan, paper_id: str, name: str | None = None) -> None:
    """Re-rank the results towards a liked paper: its node joins a ``liked`` set that a dense rerank
    after the scoring compares every candidate with. ``name`` says which paper in the version's reason."""
    wf = plan.wf
    like_id = _fresh_id(wf, "like")
    liked = "liked" if wf.has_node("liked") and wf.node("liked").op == "union" else None
    plan.do(
        AddNode(node=Node(id=like_id, op="anchor", params={"query": paper_id}, label=f"liked {paper_id}")),
        f"more like {name or paper_id}",
    )
    if liked:
        plan.do(Rewire(add=[Edge(source=like_id, target=liked, port="in")]), f"more like {name or paper_id}")
        return
    plan.do(
        AddNode(
            node=Node(id="liked", op="union", label="papers you liked"),
            inputs=[Edge(source=like_id, target="liked", port="in")],
        ),
        f"more like {name or paper_id}",
    )
    after = (
        main_node(plan.wf, "score")
        or _producer(plan.wf, main_node(plan.wf, "top_k") or "")
        or _producer(plan.wf, plan.wf.output or "")
    )
    if after is None:
        raise WorkflowError([], "no ranked list to re-rank towards the liked paper")
    rerank_id = _fresh_id(plan.wf, "more_like")
    plan.do(
        AddNode(
            node=Node(
                id=rerank_id,
                op="rerank",
                params={"method": "dense", "alpha": 0.5, "top_n": 200},
                label="closer to the papers you liked",
            ),
            inputs=[Edge(source="liked", target=rerank_id, port="anchor")],
            after=after,
        ),
        f"more like {name or paper_id}",
    )


_FEATURE_WORDS = {"citations": "citations", "recency": "recency", "dense": "similarity", "lexical": "keywords"}
_WEIGHT_WORDS = {
    "more": "more weight on {feature} (×{weight:g})",
    "less": "less weight on {feature} (×{weight:g})",
    "off": "{feature} no longer counts",
    "older": "older work first ({feature} ×{weight:g})",
}


def _score_preferences(
    plan: _Plan, intent: Intent, updates: dict[str, Any], weights: dict[str, str] | None = None
) -> Intent:
    """Soft preferences (topic terms, recency, seminal, the weight of a feature) change the score formula, not the
    filter."""
    sp = plan.score_params()
    if sp is None:
        if any(k in updates for k in ("topic_terms", "recency")) or weights:
            plan.notes.append(
                "this search has no ranking step (score), so topic and recency preferences were not applied"
            )
        return intent
    sid, params = sp
    features = dict(params.get("features") or {"dense": 1.0})
    change: dict[str, Any] = {}
    why: list[str] = []
    if updates.get("topic_terms"):
        terms = updates["topic_terms"]
        change["text"] = " ".join(dict.fromkeys([*str(params.get("text", "")).split(), *terms])).strip()
        features["lexical"] = max(features.get("lexical", 0.0), 1.0)
        why.append("focus on " + ", ".join(terms))
        intent = apply_updates(intent, {"topic_terms": terms})
    if updates.get("recency") == "recent":
        features["recency"] = features.get("recency", 0.0) + 0.5
        why.append("prefer recent work")
        intent = apply_updates(intent, {"recency": "recent"})
    elif updates.get("recency") == "seminal":
        features["citations"] = features.get("citations", 0.0) + 0.5
        features["recency"] = features.get("recency", 0.0) - 0.3
        why.append("prefer seminal, highly cited work")
        intent = apply_updates(intent, {"recency": "seminal"})
    for name, how in (weights or {}).items():
        now = features.get(name, 0.0)
        if how == "more":
            features[name] = round(now * 2 if now > 0 else now + 0.5, 3)
        elif how == "less":
            features[name] = round(now / 2 if now > 0 else now - 0.3, 3)
        elif how == "off":
            features[name] = 0.0
        else:  # older: the year counts against a paper
            features[name] = round(min(now, 0.0) - 0.5, 3)
        why.append(_WEIGHT_WORDS[how].format(feature=_FEATURE_WORDS[name], weight=features[name]))
    if why:
        change["features"] = features
        plan.do(ModifyNode(node_id=sid, params=change), "; ".join(why))
    return intent


def _size(plan: _Plan, intent: Intent, fb: Feedback) -> Intent:
    """How many results, and how focused: "fewer", "more", "too broad", "too narrow", "top 10"."""
    tid = main_node(plan.wf, "top_k")
    k_now = int(plan.wf.node(tid).params.get("k", intent.k)) if tid else intent.k
    k_new = None
    if "k" in fb.updates:
        k_new = fb.updates["k"]
    elif fb.extra:
        k_new = min(200, k_now + fb.extra)
    elif fb.size == "narrower":
        k_new = max(5, k_now // 2)
        sp = plan.score_params()
        if sp:
            sid, params = sp
            features = dict(params.get("features") or {})
            # a broad list drifts away from the anchor: weigh similarity to it more
            features["dense"] = round(features.get("dense", 0.0) + 0.5, 3)
            features["lexical"] = round(features.get("lexical", 0.0) + 0.3, 3)
            plan.do(
                ModifyNode(node_id=sid, params={"features": features}), "too broad: weigh closeness to the anchor more"
            )
    elif fb.size in ("broader", "more"):
        k_new = min(200, k_now * 2)
    elif fb.size == "fewer":
        k_new = max(5, k_now // 2)
    if k_new is None or k_new == k_now:
        return intent
    if tid is None:
        plan.notes.append("this search has no step that cuts the list (top_k), so the number of results is unchanged")
        return intent
    plan.do(ModifyNode(node_id=tid, params={"k": k_new}), f"{k_new} results instead of {k_now}")
    return apply_updates(intent, {"k": k_new})


def rate(workflow: Workflow, intent: Intent, paper_id: str, up: bool) -> Refinement:
    """Thumbs up: re-rank towards the paper. Thumbs down: drop it."""
    plan = _Plan(workflow)
    try:
        if up:
            _like_paper(plan, paper_id)
            new_intent = apply_updates(intent, {"liked_ids": [paper_id]})
        else:
            plan.reasons.append(_exclude_papers(plan, [paper_id]))
            new_intent = apply_updates(intent, {"disliked_ids": [paper_id]})
    except WorkflowError as exc:
        return Refinement(workflow, intent, [], "", [f"could not apply the rating: {exc}"])
    return Refinement(
        plan.wf, new_intent, plan.edits, "; ".join(r for r in dict.fromkeys(plan.reasons) if r), plan.notes
    )


# --- the results panel's filters ---------------------------------------------------------------


class ResultFilters(BaseModel):
    """What the filter controls beside the results set; each maps to a param of the main filter node."""

    year_min: int | None = Field(None, ge=1000, le=2100)
    year_max: int | None = Field(None, ge=1000, le=2100)
    # bounded like a filter node's params (pilot.limits): the choices are echoed into the chat and the workflow
    venues: list[Annotated[str, Field(max_length=limits.MAX_LABEL_CHARS)]] = Field(
        default_factory=list, max_length=limits.MAX_LIST_ITEMS
    )
    paper_types: list[Annotated[str, Field(max_length=limits.MAX_ID_CHARS)]] = Field(default_factory=list, max_length=8)
    min_citations: int | None = Field(None, ge=0)
    # said in the chat ("not from the 2000s", "only the ones by Nivre", "not from arXiv", "exclude speech"): the
    # form shows them as a line, keeps them when its own controls are applied, and "Clear filters" removes them
    exclude_years: list[tuple[int, int]] = Field(default_factory=list, max_length=limits.MAX_LIST_ITEMS)
    authors: list[Annotated[str, Field(max_length=limits.MAX_LABEL_CHARS)]] = Field(
        default_factory=list, max_length=limits.MAX_LIST_ITEMS
    )
    exclude_venues: list[Annotated[str, Field(max_length=limits.MAX_LABEL_CHARS)]] = Field(
        default_factory=list, max_length=limits.MAX_LIST_ITEMS
    )
    exclude_terms: list[Annotated[str, Field(max_length=limits.MAX_LABEL_CHARS)]] = Field(
        default_factory=list, max_length=limits.MAX_LIST_ITEMS
    )
    publication_kinds: list[PublicationKind] = Field(default_factory=list, max_length=5)
    orgs: list[Annotated[str, Field(max_length=limits.MAX_LABEL_CHARS)]] = Field(
        default_factory=list, max_length=limits.MAX_LIST_ITEMS
    )

    def said_in_chat(self) -> ResultFilters:
        """Only the constraints the form has no control for."""
        return ResultFilters.model_validate(self.model_dump(include=set(CHAT_KEYS)))


FILTER_KEYS = tuple(ResultFilters.model_fields)
CHAT_KEYS = ("exclude_years", "authors", "exclude_venues", "exclude_terms", "publication_kinds", "orgs")


def current_filters(workflow: Workflow | None) -> ResultFilters:
    """The filters the workflow applies now (read from its main filter node), to pre-fill the controls."""
    fid = main_node(workflow, "filter") if workflow is not None else None
    if workflow is None or fid is None:
        return ResultFilters()
    params = workflow.node(fid).params
    return ResultFilters.model_validate({k: params[k] for k in FILTER_KEYS if params.get(k) is not None})


def describe_filters(f: ResultFilters) -> str:
    parts = []
    if f.year_min is not None or f.year_max is not None:
        parts.append("years " + _years_text(f.year_min, f.year_max))
    if f.venues:
        parts.append("venues " + ", ".join(f.venues))
    if f.paper_types:
        parts.append("types " + ", ".join(f.paper_types))
    if f.min_citations:
        parts.append(f"at least {f.min_citations} citations")
    parts += [f"leaving out {_years_text(first, last)}" for first, last in f.exclude_years]
    if f.authors:
        parts.append("only papers by " + ", ".join(f.authors))
    if f.exclude_venues:
        parts.append("not from " + ", ".join(f.exclude_venues))
    if f.exclude_terms:
        parts.append("excluding " + ", ".join(f.exclude_terms))
    if f.publication_kinds:
        parts.append(kinds_text(f.publication_kinds))
    if f.orgs:
        parts.append("only papers from " + ", ".join(f.orgs))
    return "; ".join(parts) or "no filters"


def filter_results(workflow: Workflow, intent: Intent, filters: ResultFilters) -> Refinement:
    """One edit of the main filter node (inserted if missing) that sets exactly ``filters``: a control
    left empty removes its constraint. No change when the workflow already filters this way."""
    if filters.year_min is not None and filters.year_max is not None and filters.year_min > filters.year_max:
        return Refinement(workflow, intent, [], "", [f"the year range {filters.year_min}–{filters.year_max} is empty"])
    if current_filters(workflow) == filters:
        return Refinement(workflow, intent, [], "", ["those filters are already applied"])
    plan = _Plan(workflow)
    try:
        fid = plan.filter_node()
        known = get_operator(plan.wf.node(fid).op).Params.model_fields
        wanted = filters.model_dump(mode="json")  # periods as [first, last], as a node's params hold them
        if filters.paper_types and "paper_types" not in known:
            return Refinement(workflow, intent, [], "", ["this version of the filter step cannot select paper types"])
        params = {k: v for k, v in plan.wf.node(fid).params.items() if k not in FILTER_KEYS}
        params.update({k: v for k, v in wanted.items() if k in known and v not in (None, [], 0)})
        plan.do(ModifyNode(node_id=fid, params=params, replace=True), "filters: " + describe_filters(filters))
    except WorkflowError as exc:
        return Refinement(workflow, intent, [], "", [f"could not apply the filters: {exc}"])
    # the intent follows the filter exactly (apply_updates would merge the lists, and a cleared one must go)
    new_intent = intent.model_copy(
        update={
            "year_min": filters.year_min,
            "year_max": filters.year_max,
            "venues": list(filters.venues),
            "exclude_years": list(filters.exclude_years),
            "exclude_venues": list(filters.exclude_venues),
            "exclude_terms": list(filters.exclude_terms),
            "publication_kinds": list(filters.publication_kinds),
        }
    )
    return Refinement(plan.wf, new_intent, plan.edits, plan.reasons[-1], plan.notes)


# --- LLM path -------------------------------------------------------------------------------------


class _EditPlan(BaseModel):
    edits: list[dict[str, Any]] = Field(default_factory=list)
    reason: str = ""


SYSTEM = (
    "You edit a literature-search workflow (a DAG of operators) to follow the user's feedback. Reply with only "
    'a JSON object {"edits": [...], "reason": "..."}. Each edit is one of: '
    '{"action": "modify", "node_id", "params": {...}} (params are merged), '
    '{"action": "add", "node": {"id", "op", "params"},'
    ' "inputs": [{"source", "target", "port"}], "after": "<node id>"}, '
    '{"action": "remove", "node_id"}, {"action": "rewire", "add": [edges], "remove": [edges]}. '
    "Use only the operators and params shown."
)


async def refine_llm(
    llm: LLM,
    workflow: Workflow,
    intent: Intent,
    feedback: Feedback,
    results: list[RankedPaper] | None = None,
) -> Refinement:
    """The model proposes the edits; they must apply to a valid workflow (2 repairs), else deterministic."""

    def problems(plan: _EditPlan) -> list[str]:
        try:
            new = apply_edits(workflow, parse_edits(plan.edits))
        except WorkflowError as exc:
            return [str(exc)]
        return workflow_problems(new) or ([] if plan.edits else ["no edits given"])

    fb = feedback
    user = json.dumps(
        {
            "feedback": fb.text,
            "workflow": json.loads(workflow.model_dump_json()),
            "results": [
                {"n": i + 1, "id": r.paper.id, "title": r.paper.title, "year": r.paper.year}
                for i, r in enumerate((results or [])[:10])
            ],
            "operators": registry_description(),
        },
        ensure_ascii=False,
    )
    fallback = refine(workflow, intent, fb, results)
    try:
        plan = await llm.json(SYSTEM, user, _EditPlan, repair=MAX_REPAIRS, check=problems)
    except LLMError as exc:
        fallback.notes.append(f"LLM refinement not usable ({exc}); applied the rule-based edits")
        return fallback
    edits = parse_edits(plan.edits)
    new = apply_edits(workflow, edits)
    # the deterministic reading still tracks the intent (years, venues…) for later turns
    return Refinement(new, fallback.intent, edits, plan.reason or "edited by the model", [])
