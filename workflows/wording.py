"""Workflow steps and their changes in a researcher's words: the one place the UI, the chat and the session
turn operators and params into phrases. What each operator and param is called lives in ``wording.json``
beside this module, so a new operator or a better phrase is a data row, not code.

    step_name(wf, "citers")            # "papers citing the anchor"
    found_by(wf, ["search_kw", "citers"])   # "keyword search and the citations of the best matches"
    changes(before, after)             # ["now favouring recent work", "only papers from 2015 on"]

The operator names and params stay available as the details (``workflows.diff``'s summary lines).
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

from workflows.diff import ParamChange, WorkflowDiff, diff, short
from workflows.explain import describe_set
from workflows.graph import ancestors
from workflows.model import Node, Workflow

_MAX_LINES = 8  # a change of more lines than this is summed up; the details list every one


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    return json.loads(resources.files("workflows").joinpath("wording.json").read_text(encoding="utf-8"))


def _values(kind: str) -> dict[str, str]:
    return _table()["values"][kind]


def _and(items: list[str]) -> str:
    items = [i for i in items if i]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def words(value: Any, kind: str | None = None) -> str:
    """A param value as a researcher reads it: ``["ACL", "EMNLP"]`` -> "ACL and EMNLP", ``[[1990, 1999]]``
    -> "1990–1999", ``True`` -> "yes"; ``kind`` names a table of value words (``order``, ``paper_types``…)."""
    table = _values(kind) if kind and kind in _table()["values"] else {}
    if isinstance(value, (list, tuple)):
        if len(value) == 2 and all(isinstance(v, int) for v in value) and kind == "period":
            return f"{value[0]}–{value[1]}" if value[0] != value[1] else str(value[0])
        shown = [words(v, kind if kind != "exclude_years" else "period") for v in value[:6]]
        return _and(shown + ([f"{len(value) - 6} more"] if len(value) > 6 else []))
    if isinstance(value, str) and value in table:
        return table[value]
    return short(value, 60)


def _label(node: Node) -> str | None:
    """A node's label when it reads as words (not "liked acl:P02-1038" or an id)."""
    label = (node.label or "").strip()
    if not label or ":" in label:
        return None
    return label


def step_name(wf: Workflow, node_id: str) -> str:
    """What a step does, in a few words, lower case ("keyword search", "papers citing the anchor")."""
    node = wf.node(node_id)
    steps = _table()["steps"]
    base = steps.get(node.op, {}).get("step", node.op.replace("_", " "))
    sources = [e.source for e in wf.inputs_of(node_id) if wf.has_node(e.source)]
    if node.op == "anchor" and (node.label or "").startswith("liked"):
        return "a paper you liked"
    if node.op == "citation_expand":
        return describe_set(wf, node_id)
    if node.op == "top_k":
        k = node.params.get("k", 50)
        order = node.params.get("order", "score")
        kept = _label(node) or f"keep the best {k}"
        return kept + (f", {words(order, 'order')}" if order != "score" else "")
    if node.op == "filter":
        said = filter_summary(node)
        return (_label(node) or "filter") + (f": {said}" if said and not _label(node) else "")
    if label := _label(node):
        return label
    if node.op == "semantic_search" and any(wf.node(s).op == "anchor" for s in sources):
        return "search by meaning from the anchor"
    if node.op == "keyword_search" and any(wf.node(s).op == "noun_phrases" for s in sources):
        return "search for the request's phrases"
    return base


def filter_summary(node: Node) -> str:
    """A filter step's constraints in words ("from 2015 on · only ACL"), "" when it sets none."""
    p = node.params
    parts = []
    lo, hi = p.get("year_min"), p.get("year_max")
    if lo and hi:
        parts.append(f"{lo}–{hi}")
    elif lo:
        parts.append(f"from {lo} on")
    elif hi:
        parts.append(f"up to {hi}")
    if p.get("newest_years"):
        parts.append(f"last {p['newest_years']} years")
    if p.get("relative_to_anchor"):
        parts.append(f"{p['relative_to_anchor']} the anchor")
    if p.get("venues"):
        parts.append("only " + words(p["venues"]))
    if p.get("exclude_venues"):
        parts.append("not " + words(p["exclude_venues"]))
    if p.get("min_citations"):
        parts.append(f"≥ {p['min_citations']} citations")
    if p.get("paper_types"):
        parts.append("only " + words(p["paper_types"], "paper_types"))
    if p.get("authors"):
        parts.append("by " + words(p["authors"]))
    if p.get("exclude_ids"):
        parts.append(f"{len(p['exclude_ids'])} left out")
    return " · ".join(parts)


def _found(wf: Workflow, node_id: str) -> str:
    node = wf.node(node_id)
    sources = [e.source for e in wf.inputs_of(node_id) if wf.has_node(e.source)]
    if node.op == "citation_expand" and len(sources) == 1:
        whose = describe_set(wf, sources[0], 1)
        if node.params.get("direction", "references") == "citations":
            return f"the citations of {whose}"
        return "the anchor's reference list" if whose == "the anchor" else f"the references of {whose}"
    if node.op == "semantic_search":
        return "closeness in meaning to " + (
            "the anchor" if any(wf.node(s).op == "anchor" for s in sources) else "your request"
        )
    if node.op == "anchor" and (node.label or "").startswith("liked"):
        return "a paper you liked"
    if node.op == "fetch" and _label(node):
        return str(_label(node))
    return _table()["steps"].get(node.op, {}).get("found") or step_name(wf, node_id)


def found_by(wf: Workflow | None, node_ids: list[str]) -> str:
    """How a result was found, for its card: "keyword search and by the citations of the best matches" (read
    after "found by"). Without the workflow (a kept paper) the step ids are all there is: "", and the card
    shows only the details."""
    if wf is None:
        return ""
    phrases = list(dict.fromkeys(_found(wf, n) for n in node_ids if wf.has_node(n)))
    if len(phrases) <= 1:
        return "".join(phrases)
    return ", by ".join(phrases[:-1]) + " and by " + phrases[-1]


# --- changes ---------------------------------------------------------------------------------------------


def _empty(value: Any) -> bool:
    return value is None or value == [] or value == {} or value == ""


def _template(op: str, name: str) -> dict[str, str] | None:
    changes = _table()["changes"]
    return changes.get(f"{op}.{name}") or changes.get(f"*.{name}")


def _case(before: Any, after: Any, template: dict[str, str]) -> str:
    # a weight set below zero says so first ("older work first", not "now favouring recent work" for seminal work)
    if isinstance(after, (int, float)) and not isinstance(after, bool) and after < 0 and "negative" in template:
        return "negative"
    if _empty(before) or before is False or before == 0:
        return "set" if "set" in template else "change"
    if _empty(after) or after is False or after == 0:
        return "unset" if "unset" in template else "change"
    if isinstance(before, (int, float)) and isinstance(after, (int, float)) and "up" in template:
        return "up" if after > before else "down"
    if isinstance(before, list) and isinstance(after, list) and "up" in template:
        return "up" if len(after) >= len(before) else "down"
    return "change"


def _say(op: str, name: str, before: Any, after: Any, step: str, key: str | None = None) -> str:
    template = _template(op, f"{name}.{key}" if key else name) or (_template(op, f"{name}.*") if key else None)
    kind = name if name in _table()["values"] else ("period" if name == "exclude_years" else None)
    if template is None:
        what = f"{name}.{key}" if key else name
        return f"“{step}”: {what.replace('_', ' ')} now {words(after, kind)} (was {words(before, kind)})"
    case = _case(before, after, template)
    before_list = before if isinstance(before, list) else []
    after_list = after if isinstance(after, list) else []
    every = list(_values(kind)) if kind in ("paper_types", "publication_kinds") else []
    if every and len(after_list) > 1 and "most" in template:
        case = "most"  # "leaving out surveys" says more than "only datasets and benchmarks and method papers"
    text = template.get(case) or template.get("change") or next(iter(template.values()))
    fields = {
        "after": words(after, kind),
        "before": words(before, kind),
        "step": step,
        "added": words([v for v in after_list if v not in before_list], kind),
        "removed": words([v for v in before_list if v not in after_list], kind),
        "n_added": len([v for v in after_list if v not in before_list]),
        "n_removed": len([v for v in before_list if v not in after_list]),
        "after_order": words(after, "order"),
        "after_direction": words(after, "direction"),
        "after_kept": "kept" if after else "left out",
        "after_dropped": "dropped" if after else "kept",
        "key_words": _table()["feature_words"].get(key or "", (key or "").replace("_", " ")),
        "left_out": words([v for v in every if v not in after_list], kind),
    }
    return text.format_map(fields)


def _param_lines(wf: Workflow, node_id: str, op: str, p: ParamChange) -> list[str]:
    step = step_name(wf, node_id)
    if isinstance(p.before, dict) or isinstance(p.after, dict):
        before = p.before if isinstance(p.before, dict) else {}
        after = p.after if isinstance(p.after, dict) else {}
        keys = [k for k in {**before, **after} if before.get(k) != after.get(k)]
        return [_say(op, p.name, before.get(k), after.get(k), step, key=k) for k in keys]
    return [_say(op, p.name, p.before, p.after, step)]


def _bypassed(wf: Workflow, source: str, target: str) -> bool:
    """Whether ``source`` reaches ``target`` in ``wf`` through other steps (one was put between them, or taken
    out from between them)."""
    return wf.has_node(source) and wf.has_node(target) and source in ancestors(wf, target)


def describe_changes(d: WorkflowDiff, before: Workflow, after: Workflow) -> list[str]:
    """The lines of ``changes`` for an already computed diff."""
    lines: list[str] = []
    added = {n.id for n in d.added_nodes}
    removed = {n.id for n in d.removed_nodes}
    for n in d.added_nodes:
        if n.op == "anchor" and (n.label or "").startswith("liked"):
            lines.append("now favouring papers like the one you liked")
        elif n.op == "union" and all(e.source in added for e in after.inputs_of(n.id)):
            continue  # merging the new steps' output: plumbing, said by the steps themselves
        else:
            lines.append(f"added a step: {step_name(after, n.id)}")
    lines += [f"removed the step “{step_name(before, n.id)}”" for n in d.removed_nodes]
    for c in d.modified_nodes:
        if c.op_before != c.op_after:
            lines.append(f"“{step_name(after, c.node_id)}” now works differently ({step_name(after, c.node_id)})")
        for p in c.params:
            lines += _param_lines(after, c.node_id, c.op_after, p)
        if c.label_before != c.label_after and c.label_after:
            lines.append(f"a step is now called “{c.label_after}”")
    for e in d.added_edges:  # a link that only closes the gap a removed step left is no news either
        if e.source not in added and e.target not in added and not (removed and _bypassed(before, e.source, e.target)):
            lines.append(f"“{step_name(after, e.source)}” now feeds “{step_name(after, e.target)}”")
    for e in d.removed_edges:
        if e.source in removed or e.target in removed or (added and _bypassed(after, e.source, e.target)):
            continue
        lines.append(f"“{step_name(before, e.source)}” no longer feeds “{step_name(before, e.target)}”")
    if d.output_changed and d.output_after and after.has_node(d.output_after):
        lines.append(f"the list now comes from “{step_name(after, d.output_after)}”")
    lines = list(dict.fromkeys(line[:1].upper() + line[1:] for line in lines if line))
    if len(lines) > _MAX_LINES:
        lines = lines[: _MAX_LINES - 1] + [f"and {len(lines) - _MAX_LINES + 1} more changes (see the details)"]
    return lines


def changes(before: Workflow | None, after: Workflow) -> list[str]:
    """What changed from ``before`` to ``after``, one plain sentence a change, each starting with a capital
    ("Now favouring recent work", "Only papers from 2015 on"); [] for a first version."""
    if before is None:
        return []
    return describe_changes(diff(before, after), before, after)
