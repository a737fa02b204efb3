"""What share of each match label ("strong / good / partial / weak") is relevant (issue 33).

Reads the ``strengths`` that ``pilot eval`` records per result (the label, the cosine it is read from, whether a
citation step links the paper to the search) from one or more runs, and the gold of their cases: a result is relevant
when it is a gold paper (CSFCube cases: graded >= 2 by the annotators; a CSFCube result the annotators did not judge is
left out of the CSFCube rows, since its relevance is unknown). Prints, per case family, each label's count and share
relevant, and the same for candidate thresholds, so the labels can be set where "strong" is right most of the time.

    .venv/bin/python scripts/label_calibration.py out/final/anch-multi out/final/topic-multi out/final/ls-single \\
        --cases ../shared/bench/dev/cases.jsonl ../shared/bench/dev/topic_cases.jsonl \\
        ../shared/bench/dev/litsearch_cases.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workflows.ops.features import STRENGTHS, strength_of  # noqa: E402


def family(case: dict) -> str:
    if case.get("source") == "csfcube":
        return "CSFCube (graded)"
    if case.get("source") == "litsearch":
        return "LitSearch"
    return "topic" if case["direction"] == "topic" else f"anchored: {case['direction']}"


def rows_of(runs: list[Path], cases: dict[str, dict]) -> list[tuple[str, float | None, bool, bool]]:
    """(family, cosine, citation-linked, relevant) per labelled result."""
    out = []
    for run in runs:
        for line in (run / "runs.jsonl").read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            case = cases.get(rec["case_id"])
            if case is None or not rec.get("strengths"):
                continue
            gold, graded = set(case.get("golden_paper_ids") or []), case.get("graded") or {}
            for pid, s in rec["strengths"].items():
                if pid == case.get("anchor_paper_id"):
                    continue
                if graded:
                    if pid not in graded:
                        continue
                    relevant = graded[pid] >= 2
                else:
                    relevant = pid in gold
                out.append((family(case), s.get("dense"), bool(s.get("related")), relevant))
    return out


def table(rows: list[tuple[str, float | None, bool, bool]], thresholds: tuple[float, float, float, float]) -> str:
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for fam, dense, related, relevant in rows:
        for key in (fam, "all"):
            c = counts[(key, strength_of(dense, related, thresholds))]
            c[0] += 1
            c[1] += relevant
    fams = sorted({f for f, _ in counts}, key=lambda f: (f == "all", f))
    lines = ["| cases | " + " | ".join(STRENGTHS) + " |", "|---" * (len(STRENGTHS) + 1) + "|"]
    for fam in fams:
        cells = []
        for label in STRENGTHS:
            n, rel = counts[(fam, label)]
            cells.append(f"{rel / n:.2f} of {n}" if n else "–")
        lines.append(f"| {fam} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--cases", nargs="+", type=Path, required=True)
    ap.add_argument(
        "--try",
        dest="tries",
        nargs=4,
        type=float,
        action="append",
        default=[],
        metavar=("STRONG", "STRONG_LINKED", "GOOD", "GOOD_LINKED"),
        help="other thresholds to compare",
    )
    args = ap.parse_args()
    cases = {c["case_id"]: c for f in args.cases for c in map(json.loads, f.read_text().splitlines()) if c}
    rows = rows_of(args.runs, cases)
    from workflows.ops.features import STRENGTH_THRESHOLDS

    for t in [STRENGTH_THRESHOLDS, *map(tuple, args.tries)]:
        print(f"\nthresholds strong >= {t[0]} (linked {t[1]}), good >= {t[2]} (linked {t[3]}): share relevant\n")
        print(table(rows, t))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
