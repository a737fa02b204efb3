"""Regenerate pilot/reading/data/shared_surnames.json: family names that many authors of the corpus share, none of
them holding half of the name's papers ("Li", "Wang", "Smith"; not "Jordan", whose papers are mostly Michael I.
Jordan's). A message naming a person by such a name alone ("papers by Li") is asked about, with the name's most
published authors offered. Name variants are one author by first and last word ("Michael I. Jordan" is "Michael
Jordan"); the offered name is the variant written most often.

    .venv/bin/python scripts/shared_surnames.py ../shared/corpus/papers.jsonl.gz
"""

from __future__ import annotations

import gzip
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "pilot" / "reading" / "data" / "shared_surnames.json"
MIN_AUTHORS = 10  # distinct first names under the family name
MAX_SHARE = 0.5  # the most published of them holds less than this share of the name's papers
OFFERED = 4


def main(corpus: str) -> None:
    papers: dict[str, Counter[str]] = defaultdict(Counter)  # family name -> first name -> papers
    written: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)  # (family, first) -> spellings
    with gzip.open(corpus, "rt", encoding="utf-8") as fh:
        for line in fh:
            for author in json.loads(line).get("authors") or []:
                parts = (author.get("name") or "").split()
                if len(parts) < 2 or not parts[-1][:1].isupper() or parts[0].endswith(","):
                    continue
                family, first = parts[-1], parts[0].lower()
                papers[family][first] += 1
                written[(family, first)][" ".join(parts)] += 1
    out = {}
    for family, firsts in sorted(papers.items()):
        total = sum(firsts.values())
        if len(firsts) < MIN_AUTHORS or firsts.most_common(1)[0][1] >= MAX_SHARE * total:
            continue
        out[family] = [written[(family, first)].most_common(1)[0][0] for first, _ in firsts.most_common(OFFERED)]
    about = (
        "Family names many authors share, none holding half of the name's papers: 'papers by Li' asks which Li "
        "(the most published offered). Regenerate with scripts/shared_surnames.py."
    )
    OUT.write_text(json.dumps({"about": about, "names": out}, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    print(f"{len(out)} shared family names -> {OUT}")


if __name__ == "__main__":
    main(sys.argv[1])
