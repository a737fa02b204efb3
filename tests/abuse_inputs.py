"""The hostile inputs of the adversarial review (issue 11), rebuilt from its descriptions, for the abuse,
isolation and fuzz tests: recipes far over the limits, and a heavy recipe that stays within them."""

from __future__ import annotations

import json
from typing import Any

from pilot import limits


def recipe(nodes: list[dict], edges: list[dict], output: str, **extra: Any) -> dict:
    return {"schema_version": 1, "name": extra.pop("name", "recipe"), "nodes": nodes, "edges": edges,
            "output": output, **extra}  # fmt: skip


def filter_recipe(**filter_params: Any) -> dict:
    """keyword_search -> filter(params) -> top_k: the shape of the review's 20,000-venue / -term recipes."""
    return recipe(
        [
            {"id": "search", "op": "keyword_search", "params": {"query": "statistical parsing", "limit": 50}},
            {"id": "filter", "op": "filter", "params": filter_params},
            {"id": "top", "op": "top_k", "params": {"k": 20}},
        ],
        [{"source": "search", "target": "filter"}, {"source": "filter", "target": "top"}],
        "top",
    )


def terms(n: int, prefix: str = "term") -> list[str]:
    return [f"{prefix}{i} phrase{i % 7}" for i in range(n)]


def union_of_searches(n: int, query: str = "parsing", *, extra_filter: dict | None = None) -> dict:
    """``n`` keyword searches into one union (-> filter -> top_k): the review's 5,000-search recipe at n=5000,
    and, at n within the node limit, a heavy recipe every part of which is allowed."""
    nodes = [
        {"id": f"s{i}", "op": "keyword_search", "params": {"query": f"{query} {i}", "limit": 100}} for i in range(n)
    ]
    nodes.append({"id": "merge", "op": "union", "params": {}})
    edges = [{"source": f"s{i}", "target": "merge"} for i in range(n)]
    last = "merge"
    if extra_filter is not None:
        nodes.append({"id": "filter", "op": "filter", "params": extra_filter})
        edges.append({"source": "merge", "target": "filter"})
        last = "filter"
    nodes.append({"id": "top", "op": "top_k", "params": {"k": 50}})
    edges.append({"source": last, "target": "top"})
    return recipe(nodes, edges, "top")


def chain(n: int) -> dict:
    """A search followed by ``n - 1`` filters in a row: the review's 6,000-node recipe at n=6000."""
    nodes = [{"id": "n0", "op": "keyword_search", "params": {"query": "parsing"}}]
    nodes += [{"id": f"n{i}", "op": "filter", "params": {"year_min": 1990}} for i in range(1, n)]
    edges = [{"source": f"n{i - 1}", "target": f"n{i}"} for i in range(1, n)]
    return recipe(nodes, edges, f"n{n - 1}")


def heavy_legal_recipe(tag: str) -> dict:
    """The heaviest work the limits allow in one recipe: as many searches as there may be nodes, a union,
    a filter with the most include terms allowed. ``tag`` makes its queries (and cache keys) unique."""
    n = limits.MAX_NODES - 3
    words = ["parsing", "translation", "treebank", "semantic", "evaluation", "tagging", "grammar", "corpus"]
    flt = {"include_terms": terms(limits.MAX_LIST_ITEMS - 1, prefix=tag) + ["the"], "terms_in": "text"}
    wf = union_of_searches(n, extra_filter=flt)
    for i, node in enumerate(wf["nodes"][:n]):
        node["params"]["query"] = f"{words[i % len(words)]} {words[(i * 3 + 1) % len(words)]} {tag}{i}"
        node["params"]["limit"] = 1000  # the most hits a search may ask for
    return wf


def as_bytes(data: Any) -> bytes:
    return json.dumps(data).encode("utf-8")
