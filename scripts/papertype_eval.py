"""Precision and recall of the paper-type reader (``pilot.papertype``) on a labelled sample (issue 33).

The sample (``tests/data/papertype_sample.jsonl``, 305 corpus papers with abstracts, labelled by hand from title and
abstract as survey / resource / position / method): 110 drawn at random, 110 at random among papers whose title or
abstract holds a type cue word (dataset, corpus, benchmark, survey, review, overview, position paper, we argue, …),
and 85 from narrower cue pools for surveys and position papers, which are rare (a random sample holds almost none).
Recall is therefore recall on this enriched sample, not on the corpus. Rows alternate between a *tune* half (read
while writing the rules) and a *held* half (scored only).

    .venv/bin/python scripts/papertype_eval.py --corpus ../shared/corpus/papers.jsonl.gz [--errors]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from pilot.papertype import paper_type, paper_type_reason  # noqa: E402
from pilot.sources.local import LocalCorpusSource  # noqa: E402
from pilot.vocab import PAPER_TYPES  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[1] / "tests" / "data" / "papertype_sample.jsonl"


def table(rows: Sequence[tuple[str, str]]) -> str:
    lines = ["| type | n (labelled) | predicted | precision | recall | F1 |", "|---|---|---|---|---|---|"]
    for kind in PAPER_TYPES:
        tp = sum(1 for gold, got in rows if gold == kind and got == kind)
        labelled = sum(1 for gold, _ in rows if gold == kind)
        predicted = sum(1 for _, got in rows if got == kind)
        p = tp / predicted if predicted else float("nan")
        r = tp / labelled if labelled else float("nan")
        f = 2 * p * r / (p + r) if predicted and labelled and p + r else float("nan")
        lines.append(f"| {kind} | {labelled} | {predicted} | {p:.2f} | {r:.2f} | {f:.2f} |")
    accuracy = sum(1 for gold, got in rows if gold == got) / len(rows)
    return "\n".join(lines) + f"\n\naccuracy {accuracy:.3f} over {len(rows)} papers"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--sample", type=Path, default=SAMPLE)
    ap.add_argument("--cache", type=Path, default=Path(".pilot-cache"))
    ap.add_argument("--errors", action="store_true", help="list the tune half's misread papers")
    args = ap.parse_args()
    source = LocalCorpusSource.open(args.corpus, args.cache, progress=False)
    rows = [json.loads(line) for line in args.sample.read_text(encoding="utf-8").splitlines() if line.strip()]
    papers = {p.id: p for p in source.store.papers([source.store.row_of[r["id"]] for r in rows])}
    for half in ("tune", "held", None):
        chosen = [r for r in rows if half is None or r["half"] == half]
        pairs = [(r["label"], paper_type(papers[r["id"]])) for r in chosen]
        print(f"\n## {half or 'all'} ({len(chosen)} papers)\n\n{table(pairs)}")
        print("confusion (label -> read):", dict(Counter(f"{g}->{p}" for g, p in pairs if g != p)))
    if args.errors:
        for r in rows:
            got, why = paper_type_reason(papers[r["id"]])
            if r["half"] == "tune" and got != r["label"]:
                print(f"- {r['label']} read as {got} ({why}): {r['title'][:100]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
