"""Regenerate the reader's two word lists derived from the corpus:

- pilot/reading/data/vocabulary.txt: the words the reader never respells (every word written in lower case eight
  times or more in the corpus's titles and abstracts; capitalised words are left out, as they are often names);
- pilot/reading/data/terms.txt: the field's multi-word terms (two to four words used together eight times or more
  in titles, not starting or ending with a function word or a word of asking): "machine translation", "mixture of
  experts", "learning to rank". A term is read as the subject's words, whole: the cue lexicon never reads inside
  one ("experts" in "mixture of experts" asks for no researchers).

    .venv/bin/python scripts/reading_vocabulary.py ../shared/corpus/papers.jsonl.gz
"""

from __future__ import annotations

import gzip
import json
import re
import sys
from collections import Counter
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "pilot" / "reading" / "data"
MIN_COUNT = 8


def main(corpus: str) -> None:
    from pilot.reading.spans import word_set
    from pilot.text import ENGLISH_STOPWORDS

    edges = ENGLISH_STOPWORDS | word_set("request_words")
    heads = word_set("term_heads")  # asking words that also begin a field's term: "topic models", "review mining"
    words: Counter[str] = Counter()
    terms: Counter[str] = Counter()
    with gzip.open(corpus, "rt", encoding="utf-8") as fh:
        for line in fh:
            paper = json.loads(line)
            title = paper.get("title") or ""
            for w in re.findall(r"[A-Za-z]+(?:'[a-z]+)?", f"{title} {paper.get('abstract') or ''}"):
                if w.islower():
                    words[w] += 1
            ws = re.findall(r"[a-z][a-z0-9\-]*", title.lower())
            for n in (2, 3, 4):
                for i in range(len(ws) - n + 1):
                    gram = ws[i : i + n]
                    if (gram[0] not in edges or gram[0] in heads) and gram[-1] not in edges:
                        terms[" ".join(gram)] += 1
    vocab = sorted(w for w, k in words.items() if k >= MIN_COUNT and len(w) >= 3)
    (DATA / "vocabulary.txt").write_text(
        "# Words that are right as they are (the reader never respells them): every word written in lower case "
        "8 times or more in the corpus's titles and abstracts. Regenerate with scripts/reading_vocabulary.py.\n"
        + "\n".join(vocab)
        + "\n",
        encoding="utf-8",
    )
    kept = sorted(t for t, k in terms.items() if k >= MIN_COUNT)
    (DATA / "terms.txt").write_text(
        "# The field's multi-word terms, read whole as the subject's words (pilot.reading.spans): two to four words "
        "used together 8 times or more in the corpus's titles. Regenerate with scripts/reading_vocabulary.py.\n"
        + "\n".join(kept)
        + "\n",
        encoding="utf-8",
    )
    print(f"{len(vocab)} words, {len(kept)} terms -> {DATA}")


if __name__ == "__main__":
    main(sys.argv[1])
