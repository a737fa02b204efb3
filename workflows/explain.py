"""Why a paper is in the results, in a researcher's words.

Evidence records *which nodes* brought a paper in and the feature values that scored it
(``citers.support=1; dense=0.71``). Those names mean something only next to the workflow, so the
sentence is made here from both: a ``citation_expand`` node fed by the anchor with
``direction=citations`` becomes "cites the anchor"; fed by the anchor's references, "cites 3 of the
anchor's references". It is computed when shown, not stored in the cached evidence, because a node's
meaning changes with edits upstream that leave its output ids (and so its cache key) unchanged.

    phrases = why(workflow, ranked_paper)   # ["cites the anchor", "close in meaning to the anchor (0.71)"]
"""

from __future__ import annotations

from pilot.models import RankedPaper
from pilot.papertype import paper_type_reason
from pilot.vocab import RESULT_ORDER_WORDS
from workflows.diff import short
from workflows.draw import params_label
from workflows.graph import ancestors, topo_order
from workflows.model import Node, Workflow
from workflows.ops.facets import FACET_TERMS, NEAR_REFS
from workflows.ops.features import STRENGTHS, match_strength, node_score_key, phrases_in, support_key, support_node

# How many levels of inputs a description follows ("papers citing the anchor's references"); deeper is noise.
_DEPTH = 2


def _support(scores: dict[str, float], node_id: str) -> int:
    value = scores.get(support_key(node_id))
    return int(value) if value else 0


def _sources(wf: Workflow, node_id: str) -> list[str]:
    return [e.source for e in wf.inputs_of(node_id) if wf.has_node(e.source)]


def describe_set(wf: Workflow, node_id: str, depth: int = 0) -> str:
    """A noun phrase for what a node outputs: "the anchor", "the anchor's references", "papers you liked"."""
    node = wf.node(node_id)
    if node.op == "anchor":
        return "the anchor"
    srcs = _sources(wf, node_id)
    if node.op == "citation_expand" and len(srcs) == 1 and depth < _DEPTH:
        inner = describe_set(wf, srcs[0], depth + 1)
        if node.params.get("direction", "references") == "references":
            return "the anchor's references" if inner == "the anchor" else f"papers cited by {inner}"
        return "papers citing the anchor" if inner == "the anchor" else f"papers citing {inner}"
    if node.op == "semantic_search" and any(wf.node(s).op == "anchor" for s in srcs):
        return "papers similar to the anchor"
    if node.op == "keyword_search" and not node.label:
        return "papers matching the search keywords"
    if node.op == "semantic_search" and not node.label:
        return "papers close in meaning to the request"
    return node.label or f"the output of {node_id}"


def _counted(n: int, whose: str) -> str:
    """ "3 of the anchor's references", "2 papers citing the anchor", "a paper citing the anchor"."""
    if whose.startswith("papers "):
        rest = whose[len("papers ") :]
        return f"{n} papers {rest}" if n > 1 else f"a paper {rest}" if n == 1 else whose
    return f"{n} of {whose}" if n > 1 else f"one of {whose}" if n == 1 else whose


def describe_node(wf: Workflow, node_id: str, scores: dict[str, float]) -> str:
    """A clause saying how one node relates the paper to the search ("cites the anchor")."""
    node = wf.node(node_id)
    srcs = _sources(wf, node_id)
    n = _support(scores, node_id)
    if node.op == "citation_expand" and len(srcs) == 1:
        whose = describe_set(wf, srcs[0], 1)
        cites = node.params.get("direction", "references") == "citations"  # the found paper cites the seed
        if whose == "the anchor":
            return "cites the anchor" if cites else "cited by the anchor"
        return f"cites {_counted(n, whose)}" if cites else f"cited by {_counted(n, whose)}"
    if node.op == "semantic_search":
        dense = scores.get("dense")
        closeness = f" ({dense:.2f})" if dense else ""
        target = "the anchor" if any(wf.node(s).op == "anchor" for s in srcs) else "the query"
        return f"close in meaning to {target}{closeness}"
    if node.op == "keyword_search":
        return "matches the search keywords"
    if node.op == "recommend" and srcs:
        return f"recommended from {describe_set(wf, srcs[0], 1)}"
    if node.op == "fetch":
        return f"in {node.label}" if node.label else "fetched by id"
    return f"found by {node.label or node_id}"


def why(wf: Workflow | None, item: RankedPaper, max_phrases: int = 4) -> list[str]:
    """Clauses explaining ``item``'s place, strongest relation first; [] when there is no workflow."""
    if wf is None:
        return []
    ev = item.evidence
    phrases: list[str] = []
    # graph relations say the most about how a paper relates to the anchor, so they go first
    nodes = [n for n in ev.nodes if wf.has_node(n)]
    nodes.sort(key=lambda n: 0 if wf.node(n).op == "citation_expand" else 1)
    for node_id in nodes:
        phrase = describe_node(wf, node_id, ev.scores)
        if phrase not in phrases:
            phrases.append(phrase)
    for phrase in _neighbourhood(wf, item) + _paper_type(wf, item) + _facet_match(wf, item):
        if phrase not in phrases:
            phrases.append(phrase)
    named = _title_terms_named(wf, item)
    if named:
        phrases.append("title names " + ", ".join(named[:4]))
    if ev.matched_terms:
        phrases.append("mentions " + ", ".join(ev.matched_terms[:5]))
    return phrases[:max_phrases]


def _neighbourhood(wf: Workflow, item: RankedPaper) -> list[str]:
    """Co-citation and coupling with a ``neighbourhood`` node's seeds ("cited by 3 of the best matches" is
    already said by the expansion that brought the paper in)."""
    out: list[str] = []
    for node in wf.nodes:
        if node.op != "neighbourhood":
            continue
        seeds = [e.source for e in wf.inputs_of(node.id) if e.port == "seeds" and wf.has_node(e.source)]
        whose = describe_set(wf, seeds[0], 1) if seeds else "the seeds"
        cocited = int(item.evidence.scores.get(node_score_key(node.id, "cocitation"), 0))
        coupled = int(item.evidence.scores.get(node_score_key(node.id, "coupling"), 0))
        if cocited >= 2:
            out.append(f"co-cited with {whose} by {cocited} papers")
        if coupled >= 2:
            out.append(f"shares {coupled} references with {whose}")
    return out


_TYPE_NAMES = {"resource": "a data resource", "survey": "a survey", "method": "a method paper"}


def _paper_type(wf: Workflow, item: RankedPaper) -> list[str]:
    """What kind of paper it is, when a step weighed that: a paper-type filter let it through ("a survey: title
    says 'a survey of'"), or a score step rewarded its type ("a data resource: title names 'treebank'")."""
    filtered = any(n.op == "filter" and n.params.get("paper_types") for n in wf.nodes)
    rewarded = item.evidence.scores.get("paper_type") and any(
        n.op == "score" and "paper_type" in (n.params.get("features") or {}) for n in wf.nodes
    )
    if not (filtered or rewarded):
        return []
    kind, reason = paper_type_reason(item.paper)
    return [f"{_TYPE_NAMES.get(kind, 'a ' + kind)}: {reason}"]


def _facet_match(wf: Workflow, item: RankedPaper) -> list[str]:
    """The sentence-level match on the chosen facet, when a ``facet_match`` step scored the paper."""
    if "facet_match" not in item.evidence.scores:
        return []
    facets = [n.params.get("facet") for n in wf.nodes if n.op == "facet_match"]
    aspect = f"the anchor's {facets[0]}" if facets and facets[0] else "the anchor"
    out = [f"matches {aspect} sentence by sentence ({item.evidence.scores['facet_match']:.2f})"]
    words = item.evidence.scores.get(FACET_TERMS, 0.0)
    if words > 0:
        out.append(f"uses the words of {aspect} (BM25 {words:.1f})")
    near = item.evidence.scores.get(NEAR_REFS)
    if near is not None and near < 1.0:  # 1 = one of the anchor's references, which its own node already says
        out.append(f"close to a paper the anchor cites ({near:.2f})")
    return out


def _title_terms_named(wf: Workflow, item: RankedPaper) -> list[str]:
    """The score node's title terms (e.g. the resource words of a benchmark search) this title contains."""
    found: list[str] = []
    for node in wf.nodes:
        if node.op == "score" and "title_match" in (node.params.get("features") or {}):
            found += [t for t in phrases_in(item.paper.title, node.params.get("title_terms") or []) if t not in found]
    return found


# how well a paper matches, in words: ``match_strength`` (workflows.ops.features, which top_k uses too)


def weak_results(results: list[RankedPaper], top: int = 10) -> bool:
    """True when fewer than three of the first ``top`` results are a good or strong match."""
    head = results[:top]
    if not head:
        return False
    good = sum(match_strength(r) in STRENGTHS[:2] for r in head)
    return good < min(3, len(head))


# --- how the whole list was made ("how did you rank these?") -------------------------------------------

_FEATURE_WORDS = {
    "lexical": "the search words in the title and abstract",
    "dense": "closeness in meaning",
    "citations": "citation count",
    "recency": "publication year",
    "cocitation": "papers citing both it and the anchor",
    "coupling": "references shared with the anchor",
    "coupling_cos": "references shared with the anchor (normalised)",
    "graph_distance": "closeness to the anchor in the citation graph",
    "rrf": "its ranks in the searches that found it",
    "prior": "its score from the step before",
    "title_match": "its title naming what was asked for",
    "paper_type": "being the kind of paper asked for",
    "precedence": "how much the later strong matches resemble it (what newer work would build on)",
}
_GATHERING = ("citation_expand", "semantic_search", "keyword_search", "recommend", "fetch")


def _feature_words(wf: Workflow, name: str) -> str:
    if name.startswith("ev:"):
        key = name[3:]
        node = support_node(key)
        if node and wf.has_node(node):
            what = key.rpartition(".")[2]
            if wf.node(node).op == "neighbourhood":
                return f"{what} in the citation graph around {_seeds_of(wf, node)}"
            return f"being among {describe_set(wf, node)}"
        return key
    return _FEATURE_WORDS.get(name, name)


def _seeds_of(wf: Workflow, node_id: str) -> str:
    seeds = [e.source for e in wf.inputs_of(node_id) if e.port == "seeds" and wf.has_node(e.source)]
    return describe_set(wf, seeds[0], 1) if seeds else "the seeds"


def _weights(wf: Workflow, node: Node) -> str:
    features = dict(node.params.get("features") or {})
    ranked = sorted(features.items(), key=lambda kv: -abs(kv[1]))
    parts = [f"{_feature_words(wf, name)} (×{weight:g})" for name, weight in ranked if weight]
    return ", ".join(parts) if parts else "its default weights"


def how_made(wf: Workflow | None) -> str:
    """The steps that made the list, in order, in a researcher's words (the DAG panel shows the same steps)."""
    if wf is None or wf.output is None:
        return "No search has run yet, so there is no ranking to explain."
    on_path = ancestors(wf, wf.output) | {wf.output}
    lines: list[str] = []
    for node_id in topo_order(wf):
        if node_id not in on_path:
            continue
        node = wf.node(node_id)
        step = f"`{node_id}`"
        if node.op == "anchor":
            lines.append(f"{step} finds the anchor paper (“{short(str(node.params.get('query', '')), 60)}”)")
        elif node.op == "neighbourhood":
            lines.append(f"{step} measures each paper's place in the citation graph around {_seeds_of(wf, node_id)}")
        elif node.op in _GATHERING:
            lines.append(f"{step} gathers {describe_set(wf, node_id)}")
        elif node.op == "filter":
            said = params_label(node, limit=160)
            lines.append(f"{step} filters them ({said})" if said else f"{step} applies your constraints (none set)")
        elif node.op == "score":
            lines.append(f"{step} ranks them by {_weights(wf, node)}")
        elif node.op == "facet_match":
            facet = node.params.get("facet")
            lines.append(f"{step} re-ranks by matching the anchor{f'’s {facet}' if facet else ''} sentence by sentence")
        elif node.op == "keywords_from":
            source = "the anchor's title and abstract" if _sources(wf, node_id) else "your request"
            lines.append(f"{step} picks {node.params.get('k', 8)} keywords from {source}")
        elif node.op == "top_k":
            order = RESULT_ORDER_WORDS.get(node.params.get("order", "score"), "")
            lines.append(f"{step} keeps the best {node.params.get('k', 50)}" + (f", {order}" if order else ""))
        elif node.op not in ("extract_evidence", "union"):
            lines.append(f"{step} ({node.op}) {node.label or params_label(node, limit=80)}".rstrip())
    steps = "\n".join(f"{i}. {line}." for i, line in enumerate(lines, start=1))
    return (
        f"How this list was made:\n{steps}\n\n"
        "The workflow panel shows these steps as a graph: you can change any step there and run it again, or ask "
        "“why is #3 here?” about one paper."
    )
