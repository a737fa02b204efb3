"""The graph algorithms over a workflow's nodes and edges, written once: dependency order, ancestors,
depth (the drawing's columns) and what can run next.

``topo_order`` and ``iter_ready`` assume a validated workflow (no cycle); ``ancestors``, ``cycles`` and
``depths`` tolerate cycles and dangling edges, because drafts are validated and drawn before they can run.
"""

from __future__ import annotations

from collections.abc import Iterator

from workflows.model import Workflow


def predecessors(workflow: Workflow) -> dict[str, list[str]]:
    """Producer ids per consumer id, in edge order."""
    preds: dict[str, list[str]] = {}
    for e in workflow.edges:
        preds.setdefault(e.target, []).append(e.source)
    return preds


def topo_order(workflow: Workflow) -> list[str]:
    """Node ids in a dependency order (ties keep the workflow's node order). Assumes no cycle."""
    indeg = {n.id: 0 for n in workflow.nodes}
    for e in workflow.edges:
        indeg[e.target] += 1
    order: list[str] = []
    ready = [n.id for n in workflow.nodes if indeg[n.id] == 0]
    while ready:
        nid = ready.pop(0)
        order.append(nid)
        for e in workflow.edges:
            if e.source == nid:
                indeg[e.target] -= 1
                if indeg[e.target] == 0:
                    ready.append(e.target)
    return order


def ancestors(workflow: Workflow, node_id: str) -> set[str]:
    """Every node whose value can flow into ``node_id`` (not including it)."""
    preds = predecessors(workflow)
    seen: set[str] = set()
    todo = list(preds.get(node_id, []))
    while todo:
        n = todo.pop()
        if n not in seen:
            seen.add(n)
            todo.extend(preds.get(n, []))
    return seen


def cycles(node_ids: list[str], succ: dict[str, list[str]]) -> list[list[str]]:
    """Strongly connected components with a cycle (Tarjan, iterative so deep graphs cannot overflow)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in node_ids:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on_stack.add(v)
            recurse = False
            children = succ.get(v, [])
            while i < len(children):
                w = children[i]
                i += 1
                if w not in index:
                    work.append((v, i))
                    work.append((w, 0))
                    recurse = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if recurse:
                continue
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1 or v in succ.get(v, []):
                    order = {n: k for k, n in enumerate(node_ids)}
                    found.append(sorted(comp, key=order.__getitem__))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return found


def depths(workflow: Workflow) -> dict[str, int]:
    """Longest distance of each node from a node without inputs (edges to unknown nodes are ignored).

    A longest-path relaxation bounded by the node count, so a cycle cannot loop forever."""
    ids = [n.id for n in workflow.nodes]
    known = set(ids)
    edges = [(e.source, e.target) for e in workflow.edges if e.source in known and e.target in known]
    depth = {n: 0 for n in ids}
    for _ in range(len(ids)):
        changed = False
        for s, t in edges:
            if s != t and depth[t] < depth[s] + 1 and depth[s] + 1 < len(ids):
                depth[t] = depth[s] + 1
                changed = True
        if not changed:
            break
    return depth


def iter_ready(workflow: Workflow, done: set[str]) -> Iterator[str]:
    """Nodes not yet in ``done`` whose producers all are: what a step-by-step UI can run next."""
    preds = predecessors(workflow)
    for nid in topo_order(workflow):
        if nid not in done and all(p in done for p in preds.get(nid, [])):
            yield nid
