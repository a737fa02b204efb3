"""Regenerate pilot/reading/data/vocabulary.txt: the words the reader never respells (every lower-case word used
eight times or more in the corpus's titles and abstracts).

    .venv/bin/python scripts/reading_vocabulary.py ../shared/corpus/papers.jsonl.gz
"""

from __future__ import annotations

import gzip
import json
import re
import sys
from collections import Counter
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "pilot" / "reading" / "data" / "vocabulary.txt"
HEADER = (
    "# Words that are right as they are (the reader never respells them): every lower-case word used 8 times or "
    "more in the corpus's titles and abstracts. Regenerate with scripts/reading_vocabulary.py."
)


def main(corpus: str) -> None:
    counts: Counter[str] = Counter()
    with gzip.open(corpus, "rt", encoding="utf-8") as fh:
        for line in fh:
            paper = json.loads(line)
            text = f"{paper.get('title') or ''} {paper.get('abstract') or ''}"
            for w in re.findall(r"[A-Za-z]+(?:'[a-z]+)?", text):
                if w.islower() or (w[0].isupper() and w[1:].islower()):
                    counts[w.lower()] += 1
    words = sorted(w for w, k in counts.items() if k >= 8 and len(w) >= 3)
    OUT.write_text(HEADER + "\n" + "\n".join(words) + "\n", encoding="utf-8")
    print(f"{len(words)} words -> {OUT}")


if __name__ == "__main__":
    main(sys.argv[1])
