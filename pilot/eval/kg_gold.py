"""Run a gold set of entity questions and score plans, execution and cited answers.

    pilot eval kg --corpus ../shared/corpus/papers.jsonl.gz --out runs/kg [--questions F] [--llm MODEL]

Each gold line: ``{"id", "question", "shape", "gold_plan": [{"op", "params"}], "gold_urls": [...],
"gold_facts": {...}?}``. Scores come from ``pilot.eval.kg_metrics`` (URL precision / recall, format,
API-sequence distance, parameter accuracy, fuzzy parameter F1, execution success, partial
completion) plus three checks of our own: the question was recognised as an entity question, every
cited URL came from the execution results, and the gold facts (a title, a venue, a count) are stated.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from pilot.eval.kg_metrics import kg_case_metrics
from pilot.eval.report import rate_bars
from pilot.kg.classify import classify
from pilot.kg.run import ask
from pilot.models import Answer
from pilot.runtime import Runtime
from pilot.settings import Settings
from workflows.ops.answer import urls_in_results


def load_questions(path: Path | str) -> list[dict]:
    cases = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            case = json.loads(line)
            missing = {"question", "gold_plan", "gold_urls"} - set(case)
            if missing:
                raise ValueError(f"{path}:{n}: missing {', '.join(sorted(missing))}")
            cases.append(case)
    return cases


def facts_stated(answer: Answer, facts: dict) -> float:
    """1 when every gold fact appears in the answer text (titles and venues verbatim, counts as "N papers")."""
    if not facts:
        return 1.0
    checks = []
    for key, value in facts.items():
        if key == "paper_count":
            checks.append(f"{value} papers" in answer.answer)
        else:
            checks.append(str(value) in answer.answer)
    return sum(checks) / len(checks)


async def run_case(case: dict, runtime: Runtime, prefer_llm: bool = False) -> dict:
    t0 = time.perf_counter()
    asked = await ask(case["question"], runtime, prefer_llm=prefer_llm)
    seconds = time.perf_counter() - t0
    metrics = kg_case_metrics(
        plan=asked.plan,
        gold_plan=case["gold_plan"],
        answer=asked.answer,
        gold_urls=case["gold_urls"],
        trace=asked.run.trace,
    )
    allowed = urls_in_results(asked.run.values)
    metrics["recognised"] = 1.0 if classify(case["question"]) == "entity" and asked.kind == "entity" else 0.0
    metrics["grounded"] = 1.0 if set(asked.answer.reference.values()) <= allowed else 0.0
    metrics["facts_stated"] = facts_stated(asked.answer, case.get("gold_facts") or {})
    return {
        "id": case.get("id"),
        "question": case["question"],
        "shape": case.get("shape"),
        "set": case.get("set", "seen"),
        "kind": asked.kind,
        "plan": asked.plan.model_dump(mode="json"),
        "answer": asked.answer.model_dump(),
        "failed_nodes": asked.run.trace.failed_nodes,
        "notes": asked.notes,
        "seconds": round(seconds, 3),
        "metrics": metrics,
    }


def summarize(records: list[dict]) -> dict[str, float]:
    keys = sorted({k for r in records for k in r["metrics"]})
    out = {k: round(sum(r["metrics"].get(k, 0.0) for r in records) / len(records), 4) for k in keys} if records else {}
    out["questions"] = len(records)
    out["mean_seconds"] = round(sum(r["seconds"] for r in records) / len(records), 3) if records else 0.0
    return out


def summarize_by(records: list[dict], key: str) -> dict[str, dict[str, float]]:
    groups: dict[str, list[dict]] = {}
    for r in records:
        groups.setdefault(str(r.get(key)), []).append(r)
    return {name: summarize(rs) for name, rs in sorted(groups.items())}


async def run_gold(
    cases: list[dict], runtime: Runtime, prefer_llm: bool = False
) -> tuple[dict[str, float], list[dict]]:
    records = [await run_case(c, runtime, prefer_llm) for c in cases]
    return summarize(records), records


def report_markdown(summary: dict[str, float], records: list[dict]) -> str:
    by_set = summarize_by(records, "set")
    names = list(by_set)
    lines = [
        "# KG gold questions",
        "",
        "| metric | all | " + " | ".join(names) + " |",
        "|" + " --- |" * (2 + len(names)),
    ]
    lines += [
        f"| {k} | {v} | " + " | ".join(str(by_set[n].get(k, "")) for n in names) + " |" for k, v in summary.items()
    ]
    lines += [
        "",
        "| id | set | shape | url P | url R | format | api dist | param acc | exec | answer |",
        "|" + " --- |" * 10,
    ]
    for r in records:
        m = r["metrics"]
        text = r["answer"]["answer"].replace("|", "/").replace("\n", " ")[:90]
        lines.append(
            f"| {r['id']} | {r.get('set', 'seen')} | {r['shape']} | {m['url_precision']:.2f} |"
            f" {m['url_recall']:.2f} | {m['format_ok']:.0f} | "
            f"{m.get('api_sequence_distance', 0):.2f} |"
            f" {m.get('parameter_accuracy', 0):.2f} | {m['execution_success']:.0f} | {text} |"
        )
    return "\n".join(lines) + "\n"


def plot(records: list[dict], path: Path) -> Path:
    """Bars of the main metrics, one group per question set (seen vs held-out paraphrases)."""
    by_set = summarize_by(records, "set")
    return rate_bars(by_set, PLOT_METRICS, path, "entity questions by set", lambda s: f"{s} ({by_set[s]['questions']})")


PLOT_METRICS = (
    "url_precision",
    "url_recall",
    "format_ok",
    "parameter_accuracy",
    "execution_success",
    "recognised",
    "facts_stated",
)


def write_outputs(out: Path, summary: dict[str, float], records: list[dict]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    full = {"all": summary, "by_set": summarize_by(records, "set"), "by_shape": summarize_by(records, "shape")}
    (out / "metrics.json").write_text(json.dumps(full, indent=2))
    with open(out / "runs.jsonl", "w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    (out / "report.md").write_text(
        report_markdown(summary, records) + "\n![metrics by set](report.png)\n", encoding="utf-8"
    )
    plot(records, out / "report.png")


DEFAULT_QUESTIONS = Path(__file__).resolve().parents[2] / "tests" / "data" / "kg_questions.jsonl"


def run_cli(questions: Path, corpus: Path | None, llm: str | None, prefer_llm: bool, out: Path | None) -> int:
    """The body of ``pilot eval kg``: run, print the summary, write outputs."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        cases = load_questions(questions)
    except (OSError, ValueError) as exc:
        print(f"pilot eval kg: {exc}", file=sys.stderr)
        return 2
    overrides: dict[str, Any] = {}
    if corpus:
        overrides["corpus"] = corpus
        if "PILOT_SOURCES" not in os.environ:
            overrides["sources"] = "local"
    runtime = Runtime.from_settings(Settings(**overrides), llm_model=llm)
    summary, records = asyncio.run(run_gold(cases, runtime, prefer_llm))
    if out:
        write_outputs(out, summary, records)
    print(json.dumps({"all": summary, "by_set": summarize_by(records, "set")}, indent=2))
    if out:
        print(f"wrote {out}/metrics.json, runs.jsonl, report.md, report.png", file=sys.stderr)
    return 0
