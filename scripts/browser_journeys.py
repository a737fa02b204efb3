"""The browser journeys of issue 33, run in headless Chromium against the app serving the offline corpus; one
screenshot per step and a text record of what each reply said.

    PILOT_CORPUS=../shared/corpus/papers.jsonl.gz .venv/bin/python scripts/browser_journeys.py \\
        --port 8330 --out out/journeys

Starts ``app.py`` itself (its cache dir is this checkout's ``.pilot-cache``, where the corpus store is built) and
stops it at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
TIMEOUT_MS = 240_000

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
]


def _serve(port: int, log: Path) -> subprocess.Popen:
    env = {**os.environ, "GRADIO_SERVER_PORT": str(port), "PILOT_CACHE_DIR": str(ROOT / ".pilot-cache")}
    env.setdefault("PILOT_SOURCES", "local")
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "app.py")], env=env, stdout=log.open("w"), stderr=subprocess.STDOUT
    )
    for _ in range(600):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2)
            return proc
        except OSError:
            time.sleep(1)
    proc.terminate()
    raise SystemExit(f"the app did not start on port {port}; see {log}")


def _wait_idle(page) -> None:
    page.wait_for_function(
        "() => !document.querySelector('.wrap.default:not(.hide), .message.pending')", timeout=TIMEOUT_MS
    )


def _say(page, text: str) -> str:
    n = page.locator("#pilot-chat .message").count()
    page.locator("#pilot-input textarea").fill(text)
    page.locator("#pilot-send").click()
    page.wait_for_function(
        f"() => document.querySelectorAll('#pilot-chat .message').length > {n + 1}", timeout=TIMEOUT_MS
    )
    _wait_idle(page)
    page.wait_for_timeout(1500)  # the chat's last bubble is drawn after the idle overlay goes
    _wait_idle(page)
    if page.locator("[id^=pilot-option-]:visible").count() and not page.locator("#pilot-results li").count():
        page.locator("#pilot-search-now").click()
        page.wait_for_function(
            "() => [...document.querySelectorAll('#pilot-chat .message')]"
            ".some(m => /Found \\d+ paper/.test(m.innerText))",
            timeout=TIMEOUT_MS,
        )
        _wait_idle(page)
    return page.locator("#pilot-chat").inner_text()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, default=8330)
    ap.add_argument("--out", type=Path, default=Path("out/journeys"))
    ap.add_argument("--only", action="append", default=[], help="run only these journeys")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    server = _serve(args.port, args.out / "app.log")
    record: dict[str, list[dict]] = {}
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            for name, messages in JOURNEYS:
                if args.only and name not in args.only:
                    continue
                page = browser.new_page(viewport={"width": 1500, "height": 1900})
                page.goto(f"http://127.0.0.1:{args.port}/")
                page.wait_for_selector("#pilot-input textarea", timeout=TIMEOUT_MS)
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
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    (args.out / "journeys.json").write_text(json.dumps(record, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
