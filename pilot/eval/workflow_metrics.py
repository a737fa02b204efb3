"""How close an induced workflow is to a reference workflow.

Four TF-IDF cosines over different textual views of the workflow (whole, query fields, filters,
operator signatures), Jaccard overlaps of node ids and operator types, and add/remove/modify edit counts
(what it would take to turn the reference into the candidate). Operators name their params freely, so
the query/filter views pick params by key name; the key patterns are listed below.
"""

from __future__ import annotations

import json
import re
from typing import Any

from workflows.diff import diff
from workflows.model import Workflow

# Param keys that carry what the user is looking for vs. keys that restrict the result set.
QUERY_KEY = re.compile(r"query|term|keyword|text|topic|title|facet|direction|intent", re.I)
FILTER_KEY = re.compile(r"year|venue|citation|filter|field|min_|max_|after|before|since|until|recen", re.I)


def _flatten(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [str(k), *_flatten(v)]]
    if isinstance(value, (list, tuple, set)):
        return [s for v in value for s in _flatten(v)]
    return [str(value)]


def _params_where(wf: Workflow, key_re: re.Pattern[str]) -> str:
    parts: list[str] = []
    for node in wf.nodes:
        for key, value in node.params.items():
            if key_re.search(key):
                parts.append(key)
                parts.extend(_flatten(value))
    return " ".join(parts)


def workflow_views(wf: Workflow) -> dict[str, str]:
    """The text of each view the cosine compares."""
    whole = " ".join(
        [wf.name, wf.description]
        + [f"{n.op} {n.label or ''} {json.dumps(n.params, sort_keys=True, default=str)}" for n in wf.nodes]
        + [f"{e.source} {e.port} {e.target}" for e in wf.edges]
    )
    signatures = " ".join(f"{n.op}({','.join(sorted(n.params))})" for n in wf.nodes)
    return {
        "whole": whole,
        "query": _params_where(wf, QUERY_KEY),
        "filters": _params_where(wf, FILTER_KEY),
        "signatures": signatures,
    }


def tfidf_cosine(a: str, b: str) -> float:
    """Cosine of the TF-IDF vectors of two texts, fitted on just these two (1 when both are empty)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.metrics.pairwise import cosine_similarity

    if not a.strip() and not b.strip():
        return 1.0
    if not a.strip() or not b.strip():
        return 0.0
    # Signatures such as "search(k,query)" must stay whole tokens, so split on whitespace only.
    vec = TfidfVectorizer(token_pattern=r"[^\s]+", lowercase=True)
    try:
        m = vec.fit_transform([a, b])
    except ValueError:  # no token survived
        return 0.0
    return float(cosine_similarity(m[0], m[1])[0, 0])


def jaccard(a: set[str], b: set[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def edit_counts(reference: Workflow, candidate: Workflow) -> dict[str, int]:
    """Edits that turn the reference into the candidate (``workflows.diff``: defaults filled in first, so
    spelling out a default is no change): nodes added / removed / modified, edges added / removed."""
    counts = diff(reference, candidate).counts()
    return {
        "add": counts["nodes_added"],
        "remove": counts["nodes_removed"],
        "modify": counts["nodes_modified"],
        "edges_add": counts["edges_added"],
        "edges_remove": counts["edges_removed"],
    }


def workflow_similarity(reference: Workflow, candidate: Workflow) -> dict[str, float]:
    """Every workflow-level metric of ``candidate`` against ``reference``."""
    rv, cv = workflow_views(reference), workflow_views(candidate)
    out: dict[str, float] = {f"tfidf_{view}": tfidf_cosine(rv[view], cv[view]) for view in rv}
    out["node_jaccard"] = jaccard({n.id for n in reference.nodes}, {n.id for n in candidate.nodes})
    out["op_jaccard"] = jaccard({n.op for n in reference.nodes}, {n.op for n in candidate.nodes})
    edits = edit_counts(reference, candidate)
    out.update({f"edits_{k}": float(v) for k, v in edits.items()})
    return out
