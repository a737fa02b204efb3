"""What the browser tests share: ``python app.py`` served as a user runs it, Debian's chromium driven by
Playwright, and the waits and reads every journey needs (used by ``test_ui_browser*.py`` and ``tests/journey.py``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.prereq import missing
from tests.serving import free_port

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
# generous: a wait is for a visible effect, not a speed check (speed is benchmarked); a loaded CI machine once
# took over 120 s to answer the first search of a second visitor
TIMEOUT_MS = 240_000
# what Gradio shows while an event runs: status overlays (``.wrap.default`` without ``hide``), a pending chat bubble
BUSY = ".wrap.default:not(.hide), .message.pending"


@contextlib.contextmanager
def serve(env_extra: dict[str, str], cache_dir: Path, log: Path) -> Iterator[str]:
    """``python app.py`` as a user runs it, on a free port; yields its URL, stops it afterwards. Its terminal
    output goes to ``log``."""
    port = free_port()
    env = {
        **os.environ,
        "PILOT_CACHE_DIR": str(cache_dir),
        "GRADIO_SERVER_NAME": "127.0.0.1",
        "GRADIO_SERVER_PORT": str(port),
        "GRADIO_ANALYTICS_ENABLED": "False",
        "HF_HUB_OFFLINE": "1",
        **env_extra,
    }
    for unset in ("PILOT_LLM_MODEL", "PILOT_CORPUS", "PILOT_CORPUS_VECTORS"):
        if unset not in env_extra:
            env.pop(unset, None)
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 300
        while True:
            if proc.poll() is not None:
                pytest.fail(f"app.py exited with {proc.returncode}:\n{log.read_text(errors='replace')[-3000:]}")
            try:
                with urllib.request.urlopen(url, timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"app.py did not answer on {url}:\n{log.read_text(errors='replace')[-3000:]}")
            time.sleep(1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        missing("chromium is not installed and scripts/ensure-browser.sh could not install it")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def wait_idle(page) -> None:
    # callers first wait for a visible effect of their click, then for the busy indicators to go
    wait_for(page, f"() => !document.querySelector('{BUSY}')", "pilot to finish")


def wait_for(page, condition: str, what: str) -> None:
    """Wait for a JavaScript condition; when it never comes, fail saying what was awaited and what the chat
    showed (a bare Playwright timeout told a red CI run nothing about what pilot had answered)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(condition, timeout=TIMEOUT_MS)
    except PlaywrightTimeout:
        chat = page.locator("#pilot-chat").inner_text(timeout=5_000)[-1500:]
        busy = page.evaluate(f"() => document.querySelectorAll('{BUSY}').length")
        raise AssertionError(
            f"waited {TIMEOUT_MS // 1000} s for {what}; {busy} busy indicator(s) showing; the chat ends:\n{chat}"
        ) from None


def result_ids(page) -> list[str]:
    return page.locator("#pilot-results li[data-paper-id]").evaluate_all("els => els.map(e => e.dataset.paperId)")


def result_years(page) -> list[int]:
    return [
        int(y)
        for y in page.locator("#pilot-results li[data-paper-id]").evaluate_all("els => els.map(e => e.dataset.year)")
        if y
    ]


def messages(page) -> int:
    return page.locator("#pilot-chat .message").count()


def say(page, text: str) -> None:
    """Type a message, send it, and wait until pilot has answered."""
    before = messages(page)
    page.locator("#pilot-input textarea").fill(text)
    page.locator("#pilot-send").click()
    wait_for(page, f"() => document.querySelectorAll('#pilot-chat .message').length > {before + 1}", "an answer")
    wait_idle(page)


def search(page, request: str) -> list[str]:
    """Type a request, skip the questions with "Search now", and return the result ids."""
    say(page, request)
    # pilot answers with a question, whose option buttons are drawn just after its message, or with the results:
    # looked at before both had come, a question was taken for no question (and no results) under load
    wait_for(
        page,
        "() => [...document.querySelectorAll('[id^=pilot-option-]')].some(e => e.offsetParent !== null)"
        " || document.querySelector('#pilot-results li[data-paper-id]')",
        "a question's options or results",
    )
    if page.locator("[id^=pilot-option-]:visible").count():
        page.locator("#pilot-search-now").click()
        wait_for(
            page,
            "() => [...document.querySelectorAll('#pilot-chat .message')]"
            ".some(m => /Found \\d+ papers/.test(m.innerText))",
            "'Found N papers' after Search now",
        )
    wait_idle(page)
    ids = result_ids(page)
    assert ids, page.locator("#pilot-chat").inner_text()[-500:]
    return ids


def download(page, selector: str) -> str:
    with page.expect_download(timeout=TIMEOUT_MS) as dl:
        page.locator(selector).click()
    return Path(dl.value.path()).read_text(encoding="utf-8")


def outside_requests(page) -> list[str]:
    """Block and record every request the page makes to any host but the app's own (the list fills as the page
    runs): pilot must look and work right with no network."""
    seen: list[str] = []

    def check(route) -> None:
        url = route.request.url
        if url.startswith(("http://127.0.0.1:", "data:", "blob:", "about:")):
            route.continue_()
        else:
            seen.append(url)
            route.abort()

    page.route("**/*", check)
    return seen


def keep(page, paper_id: str) -> None:
    """Press a result card's keep button and wait until the card says it is in the library."""
    from playwright.sync_api import expect

    page.locator(f'#pilot-results button[data-act="keep"][data-id="{paper_id}"]').click()
    expect(page.locator(f'#pilot-results li[data-paper-id="{paper_id}"] .kept')).to_have_count(1, timeout=TIMEOUT_MS)
    wait_idle(page)


@contextlib.contextmanager
def serve_corpus(
    shared: Path, rows: list[dict], tmp_path_factory: Any, name: str, env: dict[str, str] | None = None,
    vector_ids: list[str] | None = None,
) -> Iterator[tuple[str, Path]]:  # fmt: skip
    """``python app.py`` over ``rows`` as its offline corpus (with the shared vectors, ``vector_ids`` saying whose
    each row borrows), in a fresh cache; yields (its URL, its terminal log)."""
    from tests.conftest import corpus_with_vectors

    corpus, vectors = corpus_with_vectors(shared, rows, tmp_path_factory.mktemp(f"{name}-corpus"), vector_ids)
    settings = {"PILOT_SOURCES": "local", "PILOT_CORPUS": str(corpus), "PILOT_CORPUS_VECTORS": str(vectors)}
    log = tmp_path_factory.mktemp(f"{name}-log") / "app.log"
    with serve({**settings, **(env or {})}, tmp_path_factory.mktemp(f"{name}-cache"), log) as url:
        yield url, log
