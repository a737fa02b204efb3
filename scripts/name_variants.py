"""Measure how author name variants are merged and homonyms kept apart (``pilot.people.same_person``).

    .venv/bin/python scripts/name_variants.py ../shared/corpus/papers.jsonl.gz [--n 300] [--seed 0] [--json]

The corpus has no person ids, so both checks are built from real records with a known answer:

- **merges** (one person, two spellings): an author with >= 8 papers under one spelling; half of the papers,
  at random, get the author renamed to a variant spelling (middle initial dropped, or one added). Their two
  profiles, derived exactly as the store derives them, must be judged the same person.
- **homonyms** (two people, variant spellings): two different authors with >= 6 papers each; the second
  one's papers get the author renamed to a variant of the first one's name. Judged apart = correct. Reported
  separately for pairs whose main research field (by venue) differs and pairs in the same field.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pilot.models import Author, Paper  # noqa: E402
from pilot.people import name_parts, same_person, variant  # noqa: E402
from pilot.store.entities import derive  # noqa: E402
from pilot.store.records import read_corpus  # noqa: E402
from pilot.store.text import author_id  # noqa: E402
from pilot.venues import field_of  # noqa: E402


def variant_spelling(name: str, rng: random.Random) -> str | None:
    """Another way the same name is written: without its middle part, or with a middle initial."""
    words = name.split()
    if len(words) < 2:
        return None
    if len(words) >= 3:
        return f"{words[0]} {words[-1]}"
    return f"{words[0]} {rng.choice('ABCDEFGHJKLMNPRSTW')}. {words[-1]}"


def renamed(paper: Paper, old: str, new: str) -> Paper:
    authors = [a.model_copy(update={"name": new, "id": author_id(new)}) if a.name == old else a for a in paper.authors]
    return paper.model_copy(update={"authors": authors})


def profile(papers: list[Paper], name: str) -> Author:
    ents = derive(papers)
    return next(a for a, _ in ents.authors if a.id == author_id(name))  # the name is on every one of the papers


def main_field(papers: list[Paper]) -> str | None:
    fields = Counter(f for f in (field_of(p.venue) for p in papers) if f)
    return fields.most_common(1)[0][0] if fields else None


def measure(corpus: Path, n: int, seed: int) -> dict:
    rng = random.Random(seed)
    papers = read_corpus(corpus).papers
    by_name: dict[str, list[Paper]] = defaultdict(list)
    for p in papers:
        for a in p.authors:
            by_name[a.name].append(p)
    # authors whose name has no variant in the corpus already (so the split is the only variant there is)
    last = defaultdict(list)
    for name in by_name:
        last[name_parts(name).last].append(name)
    alone = [
        name
        for name, ps in by_name.items()
        if len(name.split()) >= 2 and not any(o != name and variant(o, name) for o in last[name_parts(name).last])
    ]
    merges = [nm for nm in alone if len(by_name[nm]) >= 8]
    rng.shuffle(merges)
    merged, why = 0, Counter[str]()
    for name in merges[:n]:
        ps = list(by_name[name])
        rng.shuffle(ps)
        new = variant_spelling(name, rng)
        if new is None:
            continue
        half = len(ps) // 2
        first, second = ps[:half], [renamed(p, name, new) for p in ps[half:]]
        pa, pb = profile(first, name), profile(second, new)
        same, reason = same_person(pa, pb)
        merged += same
        why[reason.split(" (")[0]] += 1
    tried = min(n, len(merges))

    pool = [nm for nm in alone if len(by_name[nm]) >= 6]
    fields = {nm: main_field(by_name[nm]) for nm in pool}
    results = {"different field": [0, 0], "same field": [0, 0]}
    apart_why: Counter = Counter()
    attempts = 0
    while min(results["different field"][1], results["same field"][1]) < n and attempts < 50 * n:
        attempts += 1
        x, y = rng.sample(pool, 2)
        if not fields[x] or not fields[y] or set(a.name for p in by_name[x] for a in p.authors) & {y}:
            continue
        kind = "same field" if fields[x] == fields[y] else "different field"
        if results[kind][1] >= n:
            continue
        new = variant_spelling(x, rng)
        if new is None:
            continue
        pa = profile(by_name[x], x)
        pb = profile([renamed(p, y, new) for p in by_name[y]], new)
        same, reason = same_person(pa, pb)
        results[kind][0] += not same
        results[kind][1] += 1
        if not same:
            apart_why[reason.split(" (")[0]] += 1
    return {
        "merge_recall": round(merged / tried, 3) if tried else None,
        "merges_tried": tried,
        "merge_reasons": dict(why),
        **{
            f"homonyms_kept_apart_{k.replace(' ', '_')}": round(v[0] / v[1], 3) if v[1] else None
            for k, v in results.items()
        },
        "homonym_pairs": {k: v[1] for k, v in results.items()},
        "apart_reasons": dict(apart_why),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("corpus", type=Path)
    p.add_argument("--n", type=int, default=300, help="cases per check (default 300)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    out = measure(args.corpus, args.n, args.seed)
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for k, v in out.items():
            print(f"{k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
