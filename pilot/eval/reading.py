"""``pilot eval reading``: read reading cases (``../shared/reading/README.md``) and write their neutral readings.

    pilot eval reading --cases ../shared/reading/dev.jsonl --out out/reading
    python ../shared/reading/score.py ../shared/reading/dev.jsonl out/reading/readings.jsonl

Each case's ``context`` and ``message`` are read (never its ``expect``); ``DIR/readings.jsonl`` holds one
``{"id", "reading"}`` a line. ``DIR/summary.json`` and the printed table give, per category, the acts read and —
when a scorer is given (``--scorer``, by default ``score.py`` beside the cases when it is there) — the accuracy it
grades, and the time one message takes to read, warm (p50 / p95 over the cases, after one warm-up read).
"""

from __future__ import annotations

import importlib.util
import json
import statistics
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from pilot.reading import read
from pilot.reading.neutral import neutral, state_of


def load_cases(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _scorer(path: Path | None) -> Any:
    if path is None or not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location("reading_score", path)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(cases_path: Path, out: Path, scorer_path: Path | None = None) -> dict[str, Any]:
    cases = load_cases(cases_path)
    out.mkdir(parents=True, exist_ok=True)
    scorer = _scorer(scorer_path if scorer_path is not None else cases_path.parent / "score.py")
    read("warm up", state_of({"state": "fresh"}))  # the sentence model and the example vectors load once
    times: list[float] = []
    acts: dict[str, Counter[str]] = defaultdict(Counter)
    right: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    misses: list[str] = []
    with open(out / "readings.jsonl", "w", encoding="utf-8") as fh:
        for case in cases:
            state = state_of(case["context"])
            started = time.perf_counter()
            reading = read(case["message"], state)
            times.append(time.perf_counter() - started)
            said = neutral(reading, state)
            fh.write(json.dumps({"id": case["id"], "reading": said}, ensure_ascii=False) + "\n")
            category = case.get("category", "?")
            acts[category][said["act"]] += 1
            if scorer is not None and "expect" in case:
                wrong = scorer.grade(case["expect"], said)
                right[category][1] += 1
                right[category][0] += not wrong
                if wrong:
                    misses.append(f"{case['id']} [{category}] {case['message'][:80]!r}: {'; '.join(wrong)}")
    ms = sorted(t * 1000 for t in times)
    summary: dict[str, Any] = {
        "cases": len(cases),
        "acts": {k: dict(v) for k, v in sorted(acts.items())},
        "ms_per_message": {
            "p50": round(statistics.median(ms), 2) if ms else None,
            "p95": round(ms[int(0.95 * (len(ms) - 1))], 2) if ms else None,
        },
    }
    if right:
        total = [sum(v[0] for v in right.values()), sum(v[1] for v in right.values())]
        summary["accuracy"] = round(total[0] / total[1], 4) if total[1] else None
        summary["by_category"] = {k: {"right": v[0], "total": v[1]} for k, v in sorted(right.items())}
        (out / "misses.txt").write_text("\n".join(misses) + "\n", encoding="utf-8")
    (out / "summary.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return summary


def table(summary: dict[str, Any]) -> str:
    lines = [f"{'category':20s} {'read as':44s} {'right':>9s}"]
    graded = summary.get("by_category", {})
    for category, acts in summary["acts"].items():
        said = ", ".join(f"{a} {n}" for a, n in sorted(acts.items(), key=lambda kv: -kv[1]))
        cell = graded.get(category)
        score = f"{cell['right']}/{cell['total']}" if cell else "-"
        lines.append(f"{category:20s} {said[:44]:44s} {score:>9s}")
    if "accuracy" in summary:
        lines.append(f"{'overall':20s} {'':44s} {summary['accuracy']:>9.3f}")
    t = summary["ms_per_message"]
    lines.append(f"reading one message, warm: p50 {t['p50']} ms, p95 {t['p95']} ms ({summary['cases']} messages)")
    return "\n".join(lines)
