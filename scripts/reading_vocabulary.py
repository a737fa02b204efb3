"""Regenerate the reader's two word lists derived from the corpus:

- pilot/reading/data/vocabulary.txt: the words the reader never respells (every word written in lower case eight
  times or more in the corpus's titles and abstracts; capitalised words are left out, as they are often names);
- pilot/reading/data/surnames.txt: authors' family names (the last word of a name, three papers or more, that is not
  a word written in lower case): "the Smith paper" names a person, not a paper, and is asked about;
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
    surnames: Counter[str] = Counter()
    with gzip.open(corpus, "rt", encoding="utf-8") as fh:
        for line in fh:
            paper = json.loads(line)
            title = paper.get("title") or ""
            for author in paper.get("authors") or []:
                name = (author.get("name") if isinstance(author, dict) else author) or ""
                # the ACL Anthology's part writes "Och, Franz Josef": the family name is before the comma
                family_part = name.split(",")[0] if "," in name else name
                if family_part.split() and family_part.split()[-1].isalpha() and family_part.split()[-1][:1].isupper():
                    surnames[family_part.split()[-1]] += 1
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
    lower = set(vocab)
    # a family name that is also a word ("Long", "Young") only when very many authors have it ("Zhang", "Li")
    family = sorted(
        s
        for s, k in surnames.items()
        if (k >= 3 and s.lower() not in lower or k >= 50) and s[1:].islower() and len(s) >= 2
    )
    (DATA / "surnames.txt").write_text(
        "# Authors' family names (three papers or more in the corpus and never a word written in lower case, or 50 "
        "papers or more): "
        "'the Smith paper' names a person. Regenerate with scripts/reading_vocabulary.py.\n" + "\n".join(family) + "\n",
        encoding="utf-8",
    )
    print(f"{len(vocab)} words, {len(kept)} terms, {len(family)} family names -> {DATA}")


if __name__ == "__main__":
    main(sys.argv[1])
