"""A researcher's day with pilot, in a real browser, screenshot by screenshot: two searches, a refinement, a
reload, the first search reopened from the recent list, a step edited in the workflow picture, an export.

Used by ``tests/test_ui_journey.py`` (on the corpus slice, asserting each step) and runnable by hand against a
running app to look at the screens (the full corpus, both sizes):

    .venv/bin/python -m tests.journey http://127.0.0.1:8300/ out/journey
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tests import bibparse
from tests.browsing import TIMEOUT_MS, download, result_ids, say, search, wait_idle

FIRST = 'later work that builds on "BLEU: a Method for Automatic Evaluation of Machine Translation"'
REFINE = "only after 2005"
SECOND = 'papers similar to "Building a Large Annotated Corpus of English: The Penn Treebank"'
SIZES = {"desktop": (1280, 720), "phone": (390, 844)}


@dataclass
class Journey:
    shots: list[Path] = field(default_factory=list)
    first: list[str] = field(default_factory=list)  # the first search's list after its refinement
    second: list[str] = field(default_factory=list)
    reopened: list[str] = field(default_factory=list)
    edited: list[str] = field(default_factory=list)
    bibtex: list[dict] = field(default_factory=list)
    changed: str = ""  # what the chat said the refinement changed


def _shot(page, out: Path | None, name: str, journey: Journey, target: str | None = None) -> None:
    if out is None:
        return
    if target:
        page.locator(target).first.scroll_into_view_if_needed()
    path = out / f"{name}.png"
    page.screenshot(path=str(path))
    journey.shots.append(path)


def _tab(page, name: str) -> None:
    page.get_by_role("tab", name=name).click()
    page.wait_for_timeout(400)


def run(page, url: str, out: Path | None = None) -> Journey:
    """The whole journey on ``page`` (a fresh browser context), screenshots into ``out`` when given."""
    from playwright.sync_api import expect

    j = Journey()
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    page.goto(url)
    expect(page.locator("#pilot-chat")).to_contain_text("anchor paper", timeout=TIMEOUT_MS)
    wait_idle(page)
    _shot(page, out, "01-start", j)

    # 1. the first search, then a refinement said in words
    search(page, FIRST)
    _shot(page, out, "02-first-search", j, "#pilot-results")
    say(page, REFINE)
    j.changed = page.locator("#pilot-chat .message").last.inner_text()
    j.first = result_ids(page)
    _shot(page, out, "03-refined", j, "#pilot-chat .message >> nth=-1")
    page.locator("#pilot-chat details summary").last.click()  # the operator-level details, one click away
    _shot(page, out, "04-refined-details", j, "#pilot-chat details >> nth=-1")

    # 2. a second search: the first one goes to the recent list
    j.second = search(page, SECOND)
    _shot(page, out, "05-second-search", j, "#pilot-recent")

    # 3. a reload: the conversation is back as it was left
    page.reload()
    expect(page.locator("#pilot-status")).to_contain_text("back as you left it", timeout=TIMEOUT_MS)
    wait_idle(page)
    assert result_ids(page) == j.second, "the reload lost the list"
    _shot(page, out, "06-after-reload", j, "#pilot-status")

    # 4. the first search, reopened from the recent list, refined as it was left
    page.locator("#pilot-recent button[data-recent]").filter(has_text="BLEU").first.click()
    page.wait_for_function(
        "() => document.querySelector('#pilot-recent li.current') && "
        "document.querySelector('#pilot-recent li.current').innerText.includes('BLEU')",
        timeout=TIMEOUT_MS,
    )
    wait_idle(page)
    j.reopened = result_ids(page)
    _shot(page, out, "07-first-search-reopened", j, "#pilot-recent")

    # 5. the workflow picture: a step clicked opens its form; fewer results, applied
    _tab(page, "Workflow")
    wait_idle(page)
    _shot(page, out, "08-workflow", j, "#pilot-dag")
    page.locator('#pilot-dag .dag-variant:not([hidden]) g[data-node="top"]').click()
    k_box = page.locator('#pilot-params-form input[name="k"]')
    expect(k_box).to_be_visible(timeout=TIMEOUT_MS)
    wait_idle(page)
    k_box.fill("12")
    page.locator("#pilot-params-form .pf-apply").click()
    expect(page.locator("#pilot-edit-msg")).to_contain_text("Applied", timeout=TIMEOUT_MS)
    wait_idle(page)
    _shot(page, out, "09-step-edited", j, "#pilot-params-form")
    expect(page.locator("#pilot-versions li.current .changes")).to_contain_text("Showing 12", timeout=TIMEOUT_MS)
    _shot(page, out, "10-versions", j, "#pilot-versions")

    # 6. the map, then the export of the edited list
    _tab(page, "Map")
    points = page.locator("#pilot-map .scatterlayer .trace .point")
    expect(points.first).to_be_visible(timeout=TIMEOUT_MS)
    page.locator("#pilot-map").scroll_into_view_if_needed()
    box = points.nth(points.count() // 2).bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    expect(page.locator("#pilot-map-card [data-paper-id]")).to_have_count(1, timeout=TIMEOUT_MS)
    page.mouse.move(1, 1)  # the pointer leaves the map, as a reader's does once the card is open
    wait_idle(page)
    page.wait_for_timeout(600)  # the card scrolls into view on a narrow screen
    _shot(page, out, "11-map-card", j)
    _tab(page, "Results")
    j.edited = result_ids(page)
    j.bibtex = bibparse.parse(download(page, "#pilot-dl-bib"))
    _shot(page, out, "12-export", j, "#pilot-dl-bib")
    return j


def main(url: str, out: str) -> None:
    from tests.browsing import chromium

    with chromium() as browser:
        for name, (w, h) in SIZES.items():
            context = browser.new_context(viewport={"width": w, "height": h}, accept_downloads=True)
            j = run(context.new_page(), url, Path(out) / name)
            keys = [e["ID"] for e in j.bibtex]
            print(f"{name}: {len(j.shots)} screenshots; first search {len(j.first)} papers, reopened "
                  f"{len(j.reopened)}, edited {len(j.edited)}, BibTeX keys {keys[:3]}…")  # fmt: skip
            print("  refinement said:", re.sub(r"\s+", " ", j.changed)[:200])
            context.close()


if __name__ == "__main__":
    main(*sys.argv[1:3])
