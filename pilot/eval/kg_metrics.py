"""Metrics for entity (knowledge-graph) questions: the plan, its execution, and the cited answer.

A plan is a ``Workflow`` of entity operators (or a plain list of ``{"op", "params"}`` steps, handy for
hand-written gold plans); its step order is the node list order, which the planner emits in dependency
order. Steps of a predicted plan are aligned to the gold steps by the longest common subsequence of
operator names, so one inserted or dropped step does not shift every later comparison.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from difflib import SequenceMatcher
from typing import Any

from pydantic import BaseModel, Field

from pilot.models import Answer
from workflows.model import RunTrace, Workflow

Step = tuple[str, dict[str, Any]]
CITATION = re.compile(r"\[(\d+)\]")
REF_KEY = re.compile(r"^\[(\d+)\]$")
FUZZY_MATCH = 0.8  # string similarity at which two parameter values count as the same


# --- references and format -----------------------------------------------------------------------


def normalize_url(url: str) -> str:
    return (url or "").strip().rstrip("/")


def url_precision_recall(predicted: Iterable[str], gold: Iterable[str]) -> dict[str, float]:
    """Set precision / recall / F1 of cited URLs against gold URLs (both empty = perfect)."""
    pred = {normalize_url(u) for u in predicted if normalize_url(u)}
    ref = {normalize_url(u) for u in gold if normalize_url(u)}
    if not pred and not ref:
        return {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    hit = len(pred & ref)
    p = hit / len(pred) if pred else 0.0
    r = hit / len(ref) if ref else 0.0
    return {"precision": p, "recall": r, "f1": _f1(p, r)}


class FormatReport(BaseModel):
    ok: bool
    problems: list[str] = Field(default_factory=list)


def check_answer_format(answer: Answer | Mapping[str, Any] | str) -> FormatReport:
    """The synthesiser's output contract: ``{"answer": str, "reference": {"[1]": url, ...}}`` with keys
    numbered from 1 without gaps, every ``[n]`` cited in the text present in ``reference`` and every
    reference cited, and no empty URL."""
    problems: list[str] = []
    data: Any = answer
    if isinstance(answer, str):
        try:
            data = json.loads(answer)
        except json.JSONDecodeError as exc:
            return FormatReport(ok=False, problems=[f"not JSON: {exc.msg}"])
    if isinstance(data, Answer):
        data = data.model_dump()
    if not isinstance(data, Mapping):
        return FormatReport(ok=False, problems=["not a JSON object"])
    missing = [k for k in ("answer", "reference") if k not in data]
    if missing:
        return FormatReport(ok=False, problems=[f"missing key(s): {', '.join(missing)}"])
    text, refs = data["answer"], data["reference"]
    if not isinstance(text, str):
        return FormatReport(ok=False, problems=["'answer' is not a string"])
    if not isinstance(refs, Mapping):
        return FormatReport(ok=False, problems=["'reference' is not an object"])
    numbers: list[int] = []
    for key, url in refs.items():
        m = REF_KEY.match(str(key))
        if not m:
            problems.append(f"reference key {key!r} is not of the form [n]")
            continue
        numbers.append(int(m.group(1)))
        if not isinstance(url, str) or not url.strip():
            problems.append(f"reference {key} has an empty URL")
    if numbers and sorted(numbers) != list(range(1, len(numbers) + 1)):
        problems.append(f"reference keys are not numbered 1..{len(numbers)} without gaps: {sorted(numbers)}")
    cited = {int(n) for n in CITATION.findall(text)}
    if unknown := sorted(cited - set(numbers)):
        problems.append("cited but not in reference: " + ", ".join(f"[{n}]" for n in unknown))
    if uncited := sorted(set(numbers) - cited):
        problems.append("in reference but never cited: " + ", ".join(f"[{n}]" for n in uncited))
    return FormatReport(ok=not problems, problems=problems)


# --- plans ---------------------------------------------------------------------------------------


def plan_steps(plan: Workflow | Sequence[Mapping[str, Any]]) -> list[Step]:
    if isinstance(plan, Workflow):
        return [(n.op, dict(n.params)) for n in plan.nodes]
    return [(str(s["op"]), dict(s.get("params") or {})) for s in plan]


def levenshtein(a: Sequence[str], b: Sequence[str]) -> int:
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        cur = [i]
        for j, y in enumerate(b, start=1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def api_sequence_distance(predicted: Workflow | Sequence[Mapping], gold: Workflow | Sequence[Mapping]) -> float:
    """Levenshtein distance of the operator-name sequences / the longer length: 0 = same, 1 = disjoint."""
    a = [op for op, _ in plan_steps(predicted)]
    b = [op for op, _ in plan_steps(gold)]
    longest = max(len(a), len(b))
    return levenshtein(a, b) / longest if longest else 0.0


def align_steps(predicted: Sequence[Step], gold: Sequence[Step]) -> list[tuple[int | None, int | None]]:
    """(pred index, gold index) pairs: LCS matches on operator name, then unmatched steps of either side."""
    a = [op for op, _ in predicted]
    b = [op for op, _ in gold]
    pairs: list[tuple[int | None, int | None]] = []
    used_a: set[int] = set()
    used_b: set[int] = set()
    for block in SequenceMatcher(a=a, b=b, autojunk=False).get_matching_blocks():
        for k in range(block.size):
            pairs.append((block.a + k, block.b + k))
            used_a.add(block.a + k)
            used_b.add(block.b + k)
    pairs += [(i, None) for i in range(len(a)) if i not in used_a]
    pairs += [(None, j) for j in range(len(b)) if j not in used_b]
    return pairs


def _norm_scalar(v: Any) -> Any:
    if isinstance(v, str):
        return " ".join(v.lower().split())
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def _as_list(v: Any) -> list[Any] | None:
    return list(v) if isinstance(v, (list, tuple, set)) else None


def value_match(pred: Any, gold: Any) -> float:
    """Exact match for scalars (case/space-insensitive strings), Jaccard overlap for lists."""
    pl, gl = _as_list(pred), _as_list(gold)
    if pl is not None or gl is not None:
        ps = {json.dumps(_norm_scalar(x), sort_keys=True) for x in (pl if pl is not None else [pred])}
        gs = {json.dumps(_norm_scalar(x), sort_keys=True) for x in (gl if gl is not None else [gold])}
        return len(ps & gs) / len(ps | gs) if ps | gs else 1.0
    return 1.0 if _norm_scalar(pred) == _norm_scalar(gold) else 0.0


def parameter_accuracy(predicted: Workflow | Sequence[Mapping], gold: Workflow | Sequence[Mapping]) -> float:
    """Mean over aligned step pairs of the mean match of the gold step's params; a missing or extra step
    scores zero (and counts in the denominator). Only the gold step's keys are judged, so defaults a
    planner fills in are not penalised."""
    pred, ref = plan_steps(predicted), plan_steps(gold)
    pairs = align_steps(pred, ref)
    if not pairs:
        return 1.0
    total = 0.0
    for i, j in pairs:
        if i is None or j is None:
            continue
        gparams, pparams = ref[j][1], pred[i][1]
        if not gparams:
            total += 1.0
            continue
        total += sum(value_match(pparams[k], v) if k in pparams else 0.0 for k, v in gparams.items()) / len(gparams)
    return total / len(pairs)


def fuzzy_similarity(pred: Any, gold: Any) -> float:
    """Graded match in [0, 1]: string similarity for text (1 above ``FUZZY_MATCH``), best-pair overlap for
    lists, exact for other scalars."""
    pl, gl = _as_list(pred), _as_list(gold)
    if pl is not None or gl is not None:
        pl = pl if pl is not None else [pred]
        gl = gl if gl is not None else [gold]
        if not pl and not gl:
            return 1.0
        if not pl or not gl:
            return 0.0
        best_p = [max(fuzzy_similarity(p, g) for g in gl) for p in pl]
        best_g = [max(fuzzy_similarity(p, g) for p in pl) for g in gl]
        return (sum(best_p) + sum(best_g)) / (len(best_p) + len(best_g))
    if isinstance(pred, str) and isinstance(gold, str):
        ratio = SequenceMatcher(a=_norm_scalar(pred), b=_norm_scalar(gold), autojunk=False).ratio()
        return 1.0 if ratio >= FUZZY_MATCH else ratio
    return 1.0 if _norm_scalar(pred) == _norm_scalar(gold) else 0.0


def fuzzy_parameter_f1(predicted: Workflow | Sequence[Mapping], gold: Workflow | Sequence[Mapping]) -> dict[str, float]:
    """Precision = matched mass / number of predicted params, recall = matched mass / number of gold params,
    over all steps (params of unaligned steps match nothing)."""
    pred, ref = plan_steps(predicted), plan_steps(gold)
    n_pred = sum(len(p) for _, p in pred)
    n_gold = sum(len(p) for _, p in ref)
    if n_pred == 0 and n_gold == 0:
        return {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    matched = 0.0
    for i, j in align_steps(pred, ref):
        if i is None or j is None:
            continue
        pparams, gparams = pred[i][1], ref[j][1]
        matched += sum(fuzzy_similarity(pparams[k], v) for k, v in gparams.items() if k in pparams)
    p = matched / n_pred if n_pred else 0.0
    r = matched / n_gold if n_gold else 0.0
    return {"precision": p, "recall": r, "f1": _f1(p, r)}


# --- execution -----------------------------------------------------------------------------------


def execution_success(trace: RunTrace | None) -> float:
    """1 when the plan ran and no node failed (an empty trace means nothing ran)."""
    return 1.0 if trace is not None and trace.nodes and trace.ok else 0.0


def partial_completion(trace: RunTrace | None, plan: Workflow | None = None) -> float:
    """Share of the plan's nodes that completed (ok or cached); nodes missing from the trace did not."""
    if trace is None:
        return 0.0
    done = {n.node_id for n in trace.nodes if n.status in ("ok", "cached")}
    ids = [n.id for n in plan.nodes] if plan is not None else [n.node_id for n in trace.nodes]
    return sum(1 for nid in ids if nid in done) / len(ids) if ids else 0.0


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r > 0 else 0.0


def kg_case_metrics(
    *,
    plan: Workflow | None,
    gold_plan: Workflow | Sequence[Mapping] | None,
    answer: Answer | Mapping[str, Any] | None,
    gold_urls: Iterable[str] = (),
    trace: RunTrace | None = None,
) -> dict[str, float]:
    """All deterministic KG metrics of one question (LLM-judge scores come from ``pilot.eval.judge``)."""
    out: dict[str, float] = {
        "execution_success": execution_success(trace),
        "partial_completion": partial_completion(trace, plan),
    }
    if answer is None:
        out.update(format_ok=0.0, url_precision=0.0, url_recall=0.0, url_f1=0.0)
    else:
        data = answer.model_dump() if isinstance(answer, Answer) else dict(answer)
        out["format_ok"] = 1.0 if check_answer_format(data).ok else 0.0
        given = data.get("reference")
        refs: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
        pr = url_precision_recall([str(u) for u in refs.values()], gold_urls)
        out.update(url_precision=pr["precision"], url_recall=pr["recall"], url_f1=pr["f1"])
    if gold_plan is not None:
        predicted: Workflow | Sequence[Mapping] = plan if plan is not None else []
        out["api_sequence_distance"] = api_sequence_distance(predicted, gold_plan)
        out["parameter_accuracy"] = parameter_accuracy(predicted, gold_plan)
        out["param_f1"] = fuzzy_parameter_f1(predicted, gold_plan)["f1"]
    return out
