"""The browser journeys of issues 33 (real questions) and 31 (a first message with nothing to search for; free words:
a quoted paragraph, a refinement, a command in Chinese, a venue question; messages that are asked about), run in
headless Chromium against the app serving the offline corpus; one screenshot per step and a text record of what
each reply said.

    PILOT_CORPUS=../shared/corpus/papers.jsonl.gz .venv/bin/python scripts/browser_journeys.py --out out/journeys

Starts ``app.py`` itself on a free port (its cache dir is this checkout's ``.pilot-cache``, where the corpus store is
built) and stops it at the end; serving and driving the browser are the browser tests' helpers (``tests/browsing.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browsing import chromium, say, serve, wait_idle  # noqa: E402  (the browser tests' own helpers)

NER_ABSTRACT = (
    "Abstract: Named entity recognition for low-resource languages suffers from the lack of annotated data. We "
    "propose a zero-shot cross-lingual transfer approach that trains a multilingual encoder on English annotations "
    "and adapts it to target languages with pseudo-labels produced by a teacher model on unlabeled target text. A "
    "consistency objective over translated sentences reduces label noise. Experiments on CoNLL and WikiAnn show "
    "gains over strong cross-lingual baselines. Find related work."
)
JOURNEYS: list[tuple[str, list[str]]] = [
    ("transformer-predecessors", ["What did the Transformer paper build on?"]),
    ("pasted-abstract", [NER_ABSTRACT]),
    ("table-qa-datasets", ["datasets for table question answering"]),
    ("only-surveys", ["papers on noun phrase coreference resolution", "show only the surveys"]),
    (
        "dan-klein",
        ["papers by Dan Klein at NAACL", "which one is the most cited?", "only the ones with more than 100 citations"],
    ),
    ("nothing-to-search", ["find me some papers", "the newest ones", "recent papers on dependency parsing"]),
    (
        "free-words",  # issue 31: a quoted paragraph, a refinement and a command in new words, a venue question
        [
            "my intro says 'Low-resource machine translation remains hard because parallel data is scarce. We explore "
            "back-translation with monolingual data in twelve languages.' — anything related?",
            "drop the first 2 and sort oldest first",
            "导出RIS",
            "where do people usually publish work on speech translation?",
        ],
    ),
    (
        "free-words-2",  # issue 31, fifth session: a story before the subject, a range to the end, a short year,
        # the penultimate result, a typo in a command, gibberish
        [
            "hi, second year student here, my thesis is on code-switched speech recognition, what should I read",
            "drop everything from 6 onwards",
            "nothing before '15",
            "the penultimate one is spot on — find similar",
            "explane why 2 is relevent",
            "asdfgh jkl",
        ],
    ),
    (
        "free-words-3",  # issue 31, sixth session: a paper named with its authors in brackets, a head count judged,
        # a number in words, 'keep N' narrowing, a citation floor after citing words, a paper someone else mentioned
        [
            "Statistical Phrase-Based Translation (Koehn et al.): papers citing it, published 2005 or later",
            "the first three aren't useful, toss them",
            "more along the lines of number seven",
            "keep 2 through 5",
            "only the highly cited ones, say 50+",
            "can you look up the paper Sarah mentioned in group meeting",
        ],
    ),
    (
        "free-words-4",  # issues 31 and 32, seventh session: a story whose last sentence asks, a sort in new words, a
        # leaving-out with "more", a bare "that one", a second search in new words, a change to the list, an export
        [
            "Our lab builds search for legal documents and recall is poor. We would like to see work on query "
            "expansion for information retrieval.",
            "put the recent stuff at the top",
            "that one",
            "what's downstream of 'Attention Is All You Need'?",
            "no more papers from 2016",
            "export bibtex",
        ],
    ),
    (
        "asks-back",  # issue 31: what cannot be acted on is asked about, the list on screen stays; then a clear change
        [
            "papers that cite BLEU",
            "predecessors and successors, both",
            "ACL only, but no ACL papers",
            "remove the irrelevant ones",
            "keep the first three, bin the rest",
        ],
    ),
]


def _say(page, text: str) -> str:
    """Send ``text``; when pilot answers with a question and no list yet, press "Search now" as a hurried user would.
    The chat as it reads afterwards."""
    say(page, text)
    page.wait_for_timeout(1500)  # the chat's last bubble is drawn after the idle overlay goes
    wait_idle(page)
    if page.locator("[id^=pilot-option-]:visible").count() and not page.locator("#pilot-results li").count():
        page.locator("#pilot-search-now").click()
        page.wait_for_function(
            "() => [...document.querySelectorAll('#pilot-chat .message')]"
            ".some(m => /Found \\d+ paper/.test(m.innerText))",
            timeout=120_000,
        )
        wait_idle(page)
    return page.locator("#pilot-chat").inner_text()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("out/journeys"))
    ap.add_argument("--only", action="append", default=[], help="run only these journeys")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    env = {"PILOT_SOURCES": os.environ.get("PILOT_SOURCES", "local"), "PILOT_CORPUS": os.environ["PILOT_CORPUS"]}
    record: dict[str, list[dict]] = {}
    # the checkout's own cache dir, where `make run` built the corpus store
    with serve(env, ROOT / ".pilot-cache", args.out / "app.log") as url, chromium() as browser:
        for name, messages in JOURNEYS:
            if args.only and name not in args.only:
                continue
            page = browser.new_page(viewport={"width": 1500, "height": 1900})
            page.goto(url)
            page.wait_for_selector("#pilot-input textarea", timeout=120_000)
            page.wait_for_timeout(4000)  # Gradio wires its events after the page has drawn
            steps = []
            for i, text in enumerate(messages, 1):
                chat = _say(page, text)
                shot = args.out / f"{name}-{i}.png"
                page.screenshot(path=str(shot), full_page=True)
                results = page.locator("#pilot-results li[data-paper-id]").evaluate_all(
                    "els => els.slice(0, 12).map(e => e.innerText.split('\\n').slice(0, 3).join(' | '))"
                )
                steps.append({"said": text[:120], "chat_tail": chat[-1200:], "results": results, "shot": str(shot)})
                print(f"{name} #{i}: {shot}", flush=True)
            record[name] = steps
            page.close()
    (args.out / "journeys.json").write_text(json.dumps(record, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
