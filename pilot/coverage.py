"""Honest coverage: after a search runs, say what the source could not give and what the results rest on.

- The anchor's own references (for earlier work or the datasets it uses) or its citing papers (for later
  work) are not in the source: say so, and which other evidence the workflow fell back on.
- The best matches are only loosely related to the anchor or topic: warn, so a confident-looking list of
  weak matches is not taken for an answer.
- A list of one paper type (surveys, datasets) that came out short because weak matches were left out:
  say how few the source holds, and how to see the rest.

Read from the run itself (which nodes fed the merge, what they returned), so it holds for any workflow
shape that follows from an ``anchor`` node: a template, an edited one or an LLM-written one.
"""

from __future__ import annotations

from typing import Any

from pilot.models import Intent, Paper, RankedPaper
from workflows.diff import short
from workflows.model import Workflow
from workflows.ops.features import match_strength

WEAK_SIMILARITY = 0.35  # MiniLM cosine of the best match below which the results are called weak
TOP_CHECKED = 10

# what each kind of merge input contributes, in words
CLOSE = ("strong match", "good match")
_SOURCES = {
    "semantic_search": "papers close to it in content",
    "keyword_search": "papers sharing its keywords",
    "recommend": "recommended papers",
    "named_in": "the papers introducing the methods and resources its abstract names",
}


def _expansions_of(wf: Workflow, node_id: str, direction: str) -> list[str]:
    return [
        e.target
        for e in wf.edges
        if e.source == node_id
        and wf.node(e.target).op == "citation_expand"
        and wf.node(e.target).params.get("direction", "both") in (direction, "both")
    ]


def _empty(values: dict[str, Any], node_id: str) -> bool:
    value = values.get(node_id)
    return isinstance(value, list) and not value


def _fallbacks(wf: Workflow, values: dict[str, Any], skip: set[str]) -> str:
    """The other inputs of the merge that brought papers in, described."""
    said: list[str] = []
    for node in wf.nodes:
        if node.id in skip or _empty(values, node.id) or node.id not in values:
            continue
        if node.op in _SOURCES:
            said.append(_SOURCES[node.op])
        elif node.op == "citation_expand":
            producers = [wf.node(e.source).op for e in wf.inputs_of(node.id)]
            if node.params.get("direction") == "references" and "citation_expand" in producers:
                said.append("what the papers citing it also cite")
            elif node.params.get("direction") == "references":
                said.append("what similar papers cite")
            elif node.params.get("direction") == "citations" and "anchor" not in producers:
                said.append("papers citing the same references")
    said = list(dict.fromkeys(said))
    return ", ".join(said[:-1]) + (" and " if len(said) > 1 else "") + said[-1] if said else "text similarity"


def coverage_notes(
    wf: Workflow, run: Any, anchor: Paper | None, intent: Intent, results: list[RankedPaper]
) -> list[str]:
    notes: list[str] = []
    values: dict[str, Any] = getattr(run, "values", {}) or {}
    anchors = [n.id for n in wf.nodes if n.op == "anchor" and n.params.get("query") in (anchor.id if anchor else None,)]
    if anchor is not None and anchors:
        title = short(anchor.title, 80)
        wanted = {"predecessor": "references", "benchmark": "references", "successor": "citations"}.get(
            intent.direction or ""
        )
        if wanted:
            links = [t for a in anchors for t in _expansions_of(wf, a, wanted)]
            if links and all(_empty(values, t) for t in links):
                rest = _fallbacks(wf, values, set(links) | set(anchors))
                if wanted == "references":
                    notes.append(
                        f"The source has no reference list for “{title}”: this list is inferred, not read from "
                        f"it — the results rest on {rest}, in the years before it."
                    )
                else:
                    notes.append(f"No paper in the source cites “{title}”; these results rest on {rest}.")
    notes += _short_typed_list(wf, intent, results)
    dense = [r.evidence.scores["dense"] for r in results[:TOP_CHECKED] if "dense" in r.evidence.scores]
    what = f"“{short(anchor.title, 60)}”" if anchor else f"“{short(intent.topic or intent.request, 60)}”"
    if dense and max(dense) < WEAK_SIMILARITY:
        # said first: a list whose best matches are weak must not read like an answer (issue 33)
        notes.insert(
            0,
            f"The best matches are only loosely related to {what} (similarity {max(dense):.2f}): "
            "the source may hold little on it.",
        )
    elif dense and not any(match_strength(r) in CLOSE for r in results[:TOP_CHECKED]):
        notes.insert(
            0, f"None of the first {TOP_CHECKED} results is a strong or good match for {what}: read them as leads."
        )
    return notes


_TYPE_WORDS = {"survey": "surveys", "resource": "datasets or other resources", "method": "method papers"}


def _short_typed_list(wf: Workflow, intent: Intent, results: list[RankedPaper]) -> list[str]:
    cut = [n for n in wf.nodes if n.op == "top_k" and n.params.get("drop_weak")]
    if not cut or not intent.paper_types or len(results) >= int(cut[-1].params.get("k", 50)):
        return []
    kinds = " or ".join(_TYPE_WORDS.get(t, t) for t in intent.paper_types)
    lo, hi = intent.year_min, intent.year_max
    period = f" from {lo} to {hi}" if lo and hi else (f" from {lo} on" if lo else (f" up to {hi}" if hi else ""))
    topic = short(intent.topic or intent.request, 60)
    return [
        f"Only {len(results)} {kinds} on “{topic}”{period} match it closely in the source; weaker matches were "
        f"left out (step “{cut[-1].id}”: turn off “drop weak” to see them)."
    ]
