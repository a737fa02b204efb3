"""The dev LitSearch questions split in two halves, fixed before any tuning (issue 33): cases sorted by the number in
their id, alternating — the 1st, 3rd, 5th … are the *tune* half (looked at, tuned on), the 2nd, 4th … the *held*
half (scored only, never read question by question while tuning). Same split every time, no randomness.

    .venv/bin/python scripts/litsearch_split.py ../shared/bench/dev/litsearch_cases.jsonl out/litsearch
    # -> out/litsearch/tune.jsonl (23 cases), out/litsearch/held.jsonl (22 cases)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def split(cases: list[dict]) -> tuple[list[dict], list[dict]]:
    ordered = sorted(cases, key=lambda c: int(str(c["case_id"]).rsplit("-", 1)[-1]))
    return ordered[0::2], ordered[1::2]


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    src, out = Path(argv[0]), Path(argv[1])
    cases = [json.loads(line) for line in src.read_text(encoding="utf-8").splitlines() if line.strip()]
    out.mkdir(parents=True, exist_ok=True)
    for name, half in zip(("tune", "held"), split(cases), strict=True):
        (out / f"{name}.jsonl").write_text("".join(json.dumps(c) + "\n" for c in half), encoding="utf-8")
        print(f"{name}: {len(half)} cases -> {out / (name + '.jsonl')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
